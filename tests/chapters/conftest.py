"""Every test here executes chapter notebooks or data generators: marked slow (make test-fast leaves them out)."""

import pytest


def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.slow)
