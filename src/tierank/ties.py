"""Tie groups and total orders over a whole run, vectorized.

:func:`layout` is the one place where queries are coded and tie groups found: a
:class:`RunLayout` holds the query codes, the score order (query ascending, score
descending, file order inside ties), the tie groups and a typed
:class:`TieSummary`.  Evaluation, tie prevalence, rank bands, score formats, the
tie-structure figure and the rerank protocol all read it.

:func:`prepare` joins a run with its qrels and lays every evaluated query's
documents out in one flat array, sorted by the one explicit total order

    (query id ascending, score descending, tie-break policy)

so that each query is a contiguous segment and each *tie group* (documents of a
query whose parsed scores are equal) a contiguous sub-segment.  Tie groups do
not depend on the policy; only the order inside a group does.  Measures then
read three arrangements of the same positions:

* ``policy``: the tie-oblivious order (trec_eval, input, docno, random:SEED);
* ``optimistic``: inside every tie group, higher grades first;
* ``pessimistic``: inside every tie group, lower grades first.

Every measure tierank supports is monotone under moving a more relevant
document ahead of a less relevant one, and groups are independent, so the
optimistic and pessimistic arrangements attain the exact max and min.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import TierankInputError
from .io.fingerprint import fingerprint, pair_fingerprint
from .io.model import Qrels, Run

_RANDOM = re.compile(r"^random(?::(\d+))?$")

POLICIES = ("trec_eval", "input", "docno", "random:SEED")


@dataclass(frozen=True)
class TieBreak:
    """A named tie-break policy for the tie-oblivious value.

    ``trec_eval``: score descending, then docno descending (bytewise), as trec_eval;
    ``input``: file order; ``docno``: docno ascending; ``random:SEED``: a
    pseudo-random order inside each tie group, a function of SEED, query and docid
    only (the same for any file order and any choice of measures).

    Examples
    --------
    >>> TieBreak.parse("random:7")
    TieBreak(kind='random', seed=7)
    >>> TieBreak.parse("random")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: tie-break 'random': random needs a seed: random:SEED (e.g. random:0), ...
    >>> str(TieBreak.parse("trec_eval"))
    'trec_eval'
    """

    kind: str
    seed: int | None = None

    @classmethod
    def parse(cls, text: str | TieBreak) -> TieBreak:
        if isinstance(text, TieBreak):
            return text
        t = str(text).strip().lower()
        if t in ("trec_eval", "input", "docno"):
            return cls(t)
        m = _RANDOM.match(t)
        if m and m.group(1) is None:
            raise TierankInputError(f"tie-break {text!r}: random needs a seed: random:SEED (e.g. random:0), so that "
                                    "the oblivious value can be reproduced")
        if m:
            return cls("random", int(m.group(1)) % (1 << 64))
        raise TierankInputError(f"unknown tie-break policy {text!r}; accepted: {', '.join(POLICIES)}")

    def __str__(self) -> str:
        return f"random:{self.seed}" if self.kind == "random" else self.kind


def _segment_offsets(codes: np.ndarray, n: int) -> np.ndarray:
    """Offsets of contiguous runs of sorted integer codes 0..n-1 (empty runs allowed)."""
    return np.searchsorted(codes, np.arange(n + 1), side="left").astype(np.int64)


@dataclass(frozen=True)
class TieSummary:
    """Tie statistics of a run: how many documents share their score with another one of their query.

    Attributes
    ----------
    docs, queries : int
        Documents (rows) and queries laid out.
    queries_with_ties : int
        Queries with at least one tie group.
    groups : int
        Tie groups of 2 or more documents (equal query and score).
    tied_docs : int
        Documents in those groups.
    largest : int
        Size of the largest group, counting every document as a group of its own:
        1 when nothing ties, 0 for no documents (see :attr:`largest_tie_group`).
    share : float
        ``tied_docs / docs`` (0.0 for no documents).

    Examples
    --------
    >>> from tierank import to_run
    >>> t = layout(to_run({"q": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0}, "r": {"x": 1.0}})).summary
    >>> t
    TieSummary(docs=5, queries=2, queries_with_ties=1, groups=1, tied_docs=3, largest=3, share=0.6)
    >>> t.tied_with_predecessor, t.mean_group, t.largest_tie_group
    (2, 3.0, 3)
    """

    docs: int = 0
    queries: int = 0
    queries_with_ties: int = 0
    groups: int = 0
    tied_docs: int = 0
    largest: int = 0
    share: float = 0.0

    @property
    def tied_with_predecessor(self) -> int:
        """Tied documents that are not the first of their group (the first paper's "tied" count)."""
        return self.tied_docs - self.groups

    @property
    def mean_group(self) -> float:
        """Mean size of the tie groups (0.0 without ties)."""
        return self.tied_docs / self.groups if self.groups else 0.0

    @property
    def largest_tie_group(self) -> int:
        """Size of the largest tie group, 0 without ties."""
        return self.largest if self.groups else 0

    def to_dict(self) -> dict:
        """``docs, queries, queries_with_ties, groups, tied_docs, largest, share`` (``EvalResult.ties``)."""
        return asdict(self)


@dataclass
class Prepared:
    """A run joined with its qrels, in the policy's total order, with tie groups.

    All row arrays are in sorted order; ``qstart`` (length nq+1) delimits queries,
    ``gstart`` (length ng+1) delimits tie groups.
    """

    qids: list[str]
    qstart: np.ndarray
    qi: np.ndarray          # query index of each row
    pos: np.ndarray         # 0-based rank of each row in its query
    gid: np.ndarray         # tie-group index of each row
    gstart: np.ndarray      # row offset of each group (+ sentinel)
    grade: np.ndarray       # grade of each row in policy order, NaN = unjudged
    judged_grades: tuple    # (query index, grade) of every judgment counted for N+ / ideal DCG
    rel_level: int          # default minimum grade counted relevant
    qlen: np.ndarray        # documents retrieved per query (before pruning)
    qjudged: np.ndarray | None = None  # judged documents retrieved per query (whole run), if counted
    summary: TieSummary = field(default_factory=TieSummary)  # tie statistics of the whole run
    unjudged_relevant: bool = False  # count unjudged documents as relevant (upper bounds)
    max_depth: float = float("inf")  # ranks read at most (trec_eval -M): every measure's cutoff is capped by it
    samples: int = 1000  # tie orderings drawn by the measures that have no exact method
    seed: int = 0        # seed of those draws
    _cache: dict = field(default_factory=dict, repr=False)

    def cut(self, k: float) -> float:
        """A measure's cutoff ``k`` capped by :attr:`max_depth` (``trec_eval -M``): every family reads
        ranks below ``prep.cut(self.k)`` only, so a tie group straddling the depth limit is a tie
        straddling a cutoff, with its exact statistics.

        >>> p = Prepared([], np.zeros(1, np.int64), *(np.zeros(0, np.int64),) * 4, np.zeros(0),
        ...              (np.zeros(0), np.zeros(0)), 1, np.zeros(0, np.int64), max_depth=10)
        >>> p.cut(5), p.cut(float("inf"))
        (5, 10)
        """
        return k if k <= self.max_depth else self.max_depth

    @property
    def qret(self) -> np.ndarray:
        """Documents retrieved per query after the depth limit: ``min(qlen, max_depth)``."""
        return self.qlen if not np.isfinite(self.max_depth) else np.minimum(self.qlen, int(self.max_depth))

    def assuming_unjudged_relevant(self) -> Prepared:
        """The same run with every unjudged document counted relevant (N+ unchanged)."""
        return replace(self, unjudged_relevant=True, _cache={})

    def cached(self, key: tuple, compute):
        """The value stored under ``key``, computing it once with ``compute()`` on first use.

        Measures keep per-run intermediates here (group moments, arrangements, N+); the
        cache lives as long as this :class:`Prepared` and is empty in the copy made by
        :meth:`assuming_unjudged_relevant`.  Keys are tuples whose first element names
        the owner (e.g. ``("moments", "rel", 1)``) so families do not collide.

        >>> p = Prepared([], np.zeros(1, np.int64), *(np.zeros(0, np.int64),) * 4, np.zeros(0),
        ...              (np.zeros(0), np.zeros(0)), 1, np.zeros(0, np.int64))
        >>> p.cached(("demo",), lambda: 41) + p.cached(("demo",), lambda: 0)
        82
        """
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = compute()
            return value

    def condensed(self, keep: np.ndarray) -> Prepared:
        """The same evaluation with only the rows where ``keep`` is true, ranks closed up (a
        condensed list: trec_eval -J, ir_measures' ``judged_only``).  Tie groups keep their
        remaining members; the depth limit is taken as already applied by ``keep`` (the copy has
        ``max_depth`` inf), so the caller must not cut a tie group with it.  The cache is empty.

        >>> p = Prepared(["q"], np.array([0, 3]), np.zeros(3, np.int64), np.arange(3), np.array([0, 0, 1]),
        ...              np.array([0, 2, 3]), np.array([1.0, np.nan, 0.0]), (np.zeros(0), np.zeros(0)), 1,
        ...              np.array([3]))
        >>> c = p.condensed(p.judged)
        >>> c.pos.tolist(), c.gid.tolist(), c.gstart.tolist(), c.grade.tolist()
        ([0, 1], [0, 1], [0, 1, 2], [1.0, 0.0])
        """
        rows = np.flatnonzero(keep)
        qi = self.qi[rows]
        qstart = _segment_offsets(qi, self.nq)
        pos = np.arange(len(rows), dtype=np.int64) - qstart[qi]
        g = self.gid[rows]
        gid = np.cumsum(np.diff(g, prepend=-1) != 0) - 1 if len(g) else g
        gstart = np.append(np.flatnonzero(np.diff(gid, prepend=-1)), len(gid)).astype(np.int64)
        qlen = np.diff(qstart)
        return replace(self, qstart=qstart, qi=qi, pos=pos, gid=gid, gstart=gstart, grade=self.grade[rows],
                       qlen=qlen, max_depth=float("inf"), _cache={})

    @cached_property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.grade)

    @cached_property
    def gain(self) -> np.ndarray:
        """Graded gain max(grade, 0) per row in policy order; unjudged 0."""
        return np.where(self.judged, np.maximum(np.nan_to_num(self.grade), 0.0), 0.0)

    def relevant(self, level: int | None = None) -> np.ndarray:
        """Binary relevance (judged and grade >= level) per row in policy order."""
        level = self.rel_level if level is None else level

        def compute():
            rel = self.judged & (np.nan_to_num(self.grade, nan=-np.inf) >= level)
            return rel | ~self.judged if self.unjudged_relevant else rel

        return self.cached(("rel", level), compute)

    def doc_values(self, kind: str, level: int | None = None) -> np.ndarray:
        """Per-row document values in policy order: ``rel`` (at level), ``judged`` or ``gain``."""
        if kind == "rel":
            return self.relevant(level)
        if kind == "judged":
            return self.judged
        return self.gain

    def nrel(self, level: int | None = None) -> np.ndarray:
        """N+ per query: judgments with grade >= level (qrels, or judged candidates)."""
        level = self.rel_level if level is None else level

        def compute():
            q, g = self.judged_grades
            return np.bincount(q, weights=(g >= level), minlength=self.nq)

        return self.cached(("nrel", level), compute)

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray]:
        """Positive gains per query sorted descending, and their query offsets (for IDCG)."""
        q, g = self.judged_grades
        keep = g > 0
        iq, ig = q[keep], g[keep]
        o = np.lexsort((-ig, iq))
        return ig[o], _segment_offsets(iq[o], self.nq)

    @property
    def nq(self) -> int:
        return len(self.qids)

    @property
    def n(self) -> int:
        return len(self.qi)

    @cached_property
    def gsize(self) -> np.ndarray:
        return np.diff(self.gstart)

    @cached_property
    def gq(self) -> np.ndarray:
        """Query index of each group."""
        return self.qi[self.gstart[:-1]] if self.n else np.zeros(0, np.int64)

    @cached_property
    def gpos0(self) -> np.ndarray:
        """0-based rank of each group's first position."""
        return self.pos[self.gstart[:-1]] if self.n else np.zeros(0, np.int64)

    def group_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.gid, weights=values, minlength=len(self.gsize))

    def arrangement(self, which: str, kind: str, level: int | None = None) -> np.ndarray:
        """``rel`` or ``gain`` sequence under ``policy``, ``optimistic`` or ``pessimistic``.

        Extremal arrangements reorder each tie group only: for binary relevance the
        optimistic one makes the group's first r_n positions relevant, the
        pessimistic one its last r_n (no sort); graded gains are sorted inside the
        groups whose gains differ at all (largest != smallest, exactly).
        """
        level = self.rel_level if level is None else level
        base = self.doc_values(kind, level)
        if which == "policy":
            return base

        def compute():
            if base.dtype == bool:
                r = np.rint(self.group_sum(base.astype(np.float64))).astype(np.int64)
                offset = np.arange(self.n, dtype=np.int64) - self.gstart[self.gid]
                if which == "optimistic":
                    return offset < r[self.gid]
                return offset >= (self.gsize - r)[self.gid]
            return self.sorted_in_groups(base, which)

        return self.cached((which, kind, level if kind == "rel" else None), compute)

    def sorted_in_groups(self, a: np.ndarray, which: str) -> np.ndarray:
        """Per-row values ``a`` (policy order) with each tie group's values sorted descending
        (``optimistic``) or ascending (``pessimistic``); only groups whose values differ
        (largest != smallest, exactly) are touched.  ``policy``: ``a`` itself."""
        if which == "policy" or not self.n:
            return a
        out = a.copy()
        first = self.gstart[:-1]
        mixed = np.maximum.reduceat(a, first) != np.minimum.reduceat(a, first)
        t = np.flatnonzero(mixed[self.gid])
        if len(t):
            order = np.lexsort((-a[t] if which == "optimistic" else a[t], self.gid[t]))
            out[t] = a[t][order]
        return out

    def tie_summary(self) -> dict:
        """Tie statistics of the whole run (before any pruning to the ranks measures read),
        as a dict (:meth:`TieSummary.to_dict`; the typed form is :attr:`summary`).

        ``groups``: tie groups of 2 or more documents; ``tied_docs``: documents in
        them; ``largest``: size of the largest group; ``share``: tied_docs / docs.
        """
        return self.summary.to_dict()


def _score_order(qi: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """Row order by (query ascending, score descending), file order inside ties; None if already so.

    Runs are normally grouped by query with scores non-increasing inside each
    query; that is checked in O(n) and then only the query blocks are permuted.
    Anything else is sorted with one stable lexsort.
    """
    n = len(qi)
    if n == 0:
        return None
    change = np.flatnonzero(qi[1:] != qi[:-1]) + 1
    starts = np.concatenate(([0], change))
    grouped = len(starts) == len(np.unique(qi[starts]))
    if grouped:
        ok = score[1:] <= score[:-1]
        ok[change - 1] = True  # a new query may start with any score
        grouped = bool(ok.all())
        del ok
    if not grouped:
        return np.lexsort((-score, qi))
    if (np.diff(qi[starts]) > 0).all():
        return None
    lens = np.diff(np.append(starts, n))
    border = np.argsort(qi[starts], kind="stable")
    lens_o = lens[border]
    shift = starts[border] - (np.cumsum(lens_o) - lens_o)
    return np.arange(n, dtype=np.int64) + np.repeat(shift, lens_o)


def _break_ties(order: np.ndarray, gid: np.ndarray, tied: np.ndarray, docid: pa.Array, policy: TieBreak,
                qfp: np.ndarray, qi_s: np.ndarray) -> None:
    """Reorder, in place, the rows of each tie group (rows ``tied`` of ``order``) by the policy.

    ``random:SEED`` orders a group by a seeded fingerprint of (query, docid): a pure
    function of the seed and the documents, whatever the file order or the ranks
    the measures read.
    """
    if policy.kind == "input" or not len(tied):
        return  # the score order is stable: file order inside ties
    g = gid[tied]
    if policy.kind == "random":
        seeded = pair_fingerprint(qfp, np.full(len(qfp), policy.seed, dtype=np.uint64))
        key = pair_fingerprint(seeded[qi_s[tied]], fingerprint(docid.take(pa.array(order[tied]))))
        sub = np.lexsort((key, g))
    else:
        # bytewise docno order, as trec_eval's strcmp; arrow sorts strings bytewise
        t = pa.table({"g": g, "d": docid.take(pa.array(order[tied]))})
        direction = "descending" if policy.kind == "trec_eval" else "ascending"
        sub = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("d", direction)]).to_numpy()
    order[tied] = order[tied][sub]


def _distinct(ids: pa.Array) -> list[str]:
    if pa.types.is_dictionary(ids.type):
        counts = np.bincount(ids.indices.to_numpy(zero_copy_only=False), minlength=len(ids.dictionary))
        return ids.dictionary.filter(pa.array(counts > 0)).to_pylist()
    return pc.unique(ids).to_pylist()


def _codes(ids: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Index of each id in ``value_set`` (int32), -1 where absent."""
    if pa.types.is_dictionary(ids.type):
        per_entry = pc.index_in(ids.dictionary, value_set=value_set).fill_null(-1).to_numpy()
        return per_entry.astype(np.int32)[ids.indices.to_numpy(zero_copy_only=False)]
    return pc.index_in(ids, value_set=value_set).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)


@dataclass(frozen=True, eq=False, repr=False)
class RunLayout:
    """A run laid out by (query, score descending), file order inside ties, with its tie groups.

    The one place where tierank codes queries and finds tie groups: :func:`prepare`
    (evaluation), tie prevalence, rank bands, score formats, the tie-structure figure
    and the rerank protocol all read it.  Build it with :func:`layout`.

    Rows of the run are referred to by their index among the *kept* rows (all rows,
    unless :func:`layout` was given a query set), in file order; *positions* are
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
    qid_array: pa.Array | None = field(default=None, repr=False)  # ``qids`` as an Arrow string array

    def __post_init__(self):
        if self.qid_array is None:
            object.__setattr__(self, "qid_array", pa.array(self.qids, pa.string()))

    def __repr__(self) -> str:
        return f"RunLayout({self.nq} queries, {self.n} rows, {self.summary.groups} tie groups)"

    @property
    def nq(self) -> int:
        return len(self.qids)

    @property
    def n(self) -> int:
        return len(self.codes)

    @cached_property
    def _order(self) -> np.ndarray | None:
        """The score order, or None where the kept rows already are in it."""
        return _score_order(self.codes, self.score)

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
        """Size of every tie group, aligned with :attr:`group_starts`."""
        return np.diff(self.group_starts, append=self.n)

    @cached_property
    def query_starts(self) -> np.ndarray:
        """int64 position offsets of the queries (length nq + 1; a query absent from the run is empty)."""
        return _segment_offsets(self.sorted_codes, self.nq)

    @cached_property
    def summary(self) -> TieSummary:
        """The :class:`TieSummary` of the kept rows."""
        starts, sizes, n = self.group_starts, self.group_sizes, self.n
        multi = sizes > 1
        tied = int(sizes[multi].sum())
        return TieSummary(
            docs=int(n),
            queries=int(self.nq),
            queries_with_ties=int(len(np.unique(self.sorted_codes[starts[multi]]))),
            groups=int(multi.sum()),
            tied_docs=tied,
            largest=int(sizes.max()) if n else 0,
            share=tied / n if n else 0.0,
        )

    def tied_sizes(self) -> np.ndarray:
        """int64 sizes of the tie groups of 2 or more documents, in position order."""
        sizes = self.group_sizes
        return sizes[sizes > 1].astype(np.int64)

    def ranks(self) -> np.ndarray:
        """int64 1-based rank of every kept row (file order) in its query, by the score order."""
        rank = np.empty(self.n, dtype=np.int64)
        rank[self.order] = np.arange(self.n, dtype=np.int64) - self.query_starts[self.sorted_codes] + 1
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


def layout(run: Run, qids: Sequence[str] | None = None) -> RunLayout:
    """The :class:`RunLayout` of ``run``: query codes, score order and tie groups.

    Parameters
    ----------
    run : Run
    qids : sequence of str, optional
        The queries to lay out, in code order; rows of other queries are left out,
        and a query without rows is empty.  Default: every query of the run, sorted.

    Tie groups are documents of one query with equal scores (``==`` on float64).
    Nothing is sorted until the order or the groups are asked for, so the query
    codes alone are cheap.
    """
    if qids is None:
        qids = sorted(_distinct(run.qid))
    qids = list(qids)
    value_set = pa.array(qids, pa.string())
    qi = _codes(run.qid, value_set)
    if (qi >= 0).all():
        return RunLayout(qids, qi, None, run.score, value_set)
    rows = np.flatnonzero(qi >= 0)
    return RunLayout(qids, qi[rows], rows, run.score[rows], value_set)


def prepare(run: Run, qrels: Qrels, *, tie_break: str | TieBreak = "trec_eval", rel_level: int = 1,
            complete: bool = False, candidates_only: bool = False,
            measures: tuple = (), count_judged: bool = False, max_depth: float = float("inf"),
            samples: int = 1000, seed: int = 0) -> Prepared:
    """Join ``run`` with ``qrels`` and lay it out in the policy's total order with tie groups.

    Queries evaluated: those in both run and qrels (trec_eval's default), or with
    ``complete=True`` every qrels query (absent from the run: no documents, so every
    measure is 0 for it), as ``trec_eval -c``.

    ``candidates_only`` counts relevant documents and ideal gains only among judged
    documents present in the run (the reranking convention of MTEB and ``trm``).

    With ``measures``, only the ranks they can read are kept: per query the deepest
    cutoff asked for, extended to the end of the tie group that straddles it (a
    group's composition decides every statistic at the ranks it covers).  The tie
    summary always describes the whole run.
    """
    policy = TieBreak.parse(tie_break)
    qrels_q = _distinct(qrels.qid)
    run_q = set(_distinct(run.qid))
    qids = sorted(qrels_q) if complete else sorted(q for q in qrels_q if q in run_q)
    # run rows of evaluated queries, in the total order by score, tie groups over the whole run
    lay = layout(run, qids)
    value_set, nq, qi = lay.qid_array, lay.nq, lay.codes
    docid = run.docid if lay.rows is None else run.docid.take(pa.array(lay.rows))

    qqi = pc.index_in(qrels.qid, value_set=value_set)
    qkeep = pc.is_valid(qqi)
    qt = pa.table({"q": qqi.filter(qkeep).cast(pa.int64()), "d": qrels.docid.filter(qkeep),
                   "g": pa.array(qrels.grade).filter(qkeep)})
    qrels_q_idx, qrels_grade = qt.column("q").to_numpy(), qt.column("g").to_numpy()

    order = lay._order  # None if already in score order; reordered in place below (the layout is ours)
    qi_s, new, starts, qstart, n = lay.sorted_codes, lay.group_first, lay.group_starts, lay.query_starts, lay.n
    qlen = np.diff(qstart)
    summary = lay.summary
    del lay

    # keep the ranks the measures read, whole tie groups
    depth = _depth(measures, qrels_q_idx, qrels_grade, nq, rel_level)
    if np.isfinite(max_depth):
        depth = np.minimum(np.full(nq, float(max_depth)) if depth is None else depth, max_depth)
    if depth is not None:
        first, qend = qstart[:-1], qstart[1:]
        b = first + np.minimum(depth, qend - first).astype(np.int64)  # first rank not read
        straddle = b < qend
        if n:  # (no row at all: a run with no document, as -c evaluates the queries it lacks)
            straddle &= ~new[np.minimum(b, n - 1)]
        nxt = np.searchsorted(starts, b, side="right")  # end of the group holding rank b
        end = np.where(straddle, np.append(starts, n)[nxt], b)
        del starts
        sizes = end - first
        kept = np.arange(int(sizes.sum()), dtype=np.int64)
        kept += np.repeat(first - (np.cumsum(sizes) - sizes), sizes)
        order = kept if order is None else order[kept]
        qi_s = qi_s[kept]
        gid = np.cumsum(new[kept]) - 1
        del kept
    else:
        del starts
        gid = np.cumsum(new) - 1
        order = np.arange(n, dtype=np.int64) if order is None else order
    del new
    qi_s = qi_s.astype(np.int64)
    qstart = _segment_offsets(qi_s, nq)
    pos = np.arange(len(qi_s), dtype=np.int64) - qstart[qi_s]
    gstart = np.append(np.flatnonzero(np.diff(gid, prepend=-1)), len(gid)).astype(np.int64)
    tied = np.flatnonzero(np.diff(gstart)[gid] > 1)
    _break_ties(order, gid, tied, docid, policy, fingerprint(value_set), qi_s)

    # grades of the kept rows by hash join on (query, docid); unjudged stays NaN
    rt = pa.table({"q": qi_s, "d": docid.take(pa.array(order)), "i": np.arange(len(order), dtype=np.int64)})
    joined = rt.join(qt, keys=["q", "d"], join_type="inner", use_threads=True)
    grade_s = np.full(len(order), np.nan)
    grade_s[joined.column("i").to_numpy()] = joined.column("g").to_numpy()
    qjudged = None
    if candidates_only or count_judged:
        # judged documents anywhere in the run, not only in the kept ranks
        cand = pa.table({"q": qi.astype(np.int64), "d": docid}).join(qt, keys=["q", "d"], join_type="inner",
                                                                      use_threads=True)
        cq = cand.column("q").to_numpy()
        qjudged = np.bincount(cq, minlength=nq)
    judged_grades = (cq, cand.column("g").to_numpy()) if candidates_only else (qrels_q_idx, qrels_grade)
    return Prepared(
        qids=qids, qstart=qstart, qi=qi_s, pos=pos, gid=gid, gstart=gstart, grade=grade_s,
        judged_grades=judged_grades, rel_level=rel_level, qlen=qlen, qjudged=qjudged,
        summary=summary, max_depth=max_depth, samples=samples, seed=seed,
    )


def _depth(measures, q_idx: np.ndarray, grade: np.ndarray, nq: int, rel_level: int) -> np.ndarray | None:
    """Deepest rank (exclusive) any measure reads, per query; None when some read the whole list."""
    if not measures:
        return None
    depth = np.zeros(nq)
    for m in measures:
        d = m.depth(lambda level: np.bincount(q_idx, weights=grade >= (rel_level if level is None else level),
                                              minlength=nq))
        depth = np.maximum(depth, d)
    return None if np.isinf(depth).any() else depth
