r"""trec_eval's counts and set measures: num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret,
set_P, set_recall, set_F, set_map (trec_eval 10, ``m_num_*.c``, ``m_set_*.c``).

With `h` the relevant documents retrieved, `n` the documents retrieved (``num_ret``,
``min(len, -M)``) and `N_+` the relevant documents:

* ``set_P`` `= h/n`, ``set_recall`` `= h/N_+`,
* ``set_F`` (parameter x, default 1) `= (x+1)PR/(xP+R) = (x+1)h/(xN_+ + n)` (0 when h = 0),
* ``set_map`` `= h^2/(n N_+)`.

None of these depends on the order of the retrieved documents, so **without a depth limit no
tie ordering changes them**: min = max = expected and the variance is exactly 0, computed, not
assumed.  With ``trec_eval -M`` (``prep.cut(inf)``) a tie group straddling the limit makes
`h` random: the part of `h` from that group is hypergeometric (a uniformly random
subset of the group fills the ranks left).  The linear ones (num_rel_ret, set_P, set_recall,
set_F, num_nonrel_judged_ret) are then position sums with weight 1 up to the limit, so the
closed forms of `tierank.measures.linear.Linear` give their exact statistics; ``set_map``,
quadratic in `h`, sums over the hypergeometric law of that one group (exact, centered).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Param, Stats, register
from .kernels import group_counts, log_factorials, ratio
from .linear import REL, Linear
from .trec_forms import FirstNumber

__all__ = [
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumNonRelJudgedRet",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "row_cumsum",
    "flag_cumsum",
    "top_counts",
    "count_stats",
    "per_query",
    "hits",
]


def _constant(v: np.ndarray) -> Stats:
    v = np.asarray(v, dtype=np.float64)
    return Stats(v, v.copy(), v.copy(), v.copy(), np.zeros(len(v)))


@register
class NumQ(Measure):
    """Number of queries evaluated (trec_eval num_q): 1 per query, summed."""

    family = "NumQ"
    citation = "trec_eval 10.0, m_num_q.c (usnistgov/trec_eval)."
    pretty = "number of queries"
    definition = "number of queries evaluated"
    names = FamilyNames(trec_eval="num_q")
    aggregator = "sum"
    description = "number of queries evaluated (a count, summed)"
    cutoff_allowed = False
    is_count = True
    summary_only = True

    def stats(self, prep: Prepared) -> Stats:
        return _constant(np.ones(prep.nq))


@register
class NumRet(Measure):
    """Documents retrieved (trec_eval num_ret), after the depth limit."""

    family = "NumRet"
    citation = "trec_eval 10.0, m_num_ret.c (usnistgov/trec_eval)."
    pretty = "retrieved"
    definition = "number of documents retrieved"
    names = FamilyNames(trec_eval="num_ret")
    aggregator = "sum"
    description = "documents retrieved (a count; after the depth limit -M)"
    cutoff_allowed = False
    is_count = True

    def stats(self, prep: Prepared) -> Stats:
        return _constant(prep.qret)


@register
class NumRel(Measure):
    """Relevant documents in the qrels (trec_eval num_rel, N+)."""

    family = "NumRel"
    citation = "trec_eval 10.0, m_num_rel.c (usnistgov/trec_eval)."
    pretty = "number of relevant documents"
    definition = "number of relevant documents judged for the query (N+)"
    names = FamilyNames(trec_eval="num_rel")
    aggregator = "sum"
    description = (
        "relevant documents judged for the query, N+ (a count); --format trec_eval with -c prints "
        "trec_eval's summary, the judgments of grade > 0 of every qrels query whatever -l says"
    )
    schema = (REL,)
    cutoff_allowed = False
    is_count = True

    def stats(self, prep: Prepared) -> Stats:
        return _constant(prep.nrel(self.rel))


class _Set(Linear):
    """Order-free counts over the documents retrieved (up to the depth limit): weight `unit` each."""

    cutoff_allowed = False
    schema: ClassVar[tuple[Param, ...]] = (REL,)

    def unit(self) -> float:
        """The weight of every position read."""
        return 1.0

    def position_weights(self, xp: Any, pos: Any) -> Any:
        return xp.full_like(pos, self.unit())

    def stats(self, prep: Prepared) -> Stats:
        """Without a depth limit every document retrieved is read whatever the ordering: one count per
        query (exact integers), the same in every ordering (variance exactly 0).  With one, a tie group
        cut by the limit makes it vary: the closed forms of `Linear`."""
        if np.isfinite(prep.cut(float("inf"))):
            return super().stats(prep)
        own = self.values(prep)
        count = hits(prep, self.kind, self.rel) if own is None else per_query(prep, own)
        den = self.denominator(prep)
        u = self.unit()
        total = count.copy() if u == 1.0 else count * u  # never the cached counts themselves
        v = total if den is None else ratio(total, np.broadcast_to(den, total.shape))
        return Stats(v, v.copy(), v.copy(), v.copy(), np.zeros(prep.nq))


def row_cumsum(prep: Prepared, key: tuple, flags: Callable[[], np.ndarray]) -> np.ndarray:
    """``c`` (int64, length n + 1) with ``c[i]`` the rows before row ``i`` whose ``flags()`` (bool per
    row, policy order) is true: a count over any run of rows is one difference.  Cached on ``prep``
    under ``("row-cumsum", *key)``."""

    def compute():
        c = np.zeros(prep.n + 1, dtype=np.int64)
        np.cumsum(flags(), out=c[1:])
        c.flags.writeable = False
        return c

    return prep.cached(("row-cumsum", *key), compute)


def flag_cumsum(prep: Prepared, kind: str = "rel", rel: int | None = None) -> np.ndarray:
    """[`row_cumsum`][tierank.measures.counts.row_cumsum] of a binary document value (``rel`` at ``rel``, or ``judged``)."""
    level = (prep.rel if rel is None else rel) if kind == "rel" else None
    return row_cumsum(prep, (kind, level), lambda: prep.doc_values(kind, rel))  # type: ignore[arg-type]


def top_counts(
    prep: Prepared, cum: np.ndarray, k: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Statistics over tie orderings of `h`, the flagged documents among the first `k` ranks of each
    query (``k`` a scalar or one per query, capped by the depth limit): (oblivious, expected, min, max,
    variance), float64, from ``cum`` ([`row_cumsum`][tierank.measures.counts.row_cumsum] of the flags).

    Only the tie group cut by the `k`-th rank (if any) moves `h`: with `m` documents, `U`
    of them flagged and `L` of its ranks read, its part is hypergeometric, `U L / m` on average with
    variance `U (m - U) L (m - L) / (m^2 (m - 1))` (the variance of a linear permutation statistic
    with `L` unit weights); min and max put its flagged documents last or first.  Every other group
    is read whole or not at all.  O(queries) work after ``cum``.
    """
    qs = prep.qstart[:-1]
    qlen = np.diff(prep.qstart)
    kq = np.broadcast_to(np.minimum(np.asarray(k, dtype=np.float64), prep.max_depth), qlen.shape)
    read = qlen.copy()
    fin = np.isfinite(kq)
    read[fin] = np.minimum(qlen[fin], np.ceil(kq[fin]))  # the positions below k: ceil(k) of them
    end = qs + read
    obl = (cum[end] - cum[qs]).astype(np.float64)
    lo, hi, e, var = obl.copy(), obl.copy(), obl.copy(), np.zeros(len(obl))
    q = np.flatnonzero((read < qlen) & (read > 0))
    if len(q):
        x = end[q]  # the first row not read
        g = prep.gid[x - 1]
        q = q[prep.gid[x] == g]  # the group of the last row read goes on past the cut
        if len(q):
            x = end[q]
            g = prep.gid[x - 1]
            gs, ge = prep.gstart[g], prep.gstart[g + 1]
            m, L = ge - gs, x - gs
            U = cum[ge] - cum[gs]
            fixed = obl[q] - (cum[x] - cum[gs])
            lo[q] = fixed + np.maximum(0, L - (m - U))
            hi[q] = fixed + np.minimum(U, L)
            e[q] = fixed + (U * L).astype(np.float64) / m
            mf = m.astype(np.float64)
            var[q] = (U * (m - U)).astype(np.float64) * (L * (m - L)) / (mf * mf * (mf - 1.0))
    return obl, e, lo, hi, var


def count_stats(prep: Prepared, cum: np.ndarray, k: float | np.ndarray, den=None) -> Stats:
    """[`Stats`][tierank.measures.counts.Stats] of ``h / den`` ([`top_counts`][tierank.measures.counts.top_counts]; ``den`` per query or scalar, the
    value 0 where it is not positive), divided as `Linear` divides its sums."""
    obl, e, lo, hi, var = top_counts(prep, cum, k)
    if den is None:
        return Stats(obl, e, lo, hi, var)
    d = np.broadcast_to(np.asarray(den, dtype=np.float64), obl.shape)
    return Stats(ratio(obl, d), ratio(e, d), ratio(lo, d), ratio(hi, d), ratio(var, d**2))


def per_query(prep: Prepared, values: np.ndarray) -> np.ndarray:
    """Per query, the sum of per-row ``values`` over every row (in row order)."""
    return np.bincount(prep.qi, weights=values, minlength=prep.nq).astype(np.float64, copy=False)


def hits(prep: Prepared, kind: str = "rel", rel: int | None = None) -> np.ndarray:
    """Per query, the documents retrieved with a true binary value (``rel`` at ``rel``, or ``judged``)
    among every row of ``prep`` (float64 counts, exact; cached on ``prep``)."""
    level = (prep.rel if rel is None else rel) if kind == "rel" else None

    def compute():
        c = per_query(prep, prep.doc_values(kind, rel))  # type: ignore[arg-type]
        c.flags.writeable = False  # shared by every measure reading it
        return c

    return prep.cached(("query-counts", kind, level), compute)


@register
class NumRelRet(_Set):
    """Relevant documents retrieved (trec_eval num_rel_ret)."""

    family = "NumRelRet"
    citation = "trec_eval 10.0, m_num_rel_ret.c (usnistgov/trec_eval)."
    pretty = "relevant retrieved"
    definition = "number of relevant documents retrieved"
    names = FamilyNames(trec_eval="num_rel_ret")
    aggregator = "sum"
    description = "relevant documents retrieved (a count)"
    is_count = True
    tensor_kernel = "linear"


@register
class NumNonRelJudgedRet(_Set):
    """Judged non-relevant documents retrieved (trec_eval num_nonrel_judged_ret: 0 <= grade < rel)."""

    family = "NumNonRelJudgedRet"
    citation = "trec_eval 10.0, m_num_nonrel_judged_ret.c (usnistgov/trec_eval)."
    pretty = "judged non-relevant retrieved"
    definition = "number of judged non-relevant documents retrieved"
    names = FamilyNames(trec_eval="num_nonrel_judged_ret", ir_measures=None)
    aggregator = "sum"
    description = "judged non-relevant documents retrieved (a count)"
    is_count = True
    bounds_refusal = "it counts judged documents only"

    def values(self, prep: Prepared):
        rel = prep.rel if self.rel is None else self.rel
        g = np.nan_to_num(prep.grade, nan=-np.inf)
        return ((g >= 0) & (g < rel)).astype(np.float64)

    #: on tensors: the labels 0 <= label < rel
    tensor_kernel = "linear"

    def label_values(self, xp: Any, label: Any, valid: Any, rel: int) -> Any:
        return xp.astype(valid & (label >= 0) & (label < rel), label.dtype)


@register
class SetP(_Set):
    """Set precision (trec_eval set_P): relevant retrieved / retrieved."""

    family = "SetP"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.3."
    pretty = "set precision"
    definition = "relevant retrieved / retrieved"
    names = FamilyNames(trec_eval="set_P")
    description = "set precision: relevant retrieved / retrieved (trec_eval set_P)"

    tensor_kernel = "linear"

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        return retrieved


@register
class SetR(_Set):
    """Set recall (trec_eval set_recall): relevant retrieved / N+."""

    family = "SetR"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.3."
    pretty = "set recall"
    definition = "relevant retrieved / N+"
    names = FamilyNames(trec_eval="set_recall")
    description = "set recall: relevant retrieved / N+ (trec_eval set_recall)"
    bounds_refusal = "an unjudged document assumed relevant raises N+ and can lower it"

    tensor_kernel = "linear"
    uses_n_plus = True

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        return nrel


@register
class SetF(_Set):
    """Set F (trec_eval set_F): (x+1) P R / (x P + R) = (x+1) h / (x N+ + n)."""

    family = "SetF"
    pretty = "set F"
    definition = (
        "(beta + 1) P R / (beta P + R) over the retrieved set (trec_eval set_F: beta weighs recall)"
    )
    citation = (
        "van Rijsbergen, C. J. (1979). Information Retrieval, 2nd ed. Butterworths (the F measure)."
    )
    names = FamilyNames(trec_eval="set_F", trec_eval_form=FirstNumber("set_F", param="beta"))
    description = "set F: (beta+1) P R / (beta P + R) over the retrieved set (trec_eval set_F)"
    schema = (
        Param("beta", float, 1.0, "weight of recall relative to precision", low=0.0, high=1e150),
        REL,
    )
    bounds_refusal = "an unjudged document assumed relevant raises N+ and can lower it"

    def unit(self) -> float:
        return self.param("beta") + 1.0

    def denominator(self, prep: Prepared):
        return self.param("beta") * prep.nrel(self.rel) + prep.qret

    def stats(self, prep: Prepared) -> Stats:
        """The Linear statistics; the values of single orderings (oblivious, min, max) are computed as
        trec_eval computes them (m_set_F.c: P = h/n, R = h/N+, then (x+1) P R / (R + x P), in doubles),
        so that a value on a printed rounding tie (118/320 = 0.36875) prints trec_eval's digit.  A value
        no ordering changes is then that one value, bit for bit (Stats.settled)."""
        s = super().stats(prep)
        h = NumRelRet(params=(("rel", self.rel),)).stats(prep)
        x = self.param("beta")
        n = prep.qret.astype(np.float64)
        nrel = prep.nrel(self.rel)

        def te(hits):
            p, r = ratio(hits, n), ratio(hits, nrel)
            return ratio((x + 1.0) * p * r, r + x * p)

        return replace(s, oblivious=te(h.oblivious), min=te(h.min), max=te(h.max))


@register
class SetAP(Measure):
    """Unranked set average precision (trec_eval set_map): h^2 / (n N+)."""

    family = "SetAP"
    citation = "trec_eval 10.0, m_set_map.c (usnistgov/trec_eval)."
    pretty = "set average precision"
    definition = "(relevant retrieved)^2 / (retrieved x N+): set precision times set recall"
    names = FamilyNames(trec_eval="set_map")
    description = (
        "set average precision: (relevant retrieved)^2 / (retrieved x N+) (trec_eval set_map)"
    )
    schema = (REL,)
    cutoff_allowed = False
    bounds_refusal = "an unjudged document assumed relevant raises N+ and can lower it"

    def stats(self, prep: Prepared) -> Stats:
        h = NumRelRet(params=(("rel", self.rel),)).stats(prep)
        den = prep.qret.astype(np.float64) * prep.nrel(self.rel)
        sq = lambda x: ratio(x * x, den)  # noqa: E731
        if not np.isfinite(prep.cut(float("inf"))):
            v = sq(h.oblivious)  # every retrieved document read: h is the same in every ordering
            return Stats(v, v.copy(), v.copy(), v.copy(), np.zeros(prep.nq))
        # h = h0 + H: H from the (at most one) group straddling the depth limit, hypergeometric
        cut = prep.cut(float("inf"))
        m = prep.gsize.astype(np.int64)
        r = group_counts(prep, "rel", self.rel)
        inside = prep.gpos0 + m <= cut
        h0 = np.bincount(prep.gq, weights=np.where(inside, r, 0), minlength=prep.nq)
        expected = h0 * h0
        var = np.zeros(prep.nq)
        strad = np.flatnonzero((prep.gpos0 < cut) & ~inside & (r > 0) & (r < m))
        if len(strad):
            L = (cut - prep.gpos0[strad]).astype(np.int64)
            mm, rr = m[strad], r[strad]
            lo, hi = np.maximum(0, L - (mm - rr)), np.minimum(rr, L)
            lens = hi - lo + 1
            seg = np.repeat(np.arange(len(strad)), lens)
            k = lo[seg] + np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
            lf = log_factorials(int(mm.max()))

            def lc(n, j):
                return lf[n] - lf[j] - lf[n - j]

            p = np.exp(lc(rr[seg], k) + lc(mm[seg] - rr[seg], L[seg] - k) - lc(mm[seg], L[seg]))
            q = prep.gq[strad]
            val = (h0[q][seg] + k) ** 2.0
            e = np.bincount(seg, weights=p * val, minlength=len(strad))
            v = np.bincount(seg, weights=p * (val - e[seg]) ** 2, minlength=len(strad))
            expected[q] = e
            var[q] = v
        return Stats(
            sq(h.oblivious), ratio(expected, den), sq(h.min), sq(h.max), ratio(var, den * den)
        )
