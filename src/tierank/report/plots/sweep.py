"""The precision sweep figure: what each number format does to a measure and to the ties."""

from __future__ import annotations

import numpy as np

from ...errors import TierankInputError
from .layout import _fit_names, _font_size, _text_width, _wrap
from .style import _figure, _nan, _pct, _range_glyphs, _range_handles, _short, _styled, _text


def _canonical(measure: str) -> str:
    from ...measures import parse_measure

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
    _value_panel(ax_v, x, fmts, rows, name)
    _range_bias_panels(ax_r, ax_b, x, fmts, rows)
    _tie_share_panel(ax_t, x, fmts, rows)
    _format_axis(fig, ax_t, x, fmts)
    for ax in (ax_v, ax_r, ax_b, ax_t):
        ax.grid(axis="x", visible=False)
    fig.suptitle(
        _text(_wrap(fig, title or f"{name} across score formats", fig.get_figwidth() - 0.3, 11)),
        fontsize=11,
    )
    return fig


def _value_panel(ax, x: np.ndarray, fmts: list[str], rows: list[dict], name: str) -> None:
    """Panel 1: per format the [min, max] segment, the oblivious circle and the expected triangle."""
    _range_glyphs(ax, x, rows, [f"minmax:{f}" for f in fmts], vertical=True)
    ax.set_ylabel(_text(f"mean {name}"))
    ax.legend(
        handles=_range_handles("[min, max]"),
        ncols=3,
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        frameon=False,
        borderaxespad=0.2,
    )


def _range_bias_panels(ax_r, ax_b, x: np.ndarray, fmts: list[str], rows: list[dict]) -> None:
    """Panels 2 and 3: range (max - min) and bias (oblivious - expected) as labelled bars."""
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


def _tie_share_panel(ax, x: np.ndarray, fmts: list[str], rows: list[dict]) -> None:
    """Panel 4: the share of documents in ties, labelled bars in percent."""
    share = [100 * _nan(r.get("tie_share")) for r in rows]
    bars_t = ax.bar(x, share, width=0.6, color="#8c8c8c")
    for f, p in zip(fmts, bars_t.patches):
        p.set_gid(f"tie_share:{f}")
    ax.bar_label(
        bars_t,
        labels=[_pct(s / 100) if not np.isnan(s) else "-" for s in share],
        fontsize=8,
        padding=2,
    )
    ax.set_ylabel("docs in ties (%)")
    ax.set_ylim(0, max(max((s for s in share if not np.isnan(s)), default=0) * 1.25, 1))


def _format_axis(fig, ax, x: np.ndarray, fmts: list[str]) -> None:
    """The formats' names under the bottom panel: level where they fit their slot, else tilted (and the
    canvas widened where the first tilted name would reach left of it); long names shortened in the middle."""
    size = _font_size("xtick.labelsize")
    slot = (fig.get_figwidth() - 1.4) / len(fmts)  # the room of one format under its bar
    tilt = len(fmts) > 6 or max(_text_width(fig, f, size) for f in fmts) > 0.9 * slot
    shown = _fit_names(
        fig, fmts, 1.8 if tilt else 0.9 * slot, size
    )  # long names shortened in the middle
    if tilt:  # the first tilted name reaches left of the axes: widen the canvas by that much
        reach = 0.87 * _text_width(fig, shown[0], size) - 0.5 * slot - 0.6
        if reach > 0:
            fig.set_size_inches(fig.get_figwidth() + reach, fig.get_figheight())
    ax.set_xticks(
        x, [_text(f) for f in shown], rotation=30 if tilt else 0, ha="right" if tilt else "center"
    )
    ax.set_xlabel("score format")
