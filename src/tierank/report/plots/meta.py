"""The forest plot of a meta-analysis over collections and the discriminative-power figure."""

from __future__ import annotations

import numpy as np

from ...errors import TierankInputError
from .style import PALETTE, _figure, _styled, _text


@_styled
def plot_meta_forest(pair, *, scale: str = "diff", level: float = 0.95, title: str | None = None):
    """Forest plot of one pair over collections (a `tierank.analysis.multi.PairMeta`): each
    collection's effect with its normal CI (square sized by its random-effects weight), then the
    fixed-effect and the two random-effects estimates (diamonds), and 0 as a dashed line.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from scipy.stats import norm

    if not pair.meta:
        raise TierankInputError(
            f"forest plot: no meta-analysis for {pair.a} vs {pair.b}: {pair.reason}"
        )
    if scale not in pair.meta:
        raise TierankInputError(
            f"forest plot: scale must be one of {', '.join(pair.meta)}, got {scale!r}"
        )
    z = float(norm.isf((1 - level) / 2))
    eff = np.array([e.diff if scale == "diff" else e.dz for e in pair.effects])
    var = np.array([e.var_diff if scale == "diff" else e.var_dz for e in pair.effects])
    dl, pm = pair.meta[scale]["dl"], pair.meta[scale]["pm"]
    k = len(eff)
    rows = k + 3
    fig, axes = _figure(7.2, 0.9 + 0.32 * rows)
    ax = axes[0, 0]
    y = np.arange(rows)[::-1]
    w = np.asarray(dl.random.weights)
    half = z * np.sqrt(var)
    ax.errorbar(eff, y[:k], xerr=half, fmt="none", ecolor=PALETTE[0], elinewidth=1.2, capsize=2)
    ax.scatter(eff, y[:k], s=30 + 220 * w / w.max(), marker="s", color=PALETTE[0], zorder=3)
    pooled = [("fixed effect", dl.fixed), ("random (DL)", dl.random), ("random (PM)", pm.random)]
    for (_, r), yy, color in zip(pooled, y[k:], PALETTE[1:4]):
        ax.fill(
            [r.ci_low, r.effect, r.ci_high, r.effect],
            [yy, yy + 0.3, yy, yy - 0.3],
            color=color,
            zorder=3,
        )
    ax.axvline(0.0, color="0.4", linestyle="--", linewidth=0.8)
    labels = [
        f"{_text(e.collection)} (n={e.n:,})" + (" *" if e.var_tie > 0 else "") for e in pair.effects
    ] + [lab for lab, _ in pooled]
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.8, rows - 0.2)
    what = "mean difference" if scale == "diff" else "d_z"
    ax.set_xlabel(f"{what} ({_text(pair.a)} - {_text(pair.b)}), {100 * level:g}% CI")
    ax.set_title(
        _text(title)
        if title
        else f"{_text(pair.a)} vs {_text(pair.b)}: I²={100 * dl.i2:.0f}%, τ²={dl.tau2:.2g} (DL)"
    )
    if any(e.var_tie > 0 for e in pair.effects):
        fig.text(
            0.01, 0.005, "* tie variance included in the CI", fontsize=8, ha="left", va="bottom"
        )
    return fig


@_styled
def plot_discrimination(results, *, title: str | None = None):
    """Bars of discriminative power per measure (one bar per kind of per-topic values), from
    `tierank.analysis.discrimination.Discrimination` results.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not results:
        raise TierankInputError("discrimination plot: no results")
    measures = list(dict.fromkeys(r.measure for r in results))
    kinds = list(dict.fromkeys(r.values for r in results))
    fig, axes = _figure(max(4.0, 1.2 + 1.1 * len(measures) * len(kinds)), 3.6)
    ax = axes[0, 0]
    width = 0.8 / len(kinds)
    for j, kind in enumerate(kinds):
        vals = [
            next((100 * r.power for r in results if r.measure == m and r.values == kind), np.nan)
            for m in measures
        ]
        x = np.arange(len(measures)) + (j - (len(kinds) - 1) / 2) * width
        bars = ax.bar(x, vals, width, color=PALETTE[j % len(PALETTE)], label=kind)
        ax.bar_label(bars, labels=[f"{v:.0f}%" for v in vals], fontsize=8)
    ax.set_xticks(np.arange(len(measures)), [_text(m) for m in measures])
    ax.set_ylim(0, 105)
    ax.set_ylabel("pairs separated (%)")
    first = results[0]
    ax.set_title(
        _text(title)
        if title
        else f"discriminative power ({first.method}, alpha {first.alpha:g}, {first.samples:,} samples)"
    )
    if len(kinds) > 1:
        ax.legend(frameon=False, fontsize=8)
    return fig


__all__ = ["plot_discrimination", "plot_meta_forest"]
