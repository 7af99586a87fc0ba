r"""Inferred AP, trec_eval's ``infAP`` (Yilmaz & Aslam, CIKM 2006), exactly as trec_eval 10 (``m_infap.c``).

Definition.  The retrieved documents (ranks read, ``-M``) fall into four classes: *relevant*
(grade >= rel), *judged non-relevant* (0 <= grade < rel), *pooled but unjudged* (in the qrels with a
negative grade: a ``-1`` grade marks a pooled document left out of the judged sample) and *not
pooled* (not in the qrels).  For the relevant document at 0-based rank `j`, with `a`
relevant, `s` judged non-relevant and `u` pooled-unjudged documents above it and
`\epsilon = 10^{-5}` (``INFAP_EPSILON``),

.. math:: T = \frac{1}{j+1} + \frac{j}{j+1} \cdot \frac{a + s + u}{j} \cdot
          \frac{a + \epsilon}{a + s + 2\epsilon} \quad (T = 1 \text{ at } j = 0),

and `infAP = \sum T / N_+`.  The values of single orderings are computed with trec_eval's
expression, summed in rank order, so they print trec_eval's digits.

Tie orderings.  A document's term depends only on the classes above it, so the groups of a query
contribute independently (the counts before a group do not depend on the orderings).

* **min, max: exact.**  Moving a judged non-relevant or not-pooled document above a relevant one of
  its group lowers that one's term and leaves the others unchanged (``j`` grows, the estimated
  precision does not), so the maximum puts both classes after every relevant document and the
  minimum before them all.  What is left, the interleaving of the `r` relevant and `u`
  pooled-unjudged documents of the group, is optimised exactly by dynamic programming over the
  grid of (relevant, unjudged) placed: `O(r (u + 1))` per group
  (`V_a = \mathrm{cummax}_k (V_{a-1} + T(a - 1, k))`).  A depth limit cutting the group
  counts the terms above it only, which the same arguments cover.
* **expected, std: exact.**  The groups' sums are independent, so their means and variances add up
  over groups.  A group's are computed by laying it out one position at a time, with the
  probability and the first two moments of the sum so far per state (how many relevant,
  judged non-relevant and pooled-unjudged documents are placed): ``group_moments``,
  `O(m (r + 1)(s + 1)(u + 1))` for `m` documents, `r` relevant, `s` judged non-relevant and
  `u` pooled-unjudged.
* Past that table (over ``MOMENT_CELLS`` cells: a tie group of thousands of documents of several
  classes) the expectation is still exact, from a closed form: by linearity it is a sum over the
  relevant documents; a relevant document's offset in its group is uniform and, given it and the
  number of judged documents above it (hypergeometric), its term is linear in the relevant and the
  pooled-unjudged counts above it, whose conditional means are known (``expected_sums``,
  `O(m (r + s))`).  The variance of such a group is enumerated where it has at most
  ``tierank.measures.sampling.ENUMERATE`` distinct orderings of its classes, else estimated from
  ``prep.samples`` uniform orderings (``ddof=1``; rows shuffled in place, from a generator keyed by
  the seed, the query and the group's rank,
  [`tierank.measures.sampling.query_keys`][tierank.measures.sampling.query_keys]) and the query
  labelled sampled, with standard error 0 (its expectation is exact).  Only a group past the
  closed form's table too (over ``EXACT_CELLS`` cells) has its mean drawn as well, with a standard
  error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Stats, register
from .bpref import Bpref
from .counts import row_cumsum
from .kernels import ratio
from .linear import REL
from .sampling import class_arrangements, enumerable, labelled, query_keys, shuffled_rows

__all__ = [
    "EXACT_CELLS",
    "INFAP_EPSILON",
    "InfAP",
    "MOMENT_CELLS",
    "expected_sums",
    "group_moments",
    "terms",
]

#: trec_eval.h ``INFAP_EPSILON``
INFAP_EPSILON = 0.00001

# document classes
_REL, _NON, _UNJ, _OUT = 0, 1, 2, 3


def terms(j, a, s, u) -> np.ndarray:
    """trec_eval's term of a relevant document at 0-based rank ``j`` with ``a`` relevant, ``s`` judged
    non-relevant and ``u`` pooled-unjudged documents above it (m_infap.c, in the same operations).

    >>> terms(np.array([0, 1, 2]), np.array([0, 1, 0]), np.array([0, 0, 1]), np.array([0, 0, 1])).round(6).tolist()
    [1.0, 0.999995, 0.33334]
    """
    j, a, s, u = (np.asarray(x, dtype=np.float64) for x in (j, a, s, u))
    fj = np.where(j == 0, 1.0, j)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((a + s + u) / fj) * (
            (a + INFAP_EPSILON) / (a + s + 2 * INFAP_EPSILON)
        )
    return np.where(j == 0, 1.0, t)


#: largest table (documents x judged documents) of a tie group whose expectation is summed exactly;
#: a larger group is sampled
EXACT_CELLS = 1 << 24


def expected_sums(P0, A, Sb, U, r, s, u, o, cut=np.inf) -> np.ndarray:
    r"""Exact expectation over the uniform orderings of tie groups of the sum of their relevant
    documents' terms (``terms``), vectorized over groups.

    Group ``g`` starts at 0-based rank ``P0[g]`` below ``A``, ``Sb``, ``U`` relevant, judged
    non-relevant and pooled-unjudged documents, and holds ``r``, ``s``, ``u``, ``o`` relevant, judged
    non-relevant, pooled-unjudged and not-pooled documents; only ranks below ``cut`` count.

    By linearity the sum's expectation is ``r`` times one relevant document's.  Its offset `k` in
    the group is uniform on `0..m-1`; given `k`, the `k` documents above it are a uniform
    `k`-subset of the `m - 1` others, of which `x` are judged (relevant or non-relevant,
    hypergeometric: `K = r - 1 + s` judged among `m - 1`).  Given `x`, the relevant ones among
    them and the pooled-unjudged ones among the `k - x` others are independent hypergeometric
    counts, with means `x (r-1)/K` and `(k - x) u/(u + o)`, and the term

    .. math:: T = \frac{1}{j+1}\left(1 + (J + U')\,\frac{a + \epsilon}{J + 2\epsilon}\right),
              \quad J = A + S_b + x,\ a = A + x_r,\ U' = U + x_u,

    is linear in each of them given `x` (`J` fixed): so `E[T \mid k, x]` is `T` at their means,
    and `E[T] = \frac{1}{m} \sum_k \sum_x P(x \mid k)\, E[T \mid k, x]`.  The hypergeometric
    probabilities of every `(k, x)` come from the recurrence in `k` (one vectorized step per
    offset over groups of similar size): `O(m (K + 1))` per group.

    One relevant and one judged non-relevant document tied at the top: the relevant one first (term
    1) or second (term 1/2 + 1/2 ε/(1 + 2ε)), each with probability 1/2:

    >>> expected_sums([0], [0], [0], [0], [1], [1], [0], [0]).round(9).tolist()
    [0.7500025]
    """
    P0, A, Sb, U, r, s, u, o = (np.asarray(x, dtype=np.int64) for x in (P0, A, Sb, U, r, s, u, o))
    out = np.zeros(len(P0))
    m = r + s + u + o
    go = np.flatnonzero((r > 0) & (P0 < cut))
    if not len(go):
        return out
    bucket = np.array([int(v).bit_length() for v in m[go]])
    for b in np.unique(bucket):
        g = go[bucket == b]
        out[g] = _expected_bucket(P0[g], A[g], Sb[g], U[g], r[g], s[g], u[g], o[g], cut)
    return out


def _expected_bucket(P0, A, Sb, U, r, s, u, o, cut) -> np.ndarray:
    """``expected_sums`` of groups of similar size: the hypergeometric law of the judged documents
    above one relevant document, offset by offset, for all groups at once (rows: groups, columns:
    judged documents above)."""
    m = r + s + u + o
    N = m - 1  # the other documents of the group
    K = r - 1 + s  # judged among them
    F = u + o
    W = int(K.max()) + 1
    x = np.arange(W, dtype=np.float64)[None, :]
    kf, Ff = K.astype(np.float64)[:, None], F.astype(np.float64)[:, None]
    rel_share = np.where(K > 0, (r - 1) / np.maximum(K, 1), 0.0)[:, None]
    unj_share = np.where(F > 0, u / np.maximum(F, 1), 0.0)[:, None]
    Af, Jb, Uf = A[:, None].astype(np.float64), (A + Sb)[:, None].astype(np.float64), U[:, None]
    P = np.zeros((len(m), W))
    P[:, 0] = 1.0
    total = np.zeros(len(m))
    stop = np.minimum(m, np.maximum(np.minimum(cut, P0 + m) - P0, 0)).astype(np.int64)
    for k in range(int(stop.max())):
        live = k < stop
        J = Jb + x
        a = Af + x * rel_share
        Ut = Uf + (k - x) * unj_share
        j1 = (P0 + k + 1.0)[:, None]
        T = (1.0 + (J + Ut) * (a + INFAP_EPSILON) / (J + 2 * INFAP_EPSILON)) / j1
        total += np.where(live, np.einsum("gx,gx->g", P, T), 0.0)
        # draw the (k + 1)-th document above: judged with probability (K - x) / (N - k)
        left = np.maximum(N - k, 1).astype(np.float64)[:, None]
        nxt = P * np.maximum(Ff - (k - x), 0.0) / left
        nxt[:, 1:] += P[:, :-1] * np.maximum(kf - x[:, :-1], 0.0) / left
        P = nxt
    return total * r / m


#: largest state table (documents x (relevant + 1) x (judged non-relevant + 1) x (pooled-unjudged + 1))
#: of a tie group whose variance is computed exactly (``group_moments``); a larger group is sampled
MOMENT_CELLS = 1 << 22

#: elements of one state array of a batch of groups in ``group_moments``
_BATCH = 1 << 15


def group_moments(P0, A, Sb, U, r, s, u, o, cut=np.inf) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact mean and variance over the uniform orderings of tie groups of the sum of their relevant
    documents' terms (``terms``), vectorized over groups (arguments as in ``expected_sums``).

    The group is laid out one position at a time: after `p` documents the state is how many
    relevant (`a`), judged non-relevant (`b`) and pooled-unjudged (`c`) documents were placed (the
    not-pooled ones are the rest, `p - a - b - c`), and the next document is of each class with
    probability its count left over the `m - p` left.  Per state the probability `w`, and `w`
    times the first and second moments of the sum so far, are carried forward (a relevant
    document placed adds its term `t`: `M_1 \mathrel{+}= w t`, `M_2 \mathrel{+}= 2 t M_1 + w t^2`).
    `O(m (r + 1)(s + 1)(u + 1))` per group; groups of similar shape are stepped together.

    >>> mean, var = group_moments([0], [0], [0], [0], [1], [1], [0], [0])
    >>> mean.round(9).tolist(), var.round(9).tolist()  # terms 1 or 0.5000025, each with probability 1/2
    ([0.7500025], [0.06249875])
    """
    P0, A, Sb, U, r, s, u, o = (np.asarray(x, dtype=np.int64) for x in (P0, A, Sb, U, r, s, u, o))
    mean, var = np.zeros(len(P0)), np.zeros(len(P0))
    m = r + s + u + o
    go = np.flatnonzero((r > 0) & (P0 < cut))
    if not len(go):
        return mean, var
    key = np.stack([r[go], u[go], *(np.frexp(x[go] + 1.0)[1] for x in (s, m))])
    _, shape = np.unique(key, axis=1, return_inverse=True)
    for k in np.unique(shape):
        g = go[shape.reshape(-1) == k]
        g = g[np.lexsort((m[g], s[g]))]  # chunks of similar shapes
        size = int((r[g].max() + 1) * (s[g].max() + 1) * (u[g].max() + 1))
        step = max(1, _BATCH // size)
        for lo in range(0, len(g), step):
            h = g[lo : lo + step]
            mean[h], var[h] = _moments_batch(P0[h], A[h], Sb[h], U[h], r[h], s[h], u[h], o[h], cut)
    return mean, var


def _moments_batch(P0, A, Sb, U, r, s, u, o, cut) -> tuple[np.ndarray, np.ndarray]:
    """``group_moments`` of groups stepped together: the probability and the two moments in one array
    ``X[k, a, b, c, group]``, padded to the largest counts (a padded state is never reached: its
    probabilities are 0).  Each step reads and writes only the box of relevant and judged
    non-relevant counts reachable after `p` documents (at most `p` of each, and at least what the
    not-pooled documents leave); every state outside it holds exact zeros."""
    G = len(P0)
    R1, S1, U1 = int(r.max()) + 1, int(s.max()) + 1, int(u.max()) + 1
    m = r + s + u + o
    a = np.arange(R1, dtype=np.float64)[:, None, None, None]
    b = np.arange(S1, dtype=np.float64)[None, :, None, None]
    c = np.arange(U1, dtype=np.float64)[None, None, :, None]

    def row(x):
        return np.asarray(x, dtype=np.float64)[None, None, None, :]

    left_r = np.maximum(row(r) - a, 0.0)
    left_s = np.maximum(row(s) - b, 0.0)
    left_u = np.maximum(row(u) - c, 0.0)
    placed = a + b + c
    # a relevant document placed in state (a, b, c) at 0-based rank j adds (1 + gain) / (j + 1)
    rel_above = row(A) + a
    judged = rel_above + row(Sb) + b
    gain = 1.0 + (judged + row(U) + c) * (rel_above + INFAP_EPSILON) / (judged + 2 * INFAP_EPSILON)
    X = np.zeros((3, R1, S1, U1, G))
    X[0, 0, 0, 0, :] = 1.0
    N = np.zeros_like(X)
    stop = np.minimum(m, np.maximum(np.minimum(cut, P0 + m) - P0, 0)).astype(np.int64)
    of, mf = row(o), row(m)
    rank = 1.0 / (P0[None, :] + np.arange(int(stop.max()))[:, None] + 1.0)
    rank = np.where(np.arange(len(rank))[:, None] < stop[None, :], rank, 0.0)
    m_min = int(m.min())
    box_x, box_n = (0, 1, 0, 1), (0, 0, 0, 0)  # where X and N may hold nonzeros (a from, to, b ...)
    for p in range(int(stop.max())):
        # reachable after p documents: a <= p, b <= p, and at least min(p, m) - o pooled ones
        least = int((np.minimum(p, m) - o).min())
        a0, a1 = max(0, least - (S1 - 1) - (U1 - 1)), min(p, R1 - 1) + 1
        b0, b1 = max(0, least - (R1 - 1) - (U1 - 1)), min(p, S1 - 1) + 1
        a2, b2 = min(a1 + 1, R1), min(b1 + 1, S1)  # the box after one more document
        Xw = X[:, a0:a1, b0:b1]
        inv_n = 1.0 / np.maximum(mf - p, 1.0)
        t = gain[a0:a1, b0:b1] * row(rank[p])
        Rl = Xw * (left_r[a0:a1] * inv_n)  # a relevant document next
        tw = t * Rl[0]
        Rl[2] += t * (2.0 * Rl[1] + tw)
        Rl[1] += tw
        # a not-pooled document next (the state stays), or nothing where the group is all placed;
        # N past its last box is all zeros, so only its part below the new box is cleared
        N[:, box_n[0] : a0, box_n[2] : box_n[3]] = 0.0
        N[:, box_n[0] : box_n[1], box_n[2] : b0] = 0.0
        Nw = N[:, a0:a2, b0:b2]
        stay = np.maximum(of - (p - placed[a0:a1, b0:b1]), 0.0) * inv_n
        if p >= m_min:
            stay = np.where(mf > p, stay, 1.0)
        np.multiply(Xw, stay, out=Nw[:, : a1 - a0, : b1 - b0])
        Nw[:, 1:, : b1 - b0] += Rl[:, : a2 - a0 - 1]
        bs = b2 - b0 - 1  # the judged non-relevant counts that can grow
        Nw[:, : a1 - a0, 1:] += Xw[:, :, :bs] * (left_s[:, b0 : b0 + bs] * inv_n)
        Nw[:, : a1 - a0, : b1 - b0, 1:] += Xw[:, :, :, :-1] * (left_u[:, :, :-1] * inv_n)
        X, N, box_x, box_n = N, X, (a0, a2, b0, b2), box_x
    # per group, summed in the order of its states (a, b, c)
    e1, e2 = (np.ascontiguousarray(X[k].reshape(-1, G).T).sum(axis=1) for k in (1, 2))
    return e1, np.maximum(e2 - e1 * e1, 0.0)


@dataclass(frozen=True)
class _Groups:
    """The tie groups infAP reads (those holding a relevant document inside the cutoff), one entry
    each: query, first rank, relevant / judged non-relevant / pooled-unjudged documents before it in
    its query, its relevant / judged non-relevant / pooled-unjudged / other documents, its policy
    terms and its smallest / largest ones, and the groups whose orderings can differ."""

    gq: np.ndarray
    pos0: np.ndarray
    rel_before: np.ndarray
    non_before: np.ndarray
    unj_before: np.ndarray
    r: np.ndarray
    s: np.ndarray
    u: np.ndarray
    o: np.ndarray
    obl: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    vary: np.ndarray


@register
class InfAP(Measure):
    """Inferred AP (trec_eval infAP): AP estimated from a sample of the pool (-1 grades: unsampled)."""

    family = "infAP"
    pretty = "inferred average precision"
    definition = (
        "AP estimated from a random sample of the judgment pool (grade -1: pooled but not sampled)"
    )
    citation = "Yilmaz, E. and Aslam, J. A. (2006). Estimating average precision with incomplete and imperfect judgments. CIKM 2006."
    names = FamilyNames(trec_eval="infAP")
    description = (
        "inferred AP (trec_eval infAP, Yilmaz & Aslam 2006): precision above each relevant document "
        "estimated from the judged sample, pooled documents graded -1 unsampled, unpooled ones "
        "non-relevant; exact (std sampled only for tie groups of thousands of documents)"
    )
    schema = (REL,)
    cutoff_allowed = False
    #: the expectation is exact (closed form) even where the std is sampled
    expectation_exact: ClassVar[bool] = True
    bounds_refusal = "infAP estimates the unjudged documents from the judged sample by definition"

    def _counts(self, prep: Prepared):
        """Cumulative counts per row of the relevant, judged non-relevant and pooled-unjudged documents
        (shared with bpref, whose classes the first two are), and N+ per query."""
        rel = prep.rel if self.rel is None else self.rel
        bp = Bpref(params=(("rel", rel),))
        c_rel, c_non = bp._counts(prep)
        c_unj = row_cumsum(prep, ("pooled-unjudged",), lambda: prep.grade < 0)  # (NaN: False)
        return (c_rel, c_non, c_unj), bp._classes(prep)[2]

    def stats(self, prep: Prepared) -> Stats:
        counts, R = self._counts(prep)
        cut = prep.cut(float("inf"))
        obl, rel_rows, t = self._oblivious(prep, counts, R, cut)
        g = self._read_groups(prep, counts, rel_rows, t, cut)
        if not prep.moments:  # the oblivious value and the extremes only
            nan = np.full(prep.nq, np.nan)
            lo = ratio(np.bincount(g.gq, weights=g.lo, minlength=prep.nq), R)
            hi = ratio(np.bincount(g.gq, weights=g.hi, minlength=prep.nq), R)
            return Stats(obl, nan, lo, hi, nan.copy())
        e_g, v_g, drawn, exact_mean = self._group_moments(prep, g, cut)
        gq = g.gq
        per_q = [np.bincount(gq, weights=x, minlength=prep.nq) for x in (g.lo, g.hi, e_g, v_g)]
        lo, hi = ratio(per_q[0], R), ratio(per_q[1], R)
        if not (lo < hi).any():
            return Stats(obl, obl.copy(), lo, hi, np.zeros(prep.nq))
        expected = np.clip(ratio(per_q[2], R), lo, hi)
        var = np.where(lo < hi, ratio(per_q[3], R * R), 0.0)
        sampled = np.bincount(gq, weights=drawn, minlength=prep.nq) > 0
        if not sampled.any():
            return Stats(obl, expected, lo, hi, var)
        # only the means of the groups drawn and not summed carry a sampling error
        v_drawn = ratio(
            np.bincount(gq, weights=np.where(drawn & ~exact_mean, v_g, 0.0), minlength=prep.nq),
            R * R,
        )
        se = np.where(sampled, np.sqrt(v_drawn / int(prep.samples)), 0.0)
        return labelled(obl, expected, lo, hi, var, sampled, prep, se=se)

    @staticmethod
    def _oblivious(prep: Prepared, counts, R: np.ndarray, cut: float):
        """The policy's value per query, with the relevant rows read (ascending) and their terms."""
        c_rel, c_non, c_unj = counts
        rel_rows = np.flatnonzero(np.diff(c_rel))  # the relevant rows, ascending
        if np.isfinite(cut):
            rel_rows = rel_rows[prep.pos[rel_rows] < cut]
        qr = prep.qi[rel_rows]
        first = prep.qstart[qr]
        above = [c[rel_rows] - c[first] for c in (c_rel, c_non, c_unj)]
        t = terms(prep.pos[rel_rows], *above)
        return ratio(np.bincount(qr, weights=t, minlength=prep.nq), R), rel_rows, t

    def _read_groups(
        self, prep: Prepared, counts, rel_rows: np.ndarray, t: np.ndarray, cut: float
    ) -> _Groups:
        """The tie groups holding a relevant document read: their composition, the counts before
        them, their policy terms and their extremal ones (the other groups add exact zeros to every
        per-query sum, which keep their order, so they are left out)."""
        c_rel, c_non, c_unj = counts
        gs, qs = prep.gstart, prep.qstart
        G = np.flatnonzero(np.diff(c_rel[gs]) > 0)
        if np.isfinite(cut):
            G = G[prep.gpos0[G] < cut]
        ng = len(G)
        gq = prep.gq[G]
        m = prep.gsize[G].astype(np.int64)
        ga, gb, qa = gs[G], gs[G + 1], qs[gq]  # each group's first row, its end, its query's first
        at_group = [c[ga] for c in counts]
        r, s, u = (c[gb] - ca for c, ca in zip(counts, at_group))
        o = m - r - s - u
        before = [ca - c[qa] for c, ca in zip(counts, at_group)]
        g_obl = np.bincount(np.searchsorted(G, prep.gid[rel_rows]), weights=t, minlength=ng).astype(
            np.float64, copy=False
        )  # (float even where no row is summed)
        pos0 = prep.gpos0[G]
        vary = np.flatnonzero(r < m)
        lo_g, hi_g = g_obl.copy(), g_obl.copy()
        bv = [x[vary] for x in (pos0, before[0], before[1], before[2], r, s, u, o)]
        hi_g[vary] = self._best(bv[0], bv[1], bv[2], bv[3], bv[4], bv[6], cut, np.maximum)
        lo_g[vary] = self._best(
            bv[0] + bv[5] + bv[7], bv[1], bv[2] + bv[5], bv[3], bv[4], bv[6], cut, np.minimum
        )
        return _Groups(
            gq, pos0, before[0], before[1], before[2], r, s, u, o, g_obl, lo_g, hi_g, vary
        )

    def _group_moments(self, prep: Prepared, g: _Groups, cut: float):
        """Per group read, the mean and variance of its terms over its orderings: exact from the
        state table where it fits (``group_moments``), the exact mean alone for larger ones
        (``expected_sums``), enumerated for few orderings, else sampled.  Also which groups were
        drawn, and which have an exact mean."""
        r, s, u, o, vary = g.r, g.s, g.u, g.o, g.vary
        P0_, A_, Sb_, U_ = g.pos0, g.rel_before, g.non_before, g.unj_before
        e_g, v_g = g.obl.copy(), np.zeros(len(g.obl))
        m_v = r[vary] + s[vary] + u[vary] + o[vary]
        exact_var = np.zeros(len(g.obl), dtype=bool)
        exact_var[vary[m_v * (r[vary] + 1) * (s[vary] + 1) * (u[vary] + 1) <= MOMENT_CELLS]] = True
        mo = np.flatnonzero(exact_var)
        e_g[mo], v_g[mo] = group_moments(
            P0_[mo], A_[mo], Sb_[mo], U_[mo], r[mo], s[mo], u[mo], o[mo], cut
        )
        exact_mean = exact_var.copy()
        exact_mean[vary[m_v * (r[vary] + s[vary]) <= EXACT_CELLS]] = True
        ex = np.flatnonzero(exact_mean & ~exact_var)
        e_g[ex] = expected_sums(P0_[ex], A_[ex], Sb_[ex], U_[ex], r[ex], s[ex], u[ex], o[ex], cut)
        drawn = np.zeros(len(g.obl), dtype=bool)  # groups whose variance is estimated from samples
        qkeys = None
        S = int(prep.samples)
        lo_g, hi_g = g.lo, g.hi
        fixed = vary[lo_g[vary] == hi_g[vary]]  # no ordering changes them: their one value, exactly
        e_g[fixed], v_g[fixed] = lo_g[fixed], 0.0
        for gi in vary[(lo_g[vary] < hi_g[vary]) & ~exact_var[vary]]:
            P0, A, Sb, U = int(P0_[gi]), int(A_[gi]), int(Sb_[gi]), int(U_[gi])
            counts = (int(r[gi]), int(s[gi]), int(u[gi]), int(o[gi]))
            if enumerable(counts):  # every distinct ordering once: exact
                mean, v_g[gi] = self._enumerate(P0, A, Sb, U, counts, cut)
                if not exact_mean[gi]:  # pragma: no cover - an enumerable group is small
                    e_g[gi] = mean
                continue
            if qkeys is None:
                qkeys = query_keys(prep)
            rng = np.random.default_rng([int(qkeys[g.gq[gi]]), P0])
            mean, v_g[gi] = self._sample(rng, S, P0, A, Sb, U, counts, cut)
            if not exact_mean[gi]:
                e_g[gi] = mean
            drawn[gi] = True
        return e_g, v_g, drawn, exact_mean

    @staticmethod
    def _best(P0, A, Sb, U, r, u, cut, acc) -> np.ndarray:
        """Per group, the best (``acc``: `np.maximum`, largest; `np.minimum`, smallest) sum of the
        terms of ``r`` relevant documents interleaved with ``u`` pooled-unjudged ones from rank ``P0``
        on, with ``A``, ``Sb``, ``U`` relevant, judged non-relevant and unjudged documents above them
        (arrays, one entry per group): ``V_a = acc.accumulate_k(V_{a-1} + T(a - 1, k))``, the groups
        of similar sizes stepped together (a column past a group's ``u`` never reaches its ``V[u]``)."""
        P0, A, Sb, U, r, u = (np.asarray(x, dtype=np.int64) for x in (P0, A, Sb, U, r, u))
        out = np.zeros(len(P0))
        # the groups of equal (bit length of r + 1, of u + 1), as one integer key (exponents < 2^10)
        key = (np.frexp(r + 1.0)[1].astype(np.int64) << 10) + np.frexp(u + 1.0)[1]
        order = np.argsort(key, kind="stable")
        bounds = np.flatnonzero(np.diff(key[order])) + 1
        for g in np.split(order, bounds) if len(order) else ():
            W = int(u[g].max()) + 1
            for lo in range(0, len(g), max(1, _BATCH // W)):
                h = g[lo : lo + max(1, _BATCH // W)]
                k = np.arange(W)[None, :]
                V = np.zeros((len(h), W))
                for a in range(int(r[h].max())):
                    j = P0[h, None] + a + k
                    t = terms(j, A[h, None] + a, Sb[h, None] + 0 * k, U[h, None] + k)
                    t = np.where((j < cut) & (a < r[h, None]), t, 0.0)
                    V = acc.accumulate(V + t, axis=1)
                out[h] = V[np.arange(len(h)), u[h]]
        return out

    @staticmethod
    def _packing(comp) -> tuple[int, np.ndarray] | None:
        """Bits per class and the packed code of each class (a relevant document 1, a judged
        non-relevant one ``2^bits``, a pooled-unjudged one ``2^(2 bits)``, a not-pooled one 0): one
        running sum counts the three classes.  None for a group too large to pack (over 2^21
        documents)."""
        bits = max(21, int(sum(comp)).bit_length())
        if 3 * bits > 63:  # pragma: no cover - a tie group of over 2^21 documents: counted apart
            return None
        return bits, np.array([1, 1 << bits, 1 << (2 * bits), 0], dtype=np.int64)

    @staticmethod
    def _sums(seq, bits, P0, A, Sb, U) -> np.ndarray:
        """The group's sum of terms in each row of ``seq`` (orderings x positions read, packed codes)."""
        mask = (1 << bits) - 1
        c = np.cumsum(seq, axis=1)
        row, col = np.nonzero(seq == 1)
        cc = c[row, col]
        t = terms(P0 + col, A + (cc & mask) - 1, Sb + ((cc >> bits) & mask), U + (cc >> (2 * bits)))
        return np.bincount(row, weights=t, minlength=len(seq))

    @staticmethod
    def _enumerate(P0, A, Sb, U, comp, cut) -> tuple[float, float]:
        """Exact mean and variance (``ddof=0``) of a group's sum of terms over its distinct orderings
        (at most `ENUMERATE`, each as likely as any other)."""
        m = int(sum(comp))
        read = min(m, max(0, int(min(cut, P0 + m)) - P0))
        packing = InfAP._packing(comp)
        assert packing is not None  # at most ENUMERATE orderings: a small group
        bits, one = packing
        seq = one[class_arrangements(comp)[:, :read]]
        total = InfAP._sums(seq, bits, P0, A, Sb, U)
        return float(total.mean()), float(total.var())

    @staticmethod
    def _sample(rng, S, P0, A, Sb, U, comp, cut) -> tuple[float, float]:
        """Mean and variance (ddof=1) of a group's sum of terms over ``S`` uniform orderings."""
        packing = InfAP._packing(comp)
        if packing is None:  # pragma: no cover - a tie group of over 2^21 documents
            return InfAP._sample_wide(rng, S, P0, A, Sb, U, comp, cut)
        bits, one = packing
        codes = np.repeat(one, comp)
        m = len(codes)
        total = np.zeros(S)
        read = min(
            m, max(0, int(min(cut, P0 + m)) - P0)
        )  # positions of the group above the depth limit
        for lo, seq in shuffled_rows(rng, codes.astype(np.int64), S):
            total[lo : lo + len(seq)] = InfAP._sums(seq[:, :read], bits, P0, A, Sb, U)
        return float(total.mean()), float(total.var(ddof=1)) if S > 1 else 0.0

    @staticmethod
    def _sample_wide(rng, S, P0, A, Sb, U, comp, cut) -> tuple[float, float]:  # pragma: no cover
        """`_sample` for a group too large to pack its counts: one running sum per class."""
        classes = np.repeat(np.arange(4), comp)
        m = len(classes)
        total = np.zeros(S)
        for lo in range(S):
            seq = rng.permutation(classes)
            cnt = [np.cumsum(seq == c) for c in (_REL, _NON, _UNJ)]
            col = np.flatnonzero((seq == _REL) & (P0 + np.arange(m) < cut))
            total[lo] = terms(
                P0 + col, A + cnt[0][col] - 1, Sb + cnt[1][col], U + cnt[2][col]
            ).sum()
        return float(total.mean()), float(total.var(ddof=1)) if S > 1 else 0.0
