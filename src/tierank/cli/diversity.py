"""`tierank diversity QRELS RUN -m alpha_nDCG@10 ...`: intent-aware measures on subtopic qrels
(`tierank.measures.diversity`), an alias of ``tierank eval`` for them with its own tab-separated
table (``tierank eval QRELS RUN -m alpha_nDCG@10`` gives every output format)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..settings import EvalSettings
from .app import app
from .common import MAX_SAMPLES, input_errors
from .options import FROM_OPTIONS, Offer, with_settings

COLUMNS = ("measure", "query", "oblivious", "expected", "min", "max", "std", "method")


@app.command("diversity")
@input_errors
@with_settings(
    settings=Offer(
        EvalSettings,
        ("samples", "seed", "exact_limit"),
        help={
            "samples": "Tie orderings drawn where too many to enumerate (at most "
            f"{MAX_SAMPLES:,}).",
        },
    )
)
def diversity_cmd(
    qrels: Annotated[
        Path,
        typer.Argument(metavar="QRELS", help="Subtopic qrels: qid subtopic docid grade (.gz ok)"),
    ],
    run: Annotated[Path, typer.Argument(metavar="RUN", help="TREC run (.gz ok)")],
    measure: Annotated[
        list[str],
        typer.Option(
            "-m",
            "--measure",
            help="Intent-aware measure, as ir_measures names it (alpha_nDCG@10, ERR_IA@20, nERR_IA, "
            "NRBP, P_IA@10, AP_IA, StRecall@10; repeatable).",
        ),
    ],
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also report every query.")
    ] = False,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Intent-aware (diversity) measures on subtopic qrels, tie-aware: the oblivious value and the expected
    value, min, max and std over tie orderings, per measure (tab-separated), averaged over the run's
    judged queries."""
    from ..evaluate import evaluate_diversity

    res = evaluate_diversity(
        qrels,
        run,
        measure,
        samples=settings.samples,
        seed=settings.seed,
        limit=settings.exact_limit,
    )
    lines = ["\t".join(COLUMNS)]
    for name in res.stats:
        method = res.stats[name].method
        if per_query:
            for q, v in res.per_query(name).items():
                lines.append("\t".join([name, q, *(f"{v[f]:.4f}" for f in COLUMNS[2:7]), method]))
        a = res.aggregate(name)
        lines.append(
            "\t".join(
                [
                    name,
                    "all",
                    *(f"{x:.4f}" for x in (a.oblivious, a.expected, a.min, a.max, a.std)),
                    method,
                ]
            )
        )
    typer.echo("\n".join(lines))
