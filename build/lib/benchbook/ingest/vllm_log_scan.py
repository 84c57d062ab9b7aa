r"""The columnar pass over one chunk of a vLLM server log: polars string kernels, no
Python work per line.

`vllm_log` reads a log in chunks of whole lines. For a chunk that is valid UTF-8 this
module splits it into lines and, with one vectorised expression each, finds the
candidate lines, parses the periodic lines that follow the strict templates of
benchbook.ingest.vllm_templates (V1 and V0 stats lines, V0's prefix-cache line, SpecDecoding lines:
vLLM's field order after a plain header), turns every uvicorn access line into a key
without its ephemeral port, and counts the lines with a vLLM header. polars releases
the GIL, so two chunks are scanned at once on two cores while the next one is read.

In a chunk holding ANSI colour codes (vLLM's terminal colours) the candidate lines lose
them before they are parsed. What it cannot decide it hands back as (line number, bytes):
candidate lines off the strict templates (other field orders, start-up facts), which
`vllm_log` parses with its full-line templates, exactly as for a chunk that is not UTF-8.
The patterns are `vllm_log`'s own byte templates, translated (ASCII `\d`, `\w`, `\s`, as
Python's bytes patterns mean them), so both paths accept the same lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .textio import ANSI  # vLLM colours the process tag, level, time and call site on a terminal

# the kinds of candidate line: stats, SpecDecoding, V0's prefix-cache line, start-up
# facts, uvicorn access lines
KINDS = frozenset({"stats", "spec", "v0prefix", "boot", "access"})


@dataclass
class ChunkScan:
    """What one chunk gave: rows as column arrays, lines for the full-line templates."""

    lines: int  # lines in the chunk
    header_lines: int  # lines with a vLLM header that are no candidate of any kind
    stats: dict | None = None  # column arrays of the fast V1 stats rows (vllm_log._Rows layout)
    v0: dict | None = None  # of the V0 stats rows
    v0prefix: dict | None = None  # of V0's separate prefix-cache lines
    spec: dict | None = None
    spec_two_rates: int = 0  # SpecDecoding lines printing both or neither rate field
    slow: dict[str, list] = field(default_factory=dict)  # kind -> [(line number, bytes)]
    access_lines: np.ndarray | None = None  # line numbers of candidate access lines
    access_codes: np.ndarray | None = None  # index into access_keys
    access_keys: list[bytes] = field(default_factory=list)  # distinct port-less access lines


def to_rust(pattern: bytes) -> str:
    r"""A Python bytes pattern as a Rust-regex str pattern with the same ASCII meaning of
    `\d`, `\w` and `\s` (Rust's are Unicode-aware); the byte range `\x80-\xff` (any byte
    of a multi-byte UTF-8 character) becomes any non-ASCII character."""
    text = pattern.decode("ascii").replace(r"\x80-\xff", r"\x{80}-\x{10FFFF}")
    # classes inside [...] first: `[^()\s]` -> `[^()\t\n\v\f\r ]`
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            inside = _inside_class(text, i)
            repl = _ASCII.get(nxt)
            if repl is not None:
                out.append(repl[1] if inside else repl[0])
            else:
                out.append(text[i:i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_ASCII = {"d": ("[0-9]", "0-9"), "w": ("[0-9A-Za-z_]", "0-9A-Za-z_"), "s": (r"[\t\n\x0B\f\r ]", r"\t\n\x0B\f\r ")}


def _inside_class(text: str, pos: int) -> bool:
    """Is position `pos` of a regex inside a `[...]` class? (the patterns here never nest)."""
    depth, i = False, 0
    while i < pos:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "[" and not depth:
            depth = True
        elif text[i] == "]" and depth:
            depth = False
        i += 1
    return depth


class Scanner:
    """Compiled-once expressions for one chunk at a time (thread-safe: no state)."""

    def __init__(self, stats_msg: bytes, spec_msg: bytes, kinds: dict[str, bytes], esc: bytes,
                 host_name: bytes, text: set[str], printed: set[str], stamp: bytes,
                 stats_split: int | None, phrases: tuple[bytes, ...], v0_msg: bytes, v0prefix_msg: bytes):
        import polars as pl  # imported here: only a log read pays for it

        self.pl = pl
        self.phrases = [p.decode() for p in phrases]  # start-up lines found anywhere (progress bars)
        self.text, self.printed = text, printed  # fields kept as text; fields whose presence counts
        # `file.py:N] `: where vLLM's header ends and the message starts
        self.anchor = r"\.py:[0-9]+\]" + to_rust(esc) + " "
        self.kind_rx = {kind: self.anchor + "(?:" + to_rust(p) + ")" for kind, p in kinds.items()}
        # the message from the anchor on, as the byte path's fast templates match it
        site = r"^(?P<site_tail>\.py:[0-9]+\]" + to_rust(esc) + ") "
        self.stats_rx = site + to_rust(stats_msg) + "$"
        # The stats template in two parts, cut before byte `stats_split` of its pattern: the
        # head's fields matched from the message start, the rest from the line end. One regex
        # of twenty groups runs the slowest of the regex crate's capture engines; two of about
        # ten run fast ones (twice as fast in all). The line matches the template when the
        # two matches tile its message (lengths: `_p1` + `_p2` = the message).
        self.stats_parts = None
        if stats_split is not None:
            one, two = stats_msg[:stats_split], stats_msg[stats_split:]
            re.compile(one), re.compile(two)  # each part a regex of its own
            self.stats_parts = (site + "(?P<_p1>" + to_rust(one) + ")", "(?P<_p2>" + to_rust(two) + ")$")
        self.spec_rx = site + to_rust(spec_msg) + "$"
        # V0's stats line (tried on the stats lines V1's template did not match) and its
        # separate prefix-cache line
        self.v0_rx, self.v0prefix_rx = site + to_rust(v0_msg) + "$", site + to_rust(v0prefix_msg) + "$"
        # the header before the anchor, read as the byte path reads it: the time is the 14
        # characters before the last space, after at least one other character
        a = "[ -~]"  # one printable ASCII character: the 14 characters are 14 bytes
        self.head_rx = rf".(?P<time>{a}{a}-{a}{a} {a}{a}:{a}{a}:{a}{a}) (?P<site_head>[^ ]*)$"
        self.proc_rx = r"\(([^()\t\n\x0B\f\r ]+) pid=[0-9]+\)"
        self.stamp_rx = "^" + to_rust(stamp)  # an RFC 3339 time before the line (docker logs -t)
        self.stats_names = list(re.compile(stats_msg).groupindex)
        self.spec_names = list(re.compile(spec_msg).groupindex)
        self.v0_names = list(re.compile(v0_msg).groupindex)
        self.v0prefix_names = list(re.compile(v0prefix_msg).groupindex)
        # an access line from its level word on, without the client's ephemeral port
        self.access_cut = r"^(INFO: +(?:" + to_rust(host_name) + r")):[0-9]+"

    def lines(self, buf: bytes):
        """The chunk's lines (without their "\n", or "\r\n"; a lone "\r" stays in its
        line) as a polars Series, or None when the chunk is not valid UTF-8."""
        pl = self.pl
        try:
            return pl.read_lines(buf, name="t")["t"]
        except pl.exceptions.ComputeError:
            return None

    def scan(self, buf: bytes, first_line: int = 1, kinds: frozenset = KINDS) -> ChunkScan | None:
        """Scan whole lines `buf` whose first line is number `first_line`; None = not UTF-8.

        `kinds`: the kinds of line to find and parse (`KINDS`: all, and the other header
        lines counted). A subset looks only for its own lines, each kind by its literal
        phrase first, so a windows-only pass reads each line once for "Avg prompt
        throughput" and once for V0's "Prefix cache hit rate: GPU"."""
        pl = self.pl
        s = self.lines(buf)
        if s is None:
            return None
        if kinds != KINDS:
            return self._scan_some(s, buf, first_line, kinds)
        t, c = pl.col("t"), pl.col
        has = lambda text: t.str.contains(text, literal=True)  # noqa: E731
        lf = pl.DataFrame({"t": s}).lazy().with_row_index("i").with_columns(
            has("Avg prompt throughput").alias("stats"), t.str.contains(self.anchor).alias("header"),
            (has("SpecDecoding metrics") | has("Draft acceptance rate")).alias("spec"),
            has("Prefix cache hit rate: GPU").alias("v0prefix"), has("INFO").alias("info"))
        lf = lf.with_columns(
            (c("spec") & ~c("stats") & t.str.contains(self.kind_rx["spec"])).alias("spec"),
            (c("info") & t.str.contains(r"INFO(?:\x1b\[[0-9;]*m)?:")).alias("access"))
        lf = lf.with_columns(
            (c("v0prefix") & ~c("stats") & ~c("spec") & t.str.contains(self.kind_rx["v0prefix"])).alias("v0prefix"))
        lf = lf.with_columns(
            (c("header") & ~c("stats") & ~c("spec") & ~c("v0prefix") & t.str.contains(self.kind_rx["boot"]))
            .alias("boot"))
        lf = lf.with_columns((c("boot") | (self._phrase() & ~c("stats") & ~c("spec") & ~c("v0prefix"))).alias("boot"))
        key = t.cast(pl.Binary).bin.slice(t.str.find("INFO", literal=True)).cast(pl.String)
        coloured = b"\x1b" in buf  # (one byte: memchr; a two-byte search costs 7 ms per 8 MB)
        if coloured:
            key = key.str.replace_all(ANSI, "")
        count, st, sp, ac, few = pl.collect_all([
            lf.select((c("header") & ~c("stats") & ~c("spec") & ~c("v0prefix") & ~c("boot")).sum()),
            self._parse(lf.filter(c("stats")), self.stats_rx, self.stats_names, coloured),
            self._parse(lf.filter(c("spec")), self.spec_rx, self.spec_names, coloured),
            lf.filter(c("access")).select("i", key.str.replace(self.access_cut, "${1}").alias("k")),
            lf.filter(c("v0prefix") | c("boot")).select("i", "t", "v0prefix"),
        ])
        out = ChunkScan(lines=len(s), header_lines=int(count.item()))
        out.slow = {"boot": _lines(few.filter(~few["v0prefix"]), first_line)}
        self._stats_rows(out, st, first_line)
        self._spec_rows(out, sp, first_line)
        prefix = few.filter(few["v0prefix"]).select("i", "t")  # (none in a V1 log: no plan to run)
        if len(prefix):
            prefix = self._parse(prefix.lazy(), self.v0prefix_rx, self.v0prefix_names, coloured).collect()
        self._v0prefix_rows(out, prefix, first_line)
        self._access(out, ac, first_line)
        return out

    def _scan_some(self, s, buf: bytes, first_line: int, kinds: frozenset) -> ChunkScan:
        """`scan` for some kinds only: the same candidates and rows for those kinds (a
        line's kind is decided as `scan` decides it), no count of other header lines."""
        pl = self.pl
        t = pl.col("t")
        has = lambda text: t.str.contains(text, literal=True)  # noqa: E731
        lf = pl.DataFrame({"t": s}).lazy().with_row_index("i")
        # A kind's lines are those of its phrase, less those of the kinds decided before it.
        # Each kind's cheap filter runs over every line first; the regexes that decide run
        # only on the lines it kept (polars would otherwise merge the filters and run every
        # regex over every line).
        is_stats = has("Avg prompt throughput")
        is_spec = (has("SpecDecoding metrics") | has("Draft acceptance rate")) & t.str.contains(self.kind_rx["spec"])
        is_v0 = t.str.contains(self.kind_rx["v0prefix"])
        first = {"spec": has("SpecDecoding metrics") | has("Draft acceptance rate"),
                 "v0prefix": has("Prefix cache hit rate: GPU"),
                 "boot": t.str.contains(self.kind_rx["boot"]) | self._phrase(),
                 "access": has("INFO") & t.str.contains(r"INFO(?:\x1b\[[0-9;]*m)?:")}  # (a literal prefix: cheap)
        then = {"spec": ~is_stats & is_spec, "v0prefix": ~is_stats & ~is_spec & is_v0,
                "boot": ~is_stats & ~is_spec & ~is_v0, "access": pl.lit(True)}
        names = [k for k in ("stats", "spec", "v0prefix", "boot", "access") if k in kinds]
        coloured = b"\x1b" in buf
        plans = [self._parse(lf.filter(is_stats), self.stats_rx, self.stats_names, coloured) if k == "stats"
                 else lf.filter(first[k]) for k in names]
        kept = dict(zip(names, pl.collect_all(plans)))
        plans = []
        for kind in names[1:] if names[0] == "stats" else names:
            plans.append(self._decide(kind, kept[kind].lazy().filter(then[kind]), coloured))
        got = dict(zip([k for k in names if k != "stats"], pl.collect_all(plans)))
        if "stats" in kept:
            got["stats"] = kept["stats"]
        out = ChunkScan(lines=len(s), header_lines=0)
        out.slow = {"stats": [], "spec": [], "v0prefix": [], "boot": []}
        if "stats" in got:
            self._stats_rows(out, got["stats"], first_line)
        if "spec" in got:
            self._spec_rows(out, got["spec"], first_line)
        if "v0prefix" in got:
            self._v0prefix_rows(out, got["v0prefix"], first_line)
        if "boot" in got:
            out.slow["boot"] = _lines(got["boot"], first_line)
        if "access" in got:
            self._access(out, got["access"], first_line)
        return out

    def _decide(self, kind: str, lf, coloured: bool):
        """The plan that makes one kind's rows of its candidate lines (`_scan_some`); a
        `coloured` chunk holds ANSI codes."""
        pl = self.pl
        t = pl.col("t")
        if kind == "spec":
            return self._parse(lf, self.spec_rx, self.spec_names, coloured)
        if kind == "v0prefix":
            return self._parse(lf, self.v0prefix_rx, self.v0prefix_names, coloured)
        if kind == "access":
            key = t.cast(pl.Binary).bin.slice(t.str.find("INFO", literal=True)).cast(pl.String)
            if coloured:
                key = key.str.replace_all(ANSI, "")
            return lf.select("i", key.str.replace(self.access_cut, "${1}").alias("k"))
        return lf.select("i", "t")

    def _phrase(self):
        """Lines holding a start-up phrase found anywhere (progress bars, no header)."""
        t = self.pl.col("t")
        out = self.pl.lit(False)
        for phrase in self.phrases:
            out = out | t.str.contains(phrase, literal=True)
        return out

    def _stats_rows(self, out: ChunkScan, df, first_line: int) -> None:
        """The stats rows of parsed candidate lines: V1's template, then V0's on the lines
        V1's did not match (none in a V1 log: no second pass); the rest for the full-line
        templates."""
        out.stats, rest = self._columns(df, self.stats_names, first_line)
        if len(rest):
            v0 = self._parse(rest.lazy().select("i", "t"), self.v0_rx, self.v0_names).collect()
            out.v0, rest = self._columns(v0, self.v0_names, first_line)
        out.slow["stats"] = _lines(rest, first_line)

    def _spec_rows(self, out: ChunkScan, df, first_line: int) -> None:
        out.spec, rest = self._columns(df, self.spec_names, first_line)
        out.slow["spec"] = _lines(rest, first_line)
        self._one_rate(out)

    def _v0prefix_rows(self, out: ChunkScan, df, first_line: int) -> None:
        out.v0prefix, rest = self._columns(df, self.v0prefix_names, first_line)
        out.slow["v0prefix"] = _lines(rest, first_line)

    @staticmethod
    def _one_rate(out: ChunkScan) -> None:
        """Set aside the SpecDecoding rows printing both or neither rate field."""
        if out.spec is not None:
            first, last = out.spec.pop("_rate_first_set"), out.spec.pop("_rate_last_set")
            one = first != last
            if not one.all():
                out.spec_two_rates = int((~one).sum())
                out.spec = {k: v[one] for k, v in out.spec.items()}

    @staticmethod
    def _access(out: ChunkScan, ac, first_line: int) -> None:
        """Access-line keys as codes into the chunk's distinct keys."""
        if len(ac):
            codes, uniques = _factorize(ac["k"])
            out.access_lines = ac["i"].to_numpy().astype(np.int64) + first_line
            out.access_codes = codes
            out.access_keys = [k.encode() for k in uniques]

    def _parse(self, lf, rx: str, names: list[str], coloured: bool = False):
        """The plan that parses candidate lines: header by position, message by `rx`,
        numbers as floats, `ok` where both matched. In a `coloured` chunk (one with ANSI
        codes) the lines lose their codes first, as the full-line templates take them."""
        pl = self.pl
        t, c = pl.col("t"), pl.col
        if coloured:
            lf = lf.with_columns(t.str.replace_all(ANSI, ""))
        raw = t.cast(pl.Binary)
        pos = t.str.find(self.anchor)
        head = raw.bin.slice(0, pos).cast(pl.String)
        msg = raw.bin.slice(pos).cast(pl.String)
        if rx == self.stats_rx and self.stats_parts is not None:
            one, two = self.stats_parts
            m = c("_msg")
            lf = (lf.with_columns(msg.alias("_msg"))
                  .select("i", "t", head.alias("head"), head.str.extract_groups(self.head_rx).alias("h"),
                          t.str.extract(self.stamp_rx, 1).alias("stamp"), m.str.extract_groups(one).alias("m1"),
                          m.str.extract_groups(two).alias("m2"), m.str.len_bytes().alias("_len"))
                  .unnest("h", "m1", "m2")
                  .with_columns(pl.when(c("_p1").str.len_bytes() + 1 + c("site_tail").str.len_bytes()
                                        + c("_p2").str.len_bytes() == c("_len"))
                                .then(c("site_tail")).alias("site_tail"))
                  .drop("_p1", "_p2", "_len"))
            return self._typed(lf, names)
        return self._typed(lf.select("i", "t", head.alias("head"), head.str.extract_groups(self.head_rx).alias("h"),
                                     t.str.extract(self.stamp_rx, 1).alias("stamp"),
                                     msg.str.extract_groups(rx).alias("m"))
                           .unnest("h", "m"), names)

    def _typed(self, lf, names: list[str]):
        """`ok`, process, call site, presence flags and numbers of parsed candidate lines."""
        pl = self.pl
        c = pl.col
        text = [n for n in names if n in self.text]
        return (lf.with_columns(
                    (c("time").is_not_null() & c("site_tail").is_not_null()).alias("ok"),
                    c("head").str.slice(0, c("head").str.len_chars() - c("site_head").str.len_chars() - 16)
                    .str.extract(self.proc_rx, 1).alias("proc"),
                    (c("site_head") + c("site_tail") + " ").alias("site"),
                    *[c(n).is_not_null().alias(f"{n}_printed") for n in names if n in self.printed],
                    *[c(n).is_not_null().alias(f"_{n}_set") for n in ("rate_first", "rate_last") if n in names],
                    *[c(n).cast(pl.Float64) for n in names if n not in text]))

    def _columns(self, df, names: list[str], first_line: int):
        """Column arrays of the rows the strict template matched (as vllm_log._Rows gives
        them) and the frame of the other rows."""
        if not len(df):
            return None, df
        ok = df["ok"]
        if ok.all():  # (the usual case: no copy of the frame)
            rest, m = df.clear(), df
        else:
            rest, m = df.filter(~ok), df.filter(ok)
        n = len(m)
        if not n:
            return None, rest
        cols = {"line": m["i"].to_numpy().astype(np.int64) + first_line}
        text = ["time", "proc", "site", "stamp"]
        for name in m.columns:
            if name.endswith("_set") or name.endswith("_printed"):
                cols[name] = m[name].to_numpy()
        for name in names:
            col = m[name]
            if col.null_count() == n:  # not printed in this chunk: vllm_log fills it in
                continue
            if name in self.text:
                text.append(name)
            else:
                cols[name] = col.to_numpy()
        cols.update(_bytes_of(m, text))
        cols["time"] = cols["time"].astype("S14", copy=False)
        return cols, rest


def _lines(df, first_line: int) -> list[tuple[int, bytes]]:
    """(line number, bytes) of the rows of a frame with the index `i` and the text `t`."""
    return [(i + first_line, text.encode()) for i, text in zip(df["i"].to_list(), df["t"].to_list())]


def _bytes_of(df, names: list[str]) -> dict[str, np.ndarray]:
    """Several str columns of a polars frame as compact numpy bytes arrays (null -> b""): a
    column of one value (one process, call site, engine in a chunk) without a pass per row,
    the others through one joined buffer."""
    out, rest = {}, []
    n = len(df)
    for name in names:
        col = df[name]
        nulls = col.null_count()
        if nulls == n:
            out[name] = np.full(n, b"", dtype="S1")
        elif not nulls and (col == col[0]).all():
            out[name] = np.full(n, col[0].encode())
        else:
            rest.append(name)
    if rest:
        out.update(_joined(df, rest))
    return out


def _joined(df, names: list[str]) -> dict[str, np.ndarray]:
    """`_bytes_of` for columns of many values: padded to one width per column and joined
    into one buffer when every value is ASCII without NUL; else column by column."""
    import polars as pl

    cols = [df[name].fill_null("") for name in names]
    sizes = [col.str.len_bytes() for col in cols]
    lows, widths = [int(size.min() or 0) for size in sizes], [max(1, int(size.max() or 0)) for size in sizes]
    padded = [col if low == w else col.str.pad_end(w, "\x00") for col, low, w in zip(cols, lows, widths)]
    row = (padded[0] if len(padded) == 1 else pl.DataFrame(padded).select(pl.concat_str(pl.all())).to_series())
    raw = row.str.join("").item().encode("utf-8")
    padding = sum(w * len(df) - int(size.sum()) for w, size in zip(widths, sizes))
    if len(raw) != sum(widths) * len(df) or raw.count(b"\x00") != padding:  # not ASCII, or NUL in a value
        return {name: _bytes(col) for name, col in zip(names, cols)}
    table = np.frombuffer(raw, dtype=[(name, f"S{w}") for name, w in zip(names, widths)])
    return {name: table[name].copy() for name in names}


def _bytes(col, dtype=bytes) -> np.ndarray:
    """A polars str column as a compact numpy bytes array (null -> b""): ASCII text
    through one joined buffer (no Python object per value), other text value by value."""
    import polars as pl

    text = col.fill_null("")
    nbytes = text.str.len_bytes()
    if len(text) and (nbytes == text.str.len_chars()).all() and not text.str.contains("\x00", literal=True).any():
        width = max(1, int(nbytes.max()))
        joined = text.str.pad_end(width, "\x00").str.join("").item().encode("ascii")
        out = np.frombuffer(joined, dtype=f"S{width}")
        return out.astype(dtype) if dtype is not bytes and np.dtype(dtype) != out.dtype else out.copy()
    return np.array(col.cast(pl.Binary).fill_null(b"").to_list(), dtype=dtype)


def _factorize(keys) -> tuple[np.ndarray, list[str]]:
    """(code per row, distinct values) of a polars str Series, in first-seen order."""
    import polars as pl

    uniques = keys.unique(maintain_order=True)
    codes = keys.replace_strict(uniques, pl.int_range(len(uniques), eager=True), return_dtype=pl.Int32)
    return codes.to_numpy(), uniques.to_list()
