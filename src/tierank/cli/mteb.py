"""`tierank mteb`: MTEB's saved retrieval predictions against the task's qrels (mteb not needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer

from ..analysis.comparison.settings import CompareSettings
from ..errors import TierankInputError
from ..io.writers import check_output
from ..settings import EvalSettings
from .analysis import show_comparison
from .app import app
from .common import (
    MAX_PERMUTATIONS,
    MAX_RESAMPLES,
    Fmt,
    Format,
    Output,
    emit,
    input_errors,
    measures_option,
    one_measure,
    output_format,
    print_tables,
    status,
)
from .options import EVAL_FIELDS, FROM_OPTIONS, Offer, compare_offer, with_settings

DEFAULT = ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_100", "precision_at_10"]


#: the fields of `CompareSettings` that ``tierank mteb`` offers (a folder's leaderboard), with the
#: help of each there
MTEB_COMPARISON = {
    "alpha": "Folder: significance level of the pairs' tests and the Tukey HSD groups.",
    "test": "Folder: the pairs' test on per-query expected values, as tierank compare's.",
    "ci": "Folder: the CIs of E[M] over the queries: t, percentile or bca.",
    "level": "Folder: confidence level of the CIs and the rank intervals, in (0, 1).",
    "seed": None,
    "resamples": f"Folder: bootstrap resamples (at most {MAX_RESAMPLES:,}).",
    "permutations": "Folder: Tukey HSD permutations and Monte Carlo sign flips (at most "
    f"{MAX_PERMUTATIONS:,}).",
    "tie_samples": "Folder: rank intervals also redraw each query's tie ordering from N random "
    "tie breakings.",
    "jobs": "Folder: threads sharing the Tukey HSD permutations (default: up to 2).",
}


@app.command("mteb")
@input_errors
@with_settings(
    settings=Offer(EvalSettings, EVAL_FIELDS),
    comparison=compare_offer(MTEB_COMPARISON),
)
def mteb_cmd(
    ctx: typer.Context,
    qrels: Annotated[
        Path,
        typer.Argument(
            help="The task's qrels: TREC or BEIR qrels file, JSON {qid: {docid: grade}} or the same nested by "
            "subset and split, or JSON lines of MTEB's qrels rows (query-id, corpus-id, score)"
        ),
    ],
    predictions: Annotated[
        Path,
        typer.Argument(
            help="MTEB's {task}_predictions.json, written by mteb.evaluate(..., prediction_folder=DIR): "
            "{subset: {split: {qid: {docid: score}}}}; or a folder of several models' predictions for the task "
            "(MODEL.json files, or MODEL/ subfolders holding one each): their leaderboard"
        ),
    ],
    measure: measures_option(DEFAULT) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    subset: Annotated[
        str | None, typer.Option("--subset", help="Only this subset (default: all).")
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Only this split (default: all).")
    ] = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also report every query.")
    ] = False,
    fmt: Format = Fmt("table"),
    output: Output = None,
    ignore_identical_ids: Annotated[
        bool,
        typer.Option(
            "--ignore-identical-ids",
            help="Drop a document whose id is the query's id (the task's "
            "ignore_identical_ids, as MTEB applies it before scoring).",
        ),
    ] = False,
    settings: EvalSettings = FROM_OPTIONS,
    comparison: CompareSettings = FROM_OPTIONS,
) -> None:
    """Evaluate MTEB's saved retrieval PREDICTIONS against QRELS (given first, as in every command) with
    tie-aware statistics.

    -m takes MTEB's metric keys (ndcg_at_10, mrr_at_10, map_at_10, recall_at_100, precision_at_10,
    hit_rate_at_5, accuracy) or tierank measures; oblivious is MTEB's own value (tie-break score,
    then docid descending) before MTEB rounds it.  One output per subset and split; with several,
    every record gains "subset" and "split".  PREDICTIONS is read incrementally, as strict JSON: a
    document or query given twice, NaN, a score that is not a finite number, an id that is not text
    is an error naming the place.

    With a folder of models' predictions (one MODEL.json, or one MODEL/ subfolder holding one
    predictions file, per model) instead: their leaderboard on one measure (-m, default ndcg_at_10) and
    one subset and split, as `tierank compare --leaderboard` shows runs: E[M], [min, max], the CI,
    ranks by E and by the oblivious value, rank intervals, Tukey HSD groups and the pairs whose order
    flips.
    """
    fmt = output_format(ctx, fmt, output, Fmt)
    options = MtebOptions(
        measures=tuple(measure or ()),
        subset=subset,
        split=split,
        per_query=per_query,
        fmt=fmt.value,
        output=output,
        ignore_identical_ids=ignore_identical_ids,
        comparison=comparison,
    )
    run_mteb(qrels, predictions, options, settings)


@dataclass(frozen=True)
class MtebOptions:
    """What ``tierank mteb`` reads and writes, beyond the evaluation's settings: the ``-m`` texts (none:
    MTEB's default metrics, or ``ndcg_at_10`` for a leaderboard), the subset and split, the task's
    ``ignore_identical_ids``, the output (``fmt``, ``per_query``, ``output``), and for a folder of
    models its `tierank.analysis.compare.CompareSettings` (a leaderboard, its correction by the
    number of models)."""

    measures: tuple[str, ...] = ()
    subset: str | None = None
    split: str | None = None
    per_query: bool = False
    fmt: str = "table"
    output: Path | None = None
    ignore_identical_ids: bool = False
    comparison: CompareSettings = field(default_factory=CompareSettings)


def run_mteb(qrels: Path, predictions: Path, options: MtebOptions, settings) -> None:
    """``tierank mteb QRELS PREDICTIONS``: one predictions file evaluated per subset and split, or a
    folder of models' predictions as a leaderboard."""
    if predictions.is_dir():
        if options.per_query:
            raise TierankInputError(
                "--per-query reads one predictions file; PREDICTIONS is a folder (a leaderboard)"
            )
        _leaderboard(qrels, predictions, options, settings)
        return
    from ..integrations.mteb import evaluate_predictions
    from ..report.formats import ResultTable, render
    from ..report.terminal import eval_table

    protect = (predictions, qrels)
    check_output(options.output, protect)
    try:
        results = evaluate_predictions(
            predictions,
            qrels,
            list(options.measures or DEFAULT),
            subset=options.subset,
            split=options.split,
            ignore_identical_ids=options.ignore_identical_ids,
            settings=settings,
        )
    except TierankInputError:
        if _starts_with_brace(qrels) and not _starts_with_brace(predictions):
            raise TierankInputError(
                f"did you swap QRELS and PREDICTIONS? {predictions} is not a JSON object and "
                f"{qrels} is one; usage: tierank mteb QRELS PREDICTIONS"
            ) from None
        raise
    if options.fmt == "table":
        tables = []
        for (sub, spl), result in results.items():
            table = eval_table(result, options.per_query)
            table.title = f"tierank mteb: subset {sub}, split {spl}"
            tables.append(table)
        print_tables(tables, options.output, protect)
        return
    nested = ResultTable.nested(results, ("subset", "split"), "subsets")
    emit(render(nested, options.fmt, options.per_query), options.output, protect)


def _leaderboard(qrels: Path, folder: Path, options: MtebOptions, settings) -> None:
    """``tierank mteb QRELS FOLDER``: the models' leaderboard, rendered as ``tierank compare --leaderboard``
    (p-values Holm-adjusted across the pairs with more than one, as tierank compare's)."""
    from dataclasses import replace

    from ..analysis.compare import default_correction
    from ..integrations.mteb import compare_predictions, predictions_folder

    files = predictions_folder(folder)
    comparison = replace(
        options.comparison, leaderboard=True, correction=default_correction(None, len(files))
    )
    protect = (*files.values(), qrels)
    check_output(options.output, protect)
    with status("comparing..."):
        cmp = compare_predictions(
            files,
            qrels,
            one_measure(list(options.measures) or None, "ndcg_at_10"),
            subset=options.subset,
            split=options.split,
            ignore_identical_ids=options.ignore_identical_ids,
            settings=settings,
            options=comparison,
        )
    show_comparison(cmp, options.fmt, options.output, protect)


def _starts_with_brace(path: Path) -> bool:
    """True when the regular file ``path`` starts (after a BOM and blanks) with ``{``, as predictions do."""
    try:
        if not Path(path).is_file():
            return False
        with open(path, "rb") as fh:
            head = fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    except OSError:
        return False
    return head[:1] == b"{"
