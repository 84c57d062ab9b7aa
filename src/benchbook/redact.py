"""Remove secrets from text taken out of raw logs, before it can reach a table or a page.

Raw server logs print their arguments (`--api-key`), tokens and internal addresses.
Readers pass every free-text field they keep through `redact`; the counts say what was
removed so a chapter can report it without repeating it.
"""

from __future__ import annotations

import re
from collections import Counter

# (kind, pattern, replacement); order matters: specific before general.
_RULES: list[tuple[str, re.Pattern, str]] = [
    ("api-key", re.compile(r"(?i)(--api[-_]key[= ]+|api[-_]key['\"]?\s*[:=]\s*['\"]?)([^\s'\",}]+)"), r"\1[REDACTED]"),
    ("hf-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "[REDACTED-HF-TOKEN]"),
    ("secret-key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}\b"), "[REDACTED-KEY]"),
    ("bearer-token", re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1[REDACTED]"),
    ("token-arg", re.compile(r"(?i)((?:--|\b)(?:hf[-_])?token[= :]+['\"]?)([A-Za-z0-9._-]{8,})"), r"\1[REDACTED]"),
    ("private-ip", re.compile(
        r"\b(?:10\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])|192\.168)\.\d{1,3}\.\d{1,3}(?::\d+)?\b"), "[private-ip]"),
    ("internal-host", re.compile(
        r"\b(?:[a-z0-9-]+\.)+(?:internal|local|lan|corp|intra|intranet|home\.arpa)\b(?::\d+)?", re.I),
     "[internal-host]"),
]


def redact(text: str, counts: Counter | None = None) -> str:
    """`text` with every secret replaced; `counts` (if given) is increased per kind."""
    if not text:
        return text
    for kind, pattern, repl in _RULES:
        text, n = pattern.subn(repl, text)
        if n and counts is not None:
            counts[kind] += n
    return text


def kinds() -> list[str]:
    """The kinds of secret this module removes."""
    return [kind for kind, _, _ in _RULES]
