"""The cutoff figure: a measure family at cutoffs k = 1..kmax, one curve per run."""

from __future__ import annotations

from ...analysis.cutoff import CutoffCurves
from .layout import _font_size, _legend_below, _wrap
from .style import LINESTYLES, PALETTE, _figure, _pct, _points, _run_handles, _styled, _text


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
    from matplotlib.ticker import MaxNLocator

    width, height = 7.2, 5.0
    fig, axes = _figure(width, height)
    ax = axes[0, 0]
    ks = curves.ks
    look = _draw_curves(ax, curves)
    # below the axes: runs in the first row(s), what the marks mean from a new row; as many columns as fit,
    # names shortened in the middle only where one column is too narrow; the canvas grows with the rows
    _, leg_h, rows = _legend_below(
        fig,
        list(look),
        lambda shown: _run_handles(shown, look, linewidth=1.8),
        _mark_entries(curves.settings.get("tie_break", "trec_eval")),
        ncols_first=3 if len(look) <= 3 else 4,
        columnspacing=1.6,
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


def _draw_curves(ax, curves: CutoffCurves) -> dict[str, tuple]:
    """Per run its [min, max] band, expected line and oblivious markers; returns each run's
    (colour, line style, its share of documents in ties as the legend says it), in the runs' order."""
    ks = curves.ks
    look = {}
    for i, (name, s) in enumerate(curves.series.items()):
        color, style = PALETTE[i % len(PALETTE)], LINESTYLES[i % len(LINESTYLES)]
        look[name] = (color, style, f"  ({_pct(s.ties.get('share', 0.0))} of docs tied)")
        band = ax.fill_between(ks, s.min, s.max, color=color, alpha=0.16, linewidth=0, zorder=1)
        band.set_gid(f"band:{name}")
        (line,) = ax.plot(ks, s.expected, color=color, linestyle=style, linewidth=1.8, zorder=3)
        line.set_gid(f"expected:{name}")
        _points(
            ax,
            ks,
            s.oblivious,
            f"oblivious:{name}",
            vertical=True,
            marker="x",
            markersize=5.5,
            markeredgewidth=1.3,
            color=color,
            zorder=4,
        )
    return look


def _mark_entries(tie_break: str) -> list:
    """The legend entries saying what the line, the markers and the band mean (in grey)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    grey = "#555555"
    return [
        Line2D([], [], color=grey, linewidth=1.8, label="expected over tie orderings"),
        Line2D(
            [],
            [],
            color=grey,
            linestyle="none",
            marker="x",
            markeredgewidth=1.3,
            label=_text(f"oblivious (tie-break {tie_break})"),
        ),
        Patch(facecolor=grey, alpha=0.25, linewidth=0, label="[min, max] over tie orderings"),
    ]
