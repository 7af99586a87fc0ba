r"""The tie-aware kernels over padded ``[queries, candidates]`` arrays, written once against the
Python array API standard (the namespace of `array_api_compat.array_namespace`).

They evaluate the closed forms of `tierank.measures` (the module docstrings of
[`tierank.measures.linear`][tierank.measures.linear], [`tierank.measures.rank`][tierank.measures.rank], [`tierank.measures.ap`][tierank.measures.ap],
[`tierank.measures.bpref`][tierank.measures.bpref], [`tierank.measures.err`][tierank.measures.err] and [`tierank.measures.unjudged`][tierank.measures.unjudged] derive
them, and write the formulas both layouts call) in a dense layout instead of the flat run of [`tierank.ties.Prepared`][tierank.ties.Prepared]:

* each row is sorted by score, descending (a stable sort, so the tie-oblivious order keeps the input
  order, or its reverse, inside ties); valid candidates first, the padding after them in a block of
  its own (it never ties with a valid candidate and carries no relevance or gain);
* the tie groups are found once per chunk, shared by every measure, in work proportional to the
  chunk: a position is *tied* when it or its neighbour continues a run of equal scores (two
  comparisons of neighbours, no search);
* a measure's value under the tie-oblivious order is a dense row sum; everything an ordering of the
  ties can change (expected value, min, max, variance) is computed on the *tied* positions alone,
  gathered into one flat array ([`Ties`][tierank.tensor.kernels.Ties]), where a per-group or
  per-row sum is a segmented prefix sum over the runs (`log2` of the longest run steps of
  shift-and-add, each summing inside one group or row only, so no sum mixes magnitudes of other
  queries);
* counts (relevant documents, group sizes, integer grades) stay exact integers in floating point;
  sums of squared deviations are taken about the group's own mean or first value (two passes), so a
  group that no ordering can change adds exactly 0 and a measure that cannot vary has std exactly 0.

No loop runs over queries or candidates: the only Python loops are over measures, over chunks of
rows (`tierank.tensor.evaluate`) and over the ``log2`` steps of a segmented sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import TierankInputError
from ..measures import ap, bpref, err, unjudged
from ..measures.kernels import central_moments_in as central_moments
from ..measures.rank import offset_log_prob, success_moments

__all__ = [
    "Layout",
    "Ties",
    "layout",
    "linear_stats",
    "first_relevant_stats",
    "ap_stats",
    "bpref_stats",
    "err_stats",
    "rbp_resid_stats",
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


def _device(x):
    from array_api_compat import device

    return device(x)


def _gather_rows(xp, x, idx):
    """``x[row, idx[row, col]]`` (non-negative ``idx``): the namespace's own gather where it has
    one without the standard's negative-index handling (PyTorch), else ``take_along_axis``."""
    from array_api_compat import is_torch_namespace

    if is_torch_namespace(xp):
        import torch

        return torch.take_along_dim(x, idx, dim=1)
    return xp.take_along_axis(x, idx, axis=1)


def _argsort_rows(xp, key):
    """An order of each row by ``key``, descending, in any order inside ties: NumPy's (and, on the
    CPU, PyTorch's through a zero-copy NumPy view) vectorised unstable sort, else the namespace's."""
    from array_api_compat import is_numpy_namespace, is_torch_namespace

    if is_numpy_namespace(xp):
        import numpy as np

        return np.argsort(-key, axis=1)
    if is_torch_namespace(xp) and key.device.type == "cpu":
        import numpy as np
        import torch

        return torch.from_numpy(np.argsort(-key.numpy(), axis=1))
    return xp.argsort(key, axis=1, descending=True, stable=False)


def ratio(xp, num, den):
    """``num / den`` where ``den > 0``, else 0 (one division: a ratio of equal counts is 1 exactly)."""
    pos = den > 0
    return xp.where(pos, num / xp.where(pos, den, xp.ones_like(den)), xp.zeros_like(num))


def segmented_scan(xp, x, offset, longest: int):
    """Inclusive prefix sums of ``x`` (``[n]`` or ``[n, k]``) along axis 0 inside runs: ``offset``
    ``[n]`` is each entry's offset in its run, ``longest`` the largest offset.  Shift-and-add in
    ``ceil(log2(longest + 1))`` steps; a sum never crosses the start of a run."""
    n = int(x.shape[0])
    step = 1
    cond = offset if len(x.shape) == 1 else offset[:, None]
    while step <= longest and step < n:
        pad = xp.zeros((step, *x.shape[1:]), dtype=x.dtype, device=_device(x))
        shifted = xp.concat([pad, x[: n - step, ...]], axis=0)
        x = xp.where(cond >= step, x + shifted, x)
        step *= 2
    return x


@dataclass
class Ties:
    """The tied positions of a chunk (valid candidates in tie groups of two or more), in sorted
    order (row by row, position by position), as one flat array of ``n`` entries: everything a tie
    ordering can change is computed here.  Arrays are ``[n]``."""

    xp: Any
    dtype: Any
    rows: int
    cols: int
    flat: Any  # int64: index of the position in the flattened [B, C] chunk
    row: Any  # int64: the row
    pos: Any  # int64: the position in the row (0-based rank)
    offset_i: Any  # int64: t, the offset in the tie group
    t: Any  # compute dtype: t
    m: Any  # compute dtype: the group's size
    gstart: Any  # int64: index (in the flat tied array) of the group's first entry
    gend: Any  # int64: one past the group's last entry
    first: Any  # bool: the entry starts its group
    longest: int  # the largest offset in a group
    row_offset: Any  # int64: offset in the row's run of tied entries
    row_longest: int
    row_last: Any  # int64 [B]: index of each row's last tied entry (0 for a row without one)
    row_has: Any  # bool [B]: the row has tied entries

    @property
    def n(self) -> int:
        return int(self.flat.shape[0])

    def take(self, dense):
        """The tied entries of a dense ``[B, C]`` array, or of a ``[1, C]`` per-position one."""
        xp = self.xp
        if int(dense.shape[0]) == 1 and self.rows != 1:
            return xp.take(xp.reshape(dense, (-1,)), self.pos)
        dense = xp.broadcast_to(dense, (self.rows, self.cols))
        return xp.take(xp.reshape(dense, (-1,)), self.flat)

    def group_scan(self, x):
        """Inclusive prefix sums of ``x`` inside each tie group."""
        return segmented_scan(self.xp, x, self.offset_i, self.longest)

    def group_total(self, x):
        """Per entry, the sum of ``x`` over the entry's tie group."""
        if self.n == 0:
            return x
        return self.xp.take(self.group_scan(x), self.gend - 1, axis=0)

    def at_start(self, x):
        """Per entry, ``x`` at the entry's group's first entry."""
        return self.xp.take(x, self.gstart, axis=0)

    def row_total(self, x):
        """Per row (``[B]``, or ``[B, k]`` for ``x`` of ``[n, k]``), the sum of ``x`` over its tied
        entries (0 for a row without ties)."""
        xp = self.xp
        shape = (self.rows, *x.shape[1:])
        if self.n == 0:
            return xp.zeros(shape, dtype=x.dtype, device=_device(x))
        s = segmented_scan(xp, x, self.row_offset, self.row_longest)
        v = xp.take(s, self.row_last, axis=0)
        has = self.row_has if len(shape) == 1 else self.row_has[:, None]
        return xp.where(has, v, xp.zeros_like(v))

    def sorted_values(self, v):
        """Graded values ``v`` (``[n]``) arranged optimistic and pessimistic (each group's values
        sorted descending / ascending): two stable argsorts of the tied entries, then the
        pessimistic as the optimistic reversed inside each group."""
        xp = self.xp
        if self.n == 0:
            return v, v
        p1 = xp.argsort(v, descending=True, stable=True)
        gid = xp.take(self.gstart, p1)  # group starts increase with the group: a sort key
        p2 = xp.argsort(gid, stable=True)
        opt = xp.take(xp.take(v, p1), p2)
        idx = xp.arange(self.n, dtype=xp.int64, device=_device(v))
        pess = xp.take(opt, self.gstart + self.gend - 1 - idx)
        return opt, pess


def _ties(xp, first, tied, dtype) -> Ties:
    B, C = (int(d) for d in tied.shape)
    dev = _device(tied)
    flat = xp.nonzero(xp.reshape(tied, (-1,)))[0]
    flat = xp.astype(flat, xp.int64)
    n = int(flat.shape[0])
    i64 = xp.int64
    idx = xp.arange(n, dtype=i64, device=dev)
    starts_flag = xp.take(xp.reshape(first, (-1,)), flat)
    gs = xp.astype(xp.nonzero(starts_flag)[0], i64)
    gid = xp.cumulative_sum(xp.astype(starts_flag, i64)) - 1
    gid = xp.clip(gid, 0, None)
    if n:
        gstart = xp.take(gs, gid)
        gend = xp.take(xp.concat([gs[1:], xp.asarray([n], dtype=i64, device=dev)]), gid)
    else:
        gstart = gend = idx
    offset = idx - gstart
    row = flat // C
    pos = flat - row * C
    if n:
        rnew = xp.concat([xp.ones((1,), dtype=xp.bool, device=dev), row[1:] != row[:-1]])
        rs = xp.astype(xp.nonzero(rnew)[0], i64)
        rid = xp.cumulative_sum(xp.astype(rnew, i64)) - 1
        row_offset = idx - xp.take(rs, rid)
        last = xp.searchsorted(row, xp.arange(B, dtype=i64, device=dev), side="right") - 1
        safe = xp.clip(last, 0, None)
        has = (last >= 0) & (xp.take(row, safe) == xp.arange(B, dtype=i64, device=dev))
        longest = int(xp.max(offset))
        row_longest = int(xp.max(row_offset))
    else:
        row_offset = idx
        safe = xp.zeros((B,), dtype=i64, device=dev)
        has = xp.zeros((B,), dtype=xp.bool, device=dev)
        longest = row_longest = 0
    return Ties(
        xp=xp,
        dtype=dtype,
        rows=B,
        cols=C,
        flat=flat,
        row=row,
        pos=pos,
        offset_i=offset,
        t=xp.astype(offset, dtype),
        m=xp.astype(gend - gstart, dtype),
        gstart=gstart,
        gend=gend,
        first=offset == 0,
        longest=longest,
        row_offset=row_offset,
        row_longest=row_longest,
        row_last=safe,
        row_has=has,
    )


@dataclass
class Layout:
    """One chunk of rows laid out in score order (all arrays ``[B, C]`` unless said otherwise, in
    sorted order) with its tie groups, found once and shared by every measure."""

    xp: Any
    dtype: Any  # the compute dtype (a real floating dtype of ``xp``)
    valid: Any  # bool
    label: Any  # labels in the compute dtype, 0 where invalid
    tied: Any  # bool: a valid position in a tie group of two or more
    j: Any  # int64 [1, C]: the position
    ties: Ties  # the tied positions, flat
    rel: int
    n_relevant: Any = None  # [B] given N+ at ``rel`` (None: counted from the labels)
    cache: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.valid.shape)

    def row_sum(self, x):
        return self.xp.sum(x, axis=1)

    def f(self, x):
        return self.xp.astype(x, self.dtype)

    @property
    def jf(self):
        """The positions ``[1, C]`` in the compute dtype."""
        if "jf" not in self.cache:
            self.cache["jf"] = self.f(self.j)
        return self.cache["jf"]

    def untied(self, x):
        """``x`` (``[1 or B, C]``) with the tied positions set to 0."""
        return self.xp.where(self.tied, self.xp.zeros_like(x), x)

    def relevant(self, rel: int):
        """Binary relevance at ``rel`` (float, 0/1) per position."""
        key = ("rel", rel)
        if key not in self.cache:
            self.cache[key] = self.f(self.valid & (self.label >= rel))
        return self.cache[key]

    def nrel(self, rel: int):
        """N+ at ``rel`` per row: ``n_relevant`` where given, else counted."""
        if self.n_relevant is not None:
            return self.n_relevant
        key = ("nrel", rel)
        if key not in self.cache:
            self.cache[key] = self.row_sum(self.relevant(rel))
        return self.cache[key]

    def tied_relevant(self, rel: int):
        """On the tied entries: (relevance 0/1, relevant in the entry's group ``r``)."""
        key = ("tied_rel", rel)
        if key not in self.cache:
            a = self.ties.take(self.relevant(rel))
            self.cache[key] = (a, self.ties.group_total(a))
        return self.cache[key]

    def tied_share(self):
        """Per row: valid candidates in tie groups of two or more / valid candidates (0 if none)."""
        n = self.row_sum(self.f(self.valid))
        tied = self.row_sum(self.f(self.tied))
        return ratio(self.xp, tied, n)


def layout(
    xp, scores, labels, valid, *, dtype, tie_break: str, rel: int, n_relevant=None
) -> Layout:
    """Sort every row by score (valid candidates first), find the tie groups; ``tie_break``
    ``input`` keeps the input order inside ties, ``reverse`` reverses it."""
    B, C = (int(d) for d in scores.shape)
    dev = _device(scores)
    s = xp.astype(scores, dtype)
    lab = xp.astype(labels, dtype)
    if tie_break == "reverse":
        s, lab, valid = xp.flip(s, axis=1), xp.flip(lab, axis=1), xp.flip(valid, axis=1)
    every = bool(xp.all(valid))
    stable = False
    if every:
        key = s
    else:
        ninf = xp.asarray(-math.inf, dtype=dtype, device=dev)
        key = xp.where(valid, s, ninf)
        stable = bool(xp.any(valid & (s == ninf)))
    if stable:
        # a valid score of -inf would tie with the padding: valid candidates first, then by score
        p0 = xp.argsort(xp.astype(~valid, xp.int8), axis=1, stable=True)
        p1 = xp.argsort(_gather_rows(xp, key, p0), axis=1, descending=True, stable=True)
        order = _gather_rows(xp, p0, p1)
    else:
        order = _argsort_rows(xp, key)  # any order inside ties: restored below
    ks = _gather_rows(xp, key, order)
    vs = valid if every else _gather_rows(xp, valid, order)
    diff = ks[:, 1:] != ks[:, :-1]
    if not every:
        diff = diff | (vs[:, 1:] != vs[:, :-1])
    edge = xp.ones((B, 1), dtype=xp.bool, device=dev)
    first = xp.concat([edge, diff], axis=1)  # the position starts its group
    last = xp.concat([diff, edge], axis=1)  # the position ends its group
    tied = ~(first & last)
    if not every:
        tied = tied & vs
    ties = _ties(xp, first, tied, dtype)
    if not stable and ties.n:
        # inside each tie group, the candidates in their input order (what a stable sort gives):
        # one sort of the tied entries by (group, input position), written back by a gather
        orig = xp.take(xp.reshape(order, (-1,)), ties.flat)
        fixed = xp.take(orig, xp.argsort(ties.gstart * C + orig))
        rank = xp.cumulative_sum(xp.reshape(xp.astype(tied, xp.int64), (-1,))) - 1
        back = xp.take(fixed, xp.clip(rank, 0, None))
        order = xp.where(tied, xp.reshape(back, (B, C)), order)
    ls = _gather_rows(xp, lab, order)
    if not every:
        ls = xp.where(vs, ls, xp.zeros_like(ls))
    j = xp.reshape(xp.arange(C, dtype=xp.int64, device=dev), (1, C))
    return Layout(
        xp=xp,
        dtype=dtype,
        valid=vs,
        label=ls,
        tied=tied,
        j=j,
        ties=ties,
        rel=rel,
        n_relevant=n_relevant,
    )


def value_moments(T: Ties, v):
    """Per tied entry: the group's sum of the values ``v`` and their sum of squared deviations,
    about the group's first value (integer values: exact shifted integer sums and one division, as
    [`tierank.measures.kernels.group_moments`][tierank.measures.kernels.group_moments]; others two passes).  Exactly 0 for a group
    whose values are all equal."""
    xp = T.xp
    s1 = T.group_total(v)
    d = v - T.at_start(v)
    s1d = T.group_total(d)
    if bool(xp.all(v == xp.floor(v))):
        s2d = T.group_total(d * d)
        return s1, (T.m * s2d - s1d * s1d) / T.m
    dev = d - s1d / T.m
    return s1, T.group_total(dev * dev)


def _scale(xp, x, den, power=1):
    if den is None:
        return x
    d = den if not isinstance(den, (int, float)) else xp.full_like(x, float(den))
    return ratio(xp, x, d**power if power != 1 else d)


def linear_stats(L: Layout, w, a, den, *, binary_rel: int | None = None) -> RawStats:
    """Statistics of ``sum_j w_j a_j / den`` (`tierank.measures.linear.Linear`): ``w`` ``[1 or B, C]``
    position weights (0 past the cutoff), ``a`` ``[B, C]`` the document values in sorted order (0
    where invalid), ``den`` ``[B]``, a number or None.  ``binary_rel``: ``a`` is the relevance at
    that grade (0/1), whose arrangements and moments are counts."""
    xp = L.xp
    T = L.ties
    wa = w * a
    obl = L.row_sum(wa)
    if T.n == 0:
        zero = xp.zeros_like(obl)
        return RawStats(*(_scale(xp, obl, den),) * 4, zero)
    base = L.row_sum(L.untied(wa))
    wc = T.take(w)
    if binary_rel is not None:
        ac, r = L.tied_relevant(binary_rel)
        s1 = r
        ss_a = r * (T.m - r) / T.m
        one = xp.ones_like(T.t)
        zero_c = xp.zeros_like(T.t)
        opt = xp.where(T.t < r, one, zero_c)
        pess = xp.where(T.t >= T.m - r, one, zero_c)
    else:
        ac = T.take(a)
        s1, ss_a = value_moments(T, ac)
        opt, pess = T.sorted_values(ac)
    sw = T.group_total(wc)
    dev = wc - sw / T.m
    ss_w = T.group_total(dev * dev)
    # Var = sum over groups ss_a * ss_w / (m - 1), ss_w about the group's mean weight (two passes)
    vary = T.first & (ss_a > 0)
    zero_c = xp.zeros_like(T.t)
    vg = xp.where(vary, ss_a * ss_w / (T.m - 1.0), zero_c)
    eg = xp.where(T.first, s1 * sw / T.m, zero_c)
    tot = T.row_total(xp.stack([eg, wc * opt, wc * pess, vg], axis=1))
    expected = _scale(xp, base + tot[:, 0], den)
    hi = _scale(xp, base + tot[:, 1], den)
    lo = _scale(xp, base + tot[:, 2], den)
    var = _scale(xp, tot[:, 3], den, power=2)
    return RawStats(_scale(xp, obl, den), expected, lo, hi, var)


def log_factorials(xp, n: int, dtype, device):
    """``lf[i] = log(i!)``, i = 0..n ([`tierank.measures.kernels.log_factorials`][tierank.measures.kernels.log_factorials])."""
    return xp.cumulative_sum(
        xp.log(xp.arange(1, n + 1, dtype=dtype, device=device)), include_initial=True
    )


def first_relevant_group(L: Layout, rel: int):
    """Per row: (any relevant, first relevant position ``j0``, the rank ``c`` where its tie group
    starts, the group's size ``m`` and relevant documents ``r``), all ``[B]``."""
    key = ("first_group", rel)
    if key in L.cache:
        return L.cache[key]
    xp = L.xp
    B, C = L.shape
    T = L.ties
    dev = _device(L.valid)
    rel_v = L.relevant(rel)
    anyrel = xp.max(rel_v, axis=1) > 0
    j0 = xp.astype(xp.argmax(rel_v, axis=1), xp.int64)  # argmax: the first maximum
    c, m, r = (
        L.f(j0),
        xp.ones((B,), dtype=L.dtype, device=dev),
        xp.ones((B,), dtype=L.dtype, device=dev),
    )
    if T.n:
        _, r_c = L.tied_relevant(rel)
        p0 = xp.arange(B, dtype=xp.int64, device=dev) * C + j0
        idx = xp.clip(xp.searchsorted(T.flat, p0), 0, T.n - 1)
        hit = xp.take(T.flat, idx) == p0
        c = xp.where(hit, c - xp.take(T.t, idx), c)
        m = xp.where(hit, xp.take(T.m, idx), m)
        r = xp.where(hit, xp.take(r_c, idx), r)
    L.cache[key] = (anyrel, j0, c, m, r)
    return L.cache[key]


def first_relevant_stats(L: Layout, family: str, k: float, rel: int) -> RawStats:
    """RR@k and Success@k ([`tierank.measures.rank`][tierank.measures.rank]): only the first tie group holding a relevant
    document matters; the offset of the first relevant document in it is negative hypergeometric."""
    xp = L.xp
    B, C = L.shape
    dev = _device(L.valid)
    anyrel, j0, c, m, r = first_relevant_group(L, rel)
    kk = float(min(k, C))
    zero = xp.zeros((B,), dtype=L.dtype, device=dev)

    def of_rank(rank):
        inside = anyrel & (rank < kk)
        if family == "RR":
            return xp.where(inside, 1.0 / (rank + 1.0), zero)
        return xp.where(inside, xp.ones_like(zero), zero)

    obl = of_rank(L.f(j0))
    best = of_rank(c)
    worst = of_rank(c + m - r)
    lf = log_factorials(xp, C, L.dtype, dev)

    def lfac(x):  # log(x!) of an integral float array (clipped at 0; callers mask what is outside)
        i = xp.astype(xp.clip(x, 0.0, float(C)), xp.int64)
        return xp.reshape(xp.take(lf, xp.reshape(i, (-1,))), x.shape)

    if family == "RR":
        u = xp.minimum(m - r, kk - c - 1.0)
        # the offsets that matter: 0 .. the largest u over the rows with a relevant document
        width = int(xp.max(xp.where(anyrel, u, xp.full_like(u, -1.0)))) + 1 if B else 0
        width = min(max(width, 1), C)
        t = xp.reshape(xp.astype(xp.arange(width, device=dev), L.dtype), (1, width))
        mm, rr, cc, uu = (xp.reshape(x, (B, 1)) for x in (m, r, c, u))
        inside = anyrel[:, None] & (t <= uu)
        logp = offset_log_prob(lfac, mm, rr, t)
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
    e, var = success_moments(xp, lfac, m, r, c, kk)
    e = xp.where(anyrel, e, zero)
    var = xp.where(anyrel, var, zero)
    return RawStats(obl, e, worst, best, var)


def ap_stats(L: Layout, k: float, rel: int) -> RawStats:
    """AP@k ([`tierank.measures.ap`][tierank.measures.ap]: expectation and the exact variance of its module docstring)."""
    xp = L.xp
    B, C = L.shape
    T = L.ties
    a = L.relevant(rel)
    nrel = L.nrel(rel)
    kk = min(k, C)
    pos1 = L.jf + 1.0
    incut = L.j < kk
    cs = xp.cumulative_sum(a, axis=1)
    terms = xp.where(incut, a * cs / pos1, xp.zeros_like(a))
    obl = ratio(xp, L.row_sum(terms), nrel)
    if T.n == 0:
        zero = xp.zeros_like(obl)
        return RawStats(obl, obl, obl, obl, zero)
    base = L.row_sum(L.untied(terms))
    ac, r = L.tied_relevant(rel)
    m, t = T.m, T.t
    zero = xp.zeros_like(m)
    before = T.take(cs) - T.group_scan(ac)  # relevant documents ranked before the group: exact
    p1 = xp.astype(T.pos, L.dtype) + 1.0
    inc = T.pos < kk
    w = xp.where(inc, 1.0 / p1, zero)
    frac = (r - 1.0) / (m - 1.0)  # a tie group has m >= 2
    e_t = xp.where(inc, r * ((before + 1.0) + t * frac) / (m * p1), zero)
    hi_t = xp.where(inc & (t < r), (before + t + 1.0) / p1, zero)
    lo_t = xp.where(inc & (t >= m - r), (before + t - (m - r) + 1.0) / p1, zero)

    vg = ap.group_variance(xp, T.group_total, T.group_scan, t, w, m, r, before, zero)
    mixed = (r > 0) & (r < m)
    vg = xp.where(mixed & T.first, vg, zero)
    tot = T.row_total(xp.stack([e_t, hi_t, lo_t, vg], axis=1))
    expected = ratio(xp, base + tot[:, 0], nrel)
    hi = ratio(xp, base + tot[:, 1], nrel)
    lo = ratio(xp, base + tot[:, 2], nrel)
    var = ratio(xp, tot[:, 3], nrel * nrel)
    return RawStats(obl, expected, lo, hi, var)


def bpref_stats(L: Layout, rel: int) -> RawStats:
    """bpref ([`tierank.measures.bpref`][tierank.measures.bpref]) with the labels as judgments: a label >= ``rel`` relevant,
    ``0 <= label < rel`` judged non-relevant, a negative one unjudged (skipped); ``R`` and ``N-``
    counted from the labels.  Only the tie groups holding a relevant document add terms; their
    statistics are [`tierank.measures.bpref.group_moments`][tierank.measures.bpref.group_moments]."""
    xp = L.xp
    T = L.ties
    rel_v = L.relevant(max(rel, 0))
    non_v = L.f(L.valid & (L.label >= 0) & (L.label < rel))
    R = L.row_sum(rel_v)
    D = xp.minimum(L.row_sum(non_v), R)
    above = xp.cumulative_sum(non_v, axis=1) - non_v  # judged non-relevant ranked above
    terms = rel_v * bpref.preference(xp, above, R[:, None], D[:, None])
    obl = ratio(xp, L.row_sum(terms), R)
    if T.n == 0:
        zero = xp.zeros_like(obl)
        return RawStats(obl, obl, obl, obl, zero)
    base = L.row_sum(L.untied(terms))
    r = T.group_total(T.take(rel_v))
    s = T.group_total(T.take(non_v))
    before = T.at_start(T.take(above))
    Rc, Dc = xp.take(R, T.row), xp.take(D, T.row)
    e_g, v_g = bpref.group_moments(xp, r, s, before, Rc, Dc)
    zero = xp.zeros_like(r)
    head = T.first & (r > 0)
    best = r * bpref.preference(xp, before, Rc, Dc)
    worst = r * bpref.preference(xp, before + s, Rc, Dc)
    parts = [xp.where(head, x, zero) for x in (e_g, best, worst, v_g)]
    tot = T.row_total(xp.stack(parts, axis=1))
    expected = ratio(xp, base + tot[:, 0], R)
    hi = ratio(xp, base + tot[:, 1], R)
    lo = ratio(xp, base + tot[:, 2], R)
    var = ratio(xp, tot[:, 3], R * R)
    return RawStats(obl, expected, lo, hi, var)


def _to_dense(L: Layout, tied_values, dense):
    """``dense`` (``[B, C]``) with its tied positions replaced by ``tied_values`` (``[n]``, in the
    order of the tied entries): a gather by each position's rank among the tied ones."""
    xp = L.xp
    T = L.ties
    B, C = L.shape
    rank = xp.cumulative_sum(xp.reshape(xp.astype(L.tied, xp.int64), (-1,))) - 1
    back = xp.reshape(xp.take(tied_values, xp.clip(rank, 0, T.n - 1)), (B, C))
    return xp.where(L.tied, back, dense)


def _at_heads(T: Ties, heads, values):
    """Per tied entry: ``values[i]`` at the ``i``-th entry of ``heads`` (bool ``[n]``), else 0."""
    xp = T.xp
    rank = xp.cumulative_sum(xp.astype(heads, xp.int64)) - 1
    n = int(values.shape[0])
    got = xp.take(values, xp.clip(rank, 0, max(n - 1, 0)), axis=0) if n else None
    zero = xp.zeros((T.n, *values.shape[1:]), dtype=values.dtype, device=_device(values))
    if got is None:
        return zero
    cond = heads if len(values.shape) == 1 else heads[:, None]
    return xp.where(cond, got, zero)


def _err_group_moments(L: Layout, q, n_nz, start_nz, m, c, T_in) -> tuple[Any, Any]:
    """[`tierank.measures.err.group_moments`][tierank.measures.err.group_moments] of the mixed tie groups (one entry each), batched by
    ``(J, T)`` as the run layout batches them: ``q`` the ``1 - R`` of the tied entries with
    ``R > 0`` in order, ``start_nz`` each group's first of them."""
    xp = L.xp
    _, C = L.shape
    dev = _device(q)
    G = int(m.shape[0])
    lf = log_factorials(xp, C + 1, L.dtype, dev)

    def lfac(x):
        i = xp.astype(xp.clip(x, 0.0, float(C + 1)), xp.int64)
        return xp.reshape(xp.take(lf, xp.reshape(i, (-1,))), x.shape)

    J = xp.minimum(n_nz, T_in)
    keys = xp.astype(J, xp.int64) * (C + 2) + xp.astype(T_in, xp.int64)
    sels, es, e2s = [], [], []
    nq = int(q.shape[0])
    for key in sorted({int(v) for v in xp.unique_values(keys)}):
        Jb, Tb = divmod(key, C + 2)
        sel = xp.nonzero(keys == key)[0]
        sels.append(sel)
        if Jb <= 0 or Tb <= 0:
            zero = xp.zeros((int(sel.shape[0]),), dtype=L.dtype, device=dev)
            es.append(zero)
            e2s.append(zero)
            continue
        n_p = xp.take(n_nz, sel)
        nmax = int(xp.max(n_p))
        j = xp.reshape(xp.arange(nmax, dtype=xp.int64, device=dev), (1, nmax))
        idx = xp.reshape(xp.take(start_nz, sel), (-1, 1)) + j
        inside = j < xp.reshape(xp.astype(n_p, xp.int64), (-1, 1))
        picked = xp.take(q, xp.reshape(xp.clip(idx, 0, nq - 1), (-1,)))
        Q = xp.where(inside, xp.reshape(picked, idx.shape), xp.ones_like(picked[0]))
        e, e2 = err.group_moments(xp, lfac, Q, n_p, xp.take(m, sel), xp.take(c, sel), Jb, Tb)
        es.append(e)
        e2s.append(e2)
    if not sels:
        zero = xp.zeros((G,), dtype=L.dtype, device=dev)
        return zero, zero
    order = xp.argsort(xp.concat(sels))
    return xp.take(xp.concat(es), order), xp.take(xp.concat(e2s), order)


def err_stats(L: Layout, k: float, max_grade: int, name: str = "ERR") -> RawStats:
    """ERR@k ([`tierank.measures.err`][tierank.measures.err]): the oblivious value and the extremes (each group's grades
    sorted) as dense cascades; the expectation and variance of each tie group whose grades differ
    from [`tierank.measures.err.group_moments`][tierank.measures.err.group_moments], times the (order-free) product over the documents
    above it."""
    xp = L.xp
    B, C = L.shape
    T = L.ties
    kk = min(k, C)
    incut = L.j < kk
    gain = xp.where(L.valid, xp.clip(L.label, 0.0, None), xp.zeros_like(L.label))
    read = L.valid & incut
    if B and bool(xp.any(read & (gain > max_grade))):
        top = float(xp.max(xp.where(read, gain, xp.zeros_like(gain))))
        raise TierankInputError(
            f"measure {name!r}: a candidate has grade {top:g}, above the largest grade {max_grade} "
            f"(gdeval's MAX_JUDGMENT); use ERR(max_grade=...)"
        )
    pow2 = xp.exp2(gain) if hasattr(xp, "exp2") else xp.pow(2.0, gain)
    R = (pow2 - 1.0) / 2.0**max_grade
    w = xp.where(incut, 1.0 / (L.jf + 1.0), xp.zeros_like(L.jf))

    def cascade(r):
        lq = xp.log1p(-r)
        decay = xp.exp(xp.cumulative_sum(lq, axis=1) - lq)
        return w * r * decay, decay

    terms, decay = cascade(R)
    obl = L.row_sum(terms)
    if T.n == 0:
        zero = xp.zeros_like(obl)
        return RawStats(obl, obl, obl, obl, zero)
    rc = T.take(R)
    opt, pess = T.sorted_values(rc)
    hi = L.row_sum(cascade(_to_dense(L, opt, R))[0])
    lo = L.row_sum(cascade(_to_dense(L, pess, R))[0])
    mixed = T.at_start(opt) != T.at_start(pess)  # the group's largest and smallest R differ
    fixed = L.row_sum(
        xp.where(_to_dense(L, mixed, xp.zeros_like(L.tied)), xp.zeros_like(terms), terms)
    )
    heads = T.first & mixed & (T.pos < kk)
    if not bool(xp.any(heads)):
        zero = xp.zeros_like(obl)
        return RawStats(obl, fixed, lo, hi, zero)
    nz = rc > 0
    nzf = xp.astype(nz, L.dtype)
    hix = xp.nonzero(heads)[0]
    m = xp.take(T.m, hix)
    c = xp.astype(xp.take(T.pos, hix), L.dtype)
    T_in = xp.minimum(m, kk - c)
    n_nz = xp.take(T.group_total(nzf), hix)
    start_nz = xp.take(xp.cumulative_sum(xp.astype(nz, xp.int64)) - xp.astype(nz, xp.int64), hix)
    q = xp.take(1.0 - rc, xp.nonzero(nz)[0])
    ex, ex2 = _err_group_moments(L, q, n_nz, start_nz, m, c, T_in)
    p_before = xp.take(xp.reshape(decay, (-1,)), xp.take(T.flat, hix))
    spread = xp.clip(ex2 - ex * ex, 0.0, None)
    per = xp.stack([p_before * ex, p_before * p_before * spread], axis=1)
    tot = T.row_total(_at_heads(T, heads, per))
    return RawStats(obl, fixed + tot[:, 0], lo, hi, tot[:, 1])


def rbp_resid_stats(L: Layout, weights, p: float) -> RawStats:
    """RBP_resid ([`tierank.measures.unjudged`][tierank.measures.unjudged]) with a negative label unjudged: the positional sum
    `X` of the unjudged candidates ([`linear_stats`][tierank.tensor.kernels.linear_stats], RBP's ``weights``), `c = p^n` of the
    ``n`` candidates, then [`tierank.measures.unjudged.residual_stats`][tierank.measures.unjudged.residual_stats] (no depth limit: whether an
    unjudged candidate is read does not vary, `P_0` is 0 or 1)."""
    xp = L.xp
    u = L.f(L.valid & (L.label < 0))
    x = linear_stats(L, weights, u, None)
    c = p ** L.row_sum(L.f(L.valid))
    p0 = L.f(L.row_sum(u) == 0)
    out = unjudged.residual_stats(xp, x.oblivious, x.expected, x.min, x.max, x.var, c, p0)
    return RawStats(*out)
