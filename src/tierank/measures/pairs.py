r"""ir_measures' Accuracy and Compat: measures of how pairs of documents are ordered.

**Accuracy** (ir_measures 0.4, ``measures/accuracy.py``, ``providers/accuracy_provider.py``): among
the top k retrieved (the whole list without a cutoff), with `R` relevant documents (grade >=
``rel``) and `N` others (unjudged included), the share of (relevant, other) pairs ranked
correctly, `1 - D / (R N)`, `D` the pairs with the other document first.  ir_measures
reports nothing for a query with `R = 0` (its mean leaves the query out) and fails for
`N = 0`; tierank gives such a query 0 and 1 respectively, so its mean is over every query.

Tie orderings.  Where no tie group holding both kinds straddles the cutoff, `R` and `N`
are fixed and `D` is a sum over groups: the pairs with the other document in an earlier group,
plus, inside a group of `r` relevant and `n` other documents, the inversions of a random
two-class arrangement, a Mann-Whitney count: mean `rn/2`, variance `rn(r+n+1)/12`, 0
(relevant first) to `rn`; groups independent: every statistic exact.  A query with a mixed
group across the cutoff (the counts then vary) is sampled (``method="sampled"``), its min / max the
extremes seen among the sorted arrangements, the policy's and the drawn orderings.

**Compat** (Clarke, Vtyurina & Smucker, "Assessing top-k preferences", TOIS 2021; ir_measures'
``providers/compat_provider.py``): rank-biased overlap (Webber, Moffat & Zobel 2010) between the
ranking and an ideal ranking, to depth `\max(|ranking|, |ideal|)`:
`\sum_{d \ge 1} p^{d-1} |A_d \cap I_d| / d \,/\, \sum_d p^{d-1}`, and with ``normalize``
divided by the same for the ideal against itself (when positive).  The ideal holds the judged
documents with grade > 0, by grade descending; ir_measures orders equal grades by run score
(unretrieved documents scoring 0) then qrels order; tierank puts retrieved documents first, in the
policy's order, then the unretrieved (the same unless a run has scores <= 0).

Tie orderings.  Position `i` holding a document of ideal rank `r` (0-based) adds
`S(\max(i, r))`, `S(t) = \sum_{d > t} p^{d-1}/d`: a linear permutation statistic with
score matrix `c(i, r)` per tie group, so `E` is the group mean and the variance is
Hoeffding's (1951) `\frac{1}{m-1}\sum_{i,j} (c_{ij} - \bar c_{i\cdot} - \bar c_{\cdot j} +
\bar c)^2`, `O(m^2)` per group; the ideal of equal-grade tied documents being a block, the
result does not depend on which of them the ideal lists first.  Each prefix overlap
`|A_d \cap I_d|` is largest (smallest) for every `d` at once when each group is sorted by
ideal rank ascending (descending), so those arrangements are the exact max / min.
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Param, Stats, register
from .cwl import orderings_of
from .kernels import segment_cumsum
from .linear import REL
from .sampling import labelled

__all__ = ["Accuracy", "Compat"]


def _exclusive_cumsum(x: np.ndarray, seg: np.ndarray) -> np.ndarray:
    return segment_cumsum(x, seg) - x if len(x) else x


@register
class Accuracy(Measure):
    """ir_measures' Accuracy: the share of (relevant, non-relevant) pairs in the top k ranked with the
    relevant document first."""

    family = "Accuracy"
    pretty = "accuracy"
    definition = "fraction of (relevant, non-relevant) retrieved pairs the run orders correctly"
    citation = "ir_measures' Accuracy (MacAvaney, Macdonald and Ounis (2022). Streamlining evaluation with ir-measures. ECIR 2022)."
    names = FamilyNames(ir_measures="Accuracy")
    description = (
        "share of (relevant, other) pairs among the top k with the relevant one first "
        "(ir_measures; 0 without a relevant document, 1 without another)"
    )
    schema = (REL,)
    bounds_refusal = "an unjudged document's relevance moves both the pairs and their count"

    def _value(self, R, N, D):
        ok = (R > 0) & (N > 0)
        out = np.where((R > 0) & (N == 0), 1.0, 0.0)
        return np.where(ok, 1.0 - D / np.where(ok, R * N, 1.0), out)

    def stats(self, prep: Prepared) -> Stats:
        k = prep.cut(self.k)
        rows = np.flatnonzero(prep.pos < k) if np.isfinite(k) else np.arange(prep.n)
        qi = prep.qi[rows]
        rel = prep.relevant(self.rel).astype(np.float64)

        def counts(r):  # R, N, D of one arrangement (per-row relevance over ``rows``)
            non = 1.0 - r
            R = np.bincount(qi, weights=r, minlength=prep.nq)
            N = np.bincount(qi, weights=non, minlength=prep.nq)
            D = np.bincount(qi, weights=r * _exclusive_cumsum(non, qi), minlength=prep.nq)
            return R, N, D

        def value(which):
            return self._value(
                *counts(prep.arrangement(which, "rel", self.rel).astype(np.float64)[rows])
            )

        obl, lo, hi = value("policy"), value("pessimistic"), value("optimistic")
        # groups: relevant / other counts inside the cut, and whether a mixed group straddles it
        ng = len(prep.gsize)
        g = prep.gid[rows]
        r_in = np.bincount(g, weights=rel[rows], minlength=ng)
        n_in = np.bincount(g, minlength=ng) - r_in
        r_all = prep.group_sum(rel) if prep.n else np.zeros(ng)
        n_all = prep.gsize - r_all
        inside = np.bincount(g, minlength=ng)
        straddle = (inside > 0) & (inside < prep.gsize) & (r_all > 0) & (n_all > 0)
        R, N, Dmin = counts(
            prep.arrangement("optimistic", "rel", self.rel).astype(np.float64)[rows]
        )
        ed = (
            Dmin + np.bincount(prep.gq, weights=r_in * n_in / 2.0, minlength=prep.nq)
            if ng
            else Dmin
        )
        vd = (
            np.bincount(prep.gq, weights=r_in * n_in * (r_in + n_in + 1) / 12.0, minlength=prep.nq)
            if ng
            else np.zeros(prep.nq)
        )
        ok = (R > 0) & (N > 0)
        expected = np.where(ok, 1.0 - ed / np.where(ok, R * N, 1.0), obl)
        var = np.where(ok, vd / np.where(ok, R * N, 1.0) ** 2, 0.0)
        todo = np.unique(prep.gq[straddle]) if straddle.any() else np.zeros(0, np.int64)
        if not len(todo):
            return Stats(obl, expected, lo, hi, var)
        se = np.zeros(prep.nq)
        width = int(prep.qret.max()) if prep.nq else 0
        allrows = np.arange(prep.n)
        kk = int(min(k, width))
        for q, _sel, chunks in orderings_of(prep, todo, allrows, rel, width):
            vals = []
            for A in chunks:
                A = A[:, :kk]
                nq_ = min(kk, int(prep.qret[q]))
                non = np.zeros_like(A)
                non[:, :nq_] = 1.0 - A[:, :nq_]
                Rs, Ns = A.sum(axis=1), non.sum(axis=1)
                Ds = (A * (np.cumsum(non, axis=1) - non)).sum(axis=1)
                vals.append(self._value(Rs, Ns, Ds))
            v = np.concatenate(vals)
            expected[q], var[q] = v.mean(), v.var(ddof=1) if len(v) > 1 else 0.0
            se[q] = np.sqrt(var[q] / len(v))
            lo[q], hi[q] = min(lo[q], hi[q], obl[q], v.min()), max(lo[q], hi[q], obl[q], v.max())
        drawn = np.zeros(prep.nq, dtype=bool)  # the other queries' statistics are exact
        drawn[todo] = True
        return labelled(obl, expected, lo, hi, var, drawn, prep, se=se)


@register
class Compat(Measure):
    """Compatibility (Clarke, Vtyurina & Smucker 2021): rank-biased overlap with the ideal ranking."""

    family = "Compat"
    pretty = "compatibility"
    definition = "RBO-style similarity of the run to the ideal ranking of the judged documents"
    citation = "Clarke, C. L. A., Vtyurina, A. and Smucker, M. D. (2020). Assessing top-k preferences. ACM TOIS 39(3)."
    names = FamilyNames(ir_measures="Compat")
    description = (
        "compatibility: rank-biased overlap of the ranking with the ideal one (grade > 0, by grade)"
    )
    schema = (
        Param("p", float, 0.95, "persistence", low=0.0, high=1.0, open="both"),
        Param("normalize", bool, True, "divide by the ideal's overlap with itself (finite ideal)"),
    )
    cutoff_allowed = False
    bounds_refusal = "an unjudged document assumed relevant changes the ideal ranking"

    def _ideal_ranks(self, prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
        """Ideal rank (0-based) of every row (-1: not in the ideal), and the ideal's size per query."""
        q, g = prep.judged_grades
        q = np.asarray(q, dtype=np.int64)
        g = np.asarray(g, dtype=np.float64)
        keep = g > 0
        q, g = q[keep], g[keep]
        size = np.bincount(q, minlength=prep.nq).astype(np.float64)
        r = np.full(prep.n, -1, dtype=np.int64)
        rowrel = np.flatnonzero(prep.judged & (np.nan_to_num(prep.grade) > 0))
        if not len(rowrel):
            return r, size
        grades = np.unique(np.concatenate((g, prep.grade[rowrel])))
        U = len(grades) + 1
        key = q * U + np.searchsorted(grades, g)
        key.sort()
        rq, rg = prep.qi[rowrel], np.searchsorted(grades, prep.grade[rowrel])
        rkey = rq * U + rg
        above = np.searchsorted(key, rq * U + U, side="left") - np.searchsorted(
            key, rkey, side="right"
        )
        order = np.lexsort((prep.pos[rowrel], rkey))
        sk = rkey[order]
        first = np.searchsorted(sk, sk, side="left")
        before = np.empty(len(order), dtype=np.int64)
        before[order] = np.arange(len(order)) - first
        r[rowrel] = above + before
        return r, size

    def stats(self, prep: Prepared) -> Stats:
        p = self.param("p")
        r, size = self._ideal_ranks(prep)
        depth = np.maximum(prep.qret, size).astype(np.int64)
        off = np.zeros(prep.nq + 1, dtype=np.int64)
        np.cumsum(depth, out=off[1:])
        t = np.arange(int(off[-1])) - np.repeat(off[:-1], depth)
        tq = np.repeat(np.arange(prep.nq), depth)
        term = np.power(p, t.astype(np.float64)) / (t + 1.0)
        # suffix sums S(t) per query, and the denominators
        S = np.zeros(len(term))
        if len(term):
            total = np.bincount(tq, weights=term, minlength=prep.nq)
            S = total[tq] - (segment_cumsum(term, tq) - term)
        base = np.bincount(tq, weights=np.power(p, t.astype(np.float64)), minlength=prep.nq)
        if self.param("normalize"):
            den = np.bincount(tq, weights=term * np.minimum(t + 1.0, size[tq]), minlength=prep.nq)
            den = np.where(den > 0, den, base)
        else:
            den = base
        den = np.where(den > 0, den, 1.0)
        rows = (
            np.flatnonzero(prep.pos < prep.cut(float("inf")))
            if np.isfinite(prep.max_depth)
            else np.arange(prep.n)
        )

        def c(
            pos, rr, qq
        ):  # contribution of position pos holding ideal rank rr (-1: none) in query qq
            at = off[qq] + np.maximum(pos, rr)
            return np.where(rr >= 0, S[np.minimum(at, len(S) - 1)] if len(S) else 0.0, 0.0)

        def value(rr):
            return (
                np.bincount(
                    prep.qi[rows],
                    weights=c(prep.pos[rows], rr[rows], prep.qi[rows]),
                    minlength=prep.nq,
                )
                / den
            )

        big = np.where(r >= 0, r, np.iinfo(np.int64).max // 4).astype(np.float64)
        hi_r = -prep.sorted_in_groups(-big, "optimistic")  # ranks ascending in each group
        lo_r = -prep.sorted_in_groups(-big, "pessimistic")  # descending

        def back(x):
            return np.where(x >= np.iinfo(np.int64).max // 8, -1, x).astype(np.int64)

        obl, hi, lo = value(r), value(back(hi_r)), value(back(lo_r))
        expected = obl.copy()
        var = np.zeros(prep.nq)
        # groups of 2+ rows inside the ranks read with a document of the ideal: E and Var by Hoeffding
        g = prep.gid[rows]
        ng = len(prep.gsize)
        has = np.bincount(g, weights=(r[rows] >= 0), minlength=ng)
        cnt = np.bincount(g, minlength=ng)
        fixed = np.ones(prep.nq, dtype=bool)
        mg = np.flatnonzero((cnt > 1) & (has > 0))
        if len(mg):
            num = np.bincount(
                prep.qi[rows], weights=c(prep.pos[rows], r[rows], prep.qi[rows]), minlength=prep.nq
            )
            for gi in mg:
                sel = rows[g == gi]
                qq = int(prep.qi[sel[0]])
                C = c(prep.pos[sel][:, None], r[sel][None, :], qq)
                own = C.diagonal().sum()
                mean = C.mean()
                num[qq] += C.shape[0] * mean - own
                d = C - C.mean(axis=1, keepdims=True) - C.mean(axis=0, keepdims=True) + mean
                var[qq] += (d * d).sum() / (C.shape[0] - 1)
                fixed[qq] = False
            pinned = fixed | (lo == hi)  # exact extremes equal: every ordering gives the one value
            expected = np.where(pinned, lo, num / den)
            var = np.where(pinned, 0.0, var / den**2)
        return Stats(obl, expected, lo, hi, var)
