"""Figures of a comparison: every system's tie range ([`plot_ranges`][tierank.report.plots.plot_ranges]) and the forest plot of
the query sample's uncertainty beside the ties' ([`plot_forest`][tierank.report.plots.plot_forest])."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ...errors import TierankInputError
from .layout import _fit_names, _font_size, _legend_below, _text_width, _wrap
from .style import _figure, _styled, _text


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
