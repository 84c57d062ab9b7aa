"""The user's cache folder: what benchbook keeps between processes, keyed by content.

BENCHBOOK_CACHE_DIR, else $XDG_CACHE_HOME/benchbook or ~/.cache/benchbook. It holds what each
source file imports (benchbook.site.memo) and each figure's renderings
(benchbook.page.render); everything in it can be deleted at any time.
"""

from __future__ import annotations

import os
from pathlib import Path


def folder() -> Path:
    if os.environ.get("BENCHBOOK_CACHE_DIR"):
        return Path(os.environ["BENCHBOOK_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchbook"
