"""The chapters, one folder each (`chapters/<name>/`): the folder's `__init__.py` declares
its pages (`PAGES`, benchbook.book.spec.ChapterSpec), `analysis.py` computes them. The registry
(benchbook.book.registry) finds every folder here at run time; see docs/contributing.md."""
