r"""Geometric mean of bpref over queries, trec_eval's ``gm_bpref`` (trec_eval 10, ``m_gm_bpref.c``).

Definition: per query `X_q = \max(bpref_q, 10^{-5})` (``MIN_GEO_MEAN``), `bpref_q` as
trec_eval's ``bpref`` ([`tierank.measures.bpref.Bpref`][tierank.measures.bpref.Bpref]), and over the `n` evaluated
queries `G = \exp(\frac1n \sum_q \log X_q)` (``te_calc_avg_meas_s_gm``); printed in the summary
only.  The summary is that of [`tierank.measures.gmap.GeometricMean`][tierank.measures.gmap.GeometricMean] (as ``gm_map``'s):

* **oblivious, min, max: exact**: bpref's own (exact, attained at the extremal arrangements of every
  tie group at once), floored; `G` is increasing in every `X_q`;
* **expected, std: exact for few orderings, else sampled**: `E[X_q^{1/n}]` and `Var[X_q^{1/n}]`
  per query over its tie orderings.  Only the groups holding a relevant and another document vary,
  and in a group wholly above the depth limit only the order of its relevant and judged
  non-relevant documents (bpref skips the others).  A query with at most
  ``tierank.measures.sampling.ENUMERATE`` such orderings in all is enumerated, every one once
  (exact, ``ddof=0``); the others draw ``prep.samples`` uniform orderings of those documents,
  each group's rows shuffled in place by a generator keyed by the seed, the query and the group's
  rank ([`tierank.measures.sampling.query_keys`][tierank.measures.sampling.query_keys]) (sampled, ``ddof=1``,
  labelled per query); a query whose bpref cannot vary is exact.
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared
from . import sampling
from .base import FamilyNames, register
from .bpref import Bpref
from .gmap import GeometricMean, GMStats
from .kernels import ratio
from .linear import REL
from .sampling import (
    arrangement_count,
    class_arrangements,
    enumerable,
    query_keys,
    shuffled_rows,
)

__all__ = ["GMBpref"]


@register
class GMBpref(GeometricMean):
    """Geometric mean of bpref over queries, each floored at 1e-5 (trec_eval gm_bpref)."""

    family = "GMBpref"
    pretty = "geometric mean of bpref"
    definition = "geometric mean over queries of bpref (floored at 1e-5)"
    citation = "Buckley, C. and Voorhees, E. M. (2004). Retrieval evaluation with incomplete information. SIGIR 2004; Robertson, S. (2006). On GMAP. CIKM 2006."
    names = FamilyNames(trec_eval="gm_bpref", ir_measures=None)
    description = (
        "geometric mean over queries of max(bpref, 1e-5) (trec_eval gm_bpref); "
        "min/max exact, expectation exact for few orderings, else sampled"
    )
    schema = (REL,)
    bounds_refusal = "bpref skips unjudged documents by definition (it is already their bound)"

    def stats(self, prep: Prepared) -> GMStats:
        n = prep.nq
        root = 1.0 / n if n else 1.0
        b = Bpref(params=(("rel", self.rel),)).compute(prep)
        obl, lo, hi = (np.maximum(x, self.floor) for x in (b.oblivious, b.min, b.max))
        vary = np.flatnonzero(lo < hi)
        e, v, se = lo.copy(), np.zeros(n), np.zeros(n)
        rmean, rvar = lo**root, np.zeros(n)
        if not len(vary):
            return GMStats(obl, e, lo, hi, v, root_mean=rmean, root_var=rvar, root_n=n)
        S = int(prep.samples)
        sampled = np.zeros(n, dtype=bool)
        for q, (total, exact) in zip(vary.tolist(), self._sums(prep, vary, S)):
            x = np.maximum(total, self.floor)
            xr = x**root
            ddof = 0 if exact else 1
            e[q], v[q] = min(max(x.mean(), lo[q]), hi[q]), x.var(ddof=ddof)
            rmean[q], rvar[q] = xr.mean(), xr.var(ddof=ddof)
            sampled[q] = not exact
            se[q] = 0.0 if exact else np.sqrt(v[q] / S)
        if not sampled.any():
            return GMStats(obl, e, lo, hi, v, root_mean=rmean, root_var=rvar, root_n=n)
        return GMStats(
            obl,
            e,
            lo,
            hi,
            v,
            method="sampled",
            samples=S,
            seed=int(prep.seed),
            se=se,
            sampled=sampled,
            root_mean=rmean,
            root_var=rvar,
            root_n=n,
        )

    def _sums(self, prep: Prepared, queries: np.ndarray, S: int) -> list[tuple[np.ndarray, bool]]:
        """Per query of ``queries``: bpref over its tie orderings and whether that is every distinct
        ordering once (True: at most `ENUMERATE` of them) or ``S`` uniform ones (False).  Only the
        groups holding a relevant and another document vary; in a group wholly above the depth limit
        only the order of its judged documents matters (the others are left out of the draws)."""
        rel, non, R, D = Bpref(params=(("rel", self.rel),))._classes(prep)
        cut = prep.cut(float("inf"))
        inside = prep.pos < cut
        cs = np.concatenate(([0], np.cumsum(non & inside)))
        before = cs[:-1] - cs[prep.qstart[prep.qi]]
        f = 1.0 - ratio(np.minimum(before, R[prep.qi]), D[prep.qi])
        term = np.where(rel & inside, f, 0.0)
        ng = len(prep.gsize)
        g_obl = np.bincount(prep.gid, weights=term, minlength=ng)
        r = np.bincount(prep.gid, weights=rel, minlength=ng).round().astype(np.int64)
        s = np.bincount(prep.gid, weights=non, minlength=ng).round().astype(np.int64)
        m = prep.gsize.astype(np.int64)
        drawn = (r > 0) & (r < m) & (prep.gpos0 < cut)
        fixed = np.bincount(prep.gq, weights=np.where(drawn, 0.0, g_obl), minlength=prep.nq)
        qkeys = query_keys(prep)
        groups = np.flatnonzero(drawn)
        starts = np.searchsorted(prep.gq[groups], np.asarray(queries))
        ends = np.searchsorted(prep.gq[groups], np.asarray(queries), side="right")
        # codes: a judged non-relevant document 1, a relevant one 2^32 (never counted: fewer than 2^32
        # documents), any other 0; the running sum counts the judged non-relevant documents above
        codes = np.array([1 << 32, 1, 0], dtype=np.int64)
        out = []
        for q, a, z in zip(queries, starts, ends):
            parts = []  # per group: (judged non-relevant before it, rank of its first, counts, positions read)
            count = 1
            for gi in groups[a:z]:
                P0, k = int(prep.gpos0[gi]), int(m[gi])
                read = min(k, max(0, int(min(cut, P0 + k)) - P0))
                comp: tuple[int, ...] = (int(r[gi]), int(s[gi]))
                if read < k:  # cut inside the group: which documents fall past it matters too
                    comp = (*comp, k - comp[0] - comp[1])
                parts.append((int(before[prep.gstart[gi]]), P0, comp, min(read, sum(comp))))
                count = min(count * arrangement_count(comp), sampling.ENUMERATE + 1)
                if not enumerable(comp):
                    count = sampling.ENUMERATE + 1
            exact = count <= sampling.ENUMERATE
            if exact:  # every distinct ordering of every group, their sums over the product
                total = np.full(1, fixed[q])
                for B, _, comp, read in parts:
                    seq = codes[class_arrangements(comp)[:, :read]]
                    total = np.add.outer(total, self._group(seq, B, R[q], D[q])).reshape(-1)
            else:
                total = np.full(S, fixed[q])
                for B, P0, comp, read in parts:
                    if sum(c > 0 for c in comp) == 1:  # one ordering (no judged non-relevant one)
                        one = np.repeat(codes[: len(comp)], comp)[None, :read]
                        total += self._group(one, B, R[q], D[q])
                        continue
                    rng = np.random.default_rng([int(qkeys[q]), P0])
                    group = np.repeat(
                        codes[::-1], comp[::-1] if len(comp) == 3 else (0, *comp[::-1])
                    )
                    for s0, seq in shuffled_rows(rng, group.astype(np.int64), S):
                        total[s0 : s0 + len(seq)] += self._group(seq[:, :read], B, R[q], D[q])
            out.append((ratio(total, np.full(len(total), R[q])), exact))
        return out

    @staticmethod
    def _group(seq: np.ndarray, B: int, R: float, D: float) -> np.ndarray:
        """A group's sum of bpref terms in each row of ``seq`` (orderings x positions read, codes),
        with ``B`` judged non-relevant documents above the group."""
        row, col = np.nonzero(seq == 1 << 32)
        nb = B + (np.cumsum(seq, axis=1)[row, col] & 0xFFFFFFFF)
        fv = 1.0 - ratio(np.minimum(nb, R), np.full(nb.shape, D))
        return np.bincount(row, weights=fv, minlength=len(seq))
