"""The browser tier: Playwright for Python driving the system's Chromium (no downloaded browser).

Skips, with the reason, where playwright is not installed (``pip install -e ".[docs]"``) or no
Chromium is found (Debian: ``apt-get install chromium``; or name one in ``TIERANK_CHROMIUM``).
Pages are served over HTTP from a local server (as a user opens a report or the docs site), and
every request for another host is aborted: the checks run offline.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

#: Chromium's names on Debian, Ubuntu and elsewhere, in the order tried (``TIERANK_CHROMIUM`` first)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str | None:
    """The system's Chromium: ``TIERANK_CHROMIUM`` if set, else the first of :data:`CHROMIUM_NAMES` on PATH."""
    given = os.environ.get("TIERANK_CHROMIUM")
    if given:
        return given if Path(given).is_file() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (session-wide)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            'the browser tier needs playwright, which is not installed: pip install -e ".[docs]"'
        )
    exe = chromium_path()
    if exe is None:
        pytest.skip(
            "the browser tier needs the system's Chromium, which was not found (Debian: apt-get install "
            "chromium; or set TIERANK_CHROMIUM to a Chromium binary)"
        )
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """``(root, base_url)``: a folder served over HTTP on localhost for the session."""
    root = tmp_path_factory.mktemp("served")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
