"""BEIR-layout reranking sets: ``queries.jsonl``, ``corpus.jsonl``, qrels and a candidate run.

[`load_beir`][tierank.io.beir.load_beir] finds the files of a BEIR-layout directory, reads the
qrels and the first-stage candidate run with [`tierank.io.readers.read_qrels`][tierank.io.readers.read_qrels]
and [`tierank.io.readers.read_run`][tierank.io.readers.read_run], orders each query's candidates by
first-stage score, and reads the texts of exactly the queries and documents
that are needed.  Every file may be gzip-compressed (``corpus.jsonl.gz``,
``qrels.txt.gz``, ...: a name with ``.gz`` added is looked for after the plain
one; gzip is recognised by its magic bytes).  Every malformed line is reported
as ``file:line: reason`` ([`TierankInputError`][tierank.errors.TierankInputError]).
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import Problem, ProblemLog, TierankInputError, quote
from .lexer import GZIP_MAGIC

__all__ = [
    "BeirSet",
    "load_beir",
    "check_selection",
    "read_jsonl",
    "find_inputs",
    "find_texts",
    "read_texts",
    "pool_texts",
    "QRELS_NAMES",
    "CANDIDATE_NAMES",
    "QUERY_SETS",
]

#: Where the qrels and the candidate run are looked for inside the directory, in this order.
QRELS_NAMES = ("qrels.txt", "qrels/test.tsv", "qrels.tsv", "qrels")
CANDIDATE_NAMES = ("candidates.run", "candidates.txt")
MAX_PROBLEMS = 20
#: Which queries `load_beir` keeps: those with a judgment, or every query with candidates.
QUERY_SETS = ("judged", "all")


def _count(value: Any, what: str) -> int | None:
    """``value`` as an int >= 1 (None stays None), or a [`TierankInputError`][tierank.io.beir.TierankInputError] naming ``what``."""
    if value is None:
        return None
    try:
        n = int(value)
        ok = not isinstance(value, bool) and (n == value if isinstance(value, float) else True)
    except (TypeError, ValueError):
        n, ok = 0, False
    if not ok or n < 1:
        raise TierankInputError([Problem("", None, f"{what} must be >= 1, got {value!r}")])
    return n


def check_selection(
    queries: str = "judged", depth: Any = None, max_queries: Any = None
) -> tuple[str, int | None, int | None]:
    """The query selection of [`load_beir`][tierank.io.beir.load_beir], checked without reading anything.

    Callers that write outputs check it before making any directory.

    >>> check_selection("all", 5, None)
    ('all', 5, None)
    >>> check_selection("judged", -1)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: depth must be >= 1, got -1
    """
    if queries not in QUERY_SETS:
        raise TierankInputError(
            [Problem("", None, f"queries must be 'judged' or 'all', got {queries!r}")]
        )
    return queries, _count(depth, "depth"), _count(max_queries, "max queries")


def read_jsonl(path: str | os.PathLike, keep: Callable[[dict], bool] | None = None) -> list[dict]:
    """The objects of a JSON-lines file that have an ``"_id"`` (and pass ``keep``).

    Blank lines are skipped; a UTF-8 byte-order mark is ignored; a gzip file
    (magic bytes ``1f 8b``) is decompressed while it is read; a line that is
    not valid UTF-8, not valid JSON or not an object with an ``"_id"`` is
    reported with its line number (at most 20 problems), corrupt or truncated
    gzip data with the file's name.

    Examples
    --------
    >>> import gzip, tempfile
    >>> f = Path(tempfile.mkdtemp()) / "queries.jsonl.gz"
    >>> _ = f.write_bytes(gzip.compress(b'{"_id": "q1", "text": "tie"}\\n\\n{"_id": 2}\\n'))
    >>> read_jsonl(f)
    [{'_id': 'q1', 'text': 'tie'}, {'_id': 2}]
    >>> _ = f.write_bytes(gzip.compress(b'{"_id": "q1"}\\n')[:-4])
    >>> read_jsonl(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: .../queries.jsonl.gz: corrupt or truncated gzip data (...)
    """
    path = Path(path)
    out, problems = [], []
    gz = False
    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == GZIP_MAGIC
        with gzip.open(path, "rb") if gz else open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    problems.append(Problem(str(path), n, "not valid UTF-8"))
                except json.JSONDecodeError as exc:
                    problems.append(Problem(str(path), n, f"not valid JSON ({exc.msg})"))
                else:
                    if not isinstance(rec, dict) or "_id" not in rec:
                        problems.append(Problem(str(path), n, 'expected an object with an "_id"'))
                    elif keep is None or keep(rec):
                        out.append(rec)
                if len(problems) >= MAX_PROBLEMS:
                    break
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        reason = (
            f"corrupt or truncated gzip data ({exc})"
            if gz
            else f"cannot read ({getattr(exc, 'strerror', None) or exc})"
        )
        raise TierankInputError(
            problems[: MAX_PROBLEMS - 1] + [Problem(str(path), None, reason)]
        ) from None
    if problems:
        raise TierankInputError(problems)
    return out


@dataclass
class BeirSet:
    """Query texts, document texts, qrels and candidates (first-stage order) of a reranking set."""

    queries: dict[str, str]
    docs: dict[str, str]
    candidates: dict[str, list[str]]  # qid -> docids in first-stage order
    qrels: Any  # tierank.io.model.Qrels
    qrels_path: Path
    candidates_path: Path
    queries_path: Path | None = None
    corpus_path: Path | None = None

    @property
    def inputs(self) -> tuple[Path, ...]:
        """Every file read: outputs must never overwrite one of them."""
        return tuple(
            p
            for p in (self.qrels_path, self.candidates_path, self.queries_path, self.corpus_path)
            if p
        )


def _find(data: Path, names: Sequence[str], what: str) -> Path:
    """The first of ``names`` (each plain, then with ``.gz``) that is a file in ``data``."""
    for n in names:
        for name in (n, f"{n}.gz"):
            if (data / name).is_file():
                return data / name
    raise TierankInputError(
        [
            Problem(
                str(data),
                None,
                f"no {what} file (looked for {', '.join(names)}, each also with .gz)",
            )
        ]
    )


def find_texts(data_dir: str | os.PathLike) -> tuple[Path, Path]:
    """The ``queries.jsonl`` and ``corpus.jsonl`` paths of a BEIR directory (each plain or ``.gz``)."""
    data = Path(data_dir)
    return _find(data, ("queries.jsonl",), "queries"), _find(data, ("corpus.jsonl",), "corpus")


def read_texts(
    queries: Path, docs: Path, need_q: set[str], need_d: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The texts of the queries ``need_q`` in ``queries`` and of the documents ``need_d`` in ``docs``
    (BEIR JSONL; a document's title, if any, before its text); ids not found are left out, for the
    caller to name."""
    qtexts = {
        str(r["_id"]): str(r.get("text", ""))
        for r in read_jsonl(queries, lambda r: str(r["_id"]) in need_q)
    }
    dtexts = {}
    for r in read_jsonl(docs, lambda r: str(r["_id"]) in need_d):
        title, text = str(r.get("title") or ""), str(r.get("text") or "")
        dtexts[str(r["_id"])] = f"{title} {text}".strip() if title else text
    return qtexts, dtexts


def pool_texts(
    queries: Path,
    docs: Path,
    pool: Mapping[str, Sequence[str]],
    query_missing: str = "has candidates but no text",
    doc_missing: str = "is a candidate but not in the corpus",
) -> tuple[dict[str, str], dict[str, str]]:
    """The texts ([`read_texts`][tierank.io.beir.read_texts]) of the queries and documents of ``pool``
    (``{qid: [docid, ...]}``).  A query or document without one is a located error: its file, its id and
    ``query_missing`` / ``doc_missing``; the first ones, then how many more ([`ProblemLog`][tierank.errors.ProblemLog])."""
    need_q = set(pool)
    need_d = {d for ds in pool.values() for d in ds}
    qtexts, dtexts = read_texts(queries, docs, need_q, need_d)
    log = ProblemLog("")
    log.add(
        Problem(str(queries), None, f"query {quote(q)} {query_missing}")
        for q in sorted(need_q - set(qtexts))
    )
    log.add(
        Problem(str(docs), None, f"document {quote(d)} {doc_missing}")
        for d in sorted(need_d - set(dtexts))
    )
    log.raise_if_any()
    return qtexts, dtexts


def find_inputs(data_dir: str | os.PathLike, candidates=None, qrels=None) -> tuple[Path, Path]:
    """The qrels and candidate-run paths of a BEIR directory (given paths win)."""
    data = Path(data_dir)
    if not data.is_dir():
        raise TierankInputError([Problem(str(data), None, "not a directory")])
    qrels_path = Path(qrels) if qrels else _find(data, QRELS_NAMES, "qrels")
    cand_path = Path(candidates) if candidates else _find(data, CANDIDATE_NAMES, "candidate run")
    return qrels_path, cand_path


def load_beir(
    data_dir: str | os.PathLike,
    candidates: str | os.PathLike | None = None,
    qrels: str | os.PathLike | None = None,
    queries: str = "judged",
    depth: int | None = None,
    max_queries: int | None = None,
) -> BeirSet:
    """Read a BEIR-layout directory and a candidate run.

    ``queries="judged"`` keeps the queries with at least one judgment (the
    only ones any measure can see); ``"all"`` keeps every query with
    candidates.  Candidates are ordered by first-stage score (descending;
    ties by the file's order), ``depth`` keeps the top ``depth`` of each
    query and ``max_queries`` the first queries in sorted order.
    """
    from .readers import read_qrels, read_run

    queries, depth, max_queries = check_selection(queries, depth, max_queries)
    data = Path(data_dir)
    if not data.is_dir():
        raise TierankInputError([Problem(str(data), None, "not a directory")])
    qrels_path, cand_path = find_inputs(data, candidates, qrels)
    qr = read_qrels(qrels_path)
    run = read_run(cand_path)

    qid = np.asarray(run.qid.to_pylist(), dtype=object)
    docid = np.asarray(run.docid.to_pylist(), dtype=object)
    order = np.lexsort((np.arange(len(qid)), -run.score, qid.astype(str)))
    cands: dict[str, list[str]] = {}
    for q, d in zip(qid[order].tolist(), docid[order].tolist()):
        cands.setdefault(str(q), []).append(str(d))
    judged = set(map(str, qr.qid.to_pylist()))
    keep = sorted(q for q in cands if queries == "all" or q in judged)
    if max_queries is not None:
        keep = keep[:max_queries]
    cands = {q: cands[q][:depth] if depth else cands[q] for q in keep}
    if not cands:
        raise TierankInputError(
            [
                Problem(
                    str(cand_path),
                    None,
                    f"no {'judged ' if queries == 'judged' else ''}query has candidates",
                )
            ]
        )

    qfile, cfile = find_texts(data)
    qtexts, docs = pool_texts(qfile, cfile, cands)
    return BeirSet(qtexts, docs, cands, qr, qrels_path, cand_path, qfile, cfile)
