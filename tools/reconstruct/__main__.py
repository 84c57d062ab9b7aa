"""`python -m tools.reconstruct`: see the package docstring."""

from . import main

raise SystemExit(main())
