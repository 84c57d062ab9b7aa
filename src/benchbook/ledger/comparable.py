"""Like with like: whether a data folder is the write-up's setup, role by role.

A write-up's published numbers, claims and caveats describe one setup: a platform, a
model of one family and size, a weight format. published.yml states it under ``setup``,
per configuration role::

    setup:
      baseline:
        platform: [H100]            # any of these names (words of the name, in any order)
        accelerators: 1             # devices serving the model, when it matters
        model: Qwen3.6-27B
        quantisation: FP8

A role of the data is comparable when each of its configurations matches one entry of
the role's setup (a role may list several entries, e.g. three models). Matching is by
words: every word of the published name appears among the words of the data's (so
'RTX 3090' matches '2x NVIDIA GeForce RTX 3090', and 'Qwen3.6-27B' does not match
'Qwen3.5-27B'). A claim or cell is comparable when every role it draws on is; otherwise
it is listed as not comparable, with what the data is and what the write-up measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FIELDS = ("platform", "accelerators", "model", "quantisation")
_WORD = re.compile(r"[a-z0-9]+")


def words(text) -> set[str]:
    return set(_WORD.findall(str(text or "").lower()))


def accelerator_count(text) -> int:
    """Devices from a study.yml `accelerators` string such as '2x NVIDIA RTX 3090' (1 if absent)."""
    m = re.match(r"\s*(\d+)\s*[x×]", str(text or ""))
    return int(m.group(1)) if m else 1


def _alternatives(value) -> list[str]:
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _data_text(config: dict, name: str) -> str:
    if name == "platform":
        return f"{config.get('platform', '')} {config.get('accelerators', '')}"
    if name == "quantisation":  # a model id often carries its weight format ('...-FP8')
        return f"{config.get('quantisation', '')} {config.get('model', '')}"
    return str(config.get(name, "") or "")


def field_matches(config: dict, name: str, wanted) -> bool:
    if name == "accelerators":
        return accelerator_count(config.get("accelerators")) == int(wanted)
    have = words(_data_text(config, name))
    return any(words(alt) <= have for alt in _alternatives(wanted))


# A weight format or file type in a model name ('-FP8', '-Q8_0', '-UD-Q4_K_XL', '.gguf').
_FORMAT_PART = re.compile(r"[-_.](?:ud-)?(?:i?q\d(?:_[a-z0-9]+)*|b?f\d+|fp\d+|int\d+|w\d+a\d+|awq|gptq|"
                          r"nvfp4|mxfp4|gguf|safetensors)(?=$|[-_.])", re.IGNORECASE)


def model_core(name) -> set[str]:
    """The words naming a model, without its organisation, weight format or file type."""
    text = str(name or "").rsplit("/", 1)[-1]
    while True:
        shorter = _FORMAT_PART.sub("", text)
        if shorter == text:
            return words(text)
        text = shorter


def same_model(a, b) -> bool:
    """Two names for one model in any weight format: the core words of one are among the
    other's ('Qwen3.6-35B-A3B-Q8_0.gguf' is 'Qwen/Qwen3.6-35B-A3B-FP8'; 'Qwen3.6-27B' is not)."""
    wa, wb = model_core(a), model_core(b)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def describe(config: dict) -> str:
    """A configuration in a few words, as the page shows it: model, weights, platform."""
    parts = [str(config.get(k)) for k in ("model", "quantisation") if config.get(k)]
    where = config.get("platform") or config.get("accelerators")
    return _in_words(parts, str(where or ""))


def _in_words(parts: list[str], where: str) -> str:
    if not parts:
        return f"a model it does not name, on {where}" if where else "not described"
    return ", ".join(parts) + (f" on {where}" if where else "")


def describe_setup(entry: dict) -> str:
    parts = [" / ".join(_alternatives(entry[k])) for k in ("model", "quantisation") if k in entry]
    where = " / ".join(_alternatives(entry["platform"])) if "platform" in entry else ""
    if "accelerators" in entry:
        where = f"{entry['accelerators']}x {where}".strip()
    return _in_words(parts, where)


@dataclass
class RoleMatch:
    role: str
    comparable: bool
    data: str  # what the data's configurations of this role are
    claim: str  # what the write-up measured in this role
    reason: str = ""  # the fields that differ
    apart: str = ""  # why this role's values are kept apart from the page's own (pipeline.ChapterResults.kept_apart)


@dataclass
class Comparability:
    """Per role: is the data the write-up's setup? `declared` is False when published.yml has no setup."""

    roles: dict[str, RoleMatch] = field(default_factory=dict)
    declared: bool = True

    @property
    def comparable(self) -> bool:
        return all(m.comparable for m in self.roles.values())

    @property
    def any_comparable(self) -> bool:
        return any(m.comparable for m in self.roles.values())

    def differing(self) -> list[RoleMatch]:
        return [m for m in self.roles.values() if not m.comparable]

    def role_ok(self, role: str) -> bool:
        m = self.roles.get(role)
        return m is None or m.comparable


def compare_setup(setup: dict | None, configs: dict, roles_of: dict[str, str]) -> Comparability:
    """Each role of the setup against the data's configurations with that role.

    A role the setup names but the data lacks is comparable (nothing of it can be computed,
    and the ledger says 'not in the data'); a role of the data the setup does not name
    (further configurations, 'other') is not the write-up's: not comparable, so such data is at
    most partly the write-up's setup.
    """
    if not setup:
        return Comparability(declared=False)
    out = Comparability()
    for role, entries in setup.items():
        entries = entries if isinstance(entries, list) else [entries]
        mine = {c: configs.get(c, {}) for c, r in roles_of.items() if r == role}
        claim = "; ".join(dict.fromkeys(describe_setup(e) for e in entries))
        if not mine:
            out.roles[role] = RoleMatch(role, True, "absent", claim)
            continue
        reasons = []
        for cid, cfg in mine.items():
            best = differences(cfg, entries)
            if best:
                reasons.append(f"{cid}: {', '.join(best)}")
        data = "; ".join(dict.fromkeys(describe(c) for c in mine.values()))  # each setup once
        out.roles[role] = RoleMatch(role, not reasons, data, claim, "; ".join(reasons))
    for role in dict.fromkeys(r for r in roles_of.values() if r not in setup):
        # configurations beyond the write-up's ('other'): the data is then only partly its setup
        mine = [configs.get(c, {}) for c, r in roles_of.items() if r == role]
        out.roles[role] = RoleMatch(role, False, "; ".join(dict.fromkeys(describe(c) for c in mine)),
                                    "nothing in this role", "not one of the write-up's configurations")
    return out


def _differences(config: dict, entry: dict) -> list[str]:
    return [f"{name} differs" for name in FIELDS if name in entry and not field_matches(config, name, entry[name])]


def differences(config: dict, entries) -> list[str]:
    """How a configuration differs from the nearest of a role's setup entries (one mapping or a
    list); empty when it is one of them (also what `benchbook new`'s pick rule 'setup' asks)."""
    entries = entries if isinstance(entries, list) else [entries]
    return min((_differences(config, e) for e in entries), key=len)


def owner(prefixes, name: str, fallback=None):
    """What `name` belongs to: the entry of the longest prefix it starts with (prefixes
    sorted longest first: (prefix, entry) pairs), else `fallback`."""
    return next((m for p, m in prefixes if name == p or name.startswith(p + "_")), fallback)


@dataclass
class Gate:
    """Which published names draw on which role, to keep unlike data out of the verdicts.

    `prefixes` pairs a value-name prefix (a role's key, e.g. 'h100_dense') with that role's
    match; a name belongs to the longest prefix it starts with. Names of no role (the
    chapter's parameters, numbers the write-up stated) never block a comparison.
    """

    prefixes: list[tuple[str, RoleMatch]] = field(default_factory=list)
    fallback: RoleMatch | None = None  # names of no role's prefix that are the chapter's own data
    ignore: frozenset = frozenset()  # names that are parameters, not data

    def __post_init__(self):
        self.prefixes = sorted(self.prefixes, key=lambda p: -len(p[0]))

    def match(self, name: str) -> RoleMatch | None:
        if name in self.ignore:
            return None
        return owner(self.prefixes, name, self.fallback)

    def reason(self, names) -> str | None:
        """None when every role the names draw on is comparable, else what differs."""
        bad: list[RoleMatch] = []
        for n in sorted(names):
            m = self.match(n)
            if m is not None and not m.comparable and m not in bad:
                bad.append(m)
        if not bad:
            return None
        return "; ".join(dict.fromkeys(m.apart or f"data: {m.data}; write-up: {m.claim}" for m in bad))

    def apart(self, names) -> str | None:
        """Why a number over these names is no finding of the page's own data (a name of a
        folder kept apart from it), else None."""
        found = [m.apart for m in map(self.match, sorted(names)) if m is not None and m.apart]
        return found[0] if found else None
