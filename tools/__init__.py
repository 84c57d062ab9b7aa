"""Development tools of the benchbook repository: not part of the library or its wheel.

Run from the repository root (`python -m tools.reconstruct ...`); `src/benchbook` never
imports anything here (tests/test_tools_apart.py).
"""
