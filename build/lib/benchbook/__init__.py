"""benchbook: reproduce published LLM serving benchmarks from raw native-format files."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("benchbook")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

