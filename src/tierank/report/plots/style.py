"""tierank's figure style: the colours and line styles of successive runs, the matplotlib settings every
figure is drawn under, matplotlib imported on first use, a figure on an Agg canvas, and text helpers."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from ...errors import TierankError

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

#: Colours for successive runs/regimes (matplotlib's tab10, colour-blind friendlier order first).
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)

#: Line styles for successive runs, so that curves lying on each other stay distinguishable.
LINESTYLES: tuple[LineStyleType, ...] = ("-", "--", "-.", ":")

#: Resolution of raster output (PNG) in dots per inch.
DPI = 150

_RC = {
    "font.size": 9.5,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "svg.hashsalt": "tierank",  # stable ids: the same figure gives the same SVG bytes
}


class MissingMatplotlib(TierankError, ImportError):
    """matplotlib is needed for figures and is not installed."""


def _mpl():
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingMatplotlib(
            'tierank figures need matplotlib, which is not installed: pip install "tierank[report]"'
        ) from None
    return matplotlib, Figure, FigureCanvasAgg


def _styled(func):
    """Run a plotting function under tierank's matplotlib style (rcParams restored afterwards)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        matplotlib, _, _ = _mpl()
        with matplotlib.rc_context(_RC):
            return func(*args, **kwargs)

    return wrapper


def _figure(width: float, height: float, nrows: int = 1, ncols: int = 1, **subplot_kw):
    """A constrained-layout Figure on an Agg canvas, and its axes (2-d array)."""
    _, Figure, FigureCanvasAgg = _mpl()
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    return fig, axes


def _text(s) -> str:
    """A label safe for matplotlib: a literal ``$`` must not switch to mathtext."""
    return str(s).replace("$", r"\$")


def _short(v: float) -> str:
    """Bar label: two significant digits, ``0`` for zero, ``-`` for NaN."""
    if np.isnan(v):
        return "-"
    return "0" if v == 0 else f"{v:.2g}"


def _pct(x: float) -> str:
    if x == 0:
        return "0%"
    if x < 0.001:
        return "<0.1%"
    return f"{100 * x:.1f}%"


#: Colours of a tie range glyph: the [min, max] segment, the oblivious circle's edge, the expected triangle.
RANGE_COLORS = ("#4c72b0", "#1f1f1f", "#d62728")


def _points(ax, at, values, gid: str, *, vertical: bool = False, **style):
    """Markers alone (no line) at ``values`` along the value axis, ``at`` across it (the x axis
    when ``vertical``), with the SVG id ``gid``; returns the line."""
    xy = (at, values) if vertical else (values, at)
    (line,) = ax.plot(*xy, linestyle="none", **style)
    line.set_gid(gid)
    return line


def _range_glyphs(ax, at, rows: list[dict], gids, *, vertical: bool = False) -> None:
    """Per row at position ``at`` its [min, max] segment (SVG id from ``gids``), then across all rows
    the oblivious circles and expected triangles: the glyph of a tie range (values read through
    `_nan`, so that a missing one is not drawn)."""
    seg_color, obl_color, exp_color = RANGE_COLORS
    cap = (
        {"marker": "_", "markersize": 9, "markeredgewidth": 1.3}
        if vertical
        else {"marker": "|", "markersize": 7, "markeredgewidth": 1.2}
    )
    for p, r, gid in zip(at, rows, gids):
        ends, place = [_nan(r["min"]), _nan(r["max"])], [p, p]
        (seg,) = ax.plot(
            *((place, ends) if vertical else (ends, place)),
            color=seg_color,
            linewidth=2.2,
            solid_capstyle="butt",
            zorder=2,
            **cap,
        )
        seg.set_gid(gid)
    marks = {
        "oblivious": {
            "marker": "o",
            "markersize": 5.5,
            "markerfacecolor": "white",
            "markeredgecolor": obl_color,
            "markeredgewidth": 1.3,
            "zorder": 4,
        },
        "expected": {"marker": "^", "markersize": 6, "color": exp_color, "zorder": 5},
    }
    for key, style in marks.items():
        _points(ax, at, [_nan(r[key]) for r in rows], key, vertical=vertical, **style)


def _range_handles(segment: str, **segment_style) -> list:
    """The legend entries of `_range_glyphs`: the segment (labelled ``segment``), circle and triangle."""
    from matplotlib.lines import Line2D

    seg_color, obl_color, exp_color = RANGE_COLORS
    return [
        Line2D([], [], color=seg_color, linewidth=2.2, label=segment, **segment_style),
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markerfacecolor="white",
            markeredgecolor=obl_color,
            markeredgewidth=1.3,
            label="oblivious",
        ),
        Line2D([], [], linestyle="none", marker="^", color=exp_color, label="expected"),
    ]


def _run_handles(shown: list[str], looks: dict[str, tuple], **style) -> list:
    """The legend entry of each run under its ``shown`` name: a line in its colour and line style,
    labelled with the name and its facts (``looks``: run -> (colour, line style, facts))."""
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color=c, linestyle=ls, label=_text(label + facts), **style)
        for label, (c, ls, facts) in zip(shown, looks.values())
    ]


def _nan(x) -> float:
    """``x`` as a float, None as NaN (a point matplotlib leaves out)."""
    return float("nan") if x is None else float(x)
