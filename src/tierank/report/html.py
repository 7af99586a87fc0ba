"""Self-contained HTML reports: one file, inline CSS, figures embedded, no network needed.

A report is a title and a list of :class:`Section` s; a section has a heading,
optional paragraphs, figures (:class:`FigureBlock`: a matplotlib figure, PNG
bytes or SVG text, embedded as a ``data:image/png;base64`` URI or inline
``<svg>``) and tables (:class:`Table`: records and a column order; floats are
written with 4 decimals, None and NaN as ``-``).  All text is escaped with
:func:`html.escape`; the page loads no script, style sheet, font or image
from anywhere.

Builders for tierank's results:

* :func:`eval_report`: an :class:`~tierank.EvalResult` (aggregate table and
  figure, tie summary, the most tie-affected queries, optional cutoff curves);
* :func:`sweep_report`: a precision :class:`~tierank.analysis.sweep.Sweep`;
* :func:`compare_report`: a :class:`~tierank.analysis.compare.Comparison`;
* :func:`rerank_report`: the rerank protocol's Table 1 (the ``table.json``
  that ``tierank rerank -o DIR`` writes, or a
  :class:`~tierank.hps.protocol.ProtocolResult`).

:func:`write_report` writes a page atomically.

Examples
--------
>>> page = render_report("Demo", [Section("Numbers", paragraphs=["x < y"],
...                                        tables=[Table([{"name": "a", "v": 0.5, "w": None}])])])
>>> '<td>a</td><td class="num">0.5000</td><td class="num">-</td>' in page and "x &lt; y" in page
True
"""

from __future__ import annotations

import base64
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np

#: Rows of the per-query table in :func:`eval_report` by default.
PER_QUERY_ROWS = 20


@dataclass(frozen=True)
class Table:
    """A table of records.

    Attributes
    ----------
    records : sequence of mappings
    columns : sequence of str, optional
        Column order (default: the keys of the first record, then new keys as met).
    caption : str, optional
    labels : mapping of str -> str, optional
        Header text per column (default: the column name).
    formats : mapping of str -> callable, optional
        Per-column formatter (value -> str, escaped afterwards); the default writes
        floats with 4 decimals, None/NaN as ``-``, booleans as yes/no.
    max_rows : int, optional
        Show at most this many rows and say how many were left out.
    row_classes : sequence of str or None, optional
        A CSS class per record (``"flag"`` highlights a row).
    collapsed : bool
        Wrap the table in a closed ``<details>`` element (caption as its summary).
    """

    records: Sequence[Mapping]
    columns: Sequence[str] | None = None
    caption: str | None = None
    labels: Mapping[str, str] | None = None
    formats: Mapping[str, Callable] | None = None
    max_rows: int | None = None
    row_classes: Sequence[str | None] | None = None
    collapsed: bool = False


@dataclass(frozen=True)
class FigureBlock:
    """A figure to embed.

    Attributes
    ----------
    figure : matplotlib Figure, bytes (PNG) or str (SVG text)
    caption : str, optional
    alt : str, optional
        Alternative text (default: the caption).
    format : {"png", "svg"}
        How a matplotlib figure is embedded: base64 PNG (default) or inline SVG.
    """

    figure: object
    caption: str | None = None
    alt: str | None = None
    format: str = "png"


@dataclass(frozen=True)
class Section:
    """A heading with paragraphs, figures and tables (rendered in that order)."""

    heading: str
    paragraphs: Sequence[str] = ()
    tables: Sequence[Table] = ()
    figures: Sequence[FigureBlock] = ()


CSS = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d9dce1; --head: #f3f4f6; --flag: #fff4d6; --accent: #1f5fa8; }
* { box-sizing: border-box; }
body { font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); margin: 0; background: #fff; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 24px 64px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.22em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
p { margin: 6px 0 10px; }
.meta { color: var(--muted); font-size: 0.9em; }
nav { margin: 10px 0 0; font-size: 0.92em; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; }
figure { margin: 14px 0 18px; }
figure img, figure svg { max-width: 100%; height: auto; display: block; border: 1px solid var(--line);
                         border-radius: 4px; }
figcaption, caption, summary { color: var(--muted); font-size: 0.88em; text-align: left; padding: 4px 0; }
summary { cursor: pointer; }
.tablewrap { overflow-x: auto; margin: 10px 0 18px; }
table { border-collapse: collapse; font-size: 0.88em; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { background: var(--head); text-align: left; position: sticky; top: 0; }
td.num { text-align: right; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
tr.flag td { background: var(--flag); }
.more { color: var(--muted); font-size: 0.85em; }
"""


# --------------------------------------------------------------------------------------------
# rendering


def _is_num(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def format_value(v) -> str:
    """Default cell text: floats with 4 decimals, None/NaN as ``-``, booleans as yes/no.

    Examples
    --------
    >>> [format_value(v) for v in (0.123456, -1e-9, None, float("nan"), 3, True, "a")]
    ['0.1235', '0.0000', '-', '-', '3', 'yes', 'a']
    """
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "-"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = f"{v:.4f}"
        return "0.0000" if text == "-0.0000" else text
    return str(v)


def _p_value(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "<1e-4" if x < 1e-4 else f"{x:.4f}"


def _pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.2f}%"


def _render_table(t: Table) -> str:
    records = list(t.records)
    cols = list(t.columns) if t.columns is not None else list(dict.fromkeys(k for r in records for k in r))
    labels = dict(t.labels or {})
    formats = dict(t.formats or {})
    shown = records if t.max_rows is None else records[: max(int(t.max_rows), 0)]
    classes = list(t.row_classes) if t.row_classes is not None else [None] * len(records)
    out = ["<table>"]
    if t.caption and not t.collapsed:
        out.append(f"<caption>{escape(t.caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{escape(str(labels.get(c, c)))}</th>" for c in cols)
               + "</tr></thead><tbody>")
    for i, r in enumerate(shown):
        cls = classes[i] if i < len(classes) else None
        cells = []
        for c in cols:
            v = r.get(c)
            text = formats[c](v) if c in formats else format_value(v)
            num = _is_num(v) or v is None
            cells.append(f'<td class="num">{escape(text)}</td>' if num else f"<td>{escape(text)}</td>")
        attr = f' class="{escape(cls)}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    html = '<div class="tablewrap">' + "".join(out)
    if len(shown) < len(records):
        html += f'<p class="more">showing {len(shown)} of {len(records)} rows</p>'
    html += "</div>"
    if t.collapsed:
        html = f"<details><summary>{escape(t.caption or 'table')}</summary>{html}</details>"
    return html


_SVG_DROP = (re.compile(r"<\?xml[^>]*\?>\s*"), re.compile(r"<!DOCTYPE[^>]*>\s*", re.I),
             re.compile(r"<metadata>.*?</metadata>\s*", re.S), re.compile(r'\s+xmlns(:\w+)?="[^"]*"'))


def _inline_svg(svg: str) -> str:
    """SVG text made safe to inline: no XML prolog, doctype, metadata or namespace URLs (HTML5 needs none)."""
    for pat in _SVG_DROP:
        svg = pat.sub("", svg)
    return svg.strip()


def _render_figure(f: FigureBlock) -> str:
    fig, alt = f.figure, f.alt if f.alt is not None else (f.caption or "figure")
    if isinstance(fig, (bytes, bytearray)):
        body = f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(bytes(fig)).decode("ascii")}">'
    elif isinstance(fig, str):
        body = _inline_svg(fig)
    else:
        from .plots import figure_bytes

        if f.format == "svg":
            body = _inline_svg(figure_bytes(fig, "svg").decode("utf-8"))
        else:
            data = base64.b64encode(figure_bytes(fig, "png")).decode("ascii")
            body = f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'
    cap = f"<figcaption>{escape(f.caption)}</figcaption>" if f.caption else ""
    return f"<figure>{body}{cap}</figure>"


def _anchor(i: int, heading: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")[:40]
    return f"s{i}-{slug}" if slug else f"s{i}"


def render_report(title: str, sections: Sequence[Section], *, subtitle: str | None = None) -> str:
    """One self-contained HTML page.

    Parameters
    ----------
    title : str
    sections : sequence of Section
    subtitle : str, optional
        A muted line under the title (e.g. the inputs).

    Returns
    -------
    str
        The page: inline CSS, figures embedded, every text escaped.
    """
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="generator" content="tierank">',
             f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body><main>",
             f"<h1>{escape(title)}</h1>"]
    if subtitle:
        parts.append(f'<p class="meta">{escape(subtitle)}</p>')
    anchors = [_anchor(i, s.heading) for i, s in enumerate(sections)]
    if len(sections) > 2:
        parts.append("<nav>" + "".join(f'<a href="#{a}">{escape(s.heading)}</a>' for a, s in zip(anchors, sections))
                     + "</nav>")
    for a, s in zip(anchors, sections):
        parts.append(f'<section id="{a}"><h2>{escape(s.heading)}</h2>')
        parts += [f"<p>{escape(p)}</p>" for p in s.paragraphs]
        parts += [_render_figure(f) for f in s.figures]
        parts += [_render_table(t) for t in s.tables]
        parts.append("</section>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def write_report(path: str | os.PathLike, html: str, *, protect: tuple = ()) -> Path:
    """Write ``html`` (UTF-8) to ``path`` atomically (a temporary file in the same folder, then
    :func:`os.replace`), refusing to overwrite any of ``protect`` (the inputs).  Returns the path."""
    from ..io.writers import write_atomic

    return write_atomic(path, html, protect=protect)


# builders

_STAT_LABELS = {"oblivious": "oblivious", "expected": "expected", "min": "min", "max": "max", "range": "range",
                "bias": "bias", "std": "std"}
_EXPLAIN = ("oblivious: the value under the tie-break {tb}; expected: the exact mean over all orderings of tied "
            "documents; min / max: the pessimal and optimal tie orderings; range = max - min; "
            "bias = oblivious - expected; std: standard deviation over tie orderings (of the mean, in aggregates).")


def _tie_table(ties: Mapping, caption: str | None = None) -> Table:
    cols = ("docs", "queries", "queries_with_ties", "groups", "tied_docs", "largest", "share")
    return Table([dict(ties)], columns=cols, caption=caption,
                 labels={"queries_with_ties": "queries with ties", "groups": "tie groups",
                         "tied_docs": "tied docs", "largest": "largest group", "share": "share of docs tied"},
                 formats={"share": _pct})


def eval_report(result, curves=None, *, per_query: int | None = PER_QUERY_ROWS, title: str | None = None) -> str:
    """HTML report of an :class:`~tierank.EvalResult`.

    Sections: the aggregate table with a ranges figure (one segment per measure),
    the tie summary, the ``per_query`` (query, measure) rows with the widest
    range (``None`` or 0 leaves the table out), and, with ``curves``, the cutoff
    figure with its numbers in a collapsed table.

    Parameters
    ----------
    result : EvalResult
    curves : CutoffCurves, optional
        From :func:`~tierank.report.plots.cutoff_curves`.
    per_query : int or None
    title : str, optional

    Returns
    -------
    str
    """
    from .plots import plot_cutoff, plot_ranges

    st = result.settings
    tb = st.get("tie_break", "trec_eval")
    cols = list(result.columns)
    agg = result.records(per_query=False)
    sections = [Section(
        "Aggregate",
        paragraphs=[f"Means over {len(result.qids)} queries. " + _EXPLAIN.format(tb=repr(tb))],
        figures=[FigureBlock(plot_ranges([{"name": r["measure"], **{k: r[k] for k in ("min", "max", "oblivious",
                                                                                         "expected")}}
                                          for r in agg], xlabel="mean over queries",
                                         title="Tie-aware range of every measure"),
                             caption="Each measure from its pessimal to its optimal tie ordering (segment), "
                                     "oblivious value (circle) and expected value (triangle).")]
        if agg and all(r["min"] is not None and r["max"] is not None for r in agg) else [],
        tables=[Table(agg, columns=["measure", *cols], labels=_STAT_LABELS)])]
    ties = result.ties
    share = ties.get("share", 0.0)
    sections.append(Section(
        "Ties",
        paragraphs=[f"{ties.get('tied_docs', 0):,} of {ties.get('docs', 0):,} documents ({_pct(share)}) share their "
                    f"score with another document of the same query, in {ties.get('groups', 0):,} tie groups "
                    f"across {ties.get('queries_with_ties', 0):,} of {ties.get('queries', 0):,} queries; the "
                    f"largest group has {ties.get('largest', 0):,} documents."],
        tables=[_tie_table(ties)]))
    if curves is not None:
        sections.append(Section(
            f"{curves.family}@k for k = 1..{int(curves.ks[-1])}",
            figures=[FigureBlock(plot_cutoff(curves),
                                 caption="Line: expected value; x: oblivious value; shaded: [min, max] over tie "
                                         "orderings. Means over queries.")],
            tables=[Table(curves.records(), columns=["run", "k", "oblivious", "expected", "min", "max", "range",
                                                     "bias", "std"],
                          caption="the numbers behind the figure", collapsed=True)]))
    if per_query:
        rows = [r for r in result.records(per_query=True) if r["query"] != "all"]
        rows.sort(key=lambda r: -(r["range"] if r["range"] is not None else -1.0))
        sections.append(Section(
            "Most tie-affected queries",
            paragraphs=[f"The (query, measure) pairs with the widest range over tie orderings, widest first "
                        f"({min(per_query, len(rows))} of {len(rows)})."],
            tables=[Table(rows, columns=["query", "measure", *cols], labels=_STAT_LABELS, max_rows=int(per_query))]))
    sub = f"run {st.get('run', '?')} · qrels {st.get('qrels', '?')} · tie-break {tb}"
    extras = [f"{k}={st[k]}" for k in ("rel", "complete", "candidates_only", "unjudged") if k in st]
    if extras:
        sub += " · " + ", ".join(extras)
    return render_report(title or "tierank evaluation report", sections, subtitle=sub)


def sweep_report(sweep, measures: Sequence[str] | None = None, *, title: str | None = None) -> str:
    """HTML report of a precision :class:`~tierank.analysis.sweep.Sweep`.

    A tie table (one row per format) and, per measure, the sweep figure and its table.

    Parameters
    ----------
    sweep : Sweep
    measures : sequence of str, optional
        Default: every measure of the sweep, in its order.
    title : str, optional
    """
    from .plots import _canonical, plot_sweep

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
        ties_rows.append({"format": f, **{k: r.get(k) for k in ("tie_share", "tie_groups", "largest_group",
                                                                  "queries_with_ties")}})
    sections = [Section(
        "Ties per format",
        paragraphs=["The run's scores re-expressed in each number format, and the ties that creates."],
        tables=[Table(ties_rows, labels={"tie_share": "share of docs tied", "tie_groups": "tie groups",
                                         "largest_group": "largest group", "queries_with_ties": "queries with ties"},
                      formats={"tie_share": _pct})])]
    cols = ["format", "oblivious", "expected", "min", "max", "range", "bias", "std"]
    for m in measures:
        mrows = [r for r in rows if r["measure"] == m]
        sections.append(Section(
            str(m),
            paragraphs=[_EXPLAIN.format(tb=repr(st.get("tie_break", "trec_eval")))],
            figures=[FigureBlock(plot_sweep(sweep, m),
                                 caption=f"{m} per score format: value with [min, max], range and bias, "
                                         "share of documents in ties.")],
            tables=[Table(mrows, columns=cols, labels=_STAT_LABELS)]))
    sub = f"run {st.get('run', '?')} · qrels {st.get('qrels', '?')} · tie-break {st.get('tie_break', 'trec_eval')}"
    return render_report(title or "tierank precision sweep", sections, subtitle=sub)


def compare_report(comparison, *, title: str | None = None) -> str:
    """HTML report of a :class:`~tierank.analysis.compare.Comparison`.

    The ranges figure (one segment per system), the systems table, the pairs table
    (flags as words, flagged pairs highlighted) and, with a band, the band summary.
    """
    from ..analysis.compare import flags
    from .plots import plot_ranges

    c = comparison
    tb = c.settings.get("tie_break", "trec_eval")
    sys_cols = ["name", "oblivious", "expected", "min", "max", "range", "bias", "std"]
    sys_rows = [{k: getattr(s, k) for k in sys_cols} for s in c.systems]
    if c.banded_systems is not None:
        for r, b in zip(sys_rows, c.banded_systems):
            r["expected_banded"] = b.expected
        sys_cols.append("expected_banded")
    nflip = sum(p.order_flip for p in c.pairs)
    nund = sum(p.undecidable for p in c.pairs)
    sections = [Section(
        "Systems",
        paragraphs=[f"Means of {c.measure} over the {len(c.queries)} queries common to all systems"
                    + (f" ({c.dropped_queries} others left out). " if c.dropped_queries else ". ")
                    + _EXPLAIN.format(tb=repr(tb)),
                    f"Kendall's tau between the system orders by oblivious and by expected mean: "
                    f"{format_value(c.kendall_tau)}; by min and by max mean: {format_value(c.kendall_tau_min_max)}."],
        figures=[FigureBlock(plot_ranges(c), caption="Each system from its pessimal to its optimal tie ordering "
                                                     "(segment), oblivious (circle) and expected (triangle) mean; "
                                                     "overlapping segments cannot be ordered from these scores.")],
        tables=[Table(sys_rows, columns=sys_cols,
                      labels={"name": "system", **_STAT_LABELS,
                              "expected_banded": f"expected band{c.band:g}" if c.band is not None else ""})])]
    pair_cols = ["a", "b", "diff_expected", "diff_oblivious", "t", "p", "p_oblivious"]
    if c.band is not None:
        pair_cols.append("p_banded")
    pair_cols.append("flags")
    pair_rows, classes = [], []
    for p in c.pairs:
        fl = flags(p)
        pair_rows.append({**{k: getattr(p, k) for k in pair_cols if k != "flags"}, "flags": ", ".join(fl)})
        classes.append("flag" if (p.order_flip or p.undecidable) else None)
    sections.append(Section(
        "Pairs",
        paragraphs=[f"{len(c.pairs)} pairs, A ranked above B by expected mean: {nflip} flipped (the oblivious means "
                    f"order them the other way round), {nund} undecidable (their [min, max] intervals overlap, so tie "
                    f"orderings alone could reverse or level them). Two-sided paired t-tests over queries on "
                    f"expected values (p) and oblivious ones (p obl); significant: p < {c.alpha:g}. "
                    "Highlighted: flipped or undecidable pairs."],
        tables=[Table(pair_rows, columns=pair_cols, row_classes=classes,
                      labels={"a": "A", "b": "B", "diff_expected": "Δ expected", "diff_oblivious": "Δ oblivious",
                              "p_oblivious": "p obl",
                              "p_banded": f"p band{c.band:g}" if c.band is not None else ""},
                      formats={"t": lambda v: "-" if v is None or math.isnan(v) else f"{v:.3f}",
                               "p": _p_value, "p_oblivious": _p_value, "p_banded": _p_value})]))
    if c.band_summary is not None:
        bs = {k: v for k, v in c.band_summary.items() if not isinstance(v, (dict, list, tuple))}
        sections.append(Section(f"Rank bands (rho = {c.band:g})",
                                paragraphs=["Significance of the pairs before and after scoring every run into "
                                            "geometric rank bands (Yang, Moffat & Turpin, Figure 4)."],
                                tables=[Table([bs], labels={k: k.replace("pct_", "% ").replace("_", " ") for k in bs},
                                              formats={"rho": lambda v: f"{v:g}", "alpha": lambda v: f"{v:g}"})]))
    return render_report(title or f"tierank compare: {c.measure}", sections,
                         subtitle=f"{len(c.systems)} systems · {len(c.queries)} queries · tie-break {tb}")


__all__ = ["Table", "FigureBlock", "Section", "render_report", "write_report", "format_value", "eval_report",
           "sweep_report", "compare_report", "PER_QUERY_ROWS", "CSS"]


def rerank_report(result, *, title: str | None = None) -> str:
    """HTML report of the rerank protocol: per measure a ranges figure and Table 1's rows.

    ``result`` is a :class:`~tierank.hps.protocol.ProtocolResult` or the
    mapping stored in ``table.json`` (``settings`` and ``rows``).
    """
    from .plots import plot_ranges

    doc = result if isinstance(result, Mapping) else {"settings": result.settings, "rows": result.rows}
    st, rows = doc["settings"], doc["rows"]
    tb = st.get("tie_break", "trec_eval")
    setting = (f"Model {st.get('model')} ({st.get('family')}), {st.get('queries')} queries, {st.get('candidates')} "
               f"candidates, batch size {st.get('batch_size')}, device {st.get('device')}"
               + (f", reasoning budget {st['budget']} tokens" if "budget" in st else "") + ".")
    sections = [Section("Setting", paragraphs=[
        setting,
        "FP32: the measure of the fp32 regime. " + _EXPLAIN.format(tb=repr(tb)),
        "tied: share of candidates in tie groups; model s: the forward pass, summed over queries; scoring ms: the "
        "scoring step alone; HPS overhead: the FP32 scoring step's extra time over its low-precision twin, "
        "relative to the forward pass (negative: FP32 scoring was faster)."])]
    cols = ["variant", "fp32", "oblivious", "expected", "min", "max", "range", "bias", "tied_share", "tie_groups",
            "max_group", "model_s", "scoring_ms", "hps_overhead"]
    labels = {"variant": "regime", "fp32": "FP32", **_STAT_LABELS, "tied_share": "tied", "tie_groups": "groups",
              "max_group": "largest", "model_s": "model s", "scoring_ms": "scoring ms", "hps_overhead": "HPS overhead"}
    formats = {"tied_share": _pct, "hps_overhead": lambda v: "-" if v is None else f"{100 * v:+.3f}%",
               "model_s": lambda v: f"{v:.2f}", "scoring_ms": lambda v: f"{v:.2f}",
               "tie_groups": lambda v: f"{v:,}", "max_group": lambda v: f"{v:,}"}
    for m in dict.fromkeys(r["measure"] for r in rows):
        mrows = [r for r in rows if r["measure"] == m]
        ranges = [{"name": r["variant"], **{k: r[k] for k in ("min", "max", "oblivious", "expected")}} for r in mrows]
        classes = ["flag" if (r["range"] or 0) > 0 else None for r in mrows]
        sections.append(Section(
            m,
            paragraphs=[f"Highlighted: regimes whose ties leave {m} undetermined (range > 0)."],
            figures=[FigureBlock(plot_ranges(ranges, m), caption=f"{m} per regime: [min, max] over tie orderings, "
                                                                 "oblivious (circle), expected (triangle).")],
            tables=[Table(mrows, columns=cols, labels=labels, formats=formats, row_classes=classes)]))
    return render_report(title or f"tierank rerank: {st.get('model')}", sections,
                         subtitle=f"data: {st.get('data')}; candidates: {st.get('candidates_file')}")
