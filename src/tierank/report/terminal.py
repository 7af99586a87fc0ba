"""Every table the command line prints on a terminal, as ``rich`` tables.

The builders here take finished results (an [`EvalResult`][tierank.results.EvalResult], a
prevalence report, a sweep, a comparison, ...) and only lay them out: no evaluation
happens here.  The command line ([`tierank.cli`][tierank.cli]) prints them, or writes them as
plain text with ``--format table -o FILE``.

Text from the inputs (run names, query ids, system names) goes in as `rich.text.Text`
([`text`][tierank.report.terminal.text]), so that neither rich markup (``[b]``) nor emoji codes (``:100:``) in a file name or a
query id are interpreted: it is shown as written.

Examples
--------
>>> count(1, "query", "queries"), count(1000, "document")
('1 query', '1,000 documents')
>>> value(None), value(0.5), num(float("nan")), num(2.0, 3), pvalue(3e-5)
('-', '0.5000', '-', '2.000', '<1e-4')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..results import COLUMNS, COLUMNS_BUT_STD
from . import table1
from .marks import SAMPLED_MARK, sampled_note


def text(s) -> Text:
    """A string from the inputs as a table cell or title, shown as written: no rich markup, no emoji
    codes (a query id ``:100:`` stays ``:100:``, a file name ``[b]x.run`` stays ``[b]x.run``)."""
    return Text(str(s))


def count(n: int, one: str, many: str | None = None) -> str:
    """'1 query', '2 queries', '1,000 documents'."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals; a value that rounds to zero prints without a sign (``0.0000``,
    never ``-0.0000``)."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def value(x: float | None, count: bool = False) -> str:
    """A measure value with 4 decimals; ``-`` for None; with ``count`` (a measure that counts, e.g.
    NumRet) an integral value as an integer.

    >>> value(-1e-9), value(200.0, count=True), value(200.5, count=True), value(200.0)
    ('0.0000', '200', '200.5000', '200.0000')
    """
    if x is None:
        return "-"
    if count and math.isfinite(x) and float(x).is_integer():
        return f"{int(x)}"
    return _fixed(x, 4)


def num(x: float | None, digits: int = 4) -> str:
    """A measure value with ``digits`` decimals; ``-`` for a missing value (None or NaN).

    >>> num(-0.00001), num(-0.5, 1)
    ('0.0000', '-0.5')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return _fixed(x, digits)


def pvalue(x: float | None) -> str:
    """A p-value: ``<1e-4`` below 1e-4, ``-`` when missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "<1e-4" if x < 1e-4 else f"{x:.4f}"


def _name_column(names: list[str], widest: int = 48) -> dict:
    """Column settings for names that must stay whole: on one line up to ``widest`` characters, folded
    onto more lines beyond that; never cut with an ellipsis."""
    return {"no_wrap": True} if max(map(len, names), default=0) <= widest else {"overflow": "fold"}


# tierank eval


def eval_table(result, per_query: bool, coverage: float | None = None) -> Table:
    """The table of ``tierank eval``: one row per measure (per query and measure with ``per_query``),
    a caption with the tie summary; ``coverage`` (mean Judged@10) adds a sentence on incomplete judgments."""
    t = result.ties
    policy = escape(str(result.settings["tie_break"]))
    caption = (
        f"{count(t['queries'], 'query', 'queries')}, {count(t['docs'], 'document')}. "
        f"Ties: {count(t['groups'], 'tie group')}, {count(t['tied_docs'], 'document')} in tie groups "
        f"({100 * t['share']:.1f}%), largest group {t['largest']:,}, "
        f"{count(t['queries_with_ties'], 'query', 'queries')} with ties. oblivious = tie-break '{policy}'; "
        f"bias = oblivious - expected; std over tie orderings."
    )
    if result.bounds:
        caption += (
            " lower/upper: over tie orderings and every relevance of the unjudged retrieved "
            "documents; residual: RBP's unjudged and unretrieved weight (Moffat & Zobel)."
        )
    if coverage is not None:
        caption += (
            f" Judgments are incomplete: on average {100 * (1 - coverage):.1f}% of the top 10 is unjudged "
            "(counted non-relevant); see Judged@10, and --unjudged bounds."
        )
    table = Table(title="tierank eval", caption=caption, caption_justify="left")
    if per_query:
        table.add_column("query")
    cols = result.columns
    _columns(table, ("measure", *cols), ("measure",))
    counts = {str(m) for m in result.measures if getattr(m, "is_count", False)}
    for r in result.records(per_query=per_query):
        integral = r["measure"] in counts
        name = r["measure"] + (SAMPLED_MARK if r.get("method") == "sampled" else "")
        cells: list[RenderableType] = [text(r["query"])] if per_query else []
        cells += [text(name), *(value(r[c], count=integral and c != "std") for c in cols)]
        table.add_row(*cells)
    note = sampled_note([result])
    if note is not None:
        table.caption = f"{caption} {note}."
    return table


# tierank ties


def ties_tables(report) -> list[Table]:
    """The tables of ``tierank ties``: shares of systems, system-topics and documents affected, and one
    row per run (a [`prevalence`][tierank.analysis.prevalence] report)."""
    s = report.summary
    t1 = Table(
        title="ties: the share of systems, system-topics and documents affected",
        caption=f"{s['systems']} runs, {s['system_topics']:,} system-topics, {s['docs']:,} documents. "
        "Documents tied = tied with their predecessor after re-sorting by score (the paper's "
        "count: a tie group of n documents counts n - 1; tierank eval's share counts all n, the "
        "documents in tie groups). Contradiction: adjacent documents whose rank column says the "
        "opposite order.",
        caption_justify="left",
    )
    for c in ("", "systems %", "system-topics %", "documents %"):
        t1.add_column(c, justify="left" if not c else "right")
    for label, key in (
        ("tied scores", "tied_scores"),
        ("rank/score contradictions", "rank_score_contradictions"),
    ):
        v = s[key]
        t1.add_row(
            label,
            f"{v['systems_pct']:.1f}",
            f"{v['system_topics_pct']:.1f}",
            f"{v['docs_pct']:.2f}",
        )
    t2 = Table(
        title="per run",
        caption="tied: documents tied with their predecessor (a group of n counts n - 1; tierank eval "
        "counts all n); score order: adjacent lines "
        "whose score increases in file order; rank order: whose rank decreases; largest: the biggest tie "
        "group (size in query).",
        caption_justify="left",
    )
    heads = (
        "run",
        "docs",
        "topics w/ ties",
        "tied %",
        "contradictions",
        "score order",
        "rank order",
        "duplicates",
        "largest",
    )
    for h in heads:
        t2.add_column(
            h,
            justify="left" if h in ("run", "largest") else "right",  # a name is never cut short:
            **(
                _name_column([r.name for r in report.runs])
                if h == "run"
                else {"overflow": "fold"}
                if h == "largest"
                else {}
            ),
        )
    for r in report.runs:
        g = r.largest_groups[0] if r.largest_groups else None
        t2.add_row(
            text(r.name),
            f"{r.docs:,}",
            f"{r.queries_with_ties:,}/{r.queries:,}",
            f"{100 * r.docs_tied_with_predecessor / max(r.docs, 1):.2f}",
            f"{r.contradictions:,}",
            f"{r.score_order_violations:,}",
            f"{r.rank_order_violations:,}",
            f"{r.duplicates:,}",
            text(f"{g['size']} in {g['query']}") if g else "-",
        )
    return [t1, t2]


def _columns(t: Table, heads: Sequence[str], left: Sequence[str]) -> None:
    """``heads`` as the columns of ``t``: those in ``left`` left-justified, the others right."""
    for h in heads:
        t.add_column(h, justify="left" if h in left else "right")


def _group_starts(rows: Sequence[Mapping], key: str):
    """``(first, row)`` for every row: ``first`` where the row's ``key`` differs from the previous row's
    (the rows of a group after its first show the key as blank)."""
    prev = None
    for r in rows:
        yield r[key] != prev, r
        prev = r[key]


# tierank sweep


def sweep_table(result, run_name: str, tie_break: str) -> Table:
    """The table of ``tierank sweep``: per score format its tie share and largest group, then one row per
    measure (a [`Sweep`][tierank.analysis.sweep.Sweep])."""
    t = Table(
        title=text(f"sweep: {run_name} re-expressed per score format"),
        caption=text(
            "tie share: documents in tie groups; range = max - min over tie orderings; "
            f"bias = oblivious ({tie_break}) - expected."
        ),
        caption_justify="left",
    )
    _columns(t, ("format", "ties %", "largest", "measure", *COLUMNS_BUT_STD), ("format", "measure"))
    for first_row, r in _group_starts(result.rows, "format"):
        t.add_row(
            r["format"] if first_row else "",
            f"{100 * r['tie_share']:.1f}" if first_row else "",
            f"{r['largest_group']:,}" if first_row else "",
            r["measure"],
            *(value(r[c]) for c in COLUMNS_BUT_STD),
            end_section=False,
        )
    return t


# tierank compare

_SEPARATORS = "/._- "


def distinct_labels(names, width: int = 20) -> dict[str, str]:
    """Short labels that keep names apart: when a name is longer than ``width``, the start and end
    that every name shares (cut at a separator) become ``…``.  Labels are unique when the names are.

    >>> distinct_labels(["askubuntu-test.bm25.bf16.run", "askubuntu-test.bm25.run.gz"])
    {'askubuntu-test.bm25.bf16.run': '…bf16.run', 'askubuntu-test.bm25.run.gz': '…run.gz'}
    >>> distinct_labels(["bm25.run", "dense.run"])
    {'bm25.run': 'bm25.run', 'dense.run': 'dense.run'}
    """
    names = list(dict.fromkeys(names))
    if len(names) < 2 or max(map(len, names)) <= width:
        return {n: n for n in names}
    first, shortest = names[0], min(map(len, names))
    pre = 0
    while pre < shortest and all(n[pre] == first[pre] for n in names):
        pre += 1
    while pre and first[pre - 1] not in _SEPARATORS:  # cut after a separator
        pre -= 1
    suf = 0
    while suf < shortest - pre and all(n[-1 - suf] == first[-1 - suf] for n in names):
        suf += 1
    while suf and first[-suf] not in _SEPARATORS:  # cut before a separator
        suf -= 1
    labels = {n: ("…" if pre else "") + n[pre : len(n) - suf] + ("…" if suf else "") for n in names}
    if len(set(labels.values())) < len(names) or any(not n[pre : len(n) - suf] for n in names):
        return {n: n for n in names}
    return labels


_CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "bonferroni": "Bonferroni"}


#: a comparison's summary over queries, per aggregator of its measure, as the captions name it
_SUMMARY_NAMES = {"mean": "Means", "sum": "Sums", "geometric_mean": "Geometric means"}


def _test(c):
    """The comparison's paired test, as registered (`tierank.analysis.paired`)."""
    from ..analysis.paired import REGISTRY

    return REGISTRY.get(c.settings.get("test", "t"), REGISTRY["t"])


def _inference_note(c) -> str:
    """The caption's sentence on what the inference is computed on (where it is not the plain mean),
    and the comparison's notes (null figures, tests that fell back)."""
    inf = getattr(c, "inference", {}) or {}
    out = (
        ""
        if inf.get("aggregator", "mean") == "mean"
        else f" Tests and intervals on {inf.get('on')}."
    )
    notes = getattr(c, "notes", ())
    return out + (" Notes: " + "; ".join(escape(n) for n in notes) + "." if notes else "")


def _compare_systems(c) -> Table:
    """The systems table of ``tierank compare``."""
    policy = escape(str(c.settings.get("tie_break", "trec_eval")))
    systems = Table(
        title=f"tierank compare: {c.measure}, {len(c.queries)} queries",
        caption=(
            _SUMMARY_NAMES.get((c.inference or {}).get("aggregator", "mean"), "Means")
            + f" of {escape(c.measure)} over the queries common to all systems"
            + (f" ({c.dropped_queries} others left out)" if c.dropped_queries else "")
            + f". oblivious = tie-break '{policy}'; min/max: pessimal/optimal tie orderings; "
            f"bias = oblivious - expected; std of the mean over tie orderings. "
            f"Kendall's tau, oblivious vs expected order: {num(c.kendall_tau)}; "
            f"min vs max order: {num(c.kendall_tau_min_max)}."
        ),
        caption_justify="left",
    )
    systems.add_column(
        "system", **_name_column([s.name for s in c.systems])
    )  # a name is never cut short
    for name in COLUMNS:
        systems.add_column(name, justify="right")
    if c.banded_systems is not None:
        systems.add_column(f"expected band{c.band:g}", justify="right")
    for i, s in enumerate(c.systems):
        row: list[RenderableType] = [text(s.name), *(num(getattr(s, k)) for k in COLUMNS)]
        if c.banded_systems is not None:
            row.append(num(c.banded_systems[i].expected))
        systems.add_row(*row)
    return systems


def _pairs_caption(c, corr, shortened: bool) -> str:
    """The caption of the compare pairs table: the test, the flags and the columns explained (``corr``: the
    correction, if any; ``shortened``: whether the pairs show shortened names)."""
    return (
        f"Two-sided paired {_test(c).display} over queries: "
        f"p on expected values, p obl on oblivious "
        f"ones; significant: {'p adj' if corr else 'p'} < {c.alpha:g}. FLIP: the oblivious "
        "means order the pair the other way round. undecidable: the \\[min, max] intervals "
        "of the means overlap, so tie orderings alone could reverse or level the comparison. "
        "P(A>B): probability that "
        "A's mean is above B's when both runs' ties are broken uniformly at random "
        "(independently): normal approximation from the exact mean and variance of the "
        "difference, and ≥ bound: Cantelli's distribution-free lower bound; both exact (1 or 0) "
        "where no tie can change the difference or the \\[min, max] intervals do not overlap."
        + (
            f" p adj: p adjusted across all {c.settings.get('family', len(c.pairs))} "
            f"{'tests' if 'family' in c.settings else 'pairs'} ({_CORRECTION_NAMES.get(corr, corr)})."
            if corr
            else ""
        )
        + (" A, B: the systems' names less what all of them share (…)." if shortened else "")
        + _inference_note(c)
    )


def _compare_pairs(c) -> Table:
    """The pairs table of ``tierank compare``, their flags as words."""
    corr = c.settings.get("correction")
    labels = distinct_labels([s.name for s in c.systems])
    shortened = any(k != v for k, v in labels.items())
    pairs = Table(
        title=f"pairs (A ranked above B by expected {c.measure})",
        caption=_pairs_caption(c, corr, shortened),
        caption_justify="left",
    )
    # the chosen test's statistic: t or W; none for the sampled tests (theirs is Δ expected)
    stat = _test(c).statistic
    for name in ("A", "B", "Δ expected", "Δ oblivious", *((stat,) if stat else ()), "p", "p obl"):
        pairs.add_column(
            name,
            justify="left" if name in ("A", "B") else "right",
            overflow="fold" if name in ("A", "B") else "ellipsis",
        )
    if corr:
        pairs.add_column("p adj", justify="right")
    pairs.add_column("P(A>B)", justify="right")
    pairs.add_column("≥ bound", justify="right")
    if c.band is not None:
        pairs.add_column(f"p band{c.band:g}" + (" adj" if corr else ""), justify="right")
    pairs.add_column("flags")
    for p in c.pairs:
        row = [
            text(labels[p.a]),
            text(labels[p.b]),
            num(p.diff_expected),
            num(p.diff_oblivious),
            *((num(p.t if stat == "t" else p.statistic, 3),) if stat else ()),
            pvalue(p.p),
            pvalue(p.p_oblivious),
        ]
        if corr:
            row.append(pvalue(p.p_adjusted))
        row += [num(p.p_a_above), num(p.p_a_above_bound)]
        if c.band is not None:
            row.append(pvalue(p.p_banded_adjusted if corr else p.p_banded))
        row.append(", ".join(p.flags))
        pairs.add_row(*row)
    return pairs


def _band_summary(b: Mapping) -> Table:
    """Significance before vs after banding, of ``band_summary`` ``b``."""
    band = Table(
        title=f"significance before vs after banding (rho = {b['rho']:g}, alpha = {b['alpha']:g})",
        caption=(
            "before: the unbanded runs' per-query expected values; after: the banded runs' "
            "(documents of a rank band tied). Percentages of all pairs."
        ),
        caption_justify="left",
    )
    for name in ("", "significant after", "not significant after"):
        band.add_column(name, justify="left" if not name else "right")
    cell = lambda k: f"{b[k]} ({b['pct_' + k]:.1f}%)"  # noqa: E731
    band.add_row("significant before", cell("kept"), cell("false_negatives") + " false neg.")
    band.add_row("not significant before", cell("false_positives") + " false pos.", cell("neither"))
    return band


def compare_tables(comparison) -> list[Table]:
    """The tables of ``tierank compare`` (a [`Comparison`][tierank.analysis.compare.Comparison]): systems, pairs
    (their flags as words), and the band summary if any.

    Examples
    --------
    >>> import io
    >>> from rich.console import Console
    >>> from tierank.analysis.compare import compare
    >>> cmp = compare({"A": {"q": {"x": 2.0, "y": 1.0}}, "B": {"q": {"x": 1.0, "y": 1.0}}},
    ...               {"q": {"x": 1}}, "P@1")
    >>> console = Console(width=160, record=True, file=io.StringIO())
    >>> for table in compare_tables(cmp):
    ...     console.print(table)
    >>> text = console.export_text()
    >>> "undecidable" in text and "tierank compare: P@1" in text
    True
    """
    c = comparison
    tables = [_compare_systems(c), _compare_pairs(c)]
    if c.band_summary is not None:
        tables.append(_band_summary(c.band_summary))
    return tables


def _leaderboard(c) -> Table:
    """The leaderboard table of ``tierank compare --leaderboard``: systems sorted by E[M]."""
    st = c.settings
    ci_name = {"t": "Student t", "percentile": "bootstrap percentile", "bca": "bootstrap BCa"}.get(
        st.get("ci"), st.get("ci")
    )
    sampled = st.get("ci") != "t"
    level = st.get("level", 0.95)
    board = Table(
        title=f"leaderboard: {c.measure}, {len(c.queries)} queries",
        caption=(
            f"Sorted by E[M], the mean over queries of the expectation over tie orderings; "
            f"\\[min, max]: pessimal/optimal tie orderings. CI: {level:.0%} {ci_name} interval of "
            f"E[M] over the query sample"
            + (f" ({st.get('resamples')} resamples, seed {st.get('seed')})" if sampled else "")
            + f". rank: by E[M]; rank obl: by the oblivious mean (tie-break "
            f"'{escape(str(st.get('tie_break', 'trec_eval')))}'); rank interval: {level:.0%} range "
            f"of the rank over {st.get('resamples')} query-bootstrap resamples (seed {st.get('seed')}"
            + (
                f"; each query's tie ordering redrawn from {st['tie_samples']} random tie breakings"
                if st.get("tie_samples")
                else ""
            )
            + "). "
            f"group: randomized Tukey HSD ({st.get('permutations')} permutations, seed "
            f"{st.get('seed')}, alpha {c.alpha:g}); systems sharing a letter are not separated. "
            + (
                f"Not separated from the best: {', '.join(escape(b) for b in c.best)}."
                if c.best
                else ""
            )
            + _inference_note(c)
        ),
        caption_justify="left",
    )
    _columns(
        board,
        (
            "system",
            "E[M]",
            "\\[min, max]",
            "CI",
            "rank",
            "rank obl",
            "rank interval",
            "group",
        ),
        ("system", "group"),
    )
    for s in c.systems:
        interval = "" if s.rank_low is None else f"{s.rank_low}-{s.rank_high}"
        board.add_row(
            escape(s.name),
            num(s.expected),
            f"\\[{num(s.min)}, {num(s.max)}]",
            f"\\[{num(s.ci_low)}, {num(s.ci_high)}]",
            str(s.rank),
            str(s.rank_oblivious) + (" *" if s.rank_oblivious != s.rank else ""),
            interval,
            s.group or "",
        )
    return board


def _order_flips(c) -> Table:
    """Every pair whose order flips between oblivious and expected means."""
    flips = [p for p in c.pairs if p.order_flip]
    st = c.settings
    corr = st.get("correction")
    out = Table(
        title=f"pairs whose order flips ({len(flips)} of {len(c.pairs)})",
        caption=(
            "A is above B by E[M] and below it by the oblivious mean (* in rank obl: a rank that "
            "differs from the rank by E[M])."
            + (
                f" p adj: adjusted across all {len(c.pairs)} pairs ({_CORRECTION_NAMES.get(corr, corr)})."
                if corr
                else ""
            )
        ),
        caption_justify="left",
    )
    p_name = f"p {'adj ' if corr else ''}({st.get('test', 't')})"
    for name in ("A", "B", "Δ expected", "Δ oblivious", p_name):
        out.add_column(name, justify="left" if name in ("A", "B") else "right")
    for p in flips:
        out.add_row(
            escape(p.a),
            escape(p.b),
            num(p.diff_expected),
            num(p.diff_oblivious),
            pvalue(p.p_adjusted if corr else p.p),
        )
    return out


def leaderboard_tables(comparison) -> list[Table]:
    """The tables of ``tierank compare --leaderboard``: systems sorted by E[M] with the tie interval,
    the CI over queries, ranks by expected and by oblivious mean, the bootstrap rank interval and the
    Tukey HSD group letters; then every pair whose order flips between oblivious and expected means.

    Examples
    --------
    >>> import io
    >>> from rich.console import Console
    >>> from tierank.analysis.compare import compare
    >>> runs = {"A": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 2.0, "y": 1.0}, "q3": {"x": 1.0, "y": 1.0}},
    ...         "B": {"q1": {"y": 2.0, "x": 1.0}, "q2": {"x": 1.0, "y": 1.0}, "q3": {"y": 2.0, "x": 1.0}}}
    >>> cmp = compare(runs, {q: {"x": 1} for q in ("q1", "q2", "q3")}, "P@1", leaderboard=True,
    ...               resamples=200, permutations=200)
    >>> console = Console(width=160, record=True, file=io.StringIO())
    >>> for table in leaderboard_tables(cmp):
    ...     console.print(table)
    >>> "leaderboard: P@1" in console.export_text()
    True
    """
    c = comparison
    return [_leaderboard(c), _order_flips(c)]


# tierank bands


def bands_table(rows: list[dict], paper: Sequence[dict] = ()) -> Table:
    """The table of ``tierank bands``: worst-case change per rho and measure (rows of
    [`worst_case_table`][tierank.analysis.banding.worst_case_table]), with the paper's value in brackets
    where ``paper`` (rows keyed by ``rho``) has the cell."""
    t = Table(
        title="worst-case metric change from rank banding (loss under permutation averaging)",
        caption="Bands b1 = 1, b(g+1) = ceil(rho b(g)); documents of a band tied. Values in brackets: the "
        "paper's Table 2 where it has the cell. AP has no such bound.",
        caption_justify="left",
    )
    cols = list(rows[0])
    for c in cols:
        t.add_column(c, justify="right")
    printed = {row["rho"]: row for row in paper}
    for r in rows:
        ref_row = printed.get(r["rho"], {})
        cells = []
        for c in cols:
            if c == "rho":
                cells.append(f"{r[c]:g}")
                continue
            ref = ref_row.get(c)
            cells.append(f"{r[c]:.4f}" + (f" [{ref:.4f}]" if ref is not None else ""))
        t.add_row(*cells)
    return t


# tierank measures


def measures_table(rows) -> Table:
    """The table of ``tierank measures``: (family, parameters, definition) rows of
    [`tierank.measures.describe`][tierank.measures.describe]."""
    table = Table(
        title="measures (write them as ir_measures does, e.g. nDCG@10, P(rel=2)@5, RBP(p=0.8))"
    )
    for col in ("measure", "parameters", "definition"):
        table.add_column(col)
    for row in rows:
        table.add_row(*(text(x) for x in row))
    return table


# tierank rerank


def rerank_table(result) -> Table:
    """The table of ``tierank rerank`` (the paper's Table 1), from a [`protocol`][tierank.hps.protocol] result."""
    st = result.settings
    t = Table(
        title=text(
            f"tierank rerank: {st['model']} on {Path(st['data']).name} ({st['queries']} queries, "
            f"{st['candidates']:,} candidates, batch {st['batch_size']}, {st['device']})"
        ),
        caption="FP32 = M of the fp32 regime; M_obl = tie-oblivious value (tie-break "
        f"'{st['tie_break']}'); E[M] = expectation over tie orderings; range = max - min; "
        "bias = M_obl - E[M]; tied = share of candidates in tie groups; model s = forward "
        "pass; scoring ms = scoring step alone; HPS overhead = extra scoring time over the "
        "low-precision twin, relative to the forward pass.",
        caption_justify="left",
    )
    _columns(
        t,
        (
            "measure",
            "regime",
            "FP32",
            "M_obl",
            "E[M]",
            "range",
            "bias",
            "tied %",
            "groups",
            "mean",
            "max",
            "model s",
            "score ms",
            "HPS overhead",
        ),
        ("measure", "regime"),
    )
    for first_row, r in _group_starts(result.rows, "measure"):
        ov = r["hps_overhead"]
        t.add_row(
            r["measure"] if first_row else "",
            r["variant"],
            value(r["fp32"]),
            *(value(r[c]) for c in table1.STATS[:4]),
            f"{100 * r['tied_share']:.1f}",
            f"{r['tie_groups']:,}",
            f"{r['mean_group']:.2f}",
            f"{r['max_group']:,}",
            f"{r['model_s']:.2f}",
            f"{r['scoring_ms']:.2f}",
            "-" if ov is None else f"{100 * ov:+.3f}%",
        )
    return t


__all__ = [
    "text",
    "distinct_labels",
    "count",
    "value",
    "num",
    "pvalue",
    "eval_table",
    "ties_tables",
    "sweep_table",
    "compare_tables",
    "bands_table",
    "measures_table",
    "rerank_table",
]
