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

The figures live in one module each ([`cutoff`][tierank.report.plots.cutoff], [`comparison`][tierank.report.plots.comparison] for the ranges
and the forest plot, [`sweep`][tierank.report.plots.sweep], [`ties`][tierank.report.plots.ties]) over the shared
[`style`][tierank.report.plots.style] (colours, matplotlib settings, the Agg figure), [`layout`][tierank.report.plots.layout]
(measured text and legends) and [`output`][tierank.report.plots.output] (bytes and files); every public name is
importable from here.
"""

from __future__ import annotations

from ...analysis.cutoff import CurveSeries, CutoffCurves, cutoff_curves  # noqa: F401  (the data; drawn here)
from ...analysis.tie_curves import tie_ccdf, tie_group_sizes, tie_structure  # noqa: F401  (the data; drawn here)
from .comparison import plot_forest, plot_ranges
from .cutoff import plot_cutoff
from .output import figure_bytes, save_figure
from .style import DPI, LINESTYLES, PALETTE, MissingMatplotlib, _figure  # noqa: F401  (and the writers' tests)
from .sweep import plot_sweep
from .ties import plot_tie_structure

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
    "plot_forest",
]
