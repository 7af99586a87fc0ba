r"""Numeric kernels shared by the measure families (public; a new family builds on these).

Everything here works on whole runs at once: rows are the documents of a
[`tierank.ties.Prepared`][tierank.ties.Prepared] in its total order, so every query and every tie
group is a contiguous segment, and a per-segment statistic is one ``bincount``.

Variances are computed **without cancellation**: per tie group, from deviations
about the group's own values (two passes, shifted by the group's first value),
never as $E[X^2] - E[X]^2$.  A group whose document values are all equal,
or whose positions carry equal weights, therefore contributes exactly ``0.0``,
so the standard deviation of a measure that no tie ordering can change is
exactly 0.  Ratios of counts are one division of exact integer counts (a query
with every top-k document judged has ``Judged@k == 1.0`` exactly).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ties import DocKind, Prepared

__all__ = [
    "ratio",
    "log_factorials",
    "segment_firsts",
    "select_segments",
    "centered",
    "comoment",
    "group_moments",
    "group_counts",
    "group_counts_float",
    "central_moments",
    "central_moments_in",
    "segment_cumsum",
]


def ratio(num, den) -> np.ndarray:
    """``num / den`` in one division where ``den > 0``, else 0; broadcasts.

    Measures that are ratios of counts (P, R, F1, Rprec, Judged) divide the exact
    integer count once, so a ratio that is 1 is exactly 1.0:

    >>> ratio(np.array([10.0, 3.0, 1.0]), np.array([10.0, 3.0, 0.0]))
    array([1., 1., 0.])
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def log_factorials(n: int) -> np.ndarray:
    """``lf[i] = log(i!)`` for i = 0..n.

    >>> float(np.exp(log_factorials(5)[5]).round(9))
    120.0
    """
    lf = np.zeros(n + 1)
    if n > 0:
        np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)), out=lf[1:])
    return lf


def segment_firsts(seg: np.ndarray) -> np.ndarray:
    """Indices where a run of equal values starts in ``seg`` (sorted segment ids).

    >>> segment_firsts(np.array([0, 0, 2, 2, 2, 3]))
    array([0, 2, 5])
    """
    if not len(seg):
        return np.zeros(0, np.int64)
    change = np.flatnonzero(seg[1:] != seg[:-1])
    out = np.empty(len(change) + 1, dtype=np.int64)
    out[0] = 0
    np.add(change, 1, out=out[1:])
    return out


def segment_cumsum(x: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sums of ``x`` restarted at every segment of ``seg`` (sorted ids).

    Each segment is summed from zero, in order, on its own: the result for a segment does not
    depend on the other segments (no difference of global prefix sums, whose rounding would),
    so a query evaluated alone or in any batch of queries gets the same bits.  Segments are
    padded into matrices by size class (powers of two), so the work is O(n) and vectorized.

    >>> segment_cumsum(np.array([0.1, 0.2, 0.3, 1.0, 2.0]), np.array([0, 0, 0, 5, 5])).tolist()
    [0.1, 0.30000000000000004, 0.6000000000000001, 1.0, 3.0]
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    if not len(x):
        return out
    first = segment_firsts(seg)
    lens = np.diff(np.append(first, len(x)))
    cls = np.ceil(np.log2(lens)).astype(np.int64)
    for c in np.flatnonzero(
        np.bincount(cls)
    ):  # the size classes present, ascending (np.unique imports numpy.ma)
        pick = np.flatnonzero(cls == c)
        width = 1 << int(c)
        idx = first[pick][:, None] + np.arange(width)
        valid = np.arange(width) < lens[pick][:, None]
        block = np.where(valid, x[np.where(valid, idx, 0)], 0.0)
        np.cumsum(block, axis=1, out=block)
        out[idx[valid]] = block[valid]
    return out


def select_segments(seg: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of the segments with ``keep[segment]`` true: (their indices, their segments
    renumbered ``0..n-1``, the original ids of those n segments).  Variances are needed only
    for the few tie groups that can vary; this keeps the work proportional to them.

    >>> select_segments(np.array([0, 0, 1, 2, 2, 2]), np.array([True, False, True]))
    (array([0, 1, 3, 4, 5]), array([0, 0, 1, 1, 1]), array([0, 2]))
    """
    idx = np.flatnonzero(keep[seg])
    s = seg[idx]
    first = segment_firsts(s)
    local = np.zeros(len(s), dtype=np.int64)
    local[first[1:]] = 1
    return idx, np.cumsum(local), s[first]


def centered(
    x: np.ndarray, seg: np.ndarray, nseg: int, size: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Per segment: mean and sum of squared deviations $\sum (x - \bar x)^2$.

    ``x`` holds the values of sorted segments ``seg`` (ids in ``0..nseg-1``); a
    segment of ``size[s]`` entries of which only a prefix is given is padded with
    zeros (the positions past a cutoff have weight 0).  Two passes about the
    segment's first value: a constant segment gives exactly 0, and no
    $\sum x^2 - (\sum x)^2/m$ cancellation happens otherwise.

    >>> mean, ss = centered(np.array([0.1] * 10 + [0.1, 0.0]), np.array([0] * 10 + [1, 1]), 2, np.array([10, 3]))
    >>> float(ss[0]), round(float(ss[1]), 12)
    (0.0, 0.006666666667)
    """
    x = np.asarray(x, dtype=np.float64)
    size = np.asarray(size, dtype=np.float64)
    first = segment_firsts(seg)
    shift = np.zeros(nseg)
    shift[seg[first]] = x[first]
    d = x - shift[seg]
    pad = size - np.bincount(seg, minlength=nseg)  # implicit zeros, deviation -shift
    dsum = np.bincount(seg, weights=d, minlength=nseg) - pad * shift
    dbar = ratio(dsum, size)
    ss = np.bincount(seg, weights=(d - dbar[seg]) ** 2, minlength=nseg) + pad * (shift + dbar) ** 2
    return shift + dbar, ss


def comoment(
    x: np.ndarray, y: np.ndarray, seg: np.ndarray, nseg: int, size: np.ndarray
) -> np.ndarray:
    r"""Per segment: $\sum (x - \bar x)(y - \bar y)$, segments zero-padded to ``size``
    as in [`centered`][tierank.measures.kernels.centered] (two passes about each segment's first values).

    >>> float(comoment(np.array([1.0, 2.0]), np.array([3.0, 5.0]), np.array([0, 0]), 1, np.array([3]))[0])
    5.0
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    size = np.asarray(size, dtype=np.float64)
    first = segment_firsts(seg)
    pad = size - np.bincount(seg, minlength=nseg)
    out = []
    for v in (x, y):
        shift = np.zeros(nseg)
        shift[seg[first]] = v[first]
        d = v - shift[seg]
        dbar = ratio(np.bincount(seg, weights=d, minlength=nseg) - pad * shift, size)
        out.append(
            (d - dbar[seg], -(shift + dbar))
        )  # deviations of the given and the padded entries
    (dx, px), (dy, py) = out
    return np.bincount(seg, weights=dx * dy, minlength=nseg) + pad * px * py


def group_counts(prep: Prepared, kind: DocKind = "rel", rel: int | None = None) -> np.ndarray:
    """Per tie group, the number of documents with a true binary value (``rel`` at
    ``rel``, or ``judged``), as exact int64."""

    def compute():
        a = prep.doc_values(kind, rel)
        return np.bincount(prep.gid, weights=a, minlength=len(prep.gsize)).round().astype(np.int64)

    return prep.cached(("counts", kind, rel if kind == "rel" else None), compute)


def group_counts_float(prep: Prepared, kind: DocKind = "rel", rel: int | None = None) -> np.ndarray:
    """[`group_counts`][tierank.measures.kernels.group_counts] as float64 (read-only, cached on ``prep``)."""

    def compute():
        r = group_counts(prep, kind, rel).astype(np.float64)
        r.flags.writeable = False
        return r

    return prep.cached(("counts_float", kind, rel if kind == "rel" else None), compute)


def group_moments(
    prep: Prepared, kind: DocKind, rel: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per tie group: the sum of the document values and their sum of squared deviations.

    Binary values use the exact ``r (m - r) / m``; integer grades exact shifted integer sums;
    other gains the two-pass [`centered`][tierank.measures.kernels.centered].  All are exactly 0 for a group whose values
    are all equal.  Cached on ``prep``.
    """

    def compute():
        a = prep.doc_values(kind, rel)
        m = prep.gsize_float
        if a.dtype == bool:
            r = group_counts_float(prep, kind, rel)
            return r, r * (m - r) / m
        s1 = np.bincount(prep.gid, weights=a, minlength=len(m))
        if not np.array_equal(a, np.floor(a)):
            return s1, centered(a, prep.gid, len(m), m)[1]
        # integer grades (the usual case): shifted by each group's first value, the sums are exact
        # integers and ss = (m sum d^2 - (sum d)^2) / m is one correctly rounded division
        # (a document alone in its group has d = 0 exactly: only tied rows are summed)
        t = prep.tied_rows
        gt = prep.gid[t]
        d = a[t] - a[prep.gstart[gt]]
        s1d = np.bincount(gt, weights=d, minlength=len(m))
        s2d = np.bincount(gt, weights=d * d, minlength=len(m))
        return s1, (m * s2d - s1d * s1d) / m

    return prep.cached(("moments", kind, rel if kind == "rel" else None), compute)


def central_moments(r: np.ndarray, m: np.ndarray) -> dict[str, np.ndarray]:
    r"""Joint central moments of the relevance indicators of a uniformly permuted group.

    ``m`` positions hold ``r`` relevant documents; $y_a = x_a - r/m$ at distinct
    positions a, b, c, d.  With $s = m - r$ (closed forms in r and s, each with the
    factor $rs$, so exactly 0 for an all-relevant or all-non-relevant group):

    * ``k2`` $= E[y_a y_b] = -rs / (m^2 (m-1))$;
    * ``c3`` $= E[y_a^2 y_b] - E[y_a y_b y_c]$ $= rs(r-s) / (m^2 (m-1)(m-2))$;
    * ``c22`` $= E[y_a^2 y_b^2] - k_2^2$, ``c211`` $= E[y_a^2 y_b y_c] - k_2^2$,
      ``c1111`` $= E[y_a y_b y_c y_d] - k_2^2$.

    Moments that need more distinct positions than the group has are returned as 0
    (the weight sums they multiply are then exactly 0 too).  Derived with sympy from
    $E[\prod_{i\le j} x_i] = (r)_j/(m)_j$; the tests check them against enumeration.

    >>> cm = central_moments(np.array([1.0]), np.array([2.0]))
    >>> float(cm["k2"][0]), float(cm["c22"][0])
    (-0.25, 0.0)
    """
    return central_moments_in(np, np.asarray(r, dtype=np.float64), np.asarray(m, dtype=np.float64))


def central_moments_in(xp: Any, r: Any, m: Any) -> dict[str, Any]:
    """[`central_moments`][tierank.measures.kernels.central_moments] over arrays ``r``, ``m`` of the array namespace ``xp`` (NumPy itself, or
    any namespace of the array API standard: `tierank.tensor` calls it through
    ``array-api-compat``): the one implementation of the closed forms.  A denominator that vanishes
    where its moment is 0 is replaced by 1 before the division, so no namespace warns or divides by
    zero; elsewhere the arithmetic is the same."""
    s = m - r
    rs = r * s
    m1, m2, m3 = m - 1.0, m - 2.0, m - 3.0
    p22 = (
        r**3 * s
        - r**3
        + 2 * r**2 * s**2
        - r**2 * s
        + r**2
        + r * s**3
        - r * s**2
        - 2 * r * s
        - s**3
        + s**2
    )
    p211 = (
        r**3 * s
        - 2 * r**3
        + 2 * r**2 * s**2
        + 2 * r**2
        + r * s**3
        - 4 * r * s
        - 2 * s**3
        + 2 * s**2
    )
    p1111 = (
        r**3 * s
        - 3 * r**3
        + 2 * r**2 * s**2
        + r**2 * s
        + 3 * r**2
        + r * s**3
        + r * s**2
        - 6 * r * s
        - 3 * s**3
        + 3 * s**2
    )
    m4 = m**4
    one = xp.ones_like(m)
    zero = xp.zeros_like(m)

    def safe(ok: Any, den: Any) -> Any:
        return xp.where(ok, den, one)

    return {
        "k2": xp.where(m > 1, -rs / safe(m > 1, m * m * m1), zero),
        "c3": xp.where(m > 2, rs * (r - s) / safe(m > 2, m * m * m1 * m2), zero),
        "c22": xp.where(m > 1, rs * p22 / safe(m > 1, m4 * m1 * m1), zero),
        "c211": xp.where(m > 2, -rs * p211 / safe(m > 2, m4 * m2 * m1 * m1), zero),
        "c1111": xp.where(m > 3, 2.0 * rs * p1111 / safe(m > 3, m4 * m3 * m2 * m1 * m1), zero),
    }
