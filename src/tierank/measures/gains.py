"""trec_eval's gains (its gain map, ``G.1=2,2=5``, and ideal lists) and what G and ndcg_rel
(`tierank.measures.trec_gain`) share: the rows of the queries whose tie orderings can move them
(`GainRows`) and the family skeleton that computes the one ranking of every query in batches, the
queries that vary exactly, the rest per ordering (`PerOrdering`)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..errors import TierankInputError, quote
from ..ties import Prepared, running_count, segment_offsets
from .base import Measure, Param, Stats
from .lattice import Levels, fits, levels
from .linear import _mapped
from .orderings import mixed_groups, per_ordering_stats
from .prefixes import ranges, segment_cumsum, starts_of

__all__ = [
    "GAINS",
    "REFUSAL",
    "GainRows",
    "PerOrdering",
    "P_max",
    "RankedRows",
    "check_gains",
    "doc_gains",
    "ideal_costs",
    "ideal_gains",
    "ideal_rows",
    "ideal_running",
    "ideal_totals",
    "query_ideal",
    "running_sums",
    "settle",
]

REFUSAL = "its ideal gains grow with every unjudged document assumed relevant, so neither assumption bounds it"

#: trec_eval's gain map (``G.1=2,2=5``, ``setup_gains`` of gain_init.c)
GAINS = Param(
    "gains",
    dict,
    None,
    "trec_eval's gain map grade -> gain, e.g. {1:2,2:5} (grades not named keep gain = grade; "
    "gains may be 0 or negative)",
)


def check_gains(m: Measure) -> None:
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


def query_ideal(prep: Prepared, q: int, gains=None) -> np.ndarray:
    """The positive judged gains of query ``q``, descending (trec_eval's ideal list)."""
    gains, start = ideal_gains(prep, gains)
    return np.asarray(gains[start[q] : start[q + 1]], dtype=np.float64)


def _whole_numbers(x: np.ndarray) -> bool:
    """Whether every partial sum of ``x``, in any order, is exact in float64: whole numbers (no
    -0.0) whose absolute values sum below 2^52."""
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(
            np.abs(x).sum() < 2.0**52
            and np.array_equal(np.floor(x), x)
            and not (np.signbit(x) & (x == 0)).any()
        )


def running_sums(x: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """`tierank.measures.prefixes.segment_cumsum` of ``x`` over the segments ``bounds`` (from 0 to
    ``len(x)``), bit for bit: where ``x`` holds whole numbers whose sums are exact in float64 by any
    order (so a segment's sums are the differences of one running sum over all of ``x``, exact
    whole numbers too, a zero +0.0 in both), by that one running sum; else `segment_cumsum`.

    >>> running_sums(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2, 4])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    >>> running_sums(np.array([0.1, 0.2, 0.3]), np.array([0, 1, 3])).tolist()
    [0.1, 0.2, 0.5]
    """
    x = np.asarray(x, dtype=np.float64)
    bounds = np.asarray(bounds, dtype=np.int64)
    if not len(x) or bounds[0] != 0 or bounds[-1] != len(x) or not _whole_numbers(x):
        return segment_cumsum(x, bounds)
    c = np.cumsum(x)
    before = np.concatenate(([0.0], c))[bounds[:-1]]  # the running sum before each segment
    return c - np.repeat(before, np.diff(bounds))


class RankedRows:
    """The ranks read (above the depth limit) of the queries ``qs``, in order: per row its index
    into the run (``rows``), its query's index in ``qs`` (``q``) and its 0-based rank (``pos``); per
    query of ``qs`` (``queries``) its rows read (``width``) and their bounds in these rows
    (``bounds``)."""

    def __init__(self, prep: Prepared, qs: np.ndarray) -> None:
        cut = prep.cut(float("inf"))
        qs = np.asarray(qs, dtype=np.int64)
        length = np.diff(prep.qstart)[qs].astype(np.int64)
        self.width = np.minimum(length, cut).astype(np.int64) if np.isfinite(cut) else length
        self.bounds = np.zeros(len(qs) + 1, dtype=np.int64)
        np.cumsum(self.width, out=self.bounds[1:])
        first = np.asarray(prep.qstart, dtype=np.int64)[qs]
        every = len(qs) == prep.nq and int(self.bounds[-1]) == prep.n
        self.queries = qs
        self.rows = np.arange(prep.n) if every else ranges(first, self.width)
        self.q = np.repeat(np.arange(len(qs)), self.width)
        self.pos = np.arange(len(self.rows), dtype=np.int64) - np.repeat(
            self.bounds[:-1], self.width
        )

    @classmethod
    def every(cls, prep: Prepared) -> RankedRows:
        """The rows read of every query (not kept: arrays over the whole run held to the end of an
        evaluation slow the families after it)."""
        return cls(prep, np.arange(prep.nq))


def ideal_totals(prep: Prepared, gains) -> np.ndarray:
    """Per query, the sum of its ideal gains under ``gains``, sequential (0.0 for none)."""

    def compute():
        ig, istart = ideal_gains(prep, gains)
        istart = np.asarray(istart, dtype=np.int64)
        cc = ideal_running(prep, np.asarray(ig, dtype=np.float64), gains)
        last = np.maximum(istart[1:] - 1, 0)
        return np.where(np.diff(istart) > 0, cc[last] if len(cc) else 0.0, 0.0)

    return prep.cached(("trec-ideal-total", gains), compute)


def ideal_costs(prep: Prepared, gains) -> np.ndarray | None:
    """Per ideal entry (`ideal_gains` under ``gains``), the sum of max(ideal gain, 1) over its
    query's entries up to it (G's cost), where those are whole numbers whose sums are exact in
    float64 by any order (`running_sums`); else None."""

    def compute():
        x = np.maximum(np.asarray(ideal_gains(prep, gains)[0], dtype=np.float64), 1.0)
        return ideal_running(prep, x, gains) if _whole_numbers(x) else None

    return prep.cached(("trec-ideal-costs", gains), compute)


def ideal_running(prep: Prepared, x: np.ndarray, gains) -> np.ndarray:
    """Per ideal entry (`ideal_gains` under ``gains``), the running sum of ``x`` over its query's
    entries up to it (`running_sums`: sequential per query, as ``np.cumsum`` of that query's alone)."""
    return running_sums(x, np.asarray(ideal_gains(prep, gains)[1], dtype=np.int64))


def settle(out: Stats, qs, expected, lo, hi, var, varies) -> None:
    """Write the exact statistics of the queries ``qs`` into ``out`` (in place): where ``varies``
    is false the one value (the oblivious one, variance 0), else the extremes widened to the
    oblivious value (an attained one; rounding could leave it out) and the mean clipped to them."""
    obl = out.oblivious[qs]
    lo, hi = np.minimum(lo, obl), np.maximum(hi, obl)
    out.expected[qs] = np.where(varies, np.clip(expected, lo, hi), obl)
    out.min[qs] = np.where(varies, lo, obl)
    out.max[qs] = np.where(varies, hi, obl)
    out.var[qs] = np.where(varies, var, 0.0)


class GainRows:
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
        self.group_of_row = running_count(new)[1:].astype(np.int64)
        self.group_of_row -= 1
        self.qbounds = starts_of(self.q)  # the rows of each query read
        self._lattice: tuple[np.ndarray, Levels, np.ndarray] | None = None

    # every running sum restarts at each query (`segment_cumsum`): a query's numbers do not depend on
    # the other queries of the run, to the last bit

    def prefix(self, x: np.ndarray) -> np.ndarray:
        """Per row, the sum of ``x`` over its query's rows up to it (inclusive)."""
        return running_sums(x, self.qbounds)

    def ideal_prefix(self, x: np.ndarray) -> np.ndarray:
        """Per row at rank ``i``, the sum of ``x`` (per ideal entry) over its query's first
        ``min(i + 1, P)`` ideal entries."""
        return self.ideal_read(running_sums(x, self.istart))

    def ideal_read(self, cc: np.ndarray) -> np.ndarray:
        """Per row at rank ``i``, ``cc`` (per ideal entry: a running sum over its query's entries)
        at its query's entry ``min(i + 1, P)`` (0.0 for none)."""
        k = np.minimum(self.pos + 1, self.P[self.q])
        at = np.maximum(self.istart[self.q] + k - 1, 0)
        return np.where(k > 0, cc[np.minimum(at, max(len(cc) - 1, 0))] if len(cc) else 0.0, 0.0)

    def ideal_total(self, x: np.ndarray) -> np.ndarray:
        """Per query, the sum of ``x`` (per ideal entry) over its ideal entries."""
        cc = running_sums(x, self.istart)
        last = np.maximum(self.istart[1:] - 1, 0)
        return np.where(self.P > 0, cc[last] if len(cc) else 0.0, 0.0)

    def arranged(self, prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
        """The document values (per row of the run) with the mixed groups of these queries sorted
        ascending (pessimistic) and descending (optimistic): one sort, the descending order the
        ascending one reversed per group (equal values: either first).  Not kept (full-length
        arrays)."""
        mg = self.groups[self.mixed]
        size = prep.gsize[mg]
        g = np.repeat(np.arange(len(mg)), size)
        offset = np.repeat(np.cumsum(size) - size, size)  # each group's first entry
        j = np.arange(len(g))
        rows = np.repeat(prep.gstart[mg], size) + (j - offset)
        v = self.values[rows]
        asc = v[np.lexsort((v, g))]
        lo, hi = self.values.copy(), self.values.copy()
        lo[rows] = asc
        hi[rows] = asc[2 * offset + np.repeat(size, size) - 1 - j]
        return lo, hi

    def lattice_groups(self, prep: Prepared) -> tuple[np.ndarray, Levels, np.ndarray]:
        """The mixed groups (indices into ``groups``), their `levels` and whether each fits (found
        once per `GainRows`)."""
        if self._lattice is None:
            mg = np.flatnonzero(self.mixed)
            lv = levels(self.values, prep.gstart[self.groups[mg]], self.size[mg])
            self._lattice = (mg, lv, fits(lv, self.steps[mg]))
        return self._lattice

    @classmethod
    def of(cls, prep: Prepared, values: np.ndarray, vary: np.ndarray, mixed, gm) -> GainRows:
        """`GainRows` of the gain map ``gm`` (``values`` its document gains, ``mixed`` its mixed
        groups) and the queries ``vary``, kept in ``prep``'s cache (G and ndcg_rel read the same)."""
        key = ("trec-gain-rows", gm, np.packbits(vary).tobytes())
        return prep.cached(key, lambda: cls(prep, values, vary, mixed, gm))


class PerOrdering(Measure):
    """G and ndcg_rel: the one ranking's value of every query in batches (`batch_values`), the
    queries that can vary exact (`exact`, over the lattices of their tie groups), the few left
    enumerated or sampled per ordering ([`per_ordering_stats`][tierank.measures.orderings.per_ordering_stats],
    `ordering_values`)."""

    cutoff_allowed = False
    bounds_refusal: ClassVar[str | None] = REFUSAL
    schema = (GAINS,)
    #: a sampled query's min and max are the extremes of the orderings drawn (inner bounds)
    sampled_extremes: ClassVar[bool] = True

    def ordering_values(
        self, prep: Prepared, q: int, A: np.ndarray
    ) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def ranking_values(
        self, prep: Prepared, values: np.ndarray, rows: RankedRows
    ) -> np.ndarray:  # pragma: no cover
        """The value of the one ranking ``values`` (per row of the run, in rank order) per query of
        ``rows`` (the rows read of some queries): the oblivious values, and ndcg_rel's extreme
        arrangements.  Each query's value is the float `ordering_values` gives for that ranking."""
        raise NotImplementedError

    def stats(self, prep: Prepared) -> Stats:
        gm = self.param("gains")
        values = doc_gains(prep, gm)
        nq = prep.nq
        obl = self.ranking_values(prep, values, RankedRows.every(prep))
        mixed = prep.cached(("trec-mixed", gm), lambda: mixed_groups(prep, values))
        vary = (np.bincount(prep.gq[mixed], minlength=nq) > 0) & self.defined(prep)
        out = Stats(obl, obl.copy(), obl.copy(), obl.copy(), np.zeros(nq))
        qs = np.flatnonzero(vary)
        if not len(qs):
            return out
        rows = GainRows.of(prep, values, vary, mixed, gm)
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

    def exact(self, prep: Prepared, rows: GainRows, out: Stats) -> np.ndarray:  # pragma: no cover
        """Fill ``out``'s expected, min, max and var of ``rows``' queries in place and return the
        queries (bool per query) left to `per_ordering_stats`."""
        raise NotImplementedError

    def validate(self, text: str) -> None:
        check_gains(self)


def P_max(prep: Prepared, qs: np.ndarray, gains=None) -> int:
    """The largest number of positive judged gains among the queries ``qs``."""
    start = np.asarray(ideal_gains(prep, gains)[1])
    return int((start[qs + 1] - start[qs]).max()) if len(qs) else 0


def ideal_rows(
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
