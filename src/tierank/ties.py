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
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import TierankInputError
from .io.model import Qrels, Run

_RANDOM = re.compile(r"^random(?::(\d+))?$")

POLICIES = ("trec_eval", "input", "docno", "random:SEED")


@dataclass(frozen=True)
class TieBreak:
    """A named tie-break policy for the tie-oblivious value.

    ``trec_eval``: score descending, then docno descending (bytewise), as trec_eval;
    ``input``: file order; ``docno``: docno ascending; ``random:SEED``: uniformly
    random order inside each tie group, reproducible from SEED.

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
            return cls("random", int(m.group(1) or 0))
        raise TierankInputError(f"unknown tie-break policy {text!r}; accepted: {', '.join(POLICIES)}")

    def __str__(self) -> str:
        return f"random:{self.seed}" if self.kind == "random" else self.kind


def _stable_argsort(a: np.ndarray) -> np.ndarray:
    return np.argsort(a, kind="stable")


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
    in_run: np.ndarray      # query present in the run
    docid: pa.Array | None = None  # docids in policy order (for inspection)
    _cache: dict = field(default_factory=dict, repr=False)

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
            self._cache[key] = self.judged & (np.nan_to_num(self.grade, nan=-np.inf) >= level)
        return self._cache[key]

    @property
    def rel(self) -> np.ndarray:
        return self.relevant()

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

    @cached_property
    def tied_rows(self) -> np.ndarray:
        """Rows that belong to a tie group of two or more documents."""
        return np.flatnonzero(self.gsize[self.gid] > 1)

    def group_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.gid, weights=values, minlength=len(self.gsize))

    def query_sum(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        qi = self.qi if rows is None else self.qi[rows]
        return np.bincount(qi, weights=values, minlength=self.nq)

    def arrangement(self, which: str, kind: str, level: int | None = None) -> np.ndarray:
        """``rel`` or ``gain`` sequence under ``policy``, ``optimistic`` or ``pessimistic``.

        The extremal arrangements sort each tie group by (relevant at ``level``,
        gain), descending or ascending: one rearrangement is extremal for binary
        and graded measures alike.
        """
        level = self.rel_level if level is None else level
        base = self.relevant(level) if kind == "rel" else self.gain
        if which == "policy":
            return base
        key = (which, kind, level)
        if key not in self._cache:
            out = base.copy()
            t = self.tied_rows
            if len(t):
                k = self.relevant(level)[t] * (1.0 + self.gain.max()) + self.gain[t]
                order = np.lexsort((-k if which == "optimistic" else k, self.gid[t]))
                out[t] = base[t][order]
            self._cache[key] = out
        return self._cache[key]

    def tie_summary(self) -> dict:
        """Tie statistics of the evaluated rows.

        ``groups``: tie groups of 2 or more documents; ``tied_docs``: documents in
        them; ``largest``: size of the largest group; ``share``: tied_docs / docs.
        """
        gs = self.gsize
        multi = gs[gs > 1]
        return {
            "docs": int(self.n),
            "queries": int(self.nq),
            "queries_with_ties": int(len(np.unique(self.gq[gs > 1]))) if len(multi) else 0,
            "groups": int(len(multi)),
            "tied_docs": int(multi.sum()),
            "largest": int(multi.max()) if len(multi) else 1 if self.n else 0,
            "share": float(multi.sum() / self.n) if self.n else 0.0,
        }


def _sort_order(qi: np.ndarray, score: np.ndarray, docid: pa.Array, policy: TieBreak) -> tuple[np.ndarray, np.ndarray]:
    """Row order by (query asc, score desc, policy), and the group id of each sorted row."""
    # Two stable passes: file order breaks remaining ties, which *is* the input policy.
    # Timsort is adaptive, so runs already sorted by query and score cost ~O(n).
    order = _stable_argsort(-score)
    order = order[_stable_argsort(qi[order])]
    sq, ss = qi[order], score[order]
    new = np.empty(len(order), dtype=bool)
    if len(order):
        new[0] = True
        new[1:] = (sq[1:] != sq[:-1]) | (ss[1:] != ss[:-1])
    gid = np.cumsum(new) - 1
    if policy.kind == "input" or not len(order):
        return order, gid
    gsize = np.bincount(gid)
    tied = np.flatnonzero(gsize[gid] > 1)
    if not len(tied):
        return order, gid
    g = gid[tied]
    if policy.kind == "random":
        key = np.random.default_rng(policy.seed).random(len(tied))
        sub = np.lexsort((key, g))
    else:
        # bytewise docno order, as trec_eval's strcmp; arrow sorts strings bytewise
        t = pa.table({"g": g, "d": docid.take(pa.array(order[tied]))})
        direction = "descending" if policy.kind == "trec_eval" else "ascending"
        sub = pc.sort_indices(t, sort_keys=[("g", "ascending"), ("d", direction)]).to_numpy()
    order[tied] = order[tied][sub]
    return order, gid


def prepare(run: Run, qrels: Qrels, *, tie_break: "str | TieBreak" = "trec_eval", rel_level: int = 1,
            complete: bool = False, candidates_only: bool = False, keep_docids: bool = False) -> Prepared:
    """Join ``run`` with ``qrels`` and lay it out in the policy's total order with tie groups.

    Queries evaluated: those in both run and qrels (trec_eval's default), or with
    ``complete=True`` every qrels query (absent from the run: no documents, so every
    measure is 0 for it), as ``trec_eval -c``.

    ``candidates_only`` counts relevant documents and ideal gains only among judged
    documents present in the run (the reranking convention of MTEB and ``trm``).
    """
    policy = TieBreak.parse(tie_break)
    qrels_q = pc.unique(qrels.qid).to_pylist()
    run_q = set(pc.unique(run.qid).to_pylist())
    qids = sorted(qrels_q) if complete else sorted(q for q in qrels_q if q in run_q)
    value_set = pa.array(qids, pa.string())
    nq = len(qids)

    # run rows of evaluated queries
    rqi = pc.index_in(run.qid, value_set=value_set)
    keep = np.asarray(pc.is_valid(rqi))
    if keep.all():
        rows = None
        qi = rqi.to_numpy(zero_copy_only=False).astype(np.int64)
        score, docid = run.score, run.docid
    else:
        rows = np.flatnonzero(keep)
        qi = rqi.filter(pa.array(keep)).to_numpy().astype(np.int64)
        score, docid = run.score[rows], run.docid.take(pa.array(rows))

    # grades by hash join on (query, docid); unjudged stays NaN
    qqi = pc.index_in(qrels.qid, value_set=value_set)
    qkeep = pc.is_valid(qqi)
    qt = pa.table({"q": qqi.filter(qkeep).cast(pa.int64()), "d": qrels.docid.filter(qkeep),
                   "g": pa.array(qrels.grade).filter(qkeep)})
    rt = pa.table({"q": qi, "d": docid, "i": np.arange(len(qi), dtype=np.int64)})
    joined = rt.join(qt, keys=["q", "d"], join_type="inner", use_threads=True)
    grade = np.full(len(qi), np.nan)
    grade[joined.column("i").to_numpy()] = joined.column("g").to_numpy()

    order, gid = _sort_order(qi, score, docid, policy)
    qi_s = qi[order]
    grade_s = grade[order]
    qstart = _segment_offsets(qi_s, nq)
    pos = np.arange(len(qi_s), dtype=np.int64) - qstart[qi_s]
    gstart = np.append(np.flatnonzero(np.diff(gid, prepend=-1)), len(gid)).astype(np.int64)
    if candidates_only:
        j = ~np.isnan(grade_s)
        judged_grades = (qi_s[j], grade_s[j])
    else:
        judged_grades = (qt.column("q").to_numpy(), qt.column("g").to_numpy())
    in_run = np.zeros(nq, dtype=bool)
    in_run[np.unique(qi)] = True
    return Prepared(
        qids=qids, qstart=qstart, qi=qi_s, pos=pos, gid=gid, gstart=gstart, grade=grade_s,
        judged_grades=judged_grades, rel_level=rel_level, in_run=in_run,
        docid=docid.take(pa.array(order)) if keep_docids else None,
    )
