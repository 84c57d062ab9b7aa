"""The chapter interface: what a chapter folder declares and what its analysis module provides.

A chapter folder (benchbook/chapters/<name>/) declares its pages in `__init__.py` as `PAGES`,
a tuple of ChapterSpec: the page id (book/studies/<id>), its title, the contract its data
folder must meet (benchbook.study.contract), the notebook that shows it, parameters that
differ from the notebook's defaults (a second page from one notebook), the parameters that
name another chapter's data folder (`reads`), the chapters whose outputs it reads (`uses`),
its headlines and the key numbers set beside a previous published version. Its
`analysis.py` is a ChapterModule. The registry (benchbook.book.registry) finds the folders;
docs/contributing.md walks through adding one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import pandas as pd

from ..study.contract import Contract, KeyNumbers


@dataclass(frozen=True)
class Headline:
    claim: str  # a claim id of the chapter's published.yml
    label: str  # what the number is; `{role}` is replaced by that role's configuration id


@dataclass(frozen=True)
class ChapterSpec:
    id: str  # page id: book/studies/<id>.ipynb, and its default data folder data/<id>/
    folder: str  # the chapter folder benchbook/chapters/<folder>/ whose analysis.py computes the page
    title: str
    contract: Contract | None = None
    notebook: str = ""  # notebooks/<notebook>.md (default: the id)
    parameters: dict = field(default_factory=dict)  # overrides of the notebook's defaults
    reads: dict = field(default_factory=dict)  # parameter -> chapter id whose data folder it names
    uses: tuple[str, ...] = ()  # chapters whose declared outputs it reads
    outputs: tuple[str, ...] = ("key_figures", "serving_points", "claims", "caveats")  # tables it writes for others
    files: tuple[str, ...] = ()  # files it reads beyond its parameters (globs from the project root), hashed
    key_numbers: tuple[KeyNumbers, ...] = ()  # set beside the previous published version's
    headlines: tuple[Headline, ...] = ()  # the page's key results, first on the page
    writeup: bool = True  # the page checks a write-up (published.yml, headlines, independent.yml)
    order: int = 100  # place in the registry's list (the book's order is _toc.yml's)

    @property
    def notebook_name(self) -> str:
        return self.notebook or self.id

    @property
    def module(self) -> str:
        """The analysis module: benchbook.chapters.<folder>.analysis."""
        return f"benchbook.chapters.{self.folder}.analysis"


@runtime_checkable
class ChapterModule(Protocol):
    """What a chapter's analysis.py provides (checked for every registered chapter by the tests).

    `analyse(data_dir, ...)` takes arguments named like the notebook's parameters and returns a
    benchbook.book.pipeline.ChapterResults (or a subclass); `glue_values(r)` the numbers its
    prose quotes (glue key -> value); `downloads(r)` its CSV downloads (name -> table). A module
    that feeds the synthesis also has `key_figures(r) -> pandas.DataFrame`
    (benchbook.book.key_figures.KEY_FIGURE_NUMBERS).
    """

    analyse: Callable[..., Any]
    glue_values: Callable[[Any], dict]
    downloads: Callable[[Any], dict[str, pd.DataFrame]]


def resting_on(contract: Contract, columns: dict[str, tuple[str, ...]]) -> Contract:
    """The contract with each named section's tidy columns (`table.column`) declared: what the
    section's numbers rest on, so a data generator's assumption about one of them (a
    reconstructed folder's assumptions.yml) marks the section on the page."""
    unknown = sorted(set(columns) - {s.id for s in contract.sections})
    if unknown:
        raise KeyError(f"no section {', '.join(unknown)}")
    return replace(contract, sections=tuple(replace(s, columns=columns.get(s.id, s.columns))
                                            for s in contract.sections))


# Set beside the previous published version's in a chapter's "Changes" section.
KEY_FIGURE_NUMBERS = KeyNumbers("key_figures", ("config",), ("single_stream_decode_tps", "ttft_s", "prefill_tps",
                                                       "best_aggregate_tps", "cost_per_m", "power_w"))
VERDICTS = KeyNumbers("claims", ("id",), ("verdict",))
