"""trec_eval's binG and Rndcg (`tierank.measures.trec_gain`'s module docstring defines them): sums over
ranks, whose statistics over tie orderings have closed forms (binG's per tie group, Rndcg's through
`tierank.measures.linear.Linear`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Param, Stats, register
from .gains import GAINS, REFUSAL, P_max, check_gains, doc_gains, ideal_gains, ideal_rows
from .kernels import ratio
from .linear import REL, Linear
from .orderings import per_ordering_stats
from .prefixes import starts_of
from .trec_forms import GainMap

__all__ = ["BinG", "RnDCG"]


@register
class BinG(Measure):
    """trec_eval's binG (``m_binG.c``, experimental): sum over the relevant retrieved documents of
    1 / log2(2 + non-relevant documents above it), over N+."""

    family = "BinG"
    pretty = "binary G"
    definition = "trec_eval's G with binary gains"
    citation = "trec_eval 10.0, m_binG.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="binG", ir_measures=None)
    description = (
        "trec_eval's binG: sum over relevant retrieved of 1/log2(2 + non-relevant above) / N+"
    )
    schema = (REL,)
    cutoff_allowed = False
    bounds_refusal = "an unjudged document assumed relevant raises N+ and can lower it"

    def _value(self, prep: Prepared, rel: np.ndarray, cut: float) -> np.ndarray:
        """The value of one arrangement (``rel`` per row in rank order)."""
        inside = rel & (prep.pos < cut) if np.isfinite(cut) else rel
        rows = np.flatnonzero(inside)
        q = prep.qi[rows]
        bounds = starts_of(q)  # the relevant rows of each query
        before = np.arange(len(rows)) - np.repeat(bounds[:-1], np.diff(bounds))  # relevant above
        t = prep.pos[rows] - before  # non-relevant above
        top = int(t.max()) + 1 if len(t) else 0
        f = 1.0 / np.log2(2.0 + np.arange(top, dtype=np.float64))  # once per count
        s = np.bincount(q, weights=f[t], minlength=prep.nq)
        return ratio(s, prep.nrel(self.rel))

    def stats(self, prep: Prepared) -> Stats:
        rel = self.rel
        cut = prep.cut(float("inf"))
        is_rel = prep.relevant(rel)
        obl = self._value(prep, is_rel, cut)
        lo = self._value(prep, prep.arrangement("pessimistic", "rel", rel), cut)
        hi = self._value(prep, prep.arrangement("optimistic", "rel", rel), cut)
        m = prep.gsize.astype(np.int64)
        r = np.rint(prep.group_sum(is_rel.astype(np.float64))).astype(np.int64) if prep.n else m * 0
        u = m - r
        mixed = (r > 0) & (u > 0)
        if np.isfinite(cut) and prep.n:
            # trec_eval -M: only ranks above the cut count.  A group wholly below it adds nothing; an unmixed
            # group across it adds its relevant documents above the cut (all at the same non-relevant count);
            # a mixed group across it is enumerated below (its query's statistics are replaced)
            above = np.clip(cut - prep.gpos0, 0, m).astype(np.int64)
            r = np.where(u == 0, np.minimum(r, above), np.where(prep.gpos0 + m <= cut, r, 0))
        if not prep.moments:  # the oblivious value and the extremes only
            nan = np.full(prep.nq, np.nan)
            stats = Stats(obl, nan, lo, hi, nan.copy())
        else:
            stats = self._moments(prep, r, u, mixed, obl, lo, hi)
        if not np.isfinite(cut) or not prep.n:
            return stats
        straddle = (prep.gpos0 < cut) & (prep.gpos0 + m > cut) & mixed
        queries = np.unique(prep.gq[straddle])
        if not len(queries):
            return stats
        nrel = prep.nrel(rel)

        def fn(q: int, A: np.ndarray) -> np.ndarray:
            relq = A > 0
            nonrel_above = np.cumsum(
                ~relq, axis=1
            )  # inclusive; equal to exclusive at relevant ranks
            with np.errstate(divide="ignore"):
                terms = np.where(relq, 1.0 / np.log2(2.0 + nonrel_above), 0.0)
            s = np.cumsum(terms, axis=1)[:, -1] if A.shape[1] else np.zeros(A.shape[0])
            return np.asarray(ratio(s, np.full(len(s), nrel[q])))

        return per_ordering_stats(
            prep, is_rel.astype(np.float64), fn, queries, exact_extremes=True, base=stats
        )

    def _moments(self, prep: Prepared, r, u, mixed, obl, lo, hi) -> Stats:
        """The closed-form statistics of the module docstring, ``r`` relevant and ``u`` other
        documents per group."""
        # non-relevant documents above each group, within its query
        cu = np.cumsum(u) - u
        qfirst = np.searchsorted(prep.gq, prep.gq, side="left")
        B = cu - cu[qfirst] if len(cu) else cu
        top = int((B + u).max()) + 2 if len(B) else 2
        f = 1.0 / np.log2(2.0 + np.arange(top, dtype=np.float64))
        F1 = np.concatenate(([0.0], np.cumsum(f)))
        F2 = np.concatenate(([0.0], np.cumsum(f * f)))
        T = F1[B + u + 1] - F1[B]
        T2 = F2[B + u + 1] - F2[B]
        mean1 = T / (u + 1)
        e = np.bincount(prep.gq, weights=r * mean1, minlength=prep.nq)
        var1 = T2 / (u + 1) - mean1 * mean1
        pair = (T * T + T2) / ((u + 1.0) * (u + 2.0)) - mean1 * mean1
        vg = np.where(mixed, r * var1 + r * (r - 1.0) * pair, 0.0)
        nrel = prep.nrel(self.rel)
        var = ratio(
            np.maximum(np.bincount(prep.gq, weights=vg, minlength=prep.nq), 0.0), nrel * nrel
        )
        return Stats(obl, ratio(e, nrel), lo, hi, var)


def _checkpoints(ideal: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rndcg's cutoffs and their ideal DCGs (see the module docstring).

    >>> k, z = _checkpoints(np.array([2.0, 2.0, 1.0]), 10)
    >>> k.tolist(), z.round(4).tolist()
    ([2, 3, 10], [3.2619, 3.7619, 3.7619])
    """
    P = len(ideal)
    if P == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    zc = np.cumsum(ideal / np.log2(np.arange(P, dtype=np.float64) + 2.0))
    nxt = np.append(ideal[1:], 0.0)
    ks = np.flatnonzero(nxt != ideal) + 1  # k in 1..P with I_k != I_{k-1}
    zs = zc[ks - 1]
    if P + 1 < n:
        ks, zs = np.append(ks, n), np.append(zs, zc[-1])
    return ks, zs


@register
class RnDCG(Linear):
    """trec_eval's Rndcg (``m_Rndcg.c``, experimental): the mean of nDCG at the R levels (the ranks
    where the ideal gain changes, and the end of the list)."""

    family = "RnDCG"
    pretty = "nDCG at R levels"
    definition = "nDCG normalised at the number of relevant documents of each grade"
    citation = "trec_eval 10.0, m_Rndcg.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="Rndcg", trec_eval_form=GainMap("Rndcg"), ir_measures=None)
    description = (
        "trec_eval's Rndcg: mean of nDCG@k over the ranks k where the ideal gain changes "
        "(experimental); 0 for a query with relevant documents but no positive gain, which "
        "--format trec_eval prints as trec_eval does, -nan (undefined='nan')"
    )
    kind = "gain"
    schema = (
        REL,
        GAINS,
        Param(
            "undefined",
            str,
            "zero",
            "a query with relevant documents but no positive gain: 'zero' (the default) or 'nan' "
            "(trec_eval's 0/0, printed -nan; what --format trec_eval prints)",
            choices=("zero", "nan"),
        ),
    )
    cutoff_allowed = False
    bounds_refusal = REFUSAL

    def validate(self, text: str) -> None:
        check_gains(self)

    def stats(self, prep: Prepared) -> Stats:
        out = super().stats(prep)
        if self.param("undefined") != "nan":
            return out
        # trec_eval averages nDCG over no R level (m_Rndcg.c: sum / num_changed_ideal_gain = 0 / 0)
        start = np.asarray(ideal_gains(prep, self.param("gains"))[1])
        nan = (prep.nrel(self.rel) > 0) & (np.diff(start) == 0)
        if not nan.any():
            return out

        def undefined(a: np.ndarray) -> np.ndarray:
            return np.where(nan, np.nan, a)

        return replace(
            out,
            oblivious=undefined(out.oblivious),
            expected=undefined(out.expected),
            min=undefined(out.min),
            max=undefined(out.max),
            var=undefined(out.var),
        )

    def values(self, prep: Prepared):
        gm = self.param("gains")
        return None if gm is None else doc_gains(prep, gm)

    def weights(self, prep: Prepared, rows: np.ndarray):
        gm = self.param("gains")

        def compute():
            w = np.zeros(prep.n)
            nrel = prep.nrel(self.rel)
            qret = np.asarray(prep.qret, dtype=np.int64)
            todo = np.flatnonzero(nrel > 0)
            for lo in range(0, len(todo), 4096):  # blocks of queries: padded rows stay small
                self._weights_block(prep, todo[lo : lo + 4096], qret, w, gm)
            return w

        return prep.cached(("RnDCG-weights", self.rel, gm), compute)[rows]

    @staticmethod
    def _weights_block(
        prep: Prepared, qs: np.ndarray, qret: np.ndarray, w: np.ndarray, gm=None
    ) -> None:
        """`weights` of the queries ``qs`` (each with N+ > 0) into ``w``: `_checkpoints` of
        every query at once, on rows padded to the longest ideal list (the same sums, in the same order)."""
        ideal, P = ideal_rows(prep, qs, max(P_max(prep, qs, gm), 1), gm)
        n = qret[qs]
        Q, width = ideal.shape
        col = np.arange(width)
        zc = np.cumsum(ideal / np.log2(col.astype(np.float64) + 2.0)[None, :], axis=1)
        nxt = np.concatenate((ideal[:, 1:], np.zeros((Q, 1))), axis=1)
        is_k = (nxt != ideal) & (
            col[None, :] < P[:, None]
        )  # k = col + 1 in 1..P with I_k != I_{k-1}
        extra = (P + 1 < n) & (P > 0)  # the end of the list, at n
        changes = is_k.sum(axis=1)
        kcount = changes + extra
        K = int(kcount.max()) if Q else 0
        if K == 0:
            return
        # checkpoints (k, 1 / z_k) of each query, left-aligned in rows of K (row-major: each
        # checkpoint's slot is its index among its row's)
        ks = np.full((Q, K), np.iinfo(np.int64).max)
        inv = np.zeros((Q, K))
        rq, rc = np.nonzero(is_k)
        slot = np.arange(len(rq)) - np.repeat(np.cumsum(changes) - changes, changes)
        ks[rq, slot] = rc + 1
        inv[rq, slot] = 1.0 / zc[rq, rc]
        e = np.flatnonzero(extra)
        last = kcount[e] - 1
        ks[e, last] = n[e]
        inv[e, last] = 1.0 / zc[e, P[e] - 1]
        # suffix sums over the checkpoints, from the last one back (as a reversed cumsum per query)
        tail = np.zeros((Q, K + 1))
        for j in range(K - 1, -1, -1):
            tail[:, j] = np.where(j < kcount, tail[:, j + 1] + inv[:, j], 0.0)
        # every retrieved row of these queries: its rank i, the first checkpoint with k > i (the
        # checkpoints k <= i: one event at each checkpoint's rank k < n, counted by a running sum)
        counts = np.where(kcount > 0, n, 0)
        rows_q = np.repeat(np.arange(Q), counts)
        first = np.repeat(prep.qstart[qs].astype(np.int64), counts)
        off = np.cumsum(counts) - counts  # each query's first entry
        i = np.arange(len(rows_q)) - np.repeat(off, counts)
        inside = ks < counts[:, None]
        cq, cj = np.nonzero(inside)
        events = np.cumsum(np.bincount(off[cq] + ks[cq, cj], minlength=len(rows_q)))
        per_q = inside.sum(axis=1)
        at = events[: len(rows_q)] - np.repeat(np.cumsum(per_q) - per_q, counts)
        ranks = int(i.max()) + 1 if len(i) else 0
        log_rank = np.log2(np.arange(ranks, dtype=np.float64) + 2.0)  # once per rank
        kq = kcount.astype(np.float64)  # (the float each division by it converts to)
        w[first + i] = tail.ravel()[rows_q * (K + 1) + at] / log_rank[i] / kq[rows_q]
