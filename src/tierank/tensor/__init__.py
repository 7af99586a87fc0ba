"""Exact tie-aware measures over score tensors, where ties are born: inside training and validation loops.

`evaluate` takes batched, padded ``[queries, candidates]`` score and label arrays (with an
optional validity mask), or flat ``preds, target, indexes`` as torchmetrics takes them, and returns
for each measure the per-query tie-oblivious value, and over all orderings of the tied candidates the
exact expected value, min, max and standard deviation: arrays of shape ``[queries]`` in the input's
array library, on the input's device.  It is one implementation over the Python array API standard
(`array_api_compat`): NumPy, PyTorch (CPU and CUDA), CuPy and JAX run the same code, with no
copy to the host.  The numbers are those of [`tierank.evaluate`][tierank.evaluate] on the same data written as a run
and qrels (the same closed forms, [`tierank.tensor.kernels`][tierank.tensor.kernels]).

Measures are named as everywhere in tierank (``"nDCG@10"``, ``"RR@10"``, ``"AP"``, ``"P(rel=2)@5"``,
trec_eval's ``"ndcg_cut.10"``); the families with a tensor kernel are `FAMILIES`.

Examples
--------
Two queries of four candidates: the first has its relevant candidate in a two-way tie at ranks 2-3,
the second a padded slot (``mask``) and its relevant candidate in a three-way tie at the top:

>>> import numpy as np
>>> from tierank import tensor
>>> scores = np.array([[0.9, 0.5, 0.5, 0.1], [0.7, 0.7, 0.7, 0.0]])
>>> labels = np.array([[0, 1, 0, 0], [0, 0, 1, 0]])
>>> mask = np.array([[True] * 4, [True, True, True, False]])
>>> res = tensor.evaluate(scores, labels, ["RR@10", "P@1"], mask=mask)
>>> rr = res["RR@10"]
>>> rr.expected.round(4).tolist(), rr.min.tolist(), rr.max.tolist(), rr.oblivious.tolist()
([0.4167, 0.6111], [0.3333333333333333, 0.3333333333333333], [0.5, 1.0], [0.5, 0.3333333333333333])
>>> res["P@1"].expected.round(4).tolist(), res.tied_share.round(4).tolist()
([0.0, 0.3333], [0.5, 1.0])
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import TierankInputError
from ..measures.base import REGISTRY, Measure, parse_measure, summarize
from ..measures.linear import ideal_dcg_terms
from ..measures.names import plan as measure_plan
from . import inputs
from . import kernels as K

__all__ = [
    "evaluate",
    "TensorStats",
    "TensorResult",
    "FAMILIES",
    "TIE_BREAKS",
    "DEFAULT_CHUNK_CELLS",
    "group_flat",
    "check_measures",
]


def families() -> tuple[str, ...]:
    """The registered families that declare a tensor kernel
    ([`Measure.tensor_kernel`][tierank.measures.protocol.Measure]), sorted: a family registered with one
    is evaluated here with no other change."""
    return tuple(sorted(name for name, cls in REGISTRY.items() if cls.tensor_kernel in KERNELS))


#: the kernels a family can declare (`tierank.measures.base.Measure.tensor_kernel`)
KERNELS = ("linear", "first_relevant", "ap", "bpref", "err", "rbp_resid")

#: measure families with a tensor kernel (every parameter except those a family's
#: `tensor_refusal` refuses), derived from the registry when this module is imported
FAMILIES = families()

#: the families on tensors whose value depends on N+ (``n_relevant`` gives it at the evaluation's
#: ``rel`` only), derived from the registry (`Measure.uses_n_plus`)
NEEDS_N_PLUS = tuple(f for f in FAMILIES if REGISTRY[f].uses_n_plus)

#: the tie-breaks of the oblivious value: ``input`` (the candidates' order in the input row, as a
#: stable sort leaves it; `tierank.evaluate`'s ``tie_break="input"``), ``reverse`` (the reverse
#: of it: ``tie_break="trec_eval"`` when the docnos are the zero-padded candidate indices),
#: ``worst`` (the pessimistic ordering: the oblivious value is ``min``), ``best`` (``max``)
TIE_BREAKS = ("input", "reverse", "worst", "best")

#: cells (queries x candidates) evaluated at once: a batch is cut into chunks of
#: ``max(1, DEFAULT_CHUNK_CELLS // candidates)`` queries, so the temporaries stay bounded: measured
#: (NumPy float64, nDCG@10 + RR@10 + AP + R@100, tracemalloc) about 80 bytes per cell with 8% of the
#: candidates tied (benchmarks/bench_tensor.py), up to about 530 when every candidate is tied (the
#: tied positions' arrays grow with the share of ties): at most about 2.2 GiB for a full chunk,
#: whatever the batch (float32 needs less)
DEFAULT_CHUNK_CELLS = 1 << 22


@dataclass(frozen=True)
class TensorStats:
    """One measure's per-query statistics: arrays of shape ``[queries]`` in the input's library and
    device.  ``oblivious`` is the value under the evaluation's tie-break (`TIE_BREAKS`),
    ``expected``, ``min``, ``max`` and ``std`` (``var``) are over all orderings of the tied
    candidates, exact."""

    measure: str
    oblivious: Any
    expected: Any
    min: Any
    max: Any
    std: Any
    var: Any
    tie_break: str

    def summary(self) -> dict[str, float]:
        """The mean over queries of each statistic, as Python floats.

        ``std_of_mean`` is the standard deviation over tie orderings of the *mean* over queries,
        ``sqrt(sum of the variances) / queries`` (orderings of different queries are independent), as
        [`tierank.measures.Measure.aggregate`][tierank.measures.Measure.aggregate]; not the mean of the per-query ``std``.
        ``std`` is the same number under its older name, kept for compatibility (``scalars`` and
        `tierank.tensor.metric.TieAwareRetrieval` log it as ``MEASURE/std``).  ``range`` is
        ``max - min`` of the means.  NaN for no query."""
        xp = _namespace(self.expected)
        out = summarize(
            xp,
            parse_measure(self.measure).aggregator,
            self.oblivious,
            self.expected,
            self.min,
            self.max,
            self.var,
        )
        out["std_of_mean"] = out["std"]
        out["range"] = out["max"] - out["min"]
        return out


class TensorResult(Mapping[str, TensorStats]):
    """[`TensorStats`][tierank.tensor.TensorStats] per measure, keyed by the measure's canonical name (``"nDCG@10"``), in
    the order asked; ``tied_share`` per query (the valid candidates in tie groups of two or more,
    over the valid candidates) and, for flat input, ``queries``: the index of each row."""

    def __init__(self, stats: dict[str, TensorStats], tied_share: Any, queries: Any = None):
        self._stats = stats
        self.tied_share = tied_share
        self.queries = queries

    def __getitem__(self, key: str | Measure) -> TensorStats:
        if isinstance(key, str) and key in self._stats:
            return self._stats[key]
        names = [
            str(m) for m in measure_plan([key]).measures
        ]  # another spelling of an asked measure
        if len(names) != 1 or names[0] not in self._stats:
            raise KeyError(key)
        return self._stats[names[0]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stats)

    def __len__(self) -> int:
        return len(self._stats)

    def __repr__(self) -> str:
        return f"TensorResult({list(self._stats)}, queries={int(self.tied_share.shape[0])})"

    def scalars(self, prefix: str = "") -> dict[str, float]:
        """A per-step tie report as flat scalars for any logger (TensorBoard, W&B, Lightning's
        ``log_dict``): per measure ``MEASURE`` (the expected value), ``MEASURE/min``, ``MEASURE/max``,
        ``MEASURE/std`` (the std of the mean: [`summary`][tierank.tensor.TensorStats.summary]'s
        ``std_of_mean``), ``MEASURE/oblivious``, and ``tied_share`` (mean over queries of the share
        of tied candidates)."""
        out: dict[str, float] = {}
        for name, st in self._stats.items():
            s = st.summary()
            out[f"{prefix}{name}"] = s["expected"]
            for key in ("min", "max", "std", "oblivious"):
                out[f"{prefix}{name}/{key}"] = s[key]
        xp = _namespace(self.tied_share)
        n = int(self.tied_share.shape[0])
        out[f"{prefix}tied_share"] = float(xp.mean(self.tied_share)) if n else float("nan")
        return out


def _namespace(x):
    from array_api_compat import array_namespace

    return array_namespace(x)


def check_measures(measures, rel: int, n_relevant_given: bool) -> list[Measure]:
    resolved = measure_plan([measures] if isinstance(measures, (str, Measure)) else measures)
    parsed = list(resolved.measures)
    if not parsed:
        raise TierankInputError("no measure given")
    for m in parsed:
        if m.tensor_kernel not in KERNELS:
            names = families()
            why = m.tensor_refusal()
            raise TierankInputError(
                f"measure {str(m)!r}: no tensor kernel for {m.family}"
                + (f": {why}" if why else "")
                + f"; tierank.tensor evaluates {', '.join(names)} (tierank.evaluate has the rest)"
            )
        why = m.tensor_refusal()
        if why:
            raise TierankInputError(f"measure {str(m)!r}: {why}")
        if n_relevant_given and m.tensor_reads_every_judgment():
            raise TierankInputError(
                f"measure {str(m)!r}: it reads every judgment of a query, which the labels do not "
                "hold when n_relevant says the lists are cut from a larger pool"
            )
        if n_relevant_given and m.uses_n_plus and m.rel is not None and m.rel != rel:
            raise TierankInputError(
                f"measure {str(m)!r}: n_relevant counts relevant documents at rel={rel}, "
                f"not at the measure's rel={m.rel}"
            )
    return parsed


def group_flat(preds, target, indexes):
    """Flat ``preds, target, indexes`` (as torchmetrics' retrieval metrics take them) as padded
    ``(scores, labels, mask, queries)``: one row per distinct index, ascending, its candidates in
    their input order, padded to the largest query."""
    xp = _namespace(preds)
    dev = _device(preds)
    preds = xp.reshape(preds, (-1,))
    target = xp.reshape(target, (-1,))
    indexes = xp.reshape(indexes, (-1,))
    if not (preds.shape[0] == target.shape[0] == indexes.shape[0]):
        raise TierankInputError(
            f"preds, target and indexes must have the same number of entries, got "
            f"{preds.shape[0]}, {target.shape[0]} and {indexes.shape[0]}"
        )
    n = int(preds.shape[0])
    if n == 0:
        empty = xp.zeros((0, 0), dtype=preds.dtype, device=dev)
        return (
            empty,
            xp.zeros((0, 0), dtype=target.dtype, device=dev),
            xp.zeros((0, 0), dtype=xp.bool, device=dev),
            xp.zeros((0,), dtype=indexes.dtype, device=dev),
        )
    order = xp.argsort(indexes, stable=True)
    idx = xp.take(indexes, order)
    new = xp.concat([xp.ones((1,), dtype=xp.bool, device=dev), idx[1:] != idx[:-1]])
    qid = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1
    nq = int(qid[-1]) + 1
    qs = xp.arange(nq, dtype=xp.int64, device=dev)
    starts = xp.searchsorted(qid, qs, side="left")
    counts = xp.searchsorted(qid, qs, side="right") - starts
    width = int(xp.max(counts))
    col = xp.reshape(xp.arange(width, dtype=xp.int64, device=dev), (1, width))
    mask = col < counts[:, None]
    slot = xp.reshape(xp.where(mask, starts[:, None] + col, xp.zeros_like(col)), (-1,))
    src = xp.take(order, slot)

    def pad(x):
        return xp.reshape(xp.take(x, src), (nq, width))

    return pad(preds), pad(target), mask, xp.take(idx, starts)


def _device(x):
    from array_api_compat import device

    return device(x)


def _compute_dtype(xp, scores, dtype):
    if dtype is not None:
        if isinstance(dtype, str):
            if dtype not in ("float32", "float64"):
                raise TierankInputError(f"dtype must be float32 or float64, got {dtype!r}")
            return getattr(xp, dtype)
        return dtype
    if scores.dtype == xp.float64:
        return xp.float64
    return xp.float32 if xp.isdtype(scores.dtype, "real floating") else xp.float64


def evaluate(
    scores,
    labels,
    measures: Iterable[str | Measure] | str | Measure,
    mask=None,
    *,
    indexes=None,
    rel: int = 1,
    n_relevant=None,
    tie_break: str = "input",
    dtype=None,
    chunk_cells: int = DEFAULT_CHUNK_CELLS,
) -> TensorResult:
    """Tie-aware evaluation of score tensors: per query, the oblivious value under ``tie_break`` and
    the exact expected value, min, max and std over all orderings of tied candidates.

    Parameters
    ----------
    scores, labels
        ``[queries, candidates]`` arrays of any array API library (NumPy, PyTorch, CuPy, JAX, ...):
        the model's scores (any real dtype; bf16 and fp16 are compared as they are, computed in
        float32) and the graded relevance labels (integers, bools or floats; a label >= ``rel`` is
        relevant, the gain is ``max(label, 0)``).  With ``indexes``: flat arrays, one entry per
        (query, candidate), as torchmetrics takes them.
    measures
        Measure names as everywhere in tierank (``"nDCG@10"``, ``"RR@10"``, ``"AP"``, ``"P(rel=2)@5"``),
        or [`tierank.measures.Measure`][tierank.measures.Measure] values; the families of `FAMILIES`.
    mask
        ``[queries, candidates]`` booleans, True for a real candidate, False for padding (default:
        every slot is a candidate).  A query with no valid candidate scores 0 everywhere.
    indexes
        Flat form: the query of each entry (integers); rows of the result follow the distinct
        indexes ascending (``TensorResult.queries``).
    rel
        Minimum label counted relevant by the binary measures (a measure's own ``rel`` overrides it).
    n_relevant
        ``[queries]`` N+: the relevant documents of each query at ``rel`` when the candidate lists are
        cut from a larger pool (default: counted from the labels).  The relevant documents missing
        from a list count in R, AP and R_cap's N+ and, with the gain of label ``rel``, in nDCG's ideal DCG.
    tie_break
        The order of the oblivious value, one of `TIE_BREAKS` (default ``input``).
    dtype
        Compute dtype, ``"float32"`` or ``"float64"`` (default: float64 for float64 scores, else float32).
    chunk_cells
        At most this many query x candidate cells are evaluated at once (`DEFAULT_CHUNK_CELLS`).

    Returns
    -------
    TensorResult
        ``result["nDCG@10"].expected`` (and ``.min``, ``.max``, ``.std``, ``.oblivious``), arrays of
        shape ``[queries]``; ``result.tied_share``; ``result.scalars()`` for a logger.
    """
    if tie_break not in TIE_BREAKS:
        raise TierankInputError(
            f"unknown tie_break {tie_break!r}; accepted: {', '.join(TIE_BREAKS)}"
        )
    if isinstance(rel, bool) or not isinstance(rel, int):
        raise TierankInputError(f"rel must be an integer, got {rel!r}")
    if isinstance(chunk_cells, bool) or not isinstance(chunk_cells, int) or chunk_cells < 1:
        raise TierankInputError(f"chunk_cells must be a positive integer, got {chunk_cells!r}")
    parsed = check_measures(measures, rel, n_relevant is not None)
    batch = _checked_arrays(scores, labels, mask, indexes, n_relevant, dtype, parsed, rel)
    return _evaluate_chunks(batch, parsed, rel, tie_break, chunk_cells)


@dataclass(frozen=True)
class _Batch:
    """Checked inputs of `evaluate`: padded ``[queries, candidates]`` arrays of namespace ``xp``, the
    query ids of flat input (else None), ``n_relevant`` if given, and the compute dtype ``cdt``."""

    xp: Any
    scores: Any
    labels: Any
    mask: Any
    queries: Any
    n_relevant: Any
    cdt: Any


def _checked_arrays(scores, labels, mask, indexes, n_relevant, dtype, parsed, rel) -> _Batch:
    """The inputs as padded arrays of one namespace, checked (one line per problem)."""
    xp, scores, labels, mask, indexes, n_relevant, dtype = inputs.prepare(
        scores, labels, mask, indexes, n_relevant, dtype, parsed
    )
    queries = None
    if indexes is not None:
        if mask is not None:
            raise TierankInputError(
                "mask applies to padded [queries, candidates] input, not with indexes"
            )
        scores, labels, mask, queries = group_flat(
            xp.asarray(scores), xp.asarray(labels), xp.asarray(indexes)
        )
    if len(scores.shape) != 2:
        raise TierankInputError(
            f"scores must be [queries, candidates] (or flat with indexes), got shape "
            f"{tuple(scores.shape)}"
        )
    if tuple(labels.shape) != tuple(scores.shape):
        raise TierankInputError(
            f"labels must have the shape of scores {tuple(scores.shape)}, got {tuple(labels.shape)}"
        )
    dev = _device(scores)
    B, C = (int(d) for d in scores.shape)
    if mask is None:
        mask = xp.ones((B, C), dtype=xp.bool, device=dev)
    elif tuple(mask.shape) != (B, C) or mask.dtype != xp.bool:
        raise TierankInputError(
            f"mask must be a boolean array of shape {(B, C)}, got {mask.dtype} {tuple(mask.shape)}"
        )
    if C == 0:  # no candidate slot at all: one padded slot (every measure is then 0)
        scores = xp.zeros((B, 1), dtype=scores.dtype, device=dev)
        labels = xp.zeros((B, 1), dtype=labels.dtype, device=dev)
        mask, C = xp.zeros((B, 1), dtype=xp.bool, device=dev), 1
    if not (xp.isdtype(labels.dtype, "numeric") or labels.dtype == xp.bool):
        raise TierankInputError(f"labels must be numeric, got {labels.dtype}")
    if not xp.isdtype(scores.dtype, "real floating") and not xp.isdtype(scores.dtype, "integral"):
        raise TierankInputError(f"scores must be real numbers, got {scores.dtype}")
    cdt = _compute_dtype(xp, scores, dtype)
    if xp.isdtype(scores.dtype, "real floating") and bool(xp.any(mask & xp.isnan(scores))):
        raise TierankInputError(
            "scores: NaN for a valid candidate (mask it out or give it a score)"
        )
    if xp.isdtype(labels.dtype, "real floating") and bool(xp.any(mask & xp.isnan(labels))):
        raise TierankInputError("labels: NaN for a valid candidate")
    if n_relevant is not None:
        n_relevant = xp.astype(xp.asarray(n_relevant, device=dev), cdt)
        if tuple(n_relevant.shape) != (B,):
            raise TierankInputError(
                f"n_relevant must have one entry per query ({B}), got shape {tuple(n_relevant.shape)}"
            )
        present = xp.sum(xp.astype(mask & (labels >= rel), cdt), axis=1)
        if bool(xp.any(n_relevant < present)) or bool(xp.any(n_relevant != xp.round(n_relevant))):
            raise TierankInputError(
                f"n_relevant must be a whole number of at least the relevant candidates "
                f"(label >= {rel}) of each query"
            )
    return _Batch(xp, scores, labels, mask, queries, n_relevant, cdt)


def _evaluate_chunks(batch: _Batch, parsed, rel, tie_break, chunk_cells) -> TensorResult:
    """Every measure on chunks of at most ``chunk_cells`` cells, concatenated."""
    xp, scores, labels, mask = batch.xp, batch.scores, batch.labels, batch.mask
    n_relevant, cdt = batch.n_relevant, batch.cdt
    dev = _device(scores)
    B, C = (int(d) for d in scores.shape)
    names = [str(m) for m in parsed]
    parts: dict[str, list[list[Any]]] = {name: [[] for _ in range(5)] for name in names}
    tied = []
    step = max(1, chunk_cells // max(C, 1))
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        L = K.layout(
            xp,
            scores[lo:hi, ...],
            labels[lo:hi, ...],
            mask[lo:hi, ...],
            dtype=cdt,
            tie_break=tie_break,
            rel=rel,
            n_relevant=None if n_relevant is None else n_relevant[lo:hi],
        )
        tied.append(L.tied_share())
        for m, name in zip(parsed, names):
            raw = _stats(L, m, rel)
            for i, v in enumerate((raw.oblivious, raw.expected, raw.min, raw.max, raw.var)):
                parts[name][i].append(v)

    def cat(chunks):
        return xp.concat(chunks) if chunks else xp.zeros((0,), dtype=cdt, device=dev)

    out = {name: _joined(xp, name, [cat(c) for c in parts[name]], tie_break) for name in names}
    return TensorResult(out, cat(tied), batch.queries)


def _joined(xp, name: str, stats: list, tie_break: str) -> TensorStats:
    """Measure ``name``'s statistics from its concatenated ``[oblivious, expected, min, max, var]``, checked
    finite; the oblivious value of ``worst`` and ``best`` is the min and the max."""
    obl, e, lo_, hi_, var = stats
    var = xp.clip(var, 0.0, None)
    e = xp.where((var == 0.0) & (lo_ == hi_), lo_, e)  # a value no ordering changes is that value
    inputs.check_finite(xp, name, (obl, e, lo_, hi_, var))
    if tie_break == "worst":
        obl = lo_
    elif tie_break == "best":
        obl = hi_
    return TensorStats(name, obl, e, lo_, hi_, xp.sqrt(var), var, tie_break)


def _gain(xp, label, m: Measure):
    """The family's gain of each label ([`nDCG.label_gain`][tierank.measures.linear.nDCG.label_gain])."""
    return m.label_gain(xp, label)  # type: ignore[attr-defined]


def _idcg(L: K.Layout, m: Measure, k: float, rel: int):
    """Ideal DCG at k from the labels of the valid candidates (plus, with ``n_relevant``, the missing
    relevant documents at the gain of label ``rel``)."""
    xp = L.xp
    B, C = L.shape
    gain = xp.where(L.valid, _gain(xp, L.label, m), xp.zeros_like(L.label))
    if L.n_relevant is not None:
        present = xp.sum(L.relevant(rel), axis=1)
        extra = L.n_relevant - present
        width = int(min(float(xp.max(extra)) if B else 0.0, k if math.isfinite(k) else math.inf))
        if width > 0:
            cols = xp.astype(
                xp.reshape(xp.arange(width, device=_device(gain)), (1, width)), L.dtype
            )
            g_rel = _gain(xp, xp.full((1, 1), float(rel), dtype=L.dtype, device=_device(gain)), m)
            block = xp.where(
                cols < extra[:, None],
                xp.broadcast_to(g_rel, (B, width)),
                xp.zeros((B, width), dtype=L.dtype, device=_device(gain)),
            )
            gain = xp.concat([gain, block], axis=1)
    ideal = xp.sort(gain, axis=1, descending=True)
    n = int(ideal.shape[1])
    i = xp.reshape(xp.astype(xp.arange(n, device=_device(gain)), L.dtype), (1, n))
    return xp.sum(ideal_dcg_terms(xp, ideal, i, k), axis=1)


def _stats(L: K.Layout, m: Measure, rel: int) -> K.RawStats:
    """One measure's statistics on the chunk ``L``, by the kernel its family declares; a linear
    family brings its own formulas (`position_weights`, `normalizer`, `rank_cutoff`, and
    `label_gain` for graded values)."""
    xp = L.xp
    rel = rel if m.rel is None else m.rel
    k = m.k
    if m.tensor_kernel == "first_relevant":
        return K.first_relevant_stats(L, m.family, k, rel)
    if m.tensor_kernel == "ap":
        return K.ap_stats(L, k, rel)
    if m.tensor_kernel == "bpref":
        return K.bpref_stats(L, rel)
    if m.tensor_kernel == "rbp_resid":
        w = m.position_weights(xp, L.jf)  # type: ignore[attr-defined]
        return K.rbp_resid_stats(L, w, m.param("p"))
    if m.tensor_kernel == "err":
        return K.err_stats(L, k, m.param("max_grade"), str(m))
    B, C = L.shape
    jf = L.jf
    nrel = L.nrel(rel)
    cut = m.rank_cutoff(nrel)  # type: ignore[attr-defined]
    if isinstance(cut, (int, float)):
        incut = L.j < min(cut, C)
    else:  # a cutoff of its own per query (Rprec: N+)
        incut = jf < cut[:, None]
    w = m.position_weights(xp, jf)  # type: ignore[attr-defined]
    w = xp.where(incut, w, xp.zeros_like(w))
    if hasattr(m, "label_gain"):  # graded: the gains, over their ideal ordering
        gain = xp.where(L.valid, _gain(xp, L.label, m), xp.zeros_like(L.label))
        return K.linear_stats(L, w, gain, _idcg(L, m, k, rel))
    den = m.normalizer(xp, nrel, L.row_sum(L.f(L.valid)))  # type: ignore[attr-defined]
    own = m.label_values(xp, L.label, L.valid, rel)  # type: ignore[attr-defined]
    if own is not None:  # the family's own values of the labels
        return K.linear_stats(L, w, own, den)
    if getattr(m, "kind", "rel") == "judged":  # every candidate has a label
        return K.linear_stats(L, w, L.f(L.valid), den)
    return K.linear_stats(L, w, L.relevant(rel), den, binary_rel=rel)
