"""A ``compute_metrics`` for the Hugging Face ``Trainer``: reranker evaluation with grouped candidates.

The ``Trainer`` hands ``compute_metrics`` an ``EvalPrediction`` of NumPy arrays: one score (or a row
of logits) per (query, candidate) pair of the evaluation set, and its label.  [`compute_metrics`][tierank.tensor.hf.compute_metrics]
builds the function from how the candidates are grouped: ``group_size`` consecutive pairs per query
(the usual layout of a reranking set: a query's positives and negatives side by side), or the query
of each pair (``groups``), or predictions already shaped ``[queries, candidates]``.  Labels equal to
``ignore_index`` (the ``Trainer`` pads with -100) are padding, whatever the layout: a candidate so
labelled is not one, and a query whose candidates are all padding is not a query (it is not counted
in the means).  The function returns the per-step tie
report as scalars ([`tierank.tensor.TensorResult.scalars`][tierank.tensor.TensorResult.scalars]), which the ``Trainer`` logs with its
``eval_`` prefix: ``eval_nDCG@10`` (the expected value), ``eval_nDCG@10/min``, ``.../max``,
``.../std``, ``.../oblivious`` and ``eval_tied_share``.  Nothing of ``transformers`` is imported.

Examples
--------
>>> from types import SimpleNamespace
>>> import numpy as np
>>> fn = compute_metrics(["RR@10"], group_size=3)
>>> pred = SimpleNamespace(predictions=np.array([[0.1], [0.7], [0.7], [0.9], [0.2], [0.2]]),
...                        label_ids=np.array([0, 1, 0, 1, 0, 0]))
>>> {k: round(v, 4) for k, v in fn(pred).items()}
{'RR@10': 0.875, 'RR@10/min': 0.75, 'RR@10/max': 1.0, 'RR@10/std': 0.125, 'RR@10/oblivious': 1.0, 'tied_share': 0.6667}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..measures.base import Measure
from . import check_measures, evaluate

__all__ = ["compute_metrics"]


def compute_metrics(
    measures: Iterable[str | Measure] | str,
    *,
    group_size: int | None = None,
    groups=None,
    rel: int = 1,
    tie_break: str = "input",
    score_column: int = -1,
    ignore_index: int = -100,
    prefix: str = "",
) -> Callable[[Any], dict[str, float]]:
    """The ``compute_metrics`` function of a ``Trainer`` evaluating a reranker.

    ``group_size``: candidates per query, consecutive in the evaluation set; ``groups``: instead, the
    query of each pair (any integers, as torchmetrics' ``indexes``); neither: the predictions are
    ``[queries, candidates]``.  ``score_column``: the logit used as the score when the model outputs
    several per pair (default the last: the positive class of a two-class head).  ``rel``,
    ``tie_break``: as `tierank.tensor.evaluate`.
    """
    parsed = check_measures(measures, rel, False)
    if group_size is not None and (
        isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1
    ):
        raise TierankInputError(f"group_size must be a positive integer, got {group_size!r}")
    if group_size is not None and groups is not None:
        raise TierankInputError("give group_size or groups, not both")
    if isinstance(score_column, bool) or not isinstance(score_column, (int, np.integer)):
        raise TierankInputError(f"score_column must be an integer, got {score_column!r}")
    groups_arr = None if groups is None else np.asarray(groups).reshape(-1)

    def fn(eval_pred: Any) -> dict[str, float]:
        preds = eval_pred.predictions
        if isinstance(preds, (tuple, list)):
            preds = preds[0]
        preds = (
            np.asarray(preds, dtype=np.float64)
            if np.asarray(preds).dtype.kind not in "f"
            else np.asarray(preds)
        )
        labels = np.asarray(eval_pred.label_ids)
        if group_size is None and groups_arr is None:
            if preds.ndim != 2 or preds.shape != labels.shape:
                raise TierankInputError(
                    f"predictions {preds.shape} and labels {labels.shape}: without group_size "
                    "or groups both must be [queries, candidates]"
                )
            scores = preds
        else:
            if preds.ndim == 2:
                if not -preds.shape[1] <= score_column < preds.shape[1]:
                    raise TierankInputError(
                        f"score_column={score_column}: the predictions have {preds.shape[1]} "
                        "columns per pair"
                    )
                preds = preds[:, score_column]
            scores, labels = preds.reshape(-1), labels.reshape(-1)
            if scores.shape != labels.shape:
                raise TierankInputError(f"{scores.shape[0]} scores for {labels.shape[0]} labels")
        mask = labels != ignore_index
        labels = np.where(mask, labels, 0)
        if groups_arr is not None:
            if groups_arr.shape != scores.shape:
                raise TierankInputError(
                    f"groups has {groups_arr.shape[0]} entries for {scores.shape[0]} predictions"
                )
            keep = mask
            res = evaluate(
                scores[keep],
                labels[keep],
                parsed,
                indexes=groups_arr[keep],
                rel=rel,
                tie_break=tie_break,
            )
            return res.scalars(prefix)
        if group_size is not None:
            if scores.shape[0] % group_size:
                raise TierankInputError(
                    f"{scores.shape[0]} predictions are not groups of {group_size} candidates"
                )
            scores, labels, mask = (x.reshape(-1, group_size) for x in (scores, labels, mask))
        real = mask.any(axis=1)  # a group of padding only is no query
        scores, labels, mask = scores[real], labels[real], mask[real]
        return evaluate(scores, labels, parsed, mask=mask, rel=rel, tie_break=tie_break).scalars(
            prefix
        )

    return fn
