"""Every page of the docs site (`mkdocs build --strict`), checked in Chromium at a desktop and a
phone width (:mod:`tests.browser.checks`)."""

from __future__ import annotations

import shutil
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
    pytest.importorskip("mkdocs", reason='the docs site needs mkdocs, which is not installed: pip install -e ".[docs]"')
    if not (ROOT / "mkdocs.yml").is_file():
        pytest.skip("no mkdocs.yml beside the tests (an installed package)")
    root, base = served
    out = root / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
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


def test_the_tier_names_its_browser():
    """Where the tier runs, it runs the system's Chromium (never a downloaded one)."""
    from .conftest import chromium_path

    exe = chromium_path()
    if exe is None:
        pytest.skip("no system Chromium (Debian: apt-get install chromium)")
    assert shutil.which(Path(exe).name) or Path(exe).is_file()
