"""Fixtures shared by the whole session: one store of executed chapters, and one chromium for
the browser tests (Playwright's sync API allows one running instance per thread)."""

import inspect
import os
from pathlib import Path

import pytest

from benchbook.site import store
from browser import find_chromium, launch

HERE = Path(__file__).parent
SLOW_FOLDERS = ("chapters", "tools")  # every test there executes chapter notebooks or data generators


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (it names each test by its group)
def pytest_collection_modifyitems(config, items):
    """Mark the tests of SLOW_FOLDERS slow (make test-fast leaves them out), and keep the tests
    that share a costly fixture in one pytest-xdist worker (`--dist loadgroup`, see group_of)."""
    slow = [HERE / name for name in SLOW_FOLDERS]
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in slow):
            item.add_marker(pytest.mark.slow)
        if (group := group_of(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _ours(func) -> bool:
    """A fixture of a test module or helper here (not pytest's, not this file's: those are
    per worker anyway)."""
    path = Path(inspect.getfile(func))
    return path.is_relative_to(HERE) and path != Path(__file__)


def group_of(item) -> str | None:
    """The worker group of a test that uses a module's or session's fixture of its own module
    (a book build, an executed chapter): its module, and the parameters of those fixtures, so
    each parametrised build runs once, in one worker. Other tests go to whichever worker is
    free: with one group per module (`--dist loadscope`) a module of 270 independent tests
    kept one worker busy for minutes while the other waited."""
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


@pytest.fixture(scope="session", autouse=True)
def execution_store(tmp_path_factory):
    """One execution of each chapter per session: the suite's many book builds share it by
    cache key (benchbook.site.store), so a build that changes nothing of a chapter restores
    it instead of running it again. A store the caller set (CI keeping one) is used as is."""
    if os.environ.get(store.ENV):
        yield os.environ[store.ENV]
        return
    # with pytest-xdist each worker has a temporary folder of its own; the store goes beside
    # them, so the workers share it too (it is safe between processes: benchbook.site.store)
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "executed"
    folder.mkdir(exist_ok=True)
    os.environ[store.ENV] = str(folder)
    os.environ.setdefault("BENCHBOOK_CACHE_DIR", str(folder.parent / "memo"))  # benchbook.site.memo, not ~/.cache
    yield str(folder)
    del os.environ[store.ENV]


@pytest.fixture(scope="session")
def chromium() -> str:
    return find_chromium()


@pytest.fixture(scope="session")
def browser(chromium):
    with launch(chromium) as b:
        yield b
