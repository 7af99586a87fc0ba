"""Reader of subtopic (diversity) qrels: ``qid subtopic docid grade``.

TREC Web track diversity qrels put the subtopic where plain qrels have the iteration
column, which [`tierank.io.read_qrels`][tierank.io.read_qrels] drops.  [`read_subtopic_qrels`][tierank.io.subtopics.read_subtopic_qrels] is the
opt-in reader that keeps it; the intent-aware measures
([`tierank.measures.diversity`][tierank.measures.diversity]) read their judgments from it.

Same file handling as the other readers (plain or gzip, pipes, a byte-order mark dropped,
runs of spaces/tabs between fields).  Every bad line is reported with file, line and reason
(at most 20, then a count), as [`tierank.errors.TierankInputError`][tierank.errors.TierankInputError].
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import Problem, ProblemLog, TierankInputError, quote
from . import lexer
from .model import Qrels
from .rows import fields, finite_grade

__all__ = [
    "SubtopicQrels",
    "nested_subtopics",
    "read_subtopic_file",
    "read_subtopic_qrels",
    "to_subtopic_qrels",
]


@dataclass(frozen=True)
class SubtopicQrels:
    """Subtopic judgments: ``judgments[qid][docid][subtopic] = grade``.

    A document absent from a query's judgments is unjudged; subtopics are kept as the
    file's tokens (strings).
    """

    judgments: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    source: str = "qrels"

    def subtopics(self, qid: str) -> list[str]:
        """The subtopics judged for ``qid`` (sorted).

        >>> to_subtopic_qrels({"q": {"d": {"2": 1, "1": 0}}}).subtopics("q")
        ['1', '2']
        """
        return sorted({s for grades in self.judgments.get(qid, {}).values() for s in grades})

    def plain(self) -> Qrels:
        """The plain qrels of these judgments: each judged document once, with its largest grade
        over the subtopics (0 for a document judged for no subtopic): what the measures that read
        no subtopic see.

        >>> q = to_subtopic_qrels({"q": {"a": {"1": 0, "2": 1}, "b": {"1": 0}}}).plain()
        >>> q.docid.to_pylist(), q.grade.tolist()
        (['a', 'b'], [1.0, 0.0])
        """
        import numpy as np
        import pyarrow as pa

        rows = [
            (q, d, max(grades.values(), default=0.0))
            for q, docs in self.judgments.items()
            for d, grades in docs.items()
        ]
        return Qrels(
            qid=pa.array([r[0] for r in rows], pa.string()),
            docid=pa.array([r[1] for r in rows], pa.string()),
            grade=np.array([r[2] for r in rows], dtype=np.float64),
            source=self.source,
        )


#: the nested form of subtopic qrels, in words
_NESTED = "subtopic qrels map queries to documents to subtopics to grades ({qid: {docid: {subtopic: grade}}})"


def to_subtopic_qrels(judgments: Mapping, source: str = "qrels") -> SubtopicQrels:
    """Subtopic qrels from a nested mapping ``{qid: {docid: {subtopic: grade}}}``.

    >>> to_subtopic_qrels({1: {"d": {1: 2}}}).judgments
    {'1': {'d': {'1': 2.0}}}
    >>> to_subtopic_qrels({"q": {"d": 1}})
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: qrels: query 'q', document 'd': grade 1 is not a map of subtopics: subtopic qrels map queries to documents to subtopics to grades ({qid: {docid: {subtopic: grade}}})
    >>> to_subtopic_qrels({"q": {"d": {"1": float("nan")}}})
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: qrels: relevance grade nan (query 'q', document 'd', subtopic '1') is not a finite number
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    for q, docs in judgments.items():
        qd = out.setdefault(str(q), {})
        if not isinstance(docs, Mapping):
            raise TierankInputError([Problem(source, None, f"query {quote(str(q))}: {_NESTED}")])
        for d, grades in docs.items():
            if not isinstance(grades, Mapping):
                raise TierankInputError(
                    [
                        Problem(
                            source,
                            None,
                            f"query {quote(str(q))}, document {quote(str(d))}: grade "
                            f"{grades!r} is not a map of subtopics: {_NESTED}",
                        )
                    ]
                )
            dd = qd.setdefault(str(d), {})
            for s, g in grades.items():
                g = float(g)
                if not math.isfinite(g):
                    raise TierankInputError(
                        [
                            Problem(
                                source,
                                None,
                                f"relevance grade {g} (query {quote(str(q))}, "
                                f"document {quote(str(d))}, subtopic {quote(str(s))}) "
                                f"is not a finite number",
                            )
                        ]
                    )
                dd[str(s)] = g
    return SubtopicQrels(out, source)


def read_subtopic_qrels(path: str | os.PathLike) -> SubtopicQrels:
    """Read diversity qrels (``qid subtopic docid grade``, TREC Web track layout), plain or gzip.

    Raises
    ------
    TierankInputError
        Naming file, line and reason: a line without exactly 4 fields, a grade that is not
        a finite number, a (query, subtopic, document) judged twice, an empty file.
    """
    src = str(path)
    data = lexer.load(path)
    bad = ProblemLog(src)
    seen: dict[tuple[str, str, str], int] = {}
    out: dict[str, dict[str, dict[str, float]]] = {}

    for lineno, parts in fields(data, bad, "qid subtopic docid grade", 4):
        q, s, d, g = parts
        grade = finite_grade(bad, lineno, g)
        if grade is None:
            continue
        prev = seen.get((q, s, d))
        if prev is not None:
            bad.repeated(
                lineno,
                f"document {quote(d)} judged twice for query {quote(q)}, subtopic {quote(s)}",
                prev,
            )
            continue
        seen[(q, s, d)] = lineno
        out.setdefault(q, {}).setdefault(d, {})[s] = grade
    bad.raise_if_any()
    if not out:
        raise TierankInputError([Problem(src, None, "empty qrels: no judgment lines")])
    return SubtopicQrels(out, src)


def nested_subtopics(judgments: Mapping, source: str = "qrels") -> SubtopicQrels:
    """Subtopic qrels from a nested mapping, refusing an empty one (the door's reader of dicts)."""
    sq = to_subtopic_qrels(judgments, source)
    if not any(sq.judgments.values()):
        raise TierankInputError([Problem(source, None, "empty qrels: no judgment")])
    return sq


#: what the intent-aware measures need, in words
_NEED = "the intent-aware measures need subtopic qrels (qid subtopic docid grade)"


def read_subtopic_file(path: str | os.PathLike) -> SubtopicQrels:
    """[`read_subtopic_qrels`][tierank.io.subtopics.read_subtopic_qrels], refusing other layouts in one line: a
    file whose first line has not 4 fields (BEIR's qrels, a run), or whose second column is ``0`` on
    every line (trec_eval's iteration column, not subtopics: TREC numbers subtopics from 1)."""
    fields = lexer.first_fields(path)  # a pipe's bytes stay for the reader
    if fields is not None and len(fields) != 4:
        raise TierankInputError(
            [Problem(str(path), None, f"its first line has {len(fields)} fields; {_NEED}")]
        )
    sq = read_subtopic_qrels(path)
    if all(s == "0" for docs in sq.judgments.values() for g in docs.values() for s in g):
        raise TierankInputError(
            [
                Problem(
                    sq.source,
                    None,
                    "plain qrels (the second column is 0 on every line: trec_eval's iteration), "
                    f"but {_NEED}",
                )
            ]
        )
    return sq
