"""Figures and self-contained HTML reports of tie-aware evaluations.

[`plots`][tierank.report.plots] draws matplotlib figures (cutoff curves, system ranges,
precision sweeps, tie structure) and saves them atomically; [`page`][tierank.report.page] is
the kit of one-file HTML pages (tables, embedded figures, sections) and
[`html`][tierank.report.html] builds the reports of tierank's results with it;
`terminal` lays out the command line's tables.  The numbers come from
[`tierank.analysis`][tierank.analysis] (e.g. the cutoff curves from
[`tierank.analysis.cutoff`][tierank.analysis.cutoff], re-exported here); nothing here evaluates.
matplotlib is imported only when a figure is drawn (``pip install
"tierank[report]"``), so importing this package, like ``import tierank``, does not
need it.

Typical use::

    import tierank
    from tierank.analysis.precision import requantize_run
    from tierank.report import cutoff_curves, plot_cutoff, save_figure

    run = tierank.read_run("test.bm25.run")
    regimes = {f: requantize_run(run, f) for f in ("fp32", "bf16", "fp8_e4m3")}
    curves = cutoff_curves("test.qrels", regimes, "nDCG", kmax=20)
    save_figure(plot_cutoff(curves), "ndcg-cutoff")   # ndcg-cutoff.png, ndcg-cutoff.svg
"""

from __future__ import annotations

import importlib

#: where each public name lives; imported on first use, so that ``tierank.report.formats`` (the output
#: formats, needed by every command) does not load the HTML and plotting modules
_HOMES = {
    **dict.fromkeys(("CurveSeries", "CutoffCurves", "cutoff_curves"), "tierank.analysis.cutoff"),
    **dict.fromkeys(("tie_ccdf", "tie_group_sizes"), "tierank.analysis.tie_curves"),
    **dict.fromkeys(
        ("compare_report", "eval_report", "rerank_report", "sweep_report", "write_report"), ".html"
    ),
    **dict.fromkeys(("FigureBlock", "Section", "Table", "render_report"), ".page"),
    **dict.fromkeys(
        (
            "MissingMatplotlib",
            "figure_bytes",
            "plot_cutoff",
            "plot_forest",
            "plot_ranges",
            "plot_sweep",
            "plot_tie_structure",
            "save_figure",
        ),
        ".plots",
    ),
}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


#: every name of `_HOMES`, and the output formats' module
__all__ = [*_HOMES, "formats"]
