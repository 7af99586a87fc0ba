r"""Exact statistics of a path sum over the orderings of a tie group: the lattice of prefix states.

A uniformly random ordering of a tie group of `m` documents is a uniformly random sequence of
its document values (a multiset permutation).  Where a measure adds, at each position `k` of the
group, a term that depends only on `k`, the value placed there and the multiset of values placed
before it, the group's contribution is a sum along a path through the *lattice* of prefix states:
the state after `k` positions is the count `c_l` of each nonzero value `l` placed so far (the
zeros placed are `k - \sum_l c_l`).  From state `c` at position `k` the next value is `l` with
probability `(C_l - c_l) / (m - k)` (`C_l` its count in the group).  A forward pass over the
positions carries, per state, moments of the partial sum restricted to that state (probability,
`E[S 1\{c\}]`, `E[S^2 1\{c\}]`, ...), which sum to the group's exact moments at the end, and a
max-plus pass carries the largest and smallest partial sum reaching each state, which gives the
group's exact extremes.

The group has `\prod_l (C_l + 1)` states (a few for graded judgments: most documents of a group
gain 0); [`Lattice`][tierank.measures.lattice.Lattice] lays the states of many groups out in one
flat array and every pass is vectorized over (group, state), one numpy step per position.
Groups with more than `MAX_STATES` states, or more than `MAX_CELLS` states x positions, are left to
the caller ([`fits`][tierank.measures.lattice.fits]).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Lattice", "MAX_STATES", "MAX_CELLS", "BATCH", "fits", "levels", "chunks"]

#: most prefix states of one group
MAX_STATES = 1 << 16
#: most states x positions of one group
MAX_CELLS = 1 << 24
#: states laid out at once (the groups of a batch are processed together)
BATCH = 1 << 17


@dataclass(frozen=True)
class Levels:
    """The nonzero values of some tie groups (``level[g, l]``, ``count[g, l]``, zero-padded) and
    the zeros of each group."""

    level: np.ndarray
    count: np.ndarray
    zeros: np.ndarray

    @property
    def states(self) -> np.ndarray:
        """Prefix states per group, `\\prod_l (C_l + 1)` (float: no overflow)."""
        return (
            np.prod(self.count + 1.0, axis=1) if self.count.shape[1] else np.ones(len(self.zeros))
        )


def levels(values: np.ndarray, first: np.ndarray, size: np.ndarray) -> Levels:
    """The [`Levels`][tierank.measures.lattice.Levels] of the groups of rows ``first[g] ..
    first[g] + size[g]`` of ``values``.

    >>> lv = levels(np.array([2.0, 0.0, 2.0, 1.0, 5.0]), np.array([0, 4]), np.array([4, 1]))
    >>> lv.level.tolist(), lv.count.tolist(), lv.zeros.tolist()
    ([[1.0, 2.0], [5.0, 0.0]], [[1, 2], [1, 0]], [1, 0])
    """
    G = len(first)
    size = np.asarray(size, dtype=np.int64)
    gl = np.repeat(np.arange(G), size)
    rows = np.repeat(np.asarray(first, dtype=np.int64) - np.cumsum(size) + size, size) + np.arange(
        len(gl)
    )
    v = values[rows]
    nz = v != 0
    gl, v = gl[nz], v[nz]
    o = np.lexsort((v, gl))
    gl, v = gl[o], v[o]
    new = np.ones(len(v), dtype=bool)
    new[1:] = (gl[1:] != gl[:-1]) | (v[1:] != v[:-1])
    at = np.flatnonzero(new)
    lg, lv = gl[at], v[at]
    cnt = np.diff(np.append(at, len(v)))
    gfirst = np.searchsorted(lg, np.arange(G))
    idx = np.arange(len(lg)) - gfirst[lg]
    L = int(idx.max()) + 1 if len(idx) else 0
    level = np.zeros((G, L))
    count = np.zeros((G, L), dtype=np.int64)
    level[lg, idx] = lv
    count[lg, idx] = cnt
    zeros = size - count.sum(axis=1)
    return Levels(level, count, zeros)


def fits(lv: Levels, steps: np.ndarray) -> np.ndarray:
    """Per group, whether its lattice is small enough (`MAX_STATES`, `MAX_CELLS` with ``steps``
    positions read)."""
    s = lv.states
    return (s <= MAX_STATES) & (s * np.maximum(steps, 1) <= MAX_CELLS)


@dataclass(frozen=True)
class Lattice:
    """The prefix states of a batch of tie groups, in one flat array (groups in order of ``steps``,
    descending, so the groups still stepping at position `k` hold a prefix of the states).

    Per group: ``m`` documents, ``steps`` positions read (``steps <= m``), ``zeros`` of value 0,
    ``level`` / ``count`` / ``stride`` of its nonzero values, ``off`` its first state.  Per state:
    ``sg`` its group, ``cnt`` the count of each level placed, ``placed`` their sum, ``total`` the
    sum of the values placed.  ``moves[l]``: (source, destination) states of placing level ``l``
    (sources ascending), with the sources' group ``move_group[l]`` and the documents of level ``l``
    not yet placed there ``move_left[l]``.
    """

    order: np.ndarray
    m: np.ndarray
    steps: np.ndarray
    zeros: np.ndarray
    level: np.ndarray
    count: np.ndarray
    off: np.ndarray
    sg: np.ndarray
    cnt: np.ndarray
    placed: np.ndarray
    total: np.ndarray
    moves: tuple[tuple[np.ndarray, np.ndarray], ...]
    move_group: tuple[np.ndarray, ...]
    move_left: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, lv: Levels, m: np.ndarray, steps: np.ndarray, order: np.ndarray) -> Lattice:
        """The lattice of the groups ``order`` (indices into ``lv``, ``m``, ``steps``; steps
        descending).

        >>> lv = levels(np.array([1.0, 0.0, 1.0]), np.array([0]), np.array([3]))
        >>> lat = Lattice.build(lv, np.array([3]), np.array([3]), np.array([0]))
        >>> lat.cnt[:, 0].tolist(), lat.total.tolist(), [d.tolist() for _, d in lat.moves]
        ([0, 1, 2], [0.0, 1.0, 2.0], [[1, 2]])
        """
        level, count = lv.level[order], lv.count[order]
        G, L = count.shape
        radix = count + 1
        stride = np.ones((G, L), dtype=np.int64)
        if L > 1:
            stride[:, 1:] = np.cumprod(radix[:, :-1], axis=1)
        nstates = np.prod(radix, axis=1) if L else np.ones(G, dtype=np.int64)
        off = np.zeros(G + 1, dtype=np.int64)
        np.cumsum(nstates, out=off[1:])
        sg = np.repeat(np.arange(G), nstates)
        local = np.arange(int(off[-1]), dtype=np.int64) - off[sg]
        cnt = (local[:, None] // stride[sg]) % radix[sg] if L else np.zeros((len(sg), 0), np.int64)
        moves, move_group, move_left = [], [], []
        for lvl in range(L):
            src = np.flatnonzero(cnt[:, lvl] < count[sg, lvl])
            g = sg[src]
            moves.append((src, src + stride[g, lvl]))
            move_group.append(g)
            move_left.append((count[g, lvl] - cnt[src, lvl]).astype(np.float64))
        return cls(
            np.asarray(order),
            np.asarray(m, dtype=np.float64)[order],
            np.asarray(steps, dtype=np.int64)[order],
            np.asarray(lv.zeros)[order],
            level,
            count,
            off,
            sg,
            cnt,
            cnt.sum(axis=1),
            (cnt * level[sg]).sum(axis=1),
            tuple(moves),
            tuple(move_group),
            tuple(move_left),
        )

    @property
    def nstates(self) -> int:
        return int(self.off[-1])

    def active(self, k: int) -> int:
        """The states of the groups still stepping at position ``k`` (a prefix)."""
        return int(self.off[int(np.searchsorted(-self.steps, -k, side="left"))])

    def group_sum(self, x: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``x`` (per state; leading axes kept) over its states."""
        return np.add.reduceat(x, self.off[:-1], axis=-1)

    def forward(
        self,
        moments: np.ndarray,
        coef: Callable[[np.ndarray, int, np.ndarray, int], tuple[np.ndarray, ...]],
        apply: Callable[[np.ndarray, tuple[np.ndarray, ...]], np.ndarray],
        extremes: np.ndarray | None = None,
        reachable_only: bool = True,
    ) -> None:
        """The forward pass, in place.  ``moments`` (rows x states) starts with each group's first
        state set.  Placing level ``l`` at position ``k`` from the reachable states ``src`` (of
        the groups ``g``) has the coefficients ``coef(src, k, g, l)``; ``apply(M, coefs)`` maps the
        sources' moments ``M`` (rows x len(src), a copy it may overwrite) to the destinations'
        (before the move's probability).  With ``extremes`` (2 x states: the largest and smallest partial sum reaching
        each state; -inf / inf where unreached), the max-plus pass too, the term of a move being
        its first coefficient.  A zero placed changes nothing but the probability.  With
        ``reachable_only`` false, ``coef`` is also called for states not reachable at ``k`` (whose
        moments are 0), which saves masking where its coefficients are finite there."""
        for k in range(int(self.steps[0]) if len(self.steps) else 0):
            n = self.active(k)
            sg = self.sg[:n]
            rem = self.m[sg] - k
            left0 = self.zeros[sg] - (k - self.placed[:n])
            pr0 = np.where(left0 > 0, left0 / rem, 0.0)
            new = moments[:, :n] * pr0
            if extremes is not None:
                ext = np.where(left0 > 0, extremes[:, :n], np.array([[-np.inf], [np.inf]]))
            for lvl, (src_all, dst_all) in enumerate(self.moves):
                j = int(np.searchsorted(src_all, n))
                if not j:
                    continue
                src, dst = src_all[:j], dst_all[:j]
                g, left = self.move_group[lvl][:j], self.move_left[lvl][:j]
                if reachable_only:
                    placed = self.placed[src]
                    ok = (placed <= k) & (k - placed <= self.zeros[g])
                    src, dst, g, left = src[ok], dst[ok], g[ok], left[ok]
                    if not len(src):
                        continue
                pr = left / rem[src]
                c = coef(src, k, g, lvl)
                moved = apply(moments[:, src], c)  # a copy: apply may work in place
                moved *= pr
                new[:, dst] += moved
                if extremes is not None:
                    ext[0, dst] = np.maximum(ext[0, dst], extremes[0, src] + c[0])
                    ext[1, dst] = np.minimum(ext[1, dst], extremes[1, src] + c[0])
            moments[:, :n] = new
            if extremes is not None:
                extremes[:, :n] = ext


def chunks(states: np.ndarray, steps: np.ndarray, batch: int = BATCH) -> Iterator[np.ndarray]:
    """The groups (indices, ``steps`` descending) in batches of at most ``batch`` states (a group
    larger than that alone)."""
    order = np.argsort(-np.asarray(steps), kind="stable")
    cs = np.cumsum(np.asarray(states, dtype=np.float64)[order])
    i = 0
    while i < len(order):
        base = cs[i - 1] if i else 0.0
        j = max(int(np.searchsorted(cs, base + batch, side="right")), i + 1)
        yield order[i:j]
        i = j
