"""Data and helpers shared by the tests of tierank.report."""

from __future__ import annotations

import base64
import re

from tierank.analysis.compare import compare

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

QRELS = {"q1": {"a": 1, "b": 0, "c": 1, "d": 2}, "q2": {"x": 1, "y": 1}, "q3": {"m": 1}}
TIED = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.8, "e": 0.5},
    "q2": {"x": 0.3, "y": 0.7, "z": 0.7, "w": 0.7},
    "q3": {"m": 0.1, "n": 0.1, "o": 0.2},
}
EXACT = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5},
    "q2": {"x": 0.3, "y": 0.7, "z": 0.6, "w": 0.5},
    "q3": {"m": 0.1, "n": 0.05, "o": 0.2},
}
RUNS = {"exact": EXACT, "tied": TIED}


def by_gid(fig, gid):
    """The one artist of ``fig`` with this gid."""
    found = fig.findobj(lambda a: a.get_gid() == gid)
    assert len(found) == 1, (gid, found)
    return found[0]


def png_payloads(page: str) -> list[bytes]:
    return [
        base64.b64decode(m)
        for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    ]


def f4(x: float) -> str:
    """A number as the report tables write it: 4 decimals, no negative zero."""
    text = f"{x:.4f}"
    return "0.0000" if text == "-0.0000" else text


def assert_self_contained(page: str) -> None:
    assert not re.search(r"https?://", page), "the page names an external URL"
    for tag in ("<script", "<link", "@import", "<iframe"):
        assert tag not in page.lower()


def systems():
    """Three systems (one name with markup) and their comparison on nDCG@3."""
    runs = {
        "A": EXACT,
        "B": TIED,
        "<b>x</b>": {
            "q1": {"e": 1.0, "a": 1.0},
            "q2": {"x": 2.0, "y": 1.0},
            "q3": {"m": 1.0, "o": 1.0},
        },
    }
    return runs, compare(runs, QRELS, "nDCG@3")
