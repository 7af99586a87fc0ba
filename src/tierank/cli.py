"""Command line: ``tierank eval QRELS RUN -m nDCG@10 -m RR@10 ...``.

Bad input is reported as one line per problem on stderr (``file:line: reason``)
with exit code 2, never a traceback.
"""

from __future__ import annotations

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


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _table(result, per_query: bool, coverage=None) -> Table:
    t = result.ties
    policy = result.settings["tie_break"]
    caption = (f"{t['queries']} queries, {t['docs']:,} documents. Ties: {t['groups']:,} tie groups, "
               f"{t['tied_docs']:,} documents in ties ({100 * t['share']:.1f}%), largest group {t['largest']:,}, "
               f"{t['queries_with_ties']} queries with ties. oblivious = tie-break '{policy}'; "
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
    from .io.writers import render, write_atomic

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
            if output is not None:
                console = Console(file=None, record=True, width=160, force_terminal=False)
                with console.capture():
                    console.print(_table(result, per_query, coverage))
                write_atomic(output, console.export_text(), protect=(qrels, run))
            else:
                Console(width=max(Console().width, 120)).print(_table(result, per_query, coverage))
            return
        text = render(result, fmt.value, per_query)
        if output is not None:
            write_atomic(output, text, protect=(qrels, run))
        else:
            sys.stdout.write(text)
    except TierankInputError as e:
        _fail(e)


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
