"""Debian's chromium through Playwright, and a local HTTP server for a built site.

Shared by the browser tests so each finds the browser, serves a tree and launches the
same way. No browser is ever downloaded: chromium comes from apt when it is missing.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("BENCHBOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find_chromium() -> str:
    """Debian's chromium, installed with apt-get when missing; skips the test if it cannot be."""
    if not CHROMIUM.exists():
        apt = ["apt-get"] if os.geteuid() == 0 else ["sudo", "-n", "apt-get"]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        try:
            for args in (["update"], ["install", "-y", "chromium"]):
                subprocess.run(apt + args, check=True, capture_output=True, text=True, timeout=900, env=env)
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", "") or exc
            pytest.skip(f"{CHROMIUM} is missing and `apt-get install -y chromium` failed: {str(detail)[-500:]}")
        if not CHROMIUM.exists():
            pytest.skip(f"apt-get installed chromium but {CHROMIUM} is still missing "
                        "(set BENCHBOOK_CHROMIUM to the browser's path)")
    return str(CHROMIUM)


@contextmanager
def serve(directory: Path):
    """A quiet threaded HTTP server for `directory` on 127.0.0.1; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], ConnectionError):  # a browser that hung up is fine
                super().handle_error(request, client_address)

    httpd = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@contextmanager
def launch(executable: str):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


# Resolves once the page's web fonts are in and two frames have been drawn after them, so what a
# test reads is the layout a reader sees, not one that a late font or a busy machine still changes.
SETTLED = ("() => document.fonts.ready.then(() => "
           "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))")


def settle(page) -> None:
    page.evaluate(SETTLED)
