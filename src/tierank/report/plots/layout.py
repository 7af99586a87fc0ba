"""Layout: measured text, names shortened in the middle, legends that fit the canvas."""

from __future__ import annotations

from ..labels import shorten_names
from .style import _mpl


def _text_width(fig, text: str, fontsize: float) -> float:
    """Width in inches of ``text`` drawn in tierank's font at ``fontsize`` points (no mathtext)."""
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    w, _, _ = renderer.get_text_width_height_descent(
        str(text), FontProperties(size=fontsize), ismath=False
    )
    return w / fig.dpi


def _fit_names(fig, names, room: float, fontsize: float) -> list[str]:
    """``names`` shortened in the middle (one common width in characters) so the widest fits ``room`` inches.

    Distinct names stay distinct ([`tierank.report.labels.shorten_names`][tierank.report.labels.shorten_names]); no name goes below
    8 characters, whatever the room."""
    names = [str(n) for n in names]

    def widest(ns):
        return max((_text_width(fig, n, fontsize) for n in ns), default=0.0)

    if widest(names) <= room:
        return names
    lo, hi = 8, max(len(n) for n in names)
    while lo < hi:  # the largest width in characters that fits
        mid = (lo + hi + 1) // 2
        if widest(shorten_names(names, mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return shorten_names(names, lo)


def _wrap(fig, text: str, room: float, fontsize: float) -> str:
    """``text`` broken into lines at spaces so that each fits ``room`` inches (a word too long is shortened)."""
    lines: list[str] = []
    for para in str(text).split("\n"):
        cur = ""
        for word in para.split(" "):
            if _text_width(fig, word, fontsize) > room:
                word = _fit_names(fig, [word], room, fontsize)[0]
            cand = f"{cur} {word}" if cur else word
            if cur and _text_width(fig, cand, fontsize) > room:
                lines.append(cur)
                cur = word
            else:
                cur = cand
        lines.append(cur)
    return "\n".join(lines)


def _font_size(key: str = "axes.titlesize") -> float:
    from matplotlib.font_manager import FontProperties

    return FontProperties(size=_mpl()[0].rcParams[key]).get_size_in_points()


def _grid(first: list, last: list, ncols: int) -> list:
    """Legend handles laid out row by row in ``ncols`` columns (``first`` in the first rows, ``last`` from a new
    row), as the column-major list `Figure.legend` fills; empty cells are invisible entries."""
    from matplotlib.lines import Line2D

    rows_a, rows_b = -(-len(first) // ncols), -(-len(last) // ncols)
    grid = [[None] * ncols for _ in range(rows_a + rows_b)]
    for j, h in enumerate(first):
        grid[j // ncols][j % ncols] = h
    for j, h in enumerate(last):
        grid[rows_a + j // ncols][j % ncols] = h
    blank = Line2D([], [], linestyle="none", label=" ")
    return [grid[r][c] or blank for c in range(ncols) for r in range(rows_a + rows_b)]


#: Widths in characters tried for names, in turn, when a legend does not fit with full names in one column.
_NAME_WIDTHS = (64, 52, 44, 36, 30, 24, 20, 16, 12, 8)


def _legend_below(
    fig, names, make_entries, marks=(), *, ncols_first: int, margin: float = 0.15, **kw
):
    """A figure legend under the axes that fits the canvas's width.

    Tries ``ncols_first`` columns down to one with the full names, then, in turn, the names shortened in
    the middle to each of `_NAME_WIDTHS` characters, again from ``ncols_first`` columns down;
    ``make_entries(shown_names)`` returns the run entries, and ``marks`` (what the marks mean) start a new
    row.  Returns the legend, its height in inches and its number of rows.
    """
    renderer = fig.canvas.get_renderer()
    room = fig.get_figwidth() - 2 * margin
    names, marks = [str(n) for n in names], list(marks)
    longest = max((len(n) for n in names), default=0)
    leg = None
    for width in (None, *(w for w in _NAME_WIDTHS if w < longest)):
        entries = make_entries(names if width is None else shorten_names(names, width))
        for ncols in range(max(ncols_first, 1), 0, -1):
            if leg is not None:
                leg.remove()
            leg = fig.legend(
                handles=_grid(entries, marks, ncols),
                loc="outside lower center",
                ncols=ncols,
                frameon=False,
                **kw,
            )
            box = leg.get_window_extent(renderer)
            if box.width / fig.dpi <= room:
                break
        else:
            continue
        break
    rows = -(-len(entries) // ncols) + -(-len(marks) // ncols)
    return leg, box.height / fig.dpi, rows
