r"""Binary preference, trec_eval's ``bpref`` (Buckley & Voorhees, SIGIR 2004), exactly as trec_eval 10.

Definition (trec_eval 10, ``m_bpref.c``).  Judged documents only: a retrieved document whose grade
is missing or negative (trec_eval's "not in the pool" / "unjudged in the pool") is skipped; one
with ``0 <= grade < rel`` is *judged non-relevant*, one with ``grade >= rel`` relevant.  With
`R` relevant and `N_-` judged non-relevant documents in the qrels of the query,
`D = \min(N_-, R)`, and `n_d` the judged non-relevant documents ranked above the
relevant document `d`,

.. math:: bpref = \frac{1}{R} \sum_{d \text{ relevant, retrieved}} f(n_d), \qquad
          f(n) = 1 - \frac{\min(n, R)}{D} \;(f(0) = 1),

over the ranks read (``trec_eval -M``: ``prep.cut(inf)``).  `f` is non-increasing.

Tie orderings.  In a tie group `G` with `r` relevant and `s` judged
non-relevant documents, `n_d = B_G + X_d` where `B_G` (judged non-relevant
documents in earlier groups) does not depend on the ordering and `X_d` counts the
non-relevant documents of `G` above `d`.  The relative order of the `r + s`
judged documents is uniform, so `X_d` is uniform on `\{0..s\}` and for two relevant
documents `P(X_i = a, X_j = b) = 1/((s+1)(s+2))` for `a \ne b`, `2/((s+1)(s+2))`
for `a = b` (the two relevant documents fall into the `s+1` gaps between the
non-relevant ones as an ordered pair, `(s+2)(s+1)` equally likely cases; derived for
tierank, checked by enumeration in the tests).  With `\bar f` and
`SS = \sum_{x=0}^{s} (f(B_G + x) - \bar f)^2`, the group's sum `Y_G` has

.. math:: E[Y_G] = r \bar f, \qquad Var[Y_G] = SS \cdot \frac{r (r + s + 1)}{(s+1)(s+2)},

and groups are independent: `E[bpref] = \sum_G E[Y_G]/R`, `Var = \sum_G Var[Y_G]/R^2`.
`f(B_G + x) = 1 - (R - d_x)/D` with `d_x = \max(R - B_G - x, 0)`: the first `a = \min(\max(R -
B_G, 0), s + 1)` of the `s + 1` values `d_x` fall by 1 from `R - B_G`, the others are 0, so
`\bar f` and `SS = D^{-2}[a(a^2-1)/12 + a(s+1-a)\mu^2/(s+1)]` (`\mu = R - B_G - (a-1)/2`, the mean
of the falling part; within-part and between-part squares, no difference of sums) are closed forms:
exactly 0 when `f` is constant over the group, and no work per value
([`group_moments`][tierank.measures.bpref.group_moments], over any array namespace: the run layout
here and `tierank.tensor` call it).

A group cut by the depth limit (``-M``) keeps a uniformly random subset of `L` of its
`m` documents: `(K_r, K_s)` is multivariate hypergeometric and, given it, the kept
relevant documents behave as above with `s = K_s`; the law of total variance gives the
exact statistics (a loop over the at most one such group per query).

Min / max: every relevant document is moved below / above every judged non-relevant one of its
group at once (and, for a group cut by the depth limit, past / inside the limit), which minimises
/ maximises each `n_d` and hence each term, so these arrangements are extremal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Stats, register
from .counts import row_cumsum
from .kernels import log_factorials, ratio
from .linear import REL

__all__ = ["Bpref", "group_moments", "preference"]


def preference(xp: Any, n: Any, R: Any, D: Any) -> Any:
    """``f(n) = 1 - min(n, R) / D`` (1 where ``D`` is 0), over arrays of the namespace ``xp``: the
    term of a relevant document with ``n`` judged non-relevant ones above it."""
    pos = D > 0
    num = xp.minimum(n, R)
    return 1.0 - xp.where(pos, num / xp.where(pos, D, xp.ones_like(D)), xp.zeros_like(num))


def group_moments(xp: Any, r: Any, s: Any, before: Any, R: Any, D: Any) -> tuple[Any, Any]:
    """Per tie group read whole: ``E[Y_G]`` and ``Var[Y_G]`` of the sum of its ``r`` relevant
    documents' terms, with ``s`` judged non-relevant documents in the group and ``before`` above it,
    ``R`` and ``D`` of its query (float arrays of ``xp``, integral values): the closed forms of the
    module docstring, the one formula of runs and tensors."""
    n = s + 1.0
    h = R - before
    a = xp.clip(xp.minimum(h, n), 0.0, None)  # the values of x with before + x < R
    mu = h - (a - 1.0) / 2.0  # the mean of d over them (where a > 0)
    mu = xp.where(a > 0, mu, xp.zeros_like(mu))
    mean_d = a * mu / n
    ss_d = a * (a * a - 1.0) / 12.0 + a * (n - a) * mu * mu / n
    pos = D > 0
    Ds = xp.where(pos, D, xp.ones_like(D))
    one = xp.ones_like(r)
    mean_f = xp.where(pos, 1.0 - (R - mean_d) / Ds, one)
    ss_f = xp.where(pos, ss_d / (Ds * Ds), xp.zeros_like(r))
    return r * mean_f, ss_f * r * (r + s + 1.0) / ((s + 1.0) * (s + 2.0))


@register
class Bpref(Measure):
    """Binary preference (trec_eval bpref): judged non-relevant documents above each relevant one."""

    family = "Bpref"
    pretty = "binary preference"
    definition = "mean over the relevant retrieved documents of 1 - (judged non-relevant ranked above) / min(N+, N-)"
    citation = "Buckley, C. and Voorhees, E. M. (2004). Retrieval evaluation with incomplete information. SIGIR 2004."
    names = FamilyNames(trec_eval="bpref", ranx="bpref")
    description = "binary preference (trec_eval bpref): judged documents only, unjudged skipped"
    schema = (REL,)
    cutoff_allowed = False
    bounds_refusal = "bpref skips unjudged documents by definition (it is already their bound)"
    tensor_kernel = "bpref"

    def tensor_reads_every_judgment(self) -> bool:
        return True  # N-, the judged non-relevant documents

    def _classes(self, prep: Prepared):
        """(relevant per row, judged non-relevant per row, R per query, D per query), cached on ``prep``."""
        rel = prep.rel if self.rel is None else self.rel

        def compute():
            g = prep.grade  # (an unjudged document's NaN compares false: neither class)
            is_rel = g >= max(rel, 0)
            non = (g >= 0) & (g < rel)
            q, jg = prep.judged_grades
            jg = np.asarray(jg, dtype=np.float64)
            nrel = prep.nrel(max(rel, 0))
            nnon = np.bincount(q, weights=(jg >= 0) & (jg < rel), minlength=prep.nq)
            return is_rel, non, nrel, np.minimum(nnon, nrel)

        return prep.cached(("bpref-classes", rel), compute)

    def _counts(self, prep: Prepared):
        """Cumulative counts of the relevant and judged non-relevant rows ([`row_cumsum`][tierank.measures.counts.row_cumsum])."""
        rel = prep.rel if self.rel is None else self.rel
        is_rel, non, _, _ = self._classes(prep)
        return (
            row_cumsum(prep, ("bpref-rel", rel), lambda: is_rel),
            row_cumsum(prep, ("bpref-non", rel), lambda: non),
        )

    @staticmethod
    def _f(n, R, D):
        """f(n) = 1 - min(n, R) / D (1 for n = 0): [`preference`][tierank.measures.bpref.preference]."""
        return preference(np, np.asarray(n, dtype=np.float64), R, np.asarray(D, dtype=np.float64))

    def stats(self, prep: Prepared) -> Stats:
        rel = prep.rel if self.rel is None else self.rel
        s = prep.cached(("bpref-stats", rel), lambda: self._stats(prep))
        return Stats(
            s.oblivious.copy(), s.expected.copy(), s.min.copy(), s.max.copy(), s.var.copy()
        )

    def _stats(self, prep: Prepared) -> Stats:
        rel, non, R, D = self._classes(prep)
        c_rel, c_non = self._counts(prep)
        cut = prep.cut(float("inf"))
        gs, qs = prep.gstart, prep.qstart
        # only the groups holding a relevant document read add a term: work on those alone (a term
        # left out is an exact 0.0 in the per-query sums, which keep their order)
        G = np.flatnonzero(np.diff(c_rel[gs]) > 0)
        if np.isfinite(cut):
            G = G[prep.gpos0[G] < cut]
        q = prep.gq[G]
        m = prep.gsize[G].astype(np.int64)
        ga, gb = gs[G], gs[G + 1]
        r = c_rel[gb] - c_rel[ga]
        non_a = c_non[ga]
        s = c_non[gb] - non_a
        B = non_a - c_non[qs[q]]  # judged non-relevant documents above the group
        pos0 = prep.gpos0[G]
        L = np.minimum(m, cut - pos0).astype(np.int64) if np.isfinite(cut) else m  # ranks read
        Rg, Dg = R[q], D[q]

        def summed(count, fv):
            """Per query, ``count[g]`` terms ``fv[g]`` per group, added one by one in rank order."""
            return ratio(
                np.bincount(np.repeat(q, count), weights=np.repeat(fv, count), minlength=prep.nq), R
            )

        # the relevant documents first / last in every group (non-relevant last / first)
        best = summed(np.minimum(r, L), self._f(B, Rg, Dg))
        worst = summed(np.maximum(0, L - (m - r)), self._f(B + s, Rg, Dg))
        rows = np.flatnonzero(rel)
        if np.isfinite(cut):
            rows = rows[prep.pos[rows] < cut]
        qr = prep.qi[rows]
        before = c_non[rows] - c_non[qs[qr]]
        obl = ratio(np.bincount(qr, weights=self._f(before, R[qr], D[qr]), minlength=prep.nq), R)

        if not prep.moments:  # the oblivious value and the extremes only
            nan = np.full(prep.nq, np.nan)
            return Stats(obl, nan, worst, best, nan.copy())
        strad = L != m
        e_g, v_g = group_moments(np, *(np.asarray(x, dtype=np.float64) for x in (r, s, B, Rg, Dg)))
        for gi in np.flatnonzero(strad):
            e_g[gi], v_g[gi] = self._cut_group(
                int(m[gi]), int(r[gi]), int(s[gi]), int(L[gi]), int(B[gi]), Rg[gi], Dg[gi]
            )
        expected = ratio(np.bincount(q, weights=e_g, minlength=prep.nq), R)
        var = ratio(np.bincount(q, weights=v_g, minlength=prep.nq), R * R)
        return Stats(obl, expected, worst, best, var)

    def _cut_group(self, m, r, s, L, B, R, D) -> tuple[float, float]:
        """E and Var of a group's sum when only a uniformly random L of its m documents are read."""
        u = m - r - s
        lf = log_factorials(m)

        def lc(n, k):
            return lf[n] - lf[k] - lf[n - k]

        S = min(s, L)
        f = self._f(B + np.arange(S + 1), R, D)
        # prefix means and centered sums of squares (Welford), one per ks = 0..S
        mu, ss = np.zeros(S + 1), np.zeros(S + 1)
        mean, m2 = 0.0, 0.0
        for i in range(S + 1):
            d = f[i] - mean
            mean += d / (i + 1)
            m2 += d * (f[i] - mean)
            mu[i], ss[i] = mean, m2
        kr = np.arange(min(r, L) + 1)[:, None]
        ks = np.arange(S + 1)[None, :]
        ku = L - kr - ks
        ok = (ku >= 0) & (ku <= u)
        with np.errstate(invalid="ignore"):
            logp = lc(r, kr) + lc(s, ks) + np.where(ok, lc(u, np.clip(ku, 0, u)), 0.0) - lc(m, L)
        p = np.where(ok, np.exp(logp), 0.0)
        mean_y = kr * mu[ks]
        cond_var = ss[ks] * kr * (kr + ks + 1.0) / ((ks + 1.0) * (ks + 2.0))
        e = float((p * mean_y).sum())
        v = float((p * (cond_var + (mean_y - e) ** 2)).sum())
        return e, v
