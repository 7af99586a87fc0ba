r"""Geometric mean of bpref over queries, trec_eval's ``gm_bpref`` (trec_eval 10, ``m_gm_bpref.c``).

Definition: per query `X_q = \max(bpref_q, 10^{-5})` (``MIN_GEO_MEAN``), `bpref_q` as
trec_eval's ``bpref`` ([`tierank.measures.bpref.Bpref`][tierank.measures.bpref.Bpref]), and over the `n` evaluated
queries `G = \exp(\frac1n \sum_q \log X_q)` (``te_calc_avg_meas_s_gm``); printed in the summary
only.  The summary is that of [`tierank.measures.gmap.GeometricMean`][tierank.measures.gmap.GeometricMean] (as ``gm_map``'s):

* **oblivious, min, max: exact**: bpref's own (exact, attained at the extremal arrangements of every
  tie group at once), floored; `G` is increasing in every `X_q`;
* **expected, std: sampled**: `E[X_q^{1/n}]` and `Var[X_q^{1/n}]` per query from
  ``prep.samples`` uniform orderings of the query's tie groups that hold a relevant document and
  another one (generators keyed by the seed, the query and the group's rank,
  [`tierank.measures.sampling.query_keys`][tierank.measures.sampling.query_keys]), exact where the query's bpref cannot vary.
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, register
from .bpref import Bpref
from .gmap import GeometricMean, GMStats
from .kernels import ratio
from .linear import REL
from .sampling import query_keys

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
        "min/max exact, expectation sampled"
    )
    schema = (REL,)
    bounds_refusal = "bpref skips unjudged documents by definition (it is already their bound)"

    def stats(self, prep: Prepared) -> GMStats:
        n = prep.nq
        root = 1.0 / n if n else 1.0
        b = Bpref(params=(("rel", self.level),)).compute(prep)
        obl, lo, hi = (np.maximum(x, self.floor) for x in (b.oblivious, b.min, b.max))
        vary = np.flatnonzero(lo < hi)
        e, v, se = lo.copy(), np.zeros(n), np.zeros(n)
        rmean, rvar = lo**root, np.zeros(n)
        if not len(vary):
            return GMStats(obl, e, lo, hi, v, root_mean=rmean, root_var=rvar, root_n=n)
        S = int(prep.samples)
        totals = self._sampled_sums(prep, vary, S)
        for i, q in enumerate(vary):
            x = np.maximum(totals[i], self.floor)
            xr = x**root
            e[q], v[q], se[q] = (
                min(max(x.mean(), lo[q]), hi[q]),
                x.var(ddof=1),
                np.sqrt(x.var(ddof=1) / S),
            )
            rmean[q], rvar[q] = xr.mean(), xr.var(ddof=1)
        sampled = np.zeros(n, dtype=bool)
        sampled[vary] = True
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

    def _sampled_sums(self, prep: Prepared, queries: np.ndarray, S: int) -> list[np.ndarray]:
        """bpref of ``S`` uniform orderings of each of ``queries``: the groups holding a relevant and
        another document drawn, the others at their one value."""
        rel, non, R, D = Bpref(params=(("rel", self.level),))._classes(prep)
        cut = prep.cut(float("inf"))
        inside = prep.pos < cut
        cls = np.where(rel, 0, np.where(non, 1, 2))
        cs = np.concatenate(([0], np.cumsum(non & inside)))
        before = cs[:-1] - cs[prep.qstart[prep.qi]]
        f = 1.0 - ratio(np.minimum(before, R[prep.qi]), D[prep.qi])
        term = np.where(rel & inside, f, 0.0)
        ng = len(prep.gsize)
        g_obl = np.bincount(prep.gid, weights=term, minlength=ng)
        r = np.bincount(prep.gid, weights=rel, minlength=ng).round().astype(np.int64)
        m = prep.gsize.astype(np.int64)
        drawn = (r > 0) & (r < m) & (prep.gpos0 < cut)
        fixed = np.bincount(prep.gq, weights=np.where(drawn, 0.0, g_obl), minlength=prep.nq)
        qkeys = query_keys(prep)
        groups = np.flatnonzero(drawn)
        starts = np.searchsorted(prep.gq[groups], np.asarray(queries))
        ends = np.searchsorted(prep.gq[groups], np.asarray(queries), side="right")
        out = []
        for q, a, z in zip(queries, starts, ends):
            total = np.full(S, fixed[q])
            for gi in groups[a:z]:
                lo_row, hi_row = prep.gstart[gi], prep.gstart[gi + 1]
                # relevant documents coded 2^32 (never counted: fewer than 2^32 documents), judged
                # non-relevant 1: the running sum counts the judged non-relevant documents above
                codes = np.sort(np.array([1 << 32, 1, 0], dtype=np.int64)[cls[lo_row:hi_row]])
                B = int(before[lo_row])
                P0 = int(prep.gpos0[gi])
                rng = np.random.default_rng([int(qkeys[q]), P0])
                k = len(codes)
                read = min(k, max(0, int(min(cut, P0 + k)) - P0))
                step = max(1, (1 << 20) // k)
                for s0 in range(0, S, step):
                    cnt = min(step, S - s0)
                    seq = rng.permuted(np.broadcast_to(codes, (cnt, k)), axis=1)[:, :read]
                    row, col = np.nonzero(seq == 1 << 32)
                    nb = B + (np.cumsum(seq, axis=1)[row, col] & 0xFFFFFFFF)
                    fv = 1.0 - ratio(np.minimum(nb, R[q]), np.full(nb.shape, D[q]))
                    total[s0 : s0 + cnt] += np.bincount(row, weights=fv, minlength=cnt)
            out.append(ratio(total, np.full(S, R[q])))
        return out
