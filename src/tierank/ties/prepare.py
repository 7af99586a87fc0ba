"""The measure input: a run joined with its qrels in one total order with tie groups ([`Prepared`][tierank.ties.prepare.Prepared])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, Protocol, get_args

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..io.model import Qrels, Run
from .judgments import Judgments, _encoded
from .layout import RunLayout, layout, running_count, segment_offsets
from .policy import TieBreak, break_ties
from .summary import TieSummary

#: per-row document values a measure reads (`Prepared.doc_values`)
DocKind = Literal["rel", "judged", "gain"]
#: arrangements of a tie group (`Prepared.arrangement`)
Which = Literal["policy", "optimistic", "pessimistic"]
DOC_KINDS: tuple[str, ...] = get_args(DocKind)
ARRANGEMENTS: tuple[str, ...] = get_args(Which)


class HasDepth(Protocol):
    """What `prepare` reads of a measure: the ranks it reads ([`tierank.measures.Measure.depth`][tierank.measures.protocol.Measure.depth])."""

    def depth(self, nrel: Callable[[int | None], np.ndarray]) -> float | np.ndarray: ...


class PrepareSettings(Protocol):
    """What `prepare` reads of the evaluation's settings: [`tierank.settings.EvalSettings`][tierank.settings.EvalSettings]
    (the tie-break ``policy``, ``rel``, ``complete``, ``candidates_only``, ``unjudged``, the ranks
    read at most ``depth``, ``samples``, ``seed`` and ``exact_limit``)."""

    @property
    def policy(self) -> TieBreak: ...
    @property
    def rel(self) -> int: ...
    @property
    def complete(self) -> bool: ...
    @property
    def candidates_only(self) -> bool: ...
    @property
    def unjudged(self) -> str: ...
    @property
    def depth(self) -> float: ...
    @property
    def samples(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def exact_limit(self) -> int: ...


@dataclass
class Prepared:
    """A run joined with its qrels, in the policy's total order, with tie groups.

    All row arrays are in sorted order; ``qstart`` (length nq+1) delimits queries,
    ``gstart`` (length ng+1) delimits tie groups.
    """

    qids: list[str]
    qstart: np.ndarray
    qi: np.ndarray  # query index of each row
    pos: np.ndarray  # 0-based rank of each row in its query
    gid: np.ndarray  # tie-group index of each row
    gstart: np.ndarray  # row offset of each group (+ sentinel)
    grade: np.ndarray  # grade of each row in policy order, NaN = unjudged
    judged_grades: tuple[
        np.ndarray, np.ndarray
    ]  # (query index, grade) of every judgment counted for N+ / ideal DCG
    rel: int  # default minimum grade counted relevant
    qlen: np.ndarray  # documents retrieved per query (before pruning)
    qjudged: np.ndarray | None = (
        None  # judged documents retrieved per query (whole run), if counted
    )
    summary: TieSummary = field(default_factory=TieSummary)  # tie statistics of the whole run
    unjudged_relevant: bool = False  # count unjudged documents as relevant (upper bounds)
    max_depth: float = float(
        "inf"
    )  # ranks read at most (trec_eval -M): every measure's cutoff is capped by it
    samples: int = 1000  # tie orderings drawn by the measures that have no exact method
    seed: int = 0  # seed of those draws
    unevaluated: int = 0  # queries of the run that are not evaluated: the qrels lack them
    #: tie orderings of a query enumerated at most by the measures that enumerate them
    exact_limit: int = 10000
    #: whether the measures compute their expectation and variance over the tie orderings; False:
    #: the oblivious value, min and max only (what ``tierank trec_eval`` prints and its note reads),
    #: and the families that can skip their expectation leave ``expected`` and ``var`` NaN where
    #: ties move the value (the others compute everything)
    moments: bool = True
    #: with ``moments`` False, whether the measures compute min and max; False: the oblivious value
    #: alone (what ``tierank.compat.pytrec_eval``'s ``evaluate`` returns), the families that can skip
    #: the extremes leave ``min`` and ``max`` NaN too
    extremes: bool = True
    #: the subtopic judgments (``{qid: {docid: {subtopic: grade}}}``) the intent-aware measures read,
    #: and the docid of each row in policy order; None when no measure asked for them
    subtopics: Any = None
    docid: pa.Array | None = None
    _cache: dict[tuple, Any] = field(default_factory=dict, repr=False)

    def cut(self, k: float) -> float:
        """A measure's cutoff ``k`` capped by `max_depth` (``trec_eval -M``): every family reads
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
        return (
            self.qlen
            if not np.isfinite(self.max_depth)
            else np.minimum(self.qlen, int(self.max_depth))
        )

    def assuming_unjudged_relevant(self) -> Prepared:
        """The same run with every unjudged document counted relevant (N+ unchanged)."""
        return replace(self, unjudged_relevant=True, _cache={})

    def cached(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """The value stored under ``key``, computing it once with ``compute()`` on first use.

        Measures keep per-run intermediates here (group moments, arrangements, N+); the
        cache lives as long as this [`Prepared`][tierank.ties.prepare.Prepared] and is empty in the copy made by
        [`assuming_unjudged_relevant`][tierank.ties.prepare.Prepared.assuming_unjudged_relevant].  Keys are tuples whose first element names
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
        qstart = segment_offsets(qi, self.nq)
        pos = np.arange(len(rows), dtype=np.int64) - qstart[qi]
        g = self.gid[rows]
        gid = np.cumsum(np.diff(g, prepend=-1) != 0) - 1 if len(g) else g
        gstart = np.append(np.flatnonzero(np.diff(gid, prepend=-1)), len(gid)).astype(np.int64)
        qlen = np.diff(qstart)
        return replace(
            self,
            qstart=qstart,
            qi=qi,
            pos=pos,
            gid=gid,
            gstart=gstart,
            grade=self.grade[rows],
            docid=None if self.docid is None else ac.take(self.docid, ac.array(rows)),
            qlen=qlen,
            max_depth=float("inf"),
            _cache={},
        )

    @cached_property
    def judged(self) -> np.ndarray:
        return ~np.isnan(self.grade)

    @cached_property
    def gain(self) -> np.ndarray:
        """Graded gain max(grade, 0) per row in policy order; unjudged 0."""
        # fmax: NaN (unjudged) gives 0; + 0.0 turns a grade of -0.0 into 0.0
        return np.fmax(self.grade, 0.0) + 0.0

    def relevant(self, rel: int | None = None) -> np.ndarray:
        """Binary relevance (judged and grade >= level) per row in policy order."""
        rel = self.rel if rel is None else rel

        def compute():
            with np.errstate(invalid="ignore"):
                r = self.grade >= rel  # (NaN, unjudged, is not)
            return r | ~self.judged if self.unjudged_relevant else r

        return self.cached(("rel", rel), compute)

    def doc_values(self, kind: DocKind, rel: int | None = None) -> np.ndarray:
        """Per-row document values in policy order: ``rel`` (at ``rel``), ``judged`` or ``gain``;
        any other kind is a programming error (``ValueError``).

        >>> p = Prepared([], np.zeros(1, np.int64), *(np.zeros(0, np.int64),) * 4, np.zeros(0),
        ...              (np.zeros(0), np.zeros(0)), 1, np.zeros(0, np.int64))
        >>> p.doc_values("grade")  # type: ignore[arg-type]
        Traceback (most recent call last):
        ...
        ValueError: unknown document value kind 'grade'; expected one of rel, judged, gain
        """
        if kind == "rel":
            return self.relevant(rel)
        if kind == "judged":
            return self.judged
        if kind == "gain":
            return self.gain
        raise ValueError(
            f"unknown document value kind {kind!r}; expected one of {', '.join(DOC_KINDS)}"
        )

    def nrel(self, rel: int | None = None) -> np.ndarray:
        """N+ per query: judgments with grade >= level (qrels, or judged candidates)."""
        rel = self.rel if rel is None else rel

        def compute():
            q, g = self.judged_grades
            return np.bincount(q, weights=(g >= rel), minlength=self.nq)

        return self.cached(("nrel", rel), compute)

    @cached_property
    def ideal(self) -> tuple[np.ndarray, np.ndarray]:
        """Positive gains per query sorted descending, and their query offsets (for IDCG)."""
        q, g = self.judged_grades
        keep = g > 0
        iq, ig = q[keep], g[keep]
        d = np.diff(iq)
        if not (
            (d > 0) | ((d == 0) & (ig[1:] <= ig[:-1]))
        ).all():  # (in order: `Judgments.by_grade`)
            o = np.lexsort((-ig, iq))
            iq, ig = iq[o], ig[o]
        return ig, segment_offsets(iq, self.nq)

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
    def gsize_float(self) -> np.ndarray:
        """`gsize` as float64 (read-only: shared by the measures)."""
        m = self.gsize.astype(np.float64)
        m.flags.writeable = False
        return m

    @cached_property
    def tied_rows(self) -> np.ndarray:
        """Rows in tie groups of 2 or more documents (ascending); the others no ordering moves."""
        return np.flatnonzero(self.gsize[self.gid] > 1)

    @cached_property
    def goffset(self) -> np.ndarray:
        """0-based offset of each row inside its tie group."""
        return np.arange(self.n, dtype=np.int64) - self.gstart[self.gid]

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

    def arrangement(self, which: Which, kind: DocKind, rel: int | None = None) -> np.ndarray:
        """``rel`` or ``gain`` sequence under ``policy``, ``optimistic`` or ``pessimistic``.

        Extremal arrangements reorder each tie group only: for binary relevance the
        optimistic one makes the group's first r_n positions relevant, the
        pessimistic one its last r_n (no sort); graded gains are sorted inside the
        groups whose gains differ at all (largest != smallest, exactly).  Any other ``which`` is a
        programming error (``ValueError``).
        """
        if which not in ARRANGEMENTS:
            raise ValueError(
                f"unknown arrangement {which!r}; expected one of {', '.join(ARRANGEMENTS)}"
            )
        rel = self.rel if rel is None else rel
        base = self.doc_values(kind, rel)
        if which == "policy":
            return base

        def compute():
            if base.dtype == bool:
                r = self.cached(
                    ("true_in_group", kind, rel if kind == "rel" else None),
                    lambda: np.rint(self.group_sum(base)).astype(np.int64),
                )
                # a document alone in its group keeps its value: only tied rows are rearranged
                t = self.tied_rows
                out = base.copy()
                if which == "optimistic":
                    out[t] = self.goffset[t] < r[self.gid[t]]
                else:
                    out[t] = self.goffset[t] >= (self.gsize - r)[self.gid[t]]
                return out
            return self.sorted_in_groups(base, which)

        return self.cached((which, kind, rel if kind == "rel" else None), compute)

    def sorted_in_groups(self, a: np.ndarray, which: Which) -> np.ndarray:
        """Per-row values ``a`` (policy order) with each tie group's values sorted descending
        (``optimistic``) or ascending (``pessimistic``); only groups whose values differ
        (largest != smallest, exactly) are touched.  ``policy``: ``a`` itself."""
        if which not in ARRANGEMENTS:
            raise ValueError(
                f"unknown arrangement {which!r}; expected one of {', '.join(ARRANGEMENTS)}"
            )
        if which == "policy" or not self.n:
            return a
        out = a.copy()
        # a group is mixed where two neighbours inside it differ (sorting any other group changes
        # nothing: its values are all equal)
        differ = a[1:] != a[:-1]
        differ &= self.gid[1:] == self.gid[:-1]
        mixed = np.zeros(len(self.gsize), dtype=bool)
        mixed[self.gid[1:][differ]] = True
        t = np.flatnonzero(mixed[self.gid])
        if len(t):
            order = np.lexsort((-a[t] if which == "optimistic" else a[t], self.gid[t]))
            out[t] = a[t][order]
        return out


def _kept_rows(
    first: np.ndarray,
    qend: np.ndarray,
    depth: np.ndarray | None,
    new: np.ndarray,
    starts: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows the measures can read: each query's (rows ``first`` to ``qend``) first ``depth`` ranks
    (None: all), extended to the end of the tie group that straddles the cutoff (``new``: the rows
    that start a group, ``starts``: where the groups start, ``n``: the rows in all); and how many
    of each query's."""
    if depth is None:
        end = qend
    else:
        b = first + np.minimum(depth, qend - first).astype(np.int64)  # first rank not read
        straddle = b < qend
        if n:  # (no row at all: a run with no document, as -c evaluates the queries it lacks)
            straddle &= ~new[np.minimum(b, n - 1)]
        nxt = np.searchsorted(starts, b, side="right")  # end of the group holding rank b
        end = np.where(straddle, np.append(starts, n)[nxt], b)
    sizes = end - first
    kept = np.arange(int(sizes.sum()), dtype=np.int64)
    kept += np.repeat(first - (np.cumsum(sizes) - sizes), sizes)
    return kept, sizes


def prepare(
    run: Run,
    qrels: Qrels,
    settings: PrepareSettings,
    *,
    measures: Sequence[HasDepth] = (),
    subtopics: Any = None,
    moments: bool = True,
    extremes: bool = True,
    judgments: Judgments | None = None,
) -> Prepared:
    """Join ``run`` with ``qrels`` and lay it out in the policy's total order with tie groups.

    ``settings`` ([`tierank.settings.EvalSettings`][tierank.settings.EvalSettings]) gives the
    tie-break of the oblivious value (``policy``), the relevance level ``rel``, the ranks read at
    most (``depth``: trec_eval's ``-M``), and the ``samples``, ``seed`` and ``exact_limit`` of the
    measures without a closed form.  Queries evaluated: those in both run and qrels (trec_eval's
    default), or with ``settings.complete`` every qrels query (absent from the run: no documents, so
    every measure is 0 for it), as ``trec_eval -c``.  ``settings.candidates_only`` counts relevant
    documents and ideal gains only among judged documents present in the run (the reranking
    convention of MTEB and ``trm``); with ``settings.unjudged == "bounds"`` the judged documents of
    each query's run are counted too (`Prepared.qjudged`, for the bounds over unjudged documents).

    With ``measures``, only the ranks they can read are kept: per query the deepest
    cutoff asked for, extended to the end of the tie group that straddles it (a
    group's composition decides every statistic at the ranks it covers).  The tie
    summary always describes the whole run.

    ``subtopics`` (the judgments of a [`tierank.io.subtopics.SubtopicQrels`][tierank.io.subtopics.SubtopicQrels]) are handed to the
    intent-aware measures with the docid of every kept row.

    ``moments=False`` asks for the oblivious value, min and max only (`Prepared.moments`), and
    with ``extremes=False`` too for the oblivious value alone (`Prepared.extremes`).
    ``judgments``: ``Judgments.of(qrels)`` built before (an evaluator's, for every run it reads).

    >>> from tierank import to_qrels, to_run
    >>> from tierank.settings import EvalSettings
    >>> prep = prepare(to_run({"q": {"a": 1.0, "b": 1.0, "c": 0.5}}), to_qrels({"q": {"b": 1}}),
    ...                EvalSettings(tie_break="docno"))
    >>> prep.qids, prep.gsize.tolist(), prep.grade.tolist()
    (['q'], [2, 1], [nan, 1.0, nan])
    """
    policy, rel, complete = settings.policy, settings.rel, settings.complete
    candidates_only, count_judged = settings.candidates_only, settings.unjudged == "bounds"
    max_depth = settings.depth
    if judgments is None or judgments.qids is None:
        judgments = Judgments.of(qrels)
    assert judgments.qids is not None
    evaluated, unevaluated, jcode, row_codes = _evaluated_queries(judgments.qids, run, complete)
    qids = evaluated.to_pylist()
    # run rows of evaluated queries, in the total order by score, tie groups over the whole run
    lay = layout(run, qids, evaluated, codes=row_codes)
    value_set, nq, qi, summary = lay.qid_array, lay.nq, lay.codes, lay.summary
    docid = run.docid if lay.rows is None else ac.take(run.docid, ac.array(lay.rows))
    evaluated_code = _judgment_codes(jcode, len(judgments.qids), nq)
    jq, jgrade = judgments.by_grade or (judgments.q, judgments.grade)
    qcode = evaluated_code[jq]  # (codes in the same order: an order by query stays one)
    keep_np = qcode >= 0
    qrels_q_idx = qcode[keep_np]
    qrels_grade = jgrade[keep_np]

    # keep the ranks the measures read, whole tie groups
    depth = _depth(measures, qrels_q_idx, qrels_grade, nq, rel)
    if np.isfinite(max_depth):
        depth = np.minimum(np.full(nq, float(max_depth)) if depth is None else depth, max_depth)
    order, qi_s, new, qlen = _ranks_kept(lay, depth)
    del lay
    gid = running_count(new)[1:].astype(np.int64)  # the groups started up to each row, less one
    gid -= 1
    gstart = np.flatnonzero(np.append(new, True)).astype(np.int64, copy=False)  # (and n)
    alone = new.copy()  # a row that starts its group and is followed by another group's start
    alone[:-1] &= new[1:]
    del new
    qi_s = qi_s.astype(np.int64, copy=False)
    qstart = segment_offsets(qi_s, nq)
    pos = np.arange(len(qi_s), dtype=np.int64)
    pos -= qstart[qi_s]
    tied = np.flatnonzero(~alone)
    del alone
    break_ties(order, gid, tied, docid, policy, value_set, qi_s)

    # grades of the kept rows: (query, docid) looked up among the judgments; unjudged stays NaN
    every = len(jcode) == len(judgments.qids)  # every judged query evaluated: the same codes
    grade_s = judgments.grades(qi_s if every else jcode[qi_s], docid, order)
    qjudged = None
    judged_grades = (qrels_q_idx, qrels_grade)
    if candidates_only or count_judged:
        cq, cgrade = _run_judgments(judgments, jcode[qi], docid, evaluated_code)
        qjudged = np.bincount(cq, minlength=nq)
        if candidates_only:
            judged_grades = (cq, cgrade)
    return Prepared(
        qids=qids,
        qstart=qstart,
        qi=qi_s,
        pos=pos,
        gid=gid,
        gstart=gstart,
        grade=grade_s,
        judged_grades=judged_grades,
        rel=rel,
        qlen=qlen,
        qjudged=qjudged,
        summary=summary,
        max_depth=max_depth,
        samples=settings.samples,
        seed=settings.seed,
        unevaluated=unevaluated,
        exact_limit=settings.exact_limit,
        subtopics=subtopics,
        moments=moments,
        extremes=extremes,
        docid=None if subtopics is None else ac.take(docid, ac.array(order)),
    )


def _evaluated_queries(
    qrels_q: pa.Array, run: Run, complete: bool
) -> tuple[pa.Array, int, np.ndarray, np.ndarray]:
    """The evaluated query ids, sorted (Arrow sorts strings by their UTF-8 bytes: Python's order): the
    qrels queries ``qrels_q`` (distinct and sorted, as [`Judgments.of`][tierank.ties.judgments.Judgments.of]
    gives them) the run has (every one with ``complete``); how many run queries the qrels lack; the
    index of each evaluated query among ``qrels_q`` (int64); and the evaluated code of every run row
    (int32, -1 for a query not evaluated), from one lookup of the run's distinct query ids."""
    ids = _encoded(run.qid)
    entries = (
        ids.dictionary
        if ids.dictionary.type == pa.string()
        else ac.cast(ids.dictionary, pa.string())
    )
    at = ac.numpy(ac.fill_null(ac.index_in(entries, qrels_q), -1))  # each id among the qrels'
    # (a row without a query id reads one more entry, neither used nor evaluated)
    rows = ac.numpy(ids.indices if not ids.null_count else ac.fill_null(ids.indices, len(entries)))
    used = np.bincount(rows, minlength=len(entries) + 1)[:-1] > 0
    lacking = used & (at < 0)
    unevaluated = len(ac.unique(ac.filter(entries, ac.array(lacking)))) if lacking.any() else 0
    if complete:
        evaluated, jcode = qrels_q, np.arange(len(qrels_q), dtype=np.int64)
    else:
        in_run = np.zeros(len(qrels_q), dtype=bool)
        in_run[at[used & (at >= 0)]] = True
        evaluated, jcode = ac.filter(qrels_q, ac.array(in_run)), np.flatnonzero(in_run)
    code = np.full(
        len(qrels_q) + 1, -1, dtype=np.int32
    )  # (-1, not among the qrels', reads the last)
    code[jcode] = np.arange(len(jcode), dtype=np.int32)
    entry_code = np.append(code[at], -1).astype(np.int32, copy=False)
    return evaluated, unevaluated, jcode, entry_code[rows]


def _judgment_codes(jcode: np.ndarray, njudged: int, nq: int) -> np.ndarray:
    """The evaluated code of every judgments' query, from each evaluated query's code among the
    judgments' ``jcode`` (-1: a query not evaluated; one more entry, -1, read by a judgment without a
    query id)."""
    evaluated_code = np.full(njudged + 1, -1, dtype=np.int64)
    evaluated_code[jcode] = np.arange(nq)
    return evaluated_code


def _ranks_kept(
    lay: RunLayout, depth: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kept rows of the layout, in the total order by score: their run rows, query codes, whether
    each starts a tie group, and every query's length in the whole run (``depth``: the ranks read per
    query, None for all)."""
    n, blocks = lay.n, lay.query_blocks
    if blocks is not None:
        # rows grouped by query, scores non-increasing: each query's ranks are a block of file rows,
        # so the ranks read are cut from the file rows directly (nothing of the whole run is permuted)
        first, qlen = blocks
        new = lay.file_group_first
        starts = (
            lay.file_group_starts
        )  # a query block ends where the next block's first group starts
        assert new is not None and starts is not None
        order, sizes = _kept_rows(first, first + qlen, depth, new, starts, n)  # file rows
        # every kept query starts with a whole group: its first row starts one
        return order, np.repeat(np.arange(len(qlen)), sizes), new[order], qlen
    score_order = lay._order  # None if already in score order
    qi_s, new, starts, qstart = (
        lay.sorted_codes,
        lay.group_first,
        lay.group_starts,
        lay.query_starts,
    )
    qlen = np.diff(qstart)
    if depth is None:
        return (
            (np.arange(n, dtype=np.int64) if score_order is None else score_order),
            qi_s,
            new,
            qlen,
        )
    kept, _ = _kept_rows(qstart[:-1], qstart[1:], depth, new, starts, n)
    order = kept if score_order is None else score_order[kept]
    # every kept query starts with a whole group: its first row starts one
    return order, qi_s[kept], new[kept], qlen


def _run_judgments(
    judgments: Judgments, jq: np.ndarray, docid: pa.Array, evaluated_code: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The judged documents anywhere in the run, not only in the kept ranks (``jq``: the judgments'
    code of each row's query): their evaluated query codes and grades."""
    found = judgments.lookup(jq, docid)
    cand = found[found >= 0]
    return evaluated_code[judgments.q[cand]], judgments.grade[cand]


def _depth(
    measures: Sequence[HasDepth], q_idx: np.ndarray, grade: np.ndarray, nq: int, rel: int
) -> np.ndarray | None:
    """Deepest rank (exclusive) any measure reads, per query; None when some read the whole list."""
    if not measures:
        return None
    counts: dict[int, np.ndarray] = {}  # N+ per level, counted once for every measure asking

    def nrel(own: int | None) -> np.ndarray:
        level = rel if own is None else own
        if level not in counts:
            counts[level] = np.bincount(q_idx, weights=grade >= level, minlength=nq)
        return counts[level]

    depth = np.zeros(nq)
    for m in measures:
        d = m.depth(nrel)
        if nq and np.ndim(d) == 0 and d == float("inf"):
            return None  # one reads the whole list
        depth = np.maximum(depth, d)
    return None if np.isinf(depth).any() else depth
