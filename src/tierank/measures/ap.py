r"""Average precision, trec_eval's ``map`` / ``map_cut`` (normalised by all N+ relevant).

`AP@k = \frac{1}{N_+}\sum_{i \le k} rel_i \cdot \frac{\sum_{j \le i} rel_j}{i}`.

Expectation over tie orderings (Yang et al. 2026, App. C, eqs. 23-25): for the
position `i = c_{n-1} + t + 1` inside group `G_n` (size `m_n`,
`r_n` relevant, `R_{n-1}` relevant documents in earlier groups),
`E[rel_i \sum_{j\le i} rel_j] = p_n\,(R_{n-1} + 1 + t\,\frac{r_n-1}{m_n-1})`
with `p_n = r_n/m_n`, because the other `t` positions of the group
ahead of `i` hold, given `rel_i = 1`, a sample without replacement
from the remaining `m_n-1` documents of which `r_n-1` are relevant.

Exact variance (derived for tierank; checked against brute force in the tests).
The number of relevant documents ranked before group `G_n` is the fixed
`R_{n-1}`, so `N_+ \cdot AP = \sum_n X_n` with independent terms

.. math:: X_n = \sum_t w_t x_t (c + N_t), \qquad c = R_{n-1} + 1, \quad N_t = \sum_{s<t} x_s,

over the group's positions `t` (offsets, weight `w_t = 1/\text{rank}`,
0 past the cutoff) and exchangeable indicators `x_t` with `\sum_t x_t = r`.
In the centered indicators `y_t = x_t - p`, `p = r/m`, and with
`D_a = \sum_{t>a} w_t + a w_a` (the weight of the pairs holding index a),

.. math:: X - E[X] = \sum_a u_a y_a + (Q - E[Q]), \quad u_a = c\,w_a + p\,D_a,
          \quad Q = \sum_{s<t} w_t y_s y_t,

so, with the central moments of [`tierank.measures.kernels.central_moments`][tierank.measures.kernels.central_moments],
`S_1=\sum t w_t`, `S_2=\sum t w_t^2`, `P = \sum_a D_a^2 - 2S_2`
(ordered pairs of pairs sharing one index) and `O = S_1^2 - S_2 - P` (disjoint ones):

* `Var[L] = \frac{rs}{m(m-1)} \sum_a (u_a - \bar u)^2`,
* `Cov[L, Q] = c_3 \sum_a (u_a - \bar u)(D_a - \bar D)`,
* `Var[Q] = c_{22} S_2 + c_{211} P + c_{1111} O`,

and `Var[AP] = \sum_n (Var[L] + 2 Cov[L,Q] + Var[Q]) / N_+^2`.  Every term is
centered (no `E[X^2]-E[X]^2`) and carries the factor `rs = r(m-r)`, so a
group that is all relevant or all non-relevant adds exactly 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ties import Prepared, Which, running_count
from .base import FamilyNames, Measure, Stats, register
from .kernels import (
    central_moments_in,
    group_counts_float,
    ratio,
    segment_cumsum,
    segment_firsts,
    select_segments,
)
from .linear import REL, without_moments, without_moments_batch
from .prefixes import Prefixes, row_counts


@register
class AP(Measure):
    """Average precision (trec_eval map; with @k, map_cut_k)."""

    family = "AP"
    tensor_kernel = "ap"
    uses_n_plus = True
    pretty = "average precision"
    definition = (
        "mean over the relevant documents of the precision at"
        " their ranks, normalised by all N+ relevant documents"
    )
    citation = "Harman, D. (1993). Overview of the First Text REtrieval Conference (TREC-1). TREC-1, NIST SP 500-207."
    names = FamilyNames(
        trec_eval="map",
        trec_eval_cut="map_cut",
        ranx="map",
        mteb="map",
        sentence_transformers="map",
    )
    description = "average precision, normalised by N+ (trec_eval map / map_cut)"
    schema = (REL,)
    bounds_refusal = (
        "an unjudged document assumed relevant raises N+ and can lower AP, so neither "
        "assumption bounds it (Yang, Moffat & Turpin, sec. 2)"
    )

    def _rows(self, prep: Prepared):
        """The rows inside the cutoff: an index array, or ``slice(None)`` for every row (no copy)."""
        k = prep.cut(self.k)
        if not np.isfinite(k) or (prep.n and int(prep.pos.max()) < k):
            return slice(None)
        return np.flatnonzero(prep.pos < k)

    def stats(self, prep: Prepared) -> Stats:
        rows = self._rows(prep)
        qi = prep.qi[rows]
        pos = prep.pos[rows]
        nrel = prep.nrel(self.rel)

        def value(which: Which) -> np.ndarray:
            # rel_i * (relevant up to i) / i: a sum over the relevant rows, in row order (the other
            # rows' terms are 0.0, which leave a sum as it is); rows are the first min(k, len)
            # positions of each query, so a query's relevant rows come together
            hit = np.flatnonzero(prep.arrangement(which, "rel", self.rel)[rows])
            hq = qi[hit]
            earlier = np.zeros(prep.nq + 1, np.int64)  # relevant rows of the queries before
            np.cumsum(np.bincount(hq, minlength=prep.nq), out=earlier[1:])
            count = np.arange(1, len(hit) + 1, dtype=np.float64) - earlier[hq]  # relevant up to i
            return ratio(np.bincount(hq, weights=count / (pos[hit] + 1.0), minlength=prep.nq), nrel)

        if not prep.moments:  # the oblivious value and the extremes only
            return without_moments(prep, value)
        pos1 = pos + 1.0
        m = prep.gsize_float
        r = group_counts_float(prep, "rel", self.rel)
        csum = running_count(prep.relevant(self.rel)).astype(np.float64)
        before = csum[prep.gstart[:-1]] - csum[prep.qstart[prep.gq]]
        g = prep.gid[rows]
        t = prep.goffset[rows]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac_g = np.where(m > 1, (r - 1.0) / (m - 1.0), 0.0)  # per group, then read per row
        term = r[g] * ((before + 1.0)[g] + t * frac_g[g]) / (m[g] * pos1)
        expected = ratio(np.bincount(qi, weights=term, minlength=prep.nq), nrel)
        # only groups holding both relevant and non-relevant documents can vary
        idx, local, mixed = select_segments(g, (r > 0) & (r < m))
        vg = self._variance(local, t[idx], pos1[idx], m[mixed], r[mixed], before[mixed])
        var = ratio(np.bincount(prep.gq[mixed], weights=vg, minlength=prep.nq), nrel * nrel)
        return Stats(value("policy"), expected, value("pessimistic"), value("optimistic"), var)

    def batch_key(self):
        """AP and its cutoffs (``map``, ``map_cut``) share one pass ([`stats_batch`][tierank.measures.ap.AP.stats_batch]); a subclass
        with its own `stats` or `compute` is computed alone."""
        cls = type(self)
        if (
            cls.stats is not AP.stats
            or cls.compute is not Measure.compute
            or cls.stats_batch.__func__ is not AP.stats_batch.__func__  # type: ignore[attr-defined]
        ):
            return None
        return (cls, self.params)

    @classmethod
    def stats_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """The `stats` of several cutoffs in one pass ([`tierank.measures.prefixes`][tierank.measures.prefixes]): the per-row
        terms of the value and of the expectation do not depend on the cutoff, and are cumulated
        per query; the variance sums the whole groups' terms and, apart, that of the group each
        cutoff cuts through (the same floats as `stats` computes for each cutoff alone)."""
        first = measures[0]
        rel = first.rel
        px = Prefixes(prep, [row_counts(prep, prep.cut(m.k)) for m in measures])
        rows = px.rows
        qi = px.qi
        pos1 = prep.pos[rows] + 1.0
        nrel = prep.nrel(rel)
        qfirst = segment_firsts(qi)
        qlen = np.diff(np.append(qfirst, len(qi)))

        m_all = prep.gsize_float
        r_all = group_counts_float(prep, "rel", rel)
        gu = px.groups
        m, r = m_all[gu], r_all[gu]
        # only the groups holding both relevant and non-relevant documents can vary; the extremal
        # arrangements move only those, so the other queries' sums are the policy's
        mixed = (r > 0) & (r < m)
        changed = px.changed(mixed)

        def terms(seq: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
            """rel_i * (relevant up to i) / i at the rows ``rows[idx]`` (whole query prefixes)."""
            take, heads, lens = rows, qfirst, qlen
            if idx is not None:
                take = rows[idx]
                heads = segment_firsts(qi[idx])
                lens = np.diff(np.append(heads, len(idx)))
            a = seq[take].astype(np.float64)
            cs = np.cumsum(a)
            base = np.repeat(cs[heads] - a[heads], lens)
            return a * (cs - base) / (pos1 if idx is None else pos1[idx])

        policy = px.at_rows(terms(prep.relevant(rel)))

        def value(which: Which) -> list[np.ndarray]:
            if which == "policy":
                sums = policy
            else:
                seq = prep.arrangement(which, "rel", rel)
                sums = px.at_rows_in(changed, lambda idx: terms(seq, idx), policy)
            return [ratio(x, nrel) for x in sums]

        if not prep.moments:  # the oblivious value and the extremes only
            return without_moments_batch(prep, value)
        csum = running_count(prep.relevant(rel)).astype(np.float64)
        before_all = csum[prep.gstart[:-1]] - csum[prep.qstart[prep.gq]]
        g = prep.gid[rows]
        t = prep.goffset[rows]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac_g = np.where(m_all > 1, (r_all - 1.0) / (m_all - 1.0), 0.0)
        term = r_all[g] * ((before_all + 1.0)[g] + t * frac_g[g]) / (m_all[g] * pos1)
        expected = [ratio(x, nrel) for x in px.at_rows(term)]
        before = before_all[gu]
        idx, local, ids = select_segments(px.gl, mixed & px.whole)
        vg = np.zeros(len(m))
        vg[ids] = cls._variance(local, t[idx], pos1[idx], m[ids], r[ids], before[ids])

        def part(idx, seg, js):
            return cls._variance(seg, t[idx], pos1[idx], m[js], r[js], before[js])

        var = [ratio(x, nrel * nrel) for x in px.at_groups(vg, mixed, part)]
        return [
            Stats(*x)
            for x in zip(value("policy"), expected, value("pessimistic"), value("optimistic"), var)
        ]

    @staticmethod
    def _variance(g, t, pos1, m, r, before) -> np.ndarray:
        """Exact Var[X] of each group (module docstring): [`group_variance`][tierank.measures.ap.group_variance]
        over bincount sums.  ``g``: group of each row (0..len(m)-1, rows sorted and each group's rows
        its leading positions inside the cutoff), ``t``: offset in the group, ``pos1``: rank;
        ``m``, ``r``, ``before`` per group."""
        ng = len(m)
        count = np.bincount(g, minlength=ng)

        def total(x):
            return np.bincount(g, weights=x, minlength=ng)[g]

        def scan(x):  # inside the group only (batch-invariant)
            return segment_cumsum(x, g)

        per_row = group_variance(
            np, total, scan, t.astype(np.float64), 1.0 / pos1, m[g], r[g], before[g], (m - count)[g]
        )
        out = np.zeros(ng)
        first = segment_firsts(g)
        out[g[first]] = per_row[first]
        return out


def group_variance(xp: Any, total, scan, t, w, m, r, before, pad) -> Any:
    """Exact Var[X] of a tie group's term of ``N+ AP`` (module docstring), given per entry (arrays of
    the namespace ``xp``): its offset ``t`` in the group and weight ``w`` (1/rank, 0 past the cutoff),
    the group's size ``m``, relevant documents ``r``, relevant documents ranked ``before`` it and
    ``pad``, its positions not given (past the cutoff: weight 0); ``total(x)`` is, per entry, the sum
    of ``x`` over its group, ``scan(x)`` the inclusive prefix sums inside it.  Every entry gets its
    group's variance: the one formula of runs and tensors (each reads it once per group)."""
    tw = t * w
    W, S1, S2 = total(w), total(tw), total(tw * w)
    # weight of the pairs holding each position: later weights in the group plus t w_t
    D = (W - scan(w)) + tw
    shared = total(D * D) - 2.0 * S2
    disjoint = S1 * S1 - S2 - shared
    u = (before + 1.0) * w + (r / m) * D
    u_bar, d_bar = total(u) / m, total(D) / m
    du, dD = u - u_bar, D - d_bar
    # centered about the group's means, the positions not given (u = D = 0) included
    ss_u = total(du * du) + pad * u_bar * u_bar
    co = total(du * dD) + pad * u_bar * d_bar
    cm = central_moments_in(xp, r, m)
    mixed = (r > 0) & (r < m)
    one, zero = xp.ones_like(m), xp.zeros_like(m)
    var_l = xp.where(mixed, r * (m - r) / xp.where(mixed, m * (m - 1.0), one), zero) * ss_u
    var_q = cm["c22"] * S2 + cm["c211"] * shared + cm["c1111"] * disjoint
    return var_l + 2.0 * cm["c3"] * co + var_q
