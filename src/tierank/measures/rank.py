r"""Measures decided by the first relevant document: RR and Success.

Only the first tie group `G^*` holding a relevant document matters.  With
`m = |G^*|`, `r` relevant documents in it and `c` documents
ranked above it, the offset `t` of the first relevant document inside
`G^*` follows the negative hypergeometric law

.. math:: P(T = t) = \binom{m-t-1}{r-1} \Big/ \binom{m}{r}, \qquad t = 0..m-r,

which gives (McSherry & Najork 2008; Yang et al. 2026, App. C, eqs. 18-22, in
an equivalent form) `E[RR@k] = \sum_{t \le k-c-1} P(t)/(c+t+1)`, and the
exact variance as `\sum_t P(t) (RR_t - E[RR])^2` (centered: exactly 0 when
the group is all relevant or lies past the cutoff).  Success@k is Bernoulli with
`P = 1 - \binom{m-r}{s}/\binom{m}{s}`, `s = \min(m, k - c)`, variance
`P \cdot (1 - P)` with `1 - P` the probability itself, not a difference.
Binomials are evaluated in log space from one log-factorial table.
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared, Which
from .base import FamilyNames, Measure, Stats, register
from .kernels import group_counts, log_factorials, segment_firsts
from .linear import REL

__all__ = [
    "RR",
    "Success",
    "first_relevant_rank",
    "first_relevant_group",
    "offset_log_prob",
    "success_moments",
]


def offset_log_prob(lfac, m, r, t):
    """``log P(T = t)`` of the offset ``T`` of the first relevant document in a tie group of ``m``
    documents, ``r`` of them relevant (negative hypergeometric:
    ``C(m-t-1, r-1) / C(m, r)``), with ``lfac(x) = log(x!)`` over arrays of any namespace: the
    one formula of runs and tensors (``t <= m - r``; callers mask the rest)."""
    return (lfac(m - t - 1) - lfac(r - 1) - lfac(m - t - r)) - (lfac(m) - lfac(r) - lfac(m - r))


def success_moments(xp, lfac, m, r, c, k):
    """Success@k's expectation and variance per query from the first tie group holding a relevant
    document (``m`` documents, ``r`` relevant, ``c`` ranked above it; arrays of the namespace
    ``xp``, ``lfac(x) = log(x!)``): ``P = 1 - C(m-r, s)/C(m, s)``, ``s = min(m, k - c)``, variance
    ``P (1 - P)``.  The one formula of runs and tensors."""
    zero = xp.zeros_like(m)
    s = xp.clip(xp.minimum(m, k - c), 0, None)
    s = xp.astype(s, m.dtype)
    none_ok = s <= m - r  # possible that the first s positions hold no relevant doc
    ss = xp.where(none_ok, s, zero)
    p_none = xp.exp(
        lfac(m - r) - lfac(xp.where(none_ok, m - r - ss, zero)) - lfac(m) + lfac(m - ss)
    )
    p_none = xp.where(
        s <= 0, xp.ones_like(p_none), xp.where(none_ok, p_none, xp.zeros_like(p_none))
    )
    return 1.0 - p_none, (1.0 - p_none) * p_none


def first_relevant_rank(prep: Prepared, seq: np.ndarray) -> np.ndarray:
    """0-based rank of the first relevant document per query (inf if none)."""
    idx = np.flatnonzero(seq)
    out = np.full(prep.nq, np.inf)
    if len(idx):
        q = prep.qi[idx]
        first = segment_firsts(q)
        out[q[first]] = prep.pos[idx[first]]
    return out


def first_relevant_group(
    prep: Prepared, rel: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query with a relevant document: (query, group size m, relevant r, rank offset c);
    cached on ``prep``."""
    level = prep.rel if rel is None else rel
    return prep.cached(("first_relevant_group", level), lambda: _first_group(prep, level))


def _first_group(prep: Prepared, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r_g = group_counts(prep, "rel", rel)
    gidx = np.flatnonzero(r_g > 0)
    gq = prep.gq[gidx]
    first = segment_firsts(gq)
    g = gidx[first]
    return gq[first], prep.gsize[g].astype(np.int64), r_g[g], prep.gpos0[g].astype(np.int64)


class _FirstRelevant(Measure):
    schema = (REL,)
    tensor_kernel = "first_relevant"

    def of_rank(self, rank: np.ndarray, k: float) -> np.ndarray:  # pragma: no cover - abstract
        """The value of a ranking whose first relevant document is at 0-based ``rank`` (inf: none)."""
        raise NotImplementedError

    def moments(
        self, prep: Prepared
    ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """Exact expectation and variance per query over the tie orderings of ``prep``."""
        raise NotImplementedError

    def stats(self, prep: Prepared) -> Stats:
        level = prep.rel if self.rel is None else self.rel

        def rank(which: Which) -> np.ndarray:
            # shared by RR and every cutoff of Success (cached on prep)
            return prep.cached(
                ("first_relevant_rank", which, level),
                lambda: first_relevant_rank(prep, prep.arrangement(which, "rel", level)),
            )

        vals = [
            self.of_rank(rank(w), prep.cut(self.k)) for w in ("policy", "pessimistic", "optimistic")
        ]
        e, v = self.moments(prep)
        return Stats(vals[0], e, vals[1], vals[2], v)


@register
class RR(_FirstRelevant):
    """Reciprocal rank of the first relevant document (0 if none in the top k)."""

    family = "RR"
    pretty = "reciprocal rank"
    definition = "1 / the rank of the first relevant document (0 if none within the cutoff)"
    citation = "Voorhees, E. M. (1999). The TREC-8 Question Answering Track Report. TREC-8."
    names = FamilyNames(trec_eval="recip_rank", ranx="mrr", mteb="mrr", sentence_transformers="mrr")
    description = "reciprocal rank of the first relevant document within the cutoff"

    def of_rank(self, rank: np.ndarray, k: float) -> np.ndarray:
        return np.where(rank < k, 1.0 / (rank + 1.0), 0.0)

    def moments(self, prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
        e = np.zeros(prep.nq)
        var = np.zeros(prep.nq)
        q, m, r, c = first_relevant_group(prep, self.rel)
        if len(q):
            kk = np.minimum(prep.cut(self.k), np.iinfo(np.int64).max // 2)
            u = np.minimum(m - r, np.asarray(kk - c - 1, dtype=np.float64)).astype(np.int64)
            cnt = np.clip(u + 1, 0, None)
            total = int(cnt.sum())
            if total:
                rep = np.repeat(np.arange(len(q)), cnt)
                t = np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt)
                mm, rr, cc = m[rep], r[rep], c[rep]
                lf = log_factorials(int(m.max()))
                p = np.exp(offset_log_prob(lf.__getitem__, mm, rr, t))
                inv = 1.0 / (cc + t + 1.0)
                n = len(q)
                eq = np.bincount(rep, weights=p * inv, minlength=n)
                # offsets past the cutoff score 0: their probability is 1 - P(T <= u), exactly 0
                # when every offset is inside the cutoff
                inside = np.bincount(rep, weights=p, minlength=n)
                past = np.where(u >= m - r, 0.0, np.clip(1.0 - inside, 0.0, None))
                vq = (
                    np.bincount(rep, weights=p * (inv - eq[rep]) ** 2, minlength=n) + past * eq * eq
                )
                e[q], var[q] = eq, vq
        return e, var


@register
class Success(_FirstRelevant):
    """1 if a relevant document is in the top k, else 0."""

    family = "Success"
    citation = "Voorhees, E. M. and Tice, D. M. (2000). The TREC-8 Question Answering Track Evaluation. TREC-8."
    pretty = "success at k"
    definition = "1 if a relevant document is in the top k, else 0"
    names = FamilyNames(
        trec_eval_cut="success",
        trec_eval_cutoffs=(1, 5, 10),
        ranx="hit_rate",
        mteb="hit_rate",
        sentence_transformers="accuracy",
    )
    description = "1 if any relevant document is in the top k"

    def of_rank(self, rank: np.ndarray, k: float) -> np.ndarray:
        return (rank < k).astype(np.float64)

    def moments(self, prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
        e = np.zeros(prep.nq)
        var = np.zeros(prep.nq)
        q, m, r, c = first_relevant_group(prep, self.rel)
        if len(q):
            lf = log_factorials(int(m.max()))
            kk = np.minimum(prep.cut(self.k), np.iinfo(np.int64).max // 2)
            e[q], var[q] = success_moments(np, lf.__getitem__, m, r, c, kk)
        return e, var
