"""Fixtures shared by the whole session: one store of executed chapters, and one chromium for
the browser tests (Playwright's sync API allows one running instance per thread)."""

import os

import pytest

from benchbook.site import store
from browser import find_chromium, launch


@pytest.fixture(scope="session", autouse=True)
def execution_store(tmp_path_factory):
    """One execution of each chapter per session: the suite's many book builds share it by
    cache key (benchbook.site.store), so a build that changes nothing of a chapter restores
    it instead of running it again. A store the caller set (CI keeping one) is used as is."""
    if os.environ.get(store.ENV):
        yield os.environ[store.ENV]
        return
    os.environ[store.ENV] = str(tmp_path_factory.mktemp("executed"))
    yield os.environ[store.ENV]
    del os.environ[store.ENV]


@pytest.fixture(scope="session")
def chromium() -> str:
    return find_chromium()


@pytest.fixture(scope="session")
def browser(chromium):
    with launch(chromium) as b:
        yield b
