"""Remove secrets from text taken out of raw logs, before it can reach a table or a page.

Raw server logs print their arguments (`--api-key`), tokens and internal addresses.
Readers pass every free-text field they keep through `redact` (and `benchbook.ingest.read`
passes every text column once more, so a reader that forgets cannot leak); the counts say
what was removed so a chapter can report it without repeating it.
"""

from __future__ import annotations

import re
from collections import Counter

_VALUE = r"[^\s'\",}\[\]]+"  # a bare value: up to a space, quote, comma or closing bracket

# (kind, pattern, replacement); order matters: specific before general.
_RULES: list[tuple[str, re.Pattern, str]] = [
    # https://user:password@host -> the whole userinfo goes
    ("url-credentials", re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@'\"]+:[^/\s@'\"]+@"), r"\1[REDACTED]@"),
    # `Authorization: Bearer x`, `"authorization": "Basic x"`, `-H 'Authorization: token x'`
    ("auth-header", re.compile(
        r"(?i)(\bauthorization['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|basic|token|digest)\s+)?" + _VALUE),
     r"\1[REDACTED]"),
    # vLLM prints `'api_key': ['k1', 'k2']` in its non-default args (a list since 0.10)
    ("api-key", re.compile(r"(?i)(\bapi[-_]?key['\"]?\s*[:=]\s*)(?!\['\[REDACTED\]'\])\[[^\]]*\]"),
     r"\1['[REDACTED]']"),
    ("api-key", re.compile(r"(?i)(--api[-_]key[= ]+|\bapi[-_]?key['\"]?\s*[:=]\s*['\"]?)(" + _VALUE + ")"),
     r"\1[REDACTED]"),
    # HF_TOKEN=..., HUGGING_FACE_HUB_TOKEN=..., OPENAI_API_KEY=..., AWS_SECRET_ACCESS_KEY=...
    ("env-secret", re.compile(
        r"\b([A-Z][A-Z0-9_]*(?:TOKEN|API_KEY|APIKEY|SECRET|SECRET_KEY|ACCESS_KEY|PASSWORD|PASSWD)"
        r"['\"]?\s*[=:]\s*['\"]?)(" + _VALUE + ")"), r"\1[REDACTED]"),
    ("password-arg", re.compile(r"(?i)((?:--|\b)(?:password|passwd)[= :]+['\"]?)(" + _VALUE + ")"), r"\1[REDACTED]"),
    ("hf-token", re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "[REDACTED-HF-TOKEN]"),
    ("secret-key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}\b"), "[REDACTED-KEY]"),
    ("github-token", re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}\b"), "[REDACTED-KEY]"),
    ("aws-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED-KEY]"),
    ("bearer-token", re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1[REDACTED]"),
    ("token-arg", re.compile(r"(?i)((?:--|\b)(?:hf[-_])?token[= :]+['\"]?)([A-Za-z0-9._-]{8,})"), r"\1[REDACTED]"),
    # RFC 1918 and the shared (CGNAT, e.g. Tailscale) range 100.64.0.0/10, with an optional port
    ("private-ip", re.compile(
        r"\b(?:10\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])|192\.168|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7]))"
        r"\.\d{1,3}\.\d{1,3}(?::\d+)?\b"), "[private-ip]"),
    ("internal-host", re.compile(
        r"\b(?:[a-z0-9-]+\.)+(?:internal|local|lan|corp|intra|intranet|home\.arpa)\b(?::\d+)?", re.I),
     "[internal-host]"),
]


def redact(text: str, counts: Counter | None = None) -> str:
    """`text` with every secret replaced; `counts` (if given) is increased per kind."""
    if not text or not isinstance(text, str):
        return text
    for kind, pattern, repl in _RULES:
        text, n = pattern.subn(repl, text)
        if n and counts is not None:
            counts[kind] += n
    return text


# Literal text each rule needs (lower case): a substring test is far cheaper than a regex.
_HINTS = {
    "url-credentials": ("://",), "auth-header": ("authorization",), "api-key": ("api",),
    "env-secret": ("token", "key", "secret", "passw"), "password-arg": ("passw",), "hf-token": ("hf_",),
    "secret-key": ("sk-",), "github-token": ("gh", "github_pat_"), "aws-key-id": ("akia", "asia"),
    "bearer-token": ("bearer",), "token-arg": ("token",), "private-ip": ("10.", "172.", "192.168.", "100."),
    "internal-host": ("internal", ".local", ".lan", ".corp", ".intra", ".home.arpa"),
}


def has_secret(text: str) -> bool:
    """Whether `redact` would change `text`. Meant for a whole column joined into one
    string: a substring test per rule, and a regex only where its literal text occurs."""
    lower = text.lower()
    return any(any(h in lower for h in _HINTS[kind]) and pattern.search(text) for kind, pattern, _ in _RULES)


def kinds() -> list[str]:
    """The kinds of secret this module removes."""
    return list(dict.fromkeys(kind for kind, _, _ in _RULES))
