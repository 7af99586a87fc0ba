r"""Uniform random tie orderings, drawn in bulk, for the measures with no exact expectation.

Some statistics have no closed form or polynomial algorithm we know of (the expectation of
interpolated precision, trec_eval's ``iprec_at_recall`` / ``11pt_avg``, and of the geometric
mean ``gm_map``).  Their families estimate them from ``prep.samples`` uniformly random
orderings of every tie group and label the result (``Stats(method="sampled", samples=,
seed=, se=)``), never silently.

What is drawn
-------------
The binary-relevance measures served here depend on an ordering only through the ranks of
the relevant documents.  A uniformly random ordering of a tie group of ``m`` documents of
which ``r`` are relevant puts the relevant ones on a uniformly random ``r``-subset of the
group's ``m`` positions, independently across groups.  So, per sampled query and ordering:

* groups with no relevant document, and groups past the ranks read (``prep.cut``), are not
  touched; all-relevant groups are copied; only *mixed* groups are drawn;
* a mixed group draws the smaller of its relevant / non-relevant sets,
  ``k = min(r, m - r)`` offsets, by Floyd's algorithm (Bentley & Floyd, "Programming
  pearls: a sample of brilliance", CACM 30(9), 1987): ``k`` steps, each one uniform
  integer, vectorized over every (group, ordering) pair of a chunk at once; the offsets are
  marked in a bit map of the chunk's relevant-bearing positions;
* the relevant ranks of every (ordering, query) then come out of one ``flatnonzero``, sorted:
  [`Draws`][tierank.measures.sampling.Draws].  A measure turns them into one value per (ordering, query) with
  segment sums / maxima, in O(relevant documents) per ordering.

Only queries whose value can change (``min < max``) are sampled; the others keep their one
value exactly, with variance 0 and standard error 0.  Chunks are bounded (at most
`MAX_ENTRIES` bit-map entries, split over orderings when one query alone is larger).

Reproducibility
---------------
The draws of a query depend only on ``prep.seed``, the query id, the rank of each tie group
and the ordering's index: the uniform integers come from a counter-based generator (the
splitmix64 stream of a per-(query, group, ordering) key, [`tierank.io.fingerprint.splitmix64`][tierank.io.fingerprint.splitmix64]),
not from a shared stream.  A query therefore gets bit-identical estimates whatever other
queries are evaluated with it and however the work is chunked (streamed batches, depth
pruning), and the same seed gives the same numbers.  A uniform integer in ``[0, j]`` is
``floor(u (j + 1))`` with a 53-bit uniform ``u``: its bias is below ``(j + 1) 2^{-53}``.

Estimates
---------
Per query: the mean of the ``S`` sampled values, their variance (``ddof = 1``) and the
standard error of the mean ``sqrt(var / S)``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from .. import compute as ac
from ..compute import strings
from ..io.fingerprint import fingerprint, pair_fingerprint, splitmix64
from ..ties import Prepared
from .base import Stats
from .counts import flag_cumsum
from .kernels import group_counts

__all__ = [
    "Draws",
    "ENUMERATE",
    "MAX_ENTRIES",
    "arrangement_count",
    "class_arrangements",
    "enumerable",
    "orderings",
    "fixed_draws",
    "extremal_draws",
    "random_draws",
    "labelled",
    "sample_moments",
    "sampled_stats",
    "query_keys",
    "tie_orderings",
]

#: largest bit map (orderings x relevant-bearing positions) drawn at once; the work arrays of a
#: chunk are bounded by it: at most MAX_ENTRIES / 2 (group, ordering) pairs of 40 bytes and
#: MAX_ENTRIES relevant entries of about 50 bytes (under 100 MB at worst)
MAX_ENTRIES = 1 << 20

#: queries with at most this many distinct tie orderings are enumerated (exact statistics), not sampled
ENUMERATE = 5040

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_TWO53 = 2.0**-53


@dataclass(frozen=True)
class Draws:
    """The relevant documents of ``nseg`` rankings (segments), ranks read only.

    Entries are sorted by segment, then rank.  Segment ``s`` ranks query ``queries[qidx[s]]``
    (``queries``: the distinct queries drawn); ``start`` (length ``nseg + 1``) delimits each
    segment's entries; ``rank`` is the 1-based rank of each relevant document and ``count``
    its 1-based index among the relevant documents of its segment (so ``count / rank`` is the
    precision at it).
    """

    nseg: int
    queries: np.ndarray
    qidx: np.ndarray
    seg: np.ndarray
    rank: np.ndarray
    count: np.ndarray
    start: np.ndarray

    @property
    def query(self) -> np.ndarray:
        """Query index of every segment."""
        return self.queries[self.qidx]

    @property
    def found(self) -> np.ndarray:
        """Relevant documents retrieved per segment (int64)."""
        return np.diff(self.start)

    @classmethod
    def build(
        cls, queries: np.ndarray, qidx: np.ndarray, seg: np.ndarray, rank: np.ndarray
    ) -> Draws:
        """Draws from the segment and 1-based rank of every relevant entry (sorted by segment, rank).

        >>> d = Draws.build(np.array([7]), np.array([0, 0]), np.array([1, 1]), np.array([2.0, 5.0]))
        >>> d.query.tolist(), d.found.tolist(), d.count.tolist()
        ([7, 7], [0, 2], [1.0, 2.0])
        """
        nseg = len(qidx)
        seg = np.asarray(seg, dtype=np.int64)
        start = np.zeros(nseg + 1, dtype=np.int64)
        np.cumsum(np.bincount(seg, minlength=nseg), out=start[1:])
        count = (np.arange(len(seg), dtype=np.int64) - start[seg] + 1).astype(np.float64)
        return cls(
            nseg,
            np.asarray(queries),
            np.asarray(qidx),
            seg,
            np.asarray(rank, dtype=np.float64),
            count,
            start,
        )

    def suffix_max(self, x: np.ndarray) -> np.ndarray:
        """Per entry, the maximum of ``x`` over it and the later entries of its segment (exact;
        log2(longest segment) vectorized doubling steps).

        >>> d = Draws.build(np.array([0]), np.array([0, 0]), np.array([0, 0, 1, 1]), np.array([1.0, 2, 1, 3]))
        >>> d.suffix_max(np.array([0.2, 0.5, 0.9, 0.1])).tolist()
        [0.5, 0.5, 0.9, 0.1]
        """
        out = np.array(x, dtype=np.float64, copy=True)
        if not len(out):
            return out
        room = self.start[self.seg + 1] - np.arange(
            len(out)
        )  # entries from each one to its segment's end
        longest = int(room.max())
        step = 1
        while step < longest:
            ok = room[:-step] > step
            out[:-step] = np.where(ok, np.maximum(out[:-step], out[step:]), out[:-step])
            step *= 2
        return out


def fixed_draws(prep: Prepared, seq: np.ndarray, cut: float) -> Draws:
    """[`Draws`][tierank.measures.sampling.Draws] of one ranking per query: rows of ``prep`` in order, ``seq`` the relevance
    of each row (e.g. ``prep.arrangement("pessimistic", "rel")``), ranks below ``cut`` only."""
    keep = seq & (prep.pos < cut) if np.isfinite(cut) else seq
    rows = np.flatnonzero(keep)
    return Draws.build(np.arange(prep.nq), np.arange(prep.nq), prep.qi[rows], prep.pos[rows] + 1.0)


def extremal_draws(prep: Prepared, rel: int | None, cut: float) -> tuple[Draws, Draws, Draws]:
    """[`Draws`][tierank.measures.sampling.Draws] of the ``policy``, ``pessimistic`` and ``optimistic`` arrangements (relevance at
    ``rel``, ranks below ``cut``): the relevant documents of a tie group take its first or last ranks,
    in the same order, so each arrangement is found from the relevant rows alone (what
    [`fixed_draws`][tierank.measures.sampling.fixed_draws] finds from the arrangement's every row).  Cached on ``prep`` (read, never modified)."""
    return prep.cached(("extremal-draws", rel, cut), lambda: _extremal_draws(prep, rel, cut))


def _extremal_draws(prep: Prepared, rel: int | None, cut: float) -> tuple[Draws, Draws, Draws]:
    c = flag_cumsum(prep, "rel", rel)
    rows = np.flatnonzero(np.diff(c))  # the relevant rows, ascending
    g = prep.gid[rows]
    gs = prep.gstart
    # the j-th relevant document of a group at its j-th rank, or at its j-th of the last ones
    first = prep.gpos0[g] + (c[rows] - c[gs[g]])
    last = first + (prep.gsize[g] - (c[gs[g + 1]] - c[gs[g]]))
    out = []
    qr, every = prep.qi[rows], np.arange(prep.nq)
    for pos in (prep.pos[rows], last, first):
        if np.isfinite(cut):
            keep = pos < cut
            out.append(Draws.build(every, every, qr[keep], pos[keep] + 1.0))
        else:
            out.append(Draws.build(every, every, qr, pos + 1.0))
    return out[0], out[1], out[2]


def query_keys(prep: Prepared, seed: int | None = None) -> np.ndarray:
    """uint64 key of every query: a function of the seed and the query id only."""

    def compute():
        s = np.full(
            prep.nq, np.uint64((prep.seed if seed is None else seed) % (1 << 64)), dtype=np.uint64
        )
        return pair_fingerprint(splitmix64(s), fingerprint(strings(prep.qids)))

    return prep.cached(("sampling-keys", prep.seed if seed is None else seed), compute)


def _binomials(m: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``C(m, k)`` elementwise (int64, exact): ``prod_{t<k} (m - k + t + 1) / (t + 1)``, each partial
    product an integer; for the small ``k`` of groups that are enumerated.

    >>> _binomials(np.array([5, 10, 3]), np.array([2, 3, 0])).tolist()
    [10, 120, 1]
    """
    m, k = np.asarray(m, dtype=np.int64), np.asarray(k, dtype=np.int64)
    c = np.ones(len(m), dtype=np.int64)
    for t in range(int(k.max()) if len(k) else 0):
        on = k > t
        c[on] = c[on] * (m[on] - k[on] + t + 1) // (t + 1)
    return c


def orderings(prep: Prepared, rel: int | None, cut: float) -> np.ndarray:
    """Per query, the number of distinct orderings of its relevant documents that the binary measures
    read: the product over its *mixed* tie groups above ``cut`` (holding relevant and non-relevant
    documents) of `\binom{m}{r}`; int64, ``ENUMERATE + 1`` wherever it exceeds `ENUMERATE`.
    """

    def compute():
        tied = np.flatnonzero(prep.gsize > 1)  # (a group of one document has one ordering)
        r_g = group_counts(prep, "rel", rel)[tied]
        m_g = prep.gsize[tied].astype(np.int64)
        gq = prep.gq[tied]
        k_g = np.minimum(r_g, m_g - r_g)
        mixed = (k_g > 0) & (prep.gpos0[tied] < cut)
        over = ENUMERATE + 1
        c = np.ones(len(m_g), dtype=np.int64)
        # C(m, k) = prod_{t<k} (m - k + t + 1) / (t + 1), exact in integers; C(2k, k) > ENUMERATE from k = 8
        for t in range(8):
            on = mixed & (k_g > t) & (c <= ENUMERATE)
            c[on] = c[on] * (m_g[on] - k_g[on] + t + 1) // (t + 1)
        c[mixed & (k_g >= 8)] = over
        c = np.minimum(np.where(mixed, c, 1), over)
        logs = np.bincount(gq, weights=np.log(c.astype(np.float64)), minlength=prep.nq)
        small = logs <= np.log(max(ENUMERATE, 1)) + 1e-9
        out = np.full(prep.nq, over, dtype=np.int64)
        # exact products where they are small (every factor <= ENUMERATE, so no overflow)
        prod = np.ones(prep.nq, dtype=np.int64)
        gsel = np.flatnonzero(mixed & small[gq])
        np.multiply.at(prod, gq[gsel], c[gsel])
        out[small] = np.minimum(prod[small], over)
        return out

    return prep.cached(("orderings", rel, cut), compute)


_COMBINATIONS: dict[tuple[int, int], np.ndarray] = {}


def _combinations(m: int, k: int) -> np.ndarray:
    """Every k-subset of ``range(m)`` as rows of offsets (lexicographic; C(m, k) <= ENUMERATE)."""
    key = (m, k)
    if key not in _COMBINATIONS:
        rows = list(itertools.combinations(range(m), k))
        _COMBINATIONS[key] = np.array(rows, dtype=np.int64).reshape(len(rows), k)
    return _COMBINATIONS[key]


def shuffled_rows(
    rng: np.random.Generator, values: np.ndarray, samples: int
) -> Iterator[tuple[int, np.ndarray]]:
    """``samples`` uniform shuffles of ``values``, in blocks of about a million cells:
    ``(first row, block)`` pairs, each block's rows shuffled in place (the block is reused)."""
    k = len(values)
    step = max(1, (1 << 20) // max(k, 1))
    block = np.empty((min(step, samples), k), dtype=values.dtype)
    for lo in range(0, samples, step):
        seq = block[: min(step, samples - lo)]
        seq[:] = values
        rng.permuted(seq, axis=1, out=seq)
        yield lo, seq


def arrangement_count(counts) -> int:
    """Distinct orderings of a multiset with these multiplicities (``m!`` over the product of their
    factorials), capped at ``ENUMERATE + 1`` (exact below the cap).

    >>> arrangement_count((2, 1, 1)), arrangement_count((3, 0)), arrangement_count((20, 20)) == ENUMERATE + 1
    (12, 1, True)
    """
    left, total = 0, 1
    for c in counts:
        left += int(c)
        total *= math.comb(left, int(c))
        if total > ENUMERATE:
            return ENUMERATE + 1
    return total


def enumerable(counts) -> bool:
    """Whether a tie group with these class multiplicities is enumerated: at most `ENUMERATE` distinct
    orderings, held in at most `MAX_ENTRIES` entries (a group of thousands of documents with one of
    another class is sampled instead).

    >>> enumerable((2, 3)), enumerable((1, 4999)), enumerable((10, 10))
    (True, False, False)
    """
    n = arrangement_count(counts)
    return n <= ENUMERATE and n * sum(int(c) for c in counts) <= MAX_ENTRIES


def class_arrangements(counts) -> np.ndarray:
    """Every distinct ordering of ``counts[c]`` documents of class ``c`` (c = 0, 1, ...), once each:
    rows of class indices (int64, read-only, ``arrangement_count(counts)`` rows of ``sum(counts)``
    columns; at most `ENUMERATE` rows).  Class 0 takes each k-subset of the positions
    (`_combinations`), class 1 each subset of the positions left, and so on.

    >>> class_arrangements((1, 2)).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    >>> class_arrangements((2, 1, 1)).shape
    (12, 4)
    """
    key = tuple(int(c) for c in counts)
    if arrangement_count(key) > ENUMERATE:
        raise ValueError(f"{arrangement_count(key) - 1}+ orderings of {key}: too many to enumerate")
    return _arrangements(key)


@functools.lru_cache(maxsize=256)
def _arrangements(key: tuple[int, ...]) -> np.ndarray:
    m = sum(key)
    rows = np.full((1, m), len(key) - 1, dtype=np.int64)
    free = np.broadcast_to(np.arange(m), (1, m))  # per row, the positions not taken yet
    left = m
    for c, k in enumerate(key[:-1]):
        combos = _combinations(left, k)  # (C, k) offsets among the free positions
        n, C = len(rows), len(combos)
        rows = np.repeat(rows, C, axis=0)
        take = np.repeat(free, C, axis=0)
        pick = np.tile(combos, (n, 1))
        r = np.arange(n * C)[:, None]
        rows[r, take[r, pick]] = c
        keep = np.ones((n * C, left), dtype=bool)
        keep[r, pick] = False
        left -= k
        free = take[keep].reshape(n * C, left)
    rows.flags.writeable = False
    return rows


def random_draws(
    prep: Prepared,
    queries: np.ndarray,
    rel: int | None,
    cut: float,
    enumerate_n: int | None = None,
) -> Iterator[tuple[np.ndarray, int, Draws]]:
    """Uniformly random tie orderings of the ``queries`` (sorted query indices) of ``prep``.

    Yields ``(queries of the chunk, first ordering index, draws)``: the draws hold
    ``S_chunk * len(chunk)`` segments, segment ``s * len(chunk) + i`` being ordering
    ``first + s`` of the chunk's query ``i``.  Chunks cover every query and every one of the
    ``prep.samples`` orderings once.  With ``enumerate_n``: the queries have exactly that many
    distinct orderings ([`orderings`][tierank.measures.sampling.orderings]), and the ``enumerate_n`` orderings are every one of
    them, once each, instead of random ones.
    """
    queries = np.asarray(queries, dtype=np.int64)
    S = int(prep.samples) if enumerate_n is None else int(enumerate_n)
    if not len(queries):
        return
    r_g = group_counts(prep, "rel", rel)
    want = np.zeros(prep.nq, dtype=bool)
    want[queries] = True
    gsel = np.flatnonzero((r_g > 0) & want[prep.gq] & (prep.gpos0 < cut))
    m_all = prep.gsize[gsel].astype(np.int64)
    gq_all = prep.gq[gsel]
    # positions held per query, and chunks of queries whose bit map fits
    per_q = np.bincount(gq_all, weights=m_all, minlength=prep.nq)[queries].astype(np.int64)
    qkeys = query_keys(prep) if enumerate_n is None else None
    qcum = np.concatenate(([0], np.cumsum(per_q)))
    gcut = np.searchsorted(gq_all, queries, side="left")
    gcut = np.append(gcut, len(gsel))
    lo = 0
    while lo < len(queries):
        # as many queries as fit (at least one)
        hi = int(np.searchsorted(qcum, qcum[lo] + max(MAX_ENTRIES // S, 1), side="right")) - 1
        hi = min(max(hi, lo + 1), len(queries))
        chunk = queries[lo:hi]
        g = gsel[gcut[lo] : gcut[hi]]
        nslots = int(qcum[hi] - qcum[lo])
        step = S if nslots * S <= MAX_ENTRIES else max(MAX_ENTRIES // max(nslots, 1), 1)
        for s0 in range(0, S, step):
            sb = min(step, S - s0)
            yield chunk, s0, _draw_chunk(prep, chunk, g, r_g[g], nslots, s0, sb, cut, qkeys)
        lo = hi


def _enumerated_marks(
    prep: Prepared,
    g: np.ndarray,
    order: np.ndarray,
    kk: np.ndarray,
    base: np.ndarray,
    s0: int,
    sb: int,
    flat: np.ndarray,
) -> None:
    """Marks of orderings ``s0 .. s0+sb-1`` of every distinct ordering of the mixed groups ``g[order]``
    (``kk`` offsets each): ordering ``t`` of a query reads, in mixed radix over its mixed groups in rank
    order (the last one fastest), one k-subset of each group (`_combinations`)."""
    gm = g[order]  # by query, then rank
    m = prep.gsize[gm].astype(np.int64)
    base2 = base.reshape(len(order), sb)
    c = _binomials(m, kk)
    # stride: product of the counts of the later mixed groups of the same query
    q = prep.gq[gm]
    stride = np.ones(len(gm), dtype=np.int64)
    later = np.ones(len(gm), dtype=np.int64)
    for j in range(
        1, len(gm)
    ):  # at most log2(ENUMERATE) groups per query: few passes of whole arrays
        same = np.zeros(len(gm), dtype=bool)
        same[:-j] = q[:-j] == q[j:]
        if not same.any():
            break
        later[:-j] = np.where(same[:-j], c[j:], 1)
        stride *= later
        later[:] = 1
    t = np.arange(s0, s0 + sb, dtype=np.int64)
    pattern = (t[None, :] // stride[:, None]) % c[:, None]  # (groups, orderings)
    for key in set(zip(m.tolist(), kk.tolist())):  # one pass per distinct (size, offsets) shape
        sel = np.flatnonzero((m == key[0]) & (kk == key[1]))
        offs = _combinations(*key)[pattern[sel]]  # (groups, orderings, k)
        flat[(base2[sel][..., None] + offs).reshape(-1)] = True


def _draw_chunk(prep: Prepared, chunk, g, r, nslots, s0, sb, cut, qkeys) -> Draws:
    """Orderings ``s0 .. s0+sb-1`` of the queries ``chunk``; ``g`` their relevant-bearing groups."""
    nqc = len(chunk)
    m = prep.gsize[g].astype(np.int64)
    gstart = np.concatenate(([0], np.cumsum(m)[:-1])) if len(m) else np.zeros(0, np.int64)
    qloc = np.searchsorted(chunk, prep.gq[g])
    slot_group = np.repeat(np.arange(len(g)), m)
    slot_rank = (prep.gpos0[g][slot_group] + (np.arange(nslots) - gstart[slot_group]) + 1).astype(
        np.float64
    )
    slot_q = qloc[slot_group]
    k = np.minimum(r, m - r)
    init = (
        2 * r > m
    )  # the group starts all relevant and the k drawn offsets are flipped, or the reverse
    # marks of the drawn offsets; relevant = the group's initial state XOR marked
    bm = np.zeros((sb, nslots), dtype=bool)
    flat = bm.reshape(-1)
    mixed = np.flatnonzero(k > 0)
    if len(mixed) and qkeys is None:  # every distinct ordering, once each
        order = np.sort(mixed)
        kk = k[order]
        base = (np.arange(sb, dtype=np.int64)[None, :] * nslots + gstart[order][:, None]).reshape(
            -1
        )
        _enumerated_marks(prep, g, order, kk, base, s0, sb, flat)
    elif len(mixed):
        order = mixed[np.argsort(-k[mixed], kind="stable")]
        kk = k[order]
        # (group, ordering) pairs, group-major: the pairs still drawing at step t are a prefix
        samples = np.arange(s0, s0 + sb, dtype=np.uint64)
        gkey = pair_fingerprint(qkeys[prep.gq[g[order]]], prep.gpos0[g[order]].astype(np.uint64))
        with np.errstate(over="ignore"):
            state = pair_fingerprint(np.repeat(gkey, sb), np.tile(samples, len(order)))
        base = (np.arange(sb, dtype=np.int64)[None, :] * nslots + gstart[order][:, None]).reshape(
            -1
        )
        top = np.repeat(m[order] - kk, sb)  # Floyd's j at step 0
        last = base + top  # the flat index of offset j at step 0
        scale = (top + 1).astype(np.float64) * _TWO53  # (j + 1) 2^-53 at step 0, exact
        active_groups = np.searchsorted(
            -kk, -np.arange(1, int(kk[0]) + 1), side="right"
        )  # groups with k > t
        for t in range(int(kk[0])):
            n = int(active_groups[t]) * sb
            with np.errstate(over="ignore"):
                state[:n] += _GOLDEN
                x = splitmix64(state[:n])
            # uniform offset in [0, j]: floor(u (j + 1)), u = 53 random bits / 2^53 (one rounding)
            pick = ((x >> np.uint64(11)).astype(np.float64) * (scale[:n] + t * _TWO53)).astype(
                np.int64
            )
            np.minimum(pick, top[:n] + t, out=pick)
            at = base[:n] + pick
            at = np.where(flat[at], last[:n] + t, at)  # already drawn: take j itself (Floyd)
            flat[at] = True
    np.not_equal(bm, init[slot_group][None, :], out=bm)
    idx = np.flatnonzero(flat)
    s_loc, slot = np.divmod(idx, nslots) if nslots else (idx, idx)
    rank = slot_rank[slot]
    if np.isfinite(cut):
        keep = rank <= cut
        s_loc, slot, rank = s_loc[keep], slot[keep], rank[keep]
    seg = s_loc * nqc + slot_q[slot]
    return Draws.build(chunk, np.tile(np.arange(nqc), sb), seg, rank)


def sample_moments(
    prep: Prepared,
    queries: np.ndarray,
    values: Callable[[Draws], np.ndarray],
    rel: int | None,
    cut: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query of ``queries``: mean and variance of the rows of ``values(draws)`` (an array
    ``(L, draws.nseg)``: L values per ranking) over the query's tie orderings, and whether they are exact.

    A query with at most `ENUMERATE` distinct orderings ([`orderings`][tierank.measures.sampling.orderings]) is enumerated: every
    ordering once, the mean and the variance (``ddof=0``) exact (third array True).  The others are
    estimated from ``prep.samples`` random orderings (variance ``ddof=1``; False).  Returns three
    arrays, the first two of shape ``(L, len(queries))``.  Each query's numbers depend on its own
    orderings only (bit for bit, whatever the chunking).  Without ``prep.moments`` nothing is
    drawn: the means and variances are NaN (and the third array True).
    """
    queries = np.asarray(queries, dtype=np.int64)
    if not prep.moments:  # the oblivious value and the extremes only: nothing drawn, NaN
        empty = np.zeros(0, np.int64)
        L = np.atleast_2d(
            np.asarray(values(Draws.build(empty, empty, empty, np.zeros(0))), dtype=np.float64)
        ).shape[0]
        nan = np.full((L, len(queries)), np.nan)
        return nan, nan.copy(), np.ones(len(queries), dtype=bool)
    count = orderings(prep, rel, cut)[queries]
    exact = count <= ENUMERATE
    mean: np.ndarray | None = None
    var: np.ndarray | None = None
    runs = [(queries[~exact], None)] + [
        (queries[count == n], int(n)) for n in np.unique(count[exact])
    ]
    for qs, n in runs:
        S = int(prep.samples) if n is None else n
        ddof = 0 if n is not None else 1
        pending: dict = {}
        for chunk, s0, draws in random_draws(prep, qs, rel, cut, enumerate_n=n):
            v = np.atleast_2d(np.asarray(values(draws), dtype=np.float64))
            L = v.shape[0]
            if mean is None or var is None:
                mean = np.zeros((L, len(queries)))
                var = np.zeros((L, len(queries)))
            key = int(chunk[0])
            if key not in pending:
                pending[key] = np.empty((L, S, len(chunk)))
            pending[key][:, s0 : s0 + v.shape[1] // len(chunk), :] = v.reshape(L, -1, len(chunk))
            if s0 + v.shape[1] // len(chunk) == S:
                block = np.ascontiguousarray(pending.pop(key).transpose(0, 2, 1))  # (L, queries, S)
                mu = block.mean(axis=-1)
                d = block - mu[..., None]
                at = np.searchsorted(queries, chunk)
                mean[:, at] = mu
                var[:, at] = np.einsum("lqs,lqs->lq", d, d) / max(S - ddof, 1)
    if mean is None or var is None:
        empty = np.zeros(0, np.int64)
        L = np.atleast_2d(
            np.asarray(values(Draws.build(empty, empty, empty, np.zeros(0))), dtype=np.float64)
        ).shape[0]
        mean, var = np.zeros((L, 0)), np.zeros((L, 0))
    return mean, var, exact


def labelled(
    oblivious: np.ndarray,
    expected: np.ndarray,
    vmin: np.ndarray,
    vmax: np.ndarray,
    var: np.ndarray,
    sampled: np.ndarray,
    prep: Prepared,
    se: np.ndarray | None = None,
) -> Stats:
    """[`Stats`][tierank.measures.sampling.Stats] labelled by what was sampled: ``sampled`` per query (True: ``expected`` and ``var``
    estimated from ``prep.samples`` orderings, their standard error ``sqrt(var / samples)`` unless
    ``se`` gives it; False: exact, standard error 0); ``method="exact"`` when no query was sampled."""
    if not sampled.any():
        return Stats(oblivious, expected, vmin, vmax, var)
    if se is None:
        se = np.where(sampled, np.sqrt(np.where(sampled, var, 0.0) / prep.samples), 0.0)
    return Stats(
        oblivious,
        expected,
        vmin,
        vmax,
        var,
        method="sampled",
        samples=int(prep.samples),
        seed=int(prep.seed),
        se=se,
        sampled=sampled.copy(),
    )


def sampled_stats(
    prep: Prepared,
    oblivious: np.ndarray,
    vmin: np.ndarray,
    vmax: np.ndarray,
    values: Callable[[Draws], np.ndarray],
    rel: int | None,
    cut: float,
) -> Stats:
    """[`Stats`][tierank.measures.sampling.Stats] of a measure with exact ``oblivious``/``min``/``max`` per query and an expectation
    and variance over the orderings ([`sample_moments`][tierank.measures.sampling.sample_moments]): ``values(draws)`` gives the measure of
    each ranking of ``draws`` (shape ``(draws.nseg,)``).  Queries with ``min == max`` are not drawn:
    their expectation is that value, with variance and standard error exactly 0; queries with few
    orderings are enumerated (exact); with no query sampled the result is ``method="exact"``.
    """
    vary = np.flatnonzero(vmin < vmax)
    expected = vmin.astype(np.float64).copy()
    var = np.zeros(prep.nq)
    sampled = np.zeros(prep.nq, dtype=bool)
    if len(vary):
        mu, v, exact = sample_moments(prep, vary, lambda d: np.atleast_2d(values(d)), rel, cut)
        expected[vary], var[vary] = np.clip(mu[0], vmin[vary], vmax[vary]), v[0]
        sampled[vary] = ~exact
    return labelled(oblivious, expected, vmin, vmax, var, sampled, prep)


def tie_orderings(prep: Prepared, samples: int, seed: int) -> Iterator[tuple[int, Prepared]]:
    """``samples`` uniformly random tie orderings of every query of ``prep``, as tie-free rankings.

    Yields ``(first, rankings)`` chunks: ``rankings`` is a [`Prepared`][tierank.ties.Prepared] of
    ``count * prep.nq`` queries without ties, query ``s * prep.nq + i`` being ordering ``first + s``
    of query ``i`` (its documents in that ordering's order, every group of one document), so any
    measure's ``oblivious`` value on it is its value under that ordering (``moments`` off: nothing
    else is computed).  Chunks cover the ``samples`` orderings once, in order, each at most about
    `MAX_ENTRIES` x 4 rows.

    Every tie group is shuffled by sorting its rows on uniform 64-bit keys drawn as the other
    samplers of this module draw theirs: a function of ``seed``, the query id
    ([`query_keys`][tierank.measures.sampling.query_keys]), the group's rank, the ordering's index and the
    row's offset in the group (counter-based splitmix64, whatever the chunking).  Sorting
    independent uniform keys gives each of a group's ``m!`` orderings probability ``1 / m!`` (up to
    key collisions, probability below ``m^2 2^-65``), independently across groups, queries and
    orderings.

    >>> from tierank.ties import prepare
    >>> from tierank.io.convert import to_qrels, to_run
    >>> from tierank.settings import EvalSettings
    >>> run, qrels = to_run({"q": {"a": 1.0, "b": 1.0, "c": 0.5}}), to_qrels({"q": {"a": 1}})
    >>> prep = prepare(run, qrels, EvalSettings())
    >>> [(first, r.nq, r.gsize.tolist()) for first, r in tie_orderings(prep, 2, seed=0)]
    [(0, 2, [1, 1, 1, 1, 1, 1])]
    """
    step = max(1, (MAX_ENTRIES * 4) // max(prep.n, 1))
    t = prep.tied_rows
    gkey = pair_fingerprint(
        query_keys(prep, seed)[prep.qi[t]], prep.gpos0[prep.gid[t]].astype(np.uint64)
    )
    rkey = pair_fingerprint(gkey, prep.goffset[t].astype(np.uint64))
    for first in range(0, int(samples), step):
        count = min(step, int(samples) - first)
        yield first, _replicated(prep, t, rkey, first, count)


def _replicated(
    prep: Prepared, t: np.ndarray, rkey: np.ndarray, first: int, count: int
) -> Prepared:
    """Orderings ``first .. first+count-1`` of ``prep`` (`tie_orderings`): its rows ``count`` times,
    the tied rows ``t`` of each copy sorted on their keys (``rkey`` with the ordering's index) within
    their group, and no tie left."""
    n, nq = prep.n, prep.nq
    shift = np.arange(count, dtype=np.int64)[:, None]
    rows = np.tile(np.arange(n, dtype=np.int64), count)
    if len(t):
        with np.errstate(over="ignore"):
            ordering = np.arange(first, first + count, dtype=np.uint64)[:, None]
            key = pair_fingerprint(np.broadcast_to(rkey, (count, len(t))), ordering)
        slots = (shift * n + t[None, :]).reshape(-1)
        groups = (shift * len(prep.gsize) + prep.gid[t][None, :]).reshape(-1)
        rows[slots] = rows[slots][np.lexsort((key.reshape(-1), groups))]
    qi = (shift * nq + prep.qi[None, :]).reshape(-1)
    jq, jg = prep.judged_grades
    every = np.arange(n * count + 1, dtype=np.int64)
    return replace(
        prep,
        qids=list(prep.qids) * count,
        qstart=np.append((shift * n + prep.qstart[None, :-1]).reshape(-1), n * count),
        qi=qi,
        pos=np.tile(prep.pos, count),
        gid=every[:-1],
        gstart=every,
        grade=prep.grade[rows],
        judged_grades=((shift * nq + jq[None, :]).reshape(-1), np.tile(jg, count)),
        qlen=np.tile(prep.qlen, count),
        qjudged=None if prep.qjudged is None else np.tile(prep.qjudged, count),
        docid=None if prep.docid is None else ac.take(prep.docid, ac.array(rows)),
        moments=False,
        _cache={},
    )
