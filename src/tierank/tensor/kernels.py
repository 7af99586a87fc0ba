r"""The tie-aware kernels over padded ``[queries, candidates]`` arrays, written once against the
Python array API standard (the namespace of `array_api_compat.array_namespace`).

They evaluate the closed forms of `tierank.measures` (the module docstrings of
[`tierank.measures.linear`][tierank.measures.linear], [`tierank.measures.rank`][tierank.measures.rank] and [`tierank.measures.ap`][tierank.measures.ap] derive
them) in a dense layout instead of the flat run of [`tierank.ties.Prepared`][tierank.ties.Prepared]:

* each row is sorted by score, descending (a stable sort, so the tie-oblivious order keeps the input
  order, or its reverse, inside ties); valid candidates first, the padding after them in a block of
  its own (it never ties with a valid candidate and carries no relevance or gain);
* a *tie group* is a run of equal scores in a sorted row; every position ``j`` knows its group's first
  position ``a_j`` and end ``b_j`` (one ``searchsorted`` over the flattened, monotone group ids), so a
  per-group sum is a difference of prefix sums gathered at ``b_j`` and ``a_j``, and a sum over groups
  is a sum over the positions that start a group;
* counts (relevant documents, group sizes, integer grades) stay exact integers in floating point;
  sums of squared deviations are taken about the group's own mean or first value (two passes), so a
  group that no ordering can change adds exactly 0 and a measure that cannot vary has std exactly 0.

No loop runs over queries or candidates: the only Python loops are over measures and over chunks of
rows (`tierank.tensor.evaluate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..measures.kernels import central_moments_in as central_moments

__all__ = [
    "Layout",
    "layout",
    "linear_stats",
    "first_relevant_stats",
    "ap_stats",
    "central_moments",
    "RawStats",
]


@dataclass
class RawStats:
    """Per-row statistics of one measure (arrays of shape ``[rows]`` in the compute dtype)."""

    oblivious: Any
    expected: Any
    min: Any
    max: Any
    var: Any


@dataclass
class Layout:
    """One chunk of rows laid out in score order, with its tie groups (all arrays ``[B, C]``
    unless said otherwise, in sorted order)."""

    xp: Any
    dtype: Any  # the compute dtype (a real floating dtype of ``xp``)
    valid: Any  # bool
    label: Any  # labels in the compute dtype, 0 where invalid
    start: Any  # int64: first position of the position's tie group
    end: Any  # int64: one past the group's last position
    j: Any  # int64 [1, C]: the position
    first: Any  # bool: the position starts its group
    size: Any  # compute dtype: group size m
    offset: Any  # compute dtype: t = j - start
    rel: int
    n_relevant: Any = None  # [B] given N+ at ``rel`` (None: counted from the labels)
    cache: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.valid.shape)

    def gather(self, x, idx):
        """``x[row, idx[row, col]]``: x of shape [B, C'] read at positions idx [B, C]."""
        return self.xp.take_along_axis(x, idx, axis=1)

    def prefix(self, x):
        """Exclusive prefix sums along each row, with a leading 0: shape [B, C + 1]."""
        return self.xp.cumulative_sum(x, axis=1, include_initial=True)

    def group_sum(self, x, px=None):
        """Per position, the sum of ``x`` over the position's tie group (from prefix sums)."""
        px = self.prefix(x) if px is None else px
        return self.gather(px, self.end) - self.gather(px, self.start)

    def row_sum(self, x):
        return self.xp.sum(x, axis=1)

    def over_groups(self, x):
        """Per row, the sum over its tie groups of a per-group quantity ``x`` (read at group starts)."""
        return self.row_sum(self.xp.where(self.first, x, self.zero))

    @property
    def zero(self):
        if "zero" not in self.cache:
            self.cache["zero"] = self.xp.zeros(
                self.shape, dtype=self.dtype, device=_device(self.valid)
            )
        return self.cache["zero"]

    def f(self, x):
        return self.xp.astype(x, self.dtype)

    def relevant(self, rel: int):
        """Binary relevance at ``rel`` (float, 0/1) per position."""
        key = ("rel", rel)
        if key not in self.cache:
            self.cache[key] = self.f(self.valid & (self.label >= rel))
        return self.cache[key]

    def counts(self, rel: int):
        """(relevant in the group ``r``, relevant before the group, N+) at ``rel``."""
        key = ("counts", rel)
        if key not in self.cache:
            px = self.prefix(self.relevant(rel))
            before = self.gather(px, self.start)
            r = self.gather(px, self.end) - before
            nrel = px[:, -1]
            if self.n_relevant is not None:
                nrel = self.n_relevant
            self.cache[key] = (r, before, nrel)
        return self.cache[key]

    def arranged(self, a, r, which: str):
        """Binary values ``a`` (obl. order) arranged ``optimistic`` (relevant first in every group)
        or ``pessimistic``; ``r``: relevant in the position's group."""
        if which == "oblivious":
            return a
        if which == "optimistic":
            return self.f(self.offset < r)
        return self.f(self.offset >= self.size - r)

    def sorted_values(self, v):
        """Graded values ``v`` arranged optimistic and pessimistic (each group's values sorted
        descending / ascending): two stable argsorts, then the pessimistic as the optimistic
        reversed inside each group."""
        xp = self.xp
        p1 = xp.argsort(v, axis=1, descending=True, stable=True)
        gid = self.gather(self.start, p1)  # group starts are increasing with the group: a sort key
        p2 = xp.argsort(gid, axis=1, stable=True)
        opt = self.gather(self.gather(v, p1), p2)
        pess = self.gather(opt, self.start + self.end - 1 - self.j)
        return opt, pess

    def tied_share(self):
        """Per row: valid candidates in tie groups of two or more / valid candidates (0 if none)."""
        n = self.row_sum(self.f(self.valid))
        tied = self.row_sum(self.f(self.valid & (self.size > 1)))
        return ratio(self.xp, tied, n)


def _device(x):
    from array_api_compat import device

    return device(x)


def ratio(xp, num, den):
    """``num / den`` where ``den > 0``, else 0 (one division: a ratio of equal counts is 1 exactly)."""
    pos = den > 0
    return xp.where(pos, num / xp.where(pos, den, xp.ones_like(den)), xp.zeros_like(num))


def layout(
    xp, scores, labels, valid, *, dtype, tie_break: str, rel: int, n_relevant=None
) -> Layout:
    """Sort every row by score (valid candidates first), find the tie groups; ``tie_break``
    ``input`` keeps the input order inside ties, ``reverse`` reverses it."""
    B, C = scores.shape
    dev = _device(scores)
    s = xp.astype(scores, dtype)
    lab = xp.where(valid, xp.astype(labels, dtype), xp.zeros_like(s))
    if tie_break == "reverse":
        s, lab, valid = xp.flip(s, axis=1), xp.flip(lab, axis=1), xp.flip(valid, axis=1)
    ninf = xp.asarray(-math.inf, dtype=dtype, device=dev)
    key = xp.where(valid, s, ninf)
    if bool(xp.any(valid & (s == ninf))):
        # a valid score of -inf would tie with the padding: valid candidates first, then by score
        p0 = xp.argsort(xp.astype(~valid, xp.int8), axis=1, stable=True)
        p1 = xp.argsort(xp.take_along_axis(key, p0, axis=1), axis=1, descending=True, stable=True)
        order = xp.take_along_axis(p0, p1, axis=1)
    else:
        order = xp.argsort(key, axis=1, descending=True, stable=True)
    ks = xp.take_along_axis(key, order, axis=1)
    vs = xp.take_along_axis(valid, order, axis=1)
    ls = xp.take_along_axis(lab, order, axis=1)
    head = xp.ones((B, 1), dtype=xp.bool, device=dev)
    new = xp.concat([head, (ks[:, 1:] != ks[:, :-1]) | (vs[:, 1:] != vs[:, :-1])], axis=1)
    gid = xp.cumulative_sum(xp.astype(new, xp.int64), axis=1) - 1
    rows = xp.reshape(xp.arange(B, dtype=xp.int64, device=dev) * C, (B, 1))
    flat = xp.reshape(gid + rows, (-1,))
    start = xp.reshape(xp.searchsorted(flat, flat, side="left"), (B, C)) - rows
    end = xp.reshape(xp.searchsorted(flat, flat, side="right"), (B, C)) - rows
    j = xp.reshape(xp.arange(C, dtype=xp.int64, device=dev), (1, C))
    return Layout(
        xp=xp,
        dtype=dtype,
        valid=vs,
        label=ls,
        start=start,
        end=end,
        j=j,
        first=new,
        size=xp.astype(end - start, dtype),
        offset=xp.astype(j - start, dtype),
        rel=rel,
        n_relevant=n_relevant,
    )


def value_moments(L: Layout, v):
    """Per position: the group's sum of the values ``v`` and their sum of squared deviations,
    about the group's first value (integer values: exact shifted integer sums and one division, as
    [`tierank.measures.kernels.group_moments`][tierank.measures.kernels.group_moments]; others two passes).  Exactly 0 for a group
    whose values are all equal."""
    xp = L.xp
    s1 = L.group_sum(v)
    d = v - L.gather(v, L.start)
    s1d = L.group_sum(d)
    if bool(xp.all(v == xp.floor(v))):
        s2d = L.group_sum(d * d)
        return s1, (L.size * s2d - s1d * s1d) / L.size
    dev = d - s1d / L.size
    return s1, L.group_sum(dev * dev)


def linear_stats(L: Layout, w, obl, opt, pess, den, s1, ss_a) -> RawStats:
    """Statistics of ``sum_j w_j a_j / den`` (`tierank.measures.linear.Linear`): ``w`` [1 or B, C]
    position weights (0 past the cutoff), the values in the oblivious, optimistic and pessimistic
    arrangements, ``den`` [B] or a number or None, and per position the group's sum of values ``s1``
    and their sum of squared deviations ``ss_a``."""
    xp = L.xp
    w = xp.broadcast_to(w, L.shape)

    def scale(x, power=1):
        if den is None:
            return x
        d = (
            den
            if not isinstance(den, (int, float))
            else xp.full(x.shape, float(den), dtype=L.dtype, device=_device(x))
        )
        return ratio(xp, x, d**power if power != 1 else d)

    sw = L.group_sum(w)
    expected = scale(L.over_groups(s1 * sw / L.size))
    # Var = sum over groups ss_a * ss_w / (m - 1), ss_w about the group's mean weight (two passes)
    dev = w - sw / L.size
    ss_w = L.group_sum(dev * dev)
    vary = ss_a > 0
    vg = xp.where(
        vary, ss_a * ss_w / xp.where(vary, L.size - 1.0, xp.ones_like(L.size)), xp.zeros_like(ss_a)
    )
    var = scale(L.over_groups(vg), power=2)
    values = [scale(L.row_sum(w * a)) for a in (obl, pess, opt)]
    return RawStats(values[0], expected, values[1], values[2], var)


def log_factorials(xp, n: int, dtype, device):
    """``lf[i] = log(i!)``, i = 0..n ([`tierank.measures.kernels.log_factorials`][tierank.measures.kernels.log_factorials])."""
    return xp.cumulative_sum(
        xp.log(xp.arange(1, n + 1, dtype=dtype, device=device)), include_initial=True
    )


def first_relevant_stats(L: Layout, family: str, k: float, rel: int) -> RawStats:
    """RR@k and Success@k ([`tierank.measures.rank`][tierank.measures.rank]): only the first tie group holding a relevant
    document matters; the offset of the first relevant document in it is negative hypergeometric."""
    xp = L.xp
    B, C = L.shape
    dev = _device(L.valid)
    rel_v = L.relevant(rel)
    r_pos, _, _ = L.counts(rel)
    anyrel = xp.max(rel_v, axis=1) > 0
    j0 = xp.reshape(
        xp.argmax(rel_v, axis=1), (B, 1)
    )  # first relevant position (argmax: first maximum)
    c = xp.reshape(L.gather(L.f(L.start), j0), (B,))
    m = xp.reshape(L.gather(L.size, j0), (B,))
    r = xp.reshape(L.gather(r_pos, j0), (B,))
    kk = float(min(k, C))
    zero = xp.zeros((B,), dtype=L.dtype, device=dev)

    def of_rank(rank):
        inside = anyrel & (rank < kk)
        if family == "RR":
            return xp.where(inside, 1.0 / (rank + 1.0), zero)
        return xp.where(inside, xp.ones_like(zero), zero)

    obl = of_rank(xp.reshape(L.f(j0), (B,)))
    best = of_rank(c)
    worst = of_rank(c + m - r)
    lf = log_factorials(xp, C, L.dtype, dev)

    def lfac(x):  # log(x!) of an integral float array (clipped at 0; callers mask what is outside)
        i = xp.astype(xp.clip(x, 0.0, float(C)), xp.int64)
        return xp.reshape(xp.take(lf, xp.reshape(i, (-1,))), x.shape)

    if family == "RR":
        t = xp.reshape(xp.astype(xp.arange(C, device=dev), L.dtype), (1, C))
        u = xp.minimum(m - r, kk - c - 1.0)
        mm, rr, cc, uu = (xp.reshape(x, (B, 1)) for x in (m, r, c, u))
        inside = anyrel[:, None] & (t <= uu)
        logp = (lfac(mm - t - 1.0) - lfac(rr - 1.0) - lfac(mm - t - rr)) - (
            lfac(mm) - lfac(rr) - lfac(mm - rr)
        )
        p = xp.where(inside, xp.exp(logp), xp.zeros_like(logp))
        inv = 1.0 / (cc + t + 1.0)
        eq = xp.sum(p * inv, axis=1)
        within = xp.sum(p, axis=1)
        past = xp.where(u >= m - r, zero, xp.clip(1.0 - within, 0.0, None))
        dv = inv - eq[:, None]
        var = xp.sum(p * dv * dv, axis=1) + past * eq * eq
        eq = xp.where(anyrel, eq, zero)
        var = xp.where(anyrel, var, zero)
        return RawStats(obl, eq, worst, best, var)
    # Success: P(no relevant document among the s positions of the group inside the cutoff)
    s = xp.clip(xp.minimum(m, kk - c), 0.0, None)
    none_ok = s <= m - r
    ss = xp.where(none_ok, s, zero)
    p_none = xp.exp(
        lfac(m - r) - lfac(xp.where(none_ok, m - r - ss, zero)) - lfac(m) + lfac(m - ss)
    )
    p_none = xp.where(s <= 0, xp.ones_like(zero), xp.where(none_ok, p_none, zero))
    e = xp.where(anyrel, 1.0 - p_none, zero)
    var = xp.where(anyrel, (1.0 - p_none) * p_none, zero)
    return RawStats(obl, e, worst, best, var)


def ap_stats(L: Layout, k: float, rel: int) -> RawStats:
    """AP@k ([`tierank.measures.ap`][tierank.measures.ap]: expectation and the exact variance of its module docstring)."""
    xp = L.xp
    B, C = L.shape
    rel_v = L.relevant(rel)
    r, before, nrel = L.counts(rel)
    m, t = L.size, L.offset
    pos1 = L.f(L.j) + 1.0
    incut = L.j < min(k, C)
    zero = xp.zeros_like(m)
    w = xp.where(incut, 1.0 / pos1, zero)

    def value(a):
        cs = xp.cumulative_sum(a, axis=1)
        return ratio(xp, L.row_sum(xp.where(incut, a * cs / pos1, zero)), nrel)

    one = xp.ones_like(m)
    frac = xp.where(m > 1, (r - 1.0) / xp.where(m > 1, m - 1.0, one), zero)
    term = xp.where(incut, r * ((before + 1.0) + t * frac) / (m * pos1), zero)
    expected = ratio(xp, L.row_sum(term), nrel)

    pw = L.prefix(w)
    W = L.gather(pw, L.end) - L.gather(pw, L.start)
    S1 = L.group_sum(t * w)
    S2 = L.group_sum(t * w * w)
    upto = pw[:, 1:] - L.gather(pw, L.start)  # the group's weights up to and including j
    D = (W - upto) + t * w
    shared = L.group_sum(D * D) - 2.0 * S2
    disjoint = S1 * S1 - S2 - shared
    u = (before + 1.0) * w + (r / m) * D
    du = u - L.group_sum(u) / m
    dD = D - L.group_sum(D) / m
    cm = central_moments(xp, r, m)
    mixed = (r > 0) & (r < m)
    var_l = xp.where(mixed, r * (m - r) / xp.where(mixed, m * (m - 1.0), one), zero) * L.group_sum(
        du * du
    )
    cov = cm["c3"] * L.group_sum(du * dD)
    var_q = cm["c22"] * S2 + cm["c211"] * shared + cm["c1111"] * disjoint
    vg = xp.where(mixed, var_l + 2.0 * cov + var_q, zero)
    var = ratio(xp, L.over_groups(vg), nrel * nrel)
    obl, opt, pess = (
        value(L.arranged(rel_v, r, w_)) for w_ in ("oblivious", "optimistic", "pessimistic")
    )
    return RawStats(obl, expected, pess, opt, var)
