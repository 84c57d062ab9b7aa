"""Text from data folders is untrusted: the one place that says how it may reach a page.

Data folders come from other people (a pull request, a colleague's run, files found on a
shared drive) and the site is published on a project's domain, so a model name, a label
or a log argument must never run or render as markup. Every string from a manifest or a
raw file goes through one of these before it lands in a page:

- `md` for MyST prose: HTML escaped, every Markdown/MyST character backslash-escaped, one line;
- `md_code` for prose the library wrote that quotes data: `code` spans kept, the rest as `md`;
- `html` for HTML (table cells, headers, captions, attributes);
- `visible` for plain text (figures, plain-text glue): control and direction characters shown
  as their code point, so a right-to-left override cannot reorder what a reader sees;
- `url` for a link target: http(s) only;
- `cell` for a CSV download's text: no formula a spreadsheet would run.

`problems` lists what `benchbook validate` warns about in a name.
"""

from __future__ import annotations

import html as _html
import re

import pandas as pd

# C0/C1 controls (tab kept as a space by `visible`), and the Unicode bidirectional controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MD_SPECIAL = "\\`*_{}[]<>|$~"  # with [ ] escaped, ( ) ! cannot make a link
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_MARKUP = re.compile(r"</?[a-zA-Z!?]|\{[a-zA-Z][\w:-]*\}`|\]\(|`{3}|:::|\{\{|&#?\w+;")
LONGEST = 200  # characters; a longer name is almost always a paste error


def visible(text) -> str:
    """One line of plain text with control and direction characters shown, not obeyed."""
    out = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    out = _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", out)
    return _CONTROL.sub(lambda m: f"<U+{ord(m.group()):04X}>", out)


def md(text) -> str:
    """Data inside MyST prose: shown as written, never as markup, a role or a directive."""
    out = _html.escape(visible(text), quote=False)
    out = "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in out)
    # at the start of a line: a list marker or an indented code block
    out = re.sub(r"^(\d+)([.)])", r"\1\\\2", out)
    out = re.sub(r"^([-+:#=])", r"\\\1", out)  # a list item, a fence, a heading (inert elsewhere)
    return re.sub(r"^ +", lambda m: "&#32;" * len(m.group()), out)


def md_code(text) -> str:
    """Prose the library wrote, which may quote data: its `code` spans stay code (their
    content is literal in Markdown); everything else is escaped as `md`, stray backticks too."""
    text, out, pos = visible(text), [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(md(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(md(text[pos:]))
    return "".join(out)


_FORMULA = re.compile(r"[=+\-@\t\r].*[(|!]", re.S)


def cell(value):
    """A text cell of a CSV download: one a spreadsheet would run as a formula (`=cmd|...`,
    `@SUM(...)`) gets a leading apostrophe, as OWASP advises; other values are left alone."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def html(text) -> str:
    """Data inside HTML text or a quoted attribute."""
    return _html.escape(visible(text), quote=True)


def url(text) -> str | None:
    """A link target from data, or None: only http and https, never javascript: or data:."""
    value = str(text or "").strip()
    if _CONTROL.search(value) or _BIDI.search(value) or any(c.isspace() for c in value):
        return None
    return value if re.match(r"https?://[^/\s]", value, re.I) else None


PROSE_KEYS = ("description", "notes", "note", "text", "todo", "why", "extra")  # prose, not names: any length


def problems(text, where: str, prose: bool = False) -> list[str]:
    """Why a name from data would surprise a reader (shown literally all the same)."""
    value, out = str(text), []
    if _CONTROL.search(value.replace("\n", "").replace("\t", "")):
        out.append(f"{where}: control characters (shown as <U+XXXX> on the pages)")
    if _BIDI.search(value):
        out.append(f"{where}: Unicode direction controls, which can make text read differently "
                   "from how it is stored (shown as <U+XXXX> on the pages)")
    markup = _MARKUP.search(value)
    if markup:
        out.append(f"{where}: markup ({markup.group().strip()}...); it is shown as text, never rendered")
    if len(value) > LONGEST and not prose:
        out.append(f"{where}: {len(value)} characters, more than {LONGEST}; tables and figures will be wide")
    return out


def _strings(value, where: str):
    """(where, text) for every string in a nested manifest value."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


URL_KEYS = ("url", "link", "href")  # keys whose value a page may turn into a link


def scan(manifest: dict, tables: dict, manifest_name: str = "study.yml") -> tuple[list[str], list[str]]:
    """(warnings, errors) about text in a study: names that carry markup, control or direction
    characters or are very long (warnings: shown literally anyway), and link targets that are
    not http(s) (errors: a page would build a link from them)."""
    warnings, errors = [], []
    seen = set()
    for where, text in _strings(manifest, ""):
        seen.add(text)
        key = re.sub(r"\[\d+\]$", "", where).rsplit(".", 1)[-1]
        warnings += problems(text, f"{manifest_name}: {where}", prose=key in PROSE_KEYS)
        if key in URL_KEYS and url(text) is None:
            errors.append(f"{manifest_name}: {where}: '{visible(text)[:80]}' is not an http(s) address; "
                          "links are built only to http:// or https://")
    reported = set()
    for name, df in tables.items():
        for col in df.columns:
            if col in reported or pd.api.types.is_numeric_dtype(df[col]) or \
                    pd.api.types.is_datetime64_any_dtype(df[col]):
                continue
            for text in df[col].dropna().astype(str).unique()[:1000]:
                if text in seen:  # the manifest's own words, copied onto each row: said above
                    continue
                found = problems(text, f"raw files, column {col} (table {name})", prose=col in PROSE_KEYS)
                if found:
                    warnings += found
                    reported.add(col)
                    break  # one value per column says enough
    return list(dict.fromkeys(warnings)), errors
