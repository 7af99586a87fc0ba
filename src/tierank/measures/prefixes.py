r"""Several rank cutoffs of one family in one pass over the run ([`Prefixes`][tierank.measures.prefixes.Prefixes]).

A measure at cutoff $k$ reads the first $\min(k, n_q)$ rows of each query; its sums
are sums over those rows (the oblivious, optimistic and pessimistic values, a row-wise
expectation) or over the tie groups they hold (a group-wise expectation, the variance),
the last group possibly cut by $k$.  For a batch of cutoffs of one family the rows
are read once, up to the largest cutoff of each query: per-row terms are cumulated
inside each query and read at each cutoff's last row; per-group terms of whole groups
are cumulated over each query's groups, and the group a cutoff cuts through is
computed apart from its rows inside that cutoff.

Every sum is the float a per-query ``bincount`` over the same rows gives (sequential from 0.0,
in row order), whichever way [`prefix_sums`][tierank.measures.prefixes.prefix_sums] takes: running sums per query, read at each
cutoff, or the cutoffs of each query in increasing order, the sum up to a cutoff being the sum
up to the one before plus the rows between them, in order (integer counts, exact in float64,
by any order).  So each cutoff's sums are the same floats, bit for bit, as those of its measure
computed alone, and measures reading the same rows (P@5 and R@5) are summed once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np

from ..ties import Prepared, running_count

__all__ = ["Prefixes", "prefix_sums", "ranges", "row_counts", "segment_cumsum", "starts_of"]


def row_counts(prep: Prepared, cutoff: float | np.ndarray) -> np.ndarray:
    """Per query, the rows of ``prep`` at ranks below ``cutoff`` (a number, or one per query),
    capped by the depth limit (``Prepared.cut``): a query's rows are its ranks 0, 1, ...

    >>> from tierank.ties import Prepared
    >>> p = Prepared(["a", "b"], np.array([0, 3, 4]), np.array([0, 0, 0, 1]), np.array([0, 1, 2, 0]),
    ...              np.arange(4), np.arange(5), np.zeros(4), (np.zeros(0), np.zeros(0)), 1,
    ...              np.array([3, 1]))
    >>> row_counts(p, 2).tolist(), row_counts(p, float("inf")).tolist(), row_counts(p, np.array([0.5, 0])).tolist()
    ([2, 1], [3, 1], [1, 0])
    """
    qlen = np.diff(prep.qstart)
    if isinstance(cutoff, np.ndarray):
        k = np.minimum(cutoff, prep.max_depth)
    else:
        k = prep.cut(cutoff)
    # rank p < k for an integer p exactly when p < ceil(k)
    return np.minimum(qlen, np.maximum(np.ceil(k), 0.0)).astype(np.int64)


def ranges(first: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The indices ``first[i], first[i] + 1, ..., first[i] + lens[i] - 1`` for each ``i``, in order.

    >>> ranges(np.array([5, 0]), np.array([2, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    offsets = np.zeros(len(lens), np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(first - offsets, lens)


def starts_of(keys: np.ndarray) -> np.ndarray:
    """The bounds of the runs of equal ``keys`` (sorted): each run's first index, then ``len(keys)``."""
    keys = np.asarray(keys)
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    return np.append(np.flatnonzero(new), len(keys)).astype(np.int64)


def segment_cumsum(x: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per entry, the sum of ``x`` over its segment up to it (inclusive); segment ``s`` is
    ``x[bounds[s]:bounds[s + 1]]``.  Each segment's sums are the ones ``np.cumsum`` gives over that
    segment alone, bit for bit (sequential from 0.0), so they do not depend on the other segments: a
    query's numbers are the same whatever else the run holds, in memory or streamed in blocks.  The
    segments are summed as rows of one matrix per class of lengths (up to twice the entries).

    >>> segment_cumsum(np.array([0.1, 0.2, 0.3, 1e20, 1.0]), np.array([0, 3, 5])).tolist()
    [0.1, 0.30000000000000004, 0.6000000000000001, 1e+20, 1e+20]
    """
    x = np.asarray(x, dtype=np.float64)
    bounds = np.asarray(bounds, dtype=np.int64)
    out = np.empty_like(x)
    lens = np.diff(bounds)
    some = np.flatnonzero(lens > 0)
    if not len(some):
        return out
    cls = np.ceil(np.log2(lens[some])).astype(np.int64)  # segments of lengths in (2^(c-1), 2^c]
    for c in np.unique(cls):
        segs = some[cls == c]
        width = int(lens[segs].max())
        col = np.arange(width)
        idx = bounds[segs][:, None] + col[None, :]
        inside = col[None, :] < lens[segs][:, None]
        mat = np.where(inside, x[np.minimum(idx, len(x) - 1)], 0.0)
        np.cumsum(mat, axis=1, out=mat)
        out[idx[inside]] = mat[inside]
    return out


def prefix_sums(
    x: np.ndarray, seg: np.ndarray, start: np.ndarray, counts: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Per segment, the sum of its first ``counts[i][s]`` entries of ``x``, for each ``i``: the
    entries of segment ``s`` are ``x[start[s]:start[s + 1]]`` (``seg``: the segment of each entry,
    sorted).  Each sum is the one ``np.bincount`` gives over those entries (sequential from 0.0,
    in order), bit for bit: counts that stay exact in float64 by any order; else running sums
    per segment, in a matrix of one row per segment (``np.cumsum`` along the rows is sequential)
    or, where the segments' lengths differ too much for one, by increasing counts, each sum the
    one before plus the entries between ($x$ is read once whatever the number of counts).

    >>> x = np.array([0.1, 0.2, 0.3, 1.0, 2.0])
    >>> seg, start = np.array([0, 0, 0, 1, 1]), np.array([0, 3, 5])
    >>> [s.tolist() for s in prefix_sums(x, seg, start, [np.array([3, 1]), np.array([1, 0])])]
    [[0.6000000000000001, 1.0], [0.1, 0.0]]
    """
    nseg = len(start) - 1
    first = start[:-1]
    if np.asarray(x).dtype == bool:  # 0/1 values: counts, by an integer running count
        cn = running_count(x)
        cbase = cn[first]
        return [(cn[first + k] - cbase).astype(np.float64) for k in counts]
    x = np.asarray(x, dtype=np.float64)
    if len(x) and np.array_equal(np.floor(x), x) and np.abs(x).sum() < 2.0**53:
        # integers whose sums stay exact in float64 (counts): every order of summing gives the
        # same exact sum, so a difference of running sums is that sum
        cs = np.zeros(len(x) + 1)
        np.cumsum(x, out=cs[1:])
        base = cs[first]
        return [cs[first + k] - base for k in counts]
    lens = np.diff(start)
    width = int(lens.max()) if nseg else 0
    if nseg * width <= 4 * len(x) + 4096:
        if nseg * width == len(x):  # segments of equal lengths
            flat = x.copy()
        else:
            flat = np.zeros(nseg * width)
            flat[
                np.arange(len(x), dtype=np.int64)
                + np.repeat(np.arange(nseg) * width - start[:-1], lens)
            ] = x
        block = flat.reshape(nseg, width)
        np.cumsum(block, axis=1, out=block)
        out = []
        for k in counts:
            some = np.flatnonzero(k > 0)
            s = np.zeros(nseg)
            s[some] = block[some, k[some] - 1] + 0.0  # + 0.0: a sum from 0.0 is never -0.0
            out.append(s)
        return out
    return _chained_sums(x, start[:-1], counts)


def _chained_sums(
    x: np.ndarray, start: np.ndarray, counts: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """`prefix_sums` by increasing counts per segment (``start``: each segment's first entry)."""
    nseg = len(start)
    c = np.zeros((len(counts), nseg), np.int64)
    for i, k in enumerate(counts):
        c[i] = k
    order = np.argsort(c, axis=0, kind="stable")
    levels = np.take_along_axis(c, order, axis=0)
    sums = np.zeros(c.shape)
    s: np.ndarray = np.zeros(nseg)
    done = np.zeros(nseg, np.int64)
    segs = np.arange(nseg, dtype=np.int64)
    for i, level in enumerate(levels):
        band = level - done
        has = np.flatnonzero(band)
        if len(has):
            b = band[has]
            idx = ranges(start[has] + done[has], b)
            # each segment's sum so far comes first in its bin, then its entries in order
            s = np.bincount(
                np.concatenate((segs, np.repeat(has, b))),
                weights=np.concatenate((s, x[idx])),
                minlength=nseg,
            )
        sums[i] = s
        done = level
    out = np.empty_like(sums)
    np.put_along_axis(out, order, sums, axis=0)
    return list(out)


class Prefixes:
    """The rows a batch of measures reads: per measure, the first ``counts[i][q]`` rows of each
    query ``q`` of ``prep``.

    ``rows`` (their union, a prefix of each query), ``qi`` (the query of each), ``gl`` (a local
    index of each one's tie group, ``0..ng-1`` in row order), ``groups`` (the ``prep`` group of each
    local group), ``gq`` (its query) and ``gstart`` (each local group's first index in ``rows``, with
    a sentinel).  [`at_rows`][tierank.measures.prefixes.Prefixes.at_rows] and [`at_groups`][tierank.measures.prefixes.Prefixes.at_groups] give each measure's per-query sums.

    >>> from tierank.ties import Prepared
    >>> p = Prepared(["a"], np.array([0, 4]), np.zeros(4, np.int64), np.arange(4), np.array([0, 1, 1, 2]),
    ...              np.array([0, 1, 3, 4]), np.zeros(4), (np.zeros(0), np.zeros(0)), 1, np.array([4]))
    >>> px = Prefixes(p, [np.array([1]), np.array([2])])
    >>> px.rows.tolist(), px.gl.tolist(), px.whole.tolist(), [s.tolist() for s in px.at_rows(np.array([1.0, 2.0]))]
    ([0, 1], [0, 1], [True, False], [[1.0], [3.0]])
    """

    def __init__(self, prep: Prepared, counts: Sequence[np.ndarray]) -> None:
        nq = prep.nq
        self.nq = nq
        # measures reading the same rows (P@100 and P@200 of short lists, P@5 and R@5) are summed once
        distinct: dict[bytes, int] = {}
        self.counts: list[np.ndarray] = []
        #: per measure, the index of its counts in `counts` (distinct counts)
        self.which: list[int] = []
        for c in counts:
            c = np.asarray(c, dtype=np.int64)
            i = distinct.setdefault(c.tobytes(), len(distinct))
            if i == len(self.counts):
                self.counts.append(c)
            self.which.append(i)
        top = np.zeros(nq, np.int64)
        for c in self.counts:
            np.maximum(top, c, out=top)
        ustart = np.zeros(nq + 1, np.int64)
        np.cumsum(top, out=ustart[1:])
        self.ustart = ustart
        self._prep, self._top = prep, top
        self._every = bool(np.array_equal(top, np.diff(prep.qstart)))
        if self._every:  # every row
            self.rows = np.arange(prep.n, dtype=np.int64)
            self.qi = prep.qi
        else:  # a prefix of each query
            self.rows = np.flatnonzero(prep.pos < top[prep.qi])
            self.qi = prep.qi[self.rows]

    # the tie groups the rows touch: only the extremes and the moments read them (`at_rows` does not)
    @cached_property
    def _groups(self) -> tuple[np.ndarray, ...]:
        """(gl, groups, gq, gstart, whole, per_query): see the class."""
        prep, top, nq = self._prep, self._top, self.nq
        ng = len(prep.gsize)
        if self._every:
            gl = prep.gid
            groups = np.arange(ng, dtype=np.int64)
            gq, gstart = prep.gq, prep.gstart
            whole = np.ones(ng, dtype=bool)
            per_query = np.bincount(prep.gq, minlength=nq) if ng else np.zeros(nq, np.int64)
            return gl, groups, gq, gstart, whole, per_query
        lim = top[prep.gq]
        touched = prep.gpos0 < lim
        groups = np.flatnonzero(touched)
        gq = prep.gq[groups]
        per_query = np.bincount(gq, minlength=nq)
        skipped = np.zeros(nq + 1, np.int64)  # groups of the earlier queries left out
        np.cumsum(np.bincount(prep.gq, minlength=nq) - per_query, out=skipped[1:])
        gl = prep.gid[self.rows] - skipped[self.qi]
        shift = prep.qstart[:-1] - self.ustart[:-1]  # row of prep minus index in rows, per query
        gstart = np.append(prep.gstart[groups] - shift[gq], len(self.rows)).astype(np.int64)
        whole = (prep.gpos0 + prep.gsize)[groups] <= lim[groups]
        return gl, groups, gq, gstart, whole, per_query

    gl = property(lambda self: self._groups[0], doc="The local group of each row.")
    groups = property(lambda self: self._groups[1], doc="The `prep` group of each local group.")
    gq = property(lambda self: self._groups[2], doc="The query of each local group.")
    gstart = property(lambda self: self._groups[3], doc="Each local group's first row (+ end).")
    whole = property(lambda self: self._groups[4], doc="Whether each local group is read whole.")

    @cached_property
    def qgstart(self) -> np.ndarray:
        """Offset of each query's first local group."""
        out = np.zeros(self.nq + 1, np.int64)
        np.cumsum(self._groups[5], out=out[1:])
        return out

    @cached_property
    def ends(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """Per distinct counts: (queries with rows, their last row, its local group, whether that
        last group is read whole)."""
        out = []
        for c in self.counts:
            qs = np.flatnonzero(c > 0)
            last = self.ustart[qs] + c[qs] - 1
            j = self.gl[last]
            full = (last + 1 == self.gstart[j + 1]) & self.whole[j]
            out.append((qs, last, j, full))
        return out

    def spread(self, per_counts: list[np.ndarray]) -> list[np.ndarray]:
        """Per measure, its entry of ``per_counts`` (one per distinct counts; a copy where an
        earlier measure has it already, so that no two measures share an array)."""
        out, used = [], set()
        for i in self.which:
            out.append(per_counts[i].copy() if i in used else per_counts[i])
            used.add(i)
        return out

    def at_rows(self, x: np.ndarray) -> list[np.ndarray]:
        """Per measure, the per-query sums of ``x`` (one value per row of ``rows``) over its rows."""
        return self.spread(prefix_sums(x, self.qi, self.ustart, self.counts))

    def at_rows_in(
        self,
        changed: np.ndarray,
        x_of: Callable[[np.ndarray], np.ndarray],
        like: list[np.ndarray],
    ) -> list[np.ndarray]:
        """[`at_rows`][tierank.measures.prefixes.Prefixes.at_rows] of values that differ from those ``like`` was computed from in the
        queries ``changed`` (bool per query) only: there the sums of ``x_of(idx)`` (the values of
        the rows ``rows[idx]``, ``idx`` ascending), elsewhere copies of ``like``'s (e.g. an
        extremal arrangement, which moves only the tie groups whose values differ)."""
        sel = np.flatnonzero(changed)
        if not len(sel):
            return [s.copy() for s in like]
        lens = self.ustart[sel + 1] - self.ustart[sel]
        idx = ranges(self.ustart[sel], lens)
        start = np.zeros(len(sel) + 1, np.int64)
        np.cumsum(lens, out=start[1:])
        seg = np.repeat(np.arange(len(sel), dtype=np.int64), lens)
        sums = prefix_sums(x_of(idx), seg, start, [c[sel] for c in self.counts])
        out = []
        for i, s in zip(self.which, like):
            s = s.copy()
            s[sel] = sums[i]
            out.append(s)
        return out

    def changed(self, groups: np.ndarray) -> np.ndarray:
        """Per query, whether it holds one of the local ``groups`` (bool per local group)."""
        out = np.zeros(self.nq, dtype=bool)
        out[self.gq[groups]] = True
        return out

    def at_groups(
        self,
        whole: np.ndarray,
        cut: np.ndarray,
        partial: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    ) -> list[np.ndarray]:
        """Per measure, the per-query sums over the groups it reads of a per-group term.

        ``whole``: the term of each local group read whole (0.0 where it adds nothing);
        ``cut``: per local group, whether the term of the group read in part is to be computed;
        ``partial(idx, seg, js)``: the terms of the local groups ``js`` from their rows
        ``rows[idx]`` inside the cutoff (``seg``: ``0..len(js)-1``, the group of each); a group read
        in part whose ``cut`` is false adds nothing.  The groups before a query's last one are
        read whole: their terms are summed in order, then the last one's is added.
        """
        earlier = []
        for qs, _, j, _ in self.ends:
            n = np.zeros(self.nq, np.int64)
            n[qs] = j - self.qgstart[qs]
            earlier.append(n)
        sums = prefix_sums(whole, self.gq, self.qgstart, earlier)
        out = []
        for s, (qs, last, j, full) in zip(sums, self.ends):
            term = np.where(full, whole[j], 0.0)
            part = np.flatnonzero(~full & cut[j])
            if len(part):
                js = j[part]
                lens = last[part] - self.gstart[js] + 1
                seg = np.repeat(np.arange(len(js), dtype=np.int64), lens)
                idx = ranges(self.gstart[js], lens)
                term[part] = partial(idx, seg, js)
            s[qs] += term
            out.append(s)
        return self.spread(out)
