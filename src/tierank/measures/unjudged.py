r"""trec_eval's measures of the unjudged documents in a run: ``unj`` and ``rbp_resid``.

Definitions (trec_eval 10, ``m_unjudged.c`` and ``m_rbp_resid.c``):

* ``unj.k`` ([`Unj`][tierank.measures.unjudged.Unj], ``Unj@k``): the documents of the top `k` that are not in the qrels
  or have a negative grade there (trec_eval's "not in the pool" and "unjudged" values), divided by
  `k`, also when fewer than `k` are retrieved (the missing ones count as judged
  non-relevant).  trec_eval's default cutoffs are 5, 10 and 20.  Not tierank's ``Judged@k``,
  which divides the judged ones by min(k, retrieved).
* ``rbp_resid`` ([`RBP_resid`][tierank.measures.unjudged.RBP_resid]): RBP's residual (Moffat & Zobel 2008), the most that the
  unjudged retrieved documents (grade < 0 or not in the qrels) and the ranks past the list could
  add: `(1-p)\sum_{i\ \text{unjudged}} p^{i} + p^{n}` (0-based ranks, `n` retrieved),
  and 0 when no retrieved document is unjudged (trec_eval sets it only then).  Default
  `p = 0.9` in trec_eval (``rbp_resid.p=0.8`` changes it).

Statistics over tie orderings, exact:

* ``Unj`` is a sum over ranks with weight 1 up to `k`: only the tie group cut by rank `k` varies,
  hypergeometric ([`tierank.measures.counts.top_counts`][tierank.measures.counts.top_counts]).
* ``RBP_resid`` is `X + c\,[X > 0]` with `X = (1-p)\sum_i p^i u_i` (a
  [`Linear`][tierank.measures.unjudged.Linear] sum) and `c = p^n` fixed.  Whether any unjudged document is retrieved
  depends on the ordering only through a tie group cut by the depth limit (``-M``): with
  `P_0` the probability that none is above the limit (hypergeometric, 0 or 1 without such
  a group), `E = E[X] + c(1-P_0)` and, as `E[X\,[X>0]] = E[X]`,
  `Var = Var[X] + c^2 P_0(1-P_0) + 2cE[X]P_0`.  The value is increasing in `X`, so
  min and max are those of `X`'s extreme arrangements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Param, Stats, register
from .counts import count_stats, row_cumsum
from .kernels import centered, log_factorials, select_segments
from .linear import Linear
from .prefixes import ranges
from .trec_forms import Persistence

__all__ = ["Unj", "RBP_resid", "unjudged_rows", "residual_stats"]


def unjudged_rows(prep: Prepared) -> np.ndarray:
    """Per row (policy order): 1.0 where trec_eval counts the document unjudged: not in the qrels
    (RELVALUE_NONPOOL) or in them with a negative grade (``form_res_rels.c`` makes every negative
    grade RELVALUE_UNJUDGED, -2)."""
    g = prep.grade
    return (np.isnan(g) | (np.nan_to_num(g, nan=0.0) < 0)).astype(np.float64)


@register
class Unj(Linear):
    """trec_eval's unj at k: unjudged documents in the top k over k."""

    family = "Unj"
    pretty = "unjudged at k"
    definition = "fraction of the top k that has no judgment"
    citation = "trec_eval 10.0, m_unj.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval_cut="unj", trec_eval_cutoffs=(5, 10, 20), ir_measures=None)
    description = "unjudged documents in the top k / k (trec_eval unj; missing ranks count judged)"
    cutoff_required = True

    #: on tensors a negative label is unjudged (trec_eval's reading of a negative grade)
    tensor_kernel = "linear"

    def values(self, prep: Prepared):
        return unjudged_rows(prep)

    def label_values(self, xp: Any, label: Any, valid: Any, rel: int) -> Any:
        return xp.astype(valid & (label < 0), label.dtype)

    def position_weights(self, xp: Any, pos: Any) -> Any:
        return xp.ones_like(pos)

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        return float(self.required_cutoff)

    def stats(self, prep: Prepared) -> Stats:
        """The unjudged documents of the top k: a count with unit weights ([`tierank.measures.counts.top_counts`][tierank.measures.counts.top_counts]:
        only the tie group cut by rank k varies, hypergeometric), over k."""
        cum = row_cumsum(prep, ("unjudged",), lambda: unjudged_rows(prep) > 0)
        return count_stats(prep, cum, self.k, self.denominator(prep))

    def unjudged_bounds(self, prep: Prepared, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """It does not depend on the relevance of the unjudged documents: its own min and max."""
        return stats.min, stats.max


def _unjudged_sum(prep: Prepared, weights) -> Stats:
    """The statistics of `X = (1-p) sum_i p^i u_i` over the unjudged documents read (`Linear`'s closed
    forms: ``weights(xp, pos)``, values u), from the tie groups holding an unjudged document read alone: every
    other group adds exact zeros to every sum, which keep their order."""
    u = unjudged_rows(prep)
    cu = row_cumsum(prep, ("unjudged",), lambda: u > 0)
    gs = prep.gstart
    cut = prep.cut(float("inf"))
    G = np.flatnonzero(np.diff(cu[gs]) > 0)
    if np.isfinite(cut):
        G = G[prep.gpos0[G] < cut]
    m = prep.gsize[G].astype(np.int64)
    L = np.minimum(m, cut - prep.gpos0[G]).astype(np.int64) if np.isfinite(cut) else m
    U = cu[gs[G + 1]] - cu[gs[G]]
    q = prep.gq[G]
    rows = ranges(gs[G], L)  # the rows read of those groups
    seg = np.repeat(np.arange(len(G)), L)
    qr = q[seg]
    w = weights(np, prep.pos[rows].astype(np.float64))
    offset = rows - gs[G][seg]

    def total(a):
        return np.bincount(qr, weights=w * a, minlength=prep.nq)

    obl = total(u[rows])
    hi = total((offset < U[seg]).astype(np.float64))  # the unjudged documents first
    lo = total((offset >= (m - U)[seg]).astype(np.float64))  # last
    mf = m.astype(np.float64)
    s1 = U.astype(np.float64)
    sw = np.bincount(seg, weights=w, minlength=len(G))
    expected = np.bincount(q, weights=s1 * sw / mf, minlength=prep.nq)
    # variance: the groups whose documents differ, about each group's own values (`centered`)
    full = ranges(gs[G], m)
    ss_a = centered(u[full], np.repeat(np.arange(len(G)), m), len(G), mf)[1]
    idx, local, vg = select_segments(seg, ss_a > 0)
    _, ss_w = centered(w[idx], local, len(vg), mf[vg])
    var = np.bincount(q[vg], weights=ss_a[vg] * ss_w / (mf[vg] - 1.0), minlength=prep.nq)
    return Stats(obl, expected, lo, hi, var)


def residual_stats(xp: Any, oblivious, expected, lo, hi, var, c, p0) -> tuple[Any, ...]:
    """RBP_resid's (oblivious, expected, min, max, variance) per query from those of
    `X = (1-p) sum_i p^i u_i`, the fixed `c = p^n` and `P_0`, the probability that no unjudged
    document is read (module docstring), arrays of the namespace ``xp``: the one formula of runs
    and tensors."""
    zero = xp.zeros_like(c)

    def val(v):
        return xp.where(v > 0, v + c, zero)

    e = expected + c * (1.0 - p0)
    v = var + c * c * p0 * (1.0 - p0) + 2.0 * c * expected * p0
    return val(oblivious), xp.where(e > 0, e, zero), val(lo), val(hi), xp.clip(v, 0.0, None)


@register
class RBP_resid(Measure):
    """trec_eval's rbp_resid: RBP's residual from the unjudged documents and the ranks past the list."""

    family = "RBP_resid"
    pretty = "RBP residual"
    definition = "the RBP mass of the unjudged documents: how much RBP could still rise"
    citation = "Moffat, A. and Zobel, J. (2008). Rank-biased precision for measurement of retrieval effectiveness. ACM TOIS 27(1)."
    names = FamilyNames(
        trec_eval="rbp_resid", trec_eval_form=Persistence("rbp_resid"), ir_measures=None
    )
    description = (
        "RBP residual (trec_eval rbp_resid): (1-p) sum of p^(i-1) over unjudged ranks + p^retrieved, "
        "0 with none unjudged"
    )
    schema = (
        Param("p", float, 0.8, "persistence", always_shown=True, low=0.0, high=1.0, open="both"),
    )
    cutoff_allowed = False
    bounds_refusal = "it is itself a bound on what the unjudged documents could add"
    #: on tensors a negative label is unjudged (trec_eval's reading of a negative grade)
    tensor_kernel = "rbp_resid"

    def position_weights(self, xp: Any, pos: Any) -> Any:
        """RBP's weight ``(1 - p) p^pos`` of each 0-based rank (an array of ``xp``)."""
        p = self.param("p")
        return (1.0 - p) * (p**pos)

    def stats(self, prep: Prepared) -> Stats:
        p = self.param("p")
        x = _unjudged_sum(prep, self.position_weights)
        c = np.power(p, prep.qret.astype(np.float64))
        u = unjudged_rows(prep)
        cut = prep.cut(float("inf"))
        m = prep.gsize.astype(np.int64)
        ug = np.rint(prep.group_sum(u)).astype(np.int64) if prep.n else m * 0
        inside = prep.gpos0 + m <= cut
        fixed = np.bincount(prep.gq, weights=np.where(inside, ug, 0), minlength=prep.nq)
        p0 = (fixed == 0).astype(np.float64)
        strad = np.flatnonzero((prep.gpos0 < cut) & ~inside)
        if len(strad):
            lf = log_factorials(int(m[strad].max()))
            L = (cut - prep.gpos0[strad]).astype(np.int64)
            mm, uu = m[strad], ug[strad]
            ok = mm - uu >= L
            lp = np.where(
                ok,
                lf[np.where(ok, mm - uu, 0)]
                - lf[np.where(ok, mm - uu - L, 0)]
                - lf[mm]
                + lf[mm - L],
                0.0,
            )
            none = np.where(uu == 0, 1.0, np.where(ok, np.exp(lp), 0.0))
            q = prep.gq[strad]
            p0[q] = np.where(fixed[q] == 0, none, 0.0)

        return Stats(*residual_stats(np, x.oblivious, x.expected, x.min, x.max, x.var, c, p0))
