"""Names made short enough to show: shortened in the middle, kept distinct.

Run names are often long and alike at both ends (``askubuntu-test.bm25.band1.4.run``,
``askubuntu-test.bm25.band2.0.run``); a figure that has no room for a whole name
keeps its start and its end and puts ``…`` in between, so the part that tells
runs apart (usually the end) stays visible.  Reports keep the full names in
their tables.  Nothing here draws; [`tierank.report.plots`][tierank.report.plots] chooses the
width from the room it measures.
"""

from __future__ import annotations

from collections.abc import Sequence

#: What stands for the characters left out.
ELLIPSIS = "…"


def shorten_middle(text: str, width: int) -> str:
    """``text`` if it has at most ``width`` characters, else its start and end around ``…`` (``width`` in all).

    The end keeps the extra character when the room is odd: a run's end
    (its setting, its format, ``.run``) tells runs apart more often than its start.

    Examples
    --------
    >>> shorten_middle("askubuntu-test.bm25.band1.4.run", 22)
    'askubuntu-…band1.4.run'
    >>> shorten_middle("fp32", 21)
    'fp32'
    >>> shorten_middle("abcdef", 1)
    '…'
    """
    text = str(text)
    width = max(int(width), 1)
    if len(text) <= width:
        return text
    keep = width - 1
    tail = (keep + 1) // 2
    head = keep - tail
    return text[:head] + ELLIPSIS + (text[len(text) - tail :] if tail else "")


def shorten_names(names: Sequence[str], width: int) -> list[str]:
    """Every name shortened in the middle to ``width`` characters, widening those that would collide.

    Distinct names stay distinct: names whose shortened forms coincide are
    given more room until they differ (at worst their full length).

    Examples
    --------
    >>> shorten_names(["run-aaaa-x-final", "run-bbbb-x-final", "fp8"], 9)
    ['run-a…final', 'run-b…final', 'fp8']
    >>> shorten_names(["askubuntu-test.bm25.band1.4.run", "askubuntu-test.bm25.band2.0.run"], 15)
    ['askubun…1.4.run', 'askubun…2.0.run']
    """
    names = [str(n) for n in names]
    out = [shorten_middle(n, width) for n in names]
    longest = max((len(n) for n in names), default=0)
    w = int(width)
    while len(set(out)) < len(out) and w < longest:
        w += 1
        clash = {s for s in out if out.count(s) > 1}
        out = [shorten_middle(n, w) if s in clash else s for n, s in zip(names, out)]
    return out


__all__ = ["ELLIPSIS", "shorten_middle", "shorten_names"]
