"""Building and publishing the site: the runner that executes stale chapters, the Sphinx
extensions, the versioned publish tree and the changes since a previous version."""
