"""Tie groups and total orders over a whole run, vectorized.

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
from dataclasses import dataclass, field, replace
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
    >>> str(TieBreak.parse("trec_eval"))
    'trec_eval'
    """

    kind: str
    seed: int | None = None

    @classmethod
    def parse(cls, text: "str | TieBreak") -> "TieBreak":
        if isinstance(text, TieBreak):
            return text
        t = str(text).strip().lower()
        if t in ("trec_eval", "input", "docno"):
            return cls(t)
        m = _RANDOM.match(t)
        if m:
            return cls("random", int(m.group(1) or 0) % (1 << 64))
        raise TierankInputError(f"unknown tie-break policy {text!r}; accepted: {', '.join(POLICIES)}")

    def __str__(self) -> str:
        return f"random:{self.seed}" if self.kind == "random" else self.kind


def _segment_offsets(codes: np.ndarray, n: int) -> np.ndarray:
    """Offsets of contiguous runs of sorted integer codes 0..n-1 (empty runs allowed)."""
    return np.searchsorted(codes, np.arange(n + 1), side="left").astype(np.int64)


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
    summary: dict = field(default_factory=dict)  # tie statistics of the whole run
    unjudged_relevant: bool = False  # count unjudged documents as relevant (upper bounds)
    _cache: dict = field(default_factory=dict, repr=False)

    def assuming_unjudged_relevant(self) -> "Prepared":
        """The same run with every unjudged document counted relevant (N+ unchanged)."""
        return replace(self, unjudged_relevant=True, _cache={})

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
        key = ("rel", level)
        if key not in self._cache:
            rel = self.judged & (np.nan_to_num(self.grade, nan=-np.inf) >= level)
            self._cache[key] = rel | ~self.judged if self.unjudged_relevant else rel
        return self._cache[key]

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
        key = ("nrel", level)
        if key not in self._cache:
            q, g = self.judged_grades
            self._cache[key] = np.bincount(q, weights=(g >= level), minlength=self.nq)
        return self._cache[key]

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
        groups whose gains differ.
        """
        level = self.rel_level if level is None else level
        base = self.doc_values(kind, level)
        if which == "policy":
            return base
        key = (which, kind, level if kind == "rel" else None)
        if key not in self._cache:
            if base.dtype == bool:
                r = np.rint(self.group_sum(base.astype(np.float64))).astype(np.int64)
                offset = np.arange(self.n, dtype=np.int64) - self.gstart[self.gid]
                if which == "optimistic":
                    out = offset < r[self.gid]
                else:
                    out = offset >= (self.gsize - r)[self.gid]
            else:
                out = base.copy()
                m = self.gsize.astype(np.float64)
                s1, s2 = self.group_sum(base), self.group_sum(base * base)
                mixed = (s2 - s1 * s1 / m) > 1e-12
                t = np.flatnonzero(mixed[self.gid])
                if len(t):
                    order = np.lexsort((-base[t] if which == "optimistic" else base[t], self.gid[t]))
                    out[t] = base[t][order]
            self._cache[key] = out
        return self._cache[key]

    def tie_summary(self) -> dict:
        """Tie statistics of the whole run (before any pruning to the ranks measures read).

        ``groups``: tie groups of 2 or more documents; ``tied_docs``: documents in
        them; ``largest``: size of the largest group; ``share``: tied_docs / docs.
        """
        return dict(self.summary)


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


def _tie_summary(starts: np.ndarray, qi_s: np.ndarray, n: int, nq: int) -> dict:
    """Tie statistics from the first row of every tie group (rows sorted by query, score)."""
    sizes = np.diff(starts, append=n)
    multi = sizes > 1
    tied = int(sizes[multi].sum())
    out = {
        "docs": int(n),
        "queries": int(nq),
        "queries_with_ties": int(len(np.unique(qi_s[starts[multi]]))),
        "groups": int(multi.sum()),
        "tied_docs": tied,
        "largest": int(sizes.max()) if n else 0,
        "share": tied / n if n else 0.0,
    }
    return out


def prepare(run: Run, qrels: Qrels, *, tie_break: "str | TieBreak" = "trec_eval", rel_level: int = 1,
            complete: bool = False, candidates_only: bool = False,
            measures: tuple = (), count_judged: bool = False) -> Prepared:
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
    value_set = pa.array(qids, pa.string())
    nq = len(qids)

    # run rows of evaluated queries
    qi = _codes(run.qid, value_set)
    if (qi >= 0).all():
        score, docid = run.score, run.docid
    else:
        rows = np.flatnonzero(qi >= 0)
        qi, score, docid = qi[rows], run.score[rows], run.docid.take(pa.array(rows))

    qqi = pc.index_in(qrels.qid, value_set=value_set)
    qkeep = pc.is_valid(qqi)
    qt = pa.table({"q": qqi.filter(qkeep).cast(pa.int64()), "d": qrels.docid.filter(qkeep),
                   "g": pa.array(qrels.grade).filter(qkeep)})
    qrels_q_idx, qrels_grade = qt.column("q").to_numpy(), qt.column("g").to_numpy()

    # total order by score, tie groups over the whole run
    order = _score_order(qi, score)
    qi_s = qi if order is None else qi[order]
    ss = score if order is None else score[order]
    n = len(qi_s)
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        np.not_equal(qi_s[1:], qi_s[:-1], out=new[1:])
        new[1:] |= ss[1:] != ss[:-1]
    del ss
    starts = np.flatnonzero(new)  # first row of every tie group
    qstart = _segment_offsets(qi_s, nq)
    qlen = np.diff(qstart)
    summary = _tie_summary(starts, qi_s, n, nq)

    # keep the ranks the measures read, whole tie groups
    depth = _depth(measures, qrels_q_idx, qrels_grade, nq, rel_level)
    if depth is not None:
        first, qend = qstart[:-1], qstart[1:]
        b = first + np.minimum(depth, qend - first).astype(np.int64)  # first rank not read
        straddle = (b < qend) & ~new[np.minimum(b, n - 1)]
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
        summary=summary,
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
