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


def _table(result, per_query: bool) -> Table:
    t = result.ties
    policy = result.settings["tie_break"]
    caption = (f"{t['queries']} queries, {t['docs']:,} documents. Ties: {t['groups']:,} tie groups, "
               f"{t['tied_docs']:,} documents in ties ({100 * t['share']:.1f}%), largest group {t['largest']:,}, "
               f"{t['queries_with_ties']} queries with ties. oblivious = tie-break '{policy}'; "
               f"bias = oblivious - expected; std over tie orderings.")
    table = Table(title="tierank eval", caption=caption, caption_justify="left")
    if per_query:
        table.add_column("query")
    for name in ("measure", "oblivious", "expected", "min", "max", "range", "bias", "std"):
        table.add_column(name, justify="left" if name == "measure" else "right")
    for r in result.records(per_query=per_query):
        cells = [r["measure"], *(_fmt(r[c]) for c in ("oblivious", "expected", "min", "max", "range", "bias", "std"))]
        table.add_row(*(([r["query"]] if per_query else []) + cells),
                      end_section=per_query and r["query"] != "all" and False)
    return table


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
) -> None:
    """Evaluate RUN against QRELS with tie-aware statistics."""
    from .evaluate import evaluate
    from .io.writers import render, write_atomic

    try:
        with _status("evaluating..."):
            result = evaluate(str(qrels), str(run), measure or DEFAULT_MEASURES, tie_break=tie_break,
                              rel=rel, complete=complete, candidates_only=candidates_only)
        if fmt is Fmt.table:
            if output is not None:
                console = Console(file=None, record=True, width=140, force_terminal=False)
                with console.capture():
                    console.print(_table(result, per_query))
                write_atomic(output, console.export_text(), protect=(qrels, run))
            else:
                Console().print(_table(result, per_query))
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
