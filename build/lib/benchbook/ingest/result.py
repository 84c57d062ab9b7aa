"""What a reader returns: the tidy tables plus an account of what it read and skipped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd


@dataclass
class IngestResult:
    """Tables a reader produced from one file, and how many records it read or ignored.

    `read` and `ignored` count the reader's own unit of record (documented per reader:
    lines for logs, result objects and per-request entries for bench JSON, test rows for
    llama-bench); `reasons` says why each ignored record was skipped. `notes` say what the
    reader worked out that the file does not print as such (a log's stats interval measured
    from its times, GPUs told apart by their row order), so that the summary states it.
    """

    path: str
    format: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    read: int = 0
    ignored: int = 0
    reasons: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def ignore(self, reason: str, n: int = 1) -> None:
        self.ignored += n
        self.reasons[reason] += n

    def summary(self) -> str:
        rows = ", ".join(f"{name} {len(df)}" for name, df in self.tables.items())
        text = f"{self.path} [{self.format}]: {self.read} records read, {self.ignored} ignored"
        if rows:
            text += f" -> rows: {rows}"
        text += self.notes_text()
        if self.reasons:
            text += "; ignored because: " + "; ".join(
                f"{reason} ({n})" for reason, n in self.reasons.most_common()
            )
        return text

    def notes_text(self) -> str:
        """The notes as the summary appends them ("" without any)."""
        return "".join(f"; {note}" for note in self.notes)
