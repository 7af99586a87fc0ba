"""HTML reports of tierank's results, built with the page kit of [`tierank.report.page`][tierank.report.page].

Builders:

* [`eval_report`][tierank.report.html.eval_report]: an [`EvalResult`][tierank.EvalResult] (aggregate table and
  figure, tie summary, the most tie-affected queries, optional cutoff curves);
* [`sweep_report`][tierank.report.html.sweep_report]: a precision [`Sweep`][tierank.analysis.sweep.Sweep];
* [`compare_report`][tierank.report.html.compare_report]: a [`Comparison`][tierank.analysis.compare.Comparison];
* [`rerank_report`][tierank.report.html.rerank_report]: the rerank protocol's Table 1 (the ``table.json``
  that ``tierank rerank -o DIR`` writes, or a
  [`ProtocolResult`][tierank.hps.record.ProtocolResult]).

Each returns one self-contained page (a string); [`write_report`][tierank.report.html.write_report] writes a page
atomically.  The kit ([`Table`][tierank.report.html.Table], [`FigureBlock`][tierank.report.html.FigureBlock], [`Section`][tierank.report.html.Section],
[`render_report`][tierank.report.html.render_report], [`format_value`][tierank.report.html.format_value]) is re-exported here; see
[`tierank.report.page`][tierank.report.page] for its use.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..results import COLUMNS, COLUMNS_BUT_STD
from . import table1
from .page import CSS, FigureBlock, Section, Table, format_value, render_report  # noqa: F401  (re-exported)
from .page import p_value as _p_value
from .page import percent as _pct

#: Rows of the per-query table in `eval_report` by default.
PER_QUERY_ROWS = 20


def write_report(path: str | os.PathLike, html: str, *, protect: tuple = ()) -> Path | None:
    """Write ``html`` (UTF-8) to ``path`` with [`tierank.io.writers.write_atomic`][tierank.io.writers.write_atomic] (atomic; refuses
    the inputs in ``protect``, special files and unwritable folders; ``"-"`` is stdout).  Returns the path."""
    from ..io.writers import write_atomic

    return write_atomic(path, html, protect=protect)


# builders

_EXPLAIN = (
    "oblivious: the value under the tie-break {tb}; expected: the exact mean over all orderings of tied "
    "documents; min / max: the pessimal and optimal tie orderings; range = max - min; "
    "bias = oblivious - expected; std: standard deviation over tie orderings (of the mean, in aggregates)."
)


def _tie_table(ties: Mapping, caption: str | None = None) -> Table:
    cols = ("docs", "queries", "queries_with_ties", "groups", "tied_docs", "largest", "share")
    return Table(
        [dict(ties)],
        columns=cols,
        caption=caption,
        labels={
            "queries_with_ties": "queries with ties",
            "groups": "tie groups",
            "tied_docs": "tied docs",
            "largest": "largest group",
            "share": "share of docs tied",
        },
        formats={"share": _pct},
    )


def _eval_aggregate(result, tb: str, cols: list) -> Section:
    """The aggregate section of an eval report: the means table with a ranges figure."""
    from .plots import plot_ranges

    agg = result.records(per_query=False)
    return Section(
        "Aggregate",
        paragraphs=[f"Means over {len(result.qids)} queries. " + _EXPLAIN.format(tb=repr(tb))],
        figures=[
            FigureBlock(
                plot_ranges(
                    [{**r, "name": r["measure"]} for r in agg],
                    xlabel="mean over queries",
                    title="Tie-aware range of every measure",
                ),
                caption="Each measure from its pessimal to its optimal tie ordering (segment), "
                "oblivious value (circle) and expected value (triangle).",
            )
        ]
        if agg and all(r["min"] is not None and r["max"] is not None for r in agg)
        else [],
        tables=[Table(agg, columns=["measure", *cols])],
    )


def _eval_ties(result) -> Section:
    """The tie summary section of an eval report."""
    ties = result.ties
    share = ties.get("share", 0.0)
    return Section(
        "Ties",
        paragraphs=[
            f"{ties.get('tied_docs', 0):,} of {ties.get('docs', 0):,} documents ({_pct(share)}) share their "
            f"score with another document of the same query, in {ties.get('groups', 0):,} tie groups "
            f"across {ties.get('queries_with_ties', 0):,} of {ties.get('queries', 0):,} queries; the "
            f"largest group has {ties.get('largest', 0):,} documents."
        ],
        tables=[_tie_table(ties)],
    )


def _eval_curves(curves) -> Section:
    """The cutoff section of an eval report: the figure, its numbers in a collapsed table."""
    from .plots import plot_cutoff

    return Section(
        f"{curves.family}@k for k = 1..{int(curves.ks[-1])}",
        figures=[
            FigureBlock(
                plot_cutoff(curves),
                caption="Line: expected value; x: oblivious value; shaded: [min, max] over tie "
                "orderings. Means over queries.",
            )
        ],
        tables=[
            Table(
                curves.records(),
                columns=["run", "k", *COLUMNS],
                caption="the numbers behind the figure",
                collapsed=True,
            )
        ],
    )


def _eval_per_query(result, per_query: int, cols: list) -> Section:
    """The ``per_query`` (query, measure) rows of an eval report with the widest range."""
    rows = [r for r in result.records(per_query=True) if r["query"] != "all"]
    rows.sort(key=lambda r: -(r["range"] if r["range"] is not None else -1.0))
    return Section(
        "Most tie-affected queries",
        paragraphs=[
            f"The (query, measure) pairs with the widest range over tie orderings, widest first "
            f"({min(per_query, len(rows))} of {len(rows)})."
        ],
        tables=[
            Table(
                rows,
                columns=["query", "measure", *cols],
                max_rows=int(per_query),
            )
        ],
    )


def eval_report(
    result, curves=None, *, per_query: int | None = PER_QUERY_ROWS, title: str | None = None
) -> str:
    """HTML report of an [`EvalResult`][tierank.EvalResult].

    Sections: the aggregate table with a ranges figure (one segment per measure),
    the tie summary, the ``per_query`` (query, measure) rows with the widest
    range (``None`` or 0 leaves the table out), and, with ``curves``, the cutoff
    figure with its numbers in a collapsed table.

    Parameters
    ----------
    result : EvalResult
    curves : CutoffCurves, optional
        From [`cutoff_curves`][tierank.analysis.cutoff.cutoff_curves] or [`evaluate_with_curves`][tierank.analysis.cutoff.evaluate_with_curves].
    per_query : int or None
    title : str, optional

    Returns
    -------
    str
    """
    st = result.settings
    tb = st.get("tie_break", "trec_eval")
    cols = list(result.columns)
    sections = [_eval_aggregate(result, tb, cols), _eval_ties(result)]
    if curves is not None:
        sections.append(_eval_curves(curves))
    if per_query:
        sections.append(_eval_per_query(result, per_query, cols))
    sub = f"run {st.get('run', '?')} · qrels {st.get('qrels', '?')} · tie-break {tb}"
    extras = [f"{k}={st[k]}" for k in ("rel", "complete", "candidates_only", "unjudged") if k in st]
    if extras:
        sub += " · " + ", ".join(extras)
    return render_report(title or "tierank evaluation report", sections, subtitle=sub)


def sweep_report(sweep, measures: Sequence[str] | None = None, *, title: str | None = None) -> str:
    """HTML report of a precision [`Sweep`][tierank.analysis.sweep.Sweep].

    A tie table (one row per format) and, per measure, the sweep figure and its table.

    Parameters
    ----------
    sweep : Sweep
    measures : sequence of str, optional
        Default: every measure of the sweep, in its order.
    title : str, optional
    """
    from .plots import plot_sweep
    from .plots.sweep import _canonical

    rows = sweep.rows
    have = list(dict.fromkeys(r["measure"] for r in rows))
    if measures is None:
        measures = have
    else:
        measures = [m if m in have else _canonical(m) for m in measures]
    st = getattr(sweep, "settings", {})
    fmts = list(dict.fromkeys(r["format"] for r in rows))
    ties_rows = []
    for f in fmts:
        r = next(r for r in rows if r["format"] == f)
        ties_rows.append(
            {
                "format": f,
                **{
                    k: r.get(k)
                    for k in ("tie_share", "tie_groups", "largest_group", "queries_with_ties")
                },
            }
        )
    sections = [
        Section(
            "Ties per format",
            paragraphs=[
                "The run's scores re-expressed in each number format, and the ties that creates."
            ],
            tables=[
                Table(
                    ties_rows,
                    labels={
                        "tie_share": "share of docs tied",
                        "tie_groups": "tie groups",
                        "largest_group": "largest group",
                        "queries_with_ties": "queries with ties",
                    },
                    formats={"tie_share": _pct},
                )
            ],
        )
    ]
    cols = ["format", *COLUMNS]
    for m in measures:
        mrows = [r for r in rows if r["measure"] == m]
        sections.append(
            Section(
                str(m),
                paragraphs=[_EXPLAIN.format(tb=repr(st.get("tie_break", "trec_eval")))],
                figures=[
                    FigureBlock(
                        plot_sweep(sweep, m),
                        caption=f"{m} per score format: value with [min, max], range and bias, "
                        "share of documents in ties.",
                    )
                ],
                tables=[Table(mrows, columns=cols)],
            )
        )
    sub = f"run {st.get('run', '?')} · qrels {st.get('qrels', '?')} · tie-break {st.get('tie_break', 'trec_eval')}"
    return render_report(title or "tierank precision sweep", sections, subtitle=sub)


_FOREST_CAPTION = (
    "Forest plot, systems sorted by expected mean: the confidence interval of each system's mean "
    "expected value over the query sample (bar, dot at the mean) and, just under it, its range "
    "[min, max] over tie orderings with the oblivious mean (circle). The CI is what another sample "
    "of queries could do; the tie range is what the ties alone could do."
)


def _compare_systems(c, tb: str) -> Section:
    """The systems section of a compare report: the ranges figure, the forest plot and the systems table."""
    from .plots import plot_forest, plot_ranges

    sys_cols = ["name", *COLUMNS]
    sys_rows = [{k: getattr(s, k) for k in sys_cols} for s in c.systems]
    if c.banded_systems is not None:
        for r, b in zip(sys_rows, c.banded_systems):
            r["expected_banded"] = b.expected
        sys_cols.append("expected_banded")
    return Section(
        "Systems",
        paragraphs=[
            {"sum": "Sums", "geometric_mean": "Geometric means"}.get(
                c.inference.get("aggregator", "mean"), "Means"
            )
            + f" of {c.measure} over the {len(c.queries)} queries common to all systems"
            + (f" ({c.dropped_queries} others left out). " if c.dropped_queries else ". ")
            + _EXPLAIN.format(tb=repr(tb)),
            f"Kendall's tau between the system orders by oblivious and by expected mean: "
            f"{format_value(c.kendall_tau)}; by min and by max mean: {format_value(c.kendall_tau_min_max)}.",
        ],
        figures=[
            FigureBlock(
                plot_ranges(c),
                caption="Each system from its pessimal to its optimal tie ordering "
                "(segment), oblivious (circle) and expected (triangle) mean; "
                "overlapping segments cannot be ordered from these scores.",
            )
        ]
        + (
            [FigureBlock(plot_forest(c), caption=_FOREST_CAPTION)]
            if all(s.ci_low is not None and s.ci_high is not None for s in c.systems)
            else []
        ),
        tables=[
            Table(
                sys_rows,
                columns=sys_cols,
                labels={
                    "name": "system",
                    "expected_banded": f"expected band{c.band:g}" if c.band is not None else "",
                },
            )
        ],
    )


def _compare_pairs(c) -> Section:
    """The pairs section of a compare report: the pairs table, flags as words, flagged pairs highlighted."""
    # the chosen test's statistic under its own header: t or W; none for the sampled tests (theirs is Δ expected)
    from ..analysis.paired import REGISTRY

    test = REGISTRY.get(c.settings.get("test", "t"), REGISTRY["t"])
    stat = test.statistic
    pair_cols = [
        "a",
        "b",
        "diff_expected",
        "diff_oblivious",
        *(("statistic",) if stat else ()),
        "p",
        "p_oblivious",
    ]
    if c.band is not None:
        pair_cols.append("p_banded")
    pair_cols.append("flags")
    pair_rows, classes = [], []
    for p in c.pairs:
        pair_rows.append(
            {
                **{
                    k: (p.t if stat == "t" else p.statistic) if k == "statistic" else getattr(p, k)
                    for k in pair_cols
                    if k != "flags"
                },
                "flags": ", ".join(p.flags),
            }
        )
        classes.append("flag" if (p.order_flip or p.undecidable) else None)
    nflip = sum(p.order_flip for p in c.pairs)
    nund = sum(p.undecidable for p in c.pairs)
    return Section(
        "Pairs",
        paragraphs=[
            f"{len(c.pairs)} pairs, A ranked above B by expected mean: {nflip} flipped (the oblivious means "
            f"order them the other way round), {nund} undecidable (their [min, max] intervals overlap, so tie "
            f"orderings alone could reverse or level them). Two-sided paired {test.display} over queries on "
            f"expected values (p) and oblivious ones (p obl); significant: p < {c.alpha:g}. "
            "Highlighted: flipped or undecidable pairs."
            + (
                f" Tests and intervals on {c.inference.get('on')}."
                if c.inference.get("aggregator", "mean") != "mean"
                else ""
            )
            + (" Notes: " + "; ".join(c.notes) + "." if c.notes else "")
        ],
        tables=[
            Table(
                pair_rows,
                columns=pair_cols,
                row_classes=classes,
                labels={
                    "a": "A",
                    "b": "B",
                    "diff_expected": "Δ expected",
                    "diff_oblivious": "Δ oblivious",
                    "p_oblivious": "p obl",
                    "statistic": stat or "",
                    "p_banded": f"p band{c.band:g}" if c.band is not None else "",
                },
                formats={
                    "statistic": lambda v: "-" if v is None or math.isnan(v) else f"{v:.3f}",
                    "p": _p_value,
                    "p_oblivious": _p_value,
                    "p_banded": _p_value,
                },
            )
        ],
    )


def _compare_bands(c) -> Section:
    """The rank bands section of a compare report: the band summary."""
    bs = {k: v for k, v in c.band_summary.items() if not isinstance(v, (dict, list, tuple))}
    return Section(
        f"Rank bands (rho = {c.band:g})",
        paragraphs=[
            "Significance of the pairs before and after scoring every run into "
            "geometric rank bands (Yang, Moffat & Turpin, Figure 4)."
        ],
        tables=[
            Table(
                [bs],
                labels={k: k.replace("pct_", "% ").replace("_", " ") for k in bs},
                formats={"rho": lambda v: f"{v:g}", "alpha": lambda v: f"{v:g}"},
            )
        ],
    )


def compare_report(comparison, *, title: str | None = None) -> str:
    """HTML report of a [`Comparison`][tierank.analysis.compare.Comparison].

    The ranges figure (one segment per system), the forest plot (each system's CI over queries beside its
    tie range, [`plot_forest`][tierank.report.plots.plot_forest]), the systems table, the pairs table
    (flags as words, flagged pairs highlighted) and, with a band, the band summary.
    """
    c = comparison
    tb = c.settings.get("tie_break", "trec_eval")
    sections = [_compare_systems(c, tb), _compare_pairs(c)]
    if c.band_summary is not None:
        sections.append(_compare_bands(c))
    return render_report(
        title or f"tierank compare: {c.measure}",
        sections,
        subtitle=f"{len(c.systems)} systems · {len(c.queries)} queries · tie-break {tb}",
    )


__all__ = [
    "Table",
    "FigureBlock",
    "Section",
    "render_report",
    "write_report",
    "format_value",
    "eval_report",
    "sweep_report",
    "compare_report",
    "rerank_report",
    "check_rerank_table",
    "load_rerank_table",
    "PER_QUERY_ROWS",
    "CSS",
]


def _or_dash(spec: str):
    """A cell formatter: ``spec.format(v)``, ``-`` for a missing value (None).

    >>> _or_dash("{:+.3%}")(0.0125), _or_dash("{:,}")(None)
    ('+1.250%', '-')
    """
    return lambda v: "-" if v is None else spec.format(v)


#: what every row of a rerank table needs (`check_rerank_table`): text, and numbers
RERANK_TEXT, RERANK_NUMBERS = table1.TEXT, table1.NUMBERS
#: the columns a rerank row may have, numbers or null (NaN) where present
RERANK_OPTIONAL = table1.OPTIONAL


def _number(v, optional: bool) -> bool:
    """A finite int or float (an optional column may also be None, or NaN in memory: JSON's null)."""
    if v is None:
        return optional
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        x = float(v)
    except OverflowError:  # an int beyond float range
        return False
    return math.isfinite(x) or (optional and math.isnan(x))


def load_rerank_table(path) -> Mapping:
    """The checked rerank table of the ``table.json`` at ``path`` ([`check_rerank_table`][tierank.report.html.check_rerank_table]), read
    as strict JSON ([`tierank.io.strict_json.loads`][tierank.io.strict_json.loads]: no NaN or Infinity, no duplicated key, no
    number beyond float range), else [`TierankInputError`][tierank.errors.TierankInputError] in one line."""
    from ..errors import TierankInputError
    from ..io.strict_json import loads

    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise TierankInputError(f"{source}: cannot read ({exc.strerror or exc})") from None
    try:
        doc = loads(data, source)
    except TierankInputError as exc:
        reason = str(exc).removeprefix(f"{source}: ")
        raise TierankInputError(
            f"{source}: not a table.json of `tierank rerank`: {reason}"
        ) from None
    return check_rerank_table(doc, source)


def check_rerank_table(doc, source: str = "table.json") -> Mapping:
    """``doc`` if it is a rerank table (a mapping with ``settings`` and a list of ``rows``, each row a
    mapping with the keys [`rerank_report`][tierank.report.html.rerank_report] reads), else [`TierankInputError`][tierank.errors.TierankInputError]
    naming ``source`` and what is wrong.

    >>> check_rerank_table({"settings": {}, "rows": [{"variant": "fp32", "measure": "RR"}]}, "t.json")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: t.json: not a table.json of `tierank rerank`: row 1 has no 'oblivious', 'expected', 'min', 'max'
    """
    from ..errors import TierankInputError, shorten

    def refuse(reason: str):
        raise TierankInputError(f"{source}: not a table.json of `tierank rerank`: {reason}")

    if not isinstance(doc, Mapping) or "rows" not in doc or "settings" not in doc:
        refuse("no 'settings' and 'rows'")
    if not isinstance(doc["settings"], Mapping):
        refuse("'settings' is not an object")
    if not isinstance(doc["rows"], list):
        refuse("'rows' is not a list")
    for i, row in enumerate(doc["rows"], 1):
        if not isinstance(row, Mapping):
            refuse(f"row {i} is not an object")
        missing = [k for k in (*RERANK_TEXT, *RERANK_NUMBERS) if k not in row]
        if missing:
            refuse(f"row {i} has no {', '.join(map(repr, missing))}")
        for k in RERANK_TEXT:
            if not isinstance(row[k], str):
                refuse(f"row {i}: {k!r} is {shorten(repr(row[k]))}, not text")
        for k in (*RERANK_NUMBERS, *RERANK_OPTIONAL):
            if k in row and not _number(row[k], k in RERANK_OPTIONAL):
                numeric = isinstance(row[k], (int, float)) and not isinstance(row[k], bool)
                refuse(
                    f"row {i}: {k!r} is {shorten(repr(row[k]))}, not a {'finite ' if numeric else ''}number"
                )
    return doc


#: the columns of a rerank report's tables, their labels and cell formats
_RERANK_COLS = [
    "variant",
    "fp32",
    *COLUMNS_BUT_STD,
    "tied_share",
    "tie_groups",
    "max_group",
    *table1.TIMES,
]
_RERANK_LABELS = {
    "variant": "regime",
    "fp32": "FP32",
    "tied_share": "tied",
    "tie_groups": "groups",
    "max_group": "largest",
    "model_s": "model s",
    "scoring_ms": "scoring ms",
    "hps_overhead": "HPS overhead",
}
_RERANK_FORMATS = {
    "tied_share": _pct,
    "hps_overhead": _or_dash("{:+.3%}"),
    "model_s": _or_dash("{:.2f}"),
    "scoring_ms": _or_dash("{:.2f}"),
    "tie_groups": _or_dash("{:,}"),
    "max_group": _or_dash("{:,}"),
}


def _rerank_setting(st: Mapping) -> Section:
    """A rerank report's setting section: the model, the data, the columns explained."""
    tb = st.get("tie_break", "trec_eval")
    setting = (
        f"Model {st.get('model')} ({st.get('family')}), {st.get('queries')} queries, {st.get('candidates')} "
        f"candidates, batch size {st.get('batch_size')}, device {st.get('device')}"
        + (f", reasoning budget {st['budget']} tokens" if "budget" in st else "")
        + "."
    )
    return Section(
        "Setting",
        paragraphs=[
            setting,
            "FP32: the measure of the fp32 regime. " + _EXPLAIN.format(tb=repr(tb)),
            "tied: share of candidates in tie groups; model s: the forward pass, summed over queries; scoring ms: the "
            "scoring step alone; HPS overhead: the FP32 scoring step's extra time over its low-precision twin, "
            "relative to the forward pass (negative: FP32 scoring was faster).",
        ],
    )


def _rerank_measure(m: str, rows: list) -> Section:
    """A rerank report's section of measure ``m``: its ranges figure and its rows."""
    from .plots import plot_ranges

    mrows = [r for r in rows if r["measure"] == m]
    ranges = [{**r, "name": r["variant"]} for r in mrows]
    classes = ["flag" if (r.get("range") or 0) > 0 else None for r in mrows]  # range is optional
    return Section(
        m,
        paragraphs=[f"Highlighted: regimes whose ties leave {m} undetermined (range > 0)."],
        figures=[
            FigureBlock(
                plot_ranges(ranges, m),
                caption=f"{m} per regime: [min, max] over tie orderings, "
                "oblivious (circle), expected (triangle).",
            )
        ],
        tables=[
            Table(
                mrows,
                columns=_RERANK_COLS,
                labels=_RERANK_LABELS,
                formats=_RERANK_FORMATS,
                row_classes=classes,
            )
        ],
    )


def rerank_report(result, *, title: str | None = None, source: str = "table.json") -> str:
    """HTML report of the rerank protocol: per measure a ranges figure and Table 1's rows.

    ``result`` is a [`ProtocolResult`][tierank.hps.record.ProtocolResult] or the
    mapping stored in ``table.json`` (``settings`` and ``rows``), checked with
    [`check_rerank_table`][tierank.report.html.check_rerank_table] (``source`` names it in the errors).
    """
    if isinstance(result, Mapping) or not (hasattr(result, "settings") and hasattr(result, "rows")):
        doc = result
    else:
        doc = {"settings": result.settings, "rows": result.rows}
    check_rerank_table(doc, source)
    st, rows = doc["settings"], doc["rows"]
    sections = [_rerank_setting(st)]
    for m in dict.fromkeys(r["measure"] for r in rows):
        sections.append(_rerank_measure(m, rows))
    return render_report(
        title or f"tierank rerank: {st.get('model')}",
        sections,
        subtitle=f"data: {st.get('data')}; candidates: {st.get('candidates_file')}",
    )
