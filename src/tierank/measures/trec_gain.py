r"""trec_eval 10's experimental gain measures: ``G``, ``binG``, ``ndcg_rel`` and ``Rndcg``.

Definitions (read in trec_eval 10's ``m_G.c``, ``m_binG.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c`` and
``gain_init.c``), with trec_eval's default gains: a document's gain is its grade when judged with a
grade >= 0, else 0; the ideal list `I_0 \ge I_1 \ge \dots` holds the query's positive judged
grades (`P` of them), `I_j = 0` for `j \ge P`; `n` documents are retrieved
(after ``-M``), `g_i` is the gain at 0-based rank `i`.

* ``binG`` ([`BinG`][tierank.measures.trec_gain.BinG]): `\frac1{N_+}\sum_{i\ \text{relevant}} 1/\log_2(2 + b_i)`, with
  `b_i` the non-relevant (or unjudged) documents above `i` and relevance grade >= ``-l``.
* ``G`` ([`G`][tierank.measures.trec_gain.G]): `\frac1{\sum_j I_j}\sum_{i<n,\ g_i \ne 0} g_i / \log_2(2 + c_i - s_i)`
  with `s_i = \sum_{j \le i} g_j` and the cost `c_i = \sum_{j \le i} \max(I_j, 1)`.
* ``ndcg_rel`` ([`nDCG_rel`][tierank.measures.trec_gain.nDCG_rel]): with `D_i` the DCG of ranks `\le i` and
  `Z_i` the ideal DCG of ranks `\le \min(i, P - 1)`,
  `\frac1P\big(\sum_{i<n,\ g_i>0} D_i/Z_i + (P - h) D_{n-1}/Z_{P-1}\big)`, `h` the
  retrieved documents of positive gain (0 when that sum is not positive).
* ``Rndcg`` ([`RnDCG`][tierank.measures.trec_gain.RnDCG]): the mean of nDCG at the "R levels": every `k \in [1, P]` where
  `I_k \ne I_{k-1}`, plus `k = n` (ideal DCG `Z_{P-1}`) when `P + 1 < n`
  (trec_eval's loop reaches the end of the list only then); 0 when `N_+ = 0`.

Statistics over tie orderings:

* ``Rndcg`` is a weighted sum over ranks (the checkpoints depend on the qrels and `n`
  only), with weights non-increasing in rank: `tierank.measures.linear.Linear`'s closed
  forms give every statistic **exactly**.
* ``binG``: **exact** without a depth limit through a mixed tie group.  Tie groups are
  independent; in a group of `r` relevant and `u` other documents below `B`
  non-relevant ones, a relevant document has `k` of the group's others above it with
  probability `1/(u+1)` for `k = 0..u`, and two of them have
  `E[f(k_a) f(k_b)] = (T^2 + T_2)/((u+1)(u+2))` (`T`, `T_2` the sums of
  `f` and `f^2` over `B..B+u`), which gives the mean and variance of the group's
  sum.  Min and max are the arrangements with the relevant documents last / first.  A query
  whose depth limit (``-M``) cuts through a mixed group is enumerated or sampled as below.
* ``G`` and ``ndcg_rel`` are not sums over ranks, but inside a tie group each is a sum along a
  path through the group's lattice of prefix states (`tierank.measures.lattice`: the count of
  each nonzero gain placed so far), so every statistic is **exact**:

  - ``G``: the gain above a tie group is the same in every ordering, so the groups are
    independent and the value is the sum of the fixed ranks' terms and of one path sum per mixed
    group, whose term at in-group position `k` is `g / \log_2(2 + c_i - s_i)` with `s_i` the
    gain above the group plus the gains of the state plus `g`.  The forward pass gives each
    group's exact mean and variance (summed over the independent groups) and the max-plus pass
    its exact largest and smallest sums (G is not monotone in the arrangement: the extremes are
    not the optimistic / pessimistic ones).  A depth limit through a group stops its path there.
  - ``ndcg_rel`` with gains >= 0: with `x_i = 1\{g_i > 0\}`, `d_i = 1/\log_2(i + 2)` and the
    tie groups `1, 2, \dots` in rank order, the sum is
    `T = \sum_g (V_g + \kappa W_g + U_g C_g)` where `U_g = \sum_{i \in g} x_i / Z_i`,
    `W_g = \sum_{i \in g} g_i d_i`, `V_g = \sum_{i \in g} (x_i / Z_i) \sum_{j \in g, j \le i}
    g_j d_j`, `C_g = \sum_{h < g} W_h` and `\kappa = (P - h) / Z_{P-1}` (`h` is the same in
    every ordering unless a depth limit cuts a group of positive and other gains).  The triples
    `(U_g, V_g, W_g)` of different groups are independent; each group's means and covariances
    are exact from its lattice (the moments of `1, U, V, W` and their products, restricted to
    each state, are closed under a move: `W \mathrel{+}= b`, `U \mathrel{+}= a`,
    `V \mathrel{+}= a W`).  Going down the groups, `E[T]`, `\mathrm{Var}(T)`, `\mathrm{Var}(C)`
    and `\mathrm{Cov}(T, C)` follow by a recursion of sums over the earlier groups:
    with `\Delta_g = V_g + \kappa W_g + U_g C_g`, `\mathrm{Var}(\Delta_g) =
    \mathrm{Var}(V'_g) + \sigma^2_{U_g}(\mathrm{Var}\,C_g + E[C_g]^2) + E[U_g]^2\mathrm{Var}\,C_g
    + 2\,\mathrm{Cov}(V'_g, U_g) E[C_g]` (`V'_g = V_g + \kappa W_g`),
    `\mathrm{Cov}(T_{g-1}, \Delta_g) = E[U_g]\,\mathrm{Cov}(T_{g-1}, C_g)` and
    `\mathrm{Cov}(T_g, C_{g+1}) = \mathrm{Cov}(T_{g-1}, C_g) + E[U_g]\mathrm{Var}\,C_g +
    \mathrm{Cov}(W_g, V'_g) + \mathrm{Cov}(W_g, U_g) E[C_g]`.  Moving a larger gain up never
    lowers the value (it raises every later `D_i` and the nDCG at the two documents swapped), so
    the min and max are the pessimistic and optimistic arrangements'.
  - A query with a group whose lattice is too large (`tierank.measures.lattice.fits`: many
    distinct gains in one group), and for ``ndcg_rel`` one with a negative gain (its sum may fall
    below 0, where the value is 0) or a depth limit through a group of positive and other gains,
    is **enumerated** when its distinct orderings number at most `ENUMERATE` (every statistic
    exact), and otherwise **sampled** (``method="sampled"``, `tierank.measures.sampling`'s
    labels, per query): expected and variance from ``prep.samples`` uniformly random orderings
    (seeded per query), min and max the extremes over those orderings and the policy, optimistic
    and pessimistic arrangements (attained values, so inner bounds of the true range).

``G``, ``ndcg_rel`` and ``Rndcg`` take trec_eval's gain map (``G.1=2,2=5``, the parameter ``gains``:
``G(gains={1:2,2:5})``): a judged document of grade g >= 0 gains ``gains.get(g, g)`` (0 or negative
allowed), every other document 0, and the ideal list holds the positive gains of the judgments,
descending (trec_eval sorts the levels by gain with an integer comparator, so gains less than 1
apart may come out of order there: tierank's ideal list is always sorted, as for ``ndcg``).
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Stats, register
from .gains import (
    GainRows,
    PerOrdering,
    RankedRows,
    ideal_costs,
    ideal_gains,
    ideal_running,
    ideal_totals,
    query_ideal,
    running_sums,
    settle,
)
from .lattice import Lattice, chunks
from .orderings import ENUMERATE, per_ordering_stats
from .prefixes import segment_cumsum, starts_of
from .trec_forms import GainMap
from .trec_gain_sums import BinG, RnDCG

__all__ = ["G", "BinG", "nDCG_rel", "RnDCG", "ENUMERATE", "per_ordering_stats"]


def _ndcg_moves(M: np.ndarray, c: tuple[np.ndarray, ...]) -> np.ndarray:
    """ndcg_rel's lattice move: the moments ``M`` (rows p, U, V, W, UU, VV, WW, UV, UW, VW: the
    expectations of these products restricted to a state) after adding ``a`` to U, ``b`` to W and
    ``a`` times the new W to V.  ``M`` is updated in place (each row from the others' old values)."""
    a, b = c
    p, U, V, W, UU, VV, WW, UV, UW, VW = M
    ab = a * b
    aa = a * a
    abp = ab * p
    # V'^2 = V^2 + a^2 W^2 + 2a VW + 2ab V + 2a^2 b W + (ab)^2
    VV += aa * WW + 2.0 * (a * VW + ab * V + aa * b * W) + ab * abp
    # U'V' = UV + a UW + ab U + a V + a^2 W + a^2 b
    UV += a * (UW + V + a * W + abp) + ab * U
    # V'W' = VW + b V + a W^2 + 2ab W + a b^2
    VW += b * V + a * WW + 2.0 * ab * W + b * abp
    # U'W' = UW + b U + a W + ab
    UW += b * U + a * W + abp
    UU += a * (2.0 * U + a * p)
    WW += b * (2.0 * W + b * p)
    V += a * W + abp
    U += a * p
    W += b * p
    return M


@register
class G(PerOrdering):
    """trec_eval's normalized gain G (``m_G.c``, experimental): each retrieved document of gain g
    adds g / log2(2 + cost - gain so far), the cost growing by max(ideal gain, 1) per rank; over the
    total ideal gain.

    >>> from tierank.measures import parse_measure
    >>> str(parse_measure("G"))
    'G'
    """

    family = "G"
    pretty = "G (trec_eval's normalised gain)"
    definition = "gain of the ranking relative to the ideal ranking's gain, accumulated to the end of the list"
    citation = "trec_eval 10.0, m_G.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="G", trec_eval_form=GainMap("G"), ir_measures=None)
    description = (
        "trec_eval's normalized gain G: sum of gain / log2(2 + ideal cost - gain so far) over the "
        "ideal gain (experimental; exact over tie orderings, sampled only past the lattice limit)"
    )

    def ordering_values(self, prep: Prepared, q: int, A: np.ndarray) -> np.ndarray:
        ideal = query_ideal(prep, q, self.param("gains"))
        total = float(np.cumsum(ideal)[-1]) if len(ideal) else 0.0
        S, n = A.shape
        if total <= 0.0 or n == 0:
            return np.zeros(S)
        pad = np.zeros(n)
        pad[: min(n, len(ideal))] = ideal[:n]
        cost = np.cumsum(np.maximum(pad, 1.0))
        got = np.cumsum(A, axis=1)
        # the terms of the documents of nonzero gain only, added per row in rank order (bincount adds
        # in input order: the same double as the sequential sum over every rank)
        row, col = np.nonzero(A)
        g = A[row, col]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = g / np.log2(2.0 + cost[col] - got[row, col])
        return np.bincount(row, weights=terms, minlength=S) / total

    def defined(self, prep: Prepared) -> np.ndarray:
        gains, start = ideal_gains(prep, self.param("gains"))
        cc = np.concatenate(([0.0], np.cumsum(gains)))
        start = np.asarray(start)
        return cc[start[1:]] - cc[start[:-1]] > 0.0

    def exact(self, prep: Prepared, r: GainRows, out: Stats) -> np.ndarray:
        """Tie groups are independent (the gain above a group is the same in every ordering): the
        query's value is the sum of its fixed rows' terms and of each mixed group's path sum over
        its lattice, whose moments and extremes are exact."""
        nq = prep.nq
        total = ideal_totals(prep, self.param("gains"))  # (`GainRows.ideal_total` of ``r.ig``)
        cc = ideal_costs(prep, self.param("gains"))  # (whole numbers: ``r.ig``'s, kept)
        ideal_cost = r.ideal_prefix(np.maximum(r.ig, 1.0)) if cc is None else r.ideal_read(cc)
        cost = ideal_cost + np.maximum(r.pos + 1 - r.P[r.q], 0)
        got = r.prefix(r.y)
        # the fixed rows' terms (a row of gain 0 or of a mixed group would add +0.0: left out)
        at = np.flatnonzero((r.y != 0) & ~r.mixed[r.group_of_row])
        with np.errstate(divide="ignore", invalid="ignore"):
            term = r.y[at] / np.log2(2.0 + cost[at] - got[at])
        fixed = np.bincount(r.q[at], weights=term, minlength=nq)
        mg, lv, ok = r.lattice_groups(prep)
        first = r.gfirst[mg]
        above = got[first] - r.y[first]  # the gain above each mixed group
        mean, m2 = np.zeros(len(mg)), np.zeros(len(mg))
        hi, lo = np.zeros(len(mg)), np.zeros(len(mg))
        use = np.flatnonzero(ok)
        rows = 3 if prep.moments else 0  # the extremes alone: no moment carried
        for ch in chunks(lv.states[use], r.steps[mg][use]):
            lat = Lattice.build(lv, r.size[mg], r.steps[mg], use[ch])

            def coef(src, k, g, lvl, lat=lat):
                gi = lat.order[g]
                y = lat.level[g, lvl]
                arg = 2.0 + cost[first[gi] + k] - (above[gi] + lat.total[src] + y)
                return (y / np.log2(arg),)

            def apply(M, c):
                if not len(M):
                    return M
                t = c[0]
                return np.stack([M[0], M[1] + t * M[0], M[2] + t * (2.0 * M[1] + t * M[0])])

            M = np.zeros((rows, lat.nstates))
            M[:1, lat.off[:-1]] = 1.0
            ext = np.array([[-np.inf], [np.inf]]) * np.ones(lat.nstates)
            ext[:, lat.off[:-1]] = 0.0
            lat.forward(M, coef, apply, ext)
            if rows:
                sums = lat.group_sum(M)
                mean[lat.order], m2[lat.order] = sums[1], sums[2]
            hi[lat.order] = np.maximum.reduceat(ext[0], lat.off[:-1])
            lo[lat.order] = np.minimum.reduceat(ext[1], lat.off[:-1])
        if not prep.moments:
            mean[:] = m2[:] = np.nan
        var = np.where(hi > lo, np.maximum(m2 - mean * mean, 0.0), 0.0)
        gq = r.gq[mg]
        fallback = np.bincount(gq[~ok], minlength=nq) > 0
        done = np.zeros(nq, dtype=bool)
        done[r.q] = True
        done &= ~fallback
        qs = np.flatnonzero(done)

        def per_query(x):
            return np.bincount(gq, weights=np.where(ok, x, 0.0), minlength=nq)[qs]

        settle(
            out,
            qs,
            (fixed[qs] + per_query(mean)) / total[qs],
            (fixed[qs] + per_query(lo)) / total[qs],
            (fixed[qs] + per_query(hi)) / total[qs],
            per_query(var) / (total[qs] * total[qs]),
            per_query(hi - lo) > 0.0,
        )
        return fallback

    def ranking_values(self, prep: Prepared, values: np.ndarray, rows: RankedRows) -> np.ndarray:
        """`ordering_values` of one ranking per query, over the rows read: the gain so far is a
        running sum per query over the documents of nonzero gain (a zero adds +0.0), the cost one
        over every rank (as ``np.cumsum`` along the query's ranks; with whole-number ideal gains,
        exact, the ideal list's running sum plus the ranks past it), read at the documents of
        nonzero gain, whose terms are added per query in rank order (``np.bincount``: the same
        double as the sum over every rank, a zero gain adding +0.0)."""
        gm = self.param("gains")
        ig, istart = ideal_gains(prep, gm)
        ig = np.asarray(ig, dtype=np.float64)
        istart = np.asarray(istart, dtype=np.int64)
        qs = rows.queries
        P = np.diff(istart)[qs]
        y = values[rows.rows]
        nz = np.flatnonzero(y != 0)
        q, pos, y = rows.q[nz], rows.pos[nz], y[nz]
        got = running_sums(y, starts_of(q))
        cc = ideal_costs(prep, gm)
        if cc is not None:  # whole numbers: the sum up to the rank, exact
            k = np.minimum(pos + 1, P[q])  # the ideal entries up to the rank, then ranks of cost 1
            at = np.minimum(np.maximum(istart[qs][q] + k - 1, 0), max(len(cc) - 1, 0))
            cost = np.where(k > 0, cc[at] if len(cc) else 0.0, 0.0) + (pos + 1 - k)
        else:  # the running sum over every rank, read at the documents of nonzero gain
            q_all, pos_all = rows.q, rows.pos
            ideal_at = pos_all < P[q_all]  # inside the ideal list: max(ideal gain, 1), past it 1
            at = np.where(ideal_at, istart[qs][q_all] + pos_all, 0)
            c = np.where(ideal_at, np.maximum(ig[at], 1.0), 1.0) if len(ig) else 1.0 + 0 * pos_all
            cost = running_sums(c, rows.bounds)[nz]
        total = ideal_totals(prep, gm)[qs]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = y / np.log2(2.0 + cost - got)
            out = np.bincount(q, weights=terms, minlength=len(qs)) / total
        return np.where((total > 0.0) & (rows.width > 0), out, 0.0)


@register
class nDCG_rel(PerOrdering):
    """trec_eval's ndcg_rel (``m_ndcg_rel.c``, experimental): nDCG averaged over the relevant
    documents (positive gain), an unretrieved one counting the nDCG at the end of the list."""

    family = "nDCG_rel"
    pretty = "nDCG over relevant documents"
    definition = "nDCG averaged over the ranks of the relevant documents"
    citation = "trec_eval 10.0, m_ndcg_rel.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="ndcg_rel", trec_eval_form=GainMap("ndcg_rel"), ir_measures=None)
    description = (
        "trec_eval's ndcg_rel: nDCG at each relevant document, averaged over the relevant "
        "documents (experimental; exact over tie orderings, sampled only with negative gains or "
        "past the lattice limit)"
    )

    def ordering_values(self, prep: Prepared, q: int, A: np.ndarray) -> np.ndarray:
        ideal = query_ideal(prep, q, self.param("gains"))
        P = len(ideal)
        S, n = A.shape
        if P == 0:
            return np.zeros(S)
        rank = np.arange(n, dtype=np.float64)
        zc = np.cumsum(ideal / np.log2(np.arange(P, dtype=np.float64) + 2.0))
        z = zc[np.minimum(np.arange(n), P - 1)]
        with np.errstate(divide="ignore", invalid="ignore"):
            dcg = np.cumsum(A / np.log2(rank + 2.0)[None, :], axis=1)  # a gain of 0 adds 0.0
        pos = A > 0
        # nDCG at the documents of positive gain, added per row in rank order (bincount: in input order)
        row, col = np.nonzero(pos)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.bincount(row, weights=dcg[row, col] / z[col], minlength=S)
        h = np.bincount(row, minlength=S)
        end = dcg[:, -1] if n else np.zeros(S)
        s = s + (P - h) * end / zc[-1]
        return np.where(s > 0.0, s / P, 0.0)

    def defined(self, prep: Prepared) -> np.ndarray:
        return np.diff(np.asarray(ideal_gains(prep, self.param("gains"))[1])) > 0

    def exact(self, prep: Prepared, r: GainRows, out: Stats) -> np.ndarray:
        """The exact statistics of the module docstring (with gains >= 0 and no depth limit through
        a group of positive and other gains): the groups' `(U_g, V_g, W_g)` from their lattices
        (the fixed groups' from the one ranking), then the recursion over the groups of each query;
        min and max the pessimistic and optimistic arrangements'."""
        nq = prep.nq
        mg, lv, ok = r.lattice_groups(prep)
        # a negative gain (the sum may fall below 0, where the value is 0) or a depth limit through
        # a group of positive and other gains (h varies): left to per_ordering_stats
        npos = (lv.count * (lv.level > 0)).sum(axis=1)
        cut_through = (r.steps[mg] < r.size[mg]) & (npos > 0) & (npos < r.size[mg])
        fallback = np.bincount(r.q, weights=r.y < 0, minlength=nq) > 0
        fallback |= np.bincount(r.gq[mg], weights=~ok | cut_through, minlength=nq) > 0
        done = np.zeros(nq, dtype=bool)
        done[r.q] = True
        done &= ~fallback
        qs = np.flatnonzero(done)
        read = RankedRows(prep, qs)
        pessimistic, optimistic = r.arranged(prep)
        hi = self.ranking_values(prep, optimistic, read)
        lo = self.ranking_values(prep, pessimistic, read)
        P = r.P[qs].astype(np.float64)
        if not prep.moments:  # the extremes alone
            nan = np.full(len(qs), np.nan)
            settle(out, qs, nan, lo, hi, nan, lo < hi)
            return fallback
        mean_t, var_t = self._moments(r, mg, lv, ok & ~cut_through)
        settle(out, qs, mean_t[qs] / P, lo, hi, np.maximum(var_t[qs], 0.0) / (P * P), lo < hi)
        return fallback

    @staticmethod
    def _moments(r: GainRows, mg, lv, exact) -> tuple[np.ndarray, np.ndarray]:
        """Per query, the exact mean and variance of the sum `T` (the module docstring): the
        groups' `(U_g, V_g, W_g)` (the fixed groups' from the one ranking, the mixed groups ``mg``
        where ``exact`` from their lattices of levels ``lv``), then the recursion over the groups of
        each query."""
        nq = len(r.P)
        iq = np.repeat(np.arange(nq), r.P)
        j = np.arange(len(r.ig)) - r.istart[iq]
        zl = r.ig / np.log2(j + 2.0)
        Z = r.ideal_prefix(zl)
        ZP = r.ideal_total(zl)
        d = 1.0 / np.log2(r.pos + 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_z = 1.0 / Z
        a = np.where(r.y > 0, inv_z, 0.0)
        b = r.y * d
        h = np.bincount(r.q, weights=r.y > 0, minlength=nq)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(r.P > 0, (r.P - h) / ZP, 0.0)
        # the fixed groups' (U, V, W) from the one ranking
        gr = r.group_of_row
        inner = segment_cumsum(b, np.append(r.gfirst, len(b)))
        ng = len(r.groups)
        U = np.bincount(gr, weights=a, minlength=ng)
        W = np.bincount(gr, weights=b, minlength=ng)
        V = np.bincount(gr, weights=a * inner, minlength=ng)
        cov = np.zeros((6, ng))  # UU, VV, WW, UV, UW, VW
        use = np.flatnonzero(exact)
        first = r.gfirst[mg]
        for ch in chunks(lv.states[use], r.steps[mg][use]):
            lat = Lattice.build(lv, r.size[mg], r.steps[mg], use[ch])

            row0 = first[lat.order]  # the first row of each group of the lattice

            def coef(src, k, g, lvl, lat=lat, row0=row0):
                row = row0[g] + k
                y = lat.level[g, lvl]
                return (np.where(y > 0, inv_z[row], 0.0), y * d[row])

            M = np.zeros((10, lat.nstates))
            M[0, lat.off[:-1]] = 1.0
            lat.forward(M, coef, _ndcg_moves, reachable_only=False)
            p_, u, v, w, uu, vv, ww, uv, uw, vw = lat.group_sum(M)
            gi = mg[lat.order]
            U[gi], V[gi], W[gi] = u, v, w
            cov[:, gi] = [uu - u * u, vv - v * v, ww - w * w, uv - u * v, uw - u * w, vw - v * w]
        kg = kappa[r.gq]
        V2 = V + kg * W  # V'' = V + kappa W: the group's own terms
        cUU, cVV, cWW, cUV, cUW, cVW = cov
        var_v2 = cVV + 2.0 * kg * cVW + kg * kg * cWW
        c_uv2 = cUV + kg * cUW
        c_wv2 = cVW + kg * cWW
        gbounds = starts_of(r.gq)

        def before(x):  # per group, the sum of x over the earlier groups of its query
            return segment_cumsum(x, gbounds) - x

        C = before(W)
        VC = before(cWW)
        CTC = before(U * VC + c_wv2 + cUW * C)
        mean_t = np.bincount(r.gq, weights=V2 + U * C, minlength=nq)
        var_t = np.bincount(
            r.gq,
            weights=2.0 * U * CTC + var_v2 + cUU * (VC + C * C) + U * U * VC + 2.0 * c_uv2 * C,
            minlength=nq,
        )
        return mean_t, var_t

    def ranking_values(self, prep: Prepared, values: np.ndarray, rows: RankedRows) -> np.ndarray:
        """`ordering_values` of one ranking per query, over the rows read: the DCG is a running sum
        per query over the documents of nonzero gain (the others add +0.0), the nDCG at the
        documents of positive gain is added per query in rank order (``np.bincount``)."""
        gm = self.param("gains")
        ig, istart = ideal_gains(prep, gm)
        ig = np.asarray(ig, dtype=np.float64)
        istart = np.asarray(istart, dtype=np.int64)
        qs = rows.queries
        nq = len(qs)
        P = np.diff(istart)[qs]
        y = values[rows.rows]
        nz = np.flatnonzero(y != 0)
        q, pos, y = rows.q[nz], rows.pos[nz], y[nz]
        top = int(pos.max()) + 1 if len(pos) else 0
        log_rank = np.log2(np.arange(top, dtype=np.float64) + 2.0)  # once per rank
        dcg = running_sums(y / log_rank[pos], starts_of(q))

        def ideal_dcg():  # the ideal DCG at each ideal rank, per query (running sums over its list)
            j = np.arange(len(ig)) - np.repeat(istart[:-1], np.diff(istart))
            return ideal_running(prep, ig / np.log2(j.astype(np.float64) + 2.0), gm)

        zc = prep.cached(("ndcg_rel-ideal-dcg", gm), ideal_dcg)
        up = y > 0  # (a positive gain: the query has an ideal list, P >= 1)
        qp = q[up]
        z = zc[istart[qs][qp] + np.minimum(pos[up], P[qp] - 1)]
        end = np.zeros(nq)  # the DCG at the last rank read: at its last document of nonzero gain
        if len(q):
            last = np.append(q[1:] != q[:-1], True)
            end[q[last]] = dcg[last]
        has = P > 0
        z_last = np.where(has, zc[np.maximum(istart[qs] + P - 1, 0)] if len(zc) else 0.0, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.bincount(qp, weights=dcg[up] / z, minlength=nq)
            h = np.bincount(qp, minlength=nq)
            s = s + (P - h) * end / z_last
            out = np.where(s > 0.0, s / P, 0.0)
        return np.where(has, out, 0.0)
