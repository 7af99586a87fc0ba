"""`tierank similarity RUN_A RUN_B`: tie-aware run similarity (`tierank.analysis.similarity`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..analysis.similarity import DEFAULT_P, FIELDS
from ..io.writers import check_output
from .app import app
from .common import (
    Fmt,
    Format,
    Output,
    emit,
    input_errors,
    note,
    output_format,
    print_tables,
    swap_check,
)

#: the columns of the table: (field, heading); the RBO range is printed as min-max (the other formats
#: have every field: the bounds of RBO, the range of the overlap)
TABLE_COLUMNS = (
    ("rbo", "RBO"),
    ("rbo_w", "RBO^w"),
    ("rbo_a", "RBO^a"),
    ("rbo_b", "RBO^b"),
    ("rbo_expected", "E[RBO]"),
    ("rbo_lo", "RBO range"),
    ("tau_b", "tau-b"),
    ("tau_ap", "tau-AP"),
    ("overlap", "ovl@k"),
    ("overlap_expected", "E[ovl]"),
)


def similarity_table(result, per_query: bool):
    """The rich table of a `Similarity`."""
    from rich.table import Table

    from ..report.terminal import count, num, text

    s = result.settings
    depth = "whole runs" if s["depth"] is None else f"depth {s['depth']}"
    t = Table(
        title=text(
            f"{s['a']} vs {s['b']}: RBO p={s['p']:g} ({depth}), k={s['k']}, "
            f"{count(s['queries'], 'shared query', 'shared queries')}"
        )
    )
    t.add_column("query")
    for _, head in TABLE_COLUMNS:
        t.add_column(head, justify="right", no_wrap=True)
    rows = (result.per_query if per_query else []) + [result.mean]
    for r in rows:
        cells = []
        for f, _ in TABLE_COLUMNS:
            if f.endswith("_lo"):
                cells.append(f"{num(r[f])}-{num(r[f[:-3] + '_hi'])}")
            else:
                cells.append(num(r[f]))
        t.add_row(text(r["qid"]), *cells)
    return t


@app.command("similarity")
@input_errors
def similarity_cmd(
    ctx: typer.Context,
    run_a: Annotated[
        Path, typer.Argument(metavar="RUN_A", help="TREC run (.gz ok); the reference of tau-AP")
    ],
    run_b: Annotated[Path, typer.Argument(metavar="RUN_B", help="TREC run compared to it")],
    p: Annotated[float, typer.Option("--p", help="RBO's persistence, in (0, 1).")] = DEFAULT_P,
    depth: Annotated[
        int | None,
        typer.Option(
            "--depth", help="Evaluate RBO on the prefixes to this depth (default: the whole runs)."
        ),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="The cutoff of the overlap at k.")] = 10,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also report every query.")
    ] = False,
    fmt: Format = Fmt("table"),
    output: Output = None,
) -> None:
    """How far apart are two rankings? Rank-biased overlap (RBO) with Corsi and Urbano's tie treatments,
    its exact expected value, min and max over tie orderings; Kendall's tau-b, tau-AP and overlap at k; per
    query and averaged over the queries both runs answer."""
    from ..analysis.similarity import similarity
    from ..report.formats import render_records

    fmt = output_format(ctx, fmt, output, Fmt)
    protect = (run_a, run_b)
    if output is not None:
        check_output(output, protect)
    with swap_check(None, [run_a, run_b], "tierank similarity RUN_A RUN_B"):
        result = similarity(str(run_a), str(run_b), p=p, depth=depth, k=k)
    if result.only_a or result.only_b:
        note(
            f"{len(result.only_a)} queries only in {run_a} and {len(result.only_b)} only in {run_b}: "
            "left out of the per-query values and the mean"
        )
    if not result.per_query:
        from ..errors import TierankInputError

        raise TierankInputError(f"{run_a} and {run_b} share no query")
    records = (result.per_query if per_query else []) + [result.mean]
    how = str(getattr(fmt, "value", fmt))  # the Fmt choice (a dynamic Enum)
    if how == "table":
        print_tables([similarity_table(result, per_query)], output, protect)
    elif how == "json":
        doc = result.to_dict()
        if not per_query:
            doc.pop("queries")
        emit(render_records(records, FIELDS, "json", document=doc), output, protect)
    elif how == "jsonl":
        from ..report.formats.grouped import jsonable

        emit(
            "".join(
                json.dumps({f: jsonable(r[f]) for f in FIELDS}, allow_nan=False) + "\n"
                for r in records
            ),
            output,
            protect,
        )
    else:
        emit(render_records(records, FIELDS, how), output, protect)
