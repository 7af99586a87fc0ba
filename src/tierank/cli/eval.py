"""`tierank eval`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..io.writers import check_output
from . import app
from .common import (DEFAULT_MEASURES, CandidatesOnly, Complete, Fmt, Format, Output, Rel, TieBreakOption, Unjudged,
                     emit, input_errors, measures_option, print_tables, status)


def _coverage(result, added: bool):
    """Judged@10 kept in the table only when unjudged documents can reach the top 10."""
    from dataclasses import replace

    from ..measures import parse_measure

    judged10 = parse_measure("Judged@10")
    if judged10 not in result.measures:
        return result, None
    stats = result.stats[judged10]
    if float(stats.min.min()) >= 1.0:
        if added:
            result = replace(result, measures=[m for m in result.measures if m != judged10])
        return result, None
    return result, float(stats.expected.mean())


@app.command("eval")
@input_errors
def eval_cmd(
    qrels: Annotated[Path, typer.Argument(help="TREC qrels (qid iter docid grade) or BEIR qrels TSV; .gz ok")],
    run: Annotated[Path, typer.Argument(help="TREC run (qid Q0 docid rank score tag); .gz ok")],
    measure: measures_option(DEFAULT_MEASURES) = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="Also report every query.")] = False,
    fmt: Format = Fmt.table,
    output: Output = None,
    tie_break: TieBreakOption = "trec_eval",
    candidates_only: CandidatesOnly = False,
    complete: Complete = False,
    rel: Rel = 1,
    unjudged: Annotated[Unjudged, typer.Option(
        "--unjudged", help="Unjudged documents: nonrelevant (trec_eval), bounds (also lower/upper bounds over "
                           "every relevance they could have; refused for AP, nDCG, Rprec), condensed (dropped).")
    ] = Unjudged.nonrelevant,
    condensed: Annotated[bool, typer.Option("--condensed", help="Same as --unjudged condensed (Sakai).")] = False,
) -> None:
    """Evaluate RUN against QRELS with tie-aware statistics."""
    from ..evaluate import evaluate
    from ..io.writers import render
    from ..report.terminal import eval_table

    check_output(output, (qrels, run))
    if condensed:
        unjudged = Unjudged.condensed
    measures = list(measure or DEFAULT_MEASURES)
    # the table shows judgment coverage next to the measures when the top 10 is incomplete
    add_judged = fmt is Fmt.table and unjudged is not Unjudged.condensed and "Judged@10" not in measures
    with status("evaluating..."):
        result = evaluate(str(qrels), str(run), measures + ["Judged@10"] * add_judged, tie_break=tie_break,
                          rel=rel, complete=complete, candidates_only=candidates_only, unjudged=unjudged.value)
    if fmt is Fmt.table:
        coverage = None
        if unjudged is not Unjudged.condensed:
            result, coverage = _coverage(result, add_judged)
        print_tables([eval_table(result, per_query, coverage)], output, (qrels, run))
    else:
        emit(render(result, fmt.value, per_query), output, (qrels, run))
