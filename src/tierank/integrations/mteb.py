"""MTEB retrieval predictions and MTEB runs, evaluated over every ordering of tied scores.

MTEB (Muennighoff et al., EACL 2023; version 2.26.24 read here) scores a retrieval task with
``pytrec_eval`` (nDCG, MAP, recall, precision and hit rate at the task's ``k_values``) and its own
MRR, each for one order of tied scores: ``(score, docid)`` descending, trec_eval's order (MRR
followed the input order until MTEB fixed it, issue #5092).  This module gives MTEB users the exact
expectation, minimum, maximum and standard deviation over all orderings of tied scores, computed
by [`tierank.evaluate`][tierank.evaluate] (the one engine; nothing here computes a measure):

* [`evaluate_predictions`][tierank.integrations.mteb.evaluate_predictions]: the file ``mteb.evaluate(..., prediction_folder=DIR)`` writes,
  ``DIR/{task}_predictions.json`` = ``{"mteb_model_meta": {...}, subset: {split: {qid: {docid:
  score}}}}`` (``AbsTask._save_task_predictions``), against the task's qrels: a TREC/BEIR qrels
  file, a qrels dict ``{qid: {docid: grade}}``, the same nested by subset and split, or a loaded
  mteb retrieval task.  One [`tierank.EvalResult`][tierank.EvalResult] per (subset, split).  mteb is not needed.
  ``tierank mteb QRELS PREDICTIONS`` is the command line of it.
* [`compare_predictions`][tierank.integrations.mteb.compare_predictions]: a folder of several models' predictions for one task, compared as
  ``tierank compare --leaderboard`` compares runs ([`tierank.analysis.compare.compare`][tierank.analysis.compare.compare]: E[M],
  [min, max], CIs, ranks, rank intervals, Tukey HSD groups, order flips); ``tierank mteb QRELS
  FOLDER`` is its command line.
* [`tie_aware`][tierank.integrations.mteb.tie_aware] (and the mixin [`TieAwareScores`][tierank.integrations.mteb.TieAwareScores]): inside an MTEB run.  A copy of a
  retrieval task whose ``task_specific_scores`` hook (called by ``AbsTaskRetrieval._evaluate_subset``
  with the qrels and the run of each subset and split) adds, for each MTEB metric key ``K``
  (``ndcg_at_10``, ...), ``K_expected``, ``K_min``, ``K_max`` and ``K_std``, and ``tied_share``
  (share of the retrieved documents whose score another document of the same query shares).
  MTEB's own ``K`` is kept (it is tierank's ``oblivious`` value, rounded by MTEB to 5 decimals),
  unless ``replace=True`` puts the expected value there (and so in ``main_score``).

MTEB metric names map to tierank measures as MTEB computes them (``retrieval_metrics.py``):
``ndcg_at_k`` -> ``nDCG@k`` (trec_eval ``ndcg_cut.k``), ``map_at_k`` -> ``AP@k`` (``map_cut.k``),
``recall_at_k`` -> ``R@k``, ``precision_at_k`` -> ``P@k``, ``hit_rate_at_k`` -> ``Success@k``,
``mrr_at_k`` -> ``RR@k`` (first document with grade > 0) and ``accuracy`` -> ``R@1``.  tierank's
own measure names are accepted too.  Queries are those of the predictions that have judgments, as
``pytrec_eval`` averages them.

Examples
--------
Two documents tie at the top of a query, one of them relevant:

>>> preds = {"mteb_model_meta": {"model_name": "m", "revision": "r"},
...          "default": {"test": {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.1}}}}
>>> res = evaluate_predictions(preds, {"q1": {"d1": 1}}, ["mrr_at_10", "ndcg_at_10"])
>>> agg = res["default", "test"].aggregate()
>>> agg[["measure", "oblivious", "expected", "min", "max"]].round(4).values.tolist()
[['RR@10', 0.5, 0.75, 0.5, 1.0], ['nDCG@10', 0.6309, 0.8155, 0.6309, 1.0]]
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..errors import Problem, TierankInputError, quote
from ..evaluate import evaluate
from ..io.convert import to_qrels, to_run
from ..io.mteb_json import load_predictions, read_predictions
from ..io.sources import read as read_source
from ..measures.base import Measure, parse_measure
from ..measures.names import family_names

__all__ = [
    "FAMILIES",
    "DEFAULT_METRICS",
    "tierank_measure",
    "load_predictions",
    "read_predictions",
    "load_qrels",
    "evaluate_predictions",
    "predictions_folder",
    "compare_predictions",
    "TieAwareScores",
    "tie_aware",
]

#: MTEB metric family (``{family}_at_{k}``) -> tierank family, from the families' declared MTEB names
#: (``Measure.names.mteb``), in the order of MTEB's score dict
FAMILIES = family_names("mteb", ("ndcg", "map", "recall", "precision", "mrr", "hit_rate"))
#: MTEB's ``accuracy`` key is its ``recall_at_1`` (``make_score_dict``)
ALIASES = {"accuracy": "R@1"}
#: what `evaluate_predictions` and ``tierank mteb`` report when no measure is given
DEFAULT_METRICS = ("ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_100", "precision_at_10")
#: the statistics the in-run hook adds, as key suffixes
HOOK_STATS = ("expected", "min", "max", "std")
_NAME = re.compile(r"^(?P<family>[a-z_]+?)_at_(?P<k>\d+)$")


def tierank_measure(metric) -> Measure:
    """The tierank measure of an MTEB metric key (tierank's own names are accepted too).

    Examples
    --------
    >>> [str(tierank_measure(m)) for m in ("ndcg_at_10", "mrr_at_1000", "hit_rate_at_5", "accuracy", "AP")]
    ['nDCG@10', 'RR@1000', 'Success@5', 'R@1', 'AP']
    """
    if isinstance(metric, Measure):
        return metric
    if not isinstance(metric, str):
        raise TierankInputError(f"a metric name must be a string, got {metric!r}")
    if metric in ALIASES:
        return parse_measure(ALIASES[metric])
    m = _NAME.match(metric)
    if m and m["family"] in FAMILIES:
        return parse_measure(f"{FAMILIES[m['family']]}@{int(m['k'])}")
    try:
        return parse_measure(metric)
    except TierankInputError:
        raise TierankInputError(
            f"unknown metric {metric!r}: give an MTEB retrieval key ({', '.join(f'{f}_at_K' for f in FAMILIES)}, "
            f"accuracy) or a tierank measure (see `tierank measures`)"
        ) from None


def _named(metrics) -> list[tuple[str, Measure]]:
    metrics = [metrics] if isinstance(metrics, (str, Measure)) else list(metrics)
    if not metrics:
        raise TierankInputError("no measure given")
    return [(str(m), tierank_measure(m)) for m in metrics]


# reading: MTEB's JSON files are read in tierank.io (tierank.io.mteb_json), found through tierank.io.sources


def load_qrels(qrels, source: str | None = None):
    """The qrels for [`evaluate_predictions`][tierank.integrations.mteb.evaluate_predictions]: one tierank ``Qrels`` for every subset and split,
    or ``{(subset, split): Qrels}``.

    Accepted: a path to a TREC or BEIR qrels file (or Parquet, as [`tierank.to_qrels`][tierank.to_qrels]), a JSON
    file or dict ``{qid: {docid: grade}}`` or the same nested ``{subset: {split: ...}}`` (the
    predictions' layout), a JSON-lines file of MTEB's qrels rows (``query-id``, ``corpus-id``,
    ``score``), a loaded mteb retrieval task (its ``dataset[subset][split]["relevant_docs"]``), or
    ``irds:DATASET_ID`` (ir_datasets).
    """
    return read_source(qrels, "mteb-qrels", source)


# evaluating


def _pick(
    keys: list[tuple[str, str]], subset: str | None, split: str | None, source: str
) -> list[tuple[str, str]]:
    problems = []
    subsets = list(dict.fromkeys(s for s, _ in keys))
    if subset is not None and subset not in subsets:
        problems.append(
            Problem(source, None, f"no subset {quote(subset)}; available: {', '.join(subsets)}")
        )
    chosen = [k for k in keys if subset is None or k[0] == subset]
    splits = list(dict.fromkeys(s for _, s in chosen))
    if split is not None and chosen and split not in splits:
        where = f" in subset {quote(subset)}" if subset is not None else ""
        problems.append(
            Problem(source, None, f"no split {quote(split)}{where}; available: {', '.join(splits)}")
        )
    if problems:
        raise TierankInputError(problems)
    return [k for k in chosen if split is None or k[1] == split]


def _skip_first(run: Mapping) -> dict:
    """MTEB's ``skip_first_result``: each query's best document dropped (MTEB's own stable sort by score)."""
    return {
        q: dict(sorted(docs.items(), key=lambda x: x[1], reverse=True)[1:])
        for q, docs in run.items()
    }


def evaluate_predictions(
    predictions,
    qrels,
    measures=DEFAULT_METRICS,
    *,
    subset: str | None = None,
    split: str | None = None,
    ignore_identical_ids: bool = False,
    skip_first_result: bool = False,
    **evaluate_kwargs,
) -> dict:
    """Tie-aware evaluation of MTEB's saved retrieval predictions.

    Parameters
    ----------
    predictions
        The path of ``{task}_predictions.json`` (written by ``mteb.evaluate(..., prediction_folder=)``)
        or its content as a dict.
    qrels
        The task's judgments (see [`load_qrels`][tierank.integrations.mteb.load_qrels]): one set for every subset and split, or one per
        (subset, split).
    measures
        MTEB metric keys (``"ndcg_at_10"``, ``"mrr_at_10"``, ...) or tierank measures.
    subset, split
        Evaluate only this subset / split (default: all in the predictions); an unknown one is an
        error listing the available ones.
    ignore_identical_ids, skip_first_result
        The task's settings of these names, as MTEB applies them before scoring.
    evaluate_kwargs
        Passed to [`tierank.evaluate`][tierank.evaluate] (``tie_break``, ``max_depth``, ...).

    Returns
    -------
    dict
        ``{(subset, split): EvalResult}`` in the predictions' order.
    """
    named = _named(measures)
    src = os.fspath(predictions) if isinstance(predictions, (str, os.PathLike)) else "predictions"
    runs = read_source(
        predictions,
        "predictions",
        src,
        ignore_identical_ids=ignore_identical_ids,
        skip_first_result=skip_first_result,
    )
    q = load_qrels(qrels)
    keys = _pick(list(runs), subset, split, src)
    if isinstance(q, dict):
        missing = [k for k in keys if k not in q]
        if missing:
            qsrc = os.fspath(qrels) if isinstance(qrels, (str, os.PathLike)) else "qrels"
            have = ", ".join(f"{a}/{b}" for a, b in q)
            raise TierankInputError(
                [
                    Problem(
                        qsrc,
                        None,
                        f"no qrels for subset {quote(a)}, split {quote(b)}; available: {have}",
                    )
                    for a, b in missing
                ]
            )
    return {
        key: evaluate(
            q[key] if isinstance(q, dict) else q,
            runs[key],
            [m for _, m in named],
            **evaluate_kwargs,
        )
        for key in keys
    }


# a folder of models' predictions: the leaderboard


def predictions_folder(folder) -> dict[str, Path]:
    """``{model: predictions file}`` of a folder holding one predictions file per model, sorted by name.

    A model is either a JSON file directly in ``folder`` (the model's name: the file name less
    ``.json`` and a trailing ``_predictions``) or a subfolder holding exactly one JSON file (the
    model's name: the subfolder's; the layout of ``mteb.evaluate(..., prediction_folder=FOLDER/MODEL)``).
    Hidden entries and files not ending in ``.json`` are ignored.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for f in ("b.json", "a_predictions.json", "notes.txt", "c/Task_predictions.json"):
    ...     (d / f).parent.mkdir(exist_ok=True); _ = (d / f).write_text("{}")
    >>> {k: v.name for k, v in predictions_folder(d).items()}
    {'a': 'a_predictions.json', 'b': 'b.json', 'c': 'Task_predictions.json'}
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise TierankInputError(f"{folder}: not a folder of predictions files")
    found: dict[str, Path] = {}
    problems = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            files = sorted(
                f
                for f in entry.iterdir()
                if f.is_file() and f.name.endswith(".json") and not f.name.startswith(".")
            )
            if len(files) != 1:
                problems.append(
                    Problem(
                        os.fspath(entry),
                        None,
                        f"a model's subfolder must hold one predictions "
                        f"file (*.json), found {len(files)}",
                    )
                )
                continue
            name, path = entry.name, files[0]
        elif entry.is_file() and entry.name.endswith(".json"):
            name, path = (
                entry.name[: -len(".json")].removesuffix("_predictions") or entry.name,
                entry,
            )
        else:
            continue
        if name in found:
            problems.append(
                Problem(
                    os.fspath(path),
                    None,
                    f"model {quote(name)} given twice (also {os.fspath(found[name])})",
                )
            )
            continue
        found[name] = path
    if problems:
        raise TierankInputError(problems)
    if len(found) < 2:
        raise TierankInputError(
            f"{folder}: a leaderboard needs the predictions of at least two models "
            f"(one *.json file or subfolder per model), found {len(found)}"
        )
    return dict(sorted(found.items()))


def compare_predictions(
    folder,
    qrels,
    measure="ndcg_at_10",
    *,
    subset: str | None = None,
    split: str | None = None,
    ignore_identical_ids: bool = False,
    skip_first_result: bool = False,
    leaderboard: bool = True,
    **compare_kwargs,
):
    """The leaderboard of a folder of models' MTEB predictions for one task (one subset and split).

    Parameters
    ----------
    folder
        One predictions file per model ([`predictions_folder`][tierank.integrations.mteb.predictions_folder]), or ``{model: predictions}``
        (paths or dicts, as [`evaluate_predictions`][tierank.integrations.mteb.evaluate_predictions] takes them).
    qrels
        The task's judgments (see [`load_qrels`][tierank.integrations.mteb.load_qrels]).
    measure
        One MTEB metric key or tierank measure (default ``ndcg_at_10``, MTEB's main score).
    subset, split
        The subset and split to rank on; needed when the predictions hold several.
    ignore_identical_ids, skip_first_result
        The task's settings of these names, as MTEB applies them before scoring.
    leaderboard, compare_kwargs
        Passed to [`tierank.analysis.compare.compare`][tierank.analysis.compare.compare]: ``settings`` (an
        [`tierank.EvalSettings`][tierank.EvalSettings]), ``options`` (a [`CompareSettings`][tierank.analysis.compare.CompareSettings]),
        or their fields by name (``tie_break``, ``seed``, ``resamples``, ``permutations``,
        ``tie_samples``, ``test``, ``ci``, ...).

    Returns
    -------
    tierank.analysis.compare.Comparison
        The models compared on the per-query values of ``measure``, exactly as ``tierank compare``
        compares the same runs; the models' names are their files' (or subfolders').
    """
    from ..analysis.compare import compare

    files = predictions_folder(folder) if isinstance(folder, (str, os.PathLike)) else dict(folder)
    m = tierank_measure(measure)
    q = load_qrels(qrels)
    runs, key = {}, None
    for name, pred in files.items():
        src = os.fspath(pred) if isinstance(pred, (str, os.PathLike)) else f"predictions of {name}"
        got = read_source(
            pred,
            "predictions",
            src,
            ignore_identical_ids=ignore_identical_ids,
            skip_first_result=skip_first_result,
        )
        if key is None:
            keys = _pick(list(got), subset, split, src)
            if len(keys) != 1:
                raise TierankInputError(
                    f"{src}: a leaderboard ranks one subset and split; give --subset and --split "
                    f"(available: {', '.join(f'{a}/{b}' for a, b in keys)})"
                )
            key = keys[0]
        elif key not in got:
            raise TierankInputError(
                [
                    Problem(
                        src,
                        None,
                        f"no subset {quote(key[0])}, split {quote(key[1])} "
                        f"(the first model's); available: "
                        f"{', '.join(f'{a}/{b}' for a, b in got)}",
                    )
                ]
            )
        runs[name] = got[key]
    assert key is not None
    if isinstance(q, dict):
        if key not in q:
            qsrc = os.fspath(qrels) if isinstance(qrels, (str, os.PathLike)) else "qrels"
            raise TierankInputError(
                [
                    Problem(
                        qsrc,
                        None,
                        f"no qrels for subset {quote(key[0])}, split "
                        f"{quote(key[1])}; available: {', '.join(f'{a}/{b}' for a, b in q)}",
                    )
                ]
            )
        q = q[key]
    return compare(runs, q, str(m), leaderboard=leaderboard, **compare_kwargs)


# inside an MTEB run


def hook_scores(
    result, named: Sequence[tuple[str, Measure]], replace: bool = False
) -> dict[str, float]:
    """The keys the in-run hook adds to MTEB's scores, from a [`tierank.EvalResult`][tierank.EvalResult].

    Examples
    --------
    >>> import tierank
    >>> res = tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["RR@10"])
    >>> hook_scores(res, [("mrr_at_10", res.measures[0])])
    {'mrr_at_10_expected': 0.75, 'mrr_at_10_min': 0.5, 'mrr_at_10_max': 1.0, 'mrr_at_10_std': 0.25, 'tied_share': 1.0}
    """
    rows = {r["measure"]: r for r in result.records(per_query=False)}
    out: dict[str, float] = {}
    for key, m in named:
        row = rows[str(m)]
        for stat in HOOK_STATS:
            out[f"{key}_{stat}"] = row[stat]
        if replace:
            out[key] = row["expected"]
    out["tied_share"] = float(result.ties["share"])
    return out


class TieAwareScores:
    """Mixin for an mteb ``AbsTaskRetrieval`` subclass: its scores also hold tie-aware statistics.

    ``class MyTask(TieAwareScores, AbsTaskRetrieval): ...``, or [`tie_aware`][tierank.integrations.mteb.tie_aware] on a task.
    Class attributes (set per copy by [`tie_aware`][tierank.integrations.mteb.tie_aware]): ``tierank_metrics`` (MTEB keys or tierank
    measures; None: the six MTEB families at the task's ``k_values``), ``tierank_replace``,
    ``tierank_options`` (keywords of [`tierank.evaluate`][tierank.evaluate]).  After a run,
    ``tierank_results[(subset, split)]`` holds each [`tierank.EvalResult`][tierank.EvalResult] (per-query values).
    """

    tierank_metrics: Any = None
    tierank_replace = False
    tierank_options: dict = {}
    tierank_results: dict = {}
    metadata: Any  # the task's (mteb's AbsTask)

    def _tierank_named(self) -> list[tuple[str, Measure]]:
        if self.tierank_metrics is not None:
            return _named(self.tierank_metrics)
        ks = getattr(self, "k_values", (1, 3, 5, 10, 20, 100, 1000))
        return _named([f"{f}_at_{k}" for f in FAMILIES for k in ks])

    def task_specific_scores(self, scores, qrels, results, hf_split, hf_subset):
        base = dict(
            super().task_specific_scores(  # type: ignore[misc]  # the task class after this mixin
                scores, qrels, results, hf_split=hf_split, hf_subset=hf_subset
            )
        )
        named = self._tierank_named()
        run = _skip_first(results) if getattr(self, "skip_first_result", False) else results
        # results are already without identical ids when the task ignores them (RetrievalEvaluator.evaluate)
        res = evaluate(
            to_qrels(qrels, source=f"{self.metadata.name} qrels [{hf_subset}/{hf_split}]"),
            to_run(run, source=f"{self.metadata.name} [{hf_subset}/{hf_split}]"),
            [m for _, m in named],
            **self.tierank_options,
        )
        if not isinstance(getattr(self, "tierank_results", None), dict):
            self.tierank_results = {}
        self.tierank_results[hf_subset, hf_split] = res
        return {**base, **hook_scores(res, named, self.tierank_replace)}


_CLASSES: dict[type, type] = {}


def tie_aware(task, metrics=None, *, replace: bool = False, **evaluate_kwargs):
    """A copy of the mteb retrieval ``task`` whose scores also hold tie-aware statistics.

    For each MTEB key ``K`` of ``metrics`` (default: ``ndcg``, ``map``, ``recall``, ``precision``,
    ``mrr``, ``hit_rate`` at the task's ``k_values``) the task's scores gain ``K_expected``,
    ``K_min``, ``K_max`` and ``K_std`` (over all orderings of tied scores), and ``tied_share``;
    ``replace=True`` also puts the expected value in ``K`` itself (and so in ``main_score``).
    ``evaluate_kwargs`` go to [`tierank.evaluate`][tierank.evaluate].  The task keeps its name and metadata, so
    results and predictions are saved where MTEB saves them; ``task`` itself is not changed.

    ``mteb.evaluate(model, tie_aware(mteb.get_task("SciFact")), prediction_folder="preds")``
    """
    from . import require

    require("mteb")
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    if not isinstance(task, AbsTaskRetrieval):
        raise TierankInputError(
            f"tie_aware takes an mteb retrieval task (AbsTaskRetrieval), got {type(task).__name__}"
        )
    if metrics is not None:
        _named(metrics)  # refuse an unknown metric now, not in the middle of the run
    cls = type(task)
    if not issubclass(cls, TieAwareScores):
        if cls not in _CLASSES:
            _CLASSES[cls] = type(
                f"TieAware{cls.__name__}", (TieAwareScores, cls), {"__module__": cls.__module__}
            )
        cls = _CLASSES[cls]
    new: Any = cast(Any, cls).__new__(
        cls
    )  # a shallow copy of the task as an instance of the hooked class
    new.__dict__.update(task.__dict__)
    new.tierank_metrics = metrics
    new.tierank_replace = bool(replace)
    new.tierank_options = dict(evaluate_kwargs)
    new.tierank_results = {}
    return new
