"""Fixtures shared by the whole session: one store of executed chapters, and one chromium for
the browser tests (Playwright's sync API allows one running instance per thread)."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import worker_groups
from benchbook.site import store
from browser import find_chromium, launch

HERE = Path(__file__).parent
SLOW_FOLDERS = ("chapters", "tools")  # every test there executes chapter notebooks or data generators


def pytest_collection_modifyitems(config, items):
    """Mark the tests of SLOW_FOLDERS slow: make test-fast leaves them out. (The collection
    order is kept: putting the whole-book builds first did not make the suite faster, 11 min
    55 s against 11 min 25 s on a fresh clone, 2026-11-27.)"""
    slow = [HERE / name for name in SLOW_FOLDERS]
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in slow):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config):
    """The controller of a pytest-xdist run names the file its workers write the test groups
    to (tests/worker_groups.py); the workers inherit the variable."""
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        os.environ[worker_groups.ENV] = str(Path(tempfile.mkdtemp(prefix="benchbook-groups-")) / "groups.json")


@pytest.hookimpl(tryfirst=True)  # before the worker tells the controller its collection is done
def pytest_collection_finish(session):
    if hasattr(session.config, "workerinput"):
        worker_groups.write(session.items)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown when it is not loaded
def pytest_xdist_make_scheduler(config, log):
    """With `--dist loadgroup` (make test): the tests that share a module's build in one
    worker, the others wherever there is room. Other modes are pytest-xdist's own."""
    if config.getvalue("dist") == "loadgroup":
        return worker_groups.GroupScheduling(config, log)
    return None


def pytest_unconfigure(config):
    path = os.environ.get(worker_groups.ENV)
    if path and not hasattr(config, "workerinput"):
        shutil.rmtree(Path(path).parent, ignore_errors=True)


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


TIMELINE = "BENCHBOOK_TEST_TIMELINE"  # a file: each test's worker, group, start and end (benchmarks/suite_timeline.py)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With BENCHBOOK_TEST_TIMELINE set, one JSON line per test (its fixtures' setup and teardown
    included) appended to that file, so the suite's time can be read per worker and per group."""
    path = os.environ.get(TIMELINE)
    if not path:
        yield
        return
    import json
    import time

    start = time.time()
    yield
    line = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": item.nodeid,
            "group": worker_groups.group_of(item) or item.nodeid, "start": start, "stop": time.time()}
    with open(path, "a", encoding="utf-8") as f:  # one short write per line: workers do not interleave
        f.write(json.dumps(line) + "\n")
