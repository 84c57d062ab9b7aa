"""`python -m benchbook.reconstruct`: see the package docstring."""

from . import main

raise SystemExit(main())
