"""Tie prevalence and ordering defects in runs: Table 1 of Yang, Moffat & Turpin, for any runs.

For each run (a "system") and each of its queries (a "system-topic"):

* **ties**: documents whose score equals that of another document of the query. As in the
  paper, a document is *tied with its predecessor* when, after re-sorting by
  (score descending, rank ascending), it has the same score as the document before it;
  ``docs_in_ties`` also counts the first document of each tie group;
* **rank/score contradictions**: adjacent documents in that re-sorted order whose rank
  column says the opposite order (the later one has the smaller rank);
* **score order violations**: adjacent lines of a query, in file order, whose score
  *increases* (e.g. exponent notation sorted as text: ``-1.37`` before ``-7.763e-05``);
* **rank order violations**: adjacent lines of a query, in file order, whose rank decreases;
* **duplicates**: a document listed more than once for a query.

Everything is vectorized over the whole run; documents are referred to by their row
(1-based position among the run's result lines).
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..io.fingerprint import fingerprint, fingerprint_ids, pair_fingerprint
from ..io.model import Run
from ..ties import TieSummary, layout

MAX_EXAMPLES = 5


@dataclass(frozen=True)
class RunTies:
    """Tie statistics and ordering defects of one run.

    The tie counts are the run's [`tierank.ties.TieSummary`][tierank.ties.TieSummary] ([`ties`][tierank.ties]), read under this
    report's names (``queries``, ``docs``, ``queries_with_ties``, ``tie_groups``, ``docs_in_ties``,
    ``docs_tied_with_predecessor``: [`TieSummary.prevalence_fields`][tierank.ties.summary.TieSummary.prevalence_fields]).
    """

    name: str
    ties: TieSummary
    largest_groups: list[dict[str, Any]] = field(
        default_factory=list
    )  # [{"query", "score", "size"}]
    contradictions: int = 0
    queries_with_contradictions: int = 0
    score_order_violations: int = 0
    queries_with_score_order_violations: int = 0
    rank_order_violations: int = 0
    duplicates: int = 0
    queries_with_duplicates: int = 0
    examples: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict
    )  # defect -> [{"query", "row", ...}]

    @property
    def queries(self) -> int:
        return self.ties.queries

    @property
    def docs(self) -> int:
        return self.ties.docs

    @property
    def queries_with_ties(self) -> int:
        return self.ties.queries_with_ties

    @property
    def tie_groups(self) -> int:
        return self.ties.groups

    @property
    def docs_in_ties(self) -> int:
        return self.ties.tied_docs

    @property
    def docs_tied_with_predecessor(self) -> int:
        return self.ties.tied_with_predecessor

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, **self.ties.prevalence_fields()}
        out.update(
            (f.name, deepcopy(getattr(self, f.name)))
            for f in fields(self)
            if f.name not in ("name", "ties")
        )
        return out


@dataclass(frozen=True)
class TieReport:
    """Per-run statistics and the summary over the set (percentages as in the paper's Table 1)."""

    runs: list[RunTies]
    summary: dict

    def to_dict(self) -> dict:
        return {"runs": [r.to_dict() for r in self.runs], "summary": self.summary}


def _plain(ids: pa.Array) -> pa.Array:
    return ids.dictionary_decode() if pa.types.is_dictionary(ids.type) else ids


def _examples(mask_rows: np.ndarray, qid: pa.Array, extra: dict | None = None) -> list[dict]:
    rows = mask_rows[:MAX_EXAMPLES]
    qs = qid.take(pa.array(rows)).to_pylist() if len(rows) else []
    out = [{"query": q, "row": int(r) + 1} for q, r in zip(qs, rows)]
    for key, vals in (extra or {}).items():
        for rec, v in zip(out, vals[:MAX_EXAMPLES]):
            rec[key] = v
    return out


def _contradiction_rows(lay, rank: np.ndarray) -> np.ndarray:
    """Rows (0-based) whose rank says the opposite of the (query, score desc, rank asc) order: the
    first document of a tie group ranked before the group above it."""
    order = lay.within_ties(rank)
    sq, sr = lay.sorted_codes, rank[order]
    contra = (sq[1:] == sq[:-1]) & lay.group_first[1:] & (sr[1:] < sr[:-1])
    return order[1:][contra]


def _largest_groups(lay, qi: np.ndarray, qid: pa.Array, score: np.ndarray, top: int) -> list[dict]:
    """The ``top`` largest tie groups (size > 1), queries in order of first appearance in the file,
    then by score."""
    starts, sizes = lay.group_starts, lay.group_sizes
    first_row = np.unique(qi, return_index=True)[1]
    by_file = np.argsort(first_row[lay.sorted_codes[starts]], kind="stable")
    big = by_file[np.argsort(-sizes[by_file], kind="stable")[:top]]
    big = big[sizes[big] > 1]
    group_rows = lay.order[starts[big]]
    return [
        {"query": q, "score": float(s), "size": int(z)}
        for q, s, z in zip(
            qid.take(pa.array(group_rows)).to_pylist() if len(big) else [],
            score[group_rows],
            sizes[big],
        )
    ]


def _duplicate_rows(run: Run, qid: pa.Array, qi: np.ndarray) -> np.ndarray:
    """Rows (0-based, sorted) that repeat a (query, document) of an earlier row: equal fingerprints,
    confirmed on the strings."""
    key = pair_fingerprint(fingerprint_ids(qid), fingerprint(run.docid))
    ko = np.argsort(key, kind="stable")
    cand = np.flatnonzero(key[ko][1:] == key[ko][:-1])
    if not len(cand):
        return np.zeros(0, dtype=np.int64)
    a, b = ko[cand], ko[cand + 1]
    same = np.asarray(
        ac.equal(ac.take(run.docid, pa.array(a)), ac.take(run.docid, pa.array(b)))
    ) & (qi[a] == qi[b])
    return np.sort(np.maximum(a, b)[same])


def _queries_with(qi: np.ndarray, rows: np.ndarray) -> int:
    return int(len(np.unique(qi[rows])))


def analyze_run(run: Run, name: str | None = None, top: int = 5) -> RunTies:
    """Tie statistics and ordering defects of ``run`` (see the module docstring).

    Examples
    --------
    >>> from tierank import to_run
    >>> r = analyze_run(to_run({"q": {"a": 2.0, "b": 1.0, "c": 1.0}}), "demo")
    >>> r.tie_groups, r.docs_in_ties, r.docs_tied_with_predecessor, r.largest_groups[0]["size"]
    (1, 2, 1, 2)
    """
    qid = _plain(run.qid)
    lay = layout(run)
    qi = lay.codes.astype(np.int64)
    score = run.score
    rank = run.rank if run.rank is not None else np.arange(len(run), dtype=np.float64)
    rank = np.where(np.isfinite(rank), rank, np.inf)
    contra_rows = _contradiction_rows(lay, rank)
    # file order: scores should not increase, ranks should not decrease, inside a query
    fq = qi[1:] == qi[:-1]
    score_up_rows = np.flatnonzero(fq & (score[1:] > score[:-1])) + 1
    rank_down = fq & (rank[1:] < rank[:-1])
    dup_rows = _duplicate_rows(run, qid, qi)
    return RunTies(
        name=name or run.source,
        ties=lay.summary,
        largest_groups=_largest_groups(lay, qi, qid, score, top),
        contradictions=int(len(contra_rows)),
        queries_with_contradictions=_queries_with(qi, contra_rows),
        score_order_violations=int(len(score_up_rows)),
        queries_with_score_order_violations=_queries_with(qi, score_up_rows),
        rank_order_violations=int(rank_down.sum()),
        duplicates=int(len(dup_rows)),
        queries_with_duplicates=_queries_with(qi, dup_rows),
        examples={
            "contradictions": _examples(np.sort(contra_rows), qid),
            "score_order_violations": _examples(
                score_up_rows,
                qid,
                {
                    "score": score[score_up_rows].tolist(),
                    "previous_score": score[score_up_rows - 1].tolist(),
                },
            ),
            "duplicates": _examples(
                dup_rows,
                qid,
                {"docid": run.docid.take(pa.array(dup_rows)).to_pylist() if len(dup_rows) else []},
            ),
        },
    )


def _pct(num: float, den: float) -> float:
    return 100.0 * num / den if den else 0.0


def analyze(runs: dict[str, Run], top: int = 5) -> TieReport:
    """Analyze every run and summarise the set as the paper's Table 1 (percent of systems,
    system-topic combinations and documents affected)."""
    stats = [analyze_run(r, name, top) for name, r in runs.items()]
    nsys = len(stats)
    every = TieSummary.combine(s.ties for s in stats)
    topics, docs = every.queries, every.docs
    summary = {
        "systems": nsys,
        "system_topics": topics,
        "docs": docs,
        "tied_scores": {
            "systems_pct": _pct(sum(s.ties.groups > 0 for s in stats), nsys),
            "system_topics_pct": _pct(every.queries_with_ties, topics),
            "docs_pct": _pct(every.tied_with_predecessor, docs),
        },
        "rank_score_contradictions": {
            "systems_pct": _pct(sum(s.contradictions > 0 for s in stats), nsys),
            "system_topics_pct": _pct(sum(s.queries_with_contradictions for s in stats), topics),
            "docs_pct": _pct(sum(s.contradictions for s in stats), docs),
        },
        "score_order_violations": sum(s.score_order_violations for s in stats),
        "rank_order_violations": sum(s.rank_order_violations for s in stats),
        "duplicates": sum(s.duplicates for s in stats),
    }
    return TieReport(runs=stats, summary=summary)
