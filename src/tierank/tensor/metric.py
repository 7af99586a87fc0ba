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
import warnings
from collections.abc import Iterable
from typing import Any

from ..errors import TierankInputError
from ..extras import require
from ..measures.base import Measure
from . import DEFAULT_CHUNK_CELLS, TIE_BREAKS, check_measures, evaluate, group_flat

torch = require("torch", extra="torchmetrics", what="tierank.tensor.metric")
require("torchmetrics", extra="torchmetrics", what="tierank.tensor.metric")
from torchmetrics import Metric  # noqa: E402
from torchmetrics.utilities.data import dim_zero_cat  # noqa: E402

__all__ = ["TieAwareRetrieval", "EMPTY_TARGET_ACTIONS", "AP_NORMALISERS"]

#: what a query without a relevant candidate scores, as torchmetrics' retrieval metrics say it
EMPTY_TARGET_ACTIONS = ("neg", "pos", "skip", "error")

#: what ``AP@k`` divides by: ``relevant``, every relevant target of the query (trec_eval's
#: ``map_cut``, tierank's ``AP@k`` everywhere), or ``retrieved``, the relevant targets inside the
#: top k (torchmetrics' ``RetrievalMAP(top_k=k)``)
AP_NORMALISERS = ("relevant", "retrieved")


class TieAwareRetrieval(Metric):
    """Tie-aware retrieval measures as a torchmetrics ``Metric``: exact expected value, min, max and
    std over the orderings of tied scores, per measure (`tierank.tensor.evaluate`).

    ``measures``: tierank measure names (``"nDCG@10"``, ``"RR@10"``, ``"AP"``, ``"R@100"``); ``rel``:
    the minimum target counted relevant by the binary measures (RR, AP, P, R, ...; default 1:
    torchmetrics' binary targets); ``tie_break``: the order of the ``/oblivious`` value
    (`tierank.tensor.TIE_BREAKS`); ``empty_target_action``: what a query with nothing to find
    scores, as in torchmetrics: 0 (``"neg"``, the default), 1 (``"pos"``), left out of the mean
    (``"skip"``; a mean over no query is 0.0, as torchmetrics returns) or an error; ``ignore_index``:
    targets with this value are dropped, as torchmetrics does; ``ap_normaliser``: what ``AP@k``
    divides by (below).  Other keyword arguments go to ``torchmetrics.Metric``.  Bad arguments are
    refused at construction, bad batches (not torch tensors, NaN scores, NaN or infinite targets,
    non-integer indexes) at ``update``, each in one line (`tierank.errors.TierankInputError`).

    A query has nothing to find for a measure when no target of it counts: for nDCG, no target with
    a positive gain (any target > 0, fractional ones included, as torchmetrics' nDCG reads them); for
    the binary measures, no target >= the measure's ``rel``.  Each measure applies the rule on its
    own, as separate torchmetrics metrics do; ``tied_share`` is over the queries some measure keeps.

    Definitions that differ from torchmetrics' retrieval metrics (the values agree otherwise,
    tests/tensor/test_torchmetrics_reference.py):

    * ``AP@k`` is by default trec_eval's ``map_cut`` (``ap_normaliser="relevant"``): the precisions
      at the relevant ranks within the top k, divided by *all* the query's relevant targets;
      ``RetrievalMAP(top_k=k)`` divides by the relevant targets *inside* the top k (AP@2 of targets
      ``[1, 0, 0, 1]`` in score order: 0.5 here, 1.0 there).  ``ap_normaliser="retrieved"`` gives
      torchmetrics' definition, exact over the tied orderings too (`AP_NORMALISERS`); asking for an
      ``AP@k`` without naming one warns once.  Without a cutoff (``"AP"``) both are the same.
    * ``P@k`` always divides by k; ``RetrievalPrecision`` with ``top_k=None`` divides by the
      query's list length, and with ``adaptive_k=True`` by it when the list is shorter than k.
    * torchmetrics' MRR, MAP, precision and recall count a relevant target whose prediction is
      <= 0 as not relevant; here a score is a score (logits may be negative).
    * The binary measures count a target >= ``rel`` relevant; torchmetrics' count any target > 0.

    The states are this metric's own (``tierank_preds``, ``tierank_target``,
    ``tierank_indexes``): a ``MetricCollection`` never puts it in a compute group with another
    metric, so neither reads the other's stored predictions.
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = False
    tierank_preds: Any  # states (add_state): lists of batches, one tensor once synced
    tierank_target: Any
    tierank_indexes: Any

    def __init__(
        self,
        measures: Iterable[str | Measure] | str = ("nDCG@10",),
        *,
        rel: int = 1,
        tie_break: str = "input",
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        ap_normaliser: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        if isinstance(rel, bool) or not isinstance(rel, int):
            raise TierankInputError(f"rel must be an integer, got {rel!r}")
        if tie_break not in TIE_BREAKS:
            raise TierankInputError(
                f"unknown tie_break {tie_break!r}; accepted: {', '.join(TIE_BREAKS)}"
            )
        if empty_target_action not in EMPTY_TARGET_ACTIONS:
            raise TierankInputError(
                f"empty_target_action must be one of {', '.join(EMPTY_TARGET_ACTIONS)}, "
                f"got {empty_target_action!r}"
            )
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise TierankInputError(
                f"ignore_index must be an integer or None, got {ignore_index!r}"
            )
        self._parsed = check_measures(measures, rel, False)
        self.measures = [str(m) for m in self._parsed]
        if ap_normaliser not in (None, *AP_NORMALISERS):
            raise TierankInputError(
                f"ap_normaliser must be one of {', '.join(AP_NORMALISERS)}, got {ap_normaliser!r}"
            )
        ap_cut = [m for m in self._parsed if m.family == "AP" and math.isfinite(m.k)]
        if ap_cut and ap_normaliser is None:
            k = int(ap_cut[0].k)
            warnings.warn(
                f"{ap_cut[0]} divides by all the query's relevant targets (trec_eval's map_cut); "
                f"torchmetrics' RetrievalMAP(top_k={k}) divides by those in the top {k}: pass "
                "ap_normaliser='relevant' (this definition) or 'retrieved' (torchmetrics') to "
                "choose one",
                UserWarning,
                stacklevel=2,
            )
        self.ap_normaliser = ap_normaliser or "relevant"
        self.rel, self.tie_break = rel, tie_break
        self.empty_target_action, self.ignore_index = empty_target_action, ignore_index
        self.add_state("tierank_preds", default=[], dist_reduce_fx="cat")
        self.add_state("tierank_target", default=[], dist_reduce_fx="cat")
        self.add_state("tierank_indexes", default=[], dist_reduce_fx="cat")

    def update(self, preds, target, indexes) -> None:
        """Add a batch: ``preds`` scores, ``target`` labels and ``indexes`` the query of each entry
        (torch tensors of one shape, flattened)."""
        for name, x in (("preds", preds), ("target", target), ("indexes", indexes)):
            if not isinstance(x, torch.Tensor):
                raise TierankInputError(
                    f"update(): {name} is a {type(x).__module__}.{type(x).__name__}, not a "
                    "torch.Tensor (torch.as_tensor converts it)"
                )
        if preds.shape != target.shape or preds.shape != indexes.shape:
            raise TierankInputError(
                f"preds, target and indexes must have the same shape, got {tuple(preds.shape)}, "
                f"{tuple(target.shape)} and {tuple(indexes.shape)}"
            )
        if preds.dtype == torch.bool or preds.is_complex():
            raise TierankInputError(f"update(): preds must be real scores, got {preds.dtype}")
        if target.is_complex():
            raise TierankInputError(f"update(): target must be real labels, got {target.dtype}")
        if indexes.is_floating_point() or indexes.is_complex() or indexes.dtype == torch.bool:
            raise TierankInputError(f"update(): indexes must be integers, got {indexes.dtype}")
        preds, target, indexes = (
            preds.detach().reshape(-1),
            target.detach().reshape(-1),
            indexes.detach().reshape(-1),
        )
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target, indexes = preds[keep], target[keep], indexes[keep]
        if preds.is_floating_point() and bool(torch.isnan(preds).any()):
            raise TierankInputError("update(): preds holds NaN")
        if target.is_floating_point() and not bool(torch.isfinite(target).all()):
            raise TierankInputError("update(): target holds NaN or inf (targets are finite grades)")
        self.tierank_preds.append(preds)
        self.tierank_target.append(target)
        self.tierank_indexes.append(indexes.long())

    def _has_target(self, m: Measure, labels, mask):
        """[queries] bool: the query has something to find for ``m`` (see the class docstring)."""
        if m.family == "nDCG":
            found = labels > 0
            for k, v in dict(m.params).get("gains") or ():
                found = torch.where(labels == float(k), torch.full_like(found, float(v) > 0), found)
        else:
            found = labels >= (self.rel if m.rel is None else m.rel)
        return (mask & found).any(dim=1)

    def compute(self) -> dict[str, Any]:
        def cat(state, dtype):  # a list of batches, or one tensor once synced across processes
            if isinstance(state, list) and not state:
                return torch.zeros(0, dtype=dtype, device=self.device)
            return dim_zero_cat(state)

        if self._update_count and isinstance(self.tierank_preds, list) and not self.tierank_preds:
            raise TierankInputError(
                "TieAwareRetrieval was counted as updated but holds no batch: a MetricCollection's "
                "compute_groups put it with another metric (leave it in a group of its own)"
            )
        preds = cat(self.tierank_preds, torch.float32)
        target = cat(self.tierank_target, torch.long)
        indexes = cat(self.tierank_indexes, torch.long)
        scores, labels, mask, _ = group_flat(preds, target, indexes)
        res = evaluate(
            scores, labels, self.measures, mask=mask, rel=self.rel, tie_break=self.tie_break
        )
        retrieved = {}
        if self.ap_normaliser == "retrieved":
            for m, name in zip(self._parsed, self.measures):
                if m.family == "AP" and math.isfinite(m.k):
                    rel = self.rel if m.rel is None else m.rel
                    retrieved[name] = ap_retrieved(
                        scores, labels, mask, int(m.k), rel, self.tie_break
                    )
        B = int(scores.shape[0])
        kept_any = torch.zeros(B, dtype=torch.bool, device=scores.device)
        out: dict[str, Any] = {}
        for m, name in zip(self._parsed, self.measures):
            has = self._has_target(m, labels, mask)
            if self.empty_target_action == "error" and not bool(has.all()):
                raise TierankInputError(
                    f"{name}: a query has no relevant target (empty_target_action='error')"
                )
            keep = has if self.empty_target_action == "skip" else torch.ones_like(has)
            kept_any |= keep
            n = int(keep.sum())
            st = retrieved.get(name) or res[name]
            for key in ("expected", "min", "max", "std", "oblivious"):
                v = getattr(st, "var" if key == "std" else key).to(res.tied_share.dtype)
                fill = 1.0 if self.empty_target_action == "pos" and key != "std" else 0.0
                v = torch.where(has, v, torch.full_like(v, fill))[keep]
                if not n:  # a mean over no query: 0.0, as torchmetrics returns
                    agg = torch.zeros((), dtype=v.dtype, device=v.device)
                elif key == "std":
                    agg = torch.sqrt(v.sum()) / n
                else:
                    agg = v.mean()
                out[name if key == "expected" else f"{name}/{key}"] = agg
        tied = res.tied_share[kept_any]
        out["tied_share"] = tied.mean() if tied.shape[0] else torch.zeros((), device=tied.device)
        return out


def _sorted_order(scores, mask, reverse: bool = False):
    """Per row, the positions in descending score order, valid candidates first (a stable sort:
    ties keep the row's order, or its reverse)."""
    if reverse:
        scores, mask = scores.flip(1), mask.flip(1)
    key = torch.where(mask, scores, torch.full_like(scores, -math.inf))
    order = torch.argsort(key, dim=1, descending=True, stable=True)
    order = order.gather(
        1, torch.argsort((~mask).gather(1, order).to(torch.int8), dim=1, stable=True)
    )
    if reverse:
        order = scores.shape[1] - 1 - order
    return order


def ap_retrieved(scores, labels, mask, k: int, rel: int, tie_break: str = "input"):
    """`_ap_retrieved_rows` over chunks of queries, so that its virtual rows (at most ``k + 1`` of
    width ``k`` per query) stay within `tierank.tensor.DEFAULT_CHUNK_CELLS`."""
    from types import SimpleNamespace

    B, C = (int(d) for d in scores.shape)
    w = max(1, min(k, C))
    step = max(1, DEFAULT_CHUNK_CELLS // (w * (w + 1)))
    if B <= step:
        return _ap_retrieved_rows(scores, labels, mask, k, rel, tie_break)
    parts = [
        _ap_retrieved_rows(
            scores[lo : lo + step], labels[lo : lo + step], mask[lo : lo + step], k, rel, tie_break
        )
        for lo in range(0, B, step)
    ]
    return SimpleNamespace(
        **{
            key: torch.cat([getattr(p, key) for p in parts])
            for key in ("expected", "min", "max", "var", "oblivious")
        }
    )


def _ap_retrieved_rows(scores, labels, mask, k: int, rel: int, tie_break: str = "input"):
    """``AP@k`` divided by the relevant targets inside the top k (torchmetrics' ``RetrievalMAP``),
    over the orderings of tied scores: per query ``expected``, ``min``, ``max``, ``var`` and
    ``oblivious`` (float64 tensors ``[queries]``, in a ``SimpleNamespace``); 0 where no relevant
    target is in the top k.

    Only the tie group across the cut (from position ``a``, ``m`` candidates of which ``r`` relevant,
    ``u = k - a`` of its slots inside) makes the divisor ``R_a + h`` vary: ``h``, its relevant
    targets inside the cut, is hypergeometric, and the sum of precisions splits into ``S`` from the
    groups above (independent of ``h``) and ``T`` from the ``u`` slots.  The moments of ``T`` given
    ``h`` are those of ``AP`` (`tierank.tensor.evaluate`) on a virtual row of ``R_a`` relevant
    targets followed by ``u`` tied slots holding ``h``; those of ``S`` are tierank's ``AP@k`` less
    ``T``'s.  Then ``E = sum_h P(h) (E S + E[T|h]) / (R_a + h)`` and likewise the second moment;
    the bounds take each part's bound for each feasible ``h``."""
    from types import SimpleNamespace

    f64 = torch.float64
    B = int(scores.shape[0])
    s = scores.to(f64)
    relv = mask & (labels >= rel)
    nplus = relv.sum(1).to(f64)
    keff = torch.clamp(mask.sum(1), max=k)
    zero = torch.zeros(B, dtype=f64, device=scores.device)
    if B == 0 or int(keff.max()) == 0:
        return SimpleNamespace(expected=zero, min=zero, max=zero, var=zero, oblivious=zero)
    order = _sorted_order(s, mask)
    has, a, m, r_g, R, u = _cut_group(s, mask, relv, keff, order)
    h, feasible, p = _cut_hypergeometric(r_g, m, u, has)
    H = int(h.shape[1])
    et_h, vt_h, tmax_h, tmin_h = _cut_slot_moments(a, R, u, h, feasible, int(keff.max()))
    et = (p * et_h).sum(1)
    vt = torch.clamp((p * (vt_h + et_h**2)).sum(1) - et**2, min=0.0)
    # tierank's AP@k (divided by N+): S + T
    full = evaluate(s, labels, [f"AP(rel={rel})@{k}"], mask=mask, dtype="float64")[
        f"AP(rel={rel})@{k}"
    ]
    e_s = nplus * full.expected.to(f64) - et
    v_s = torch.clamp(nplus**2 * full.var.to(f64) - vt, min=0.0)
    h_hi = torch.minimum(r_g, u).clamp(min=0)
    h_lo = torch.clamp(u - (m - r_g), min=0)
    max_s = nplus * full.max.to(f64) - tmax_h.gather(1, h_hi[:, None].clamp(max=H - 1))[:, 0]
    min_s = nplus * full.min.to(f64) - tmin_h.gather(1, h_lo[:, None].clamp(max=H - 1))[:, 0]
    n_h = (R[:, None] + h).to(f64)
    pos = feasible & (n_h > 0)
    inv = torch.where(pos, 1.0 / torch.where(pos, n_h, 1.0), 0.0)
    num = e_s[:, None] + et_h
    expected = (p * num * inv).sum(1)
    second = (p * (v_s[:, None] + num**2 + vt_h) * inv**2).sum(1)
    var = torch.clamp(second - expected**2, min=0.0)
    hi_v = torch.where(feasible, (max_s[:, None] + tmax_h) * inv, -math.inf)
    lo_v = torch.where(feasible, (min_s[:, None] + tmin_h) * inv, math.inf)
    vmax = torch.where(has, hi_v.max(1).values, zero)
    vmin = torch.where(has, lo_v.min(1).values, zero)
    fixed = vmax == vmin  # a value no ordering changes is that value, with std 0
    expected = torch.where(fixed, vmin, expected)
    var = torch.where(fixed, zero, var)
    # the oblivious value: the tie-break's own ordering
    if tie_break in ("input", "reverse"):
        o = order if tie_break == "input" else _sorted_order(s, mask, reverse=True)
        obl = _ap_retrieved_in_order(relv, o, keff)
    else:
        obl = vmin if tie_break == "worst" else vmax
    return SimpleNamespace(expected=expected, min=vmin, max=vmax, var=var, oblivious=obl)


def _cut_group(s, mask, relv, keff, order):
    """The tie group across the cut ``keff`` of every query (``order``: the rows sorted by score): whether
    the query has a cut, the candidates above the group ``a``, the group's size ``m`` and relevant ``r_g``,
    the relevant above it ``R`` and the group's slots inside the cut ``u``."""
    s_sorted = s.gather(1, order)
    pivot = s_sorted.gather(1, torch.clamp(keff - 1, min=0)[:, None])
    has = keff > 0
    above = mask & (s > pivot) & has[:, None]
    group = mask & (s == pivot) & has[:, None]
    a = above.sum(1)
    m = group.sum(1)
    r_g = (group & relv).sum(1)
    R = (above & relv).sum(1)
    return has, a, m, r_g, R, keff - a


def _cut_hypergeometric(r_g, m, u, has):
    """The hypergeometric law of ``h``, the relevant of a group of ``m`` (``r_g`` relevant) in its ``u``
    slots inside the cut, over ``h = 0..max``: ``h`` (``[1, H]``), which ``h`` are feasible per query and
    their probabilities (``[queries, H]``)."""
    f64 = torch.float64
    H = int(torch.minimum(r_g, u).max()) + 1
    h = torch.arange(H, device=r_g.device)[None, :]
    feasible = (h <= torch.minimum(r_g, u)[:, None]) & (u[:, None] - h <= (m - r_g)[:, None])
    feasible &= has[:, None]

    def lchoose(n, j):
        n, j = n.to(f64), j.to(f64)
        return torch.lgamma(n + 1) - torch.lgamma(j + 1) - torch.lgamma(n - j + 1)

    hc = torch.where(feasible, h, torch.zeros_like(h))
    logp = (
        lchoose(r_g[:, None], hc)
        + lchoose((m - r_g)[:, None], u[:, None] - hc)
        - lchoose(m, u)[:, None]
    )
    p = torch.where(feasible, torch.exp(logp), torch.zeros_like(logp))
    p = p / torch.clamp(p.sum(1, keepdim=True), min=1e-300)
    return h, feasible, p


def _cut_slot_moments(a, R, u, h, feasible, W: int):
    """The moments and bounds of ``T``, the sum of precisions at the ``u`` slots inside the cut, given
    ``h`` (``[queries, H]``: expected, variance, max and min; 0 where ``h`` is not feasible), from ``AP``
    on one virtual row per feasible (query, h) of width ``W``: ``R`` relevant on distinct scores,
    ``a - R`` others, then ``u`` tied slots with ``h`` relevant."""
    f64 = torch.float64
    dev = a.device
    B, H = int(a.shape[0]), int(h.shape[1])
    qi, hi = feasible.nonzero(as_tuple=True)
    j = torch.arange(W, device=dev)[None, :]
    a_p, R_p, u_p, h_p = a[qi, None], R[qi, None], u[qi, None], hi[:, None]
    v_scores = torch.where(j < a_p, (W - j).to(f64), torch.zeros((), dtype=f64, device=dev))
    v_labels = torch.where(j < a_p, (j < R_p).to(torch.long), ((j - a_p) < h_p).to(torch.long))
    ev = evaluate(v_scores, v_labels, ["AP"], mask=j < a_p + u_p, dtype="float64")["AP"]
    n_h = (R[:, None] + h).to(f64)
    Rf = R[:, None].to(f64)

    def per_h(x):
        out = torch.zeros((B, H), dtype=f64, device=dev)
        out[qi, hi] = x.to(f64)
        return out

    et_h = torch.where(feasible, n_h * per_h(ev.expected) - Rf, 0.0)
    vt_h = torch.where(feasible, n_h**2 * per_h(ev.var), 0.0)
    tmax_h = torch.where(feasible, n_h * per_h(ev.max) - Rf, 0.0)
    tmin_h = torch.where(feasible, n_h * per_h(ev.min) - Rf, 0.0)
    return et_h, vt_h, tmax_h, tmin_h


def _ap_retrieved_in_order(relv, order, keff):
    """``AP@k`` divided by the relevant targets inside the top ``keff`` of every query, its rows in
    ``order`` (0 where none is)."""
    f64 = torch.float64
    r_sorted = relv.gather(1, order).to(f64)
    pos_j = torch.arange(r_sorted.shape[1], device=relv.device)[None, :]
    r_sorted = torch.where(pos_j < keff[:, None], r_sorted, 0.0)
    hits = torch.cumsum(r_sorted, 1)
    total = (r_sorted * hits / (pos_j + 1).to(f64)).sum(1)
    rk = r_sorted.sum(1)
    return torch.where(rk > 0, total / torch.clamp(rk, min=1.0), torch.zeros_like(rk))
