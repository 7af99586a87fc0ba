"""Command line: ``tierank eval QRELS RUN -m nDCG@10 -m RR@10 ...``.

Bad input is reported as one line per problem on stderr (``file:line: reason``)
with exit code 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from .errors import TierankInputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tie-aware evaluation of retrieval runs: oblivious value, exact expectation, "
                       "min, max, range, bias and std over all orderings of tied scores.")

DEFAULT_MEASURES = ["nDCG@10", "RR@10", "AP", "P@10", "R@100"]


class Unjudged(str, Enum):
    nonrelevant = "nonrelevant"
    bounds = "bounds"
    condensed = "condensed"


class Fmt(str, Enum):
    table = "table"
    tsv = "tsv"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


def _fail(err: TierankInputError) -> None:
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    for p in err.problems:
        console.print(f"tierank: error: {p}", markup=False)
    raise typer.Exit(2)


def _n(count: int, one: str, many: str | None = None) -> str:
    """'1 query', '2 queries', '1,000 documents'."""
    return f"{count:,} {one if count == 1 else many or one + 's'}"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _table(result, per_query: bool, coverage=None) -> Table:
    t = result.ties
    policy = result.settings["tie_break"]
    caption = (f"{_n(t['queries'], 'query', 'queries')}, {_n(t['docs'], 'document')}. "
               f"Ties: {_n(t['groups'], 'tie group')}, {_n(t['tied_docs'], 'document')} in ties "
               f"({100 * t['share']:.1f}%), largest group {t['largest']:,}, "
               f"{_n(t['queries_with_ties'], 'query', 'queries')} with ties. oblivious = tie-break '{policy}'; "
               f"bias = oblivious - expected; std over tie orderings.")
    if result.bounds:
        caption += (" lower/upper: over tie orderings and every relevance of the unjudged retrieved "
                    "documents; residual: RBP's unjudged and unretrieved weight (Moffat & Zobel).")
    if coverage is not None:
        caption += (f" Judgments are incomplete: on average {100 * (1 - coverage):.1f}% of the top 10 is unjudged "
                    "(counted non-relevant); see Judged@10, and --unjudged bounds.")
    table = Table(title="tierank eval", caption=caption, caption_justify="left")
    if per_query:
        table.add_column("query")
    cols = result.columns
    for name in ("measure", *cols):
        table.add_column(name, justify="left" if name == "measure" else "right")
    for r in result.records(per_query=per_query):
        cells = [r["measure"], *(_fmt(r[c]) for c in cols)]
        table.add_row(*(([r["query"]] if per_query else []) + cells))
    return table


def _coverage(result, added: bool):
    """Judged@10 kept in the table only when unjudged documents can reach the top 10."""
    from dataclasses import replace

    from .measures import parse_measure

    judged10 = parse_measure("Judged@10")
    if judged10 not in result.measures:
        return result, None
    stats = result.stats[judged10]
    if float(stats.min.min()) >= 1.0:
        if added:
            result = replace(result, measures=[m for m in result.measures if m != judged10])
        return result, None
    return result, float(stats.expected.mean())


def _status(text: str):
    if sys.stderr.isatty():
        return Console(stderr=True).status(text)
    return nullcontext()


@app.command("eval")
def eval_cmd(
    qrels: Annotated[Path, typer.Argument(help="TREC qrels (qid iter docid grade) or BEIR qrels TSV; .gz ok")],
    run: Annotated[Path, typer.Argument(help="TREC run (qid Q0 docid rank score tag); .gz ok")],
    measure: Annotated[Optional[list[str]], typer.Option(
        "-m", "--measure", help="Measure as ir_measures writes it, repeatable (see `tierank measures`). "
                                f"Default: {' '.join(DEFAULT_MEASURES)}")] = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="Also report every query.")] = False,
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.table,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write to FILE (atomically).")] = None,
    tie_break: Annotated[str, typer.Option(
        "--tie-break", help="Order for the oblivious value: trec_eval (docno desc), input, docno, random:SEED.")
    ] = "trec_eval",
    candidates_only: Annotated[bool, typer.Option(
        "--candidates-only", help="N+ and ideal DCG from judged documents in the run only (reranking).")] = False,
    complete: Annotated[bool, typer.Option(
        "-c", "--complete", help="Average over all qrels queries; missing ones score 0 (trec_eval -c).")] = False,
    rel: Annotated[int, typer.Option("--rel", "-l", help="Minimum grade counted relevant (binary measures).")] = 1,
    unjudged: Annotated[Unjudged, typer.Option(
        "--unjudged", help="Unjudged documents: nonrelevant (trec_eval), bounds (also lower/upper bounds over "
                           "every relevance they could have; refused for AP, nDCG, Rprec), condensed (dropped).")
    ] = Unjudged.nonrelevant,
    condensed: Annotated[bool, typer.Option("--condensed", help="Same as --unjudged condensed (Sakai).")] = False,
) -> None:
    """Evaluate RUN against QRELS with tie-aware statistics."""
    from .evaluate import evaluate
    from .io.writers import render

    if condensed:
        unjudged = Unjudged.condensed
    measures = list(measure or DEFAULT_MEASURES)
    # the table shows judgment coverage next to the measures when the top 10 is incomplete
    add_judged = fmt is Fmt.table and unjudged is not Unjudged.condensed and "Judged@10" not in measures
    try:
        with _status("evaluating..."):
            result = evaluate(str(qrels), str(run), measures + ["Judged@10"] * add_judged, tie_break=tie_break,
                              rel=rel, complete=complete, candidates_only=candidates_only, unjudged=unjudged.value)
        if fmt is Fmt.table:
            coverage = None
            if unjudged is not Unjudged.condensed:
                result, coverage = _coverage(result, add_judged)
            _print_tables([_table(result, per_query, coverage)], output, (qrels, run))
        else:
            _emit(render(result, fmt.value, per_query), output, (qrels, run))
    except TierankInputError as e:
        _fail(e)


def _emit(text: str, output: Optional[Path], protect: tuple) -> None:
    from .io.writers import write_atomic

    if output is not None:
        write_atomic(output, text, protect=protect)
    else:
        sys.stdout.write(text)


def _print_tables(tables, output: Optional[Path], protect: tuple) -> None:
    from .io.writers import write_atomic

    if output is not None:
        console = Console(file=None, record=True, width=160, force_terminal=False)
        with console.capture():
            for t in tables:
                console.print(t)
        write_atomic(output, console.export_text(), protect=protect)
    else:
        console = Console(width=max(Console().width, 120))
        for t in tables:
            console.print(t)


def _split_run_qrels(a: Path, b: Path) -> tuple[Path, Path]:
    """(run, qrels) from two paths in either order: a run line has 6 fields, a qrels line 3 or 4."""
    from .io.readers import _check_path, _first_line

    def fields(p: Path) -> int:
        line = _first_line(_check_path(p))
        return len(line.split()) if line else 0

    fa, fb = fields(a), fields(b)
    if fa == 6 and fb != 6:
        return a, b
    if fb == 6 and fa != 6:
        return b, a
    raise TierankInputError(f"cannot tell the run (6 columns) from the qrels (3-4 columns): {a} has {fa}, {b} has {fb}")


@app.command("ties")
def ties_cmd(
    runs: Annotated[list[Path], typer.Argument(help="TREC run files (.gz ok)")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.table,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write to FILE (atomically).")] = None,
    top: Annotated[int, typer.Option("--top", help="Largest tie groups listed per run.")] = 3,
) -> None:
    """Tie prevalence and ordering defects per run and for the set (Yang, Moffat & Turpin, Table 1)."""
    from rich.progress import track

    from .analysis.prevalence import analyze
    from .io.readers import read_run
    from .io.writers import jsonable, render_records

    try:
        loaded = {}
        for p in track(runs, description="reading runs", disable=not sys.stderr.isatty(), console=Console(stderr=True)):
            loaded[p.name if p.name not in loaded else str(p)] = read_run(p, duplicates="keep")
        report = analyze(loaded, top=top)
        fields = ("name", "queries", "docs", "queries_with_ties", "tie_groups", "docs_in_ties",
                  "docs_tied_with_predecessor", "contradictions", "queries_with_contradictions",
                  "score_order_violations", "rank_order_violations", "duplicates")
        if fmt is Fmt.table:
            _print_tables(_ties_tables(report), output, tuple(runs))
        else:
            recs = [r.to_dict() for r in report.runs]
            if fmt is Fmt.jsonl:
                recs = recs + [{"name": "all", **report.summary}]
                text = "".join(json.dumps(jsonable(r), allow_nan=False) + "\n" for r in recs)
            else:
                text = render_records(recs, fields, fmt.value, document=report.to_dict())
            _emit(text, output, tuple(runs))
    except TierankInputError as e:
        _fail(e)


def _ties_tables(report) -> list:
    s = report.summary
    t1 = Table(title="ties: the share of systems, system-topics and documents affected",
               caption=f"{s['systems']} runs, {s['system_topics']:,} system-topics, {s['docs']:,} documents. "
                       "Documents tied = tied with their predecessor after re-sorting by score (the paper's "
                       "count). Contradiction: adjacent documents whose rank column says the opposite order.",
               caption_justify="left")
    for c in ("", "systems %", "system-topics %", "documents %"):
        t1.add_column(c, justify="left" if not c else "right")
    for label, key in (("tied scores", "tied_scores"), ("rank/score contradictions", "rank_score_contradictions")):
        v = s[key]
        t1.add_row(label, f"{v['systems_pct']:.1f}", f"{v['system_topics_pct']:.1f}", f"{v['docs_pct']:.2f}")
    t2 = Table(title="per run", caption="tied: documents tied with their predecessor; score order: adjacent lines "
               "whose score increases in file order; rank order: whose rank decreases; largest: the biggest tie "
               "group (size in query).", caption_justify="left")
    heads = ("run", "docs", "topics w/ ties", "tied %", "contradictions", "score order", "rank order",
             "duplicates", "largest")
    for h in heads:
        t2.add_column(h, justify="left" if h in ("run", "largest") else "right", no_wrap=h == "run")
    for r in report.runs:
        g = r.largest_groups[0] if r.largest_groups else None
        t2.add_row(r.name, f"{r.docs:,}", f"{r.queries_with_ties:,}/{r.queries:,}",
                   f"{100 * r.docs_tied_with_predecessor / max(r.docs, 1):.2f}", f"{r.contradictions:,}",
                   f"{r.score_order_violations:,}", f"{r.rank_order_violations:,}", f"{r.duplicates:,}",
                   f"{g['size']} in {g['query']}" if g else "-")
    return [t1, t2]


@app.command("sweep")
def sweep_cmd(
    first: Annotated[Path, typer.Argument(metavar="RUN", help="TREC run (either order: RUN QRELS or QRELS RUN)")],
    second: Annotated[Path, typer.Argument(metavar="QRELS", help="qrels")],
    measure: Annotated[Optional[list[str]], typer.Option("-m", "--measure", help="Measure, repeatable.")] = None,
    formats: Annotated[str, typer.Option(
        "--formats", help="Comma-separated score formats: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8 (per-query "
                          "affine), sigN (N significant digits), bandRHO (rank bands, e.g. band1.4).")
    ] = ",".join(("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "sig3", "sig2", "band1.4", "band2")),
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.table,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write to FILE (atomically).")] = None,
    tie_break: Annotated[str, typer.Option("--tie-break", help="Order for the oblivious value.")] = "trec_eval",
    candidates_only: Annotated[bool, typer.Option("--candidates-only")] = False,
    rel: Annotated[int, typer.Option("--rel", "-l")] = 1,
) -> None:
    """What would lower precision do to my evaluation? Re-express RUN's scores in each format and
    report ties, oblivious, expected, range and bias."""
    from rich.progress import Progress

    from .analysis.sweep import FIELDS, sweep
    from .io.writers import render_records

    try:
        run, qrels = _split_run_qrels(first, second)
        fmts = [f.strip() for f in formats.split(",") if f.strip()]
        with Progress(console=Console(stderr=True), disable=not sys.stderr.isatty(), transient=True) as prog:
            task = prog.add_task("sweeping formats", total=len(fmts))
            result = sweep(str(qrels), str(run), measure or ["nDCG@10", "RR@10", "AP@100"], fmts,
                           tie_break=tie_break, rel=rel, candidates_only=candidates_only,
                           progress=lambda f: prog.advance(task))
        if fmt is Fmt.table:
            t = Table(title=f"sweep: {run.name} re-expressed per score format",
                      caption="tie share: documents in tie groups; range = max - min over tie orderings; "
                              f"bias = oblivious ({tie_break}) - expected.", caption_justify="left")
            for h in ("format", "ties %", "largest", "measure", "oblivious", "expected", "min", "max", "range",
                      "bias"):
                t.add_column(h, justify="left" if h in ("format", "measure") else "right")
            prev = None
            for r in result.rows:
                first_row = r["format"] != prev
                t.add_row(r["format"] if first_row else "", f"{100 * r['tie_share']:.1f}" if first_row else "",
                          f"{r['largest_group']:,}" if first_row else "", r["measure"],
                          *(_fmt(r[c]) for c in ("oblivious", "expected", "min", "max", "range", "bias")),
                          end_section=False)
                prev = r["format"]
            _print_tables([t], output, (first, second))
        else:
            _emit(render_records(result.rows, FIELDS, fmt.value, document={"settings": result.settings,
                                                                             "rows": result.rows}),
                  output, (first, second))
    except TierankInputError as e:
        _fail(e)


@app.command("compare")
def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Two or more TREC runs (one per system)")],
    qrels: Annotated[Path, typer.Option("--qrels", help="qrels file")],
    measure: Annotated[str, typer.Option("-m", "--measure", help="One measure, e.g. nDCG@10")] = "nDCG@10",
    band: Annotated[Optional[float], typer.Option(
        "--band", help="Also band every run with geometric rank bands RHO > 1 and report which significant "
                       "pairs stay significant (Yang, Moffat & Turpin, Table 3 / Fig. 4).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the paired t-tests.")] = 0.05,
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="table or json.")] = Fmt.table,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Write to FILE (atomically).")] = None,
    tie_break: Annotated[str, typer.Option("--tie-break", help="Order for the oblivious value.")] = "trec_eval",
    candidates_only: Annotated[bool, typer.Option("--candidates-only")] = False,
    complete: Annotated[bool, typer.Option("-c", "--complete")] = False,
    rel: Annotated[int, typer.Option("--rel", "-l")] = 1,
) -> None:
    """Systems side by side with E[M] and [min, max]; paired t-tests on per-query expected values; every
    pair whose order flips between oblivious and expected values, and every pair the ties leave undecidable."""
    from .analysis.compare import compare, records, render_tables
    from .io.readers import read_run
    from .io.writers import jsonable

    try:
        names = {}
        for p in runs:
            names[p.name if p.name not in names else str(p)] = read_run(p)
        with _status("comparing..."):
            cmp = compare(names, str(qrels), measure, tie_break=tie_break, rel=rel, complete=complete,
                          candidates_only=candidates_only, alpha=alpha, band=band)
        protect = (*runs, qrels)
        if fmt is Fmt.table:
            _print_tables(render_tables(cmp), output, protect)
        elif fmt is Fmt.json:
            _emit(json.dumps(jsonable(records(cmp)), indent=2, allow_nan=False) + "\n", output, protect)
        else:
            raise TierankInputError(f"compare writes table or json, not {fmt.value}")
    except TierankInputError as e:
        _fail(e)


@app.command("bands")
def bands_cmd(
    rho: Annotated[str, typer.Option("--rho", help="Comma-separated band parameters > 1.")] = "1.1,1.2,1.4,1.7,2.0",
    p: Annotated[str, typer.Option("--p", help="Comma-separated RBP persistence values.")] = "0.5,0.85",
    depth: Annotated[int, typer.Option("--depth", help="Ranking depth.")] = 1000,
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.table,
) -> None:
    """Worst-case change of RR and RBP that geometric rank banding can cause under permutation averaging
    (Yang, Moffat & Turpin, Table 2)."""
    from .analysis.banding import PAPER_TABLE2, worst_case_table
    from .io.writers import render_records

    try:
        try:
            rhos = tuple(float(x) for x in rho.split(","))
            ps = tuple(float(x) for x in p.split(","))
        except ValueError:
            raise TierankInputError(f"--rho and --p take comma-separated numbers, got {rho!r} and {p!r}") from None
        rows = worst_case_table(rhos, ps, depth=depth)
        if fmt is not Fmt.table:
            sys.stdout.write(render_records(rows, tuple(rows[0]), fmt.value))
            return
        t = Table(title="worst-case metric change from rank banding (loss under permutation averaging)",
                  caption="Bands b1 = 1, b(g+1) = ceil(rho b(g)); documents of a band tied. Values in brackets: the "
                          "paper's Table 2 where it has the cell. AP has no such bound.", caption_justify="left")
        cols = list(rows[0])
        for c in cols:
            t.add_column(c, justify="right")
        printed = {row["rho"]: row for row in PAPER_TABLE2}
        for r in rows:
            paper = printed.get(r["rho"], {})
            cells = []
            for c in cols:
                if c == "rho":
                    cells.append(f"{r[c]:g}")
                    continue
                ref = paper.get(c)
                cells.append(f"{r[c]:.4f}" + (f" [{ref:.4f}]" if ref is not None else ""))
            t.add_row(*cells)
        Console().print(t)
    except TierankInputError as e:
        _fail(e)


plot_app = typer.Typer(no_args_is_help=True, help="Figures (PNG and SVG): tierank plot cutoff|ranges|sweep|ties.")
report_app = typer.Typer(no_args_is_help=True, help="One self-contained HTML page: tierank report eval|sweep|compare.")
app.add_typer(plot_app, name="plot")
app.add_typer(report_app, name="report")

OutStem = Annotated[Path, typer.Option("-o", "--output", help="Output stem: writes STEM.png and STEM.svg.")]
OutHtml = Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write (atomically).")]
Regimes = Annotated[Optional[str], typer.Option(
    "--regimes", help="Comma-separated score formats to re-express each run in (fp32, bf16, fp8_e4m3, int8, "
                      "sig3, band1.4, ...), one curve per run and format.")]


def _runs_by_name(paths: list[Path], regimes: Optional[str], duplicates: str = "error") -> dict:
    """Runs keyed by file name; with regimes, one entry per (run, format)."""
    from .analysis.precision import requantize_run
    from .io.readers import read_run

    out = {}
    for p in paths:
        name = p.name if p.name not in out else str(p)
        run = read_run(p, duplicates=duplicates)
        if not regimes:
            out[name] = run
            continue
        for fmt in (f.strip() for f in regimes.split(",") if f.strip()):
            out[fmt if len(paths) == 1 else f"{name} [{fmt}]"] = requantize_run(run, fmt)
    return out


def _save(fig, stem: Path, protect: tuple) -> None:
    from .report.plots import save_figure

    for ext in ("png", "svg"):
        target = stem.with_name(stem.name + "." + ext)
        if any(target.exists() and Path(p).exists() and target.resolve() == Path(p).resolve() for p in protect):
            raise TierankInputError(f"{target}: refusing to overwrite an input file with the figure")
    for p in save_figure(fig, stem):
        typer.echo(str(p))


@plot_app.command("cutoff")
def plot_cutoff_cmd(
    qrels: Annotated[Path, typer.Argument(help="qrels")],
    runs: Annotated[list[Path], typer.Argument(help="one or more runs")],
    output: OutStem,
    family: Annotated[str, typer.Option("-m", "--measure", help="Measure family: nDCG, RR, AP, P, R, ...")] = "nDCG",
    kmax: Annotated[int, typer.Option("--kmax", help="Largest cutoff k.")] = 20,
    regimes: Regimes = None,
    tie_break: Annotated[str, typer.Option("--tie-break")] = "trec_eval",
) -> None:
    """Metric vs cutoff (the first paper's Figure 2): expected line, oblivious markers, [min, max] band."""
    from .report.plots import cutoff_curves, plot_cutoff

    try:
        if kmax <= 0:
            raise TierankInputError(f"--kmax must be a positive integer, got {kmax}")
        curves = cutoff_curves(str(qrels), _runs_by_name(runs, regimes), family, kmax, tie_break=tie_break)
        _save(plot_cutoff(curves), output, (qrels, *runs))
    except TierankInputError as e:
        _fail(e)


@plot_app.command("ranges")
def plot_ranges_cmd(
    runs: Annotated[list[Path], typer.Argument(help="two or more runs")],
    qrels: Annotated[Path, typer.Option("--qrels", help="qrels")],
    output: OutStem,
    measure: Annotated[str, typer.Option("-m", "--measure")] = "nDCG@10",
    regimes: Regimes = None,
) -> None:
    """Every system as a segment from min to max, oblivious and expected marked (second paper's Figure 2)."""
    from .analysis.compare import compare
    from .report.plots import plot_ranges

    try:
        _save(plot_ranges(compare(_runs_by_name(runs, regimes), str(qrels), measure)), output, (qrels, *runs))
    except TierankInputError as e:
        _fail(e)


@plot_app.command("sweep")
def plot_sweep_cmd(
    first: Annotated[Path, typer.Argument(metavar="RUN")],
    second: Annotated[Path, typer.Argument(metavar="QRELS")],
    output: OutStem,
    measure: Annotated[str, typer.Option("-m", "--measure")] = "nDCG@10",
    formats: Annotated[str, typer.Option("--formats")] = "fp32,fp16,bf16,fp8_e4m3,fp8_e5m2,int8,sig3,band1.4",
) -> None:
    """Range, bias and tie share of a measure against the score format."""
    from .analysis.sweep import sweep
    from .report.plots import plot_sweep

    try:
        run, qrels = _split_run_qrels(first, second)
        result = sweep(str(qrels), str(run), [measure], [f.strip() for f in formats.split(",") if f.strip()])
        _save(plot_sweep(result, measure), output, (first, second))
    except TierankInputError as e:
        _fail(e)


@plot_app.command("ties")
def plot_ties_cmd(
    runs: Annotated[list[Path], typer.Argument(help="runs")],
    output: OutStem,
    regimes: Regimes = None,
) -> None:
    """Distribution of tie-group sizes per run or regime."""
    from .report.plots import plot_tie_structure

    try:
        _save(plot_tie_structure(_runs_by_name(runs, regimes, duplicates="keep")), output, tuple(runs))
    except TierankInputError as e:
        _fail(e)


@report_app.command("eval")
def report_eval_cmd(
    qrels: Annotated[Path, typer.Argument()],
    run: Annotated[Path, typer.Argument()],
    output: OutHtml,
    measure: Annotated[Optional[list[str]], typer.Option("-m", "--measure")] = None,
    family: Annotated[str, typer.Option("--curve", help="Measure family of the cutoff figure ('' for none).")] = "nDCG",
    kmax: Annotated[int, typer.Option("--kmax")] = 20,
    tie_break: Annotated[str, typer.Option("--tie-break")] = "trec_eval",
) -> None:
    """An evaluation: aggregate table, ties, the widest per-query ranges, the cutoff figure."""
    from .evaluate import evaluate
    from .report.html import eval_report, write_report
    from .report.plots import cutoff_curves

    try:
        res = evaluate(str(qrels), str(run), measure or DEFAULT_MEASURES, tie_break=tie_break)
        curves = cutoff_curves(str(qrels), {run.name: str(run)}, family, kmax, tie_break=tie_break) if family else None
        typer.echo(str(write_report(output, eval_report(res, curves), protect=(qrels, run))))
    except TierankInputError as e:
        _fail(e)


@report_app.command("sweep")
def report_sweep_cmd(
    first: Annotated[Path, typer.Argument(metavar="RUN")],
    second: Annotated[Path, typer.Argument(metavar="QRELS")],
    output: OutHtml,
    measure: Annotated[Optional[list[str]], typer.Option("-m", "--measure")] = None,
    formats: Annotated[str, typer.Option("--formats")] = "fp32,fp16,bf16,fp8_e4m3,fp8_e5m2,int8,sig3,band1.4",
) -> None:
    """A precision sweep: ties and every measure's range and bias per score format."""
    from .analysis.sweep import sweep
    from .report.html import sweep_report, write_report

    try:
        run, qrels = _split_run_qrels(first, second)
        ms = measure or ["nDCG@10", "RR@10"]
        result = sweep(str(qrels), str(run), ms, [f.strip() for f in formats.split(",") if f.strip()])
        typer.echo(str(write_report(output, sweep_report(result, ms), protect=(first, second))))
    except TierankInputError as e:
        _fail(e)


@report_app.command("compare")
def report_compare_cmd(
    runs: Annotated[list[Path], typer.Argument()],
    qrels: Annotated[Path, typer.Option("--qrels")],
    output: OutHtml,
    measure: Annotated[str, typer.Option("-m", "--measure")] = "nDCG@10",
    band: Annotated[Optional[float], typer.Option("--band")] = None,
    regimes: Regimes = None,
) -> None:
    """A system comparison: ranges figure, systems and pairs with flags, band summary."""
    from .analysis.compare import compare
    from .report.html import compare_report, write_report

    try:
        cmp = compare(_runs_by_name(runs, regimes), str(qrels), measure, band=band)
        typer.echo(str(write_report(output, compare_report(cmp), protect=(qrels, *runs))))
    except TierankInputError as e:
        _fail(e)


@report_app.command("rerank")
def report_rerank_cmd(
    table: Annotated[Path, typer.Argument(help="table.json written by `tierank rerank -o DIR`")],
    output: OutHtml,
) -> None:
    """The rerank protocol's Table 1 with a ranges figure per measure."""
    from .report.html import rerank_report, write_report

    try:
        try:
            doc = json.loads(table.read_text())
            if not isinstance(doc, dict) or "rows" not in doc or "settings" not in doc:
                raise ValueError("no 'settings' and 'rows'")
        except OSError as exc:
            raise TierankInputError(f"{table}: cannot read ({exc.strerror})") from None
        except ValueError as exc:
            raise TierankInputError(f"{table}: not a table.json of `tierank rerank` ({exc})") from None
        typer.echo(str(write_report(output, rerank_report(doc), protect=(table,))))
    except TierankInputError as e:
        _fail(e)


@app.command("rerank")
def rerank_cmd(
    data: Annotated[Path, typer.Option("--data", help="BEIR-layout directory: corpus.jsonl, queries.jsonl, qrels")],
    model: Annotated[str, typer.Option("--model", help="Model: minilm, smollm2-yesno, smollm2-rank1, "
                                                         "biencoder:PATH, cross:PATH, yesno:PATH, rank1:PATH")],
    candidates: Annotated[Optional[Path], typer.Option(
        "--candidates", help="First-stage TREC run to rerank (default DATA/candidates.run)")] = None,
    regimes: Annotated[str, typer.Option(
        "--regimes", help="Comma-separated: fp32, fp16, bf16, fp16->fp32, bf16->fp32; generative models also "
                          "bf16->fp32:head (head in FP32); bi-encoders also emb-int8, emb-binary, "
                          "emb-binary+rescore@K, onnx-int8 (minilm)")] = "fp32,bf16,bf16->fp32",
    measure: Annotated[Optional[list[str]], typer.Option(
        "-m", "--measure", help="Measure, repeatable. Default: nDCG@10 RR@10")] = None,
    output: Annotated[Optional[Path], typer.Option(
        "-o", "--output", help="Output directory: runs/ (one TREC run per regime, exact scores), "
                               "table.tsv, table.json, cache/")] = None,
    qrels: Annotated[Optional[Path], typer.Option("--qrels", help="qrels (default DATA/qrels.txt)")] = None,
    cache: Annotated[Optional[Path], typer.Option("--cache", help="Score cache directory (default OUT/cache)")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", "-b", help="Pairs / texts per forward pass "
                                                                         "(recorded: it changes low-precision scores)")] = 16,
    queries: Annotated[str, typer.Option("--queries", help="judged (default: queries with judgments) or all")] = "judged",
    depth: Annotated[Optional[int], typer.Option("--depth", help="Rerank the top N candidates of each query")] = None,
    max_queries: Annotated[Optional[int], typer.Option("--max-queries", help="Only the first N queries")] = None,
    device: Annotated[str, typer.Option("--device", help="auto (CUDA when present), cpu, cuda, cuda:N")] = "auto",
    budget: Annotated[int, typer.Option("--budget", help="Rank1-style: reasoning tokens per pair")] = 64,
    max_doc_tokens: Annotated[int, typer.Option("--max-doc-tokens", help="Generative: document truncation")] = 256,
    threads: Annotated[Optional[int], typer.Option("--threads", help="torch CPU threads")] = None,
    tie_break: Annotated[str, typer.Option("--tie-break", help="Order for the oblivious value.")] = "trec_eval",
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Format of the table on stdout.")] = Fmt.table,
) -> None:
    """The low-precision reranking protocol (the paper's Table 1): score every candidate under every
    precision regime, write one run per regime, report M at FP32 and per regime M_obl, E[M], range,
    bias, tie statistics and scoring time. Scores are cached; an interrupted run resumes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from .errors import TierankError
    from .hps.protocol import TABLE_FIELDS, rerank
    from .io.writers import jsonable, render_records, write_atomic

    if output is None and cache is None:
        _fail(TierankInputError("give -o/--output DIR (runs, table and cache are written there)"))
    import os

    os.environ.setdefault("TQDM_DISABLE", "1")  # model loaders' tqdm bars (GGUF dequantization); rich shows progress
    measures = list(measure or ["nDCG@10", "RR@10"])
    console = Console(stderr=True)
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TimeRemainingColumn(), console=console, disable=not sys.stderr.isatty()) as prog:
            def progress(label: str, total: int):
                task = prog.add_task(f"scoring {label}", total=total)
                return lambda: prog.advance(task)

            result = rerank(data, model, regimes, measures, out_dir=output, candidates=candidates, qrels=qrels,
                            cache_dir=cache, batch_size=batch_size, queries=queries, depth=depth,
                            max_queries=max_queries, device=device, budget=budget, max_doc_tokens=max_doc_tokens,
                            tie_break=tie_break, progress=progress, threads=threads)
    except TierankInputError as e:
        _fail(e)
    except TierankError as e:
        _fail(TierankInputError(str(e)))
    except KeyboardInterrupt:
        console.print("tierank: interrupted; scores so far are cached, run the same command to resume",
                      markup=False, highlight=False)
        raise typer.Exit(130)
    doc = {"settings": result.settings, "rows": result.rows,
           "runs": {k: str(v) for k, v in result.runs.items()},
           "reasoning": {k: str(v) for k, v in result.reasoning.items()}, "ties": result.ties}
    if output is not None:
        write_atomic(output / "table.tsv", render_records(result.rows, TABLE_FIELDS, "tsv"))
        write_atomic(output / "table.json", json.dumps(jsonable(doc), indent=2) + "\n")
    if fmt is not Fmt.table:
        sys.stdout.write(render_records(result.rows, TABLE_FIELDS, fmt.value, document=doc))
        return
    Console(width=max(Console().width, 180)).print(_rerank_table(result))


def _rerank_table(result) -> Table:
    st = result.settings
    t = Table(title=f"tierank rerank: {st['model']} on {Path(st['data']).name} ({st['queries']} queries, "
                    f"{st['candidates']:,} candidates, batch {st['batch_size']}, {st['device']})",
              caption="FP32 = M of the fp32 regime; M_obl = tie-oblivious value (tie-break "
                      f"'{st['tie_break']}'); E[M] = expectation over tie orderings; range = max - min; "
                      "bias = M_obl - E[M]; tied = share of candidates in tie groups; model s = forward "
                      "pass; scoring ms = scoring step alone; HPS overhead = extra scoring time over the "
                      "low-precision twin, relative to the forward pass.", caption_justify="left")
    for h in ("measure", "regime", "FP32", "M_obl", "E[M]", "range", "bias", "tied %", "groups", "mean", "max",
              "model s", "score ms", "HPS overhead"):
        t.add_column(h, justify="left" if h in ("measure", "regime") else "right")
    prev = None
    for r in result.rows:
        ov = r["hps_overhead"]
        t.add_row(r["measure"] if r["measure"] != prev else "", r["variant"], _fmt(r["fp32"]), _fmt(r["oblivious"]),
                  _fmt(r["expected"]), _fmt(r["range"]), _fmt(r["bias"]), f"{100 * r['tied_share']:.1f}",
                  f"{r['tie_groups']:,}", f"{r['mean_group']:.2f}", f"{r['max_group']:,}", f"{r['model_s']:.2f}",
                  f"{r['scoring_ms']:.2f}", "-" if ov is None else f"{100 * ov:+.3f}%")
        prev = r["measure"]
    return t


@app.command("measures")
def measures_cmd() -> None:
    """List the supported measures (generated from the registry)."""
    from .measures import describe

    table = Table(title="measures (write them as ir_measures does, e.g. nDCG@10, P(rel=2)@5, RBP(p=0.8))")
    for col in ("measure", "parameters", "definition"):
        table.add_column(col)
    for row in describe():
        table.add_row(*row)
    Console().print(table)


@app.command("example")
def example_cmd(
    which: Annotated[str, typer.Argument(help="qrels, run or dir")] = "dir",
) -> None:
    """Print the path of the shipped example (the tie of the paper's Figure 1)."""
    base = resources.files("tierank") / "examples"
    paths = {"qrels": base / "figure1.qrels", "run": base / "figure1.run", "dir": base}
    if which not in paths:
        _fail(TierankInputError(f"unknown example file {which!r}; accepted: qrels, run, dir"))
    typer.echo(str(paths[which]))


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
