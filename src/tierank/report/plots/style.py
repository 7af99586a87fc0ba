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
