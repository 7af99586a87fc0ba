"""Figures of tie-aware evaluations: cutoff curves, system ranges, precision sweeps, tie structure.

Every plotting function returns a `matplotlib.figure.Figure` built
directly on matplotlib's Agg canvas: no ``pyplot``, no global backend switch,
no window, so it works headless and leaves an interactive session's backend
alone.  matplotlib is imported on first use only (``import tierank`` never
imports it); install it with ``pip install "tierank[report]"``.

Every data artist carries a ``gid`` naming what it shows (``"expected:NAME"``,
``"band:NAME"``, ``"range:NAME"``, ...), so that tests and downstream code can
find it, and SVG output gets matching element ids.

* `plot_cutoff`: a measure family at cutoffs k = 1..kmax, one curve per
  run (e.g. one run in several precision regimes): expected line, oblivious
  markers, [min, max] band, as Figure 2 of Yang et al., "Reliable Evaluation
  Protocol for Low-Precision Retrieval".  The numbers come from
  [`tierank.analysis.cutoff.cutoff_curves`][tierank.analysis.cutoff.cutoff_curves] (re-exported here).
* [`plot_ranges`][tierank.report.plots.plot_ranges]: every system as a segment from its min to its max mean,
  oblivious value as a circle and expected value as a triangle, as Figure 2 of
  Yang, Moffat & Turpin, "How precise does document scoring need to be?".
* [`plot_sweep`][tierank.report.plots.plot_sweep]: what each number format does to a measure (value, range,
  bias) and to the ties (share of documents in ties).
* [`tie_group_sizes`][tierank.report.plots.tie_group_sizes] + [`plot_tie_structure`][tierank.report.plots.plot_tie_structure]: how large the tie groups
  of each run are (complementary cumulative counts).
* [`save_figure`][tierank.report.plots.save_figure]: atomic PNG/SVG output.

Every figure lays itself out for any number of runs and any name length, measuring its text
before the layout: legends take as many columns as fit and move under the axes, the canvas grows
with their rows, names without room are shortened in the middle
([`tierank.report.labels.shorten_names`][tierank.report.labels.shorten_names]; the reports keep the full names in their tables),
titles wrap.  Nothing is cut (``tests/report/test_layout_figures.py``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.cutoff import CurveSeries, CutoffCurves, cutoff_curves  # noqa: F401  (the data; drawn here)
from ..analysis.tie_curves import tie_ccdf, tie_group_sizes, tie_structure  # noqa: F401  (the data; drawn here)
from ..errors import TierankError, TierankInputError
from .labels import shorten_names

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


# --------------------------------------------------------------------------------------------
# layout: measured text, names shortened in the middle, legends that fit the canvas


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


# --------------------------------------------------------------------------------------------
# cutoff curves


@_styled
def plot_cutoff(curves: CutoffCurves, title: str | None = None, *, ylabel: str | None = None):
    """Expected value (line), oblivious value (x markers) and [min, max] band (shaded) against k.

    One colour per run; the legend gives each run's share of documents in ties.

    Parameters
    ----------
    curves : CutoffCurves
    title : str, optional
        Defaults to ``"<family>@k: expected, oblivious and [min, max] over tie orderings"``.
    ylabel : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    width, height = 7.2, 5.0
    fig, axes = _figure(width, height)
    ax = axes[0, 0]
    ks = curves.ks
    look = {}
    for i, (name, s) in enumerate(curves.series.items()):
        color, style = PALETTE[i % len(PALETTE)], LINESTYLES[i % len(LINESTYLES)]
        look[name] = (color, style, s.ties.get("share", 0.0))
        band = ax.fill_between(ks, s.min, s.max, color=color, alpha=0.16, linewidth=0, zorder=1)
        band.set_gid(f"band:{name}")
        (line,) = ax.plot(ks, s.expected, color=color, linestyle=style, linewidth=1.8, zorder=3)
        line.set_gid(f"expected:{name}")
        (obl,) = ax.plot(
            ks,
            s.oblivious,
            linestyle="none",
            marker="x",
            markersize=5.5,
            markeredgewidth=1.3,
            color=color,
            zorder=4,
        )
        obl.set_gid(f"oblivious:{name}")

    def entries(shown):
        return [
            Line2D(
                [],
                [],
                color=c,
                linestyle=ls,
                linewidth=1.8,
                label=_text(f"{label}  ({_pct(share)} of docs tied)"),
            )
            for label, (c, ls, share) in zip(shown, look.values())
        ]

    grey = "#555555"
    marks = [
        Line2D([], [], color=grey, linewidth=1.8, label="expected over tie orderings"),
        Line2D(
            [],
            [],
            color=grey,
            linestyle="none",
            marker="x",
            markeredgewidth=1.3,
            label=_text(f"oblivious (tie-break {curves.settings.get('tie_break', 'trec_eval')})"),
        ),
        Patch(facecolor=grey, alpha=0.25, linewidth=0, label="[min, max] over tie orderings"),
    ]
    # below the axes: runs in the first row(s), what the marks mean from a new row; as many columns as fit,
    # names shortened in the middle only where one column is too narrow; the canvas grows with the rows
    _, leg_h, rows = _legend_below(
        fig, list(look), entries, marks, ncols_first=3 if len(look) <= 3 else 4, columnspacing=1.6
    )
    if rows > 2:
        fig.set_size_inches(width, height + leg_h * (rows - 2) / rows)
    ax.set_xlabel("cutoff k")
    ax.set_ylabel(_text(ylabel or f"mean {curves.family}@k"))
    ax.set_xlim(ks[0] - 0.5, ks[-1] + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    ax.set_title(
        _text(
            _wrap(
                fig,
                title
                or f"{curves.family}@k: expected, oblivious and [min, max] over tie orderings",
                width - 1.3,
                _font_size(),
            )
        )
    )  # centred over the axes: about their width
    return fig


# --------------------------------------------------------------------------------------------
# system ranges


def _system_rows(data, measure: str | None) -> tuple[list[dict], str | None]:
    """Normalize a Comparison / SystemSummary list / dict list to dicts and the measure name."""
    systems = getattr(data, "systems", None)
    if systems is not None:  # a Comparison
        measure = measure or getattr(data, "measure", None)
        data = systems
    rows = []
    for s in data:
        if isinstance(s, Mapping):
            d = s
        else:
            d = {k: getattr(s, k) for k in ("name", "min", "max", "oblivious", "expected")}
        try:
            rows.append(
                {
                    "name": str(d["name"]),
                    **{k: float(d[k]) for k in ("min", "max", "oblivious", "expected")},
                }
            )
        except (KeyError, TypeError) as e:
            raise TierankInputError(
                f"plot_ranges: every system needs name, min, max, oblivious, expected ({e})"
            ) from None
    return rows, measure


@_styled
def plot_ranges(
    comparison_or_rows,
    measure: str | None = None,
    *,
    layout: str = "systems",
    title: str | None = None,
    xlabel: str | None = None,
):
    """Every system's [min, max] mean as a segment, oblivious (circle) and expected (triangle) marked.

    Parameters
    ----------
    comparison_or_rows
        A [`Comparison`][tierank.analysis.compare.Comparison], or a sequence of mappings (or
        objects) with ``name, min, max, oblivious, expected``.
    measure : str, optional
        Measure name for the labels (a Comparison supplies its own).
    layout : {"systems", "range"}
        ``"systems"``: one row per system, best expected mean on top, names on the
        axis.  ``"range"``: the paper's layout for many systems, the vertical
        position is the system's range (log scale, floored at 1e-6), no names.
    title, xlabel : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D

    rows, measure = _system_rows(comparison_or_rows, measure)
    if layout not in ("systems", "range"):
        raise TierankInputError(f"plot_ranges: layout must be 'systems' or 'range', got {layout!r}")
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["expected"], i))
    rows = [rows[i] for i in order]
    n = len(rows)
    mname = measure or "measure"
    seg_color, obl_color, exp_color = "#4c72b0", "#1f1f1f", "#d62728"
    if layout == "systems":
        fig, axes = _figure(7.2, min(max(1.6 + 0.32 * n, 2.6), 16))
        ax = axes[0, 0]
        ys = np.arange(n)[::-1].astype(float)  # best on top
    else:
        fig, axes = _figure(7.2, 4.8)
        ax = axes[0, 0]
        floor = 1e-6
        ys = np.array([max(r["max"] - r["min"], floor) for r in rows])
        ax.set_yscale("log")
    for y, r in zip(ys, rows):
        (seg,) = ax.plot(
            [r["min"], r["max"]],
            [y, y],
            color=seg_color,
            linewidth=2.2,
            solid_capstyle="butt",
            marker="|",
            markersize=7,
            markeredgewidth=1.2,
            zorder=2,
        )
        seg.set_gid(f"range:{r['name']}")
    (obl,) = ax.plot(
        [r["oblivious"] for r in rows],
        ys,
        linestyle="none",
        marker="o",
        markersize=5.5,
        markerfacecolor="white",
        markeredgecolor=obl_color,
        markeredgewidth=1.3,
        zorder=4,
    )
    obl.set_gid("oblivious")
    (exp_,) = ax.plot(
        [r["expected"] for r in rows],
        ys,
        linestyle="none",
        marker="^",
        markersize=6,
        color=exp_color,
        zorder=5,
    )
    exp_.set_gid("expected")
    if layout == "systems":
        size = 9 if n <= 30 else 7  # names beyond ~40% of the width are shortened in the middle
        shown = _fit_names(fig, [r["name"] for r in rows], 0.42 * 7.2, size)
        ax.set_yticks(ys, [_text(t) for t in shown], fontsize=size)
        beside = max(_text_width(fig, t, size) for t in shown) + 0.4
        if n > 60:
            ax.set_yticks([])
        ax.set_ylim(-0.7, n - 0.3)
        ax.grid(axis="y", visible=False)
    else:
        ax.set_ylabel(_text(f"range of mean {mname} (max - min, log; floored at 1e-6)"))
        beside = 1.0
    ax.set_xlabel(_text(xlabel or f"mean {mname}"))
    handles = [
        Line2D(
            [],
            [],
            color=seg_color,
            linewidth=2.2,
            marker="|",
            markersize=7,
            label="[min, max] over tie orderings",
        ),
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
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    ax.set_title(
        _text(
            _wrap(
                fig,
                title or f"{mname}: tie-aware score ranges of {n} system{'s' if n != 1 else ''}",
                7.2 - 0.3 - beside,
                _font_size(),
            )
        )
    )  # centred over the axes, beside the names
    return fig


# --------------------------------------------------------------------------------------------
# precision sweep


def _canonical(measure: str) -> str:
    from ..measures import parse_measure

    try:
        return str(parse_measure(measure))
    except TierankInputError:
        return str(measure)


def _sweep_rows(sweep, measure: str) -> list[dict]:
    rows = sweep.rows if hasattr(sweep, "rows") else list(sweep)
    want = {measure, _canonical(measure)}
    out = [r for r in rows if r["measure"] in want]
    if not out:
        have = ", ".join(dict.fromkeys(r["measure"] for r in rows))
        raise TierankInputError(
            f"plot_sweep: measure {measure!r} is not in the sweep (it has: {have})"
        )
    return out


def _nan(x) -> float:
    return np.nan if x is None else float(x)


@_styled
def plot_sweep(sweep, measure: str, *, title: str | None = None):
    """What each number format does to ``measure``, formats in sweep order.

    Four panels sharing the format axis: (1) the measure's expected value
    (triangle), oblivious value (circle) and [min, max] (vertical segment);
    (2) range (max - min) and (3) bias (oblivious - expected) as labelled bars;
    (4) the share of documents in ties (labelled bars, percent).  Artist gids: ``minmax:FMT`` (segment),
    ``oblivious``, ``expected``, ``range:FMT``, ``bias:FMT``, ``tie_share:FMT`` (bars).

    Parameters
    ----------
    sweep : Sweep or list of dict
        [`tierank.analysis.sweep.sweep`][tierank.analysis.sweep.sweep] output (or its rows).
    measure : str
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D

    rows = _sweep_rows(sweep, measure)
    name = rows[0]["measure"]
    fmts = [str(r["format"]) for r in rows]
    x = np.arange(len(rows), dtype=float)
    fig, axes = _figure(
        max(6.0, 0.75 * len(rows) + 2.5),
        8.2,
        nrows=4,
        ncols=1,
        sharex=True,
        gridspec_kw={"height_ratios": [1.4, 0.8, 0.8, 0.8]},
    )
    ax_v, ax_r, ax_b, ax_t = axes[:, 0]

    lo = np.array([_nan(r["min"]) for r in rows])
    hi = np.array([_nan(r["max"]) for r in rows])
    for xi, f, a, b in zip(x, fmts, lo, hi):
        (seg,) = ax_v.plot(
            [xi, xi],
            [a, b],
            color="#4c72b0",
            linewidth=2.2,
            marker="_",
            markersize=9,
            markeredgewidth=1.3,
            solid_capstyle="butt",
            zorder=2,
        )
        seg.set_gid(f"minmax:{f}")
    (obl,) = ax_v.plot(
        x,
        [_nan(r["oblivious"]) for r in rows],
        linestyle="none",
        marker="o",
        markersize=5.5,
        markerfacecolor="white",
        markeredgecolor="#1f1f1f",
        markeredgewidth=1.3,
        zorder=4,
    )
    obl.set_gid("oblivious")
    (exp_,) = ax_v.plot(
        x,
        [_nan(r["expected"]) for r in rows],
        linestyle="none",
        marker="^",
        markersize=6,
        color="#d62728",
        zorder=5,
    )
    exp_.set_gid("expected")
    ax_v.set_ylabel(_text(f"mean {name}"))
    ax_v.legend(
        handles=[
            Line2D([], [], color="#4c72b0", linewidth=2.2, label="[min, max]"),
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                markerfacecolor="white",
                markeredgecolor="#1f1f1f",
                label="oblivious",
            ),
            Line2D([], [], linestyle="none", marker="^", color="#d62728", label="expected"),
        ],
        ncols=3,
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        frameon=False,
        borderaxespad=0.2,
    )

    rng = [_nan(r["range"]) for r in rows]
    bias = [_nan(r["bias"]) for r in rows]
    bars_r = ax_r.bar(x, rng, width=0.6, color="#4c72b0")
    bars_b = ax_b.bar(x, bias, width=0.6, color="#dd8452")
    for f, p in zip(fmts, bars_r.patches):
        p.set_gid(f"range:{f}")
    for f, p in zip(fmts, bars_b.patches):
        p.set_gid(f"bias:{f}")
    for ax, bars, vals in ((ax_r, bars_r, rng), (ax_b, bars_b, bias)):
        ax.bar_label(bars, labels=[_short(v) for v in vals], fontsize=7.5, padding=2)
        ax.axhline(0, color="#333333", linewidth=0.8)
        ax.margins(y=0.25)
    top = max((v for v in rng if not np.isnan(v)), default=0.0)
    ax_r.set_ylim(0, top * 1.3 if top > 0 else 1e-3)
    ax_r.set_ylabel("range\n(max - min)")
    ax_b.set_ylabel("bias\n(oblivious - expected)")

    share = [100 * _nan(r.get("tie_share")) for r in rows]
    bars_t = ax_t.bar(x, share, width=0.6, color="#8c8c8c")
    for f, p in zip(fmts, bars_t.patches):
        p.set_gid(f"tie_share:{f}")
    ax_t.bar_label(
        bars_t,
        labels=[_pct(s / 100) if not np.isnan(s) else "-" for s in share],
        fontsize=8,
        padding=2,
    )
    ax_t.set_ylabel("docs in ties (%)")
    ax_t.set_ylim(0, max(max((s for s in share if not np.isnan(s)), default=0) * 1.25, 1))
    size = _font_size("xtick.labelsize")
    slot = (fig.get_figwidth() - 1.4) / len(rows)  # the room of one format under its bar
    tilt = len(rows) > 6 or max(_text_width(fig, f, size) for f in fmts) > 0.9 * slot
    shown = _fit_names(
        fig, fmts, 1.8 if tilt else 0.9 * slot, size
    )  # long names shortened in the middle
    if tilt:  # the first tilted name reaches left of the axes: widen the canvas by that much
        reach = 0.87 * _text_width(fig, shown[0], size) - 0.5 * slot - 0.6
        if reach > 0:
            fig.set_size_inches(fig.get_figwidth() + reach, fig.get_figheight())
    ax_t.set_xticks(
        x, [_text(f) for f in shown], rotation=30 if tilt else 0, ha="right" if tilt else "center"
    )
    ax_t.set_xlabel("score format")
    for ax in (ax_v, ax_r, ax_b, ax_t):
        ax.grid(axis="x", visible=False)
    fig.suptitle(
        _text(_wrap(fig, title or f"{name} across score formats", fig.get_figwidth() - 0.3, 11)),
        fontsize=11,
    )
    return fig


# --------------------------------------------------------------------------------------------
# tie structure


@_styled
def plot_tie_structure(runs: Mapping, *, title: str | None = None):
    """Tie-group sizes per run: number of groups of size >= s against s (step curves, log counts).

    The legend, under the axes, gives each run's share of documents in ties, number of groups
    and largest group (names shortened in the middle where they do not fit); a run without ties
    draws no curve.

    Parameters
    ----------
    runs : mapping of str -> run-like
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    if not isinstance(runs, Mapping) or not runs:
        raise TierankInputError(
            "plot_tie_structure: give the runs as a non-empty mapping name -> run"
        )
    width, axes_height = 7.2, 4.0
    fig, axes = _figure(width, axes_height)
    ax = axes[0, 0]
    largest = 2
    any_ties = False
    facts = {}
    for i, (name, curve) in enumerate(tie_structure(runs).items()):
        # the colours repeat after ten runs: the line style tells those apart
        color, style = PALETTE[i % len(PALETTE)], LINESTYLES[i // len(PALETTE) % len(LINESTYLES)]
        sizes, share, s, c = curve.sizes, curve.share, curve.s, curve.count
        facts[name] = (
            color,
            style,
            f": {_pct(share)} of docs tied, {len(sizes):,} groups, largest {int(sizes.max())}"
            if len(sizes)
            else ": no ties",
        )
        if len(sizes):
            any_ties = True
            largest = max(largest, int(s[-1]))
            (line,) = ax.plot(
                s,
                c,
                drawstyle="steps-pre",
                marker="o",
                markersize=3.5,
                color=color,
                linestyle=style,
                linewidth=1.6,
            )
        else:
            (line,) = ax.plot([], [], color=color, linestyle=style, linewidth=1.6)
        line.set_gid(f"ties:{name}")

    def entries(shown):
        return [
            Line2D(
                [],
                [],
                color=color,
                linestyle=style,
                linewidth=1.6,
                marker="o" if fact != ": no ties" else None,
                markersize=3.5,
                label=_text(label + fact),
            )
            for label, (color, style, fact) in zip(shown, facts.values())
        ]

    # under the axes (a legend inside them covers the curves, and long names push it off the canvas)
    _, leg_h, _ = _legend_below(fig, list(facts), entries, ncols_first=2 if len(facts) > 1 else 1)
    fig.set_size_inches(width, axes_height + leg_h + 0.1)
    ax.set_yscale("log")
    if largest > 40:
        ax.set_xscale("log")
    else:
        ax.set_xlim(1.5, largest + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if not any_ties:
        ax.set_ylim(0.5, 10)
    ax.set_xlabel("tie-group size s (documents sharing one score in one query)")
    ax.set_ylabel("number of tie groups of size ≥ s")
    ax.set_title(
        _text(
            _wrap(
                fig,
                title or "Tie structure: how many documents share a score",
                width - 1.3,
                _font_size(),
            )
        )
    )
    return fig


# --------------------------------------------------------------------------------------------
# output


def figure_bytes(fig, fmt: str = "png", *, dpi: int = DPI) -> bytes:
    """The figure encoded as ``png`` or ``svg`` (no timestamps or software URLs in the metadata)."""
    import io

    matplotlib, _, _ = _mpl()
    if fmt not in ("png", "svg", "pdf"):
        raise TierankInputError(f"figure format must be png, svg or pdf, got {fmt!r}")
    meta = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None, "Format": None, "Type": None},
        "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    }[fmt]
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "tierank"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=meta, facecolor="white")
    return buf.getvalue()


def save_figure(
    fig,
    stem: str | os.PathLike,
    formats: Iterable[str] = ("png", "svg"),
    *,
    dpi: int = DPI,
    protect: Iterable = (),
) -> list[Path]:
    """Write ``stem.<fmt>`` for every format, each atomically with [`tierank.io.writers.write_atomic`][tierank.io.writers.write_atomic]
    (temporary file in the same folder, then `os.replace`), so a reader never sees a half-written figure.

    Every target is checked ([`tierank.io.writers.check_output`][tierank.io.writers.check_output]: not one of ``protect``, not a
    special file, a writable folder) before the first is written.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    stem : path without suffix, e.g. ``docs/figures/askubuntu-ndcg-cutoff``
    formats : iterable of {"png", "svg", "pdf"}
    dpi : int
    protect : iterable of paths
        Inputs that must not be overwritten.

    Returns
    -------
    list of Path, one per format, in the order asked for.
    """
    from ..io.writers import check_output, ensure_dir, write_atomic

    stem = Path(stem)
    folder = ensure_dir(stem.parent)
    targets = [(folder / f"{stem.name}.{fmt}", fmt) for fmt in formats]
    for target, _ in targets:
        check_output(target, protect)
    for target, fmt in targets:
        write_atomic(target, figure_bytes(fig, fmt, dpi=dpi), protect=protect)
    return [t for t, _ in targets]


__all__ = [
    "CurveSeries",
    "CutoffCurves",
    "cutoff_curves",
    "plot_cutoff",
    "plot_ranges",
    "plot_sweep",
    "tie_group_sizes",
    "tie_ccdf",
    "plot_tie_structure",
    "figure_bytes",
    "save_figure",
    "PALETTE",
    "DPI",
    "MissingMatplotlib",
]


# --------------------------------------------------------------------------------------------
# forest plot: the query sample's uncertainty beside the ties'


def _forest_rows(data, measure: str | None) -> tuple[list[dict], str | None, str]:
    """Normalize a Comparison / SystemSummary list / dict list to dicts, the measure and the CI's label."""
    level, method = None, None
    systems = getattr(data, "systems", None)
    if systems is not None:  # a Comparison
        measure = measure or getattr(data, "measure", None)
        level = (getattr(data, "settings", None) or {}).get("level")
        data = systems
    keys = ("expected", "ci_low", "ci_high", "min", "max", "oblivious")
    rows = []
    for s in data:
        d: dict = (
            dict(s)
            if isinstance(s, Mapping)
            else {k: getattr(s, k, None) for k in ("name", "ci_method", *keys)}
        )
        try:
            rows.append(
                {
                    "name": str(d["name"]),
                    **{k: float(d[k]) for k in keys if k != "oblivious"},
                    "oblivious": float(d["oblivious"])
                    if d.get("oblivious") is not None
                    else float("nan"),
                }
            )
        except (KeyError, TypeError) as e:
            raise TierankInputError(
                f"plot_forest: every system needs name, expected, ci_low, ci_high, min, max ({e})"
            ) from None
        method = method or d.get("ci_method")
    label = (
        f"{100 * float(level):g}% " if level is not None else ""
    ) + "CI of the mean expected value"
    if method:
        label += f" over queries ({method})"
    return rows, measure, label


@_styled
def plot_forest(comparison_or_rows, measure: str | None = None, *, title: str | None = None):
    """A forest plot: every system's mean expected value with its confidence interval over the query sample
    (bar, dot at E[M]) and, drawn just under it, its tie range [min, max] (thin segment, oblivious mean as
    a circle); systems sorted by expected mean, best on top.

    The CI says how much the mean could move with another sample of queries (the ties are averaged out by
    E); the tie range says how much the ties alone could move it.  Two systems whose CIs overlap heavily
    are not separated by the queries; two whose tie ranges overlap are not separated by the scores.

    Parameters
    ----------
    comparison_or_rows
        A [`Comparison`][tierank.analysis.compare.Comparison] (its systems carry ``ci_low``, ``ci_high``), or a
        sequence of mappings (or objects) with ``name, expected, ci_low, ci_high, min, max`` (and
        optionally ``oblivious``, ``ci_method``).
    measure : str, optional
        Measure name for the labels (a Comparison supplies its own).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D

    rows, measure, ci_label = _forest_rows(comparison_or_rows, measure)
    if not rows:
        raise TierankInputError("plot_forest: no systems to draw")
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["expected"], i))
    rows = [rows[i] for i in order]
    n = len(rows)
    mname = measure or "measure"
    ci_color, tie_color, obl_color = "#1f5fa8", "#e08a1e", "#1f1f1f"
    width = 7.2
    fig, axes = _figure(width, min(max(1.9 + 0.42 * n, 2.8), 16))
    ax = axes[0, 0]
    ys = np.arange(n)[::-1].astype(float)  # best on top
    off = 0.14
    for y, r in zip(ys, rows):
        (ci,) = ax.plot(
            [r["ci_low"], r["ci_high"]],
            [y + off, y + off],
            color=ci_color,
            linewidth=2.4,
            solid_capstyle="butt",
            zorder=3,
        )
        ci.set_gid(f"ci:{r['name']}")
        (tie,) = ax.plot(
            [r["min"], r["max"]],
            [y - off, y - off],
            color=tie_color,
            linewidth=1.4,
            marker="|",
            markersize=6,
            markeredgewidth=1.2,
            solid_capstyle="butt",
            zorder=2,
        )
        tie.set_gid(f"ties:{r['name']}")
    (exp_,) = ax.plot(
        [r["expected"] for r in rows],
        ys + off,
        linestyle="none",
        marker="o",
        markersize=5.5,
        color=ci_color,
        zorder=5,
    )
    exp_.set_gid("expected")
    obl_x = [r["oblivious"] for r in rows]
    if not all(np.isnan(obl_x)):
        (obl,) = ax.plot(
            obl_x,
            ys - off,
            linestyle="none",
            marker="o",
            markersize=4.5,
            markerfacecolor="white",
            markeredgecolor=obl_color,
            markeredgewidth=1.1,
            zorder=4,
        )
        obl.set_gid("oblivious")
    size = 9 if n <= 30 else 7  # names beyond ~40% of the width are shortened in the middle
    shown = _fit_names(fig, [r["name"] for r in rows], 0.42 * width, size)
    ax.set_yticks(ys, [_text(t) for t in shown], fontsize=size)
    beside = max(_text_width(fig, t, size) for t in shown) + 0.4
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(_text(f"mean {mname} over queries"))
    handles = [
        Line2D(
            [], [], color=ci_color, linewidth=2.4, marker="o", markersize=5.5, label=_text(ci_label)
        ),
        Line2D(
            [],
            [],
            color=tie_color,
            linewidth=1.4,
            marker="|",
            markersize=6,
            label="[min, max] over tie orderings",
        ),
    ]
    if not all(np.isnan(obl_x)):
        handles.append(
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                markersize=4.5,
                markerfacecolor="white",
                markeredgecolor=obl_color,
                markeredgewidth=1.1,
                label="oblivious",
            )
        )
    _, leg_h, _ = _legend_below(fig, [], lambda shown_: [], handles, ncols_first=2)
    fig.set_size_inches(width, fig.get_figheight() + leg_h * 0.5)
    ax.set_title(
        _text(
            _wrap(
                fig,
                title
                or f"{mname}: {n} system{'s' if n != 1 else ''} by expected mean, "
                "query-sample CI and tie range",
                width - 0.3 - beside,
                _font_size(),
            )
        )
    )
    return fig


__all__ += ["plot_forest"]
