"""Figures lay themselves out for any number of runs and any name length: nothing is ever cut.

Every figure kind (the forest plot of issue 24 too) is drawn for 1, 3 and 12 runs, with short names and with 80-character ones
(alike at both ends, as `tierank sweep --write-runs` and real systems name them), and:

* every artist lies inside the canvas (matplotlib's tight bounding box, and each text's extent);
* constrained layout did its work (no warning that it gave up) and left the axes room for the data;
* tick labels do not overlap one another;
* names shortened in the middle stay distinct, and the reports keep the full names in their tables.

The cases of issue 27 (one run named ``askubuntu-test.bm25.bf16.run``, three named like
``askubuntu-test.bm25.band1.4.run``, a 60-character name in the tie-structure figure) fail on the
layout that preceded this test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.analysis.compare import compare  # noqa: E402
from tierank.analysis.sweep import sweep  # noqa: E402
from tierank.report import (  # noqa: E402
    compare_report,
    cutoff_curves,
    eval_report,
    plot_cutoff,
    plot_forest,
    plot_ranges,
    plot_sweep,
    plot_tie_structure,
    rerank_report,
    sweep_report,
)
from tierank.report.labels import ELLIPSIS  # noqa: E402

COUNTS = (1, 3, 12)
LONG = 80
#: what the three cases of issue 27 look like
ISSUE_CASES = {
    "cutoff-one-run": ["askubuntu-test.bm25.bf16.run"],
    "cutoff-three-runs": [f"askubuntu-test.bm25.band{b}.run" for b in ("1.4", "2.0", "4.0")],
    "ties-60-chars": ["bm25-rm3-bf16-reranked-by-minilm-final-v2-with-extra-setting"],
}


def run_names(n: int, long: bool) -> list[str]:
    """``n`` distinct names: short ones, or 80 characters alike at both ends and different in the middle."""
    if not long:
        return [f"run{i}" for i in range(n)]
    names = []
    for i in range(n):
        middle = f"-variant{i:02d}-"
        head = "askubuntu-test.bm25-rm3-reranked-by-minilm-l6"
        tail = "-bf16.final.run"
        names.append((head + middle).ljust(LONG - len(tail), "x") + tail)
    assert all(len(s) == LONG for s in names) and len(set(names)) == n
    return names


QRELS = {f"q{q}": {f"d{d}": int(d % 3 == q % 3) + int(d == q) for d in range(8)} for q in range(5)}


def synthetic_runs(names) -> dict:
    """Small runs with real ties (scores on a coarse grid), one per name, all different."""
    rng = np.random.default_rng(7)
    return {
        name: {
            q: {f"d{d}": float(np.round(rng.random() * (2 + i % 4)) / 2) for d in range(8)}
            for q in QRELS
        }
        for i, name in enumerate(names)
    }


def range_rows(names) -> list[dict]:
    rng = np.random.default_rng(3)
    rows = []
    for name in names:
        lo = rng.random() * 0.5
        hi = lo + rng.random() * 0.3
        rows.append(
            {
                "name": name,
                "min": lo,
                "max": hi,
                "oblivious": (lo + hi) / 2,
                "expected": lo + (hi - lo) / 3,
            }
        )
    return rows


def forest_rows(names) -> list[dict]:
    """Systems with a CI over queries around the expected mean (wider than the tie range, as usual)."""
    rows = range_rows(names)
    for i, r in enumerate(rows):
        half = 0.05 + 0.02 * (i % 5)
        rows[i] = {
            **r,
            "ci_low": r["expected"] - half,
            "ci_high": r["expected"] + half,
            "ci_method": "t",
        }
    return rows


def sweep_rows(names) -> list[dict]:
    """A sweep's rows with the names as its formats (the longest a format name could be)."""
    rows = []
    for i, r in enumerate(range_rows(names)):
        rows.append(
            {
                "measure": "nDCG@10",
                "format": r["name"],
                "min": r["min"],
                "max": r["max"],
                "oblivious": r["oblivious"],
                "expected": r["expected"],
                "range": r["max"] - r["min"],
                "bias": r["oblivious"] - r["expected"],
                "tie_share": 0.1 * (i % 10),
            }
        )
    return rows


KINDS = {
    "cutoff": lambda names: plot_cutoff(
        cutoff_curves(QRELS, synthetic_runs(names), "nDCG", kmax=5)
    ),
    "ranges": lambda names: plot_ranges(range_rows(names), "nDCG@10"),
    "sweep": lambda names: plot_sweep(sweep_rows(names), "nDCG@10"),
    "ties": lambda names: plot_tie_structure(synthetic_runs(names)),
    "forest": lambda names: plot_forest(forest_rows(names), "nDCG@10"),
}


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def assert_fits(fig, what: str) -> None:
    """Everything of ``fig`` is inside its canvas, the axes have room, tick labels do not collide."""
    from matplotlib.text import Text

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "constrained_layout not applied ..." means it gave up
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.get_size_inches()
    tol = 0.01  # inches
    tight = fig.get_tightbbox(renderer)
    assert (
        tight.x0 >= -tol
        and tight.y0 >= -tol
        and tight.x1 <= width + tol
        and tight.y1 <= height + tol
    ), f"{what}: the artists span {tight.bounds} (inches), the canvas is {width:g} x {height:g}"
    canvas = fig.bbox
    px = tol * fig.dpi

    def inside(t):
        e = t.get_window_extent(renderer)
        assert (
            e.x0 >= canvas.x0 - px
            and e.y0 >= canvas.y0 - px
            and e.x1 <= canvas.x1 + px
            and e.y1 <= canvas.y1 + px
        ), f"{what}: text {t.get_text()!r} is cut ({e.bounds} in {canvas.bounds})"

    ticks = {
        id(t)
        for ax in fig.axes
        for axis in (ax.xaxis, ax.yaxis)
        for tick in (*axis.get_major_ticks(), *axis.get_minor_ticks())
        for t in (tick.label1, tick.label2)
    }
    texts = [
        t
        for t in fig.findobj(Text)
        if id(t) not in ticks and t.get_visible() and t.get_text().strip()
    ]
    for t in texts:  # titles, axis labels, legend entries, bar labels
        inside(t)
    # a legend covers no other text (titles, axis labels, tick labels)
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    own = {id(t) for leg in legends for t in leg.findobj(Text)}
    others = [t for t in texts if id(t) not in own]
    others += [
        t for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for t in _drawn_ticklabels(axis)
    ]
    for ax in fig.axes:  # a legend placed in the axes stays in them
        leg = ax.get_legend()
        if leg is not None and leg.get_bbox_to_anchor().bounds == ax.bbox.bounds:
            box, frame = leg.get_window_extent(renderer), ax.bbox
            assert (
                box.x0 >= frame.x0 - 1
                and box.x1 <= frame.x1 + 1
                and box.y0 >= frame.y0 - 1
                and box.y1 <= frame.y1 + 1
            ), f"{what}: the legend leaves its axes"
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for t in others:
            assert not _overlap(box, t.get_window_extent(renderer)), (
                f"{what}: the legend covers {t.get_text()!r}"
            )
    for ax in fig.axes:
        box = ax.get_position()
        assert box.width * width >= 2.0 and box.height * height >= 0.8, (
            f"{what}: the axes were squeezed to {box.width * width:.2f} x {box.height * height:.2f} inches"
        )
        for axis in (ax.xaxis, ax.yaxis):
            shown = _drawn_ticklabels(axis)
            for t in shown:
                inside(t)
            # (tilted labels are parallel strips whose upright boxes overlap although the texts do not)
            extents = [t.get_window_extent(renderer) for t in shown if t.get_rotation() % 90 == 0]
            for a, b in zip(extents, extents[1:]):
                assert not _overlap(a, b), f"{what}: tick labels overlap"


def _drawn_ticklabels(axis) -> list:
    """The major tick labels matplotlib draws: with text, visible, at a tick inside the view."""
    lo, hi = sorted(axis.get_view_interval())
    span = (hi - lo) * 1e-9
    return [
        t
        for loc, t in zip(axis.get_ticklocs(), axis.get_ticklabels())
        if lo - span <= loc <= hi + span and t.get_visible() and t.get_text()
    ]


def _texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_visible()]


@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
@pytest.mark.parametrize("n", COUNTS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_figure_fits_its_canvas(kind, n, long):
    names = run_names(n, long)
    fig = KINDS[kind](names)
    assert_fits(fig, f"{kind}, {n} run(s), {'80-character' if long else 'short'} names")
    texts = "\n".join(_texts(fig))
    if not long:
        assert all(name in texts for name in names)  # short names are never shortened
    shown = [t for t in _texts(fig) if ELLIPSIS in t]
    assert len(set(shown)) == len(shown)  # shortened names stay distinct


@pytest.mark.parametrize("case", list(ISSUE_CASES))
def test_the_cases_of_issue_27_fit(case):
    names = ISSUE_CASES[case]
    fig = KINDS[case.split("-")[0]](names)
    assert_fits(fig, case)
    texts = "\n".join(_texts(fig))
    assert all(name in texts for name in names)  # these names have room: shown whole


def test_a_long_title_wraps_inside_the_canvas():
    title = "AskUbuntu BM25 " * 12 + "with a title far wider than the figure"
    names = run_names(3, False)
    curves = cutoff_curves(QRELS, synthetic_runs(names), "nDCG", kmax=5)
    for fig in (
        plot_cutoff(curves, title=title),
        plot_ranges(range_rows(names), "AP", title=title),
        plot_sweep(sweep_rows(names), "nDCG@10", title=title),
        plot_tie_structure(synthetic_runs(names), title=title),
        plot_forest(forest_rows(names), "nDCG@10", title=title),
    ):
        assert_fits(fig, "a long title")


def _report_figures(monkeypatch, build) -> tuple[list, str]:
    """The matplotlib figures a report builder embeds, and its page."""
    from tierank.report import page

    figures = []

    def keep(block):  # (no PNG encoding: the test draws each figure itself)
        figures.append(block.figure)
        return "<figure></figure>"

    monkeypatch.setattr(page, "_render_figure", keep)
    return figures, build()


@pytest.mark.parametrize("n", COUNTS)
def test_report_figures_fit_and_tables_keep_full_names(monkeypatch, n):
    names = run_names(n, True)
    runs = synthetic_runs(names)
    res = tierank.evaluate(QRELS, runs[names[0]], ["nDCG@3", "P@2"])
    rerank = {
        "settings": {"model": "m", "tie_break": "trec_eval"},
        "rows": [
            {
                "variant": r["name"],
                "measure": "RR@10",
                **{k: r[k] for k in ("min", "max", "oblivious", "expected")},
            }
            for r in range_rows(names)
        ],
    }
    builds = {
        "compare": lambda: compare_report(compare(runs, QRELS, "nDCG@3")),
        "eval": lambda: eval_report(res, cutoff_curves(QRELS, runs, "nDCG", kmax=5)),
        "rerank": lambda: rerank_report(rerank),
        "sweep": lambda: sweep_report(
            sweep(QRELS, runs[names[0]], ["nDCG@3"], ["fp32", "bf16", "fp8_e4m3"])
        ),
    }
    for what, build in builds.items():
        if what == "compare" and n == 1:
            continue  # a comparison needs two systems
        figures, html = _report_figures(monkeypatch, build)
        assert figures, what
        if what == "compare":  # the ranges figure and the forest plot
            assert len(figures) == 2
        for fig in figures:
            assert_fits(fig, f"report {what}, {n} run(s)")
        for name in names if what != "sweep" else ():
            assert f"<td>{name}</td>" in html, (
                f"report {what}: the table lacks the full name {name!r}"
            )
