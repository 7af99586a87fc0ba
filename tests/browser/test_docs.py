"""Every page of the docs site (`mkdocs build --strict`), checked in Chromium at a desktop and a
phone width (:mod:`tests.browser.checks`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .checks import VIEWPORTS, check_page

ROOT = Path(__file__).resolve().parents[2]


def _pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html") if p.name != "404.html")


@pytest.fixture(scope="module")
def site(served, browser):
    """The site built with warnings as errors into the served folder; its pages' paths."""
    pytest.importorskip(
        "mkdocs",
        reason='the docs site needs mkdocs, which is not installed: pip install -e ".[docs]"',
    )
    if not (ROOT / "mkdocs.yml").is_file():
        pytest.skip("no mkdocs.yml beside the tests (an installed package)")
    root, base = served
    out = root / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{done.stderr[-4000:]}")
    pages = _pages(out)
    assert pages, "the site has no pages"
    return out, pages


def test_docs_site_in_the_browser(browser, served, site):
    """Every page at both widths; all problems reported at once, page by page."""
    root, base = served
    out, pages = site
    found = []
    for rel in pages:
        for viewport in VIEWPORTS:
            problems = check_page(browser, f"{base}/site/{rel}", root, base, viewport)
            found += [f"{rel} ({viewport}): {p}" for p in problems]
    assert not found, f"{len(found)} problems on the docs site:\n" + "\n".join(found[:80])


def test_the_tier_runs_the_systems_chromium(browser):
    """The browser driven is the system's Chromium (``executable_path``), not one playwright downloaded."""
    from .conftest import chromium_path

    done = subprocess.run(
        [chromium_path(), "--version"], capture_output=True, text=True, timeout=60
    )
    assert browser.version and browser.version in done.stdout, (browser.version, done.stdout)
