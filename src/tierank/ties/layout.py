"""Query codes, score order and tie groups of a run: [`RunLayout`][tierank.ties.layout.RunLayout] and `layout`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..io.model import Run
from .summary import TieSummary


def segment_offsets(codes: np.ndarray, n: int) -> np.ndarray:
    """Offsets of contiguous runs of sorted integer codes 0..n-1 (empty runs allowed)."""
    return np.searchsorted(codes, np.arange(n + 1), side="left").astype(np.int64)


def running_count(flags: np.ndarray) -> np.ndarray:
    """How many of the boolean ``flags`` are true before each entry and in all (length n + 1, from
    0): int32 where no count can pass it (numpy counts booleans into int32 several times faster
    than into int64), else int64.

    >>> running_count(np.array([True, False, True])).tolist()
    [0, 1, 1, 2]
    """
    out = np.zeros(len(flags) + 1, dtype=np.int32 if len(flags) < 2**31 else np.int64)
    np.cumsum(flags, out=out[1:])
    return out


def _grouped(qi: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(first row, length) of every query's block in file order when each query's rows come together
    (checked in O(n)); None otherwise or without rows."""
    n = len(qi)
    if n == 0:
        return None
    change = np.flatnonzero(qi[1:] != qi[:-1]) + 1
    starts = np.concatenate(([0], change))
    if len(starts) != _distinct_sorted(np.sort(qi[starts])):  # (np.unique imports numpy.ma: 10 ms)
        return None
    return starts, np.diff(np.append(starts, n))


def _descending(score: np.ndarray, starts: np.ndarray) -> bool:
    """Whether the scores do not increase inside each block (``starts``: the blocks' first rows)."""
    ok = score[1:] <= score[:-1]
    ok[starts[1:] - 1] = True  # a new query may start with any score
    return bool(ok.all())


def _query_blocks(qi: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(first row, length) of every query's block in file order when the rows are grouped by query
    with scores non-increasing inside each query (checked in O(n)); None otherwise or without rows."""
    grouped = _grouped(qi)
    return grouped if grouped is not None and _descending(score, grouped[0]) else None


def _sorted_blocks(score: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray | None:
    """The rows in file order with each block's rows (``starts``, ``lens``) in score order,
    descending, file order inside ties: every block sorted at once, one stable sort per row of a
    matrix of the blocks (None where their lengths differ too much for one matrix)."""
    n, width = len(score), int(lens.max())
    if len(starts) * width > 2 * n + 4096:
        return None
    col = np.arange(width, dtype=np.int64)
    inside = col[None, :] < lens[:, None]  # (a prefix of each block's row)
    idx = starts[:, None] + col[None, :]
    # the padding is NaN, which sorts last, after a NaN score of the block's own (a stable sort
    # keeps the earlier columns first), as a lexsort puts NaN scores last in their query
    keys = np.where(inside, -score[np.minimum(idx, n - 1)], np.nan)
    return np.take_along_axis(idx, np.argsort(keys, axis=1, kind="stable"), axis=1)[inside]


def _score_order(
    qi: np.ndarray, score: np.ndarray, blocks: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray | None:
    """Row order by (query ascending, score descending), file order inside ties; None if already so.

    Runs are normally grouped by query with scores non-increasing inside each
    query; that is checked in O(n) (``blocks``: `_query_blocks`, if already known)
    and then only the query blocks are permuted.  Rows grouped by query in another order (a dict
    of each query's documents, in no order) are sorted inside their blocks, all blocks at once;
    anything else is sorted with one stable lexsort.
    """
    n = len(qi)
    if n == 0:
        return None
    within = None  # the rows with each block in score order, where that needed a sort
    if blocks is None:
        blocks = _grouped(qi)
        if blocks is None:
            return np.lexsort((-score, qi))
        if not _descending(score, blocks[0]):
            within = _sorted_blocks(score, *blocks)
            if within is None:
                return np.lexsort((-score, qi))
    starts, lens = blocks
    if (np.diff(qi[starts]) > 0).all():
        return within
    border = np.argsort(qi[starts], kind="stable")
    lens_o = lens[border]
    shift = starts[border] - (np.cumsum(lens_o) - lens_o)
    order = np.arange(n, dtype=np.int64) + np.repeat(shift, lens_o)
    return order if within is None else within[order]


def _distinct_sorted(codes: np.ndarray) -> int:
    """Number of distinct values of a non-decreasing array."""
    return int(np.count_nonzero(codes[1:] != codes[:-1])) + 1 if len(codes) else 0


def _codes(ids: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Index of each id in ``value_set`` (int32), -1 where absent."""
    if pa.types.is_dictionary(ids.type):
        per_entry = ac.numpy(ac.fill_null(ac.index_in(ids.dictionary, value_set), -1))
        return per_entry.astype(np.int32)[ac.numpy(ids.indices)]
    return ac.numpy(ac.fill_null(ac.index_in(ids, value_set), -1)).astype(np.int32)


@dataclass(frozen=True, eq=False, repr=False)
class RunLayout:
    """A run laid out by (query, score descending), file order inside ties, with its tie groups.

    The one place where tierank codes queries and finds tie groups: `prepare`
    (evaluation), tie prevalence, rank bands, score formats, the tie-structure figure
    and the rerank protocol all read it.  Build it with `layout`.

    Rows of the run are referred to by their index among the *kept* rows (all rows,
    unless `layout` was given a query set), in file order; *positions* are
    indices in the score order.  Arrays are computed on first use and shared: do not
    modify them.

    Attributes
    ----------
    qids : list of str
        The queries; a query's *code* is its index here (sorted, unless given otherwise).
    codes : np.ndarray
        int32 query code of every kept row, file order.
    rows : np.ndarray or None
        Indices in the run of the kept rows (None: every row, in file order).
    score : np.ndarray
        float64 score of every kept row, file order.

    Examples
    --------
    >>> from tierank import to_run
    >>> lay = layout(to_run({"q2": {"a": 1.0, "b": 3.0, "c": 1.0}, "q1": {"x": 0.5}}))
    >>> lay.qids, lay.codes.tolist(), lay.order.tolist()
    (['q1', 'q2'], [1, 1, 1, 0], [3, 1, 0, 2])
    >>> lay.group_starts.tolist(), lay.group_sizes.tolist(), lay.query_starts.tolist()
    ([0, 1, 2], [1, 1, 2], [0, 1, 4])
    >>> lay.ranks().tolist(), lay.tied_sizes().tolist()
    ([2, 1, 3, 1], [2])
    """

    qids: list[str]
    codes: np.ndarray
    rows: np.ndarray | None
    score: np.ndarray
    qid_array: pa.Array | None = field(
        default=None, repr=False
    )  # ``qids`` as an Arrow string array

    def __post_init__(self):
        if self.qid_array is None:
            object.__setattr__(self, "qid_array", ac.strings(list(self.qids)))

    def __repr__(self) -> str:
        return f"RunLayout({self.nq} queries, {self.n} rows, {self.summary.groups} tie groups)"

    @property
    def nq(self) -> int:
        return len(self.qids)

    @property
    def n(self) -> int:
        return len(self.codes)

    @cached_property
    def _blocks(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(first row, length) of each query's block in file order where the kept rows are grouped
        by query with non-increasing scores (the score order then only permutes whole blocks)."""
        return _query_blocks(self.codes, self.score)

    @cached_property
    def _order(self) -> np.ndarray | None:
        """The score order, or None where the kept rows already are in it."""
        return _score_order(self.codes, self.score, self._blocks)

    @cached_property
    def file_group_first(self) -> np.ndarray | None:
        """bool per kept row in file order: True where a tie group starts, when the rows are grouped
        by query with non-increasing scores ([`query_blocks`][tierank.ties.layout.RunLayout.query_blocks]); None otherwise.  The score order
        permutes whole query blocks, so ``group_first == file_group_first[order]``."""
        if self._blocks is None:
            return None
        qi, sc = self.codes, self.score
        new = np.empty(self.n, dtype=bool)
        new[0] = True
        np.not_equal(qi[1:], qi[:-1], out=new[1:])
        new[1:] |= sc[1:] != sc[:-1]
        return new

    @cached_property
    def file_group_starts(self) -> np.ndarray | None:
        """First file row of every tie group (ascending), where [`file_group_first`][tierank.ties.layout.RunLayout.file_group_first] is known."""
        f = self.file_group_first
        return None if f is None else np.flatnonzero(f)

    @cached_property
    def query_blocks(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Per query code: (first kept row in file order, number of rows), int64, where the rows are
        grouped by query with non-increasing scores (else None); a query without rows has (0, 0)."""
        if self._blocks is None:
            return None
        starts, lens = self._blocks
        code = self.codes[starts]
        first = np.zeros(self.nq, dtype=np.int64)
        length = np.zeros(self.nq, dtype=np.int64)
        first[code] = starts
        length[code] = lens
        return first, length

    @cached_property
    def order(self) -> np.ndarray:
        """int64 kept-row index at every position: query ascending, score descending, file order in ties."""
        o = self._order
        return np.arange(self.n, dtype=np.int64) if o is None else o

    @cached_property
    def sorted_codes(self) -> np.ndarray:
        """Query code at every position (non-decreasing)."""
        return self.codes if self._order is None else self.codes[self._order]

    @cached_property
    def group_first(self) -> np.ndarray:
        """bool per position: True at the first position of every tie group (a new query or score)."""
        o = self._order
        f = self.file_group_first
        if f is not None:
            return f if o is None else f[o]
        qi_s, ss = self.sorted_codes, self.score if o is None else self.score[o]
        new = np.empty(self.n, dtype=bool)
        if self.n:
            new[0] = True
            np.not_equal(qi_s[1:], qi_s[:-1], out=new[1:])
            new[1:] |= ss[1:] != ss[:-1]
        return new

    @cached_property
    def group_starts(self) -> np.ndarray:
        """First position of every tie group (groups of one document included), ascending."""
        return np.flatnonzero(self.group_first)

    @cached_property
    def group_sizes(self) -> np.ndarray:
        """Size of every tie group, aligned with [`group_starts`][tierank.ties.layout.RunLayout.group_starts]."""
        return np.diff(self.group_starts, append=self.n)

    @cached_property
    def query_starts(self) -> np.ndarray:
        """int64 position offsets of the queries (length nq + 1; a query absent from the run is empty)."""
        return segment_offsets(self.sorted_codes, self.nq)

    @cached_property
    def summary(self) -> TieSummary:
        """The [`TieSummary`][tierank.ties.summary.TieSummary] of the kept rows."""
        n, new, fstarts = self.n, self.file_group_first, self.file_group_starts
        if new is not None and fstarts is not None and n:
            # in file order: the same groups (whole query blocks are permuted); a group of two or
            # more rows starts where the next row starts none, and ends at the next group's start
            multi = new.copy()
            multi[:-1] &= ~new[1:]
            multi[-1] = False
            tied_starts = np.flatnonzero(multi)
            ends = np.append(fstarts, n)[np.searchsorted(fstarts, tied_starts, side="right")]
            tied_sizes = ends - tied_starts
            with_ties = int(
                np.count_nonzero(np.bincount(self.codes[tied_starts], minlength=self.nq))
            )
            largest = int(tied_sizes.max()) if len(tied_sizes) else 1
        else:
            starts, sizes = self.group_starts, self.group_sizes
            tied_starts, tied_sizes = starts[sizes > 1], sizes[sizes > 1]
            with_ties = _distinct_sorted(self.sorted_codes[tied_starts])
            largest = int(sizes.max()) if n else 0
        return TieSummary.of(
            docs=int(n),
            queries=int(self.nq),
            queries_with_ties=with_ties,
            groups=len(tied_starts),
            tied_docs=int(tied_sizes.sum()),
            largest=largest,
        )

    def tied_sizes(self) -> np.ndarray:
        """int64 sizes of the tie groups of 2 or more documents, in position order."""
        sizes = self.group_sizes
        return sizes[sizes > 1].astype(np.int64)

    def ranks(self) -> np.ndarray:
        """int64 1-based rank of every kept row (file order) in its query, by the score order."""
        rank = np.empty(self.n, dtype=np.int64)
        rank[self.order] = (
            np.arange(self.n, dtype=np.int64) - self.query_starts[self.sorted_codes] + 1
        )
        return rank

    def within_ties(self, key: np.ndarray) -> np.ndarray:
        """The score order with the rows of every tie group re-sorted by ``key`` (one value per kept
        row, file order); stable, so rows with equal keys stay in file order."""
        o = self.order.copy()
        sizes = self.group_sizes
        gid = np.repeat(np.arange(len(sizes)), sizes)
        tied = np.flatnonzero(sizes[gid] > 1)
        if len(tied):
            t = o[tied]
            o[tied] = t[np.lexsort((np.asarray(key)[t], gid[tied]))]
        return o


def layout(
    run: Run,
    qids: Sequence[str] | None = None,
    qid_array: pa.Array | None = None,
    codes: np.ndarray | None = None,
) -> RunLayout:
    """The [`RunLayout`][tierank.ties.layout.RunLayout] of ``run``: query codes, score order and tie groups.

    Parameters
    ----------
    run : Run
    qids : sequence of str, optional
        The queries to lay out, in code order; rows of other queries are left out,
        and a query without rows is empty.  Default: every query of the run, sorted.

    Tie groups are documents of one query with equal scores (``==`` on float64).
    qid_array : pyarrow.Array, optional
        ``qids`` as an Arrow string array, where the caller has it (else built from ``qids``).
    codes : numpy.ndarray, optional
        The code of every run row among ``qids`` (int32, -1 for a query not among them), where the
        caller has found them already (else looked up here).

    Nothing is sorted until the order or the groups are asked for, so the query
    codes alone are cheap.
    """
    if qids is None:
        qids = sorted(ac.distinct(run.qid, ordered=False))
    qids = list(qids)
    value_set = ac.strings(qids) if qid_array is None else qid_array
    qi = _codes(run.qid, value_set) if codes is None else codes
    if (qi >= 0).all():
        return RunLayout(qids, qi, None, run.score, value_set)
    rows = np.flatnonzero(qi >= 0)
    return RunLayout(qids, qi[rows], rows, run.score[rows], value_set)
