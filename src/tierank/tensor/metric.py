"""A torchmetrics ``Metric`` with the exact tie-aware statistics: [`TieAwareRetrieval`][tierank.tensor.metric.TieAwareRetrieval].

It takes what torchmetrics' retrieval metrics take (``update(preds, target, indexes)``), so it sits
beside ``RetrievalNormalizedDCG``, ``RetrievalMRR``, ``RetrievalMAP`` and ``RetrievalRecall`` in a
validation loop or a ``MetricCollection``; its states are lists concatenated across processes
(``dist_reduce_fx="cat"``), as theirs are, so under DDP ``compute()`` sees every process's queries.
``compute()`` returns, per measure, the expected value over the orderings of tied candidates and
its bounds, as 0-dim tensors: ``{"nDCG@10": E, "nDCG@10/min": ..., "nDCG@10/max": ...,
"nDCG@10/std": ..., "nDCG@10/oblivious": ..., "tied_share": ...}`` (the means over queries; ``std``
is that of the mean), ready for ``self.log_dict``.

Needs the ``torchmetrics`` extra: ``pip install 'tierank[torchmetrics]'``.

Examples
--------
>>> import torch
>>> m = TieAwareRetrieval(["nDCG@10", "RR@10"])
>>> m.update(torch.tensor([0.5, 0.5, 0.2, 0.9, 0.1]), torch.tensor([1, 0, 0, 0, 1]), torch.tensor([0, 0, 0, 1, 1]))
>>> {k: round(float(v), 4) for k, v in m.compute().items() if k.startswith("RR")}
{'RR@10': 0.625, 'RR@10/min': 0.5, 'RR@10/max': 0.75, 'RR@10/std': 0.125, 'RR@10/oblivious': 0.75}
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import TierankInputError
from ..extras import require
from ..measures.base import Measure
from . import check_measures, evaluate, group_flat

torch = require("torch", extra="torchmetrics", what="tierank.tensor.metric")
require("torchmetrics", extra="torchmetrics", what="tierank.tensor.metric")
from torchmetrics import Metric  # noqa: E402
from torchmetrics.utilities.data import dim_zero_cat  # noqa: E402

__all__ = ["TieAwareRetrieval", "EMPTY_TARGET_ACTIONS"]

#: what a query without a relevant candidate scores, as torchmetrics' retrieval metrics say it
EMPTY_TARGET_ACTIONS = ("neg", "pos", "skip", "error")


class TieAwareRetrieval(Metric):
    """Tie-aware retrieval measures as a torchmetrics ``Metric``: exact expected value, min, max and
    std over the orderings of tied scores, per measure (`tierank.tensor.evaluate`).

    ``measures``: tierank measure names (``"nDCG@10"``, ``"RR@10"``, ``"AP"``, ``"R@100"``); ``rel``:
    the minimum target counted relevant; ``tie_break``: the order of the ``/oblivious`` value
    (`tierank.tensor.TIE_BREAKS`); ``empty_target_action``: a query with no relevant target
    scores 0 (``"neg"``, torchmetrics' default), 1 (``"pos"``), is left out (``"skip"``) or is an
    error; ``ignore_index``: targets with this value are dropped, as torchmetrics does.  Other
    keyword arguments go to ``torchmetrics.Metric``.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    preds: Any  # states (add_state): lists of batches, one tensor once synced
    target: Any
    indexes: Any

    def __init__(
        self,
        measures: Iterable[str | Measure] | str = ("nDCG@10",),
        *,
        rel: int = 1,
        tie_break: str = "input",
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.measures = [str(m) for m in check_measures(measures, rel, False)]
        if empty_target_action not in EMPTY_TARGET_ACTIONS:
            raise TierankInputError(
                f"empty_target_action must be one of {', '.join(EMPTY_TARGET_ACTIONS)}, "
                f"got {empty_target_action!r}"
            )
        self.rel, self.tie_break = rel, tie_break
        self.empty_target_action, self.ignore_index = empty_target_action, ignore_index
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")
        self.add_state("indexes", default=[], dist_reduce_fx="cat")

    def update(self, preds, target, indexes) -> None:
        """Add a batch: ``preds`` scores, ``target`` labels and ``indexes`` the query of each entry
        (any shape, flattened)."""
        if preds.shape != target.shape or preds.shape != indexes.shape:
            raise TierankInputError(
                f"preds, target and indexes must have the same shape, got {tuple(preds.shape)}, "
                f"{tuple(target.shape)} and {tuple(indexes.shape)}"
            )
        preds, target, indexes = (
            preds.detach().reshape(-1),
            target.detach().reshape(-1),
            indexes.reshape(-1),
        )
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target, indexes = preds[keep], target[keep], indexes[keep]
        self.preds.append(preds)
        self.target.append(target)
        self.indexes.append(indexes.long())

    def compute(self) -> dict[str, Any]:
        def cat(state, dtype):  # a list of batches, or one tensor once synced across processes
            if isinstance(state, list) and not state:
                return torch.zeros(0, dtype=dtype, device=self.device)
            return dim_zero_cat(state)

        preds, target = cat(self.preds, torch.float32), cat(self.target, torch.long)
        indexes = cat(self.indexes, torch.long)
        scores, labels, mask, _ = group_flat(preds, target, indexes)
        res = evaluate(
            scores, labels, self.measures, mask=mask, rel=self.rel, tie_break=self.tie_break
        )
        has_rel = (
            (mask & (labels >= self.rel)).any(dim=1)
            if scores.shape[0]
            else torch.zeros(0, dtype=torch.bool)
        )
        keep = torch.ones_like(has_rel)
        if self.empty_target_action == "error" and not bool(has_rel.all()):
            raise TierankInputError("a query has no relevant target (empty_target_action='error')")
        if self.empty_target_action == "skip":
            keep = has_rel
        n = int(keep.sum())
        out: dict[str, Any] = {}
        for name in self.measures:
            st = res[name]
            for key in ("expected", "min", "max", "std", "oblivious"):
                v = getattr(st, "var" if key == "std" else key)
                if self.empty_target_action == "pos":
                    fill = 0.0 if key == "std" else 1.0
                    v = torch.where(has_rel, v, torch.full_like(v, fill))
                v = v[keep]
                if key == "std":
                    agg = torch.sqrt(v.sum()) / n if n else torch.tensor(math.nan, device=v.device)
                else:
                    agg = v.mean() if n else torch.tensor(math.nan, device=v.device)
                out[name if key == "expected" else f"{name}/{key}"] = agg
        tied = res.tied_share[keep]
        out["tied_share"] = tied.mean() if n else torch.tensor(math.nan, device=tied.device)
        return out
