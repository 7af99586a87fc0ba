"""Tie-aware similarity of two runs: rank-biased overlap, Kendall's tau-b, tau-AP and the overlap at k.

How far is one ranking from another ("how much did BF16 change my ranking?"), per query and averaged
over the queries both runs answer:

* **RBO** (Webber, Moffat and Zobel, "A similarity measure for indefinite rankings", TOIS 2010) with
  persistence ``p``, evaluated on the prefixes to ``depth`` (default: the whole runs): the
  extrapolated ``RBO_ext`` and the bounds ``RBO_min``, ``RBO_max`` and the residual
  ``RBO_res = RBO_max - RBO_min`` (with the uneven-length forms when one run is shorter: their eq. 32 for
  RBO_ext), on the tie-oblivious rankings (ties broken as trec_eval: docno descending);
* the three tie-aware variants of Corsi and Urbano ("The Treatment of Ties in Rank-Biased Overlap",
  SIGIR 2024): ``w`` (ties are equality: a whole tie group is seen as soon as its first rank is),
  ``a`` (ties are uncertainty: each tied item counts with its probability of being in the prefix) and
  ``b`` (as ``a``, normalised as tau-b is, by the prefixes' norms), each with ext/min/max/res;
* the **expected value, minimum and maximum of RBO_ext over all orderings of the tie groups of both
  runs**, exact: RBO_ext is a linear function with non-negative coefficients of the overlaps
  ``X_d = |A[:d] & B[:d]|``, so its expectation is RBO_ext of the expected overlaps (each shared item
  counts ``P(in A[:d]) * P(in B[:d])``, the two runs' orders being independent), and one pair of
  orderings maximises every ``X_d`` at once (inside every tie group of one run, the items the other
  run ranks first come first, equal ones in one common order), and one minimises every ``X_d`` (the
  items the other run ranks last come first, equal ones in opposite orders);
* **Kendall's tau-b** on the documents both runs retrieved, by their scores (ties in either run are
  ties, as tau-b treats them: the same value as ``scipy.stats.kendalltau``);
* **tau-AP** (Yilmaz, Aslam and Robertson, SIGIR 2008) on the documents both runs retrieved, RUN_A
  being the reference ranking and RUN_B the one compared to it, on the tie-oblivious orders, and its
  **expected value over the tie orderings of both runs**, exact (each pair's contribution is linear in
  the probability that the reference ranks it concordantly, and a tied item's position is uniform in its
  group: [`tau_ap_orderings`][tierank.analysis.similarity.tau_ap_orderings]), with its minimum and maximum, exact by enumeration up to
  `TAU_AP_ENUMERATION` orderings of a query, past it the extremes of sampled orderings
  (labelled: ``settings["tau_ap_extremes"]``);
* the **overlap at k**, ``|A[:k] & B[:k]| / k``: oblivious, expected, minimum and maximum over the
  tie orderings (exact, by the same two arguments).

Queries that only one run answers are left out of the per-query values and of the means, and listed
(`Similarity.only_a`, `Similarity.only_b`).

Examples
--------
Rankings as lists whose sets are tie groups (Corsi and Urbano's notation):

>>> x = ["a", "b", "c", "d", "e"]
>>> y = ["b", "a", "c", "e", "d"]
>>> round(rbo(x, y, p=0.9)["ext"], 4)
0.8818
>>> r = rbo(["a", {"b", "c"}, "d"], ["c", "a", "b", "d"], p=0.9, ties="w")
>>> round(r["ext"], 4), round(r["res"], 4)
(0.882, 0.3936)
>>> o = rbo_orderings(["a", {"b", "c"}, "d"], ["c", "a", "b", "d"], p=0.9)
>>> round(o["expected"], 4), round(o["min"], 4), round(o["max"], 4)
(0.8775, 0.855, 0.9)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..errors import TierankInputError
from ..io.convert import to_run
from ..ties import layout

#: RBO's persistence when none is given (Webber et al.'s and Corsi and Urbano's usual choice)
DEFAULT_P = 0.9

#: Corsi and Urbano's tie treatments
VARIANTS = ("w", "a", "b")

#: the per-query fields of `similarity`, in output order
FIELDS = (
    "qid",
    "docs_a",
    "docs_b",
    "shared",
    "rbo",
    "rbo_min",
    "rbo_max",
    "rbo_res",
    "rbo_w",
    "rbo_a",
    "rbo_b",
    "rbo_expected",
    "rbo_lo",
    "rbo_hi",
    "tau_b",
    "tau_ap",
    "overlap",
    "overlap_expected",
    "overlap_lo",
    "overlap_hi",
    "tau_ap_expected",
    "tau_ap_lo",
    "tau_ap_hi",
)

#: the fields averaged over the shared queries (NaN values, e.g. tau-b on fewer than 2 shared documents,
#: are left out of a mean)
MEAN_FIELDS = FIELDS[4:]

_BLOCK = 1 << 22  # pairs per block in the O(n^2) pair counts


@dataclass(frozen=True)
class Ranking:
    """One ranking with ties: items in the tie-oblivious order, and the 0-based first (``top``) and last
    (``bottom``) position of each item's tie group (``top == bottom`` for an untied item)."""

    items: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    group: np.ndarray

    def __len__(self) -> int:
        return len(self.items)


def ranking_from_scores(
    items: np.ndarray, scores: np.ndarray, key: np.ndarray | None = None
) -> Ranking:
    """The [`Ranking`][tierank.analysis.similarity.Ranking] of ``items`` by ``scores`` descending; equal scores are tied, and ``key``
    (descending; default: the items themselves) orders a tie group in the oblivious order."""
    items = np.asarray(items)
    scores = np.asarray(scores, dtype=np.float64)
    key = items if key is None else np.asarray(key)
    if len(items) == 0:
        e = np.zeros(0, dtype=np.int64)
        return Ranking(items, e, e, e)
    o = np.lexsort((-_dense(key), -scores))
    s = scores[o]
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, len(s)))
    top = starts[group]
    return Ranking(items[o], top, top + sizes[group] - 1, group)


def _dense(key: np.ndarray) -> np.ndarray:
    """Integer ranks of ``key`` (ascending; equal keys equal), for any sortable dtype."""
    return np.unique(key, return_inverse=True)[1].reshape(-1)


def ranking_from_groups(groups: Sequence) -> Ranking:
    """A [`Ranking`][tierank.analysis.similarity.Ranking] from Corsi and Urbano's notation: a list of items, a set (or list/tuple) being a
    tie group, e.g. ``["red", {"blue", "green"}, "yellow"]``; inside a group the items are laid out sorted."""
    items: list = []
    top: list[int] = []
    bottom: list[int] = []
    group: list[int] = []
    for g, entry in enumerate(groups):
        members = sorted(entry) if isinstance(entry, (set, frozenset, list, tuple)) else [entry]
        if not members:
            raise TierankInputError(f"ranking: tie group {g + 1} is empty")
        start = len(items)
        for m in members:
            items.append(m)
            top.append(start)
            bottom.append(start + len(members) - 1)
            group.append(g)
    if len(set(items)) != len(items):
        raise TierankInputError("ranking: an item appears more than once")
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return Ranking(
        arr,
        np.array(top, dtype=np.int64),
        np.array(bottom, dtype=np.int64),
        np.array(group, dtype=np.int64),
    )


def _as_ranking(x) -> Ranking:
    return x if isinstance(x, Ranking) else ranking_from_groups(x)


def check_p(p: float) -> float:
    """``p`` as a float in (0, 1), else a [`TierankInputError`][tierank.errors.TierankInputError]."""
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise TierankInputError(f"RBO persistence p={p!r}: not a number") from None
    if not 0 < v < 1:
        raise TierankInputError(f"RBO persistence p={p!r}: must be strictly between 0 and 1")
    return v


def _nonempty(s: int) -> None:
    if s == 0:
        raise TierankInputError("RBO of an empty ranking: both rankings need at least one item")


def _check_depth(depth, what: str = "depth") -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise TierankInputError(f"{what}={depth!r}: must be a whole number >= 1")
    return int(depth)


# --- RBO from the overlaps (Webber et al., tie-free) ------------------------------------------------------


def rbo_from_overlaps(X: np.ndarray, s: int, p: float) -> dict[str, float]:
    """Webber et al.'s RBO_ext, RBO_min, RBO_max and RBO_res from the overlaps ``X[d-1] = |S[:d] & L[:d]|``,
    ``d = 1..l`` (``l = len(X)``), of a ranking S of length ``s`` and one L of length ``l >= s`` (for
    ``d > s``, ``X[d-1] = |S & L[:d]|``).  Linear in ``X`` with non-negative coefficients for ext and min,
    increasing in ``X`` for max, so it also takes expected (fractional) overlaps."""
    X = np.asarray(X, dtype=np.float64)
    l = len(X)
    if not 1 <= s <= l:
        raise ValueError(f"rbo_from_overlaps: need 1 <= s <= l, got s={s}, l={l}")
    d = np.arange(1, l + 1, dtype=np.float64)
    w = _weights(d, p)
    agree = X / d
    xs, xl = X[s - 1], X[l - 1]
    extra = np.where(d > s, d - s, 0.0)
    a_ext = (X + extra * xs / s) / d
    a_max = (X + extra) / d
    lo = math.fsum(agree * w) + xl * _tail_min(l, p)
    hi = math.fsum(a_max * w) + _tail_max(xl, s, l, p)
    ext = math.fsum(a_ext * w) + (xl + (l - s) * xs / s) / l * p**l
    return {"ext": float(ext), "min": float(lo), "max": float(hi), "res": float(hi - lo)}


# The sums below are RBO's ``(1 - p) / p * sum_d A_d p^d`` written as ``sum_d A_d (1 - p) p^(d - 1)``: no
# division by p (which lost every digit for a tiny p), and each tail summed where it is small rather than
# found as the difference of two large numbers.


def _weights(d: np.ndarray, p: float) -> np.ndarray:
    """RBO's weight of each depth ``d``: ``(1 - p) p^(d - 1)``."""
    return (1 - p) * p ** (d - 1)


def _tail_min(l: int, p: float) -> float:
    """``(1 - p) / p * sum_{d > l} p^d / d``: the weight RBO_min gives to an overlap that stays ``X_l``.

    For p up to 1/2 the series itself (its terms fall by a factor p at least: 60 terms reach 2^-60 of the
    first); above, ``-log(1 - p)`` less the first l terms, where the factor ``(1 - p) / p < 1`` does not
    magnify the rounding of the difference."""
    if p <= 0.5:
        k = np.arange(60, dtype=np.float64)
        return (1 - p) * p**l * math.fsum(p**k / (l + 1 + k))
    d = np.arange(1, l + 1, dtype=np.float64)
    return (1 - p) / p * max(0.0, -math.log1p(-p) - math.fsum(p**d / d))


def _tail_max(xl: float, s: int, l: int, p: float) -> float:
    """The depths beyond l in RBO_max: every unseen item matches as early as it can, so the overlap grows
    by 2 a depth until it reaches the depth, at ``f = l + s - X_l``."""
    if (
        abs(xl - round(xl)) < 1e-9
    ):  # an overlap summed in floating point: the number of depths is discrete
        xl = float(round(xl))
    f = l + s - xl
    d = np.arange(l + 1, f + 1, dtype=np.float64)  # the depths l < d <= f (f may be fractional)
    return math.fsum((2 * d - l - s + xl) / d * _weights(d, p)) + p**f


# --- Corsi and Urbano's tie-aware variants -----------------------------------------------------------------


def _pieces(r: Ranking, rows: np.ndarray, variant: str) -> tuple[np.ndarray, ...]:
    """The items' contributions to the prefix at column j (depth j + 1) as two linear pieces each,
    ``a + b * j`` on ``[lo, hi)``: ``w`` counts a tied item from its group's first rank on (a constant 1 from
    ``top``); ``a``/``b`` count it with its probability of being in the prefix, ``(j - top + 1) / size`` on
    the group's ranks, then 1.  Returns ``lo, hi, a, b`` of shape (2, n): the ramp, then the constant."""
    top = r.top[rows].astype(np.float64)
    size = (r.bottom[rows] - r.top[rows] + 1).astype(np.float64)
    ramp = size.copy() if variant != "w" else np.zeros_like(size)
    ramp[size == 1] = 0.0  # an untied item: its constant piece starts at its rank
    inf = np.full_like(top, np.inf)
    lo = np.stack([top, top + ramp])
    hi = np.stack([top + ramp, inf])
    a = np.stack([(1 - top) / size, np.ones_like(top)])
    b = np.stack([1 / size, np.zeros_like(top)])
    return lo, hi, a, b


def _poly_sum(
    lo: np.ndarray, hi: np.ndarray, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, n: int
) -> np.ndarray:
    """``sum_i (c0_i + c1_i j + c2_i j^2) [lo_i <= j < hi_i]`` for j = 0..n-1, by difference arrays."""
    shape = np.broadcast_shapes(lo.shape, hi.shape)
    lo = np.clip(np.ceil(np.broadcast_to(lo, shape).ravel()), 0, n).astype(np.int64)
    hi = np.clip(np.ceil(np.broadcast_to(hi, shape).ravel()), 0, n).astype(np.int64)
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    j = np.arange(n, dtype=np.float64)
    out = np.zeros(n)
    for power, c in enumerate((c0, c1, c2)):
        c = np.broadcast_to(c, shape).ravel()[keep]
        if not c.any():
            continue
        diff = np.bincount(lo, weights=c, minlength=n + 1) - np.bincount(
            hi, weights=c, minlength=n + 1
        )
        out += np.cumsum(diff)[:n] * j**power
    return out


def _sums(
    r: Ranking, rows: np.ndarray, n: int, variant: str, floor: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sum of the contributions and of their squares over ``rows``, at columns 0..n-1 (each item from
    column ``floor`` on, when given)."""
    lo, hi, a, b = _pieces(r, rows, variant)
    if floor is not None:
        lo = np.maximum(lo, floor[None, :])
    zero = np.zeros_like(a)
    return _poly_sum(lo, hi, a, b, zero, n), _poly_sum(lo, hi, a * a, 2 * a * b, b * b, n)


def _product_sum(
    S: Ranking, rows_s: np.ndarray, L: Ranking, rows_l: np.ndarray, n: int, variant: str
) -> np.ndarray:
    """``sum_i cS_i(j) cL_i(j)`` over paired rows (the same items), at columns 0..n-1."""
    ls, hs, as_, bs = _pieces(S, rows_s, variant)
    ll, hl, al, bl = _pieces(L, rows_l, variant)
    parts = []
    for u in range(2):
        for v in range(2):
            parts.append(
                (
                    np.maximum(ls[u], ll[v]),
                    np.minimum(hs[u], hl[v]),
                    as_[u] * al[v],
                    as_[u] * bl[v] + al[v] * bs[u],
                    bs[u] * bl[v],
                )
            )
    lo, hi, c0, c1, c2 = (np.concatenate(x) for x in zip(*parts))
    return _poly_sum(lo, hi, c0, c1, c2, n)


def _short_long(x: Ranking, y: Ranking, depth: int | None) -> tuple[Ranking, Ranking, int, int]:
    sx = len(x) if depth is None else min(len(x), depth)
    sy = len(y) if depth is None else min(len(y), depth)
    return (x, y, sx, sy) if sx <= sy else (y, x, sy, sx)


def _rbo_variant(
    S: Ranking, L: Ranking, s: int, l: int, p: float, variant: str
) -> dict[str, float]:
    rows_s = np.flatnonzero(S.top < s)
    rows_l = np.flatnonzero(L.top < l)
    _, iS, iL = np.intersect1d(
        S.items[rows_s], L.items[rows_l], assume_unique=True, return_indices=True
    )
    X = _product_sum(S, rows_s[iS], L, rows_l[iL], l, variant)
    depth = np.arange(1, l + 1, dtype=np.float64)
    sec2 = depth > s
    sum_l, sq_l = _sums(L, rows_l, l, variant)
    sum_s, sq_s = _sums(S, rows_s, l, variant)
    norm_l = np.sqrt(sq_l)
    # the size (w) or norm (b) of S's prefix: its own up to s; beyond s, the depth (S's unseen items count)
    size_s = np.where(sec2, depth, sum_s)
    norm_s = np.where(sec2, np.sqrt(depth), np.sqrt(sq_s))

    def agreement(overlap: np.ndarray) -> np.ndarray:
        if variant == "w":
            return 2 * overlap / (size_s + sum_l)
        if variant == "a":
            return overlap / depth
        return overlap / norm_s / norm_l

    A = agreement(X)
    a_s = A[s - 1]
    # L's items that S lacks, in L's order
    unseen = rows_l[~np.isin(L.items[rows_l], S.items[rows_s])]
    # max: at depth s + j (j = 1..l - s) the first j of them match: the i-th counts from column s + i on
    first = unseen[: l - s]
    x_max = X + _sums(L, first, l, variant, floor=s + np.arange(len(first), dtype=np.float64))[0]
    # ext: the unseen part agrees as the seen part did at depth s, weighted by the mean non-zero contribution
    total = _sums(L, unseen, l, variant)[0][s:]
    nonzero = np.cumsum(np.bincount(L.top[unseen], minlength=l)[:l])[s:]
    mean = np.divide(total, nonzero, out=np.zeros(l - s), where=nonzero > 0)
    x_ext = X.copy()
    x_ext[s:] += (depth[s:] - s) * a_s * mean
    xl = float(X[l - 1])
    w = _weights(depth, p)
    lo = math.fsum(A * w) + xl * _tail_min(l, p)
    hi = math.fsum(agreement(x_max) * w) + _tail_max(xl, s, l, p)
    ext = math.fsum(agreement(x_ext) * w) + (xl + (l - s) * a_s) / l * p**l
    return {"ext": float(ext), "min": float(lo), "max": float(hi), "res": float(hi - lo)}


def rbo(x, y, p: float = DEFAULT_P, ties: str = "a", depth: int | None = None) -> dict[str, float]:
    """RBO of two rankings with ties, Corsi and Urbano's variant ``ties`` (``w``, ``a`` or ``b``; on tie-free
    rankings all three are Webber et al.'s RBO): ``{"ext", "min", "max", "res"}``.

    ``x`` and ``y``: [`Ranking`][tierank.analysis.similarity.Ranking] or lists of items whose sets are tie groups; ``depth``: evaluate the
    prefixes to that depth (a tie group across it counts as the variant says; default: the whole rankings).
    """
    p = check_p(p)
    if ties not in VARIANTS:
        raise TierankInputError(f"RBO tie treatment {ties!r}: accepted: {', '.join(VARIANTS)}")
    S, L, s, l = _short_long(_as_ranking(x), _as_ranking(y), _check_depth(depth))
    _nonempty(s)
    return _rbo_variant(S, L, s, l, p, ties)


# --- over the tie orderings -------------------------------------------------------------------------------


def _group_of(r: Ranking, items: np.ndarray, absent: int) -> np.ndarray:
    """The tie-group index in ``r`` of each of ``items`` (``absent`` where ``r`` lacks it)."""
    out = np.full(len(items), absent, dtype=np.int64)
    _, i, j = np.intersect1d(items, r.items, assume_unique=True, return_indices=True)
    out[i] = r.group[j]
    return out


def extreme_orders(x: Ranking, y: Ranking, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``x``'s and ``y``'s items in the pair of tie orderings with the largest (or smallest)
    overlap ``|x[:d] & y[:d]|`` at every depth ``d`` at once: inside a tie group of one ranking, the items
    the other ranks first (``largest``) or last (absent ones last, resp. first) come first, and items equal
    on that count in one common order (resp. in opposite orders)."""
    big = np.iinfo(np.int64).max // 4
    gx = _group_of(y, x.items, big)
    gy = _group_of(x, y.items, big)
    # one common order of the items: their ranks in the union
    union = np.unique(np.concatenate([x.items, y.items]))
    cx = np.searchsorted(union, x.items)
    cy = np.searchsorted(union, y.items)
    if largest:
        ox = np.lexsort((cx, gx, x.group))
        oy = np.lexsort((cy, gy, y.group))
    else:
        ox = np.lexsort((cx, -gx, x.group))
        oy = np.lexsort((-cy, -gy, y.group))
    px = np.empty(len(x), dtype=np.int64)
    px[ox] = np.arange(len(x))
    py = np.empty(len(y), dtype=np.int64)
    py[oy] = np.arange(len(y))
    return px, py


def _overlaps(x: Ranking, px: np.ndarray, y: Ranking, py: np.ndarray, l: int) -> np.ndarray:
    """``X[d-1] = |x[:d] & y[:d]|`` for d = 1..l, the items at positions ``px``, ``py``."""
    _, i, j = np.intersect1d(x.items, y.items, assume_unique=True, return_indices=True)
    m = np.maximum(px[i], py[j])
    return np.cumsum(np.bincount(m[m < l], minlength=l)[:l]).astype(np.float64)


def overlaps(x, y, depth: int | None = None) -> np.ndarray:
    """The overlaps ``X_d = |x[:d] & y[:d]|``, d = 1..l (``l``: the longer length, or ``depth``), of the two
    rankings as laid out (a tie group in sorted order); Webber et al.'s agreement at depth d is ``X_d / d``.

    >>> overlaps(list("abcdefg"), list("zcavwxy")).tolist()  # Webber et al., Figure 5
    [0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    """
    x, y = _as_ranking(x), _as_ranking(y)
    _, _, _, l = _short_long(x, y, _check_depth(depth))
    return _overlaps(x, np.arange(len(x)), y, np.arange(len(y)), l)


def _expected_overlaps(S: Ranking, L: Ranking, s: int, l: int) -> np.ndarray:
    rows_s = np.flatnonzero(S.top < s)
    rows_l = np.flatnonzero(L.top < l)
    _, iS, iL = np.intersect1d(
        S.items[rows_s], L.items[rows_l], assume_unique=True, return_indices=True
    )
    return _product_sum(S, rows_s[iS], L, rows_l[iL], l, "a")


def rbo_orderings(x, y, p: float = DEFAULT_P, depth: int | None = None) -> dict[str, float]:
    """The expected value, minimum and maximum of RBO_ext over all orderings of the tie groups of both
    rankings (every ordering equally likely, the two independent), exact; and the oblivious RBO_ext."""
    p = check_p(p)
    x, y = _as_ranking(x), _as_ranking(y)
    S, L, s, l = _short_long(x, y, _check_depth(depth))
    _nonempty(s)
    ident_s, ident_l = np.arange(len(S)), np.arange(len(L))
    out = {
        "oblivious": rbo_from_overlaps(_overlaps(S, ident_s, L, ident_l, l), s, p)["ext"],
        "expected": rbo_from_overlaps(_expected_overlaps(S, L, s, l), s, p)["ext"],
    }
    for name, largest in (("min", False), ("max", True)):
        ps, pl = extreme_orders(S, L, largest)
        out[name] = rbo_from_overlaps(_overlaps(S, ps, L, pl, l), s, p)["ext"]
    return out


# --- rank correlations --------------------------------------------------------------------------------------


def _sign_sum(a: np.ndarray, b: np.ndarray) -> float:
    """sum over i < j of sign(a_i - a_j) * sign(b_i - b_j), on dense integer ranks, in blocks of rows."""
    ra = _dense(a).astype(np.int32)
    rb = _dense(b).astype(np.int32)
    n = len(ra)
    step = max(1, _BLOCK // max(n, 1))
    total = 0
    for i in range(0, n, step):
        sa = np.sign(ra[i : i + step, None] - ra[None, :]).astype(np.int8)
        sb = np.sign(rb[i : i + step, None] - rb[None, :]).astype(np.int8)
        sa *= sb
        total += int(sa.sum(dtype=np.int64))
    return total / 2


def _tied_pairs(v: np.ndarray) -> float:
    _, counts = np.unique(v, return_counts=True)
    return float((counts * (counts - 1) / 2).sum())


def kendall_tau_b(a, b) -> float:
    """Kendall's tau-b of two score vectors over the same items (NaN under 2 items or a constant vector)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n = len(a)
    if n < 2:
        return float("nan")
    n0 = n * (n - 1) / 2
    den = (n0 - _tied_pairs(a)) * (n0 - _tied_pairs(b))
    if den <= 0:
        return float("nan")
    return _sign_sum(a, b) / math.sqrt(den)


def tau_ap(reference_ranks) -> float:
    """Yilmaz et al.'s tau-AP of a ranking against a reference ranking of the same items:
    ``reference_ranks`` lists the items' ranks in the reference, in the compared ranking's order
    (``2 / (n - 1) * sum_{i=2..n} C(i) / (i - 1) - 1``, ``C(i)`` the items above rank i that the reference
    also ranks above it); NaN under 2 items."""
    r = np.asarray(reference_ranks, dtype=np.float64)
    n = len(r)
    if n < 2:
        return float("nan")
    step = max(1, _BLOCK // n)
    acc = 0.0
    for i in range(1, n, step):
        rows = np.arange(i, min(n, i + step))
        above = np.arange(n)[None, :] < rows[:, None]
        correct = ((r[None, :] < r[rows, None]) & above).sum(axis=1)
        acc += float((correct / rows).sum())
    return 2 * acc / (n - 1) - 1


#: the tie orderings of one query (of both runs together) up to which tau-AP's minimum and maximum are
#: found by enumerating them all; past it they are the extremes of sampled orderings (labelled)
TAU_AP_ENUMERATION = 2000

#: the random tie orderings drawn for tau-AP's minimum and maximum past `TAU_AP_ENUMERATION`
#: (with the two orderings that make the most and the fewest pairs concordant, which attained the
#: enumerated extremes in every brute-force test, though no proof says they always do)
TAU_AP_SAMPLES = 20


def _shared_groups(x: Ranking, y: Ranking) -> tuple[np.ndarray, np.ndarray]:
    """The tie groups in ``x`` and in ``y`` of the items both rank, in ``y``'s oblivious order."""
    _, i, j = np.intersect1d(x.items, y.items, assume_unique=True, return_indices=True)
    o = np.argsort(j, kind="stable")
    return x.group[i[o]], y.group[j[o]]


def _tau_ap_expected(gx: np.ndarray, gy: np.ndarray) -> float:
    """E[tau-AP] over the uniform orderings of the tie groups of both rankings (independent), exact.

    With ``q(u, v)`` the probability that the reference ranks u above v (1, 0, or 1/2 when it ties them)
    and, for an item v of a tie group of the compared ranking of size m after c items, ``A_v`` the sum of
    ``q(u, v)`` over the items of earlier groups and ``B_v`` over the other items of its group: v lands at
    1-based position c + t + 1, t uniform on 0..m-1, with each other item of its group above it with
    probability t / (m - 1) given t, so ``E[C/(i-1)] = (1/m) sum_t (A_v + t B_v / (m - 1)) / (c + t)``
    (the term with c + t = 0, the first position, is left out as in the definition)."""
    n = len(gx)
    if n < 2:
        return float("nan")
    gy_d = _dense(gy)
    sizes = np.bincount(gy_d)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    m = sizes[gy_d].astype(np.float64)
    c = starts[gy_d]
    A = np.zeros(n)
    B = np.zeros(n)
    step = max(1, _BLOCK // n)
    for lo in range(0, n, step):
        rows = np.arange(lo, min(n, lo + step))
        q = (gx[None, :] < gx[rows, None]) + 0.5 * (gx[None, :] == gx[rows, None])
        earlier = gy_d[None, :] < gy_d[rows, None]
        same = (gy_d[None, :] == gy_d[rows, None]) & (np.arange(n)[None, :] != rows[:, None])
        A[rows] = (q * earlier).sum(axis=1)
        B[rows] = (q * same).sum(axis=1)
    H = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])  # H[j] = 1 + 1/2 + ... + 1/j
    mi = m.astype(np.int64)
    first = np.maximum(c, 1)  # the smallest c + t counted
    s1 = H[c + mi - 1] - H[first - 1]  # sum over counted t of 1 / (c + t)
    terms = np.where(c == 0, mi - 1, mi).astype(np.float64)
    s2 = terms - c * s1  # sum over counted t of t / (c + t)
    b = np.divide(B, m - 1, out=np.zeros(n), where=m > 1)
    per_item = (A * s1 + b * s2) / m
    return float(2 * per_item.sum() / (n - 1) - 1)


def _small_tau_ap(r: np.ndarray) -> float:
    n = len(r)
    below = np.tril(r[None, :] < r[:, None], k=-1).sum(axis=1)[1:]
    return float(2 * (below / np.arange(1, n)).sum() / (n - 1) - 1)


def _orderings_of(groups: np.ndarray) -> int:
    return (
        math.prod(math.factorial(int(k)) for k in np.bincount(_dense(groups))) if len(groups) else 1
    )


def tau_ap_orderings(x, y, samples: int = TAU_AP_SAMPLES, seed: int = 0) -> dict[str, Any]:
    """tau-AP of ``y`` against the reference ``x`` over all orderings of the tie groups of both (every
    ordering equally likely, the two independent), on the items both rank: the oblivious value (the
    orders as given), the expected value (exact, `_tau_ap_expected`), and the minimum and maximum:
    exact by enumerating the orderings when there are at most `TAU_AP_ENUMERATION`
    (``method: "exact"``), else the extremes of ``samples`` seeded random orderings and of the two
    orderings that make the most and the fewest pairs concordant (``method: "sampled"``: attained
    values, inside the true range).

    >>> o = tau_ap_orderings(["a", {"b", "c"}, "d"], ["c", "a", "b", "d"])
    >>> round(o["oblivious"], 4), round(o["expected"], 4), round(o["min"], 4), round(o["max"], 4), o["method"]
    (0.0, 0.1667, 0.0, 0.3333, 'exact')
    """
    x, y = _as_ranking(x), _as_ranking(y)
    gx, gy = _shared_groups(x, y)
    n = len(gx)
    _, i, j = np.intersect1d(x.items, y.items, assume_unique=True, return_indices=True)
    rank_in_x = np.full(len(y), -1, dtype=np.int64)
    rank_in_x[j] = i
    oblivious = tau_ap(rank_in_x[np.sort(j)])
    out: dict[str, Any] = {
        "oblivious": oblivious,
        "expected": oblivious,
        "min": oblivious,
        "max": oblivious,
        "method": "exact",
    }
    if n < 2 or (len(np.unique(gx)) == n and len(np.unique(gy)) == n):
        return out  # nothing to order: every statistic is the oblivious value
    out["expected"] = _tau_ap_expected(gx, gy)
    count = _orderings_of(gx) * _orderings_of(gy)
    if count <= TAU_AP_ENUMERATION:
        values = [_small_tau_ap(r) for r in _all_reference_ranks(gx, gy)]
    else:
        rng = np.random.default_rng(seed)
        values = []
        for _ in range(samples):
            kx, ky = rng.random(n), rng.random(n)
            values.append(_small_or_blocked(_reference_ranks(gx, gy, kx, ky)))
        common = np.arange(
            n, dtype=np.float64
        )  # the most concordant pairs: ties follow the other ranking
        values.append(_small_or_blocked(_reference_ranks(gx, gy, gy + common / n, gx + common / n)))
        values.append(
            _small_or_blocked(_reference_ranks(gx, gy, -gy - common / n, -gx + common / n))
        )
        out.update(method="sampled", samples=samples, seed=seed)
    out["min"], out["max"] = float(min(values)), float(max(values))
    if (
        out["method"] == "exact"
    ):  # the closed form's last-bit rounding stays inside the enumerated range
        out["expected"] = min(max(out["expected"], out["min"]), out["max"])
    return out


def _small_or_blocked(r: np.ndarray) -> float:
    return _small_tau_ap(r) if len(r) <= 256 else tau_ap(r)


def _reference_ranks(gx: np.ndarray, gy: np.ndarray, kx: np.ndarray, ky: np.ndarray) -> np.ndarray:
    """The reference's positions of the items, in the compared ranking's order, when the tie groups are
    ordered by the keys ``kx`` (the reference's) and ``ky`` (the compared ranking's), ascending."""
    px = np.empty(len(gx), dtype=np.int64)
    px[np.lexsort((kx, gx))] = np.arange(len(gx))
    return px[np.lexsort((ky, gy))]


def _all_reference_ranks(gx: np.ndarray, gy: np.ndarray):
    """`_reference_ranks` for every pair of tie orderings of both rankings."""
    from itertools import permutations, product

    def orders(g):
        members = [np.flatnonzero(g == v) for v in np.unique(g)]
        for choice in product(*(permutations(range(len(mm))) for mm in members)):
            key = np.empty(len(g), dtype=np.float64)
            for mm, perm in zip(members, choice):
                key[mm] = perm
            yield key

    for kx in orders(gx):
        for ky in orders(gy):
            yield _reference_ranks(gx, gy, kx, ky)


# --- one query, two runs ------------------------------------------------------------------------------------


def query_similarity(
    x: Ranking,
    y: Ranking,
    x_scores: np.ndarray,
    y_scores: np.ndarray,
    *,
    p: float = DEFAULT_P,
    depth: int | None = None,
    k: int = 10,
    samples: int = TAU_AP_SAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Every similarity of one query (the fields of `FIELDS` after the counts, and ``tau_ap_method``,
    how tau-AP's min and max were found: [`tau_ap_orderings`][tierank.analysis.similarity.tau_ap_orderings] with ``samples`` and ``seed``):
    ``x``/``y`` the two rankings and ``x_scores``/``y_scores`` their scores in the rankings' order."""
    S, L, s, l = _short_long(x, y, depth)
    out: dict[str, Any] = {}
    ident_s, ident_l = np.arange(len(S)), np.arange(len(L))
    ob = rbo_from_overlaps(_overlaps(S, ident_s, L, ident_l, l), s, p)
    out.update(rbo=ob["ext"], rbo_min=ob["min"], rbo_max=ob["max"], rbo_res=ob["res"])
    for v in VARIANTS:
        out[f"rbo_{v}"] = _rbo_variant(S, L, s, l, p, v)["ext"]
    out["rbo_expected"] = rbo_from_overlaps(_expected_overlaps(S, L, s, l), s, p)["ext"]
    lo_s, lo_l = extreme_orders(S, L, False)
    hi_s, hi_l = extreme_orders(S, L, True)
    out["rbo_lo"] = rbo_from_overlaps(_overlaps(S, lo_s, L, lo_l, l), s, p)["ext"]
    out["rbo_hi"] = rbo_from_overlaps(_overlaps(S, hi_s, L, hi_l, l), s, p)["ext"]
    # rank correlations on the shared documents
    _, i, j = np.intersect1d(x.items, y.items, assume_unique=True, return_indices=True)
    out["tau_b"] = kendall_tau_b(x_scores[i], y_scores[j])
    rank_in_x = np.full(len(y), -1, dtype=np.int64)
    rank_in_x[j] = i  # x's positions of the shared items, at their positions in y
    out["tau_ap"] = tau_ap(rank_in_x[np.sort(j)])
    # overlap at k: past the longer ranking the overlap no longer grows, so it is counted at depth
    # min(k, that length) (arrays as long as the rankings, whatever k) and divided by k
    kk = min(k, max(len(S), len(L)))
    out["overlap"] = float(_overlaps(S, ident_s, L, ident_l, kk)[kk - 1]) / k
    out["overlap_expected"] = float(_expected_overlaps(S, L, min(len(S), kk), kk)[kk - 1]) / k
    out["overlap_lo"] = float(_overlaps(S, lo_s, L, lo_l, kk)[kk - 1]) / k
    out["overlap_hi"] = float(_overlaps(S, hi_s, L, hi_l, kk)[kk - 1]) / k
    # tau-AP over the tie orderings of both runs
    t = tau_ap_orderings(x, y, samples=samples, seed=seed)
    out.update(
        tau_ap_expected=t["expected"],
        tau_ap_lo=t["min"],
        tau_ap_hi=t["max"],
        tau_ap_method=t["method"],
    )
    return out


@dataclass
class Similarity:
    """What [`similarity`][tierank.analysis.similarity.similarity] returns: one record per shared query (`FIELDS`), their mean, the
    queries only one run answers, and the settings."""

    per_query: list[dict]
    mean: dict
    only_a: list[str]
    only_b: list[str]
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "settings": self.settings,
            "mean": self.mean,
            "queries": self.per_query,
            "only_a": self.only_a,
            "only_b": self.only_b,
        }


def _docid_codes(a: pa.Array, b: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the document ids of both runs, increasing with the ids' bytewise order (trec_eval's)."""
    both = pa.chunked_array([ac.cast(a, pa.string()), ac.cast(b, pa.string())]).combine_chunks()
    enc = ac.dictionary_encode(both)
    rank = np.empty(len(enc.dictionary), dtype=np.int64)
    rank[ac.sort_indices(enc.dictionary).to_numpy()] = np.arange(len(enc.dictionary))
    codes = rank[enc.indices.to_numpy(zero_copy_only=False)]
    return codes[: len(a)], codes[len(a) :]


def similarity(
    run_a,
    run_b,
    *,
    p: float = DEFAULT_P,
    depth: int | None = None,
    k: int = 10,
    samples: int = TAU_AP_SAMPLES,
    seed: int = 0,
) -> Similarity:
    """Similarity of two runs (anything [`tierank.to_run`][tierank.to_run] reads), per shared query and averaged.

    ``samples`` and ``seed``: the random tie orderings drawn for tau-AP's minimum and maximum in a query
    with more than `TAU_AP_ENUMERATION` orderings (``settings["tau_ap_extremes"]`` counts those
    queries; [`tau_ap_orderings`][tierank.analysis.similarity.tau_ap_orderings]).

    The oblivious rankings break ties as trec_eval (docno descending); the tie-aware values do not depend
    on any tie-break.

    Examples
    --------
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 2.0, "d4": 1.0}, "q2": {"d1": 1.0}}
    >>> b = {"q1": {"d1": 3.0, "d3": 2.5, "d2": 2.0, "d5": 1.0}, "q3": {"d1": 1.0}}
    >>> sim = similarity(a, b, p=0.9, k=2)
    >>> r = sim.per_query[0]
    >>> r["qid"], round(r["rbo"], 4), round(r["rbo_lo"], 4), round(r["rbo_hi"], 4), round(r["tau_b"], 4)
    ('q1', 0.8177, 0.7728, 0.8177, 0.8165)
    >>> r["overlap"], r["overlap_expected"], sim.only_a, sim.only_b
    (1.0, 0.75, ['q2'], ['q3'])
    """
    p = check_p(p)
    depth = _check_depth(depth)
    if _check_depth(k, "k") is None:
        raise TierankInputError("k: must be a whole number >= 1")
    ra, rb = to_run(run_a), to_run(run_b)
    la, lb = layout(ra), layout(rb)
    shared = sorted(set(la.qids) & set(lb.qids))
    only_a = sorted(set(la.qids) - set(lb.qids))
    only_b = sorted(set(lb.qids) - set(la.qids))
    if (
        la.rows is not None or lb.rows is not None
    ):  # layout keeps every row when no query set is given
        raise AssertionError("layout dropped rows")
    options = dict(p=p, depth=depth, k=k, samples=samples, seed=seed)
    records = _query_records(ra, rb, la, lb, shared, options)
    mean = _mean_record(records)
    sampled = sum(r.pop("tau_ap_method") == "sampled" for r in records)
    settings = {
        "p": p,
        "depth": depth,
        "k": k,
        "queries": len(shared),
        "only_a": len(only_a),
        "only_b": len(only_b),
        "tie_break": "trec_eval",
        "tau_ap_extremes": {
            "exact_up_to_orderings": TAU_AP_ENUMERATION,
            "sampled_queries": sampled,
            "samples": samples,
            "seed": seed,
        },
        "a": getattr(ra, "source", "run_a"),
        "b": getattr(rb, "source", "run_b"),
    }
    return Similarity(records, mean, only_a, only_b, settings)


def _query_records(ra, rb, la, lb, shared: list[str], options: dict) -> list[dict]:
    """One record per query of ``shared``: the document counts and [`query_similarity`][tierank.analysis.similarity.query_similarity]
    (``options``: its keyword arguments) of the query's rows of both runs."""
    ca, cb = _docid_codes(ra.docid, rb.docid)
    qa = {q: i for i, q in enumerate(la.qids)}
    qb = {q: i for i, q in enumerate(lb.qids)}
    records = []
    for q in shared:
        rows_a = la.order[la.query_starts[qa[q]] : la.query_starts[qa[q] + 1]]
        rows_b = lb.order[lb.query_starts[qb[q]] : lb.query_starts[qb[q] + 1]]
        x = ranking_from_scores(ca[rows_a], ra.score[rows_a])
        y = ranking_from_scores(cb[rows_b], rb.score[rows_b])
        xs = _scores_in_order(x, ca[rows_a], ra.score[rows_a])
        ys = _scores_in_order(y, cb[rows_b], rb.score[rows_b])
        rec: dict = {
            "qid": q,
            "docs_a": len(x),
            "docs_b": len(y),
            "shared": int(len(np.intersect1d(x.items, y.items))),
        }
        rec.update(query_similarity(x, y, xs, ys, **options))
        records.append(rec)
    return records


def _mean_record(records: list[dict]) -> dict:
    """The record ``"mean"``: every count and `MEAN_FIELDS` averaged over the queries (NaN left out)."""
    mean: dict = {"qid": "mean"}
    for f in ("docs_a", "docs_b", "shared", *MEAN_FIELDS):
        mean[f] = _mean([r[f] for r in records])
    return mean


def _scores_in_order(r: Ranking, items: np.ndarray, scores: np.ndarray) -> np.ndarray:
    o = np.argsort(items, kind="stable")
    return scores[o[np.searchsorted(items[o], r.items)]]


def _mean(values: list) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


__all__ = [
    "DEFAULT_P",
    "FIELDS",
    "MEAN_FIELDS",
    "VARIANTS",
    "Ranking",
    "Similarity",
    "check_p",
    "extreme_orders",
    "kendall_tau_b",
    "overlaps",
    "query_similarity",
    "ranking_from_groups",
    "ranking_from_scores",
    "rbo",
    "rbo_from_overlaps",
    "rbo_orderings",
    "similarity",
    "tau_ap",
    "tau_ap_orderings",
    "TAU_AP_ENUMERATION",
    "TAU_AP_SAMPLES",
]
