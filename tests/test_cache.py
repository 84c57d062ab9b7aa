"""Where the user's cache folder is (benchbook.cache)."""

from __future__ import annotations

from pathlib import Path

from benchbook import cache


def test_the_cache_folder_is_the_variable_s_then_xdg_s_then_the_home_s(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHBOOK_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.folder() == tmp_path / "mine"
    monkeypatch.delenv("BENCHBOOK_CACHE_DIR")
    assert cache.folder() == tmp_path / "xdg" / "benchbook"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.folder() == Path(tmp_path / "home" / ".cache" / "benchbook")
