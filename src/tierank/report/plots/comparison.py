"""Figures of a comparison: every system's tie range ([`plot_ranges`][tierank.report.plots.plot_ranges]) and the forest plot of
the query sample's uncertainty beside the ties' ([`plot_forest`][tierank.report.plots.plot_forest])."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...errors import TierankInputError
from .layout import _fit_names, _font_size, _legend_below, _text_width, _wrap
from .style import _figure, _points, _range_glyphs, _range_handles, _styled, _text


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
    rows, measure = _system_rows(comparison_or_rows, measure)
    if layout not in ("systems", "range"):
        raise TierankInputError(f"plot_ranges: layout must be 'systems' or 'range', got {layout!r}")
    rows = _by_expected(rows)
    n = len(rows)
    mname = measure or "measure"
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
    _draw_ranges(ax, ys, rows)
    if layout == "systems":
        beside = _system_names(fig, ax, ys, rows, 7.2, hide=n > 60)
    else:
        ax.set_ylabel(_text(f"range of mean {mname} (max - min, log; floored at 1e-6)"))
        beside = 1.0
    ax.set_xlabel(_text(xlabel or f"mean {mname}"))
    fig.legend(handles=_ranges_handles(), loc="outside lower center", ncols=3, frameon=False)
    _title_beside(
        fig,
        ax,
        title or f"{mname}: tie-aware score ranges of {n} system{'s' if n != 1 else ''}",
        7.2,
        beside,
    )
    return fig


def _by_expected(rows: list[dict]) -> list[dict]:
    """``rows`` by expected mean, best first (input order among equal ones)."""
    order = sorted(range(len(rows)), key=lambda i: (-rows[i]["expected"], i))
    return [rows[i] for i in order]


def _draw_ranges(ax, ys: np.ndarray, rows: list[dict]) -> None:
    """Per system at height ``ys`` its [min, max] segment, oblivious circle and expected triangle."""
    _range_glyphs(ax, ys, rows, [f"range:{r['name']}" for r in rows])


def _ranges_handles() -> list:
    """The legend entries of plot_ranges: what the segment, the circle and the triangle mean."""
    return _range_handles("[min, max] over tie orderings", marker="|", markersize=7)


def _system_names(
    fig, ax, ys: np.ndarray, rows: list[dict], width: float, hide: bool = False
) -> float:
    """The systems' names on the y axis, shortened in the middle beyond ~40% of ``width`` (no ticks at
    all with ``hide``); returns the room they take beside the axes, in inches."""
    n = len(rows)
    size = 9 if n <= 30 else 7  # names beyond ~40% of the width are shortened in the middle
    shown = _fit_names(fig, [r["name"] for r in rows], 0.42 * width, size)
    ax.set_yticks(ys, [_text(t) for t in shown], fontsize=size)
    beside = max(_text_width(fig, t, size) for t in shown) + 0.4
    if hide:
        ax.set_yticks([])
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="y", visible=False)
    return beside


def _title_beside(fig, ax, text: str, width: float, beside: float) -> None:
    """The axes' title, wrapped to the room beside the names (centred over the axes)."""
    ax.set_title(_text(_wrap(fig, text, width - 0.3 - beside, _font_size())))


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
    rows, measure, ci_label = _forest_rows(comparison_or_rows, measure)
    if not rows:
        raise TierankInputError("plot_forest: no systems to draw")
    rows = _by_expected(rows)
    n = len(rows)
    mname = measure or "measure"
    width = 7.2
    fig, axes = _figure(width, min(max(1.9 + 0.42 * n, 2.8), 16))
    ax = axes[0, 0]
    ys = np.arange(n)[::-1].astype(float)  # best on top
    oblivious = _draw_forest(ax, ys, rows)
    beside = _system_names(fig, ax, ys, rows, width)
    ax.set_xlabel(_text(f"mean {mname} over queries"))
    handles = _forest_handles(ci_label, oblivious)
    _, leg_h, _ = _legend_below(fig, [], lambda shown_: [], handles, ncols_first=2)
    fig.set_size_inches(width, fig.get_figheight() + leg_h * 0.5)
    _title_beside(
        fig,
        ax,
        title
        or f"{mname}: {n} system{'s' if n != 1 else ''} by expected mean, "
        "query-sample CI and tie range",
        width,
        beside,
    )
    return fig


#: Colours of plot_forest: the CI bar and E[M] dot, the tie range, the oblivious circle's edge.
_FOREST_COLORS = ("#1f5fa8", "#e08a1e", "#1f1f1f")


def _draw_forest(ax, ys: np.ndarray, rows: list[dict], off: float = 0.14) -> bool:
    """Per system at height ``ys``: the CI bar with its E[M] dot just above, the tie range with its
    oblivious circle just below (``off``); returns whether any system has an oblivious mean."""
    ci_color, tie_color, obl_color = _FOREST_COLORS
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
    _points(
        ax,
        ys + off,
        [r["expected"] for r in rows],
        "expected",
        marker="o",
        markersize=5.5,
        color=ci_color,
        zorder=5,
    )
    obl_x = [r["oblivious"] for r in rows]
    if all(np.isnan(obl_x)):
        return False
    _points(
        ax,
        ys - off,
        obl_x,
        "oblivious",
        marker="o",
        markersize=4.5,
        markerfacecolor="white",
        markeredgecolor=obl_color,
        markeredgewidth=1.1,
        zorder=4,
    )
    return True


def _forest_handles(ci_label: str, oblivious: bool) -> list:
    """The legend entries of plot_forest (the oblivious circle only where it is drawn)."""
    from matplotlib.lines import Line2D

    ci_color, tie_color, obl_color = _FOREST_COLORS
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
    if oblivious:
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
    return handles
