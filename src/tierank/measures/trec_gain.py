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

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

import numpy as np

from ..errors import TierankInputError, quote
from ..ties import Prepared, segment_offsets
from .base import FamilyNames, Measure, Param, Stats, register
from .kernels import ratio
from .lattice import Lattice, Levels, chunks, fits, levels
from .linear import REL, Linear, _mapped
from .prefixes import segment_cumsum, starts_of
from .sampling import query_keys

__all__ = ["G", "BinG", "nDCG_rel", "RnDCG", "ENUMERATE", "per_ordering_stats"]

#: queries with at most this many distinct tie orderings are enumerated (exact statistics)
ENUMERATE = 5040

_REFUSAL = "its ideal gains grow with every unjudged document assumed relevant, so neither assumption bounds it"


def _distinct_perms(values: tuple) -> list[tuple]:
    """Every distinct ordering of the multiset ``values``.

    >>> _distinct_perms((1, 0, 0))
    [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    """
    counts = Counter(values)
    keys = sorted(counts)
    out: list[tuple] = []
    cur: list = []

    def rec(left: int) -> None:
        if not left:
            out.append(tuple(cur))
            return
        for k in keys:
            if counts[k]:
                counts[k] -= 1
                cur.append(k)
                rec(left - 1)
                cur.pop()
                counts[k] += 1

    rec(len(values))
    return out


def _multinomial(values: np.ndarray) -> int:
    """Distinct orderings of ``values``: m! / prod(c!) over the multiplicities c."""
    counts = Counter(values.tolist()).values()
    return math.factorial(len(values)) // math.prod(math.factorial(c) for c in counts)


def mixed_groups(prep: Prepared, values: np.ndarray) -> np.ndarray:
    """Per tie group, whether its ``values`` differ and it starts above the depth limit (the groups
    whose ordering can change a value)."""
    mixed = np.zeros(len(prep.gsize), dtype=bool)
    if prep.n > 1:
        differ = (values[1:] != values[:-1]) & (prep.gid[1:] == prep.gid[:-1])
        mixed[prep.gid[1:][differ]] = True
        mixed &= prep.gpos0 < prep.cut(float("inf"))
    return mixed


def one_ranking(
    prep: Prepared,
    values: np.ndarray,
    qs: np.ndarray,
    batch_fn: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Per query of ``qs``, the value of the one ranking ``values`` (per row, in rank order) by
    ``batch_fn(qs, A, width)``: the queries of similar lengths in padded rows of ``A`` (zero past
    ``width``, cut at the depth limit), at most 2^22 entries at once."""
    out = np.zeros(len(qs))
    if not len(qs) or not prep.n:
        return out
    cut = prep.cut(float("inf"))
    length = np.diff(prep.qstart)[qs]
    width = (
        np.minimum(length, cut).astype(np.int64) if np.isfinite(cut) else length.astype(np.int64)
    )
    order = np.argsort(width, kind="stable")
    qs_s, width = qs[order], width[order]
    i = 0
    while i < len(qs_s):  # batches of at most 2^22 entries (rows x widest row: the last one)
        size = np.arange(1, len(qs_s) - i + 1) * np.maximum(width[i:], 1)
        j = i + max(1, int(np.searchsorted(size, 1 << 22, side="right")))
        q, w = qs_s[i:j], width[i:j]
        n = int(w[-1])
        col = np.arange(n)
        inside = col[None, :] < w[:, None]
        A = np.where(
            inside,
            values[np.minimum(prep.qstart[q][:, None] + col[None, :], len(values) - 1)],
            0.0,
        )
        out[order[i:j]] = batch_fn(q, A, w)
        i = j
    return out


def per_ordering_stats(
    prep: Prepared,
    values: np.ndarray,
    fn: Callable[[int, np.ndarray], np.ndarray],
    queries: np.ndarray | None = None,
    exact_extremes: bool = False,
    base: Stats | None = None,
    batch_fn: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Stats:
    """[`Stats`][tierank.measures.trec_gain.Stats] of a measure given by ``fn(q, A)``: the value of query ``q`` for every row of
    ``A`` (orderings x ranks read, the document ``values`` in rank order).  Queries with at most
    `ENUMERATE` distinct orderings are enumerated (exact); the others are sampled
    (``prep.samples`` orderings, seeded by query), their min/max the extremes seen unless
    ``exact_extremes`` (then the optimistic / pessimistic arrangements of ``values``, which the
    caller guarantees extremal).  ``queries``: only those (the others taken from ``base``).
    ``batch_fn(qs, A, width)``: the value of the one ranking of each query of ``qs`` at once (rows of
    ``A`` zero-padded past ``width``), for the queries no ordering changes.
    """
    nq = prep.nq
    if base is None:
        z = np.zeros(nq)
        base = Stats(z, z.copy(), z.copy(), z.copy(), z.copy())
    obl, ex, mn, mx, var = (
        np.array(a, dtype=np.float64, copy=True)
        for a in (base.oblivious, base.expected, base.min, base.max, base.var)
    )
    se = np.zeros(nq) if base.se is None else np.array(base.se, copy=True)
    sampled = False
    drawn = base.sampled_queries().copy()  # per query: estimated from random orderings
    cut = prep.cut(float("inf"))
    opt = prep.sorted_in_groups(values, "optimistic")
    pes = prep.sorted_in_groups(values, "pessimistic")
    keys = None
    todo = np.arange(nq) if queries is None else np.asarray(queries, dtype=np.int64)
    if batch_fn is not None and len(todo) and prep.n:
        # queries with no tie group of differing values above the cut: one value, computed in batches
        tied_q = np.bincount(prep.gq[mixed_groups(prep, values)], minlength=nq) > 0
        plain = todo[~tied_q[todo]]
        todo = todo[tied_q[todo]]
        v = one_ranking(prep, values, plain, batch_fn)
        obl[plain] = ex[plain] = mn[plain] = mx[plain] = v
        var[plain] = 0.0
    for q in todo.tolist():
        s, e = int(prep.qstart[q]), int(prep.qstart[q + 1])
        n = e - s if not np.isfinite(cut) else min(e - s, int(cut))
        v = values[s:e]
        fixed = np.stack([v, opt[s:e], pes[s:e]])[:, :n]
        fv = fn(q, fixed)
        obl[q] = fv[0]
        spans = []
        if e > s:
            gs = prep.gstart[prep.gid[s] : prep.gid[e - 1] + 2] - s
            for a, b in zip(gs[:-1].tolist(), gs[1:].tolist()):
                if a < n and b - a > 1 and v[a:b].min() != v[a:b].max():
                    spans.append((a, b))
        if not spans:
            ex[q] = mn[q] = mx[q] = fv[0]
            var[q] = 0.0
            continue
        total = 1
        for a, b in spans:
            total *= _multinomial(v[a:b])
            if total > ENUMERATE:
                break
        if total <= ENUMERATE:
            perms = [
                np.array(_distinct_perms(tuple(sorted(v[a:b].tolist()))), dtype=np.float64)
                for a, b in spans
            ]
            idx = np.indices([len(p) for p in perms]).reshape(len(perms), -1)
            A = np.tile(v, (idx.shape[1], 1))
            for (a, b), p, ix in zip(spans, perms, idx):
                A[:, a:b] = p[ix]
            vals = fn(q, A[:, :n])
            ex[q], mn[q], mx[q] = vals.mean(), vals.min(), vals.max()
            var[q] = float(np.mean((vals - ex[q]) ** 2))
            se[q] = 0.0
            continue
        sampled = True
        drawn[q] = True
        if keys is None:
            keys = query_keys(prep)
        rng = np.random.default_rng([int(prep.seed) % (1 << 63), int(keys[q])])
        S = int(prep.samples)
        A = np.tile(v, (S, 1))
        for a, b in spans:  # each tie group shuffled in every row at once, in place (no sort)
            block = A[:, a:b]
            rng.permuted(block, axis=1, out=block)
        vals = fn(q, A[:, :n])
        ex[q] = vals.mean()
        var[q] = float(vals.var(ddof=1)) if S > 1 else 0.0
        se[q] = math.sqrt(var[q] / S)
        if exact_extremes:
            mn[q], mx[q] = fv[2], fv[1]
        else:
            mn[q], mx[q] = min(vals.min(), fv.min()), max(vals.max(), fv.max())
        ex[q] = min(max(ex[q], mn[q]), mx[q])
    if sampled or base.method == "sampled":
        return Stats(
            obl,
            ex,
            mn,
            mx,
            var,
            method="sampled",
            samples=int(prep.samples),
            seed=int(prep.seed),
            se=se,
            sampled=drawn,
        )
    return Stats(obl, ex, mn, mx, var)


#: trec_eval's gain map (``G.1=2,2=5``, ``setup_gains`` of gain_init.c)
GAINS = Param(
    "gains",
    dict,
    None,
    "trec_eval's gain map grade -> gain, e.g. {1:2,2:5} (grades not named keep gain = grade; "
    "gains may be 0 or negative)",
)


def _check_gains(m: Measure) -> None:
    """A gain map naming a negative grade is refused: trec_eval would give that gain to the documents
    it reads as unjudged or not in the pool (its internal levels -1 and -2), never to a judgment."""
    bad = [k for k, _ in m.param("gains") or () if k < 0]
    if bad:
        raise TierankInputError(
            f"measure {quote(str(m))}: gains for negative grades ({bad[0]}) are not supported "
            "(trec_eval reads negative grades as unjudged)"
        )


def doc_gains(prep: Prepared, gains) -> np.ndarray:
    """Per row (policy order), trec_eval's gain of the document: its grade through the gain map
    ``gains`` (None: the grade itself) when judged with a grade >= 0, else 0."""
    if gains is None:
        return prep.gain

    def compute():
        ok = prep.judged & (np.nan_to_num(prep.grade, nan=-1.0) >= 0)
        return np.where(ok, _mapped(prep.grade, gains), 0.0)

    return prep.cached(("trec-gains", gains), compute)


def ideal_gains(prep: Prepared, gains) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's ideal list per query under the gain map ``gains``: the positive gains of the
    judgments with a grade >= 0, descending, and the query offsets (``prep.ideal`` without a map)."""
    if gains is None:
        return prep.ideal

    def compute():
        q, g = prep.judged_grades
        g = np.asarray(g, dtype=np.float64)
        q = np.asarray(q, dtype=np.int64)
        keep = g >= 0
        gain = _mapped(g[keep], gains)
        q = q[keep]
        pos = gain > 0
        iq, ig = q[pos], gain[pos]
        o = np.lexsort((-ig, iq))
        return ig[o], segment_offsets(iq[o], prep.nq)

    return prep.cached(("trec-ideal", gains), compute)


def _ideal(prep: Prepared, q: int, gains=None) -> np.ndarray:
    """The positive judged gains of query ``q``, descending (trec_eval's ideal list)."""
    gains, start = ideal_gains(prep, gains)
    return np.asarray(gains[start[q] : start[q + 1]], dtype=np.float64)


def _settle(out: Stats, qs, expected, lo, hi, var, varies) -> None:
    """Write the exact statistics of the queries ``qs`` into ``out`` (in place): where ``varies``
    is false the one value (the oblivious one, variance 0), else the extremes widened to the
    oblivious value (an attained one; rounding could leave it out) and the mean clipped to them."""
    obl = out.oblivious[qs]
    lo, hi = np.minimum(lo, obl), np.maximum(hi, obl)
    out.expected[qs] = np.where(varies, np.clip(expected, lo, hi), obl)
    out.min[qs] = np.where(varies, lo, obl)
    out.max[qs] = np.where(varies, hi, obl)
    out.var[qs] = np.where(varies, var, 0.0)


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


class _Rows:
    """The ranks read of the queries ``vary`` (bool per query), with what G and ndcg_rel read of
    them: per row (local index ``0..len(rows)``, in rank order) its query ``q``, rank ``pos`` and
    gain ``y``; per tie group of these queries above the depth limit (``groups``, ascending) its
    first local row ``gfirst``, the positions read ``steps`` and whether it is ``mixed``; the ideal
    gains ``ig`` with their query offsets ``istart`` and counts ``P``."""

    def __init__(self, prep: Prepared, values: np.ndarray, vary: np.ndarray, mixed, gm) -> None:
        cut = prep.cut(float("inf"))
        self.values = values
        self.rows = rows = np.flatnonzero(vary[prep.qi] & (prep.pos < cut))
        self.q = prep.qi[rows]
        self.pos = prep.pos[rows].astype(np.int64)
        self.y = values[rows]
        ig, istart = ideal_gains(prep, gm)
        self.ig = np.asarray(ig, dtype=np.float64)
        self.istart = np.asarray(istart, dtype=np.int64)
        self.P = np.diff(self.istart)
        gid = prep.gid[rows]
        new = np.ones(len(gid), dtype=bool)
        new[1:] = gid[1:] != gid[:-1]
        self.gfirst = np.flatnonzero(new)
        self.groups = gid[self.gfirst]
        self.gq = prep.gq[self.groups]
        self.size = prep.gsize[self.groups].astype(np.int64)
        self.steps = np.diff(np.append(self.gfirst, len(rows)))
        self.mixed = mixed[self.groups]
        self.group_of_row = np.cumsum(new) - 1
        self.qbounds = starts_of(self.q)  # the rows of each query read

    # every running sum restarts at each query (`segment_cumsum`): a query's numbers do not depend on
    # the other queries of the run, to the last bit

    def prefix(self, x: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``x`` over its query's rows up to it (inclusive)."""
        return segment_cumsum(x, self.qbounds)

    def ideal_prefix(self, x: np.ndarray) -> np.ndarray:
        """Per row at rank ``i``, the sum of ``x`` (per ideal entry) over its query's first
        ``min(i + 1, P)`` ideal entries."""
        cc = segment_cumsum(x, self.istart)
        k = np.minimum(self.pos + 1, self.P[self.q])
        at = np.maximum(self.istart[self.q] + k - 1, 0)
        return np.where(k > 0, cc[np.minimum(at, max(len(cc) - 1, 0))] if len(cc) else 0.0, 0.0)

    def ideal_total(self, x: np.ndarray) -> np.ndarray:
        """Per query, the sum of ``x`` (per ideal entry) over its ideal entries."""
        cc = segment_cumsum(x, self.istart)
        last = np.maximum(self.istart[1:] - 1, 0)
        return np.where(self.P > 0, cc[last] if len(cc) else 0.0, 0.0)

    def arranged(self, prep: Prepared, which: str) -> np.ndarray:
        """The document values (per row of the run) with the mixed groups of these queries sorted
        descending (``optimistic``) or ascending (``pessimistic``)."""
        mg = self.groups[self.mixed]
        size = prep.gsize[mg]
        g = np.repeat(np.arange(len(mg)), size)
        rows = np.repeat(prep.gstart[mg] - np.cumsum(size) + size, size) + np.arange(len(g))
        v = self.values[rows]
        out = self.values.copy()
        out[rows] = v[np.lexsort((-v if which == "optimistic" else v, g))]
        return out

    def lattice_groups(self, prep: Prepared) -> tuple[np.ndarray, Levels, np.ndarray]:
        """The mixed groups (indices into ``groups``), their `levels` and whether each fits."""
        mg = np.flatnonzero(self.mixed)
        lv = levels(self.values, prep.gstart[self.groups[mg]], self.size[mg])
        return mg, lv, fits(lv, self.steps[mg])


class _PerOrdering(Measure):
    """G and ndcg_rel: the one ranking's value of every query in batches (`batch_values`), the
    queries that can vary exact (`exact`, over the lattices of their tie groups), the few left
    enumerated or sampled per ordering ([`per_ordering_stats`][tierank.measures.trec_gain.per_ordering_stats],
    `ordering_values`)."""

    cutoff_allowed = False
    bounds_refusal: ClassVar[str | None] = _REFUSAL
    schema = (GAINS,)
    #: a sampled query's min and max are the extremes of the orderings drawn (inner bounds)
    sampled_extremes: ClassVar[bool] = True

    def ordering_values(
        self, prep: Prepared, q: int, A: np.ndarray
    ) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def batch_values(
        self, prep: Prepared, qs: np.ndarray, A: np.ndarray, width: np.ndarray
    ) -> np.ndarray:  # pragma: no cover
        """The value of one ranking per query of ``qs`` (rows of ``A``, zero past ``width``): the
        oblivious values, and ndcg_rel's extreme arrangements."""
        raise NotImplementedError

    def stats(self, prep: Prepared) -> Stats:
        gm = self.param("gains")
        values = doc_gains(prep, gm)
        nq = prep.nq
        obl = one_ranking(
            prep, values, np.arange(nq), lambda qs, A, w: self.batch_values(prep, qs, A, w)
        )
        mixed = prep.cached(("trec-mixed", gm), lambda: mixed_groups(prep, values))
        vary = (np.bincount(prep.gq[mixed], minlength=nq) > 0) & self.defined(prep)
        out = Stats(obl, obl.copy(), obl.copy(), obl.copy(), np.zeros(nq))
        qs = np.flatnonzero(vary)
        if not len(qs):
            return out
        rows = _Rows(prep, values, vary, mixed, gm)
        fallback = self.exact(prep, rows, out)
        if not fallback.any():
            return out
        return per_ordering_stats(
            prep,
            values,
            lambda q, A: self.ordering_values(prep, q, A),
            queries=np.flatnonzero(fallback),
            base=out,
        )

    def defined(self, prep: Prepared) -> np.ndarray:  # pragma: no cover
        """Per query, whether its value can be other than 0 (a positive ideal gain)."""
        raise NotImplementedError

    def exact(self, prep: Prepared, rows: _Rows, out: Stats) -> np.ndarray:  # pragma: no cover
        """Fill ``out``'s expected, min, max and var of ``rows``' queries in place and return the
        queries (bool per query) left to `per_ordering_stats`."""
        raise NotImplementedError

    def validate(self, text: str) -> None:
        _check_gains(self)


def P_max(prep: Prepared, qs: np.ndarray, gains=None) -> int:
    """The largest number of positive judged gains among the queries ``qs``."""
    start = np.asarray(ideal_gains(prep, gains)[1])
    return int((start[qs + 1] - start[qs]).max()) if len(qs) else 0


def _ideal_rows(
    prep: Prepared, qs: np.ndarray, n: int, gain_map=None
) -> tuple[np.ndarray, np.ndarray]:
    """The ideal gains of the queries ``qs`` as rows of width ``n`` (zero-padded, cut at n) and their counts."""
    gains, start = ideal_gains(prep, gain_map)
    gains = np.asarray(gains, dtype=np.float64)
    P = (np.asarray(start)[qs + 1] - np.asarray(start)[qs]).astype(np.int64)
    col = np.arange(n)
    inside = col[None, :] < P[:, None]
    at = np.minimum(np.asarray(start)[qs][:, None] + col[None, :], max(len(gains) - 1, 0))
    rows = np.where(inside, gains[at], 0.0) if len(gains) else np.zeros((len(qs), n))
    return rows, P


@register
class G(_PerOrdering):
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
    names = FamilyNames(trec_eval="G", ir_measures=None)
    description = (
        "trec_eval's normalized gain G: sum of gain / log2(2 + ideal cost - gain so far) over the "
        "ideal gain (experimental; exact over tie orderings, sampled only past the lattice limit)"
    )

    def ordering_values(self, prep: Prepared, q: int, A: np.ndarray) -> np.ndarray:
        ideal = _ideal(prep, q, self.param("gains"))
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

    def exact(self, prep: Prepared, r: _Rows, out: Stats) -> np.ndarray:
        """Tie groups are independent (the gain above a group is the same in every ordering): the
        query's value is the sum of its fixed rows' terms and of each mixed group's path sum over
        its lattice, whose moments and extremes are exact."""
        nq = prep.nq
        total = r.ideal_total(r.ig)
        cost = r.ideal_prefix(np.maximum(r.ig, 1.0)) + np.maximum(r.pos + 1 - r.P[r.q], 0)
        got = r.prefix(r.y)
        in_mixed = r.mixed[r.group_of_row]
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where((r.y != 0) & ~in_mixed, r.y / np.log2(2.0 + cost - got), 0.0)
        fixed = np.bincount(r.q, weights=term, minlength=nq)
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

        _settle(
            out,
            qs,
            (fixed[qs] + per_query(mean)) / total[qs],
            (fixed[qs] + per_query(lo)) / total[qs],
            (fixed[qs] + per_query(hi)) / total[qs],
            per_query(var) / (total[qs] * total[qs]),
            per_query(hi - lo) > 0.0,
        )
        return fallback

    def batch_values(
        self, prep: Prepared, qs: np.ndarray, A: np.ndarray, width: np.ndarray
    ) -> np.ndarray:
        gm = self.param("gains")
        full, P = _ideal_rows(prep, qs, int(P_max(prep, qs, gm)), gm)
        total = (
            np.cumsum(full, axis=1)[:, -1] if full.shape[1] else np.zeros(len(qs))
        )  # in order, as per query
        n = A.shape[1]
        w = min(n, full.shape[1])
        cost = np.ones((len(qs), n))
        cost[:, :w] = np.maximum(full[:, :w], 1.0)
        np.cumsum(cost, axis=1, out=cost)
        got = np.cumsum(A, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(A != 0, A / np.log2(2.0 + cost - got), 0.0)
            out = (np.cumsum(terms, axis=1)[:, -1] if n else np.zeros(len(qs))) / total
        return np.where((total > 0.0) & (width > 0), out, 0.0)


@register
class nDCG_rel(_PerOrdering):
    """trec_eval's ndcg_rel (``m_ndcg_rel.c``, experimental): nDCG averaged over the relevant
    documents (positive gain), an unretrieved one counting the nDCG at the end of the list."""

    family = "nDCG_rel"
    pretty = "nDCG over relevant documents"
    definition = "nDCG averaged over the ranks of the relevant documents"
    citation = "trec_eval 10.0, m_ndcg_rel.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="ndcg_rel", ir_measures=None)
    description = (
        "trec_eval's ndcg_rel: nDCG at each relevant document, averaged over the relevant "
        "documents (experimental; exact over tie orderings, sampled only with negative gains or "
        "past the lattice limit)"
    )

    def ordering_values(self, prep: Prepared, q: int, A: np.ndarray) -> np.ndarray:
        ideal = _ideal(prep, q, self.param("gains"))
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

    def exact(self, prep: Prepared, r: _Rows, out: Stats) -> np.ndarray:
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
        batch = lambda qs_, A, w: self.batch_values(prep, qs_, A, w)  # noqa: E731
        hi = one_ranking(prep, r.arranged(prep, "optimistic"), qs, batch)
        lo = one_ranking(prep, r.arranged(prep, "pessimistic"), qs, batch)
        P = r.P[qs].astype(np.float64)
        if not prep.moments:  # the extremes alone
            nan = np.full(len(qs), np.nan)
            _settle(out, qs, nan, lo, hi, nan, lo < hi)
            return fallback
        mean_t, var_t = self._moments(r, mg, lv, ok & ~cut_through)
        _settle(out, qs, mean_t[qs] / P, lo, hi, np.maximum(var_t[qs], 0.0) / (P * P), lo < hi)
        return fallback

    @staticmethod
    def _moments(r: _Rows, mg, lv, exact) -> tuple[np.ndarray, np.ndarray]:
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

    def batch_values(
        self, prep: Prepared, qs: np.ndarray, A: np.ndarray, width: np.ndarray
    ) -> np.ndarray:
        Q, n = A.shape
        gm = self.param("gains")
        full, P = _ideal_rows(prep, qs, max(P_max(prep, qs, gm), 1), gm)
        with np.errstate(divide="ignore", invalid="ignore"):
            zc = np.cumsum(
                full / np.log2(np.arange(full.shape[1], dtype=np.float64) + 2.0)[None, :], axis=1
            )
            rows = np.arange(Q)[:, None]
            z = zc[rows, np.minimum(np.arange(n)[None, :], np.maximum(P - 1, 0)[:, None])]
            dcg = np.cumsum(
                np.where(A != 0, A / np.log2(np.arange(n, dtype=np.float64) + 2.0)[None, :], 0.0),
                axis=1,
            )
            pos = A > 0
            s = np.cumsum(np.where(pos, dcg / z, 0.0), axis=1)[:, -1] if n else np.zeros(Q)
            h = pos.sum(axis=1)
            end = dcg[rows[:, 0], np.maximum(width - 1, 0)] if n else np.zeros(Q)
            end = np.where(width > 0, end, 0.0)
            s = s + (P - h) * end / zc[rows[:, 0], np.maximum(P - 1, 0)]
            out = np.where(s > 0.0, s / P, 0.0)
        return np.where(P > 0, out, 0.0)


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
        before = np.arange(len(rows)) - np.searchsorted(
            q, q, side="left"
        )  # relevant above, same query
        t = (prep.pos[rows] - before).astype(np.float64)  # non-relevant above
        s = np.bincount(q, weights=1.0 / np.log2(2.0 + t), minlength=prep.nq)
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
    names = FamilyNames(trec_eval="Rndcg", ir_measures=None)
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
    bounds_refusal = _REFUSAL

    def validate(self, text: str) -> None:
        _check_gains(self)

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
        ideal, P = _ideal_rows(prep, qs, max(P_max(prep, qs, gm), 1), gm)
        n = qret[qs]
        Q, width = ideal.shape
        col = np.arange(width)
        zc = np.cumsum(ideal / np.log2(col.astype(np.float64) + 2.0)[None, :], axis=1)
        nxt = np.concatenate((ideal[:, 1:], np.zeros((Q, 1))), axis=1)
        is_k = (nxt != ideal) & (
            col[None, :] < P[:, None]
        )  # k = col + 1 in 1..P with I_k != I_{k-1}
        extra = (P + 1 < n) & (P > 0)  # the end of the list, at n
        kcount = is_k.sum(axis=1) + extra
        K = int(kcount.max()) if Q else 0
        if K == 0:
            return
        # checkpoints (k, 1 / z_k) of each query, left-aligned in rows of K
        slot = np.cumsum(is_k, axis=1) - 1
        ks = np.full((Q, K), np.iinfo(np.int64).max)
        inv = np.zeros((Q, K))
        rq, rc = np.nonzero(is_k)
        ks[rq, slot[rq, rc]] = rc + 1
        inv[rq, slot[rq, rc]] = 1.0 / zc[rq, rc]
        e = np.flatnonzero(extra)
        last = kcount[e] - 1
        ks[e, last] = n[e]
        inv[e, last] = 1.0 / zc[e, P[e] - 1]
        # suffix sums over the checkpoints, from the last one back (as a reversed cumsum per query)
        tail = np.zeros((Q, K + 1))
        for j in range(K - 1, -1, -1):
            tail[:, j] = np.where(j < kcount, tail[:, j + 1] + inv[:, j], 0.0)
        # every retrieved row of these queries: its rank i, the first checkpoint with k > i
        counts = np.where(kcount > 0, n, 0)
        rows_q = np.repeat(np.arange(Q), counts)
        first = np.repeat(prep.qstart[qs].astype(np.int64), counts)
        i = np.arange(len(rows_q)) - np.repeat(np.cumsum(counts) - counts, counts)
        at = (ks[rows_q] <= i[:, None]).sum(axis=1)
        w[first + i] = tail[rows_q, at] / np.log2(i.astype(np.float64) + 2.0) / kcount[rows_q]
