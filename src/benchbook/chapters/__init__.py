"""One module per chapter: everything a chapter computes, so its notebook only shows it."""
