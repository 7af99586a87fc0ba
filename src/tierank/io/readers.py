"""Readers for TREC runs, TREC qrels and BEIR-style qrels (plain or gzip).

The fast path parses with ``pyarrow.csv`` (multi-threaded C++).  Whenever it
cannot parse a file, or a check on the parsed columns fails (non-finite score,
duplicate document in a query, ...), the file is read again by a line-by-line
validator whose only job is to say exactly which lines are wrong and why, or
to parse files the fast path cannot (runs of spaces, padded columns).
"""

from __future__ import annotations

import gzip
import io
import math
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import Problem, TierankInputError
from .fingerprint import fingerprint, fingerprint_ids, pair_fingerprint
from .model import Qrels, Run

MAX_PROBLEMS = 20

_RUN_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
_QRELS_COLUMNS = ["qid", "iter", "docid", "grade"]
# query ids repeat on every line: dictionary-encoded while parsing
_QID_DICT = pa.dictionary(pa.int32(), pa.string())


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _open_text(path: Path):
    if _is_gzip(path):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _first_line(path: Path) -> str | None:
    with _open_text(path) as fh:
        for line in fh:
            if line.strip():
                return line.rstrip("\n\r")
    return None


def _check_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if not p.exists():
        raise TierankInputError([Problem(str(p), None, "no such file")])
    if p.is_dir():
        raise TierankInputError([Problem(str(p), None, "is a directory, expected a file")])
    return p


def _arrow_read(path: Path, names: list[str], delimiter: str, types: dict, include: list[str]):
    stream = pa.input_stream(str(path), compression="gzip" if _is_gzip(path) else None)
    return pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types=types, include_columns=include, strings_can_be_null=False,
            quoted_strings_can_be_null=False, null_values=[],
        ),
    )


def _parse_float(tok: str) -> float | None:
    try:
        return float(tok)
    except ValueError:
        return None


class _Problems:
    """Collects located problems (the first MAX_PROBLEMS) and raises them together."""

    def __init__(self, source: str):
        self.source, self.items, self.total = source, [], 0

    def __call__(self, line: int, reason: str) -> None:
        self.total += 1
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(Problem(self.source, line, reason))

    def raise_if_any(self) -> None:
        if self.items:
            more = self.total - len(self.items)
            extra = [Problem(self.source, None, f"... and {more} more problems")] if more else []
            raise TierankInputError(self.items + extra)


# --------------------------------------------------------------------------- runs


def _run_slow(path: Path, duplicates: str = "error") -> Run:
    """Parse (and validate) a run line by line; raise with every located problem."""
    src = str(path)
    bad = _Problems(src)
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    ranks: list[float] = []
    seen: dict[str, dict[str, int]] = {}

    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                bad(lineno, f"expected 6 whitespace-separated columns "
                            f"(qid Q0 docid rank score tag), found {len(parts)}")
                continue
            q, _, d, r, s, _ = parts
            score = _parse_float(s)
            if score is None:
                bad(lineno, f"score {s!r} is not a number")
                continue
            if not math.isfinite(score):
                bad(lineno, f"score {s!r} is not finite (NaN and infinities cannot be ranked)")
                continue
            prev = seen.setdefault(q, {}).get(d)
            if prev is not None and duplicates == "error":
                bad(lineno, f"document {d!r} appears twice in query {q!r} (first at line {prev})")
                continue
            seen[q].setdefault(d, lineno)
            rank = _parse_float(r)
            qids.append(q)
            docids.append(d)
            scores.append(score)
            ranks.append(np.nan if rank is None else rank)
    bad.raise_if_any()
    if not qids:
        raise TierankInputError([Problem(src, None, "empty run: no result lines")])
    return Run(
        qid=pa.array(qids, pa.string()),
        docid=pa.array(docids, pa.string()),
        score=np.asarray(scores, dtype=np.float64),
        rank=np.asarray(ranks, dtype=np.float64),
        source=src,
    )


def read_run(path: str | os.PathLike, duplicates: str = "error") -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``), plain or gzip.

    Scores may use any float notation (``1.5``, ``-2e-07``, ``3E+02``).  The
    rank column is kept in :attr:`Run.rank` but never used for ordering.
    ``duplicates="keep"`` accepts a document repeated in a query (for analysis
    of a run's defects; evaluation refuses them).

    Raises
    ------
    TierankInputError
        Naming file, line and reason for wrong column counts, unparsable,
        NaN or infinite scores, a document repeated in a query, or an empty file.
    """
    p = _check_path(path)
    first = _first_line(p)
    if first is None:
        raise TierankInputError([Problem(str(p), None, "empty run: no result lines")])
    delim = "\t" if "\t" in first else " "
    try:
        t = _arrow_read(
            p, _RUN_COLUMNS, delim,
            {"qid": _QID_DICT, "docid": pa.string(), "score": pa.float64(), "rank": pa.float64()},
            ["qid", "docid", "rank", "score"],
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return _run_slow(p, duplicates)
    pa.default_memory_pool().release_unused()  # the parser's buffers
    if t.num_rows == 0:
        raise TierankInputError([Problem(str(p), None, "empty run: no result lines")])
    score = t.column("score").to_numpy()
    if not np.isfinite(score).all() or (duplicates == "error" and _has_duplicates(t)):
        return _run_slow(p, duplicates)  # raises with the located problems
    return Run(
        qid=t.column("qid").unify_dictionaries().combine_chunks(),
        docid=t.column("docid").combine_chunks(),
        score=score,
        rank=t.column("rank").to_numpy(),
        source=str(p),
    )


def _has_duplicates(t: pa.Table) -> bool:
    """True if some (qid, docid) pair may repeat: equal 64-bit fingerprints.

    Exact in the "no" direction; a "yes" sends the file to the line-by-line
    validator, which either locates the duplicate or (after a fingerprint
    collision) parses the file normally.
    """
    key = fingerprint(t.column("docid"))
    key = pair_fingerprint(fingerprint_ids(t.column("qid").unify_dictionaries()), key)
    key.sort()
    return bool((key[1:] == key[:-1]).any())


# -------------------------------------------------------------------------- qrels


def _qrels_slow(path: Path, beir: bool) -> Qrels:
    src = str(path)
    bad = _Problems(src)
    qids: list[str] = []
    docids: list[str] = []
    grades: list[float] = []
    seen: dict[tuple[str, str], int] = {}
    ncols = 3 if beir else 4
    layout = "query-id corpus-id score" if beir else "qid iter docid grade"

    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.split("\t") if beir else line.split()
            parts = [x.strip() for x in parts]
            if not any(parts):
                continue
            if beir and lineno == 1 and _parse_float(parts[-1]) is None:
                continue  # header
            if len(parts) != ncols:
                bad(lineno, f"expected {ncols} columns ({layout}), found {len(parts)}")
                continue
            q, d, g = (parts[0], parts[1], parts[2]) if beir else (parts[0], parts[2], parts[3])
            grade = _parse_float(g)
            if grade is None or not math.isfinite(grade):
                bad(lineno, f"relevance grade {g!r} is not a finite number")
                continue
            prev = seen.get((q, d))
            if prev is not None:
                bad(lineno, f"document {d!r} judged twice for query {q!r} (first at line {prev})")
                continue
            seen[(q, d)] = lineno
            qids.append(q)
            docids.append(d)
            grades.append(grade)
    bad.raise_if_any()
    if not qids:
        raise TierankInputError([Problem(src, None, "empty qrels: no judgment lines")])
    return Qrels(qid=pa.array(qids, pa.string()), docid=pa.array(docids, pa.string()),
                 grade=np.asarray(grades, dtype=np.float64), source=src)


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read TREC qrels (``qid iter docid grade``) or BEIR qrels TSV
    (``query-id<TAB>corpus-id<TAB>score`` with or without a header), plain or gzip.

    Grades may be any finite number; grades <= 0 are judged non-relevant.
    """
    p = _check_path(path)
    first = _first_line(p)
    if first is None:
        raise TierankInputError([Problem(str(p), None, "empty qrels: no judgment lines")])
    beir = "\t" in first and len(first.split("\t")) == 3
    if beir:
        return _qrels_slow(p, beir=True) if p.stat().st_size < (1 << 20) else _qrels_beir_fast(p)
    delim = "\t" if "\t" in first else " "
    try:
        t = _arrow_read(p, _QRELS_COLUMNS, delim,
                        {"qid": pa.string(), "docid": pa.string(), "grade": pa.float64()},
                        ["qid", "docid", "grade"])
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return _qrels_slow(p, beir=False)
    return _qrels_checked(t, p, beir=False)


def _qrels_beir_fast(p: Path) -> Qrels:
    header = _parse_float(_first_line(p).split("\t")[-1]) is None
    try:
        stream = pa.input_stream(str(p), compression="gzip" if _is_gzip(p) else None)
        t = pacsv.read_csv(
            stream,
            read_options=pacsv.ReadOptions(column_names=["qid", "docid", "grade"], skip_rows=int(header)),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types={"qid": pa.string(), "docid": pa.string(), "grade": pa.float64()}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return _qrels_slow(p, beir=True)
    return _qrels_checked(t, p, beir=True)


def _qrels_checked(t: pa.Table, p: Path, beir: bool) -> Qrels:
    if t.num_rows == 0:
        raise TierankInputError([Problem(str(p), None, "empty qrels: no judgment lines")])
    grade = t.column("grade").to_numpy()
    if not np.isfinite(grade).all() or _has_duplicates(t):
        return _qrels_slow(p, beir=beir)
    return Qrels(qid=t.column("qid").combine_chunks(), docid=t.column("docid").combine_chunks(),
                 grade=grade, source=str(p))
