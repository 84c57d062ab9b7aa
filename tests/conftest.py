"""Fixtures shared by the browser tests: one chromium for the whole session (Playwright's
sync API allows one running instance per thread)."""

import pytest

from browser import find_chromium, launch


@pytest.fixture(scope="session")
def chromium() -> str:
    return find_chromium()


@pytest.fixture(scope="session")
def browser(chromium):
    with launch(chromium) as b:
        yield b
