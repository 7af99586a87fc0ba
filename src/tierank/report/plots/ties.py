"""The tie structure figure: how large the tie groups of each run are."""

from __future__ import annotations

from collections.abc import Mapping

from ...analysis.tie_curves import tie_structure
from ...errors import TierankInputError
from .layout import _font_size, _legend_below, _wrap
from .style import LINESTYLES, PALETTE, _figure, _pct, _run_handles, _styled, _text


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
    if not isinstance(runs, Mapping) or not runs:
        raise TierankInputError(
            "plot_tie_structure: give the runs as a non-empty mapping name -> run"
        )
    width, axes_height = 7.2, 4.0
    fig, axes = _figure(width, axes_height)
    ax = axes[0, 0]
    facts, largest, any_ties = _draw_tie_curves(ax, runs)
    # under the axes (a legend inside them covers the curves, and long names push it off the canvas)
    _, leg_h, _ = _legend_below(
        fig,
        list(facts),
        lambda shown: _tie_entries(shown, facts),
        ncols_first=2 if len(facts) > 1 else 1,
    )
    fig.set_size_inches(width, axes_height + leg_h + 0.1)
    _tie_axes(ax, largest, any_ties)
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


def _draw_tie_curves(ax, runs: Mapping) -> tuple[dict[str, tuple], int, bool]:
    """Per run its step curve of the number of tie groups of size >= s (an empty line for a run without
    ties); returns each run's (colour, line style, legend facts), the largest group (at least 2) and
    whether any run has ties."""
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
    return facts, largest, any_ties


def _tie_entries(shown: list[str], facts: dict[str, tuple]) -> list:
    """The legend entry of each run (under its ``shown`` name) with its facts, marked where it has ties."""
    handles = _run_handles(shown, facts, linewidth=1.6, markersize=3.5)
    for handle, (_, _, fact) in zip(handles, facts.values()):
        if fact != ": no ties":
            handle.set_marker("o")
    return handles


def _tie_axes(ax, largest: int, any_ties: bool) -> None:
    """Log counts; group sizes on integer ticks up to ``largest``, or a log axis beyond 40."""
    from matplotlib.ticker import MaxNLocator

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
