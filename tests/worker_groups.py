"""Which tests must share a pytest-xdist worker, and a scheduler that keeps them together.

A test that uses a module's or session's fixture of its own module (a book build, an
executed chapter) must run in the worker that made it, or each worker makes it again. Any
other test goes to whichever worker is free: grouping whole modules (`--dist loadscope`)
kept one worker busy for minutes with a module of 270 independent tests while the other
waited. pytest-xdist's own groups (`--dist loadgroup` with `xdist_group` marks) do not work
with pytest 9, whose node ids can no longer be renamed, so each worker writes the group of
every test it collected to a file the controller's scheduler reads (`GroupScheduling`).
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

HERE = Path(__file__).parent
ENV = "BENCHBOOK_TEST_GROUPS"  # the file the workers write and the scheduler reads


def _ours(func) -> bool:
    """A fixture of a test module or helper here (not pytest's, not conftest's: those are
    made once per worker anyway)."""
    path = Path(inspect.getfile(func))
    return path.is_relative_to(HERE) and path.name != "conftest.py"


def group_of(item) -> str | None:
    """The module of a test that uses one of its module's shared fixtures, with the
    parameters of those fixtures (each parametrised build is made once, in one worker);
    None for a test that may run anywhere."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    shared = sorted(name for name, defs in info.name2fixturedefs.items()
                    if defs and defs[-1].scope != "function" and _ours(defs[-1].func))
    if not shared:
        return None
    params = getattr(item, "callspec", None)
    keys = [f"{n}={params.params[n]}" for n in shared if params is not None and n in params.params]
    return "::".join([item.path.relative_to(HERE).as_posix(), *keys])


def write(items) -> None:
    """In a worker, after collection: every test's group, for the controller (one file: every
    worker collects the same tests)."""
    path = os.environ.get(ENV)
    if not path:
        return
    groups = {item.nodeid: g for item in items if (g := group_of(item)) is not None}
    tmp = Path(f"{path}.{os.getpid()}")
    tmp.write_text(json.dumps(groups), encoding="utf-8")
    tmp.replace(path)  # whole or not at all


class GroupScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling by scope, with a test's scope its group, or itself."""

    _groups: dict | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            self._groups = json.loads(Path(os.environ[ENV]).read_text(encoding="utf-8"))
        return self._groups.get(nodeid, nodeid)
