"""Fuzzing tier for Parquet and Arrow inputs (issue 22): seeded mutants of valid columnar runs and qrels.

Clean tables are cut from the shipped examples (AskUbuntu: binary judgments; TREC RAG 2024: graded),
written as Parquet, Arrow IPC file, Arrow IPC stream or Feather.  Each mutant changes one or two
things (a column renamed, duplicated under another accepted name, added or reordered; the score or
grade column's type; ids' types; nulls, NaN, infinities, integers beyond 2**53, empty or blank ids,
the reserved query id, a repeated row, an empty table; the two files given in each other's place)
and goes through the command line in this process (``tierank eval QRELS RUN -q -f jsonl``).

The oracle is :func:`strict_table`, an independent reader of the documented column rules written
from scratch over ``to_pylist()`` (it shares no code with ``tierank.io``; numbers use the text tier's
:mod:`strict_reader` grammar).  Its dicts go through :func:`tierank.evaluate` (the dict adapter).
Every mutant must either give exactly the strict reference's numbers (every query, every
statistic) or exit 2 with ``tierank: error:`` lines that name the file; never a traceback, never
another exit status, never a number where the reference refuses, never a refusal where it accepts.

Outcome counts are printed (``-s``); ``python -m tests.io.test_fuzz_columnar [N] [FIRST]`` prints them
for N mutants.  Reproduce one mutant with ``mutant(seed, seeds())``.
"""

from __future__ import annotations

import datetime
import json
import math
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from . import strict_reader as strict

MEASURES = ["RR", "nDCG@10", "AP", "P@5"]
DEFAULT_MUTANTS = 200
SLOW_MUTANTS = 3000

# ------------------------------------------------------------------ seed tables


def _seed(run_name: str, qrels_name: str, queries: int) -> tuple[str, pa.Table, pa.Table]:
    """The first ``queries`` judged queries of a shipped run (read as the text reader reads it) and their
    judgments, as clean tables."""
    import tierank
    from tierank.examples import path

    run, qrels = tierank.read_run(path(run_name)), tierank.read_qrels(path(qrels_name))
    rq = run.qid.dictionary_decode() if pa.types.is_dictionary(run.qid.type) else run.qid
    judged = set(qrels.qid.to_pylist())
    keep = [q for q in dict.fromkeys(rq.to_pylist()) if q in judged][:queries]
    mask = np.isin(np.asarray(rq.to_pylist(), dtype=object), keep)
    qmask = np.isin(np.asarray(qrels.qid.to_pylist(), dtype=object), keep)
    r = pa.table(
        {
            "qid": rq.filter(pa.array(mask)),
            "docid": run.docid.filter(pa.array(mask)),
            "score": pa.array(run.score[mask], pa.float64()),
        }
    )
    q = pa.table(
        {
            "query_id": qrels.qid.filter(pa.array(qmask)),
            "doc_id": qrels.docid.filter(pa.array(qmask)),
            "relevance": pa.array(qrels.grade[qmask].astype(np.int64)),
        }
    )
    return run_name, r, q


_SEEDS: list | None = None


def seeds() -> list[tuple[str, pa.Table, pa.Table]]:
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = [
            _seed("askubuntu-run", "askubuntu-qrels", 8),
            _seed("rag24-run", "rag24-qrels", 3),
        ]
    return _SEEDS


# -------------------------------------------------------------------- mutators

QUERY_NAMES = ("query_id", "qid", "q_id", "query-id", "QID", "Query_Id")
DOC_NAMES = ("doc_id", "docid", "docno", "corpus-id", "corpus_id", "did", "DOCNO")
SCORE_NAMES = ("score", "sim", "similarity", "Score")
GRADE_NAMES = ("relevance", "rel", "grade", "label", "judgment", "score", "Relevance")
BAD_IDS = ["", " ", "a b", "a\tb", "x\n", "\r", "all", "é", "\u00a0x", "x\u2003", "#1", "Q0"]
BIG = [2**64 - 1, 2**63 - 1, 2**53 + 1, 2**53, -(2**53) - 1, 2**60]


@dataclass
class Table:
    """A table under mutation, with the names of its three main columns tracked."""

    t: pa.Table
    q: str
    d: str
    v: str

    def set(self, name: str, arr) -> None:
        i = self.t.column_names.index(name)
        self.t = self.t.set_column(i, name, arr)

    def col(self, name: str):
        return self.t.column(self.t.column_names.index(name))


def _rename(tab: Table, which: str, new: str) -> None:
    old = getattr(tab, which)
    names = [new if n == old else n for n in tab.t.column_names]
    tab.t = tab.t.rename_columns(names)
    setattr(tab, which, new)


def m_rename(rng, tab: Table, role: str) -> None:
    which = rng.choice("qdv")
    names = {"q": QUERY_NAMES, "d": DOC_NAMES, "v": SCORE_NAMES if role == "run" else GRADE_NAMES}[
        which
    ]
    new = rng.choice(names + ("x_" + which,))
    if new not in tab.t.column_names:
        _rename(tab, which, new)


def m_duplicate_column(rng, tab: Table, role: str) -> None:
    which = rng.choice("qdv")
    names = {"q": QUERY_NAMES, "d": DOC_NAMES, "v": SCORE_NAMES if role == "run" else GRADE_NAMES}[
        which
    ]
    new = rng.choice(names)
    tab.t = tab.t.append_column(new, tab.col(getattr(tab, which)))


def m_extra_column(rng, tab: Table, role: str) -> None:
    n = tab.t.num_rows
    kind = rng.choice(["tag", "Q0", "text", "query", "doc", "rank", "iter", "line"])
    if kind in tab.t.column_names:
        return
    if kind == "rank":
        arr = pa.array(np.arange(1, n + 1, dtype=np.int64))
    elif kind in ("iter", "line"):
        arr = pa.array(np.zeros(n, dtype=np.int64))
    else:
        arr = pa.array([f"{kind} {i}" for i in range(n)])
    tab.t = tab.t.append_column(kind, arr)


def m_reorder(rng, tab: Table, role: str) -> None:
    names = list(tab.t.column_names)
    rng.shuffle(names)
    tab.t = tab.t.select(names)


def _as_str(x) -> str:
    return repr(float(x)) if isinstance(x, float) else str(x)


def m_value_type(rng, tab: Table, role: str) -> None:
    col = tab.col(tab.v).combine_chunks()
    x = col.to_numpy(zero_copy_only=False)
    kind = rng.choice(
        [
            "float32",
            "int64",
            "int32",
            "uint64",
            "string",
            "large_string",
            "dictionary",
            "decimal",
            "decimal_inexact",
            "bool",
            "date32",
            "timestamp",
            "binary",
            "float16",
            "null",
        ]
    )
    if kind == "float32":
        arr = pa.array(np.asarray(x, dtype=np.float32))
    elif kind in ("int64", "int32", "uint64"):
        arr = pa.array(np.round(np.abs(x) if kind == "uint64" else x).astype(kind))
    elif kind in ("string", "large_string"):
        arr = pa.array(
            [_as_str(v) for v in x.tolist()], pa.string() if kind == "string" else pa.large_string()
        )
    elif kind == "dictionary":
        arr = pa.array(x.astype(np.float64)).dictionary_encode()
    elif kind == "decimal":
        arr = pa.array([Decimal(repr(round(float(v), 4))) for v in x], pa.decimal128(20, 4))
    elif kind == "decimal_inexact":
        arr = pa.array(
            [Decimal(repr(round(float(v), 4))) + Decimal("0.000000000000000000001") for v in x],
            pa.decimal128(38, 24),
        )
    elif kind == "bool":
        arr = pa.array(x > (np.median(x) if len(x) else 0))
    elif kind == "date32":
        arr = pa.array(
            [datetime.date(2024, 1, 1) + datetime.timedelta(days=int(v) % 300) for v in x],
            pa.date32(),
        )
    elif kind == "timestamp":
        seconds = np.nan_to_num(np.asarray(x, dtype=np.float64), posinf=0, neginf=0).astype(
            np.int64
        )
        arr = pa.array(seconds, pa.timestamp("s"))
    elif kind == "binary":
        arr = pa.array([_as_str(v).encode() for v in x.tolist()], pa.binary())
    elif kind == "float16":
        arr = pa.array(np.asarray(x, dtype=np.float16))
    else:
        arr = pa.nulls(len(x))
    tab.set(tab.v, arr)


def m_id_type(rng, tab: Table, role: str) -> None:
    which = rng.choice("qd")
    name = getattr(tab, which)
    col = tab.col(name).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    kind = rng.choice(["large_string", "dictionary", "binary", "chunked", "bad_utf8", "int"])
    vals = col.to_pylist()
    if kind == "large_string":
        arr = col.cast(pa.large_string()) if pa.types.is_string(col.type) else col
    elif kind == "dictionary":
        arr = col.dictionary_encode()
    elif kind == "binary":
        arr = pa.array([v.encode() if isinstance(v, str) else v for v in vals], pa.binary())
    elif kind == "bad_utf8":
        arr = pa.array(
            [
                (v.encode() if isinstance(v, str) else v) + (b"\xff" if i == 0 else b"")
                for i, v in enumerate(vals)
            ],
            pa.binary(),
        )
    elif kind == "int":
        if all(isinstance(v, str) and v.isdigit() and v == str(int(v)) for v in vals):
            arr = pa.array([int(v) for v in vals], pa.int64())
        else:
            arr = col
    else:
        cut = rng.randrange(len(col) + 1)
        arr = pa.chunked_array([col.slice(0, cut), col.slice(cut)], col.type)
    tab.set(name, arr)


def m_null(rng, tab: Table, role: str) -> None:
    name = getattr(tab, rng.choice("qdv"))
    col = tab.col(name).combine_chunks()
    vals = col.to_pylist()
    if vals:
        vals[rng.randrange(len(vals))] = None
        tab.set(name, pa.array(vals, col.type))


def m_nonfinite(rng, tab: Table, role: str) -> None:
    vals = [float(v) for v in tab.col(tab.v).to_pylist()]
    if vals:
        vals[rng.randrange(len(vals))] = rng.choice([math.nan, math.inf, -math.inf])
        tab.set(tab.v, pa.array(vals, pa.float64()))


def m_huge_int(rng, tab: Table, role: str) -> None:
    vals = tab.col(tab.v).to_pylist()
    n = len(vals)
    base = rng.choice(BIG)
    out = [base - i for i in range(n)] if base > 0 else [base + i for i in range(n)]
    typ = pa.uint64() if min(out, default=0) >= 0 and max(out, default=0) >= 2**63 else pa.int64()
    if rng.random() < 0.5:  # one value only
        out = [int(round(float(v))) for v in vals]
        if n:
            out[rng.randrange(n)] = base
        typ = (
            pa.uint64() if min(out, default=0) >= 0 and max(out, default=0) >= 2**63 else pa.int64()
        )
        if min(out, default=0) < 0 and max(out, default=0) >= 2**63:
            return
    tab.set(tab.v, pa.array(out, typ))


def m_bad_id(rng, tab: Table, role: str) -> None:
    name = getattr(tab, rng.choice("qd"))
    col = tab.col(name).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    vals = col.to_pylist()
    if vals and all(isinstance(v, str) for v in vals):
        vals[rng.randrange(len(vals))] = rng.choice(BAD_IDS)
        tab.set(name, pa.array(vals, pa.string()))


def m_duplicate_row(rng, tab: Table, role: str) -> None:
    if tab.t.num_rows:
        i = rng.randrange(tab.t.num_rows)
        tab.t = pa.concat_tables([tab.t, tab.t.slice(i, 1)])


def m_empty(rng, tab: Table, role: str) -> None:
    tab.t = tab.t.slice(0, 0)


def m_string_numbers(rng, tab: Table, role: str) -> None:
    vals = [_as_str(float(v)) if v is not None else None for v in tab.col(tab.v).to_pylist()]
    if vals:
        vals[rng.randrange(len(vals))] = rng.choice(
            [b.decode("utf-8") for b in strict_numbers()] + ["1,5", " 1", "1 ", "0x1", "true", ""]
        )
    tab.set(tab.v, pa.array(vals, pa.string()))


def strict_numbers() -> list[bytes]:
    from .test_fuzz import NUMBERS

    return [n for n in NUMBERS if not n.startswith(b"\xef") and n.isascii()]


def m_round(rng, tab: Table, role: str) -> None:
    """Scores rounded (ties made) but still real-valued: the numbers change, the reference follows."""
    x = np.asarray(tab.col(tab.v).to_numpy(zero_copy_only=False), dtype=np.float64)
    tab.set(tab.v, pa.array(np.round(x, rng.choice([0, 1])) + 0.5))


MUTATORS = [
    m_rename,
    m_rename,
    m_duplicate_column,
    m_extra_column,
    m_extra_column,
    m_reorder,
    m_value_type,
    m_value_type,
    m_value_type,
    m_id_type,
    m_id_type,
    m_null,
    m_nonfinite,
    m_huge_int,
    m_bad_id,
    m_bad_id,
    m_duplicate_row,
    m_empty,
    m_string_numbers,
    m_round,
]
FORMATS = ("parquet", "arrow", "arrows", "feather")


@dataclass
class Mutant:
    seed: int
    name: str
    target: str  # "run", "qrels" or "swap"
    ops: list[str]
    run: pa.Table
    qrels: pa.Table
    formats: tuple[str, str] = ("parquet", "parquet")
    notes: list[str] = field(default_factory=list)


def mutant(seed: int, seed_tables: list) -> Mutant:
    """Mutant number ``seed``: reproducible from the seed alone."""
    rng = random.Random(seed)
    name, run, qrels = seed_tables[rng.randrange(len(seed_tables))]
    r = Table(run, "qid", "docid", "score")
    q = Table(qrels, "query_id", "doc_id", "relevance")
    if rng.random() < 0.3:  # BEIR's names for the qrels
        for which, new in (("q", "query-id"), ("d", "corpus-id"), ("v", "score")):
            _rename(q, which, new)
    target = "run" if rng.random() < 0.55 else "qrels"
    tab = r if target == "run" else q
    ops = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        fn = rng.choice(MUTATORS)
        try:
            fn(rng, tab, target)
        except (pa.ArrowException, ValueError, OverflowError, TypeError):
            continue  # a mutation pyarrow cannot build: not a mutant
        ops.append(fn.__name__)
    if rng.random() < 0.08:
        target = "swap"
        ops.append("swap")
    formats = (rng.choice(FORMATS), rng.choice(FORMATS))
    return Mutant(seed, name, target, ops, r.t, q.t, formats)


def _write(t: pa.Table, path: Path, fmt: str) -> Path:
    path = path.with_suffix("." + fmt)
    if fmt == "parquet":
        pq.write_table(t, path)
    elif fmt == "arrows":
        with ipc.new_stream(path, t.schema) as w:
            w.write_table(t)
    elif fmt == "feather":
        import pyarrow.feather as feather

        feather.write_feather(t, path, compression="uncompressed")
    else:
        with ipc.new_file(path, t.schema) as w:
            w.write_table(t)
    return path


def _read_back(path: Path) -> pa.Table:
    """The table as pyarrow itself reads the file (what the user wrote, after the format's round trip)."""
    if path.suffix == ".parquet":
        with pq.ParquetFile(path) as f:
            return f.read()
    try:
        with ipc.open_file(path) as r:
            return r.read_all()
    except pa.ArrowInvalid:
        with ipc.open_stream(path) as r:
            return r.read_all()


# ------------------------------------------------------------- the strict reference


class Refused(Exception):
    pass


S_QUERY, S_QUERY_FALLBACK = ("query_id", "qid", "q_id", "query-id"), ("query",)
S_DOC, S_DOC_FALLBACK = ("doc_id", "docid", "docno", "corpus-id", "corpus_id", "did"), ("doc",)
S_SCORE, S_GRADE, S_SHARED = (
    ("score", "sim", "similarity"),
    ("relevance", "rel", "grade", "label", "judgment"),
    "score",
)


def _one(names: list[str], group: tuple, fallback: tuple = ()) -> str:
    for g in (group, fallback):
        hits = [n for n in names if n.lower() in g]
        if len(hits) > 1:
            raise Refused(f"two columns name one field: {hits}")
        if hits:
            return hits[0]
    raise Refused("no column")


def _id_text(v) -> str:
    if v is None:
        raise Refused("missing id")
    if isinstance(v, bytes):
        try:
            v = v.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("id not UTF-8") from None
    elif isinstance(v, bool) or not isinstance(v, (str, int)):
        raise Refused(f"id of type {type(v).__name__}")
    v = str(v)
    if v == "" or any(c in v for c in " \t\n\r"):
        raise Refused("empty or blank id")
    return v


def _number(v, typ: pa.DataType) -> float:
    if v is None:
        raise Refused("missing value")
    if isinstance(v, str):
        if not v.isascii():
            raise Refused("not a number")
        x = strict.number(v.encode("ascii"))
        if x is None:
            raise Refused("not a number")
    elif isinstance(v, int):
        if abs(v) > 2**53 and int(float(v)) != v:
            raise Refused("inexact integer")
        x = float(v)
    elif isinstance(v, Decimal):
        x = float(v)  # a decimal is read as its nearest float64, as number text is
    elif isinstance(v, float):
        x = v
    else:
        raise Refused(f"value of type {type(v).__name__}")
    if not math.isfinite(x):
        raise Refused("not finite")
    return x


def _content_role(t: pa.Table) -> str | None:
    """run / qrels / None, from the columns and the shared score column's content (the documented rule)."""
    names = t.column_names
    low = [n.lower() for n in names]
    runs = [n for n in low if n in ("sim", "similarity")]
    grades = [n for n in low if n in S_GRADE]
    shared = [n for n in low if n == S_SHARED]
    if "rank" in low:
        return "run"
    if runs and not grades:
        return "run"
    if grades and not runs and not shared:
        return "qrels"
    if len(shared) != 1 or grades or runs:
        return None
    col = t.column(low.index(S_SHARED))
    typ = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if not (
        pa.types.is_integer(typ)
        or pa.types.is_floating(typ)
        or pa.types.is_string(typ)
        or pa.types.is_large_string(typ)
    ):
        return None
    xs = []
    for v in col.to_pylist():
        if isinstance(v, str):
            v = strict.number(v.encode("ascii")) if v.isascii() else None
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            continue
        if isinstance(v, float) and v != int(v):
            return "run"
        xs.append(v)
    levels = set(xs)
    if xs and len(levels) <= 10 and max(abs(x) for x in levels) <= 100:
        return "qrels:content"
    return None


def strict_table(t: pa.Table, role: str) -> dict[str, dict[str, float]]:
    """``{qid: {docid: value}}`` of a run or qrels table by the documented rules, or :class:`Refused`."""
    names = t.column_names
    qn = _one(names, S_QUERY, S_QUERY_FALLBACK)
    dn = _one(names, S_DOC, S_DOC_FALLBACK)
    if role == "run":
        if [n for n in names if n.lower() in S_GRADE] and not [
            n for n in names if n.lower() in S_SCORE
        ]:
            raise Refused("qrels given as a run")
        vn = _one(names, S_SCORE)
    else:
        graded = [n for n in names if n.lower() in S_GRADE or n.lower() == S_SHARED]
        if len(graded) > 1:  # e.g. score beside relevance: which is the grade is ambiguous
            raise Refused(f"two columns name the grade: {graded}")
        vn = _one(names, S_GRADE, (S_SHARED,))
        if vn.lower() == S_SHARED and _content_role(t) == "run":
            raise Refused("a run given as qrels")
    qs, ds, vs = (t.column(names.index(n)) for n in (qn, dn, vn))
    vtype = vs.type.value_type if pa.types.is_dictionary(vs.type) else vs.type
    if t.num_rows == 0:
        raise Refused("empty")
    if (
        pa.types.is_boolean(vtype)
        or pa.types.is_temporal(vtype)
        or pa.types.is_binary(vtype)
        or pa.types.is_null(vtype)
    ):
        raise Refused(f"values of type {vtype}")
    values = [_number(v, vtype) for v in vs.to_pylist()]
    out: dict[str, dict[str, float]] = {}
    for q, d, v in zip(qs.to_pylist(), ds.to_pylist(), values):
        q, d = _id_text(q), _id_text(d)
        if q == "all":
            raise Refused("reserved query id")
        if d in out.setdefault(q, {}):
            raise Refused("duplicate")
        out[q][d] = v
    return out


def strict_pair(qrels: pa.Table, run: pa.Table) -> None:
    """The command line's refusals of a pair: swapped, or either could be the run."""
    rq, rr = _content_role(qrels), _content_role(run)
    if rq == "run" and rr in ("qrels", "qrels:content"):
        raise Refused("swapped")
    if rq == rr == "qrels:content":
        raise Refused("ambiguous")


# -------------------------------------------------------------------- oracle


class Outcome:
    EQUAL = "equal numbers"
    REFUSED = "refused by both"
    REFUSED_ONLY_TIERANK = "refused by tierank only"
    ACCEPTED_ONLY_TIERANK = "accepted by tierank only"
    MISMATCH = "different numbers"
    UNLOCATED = "refused without naming the file"
    OTHER = "traceback or other exit"
    UNWRITABLE = "not writable in its format"


BAD = {
    Outcome.REFUSED_ONLY_TIERANK,
    Outcome.ACCEPTED_ONLY_TIERANK,
    Outcome.MISMATCH,
    Outcome.UNLOCATED,
    Outcome.OTHER,
}


def _in_process(*args) -> tuple[int, str, str, BaseException | None]:
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    exc = (
        r.exception if r.exception is not None and not isinstance(r.exception, SystemExit) else None
    )
    return r.exit_code, r.stdout, r.stderr, exc


def _normal(records) -> list:
    from tierank.report.formats.grouped import jsonable

    return json.loads(json.dumps(jsonable(list(records)), allow_nan=False))


def reference(m: Mutant, qrels_t: pa.Table, run_t: pa.Table):
    """The strict reference's records, or the reason it refuses."""
    import tierank
    from tierank import TierankInputError

    try:
        strict_pair(qrels_t, run_t)
        q, r = strict_table(qrels_t, "qrels"), strict_table(run_t, "run")
        res = tierank.evaluate(q, r, MEASURES)
    except (Refused, TierankInputError) as e:
        return None, str(e)[:200]
    return _normal(res.records()), ""


def judge(m: Mutant, tmp: Path) -> tuple[str, str]:
    try:
        run_path = _write(m.run, tmp / f"m{m.seed}-run", m.formats[0])
        qrels_path = _write(m.qrels, tmp / f"m{m.seed}-qrels", m.formats[1])
    except (pa.ArrowException, ValueError, TypeError) as e:
        return Outcome.UNWRITABLE, str(e)[:100]
    if m.target == "swap":
        run_path, qrels_path = qrels_path, run_path
    code, out, err, exc = _in_process(
        "eval", qrels_path, run_path, *(a for x in MEASURES for a in ("-m", x)), "-q", "-f", "jsonl"
    )
    if exc is not None or "Traceback" in err or code not in (0, 2):
        return (
            Outcome.OTHER,
            f"exit {code}: {type(exc).__name__ if exc else ''} {exc or err[-300:]}"[:400],
        )
    want, why = reference(m, _read_back(qrels_path), _read_back(run_path))
    if code == 2:
        lines = err.splitlines()
        names = (str(run_path), str(qrels_path))
        if not lines or not all(
            x.startswith("tierank: error: ") and any(n in x for n in names) for x in lines
        ):
            return Outcome.UNLOCATED, err[-300:]
        return (Outcome.REFUSED, "") if want is None else (Outcome.REFUSED_ONLY_TIERANK, err[-300:])
    if want is None:
        return Outcome.ACCEPTED_ONLY_TIERANK, why
    got = [json.loads(x) for x in out.splitlines()]
    key = lambda r: (r["query"], r["measure"])  # noqa: E731
    if sorted(got, key=key) != sorted(want, key=key):
        return Outcome.MISMATCH, f"{len(got)} vs {len(want)} records"
    return Outcome.EQUAL, ""


def fuzz(
    tmp: Path, first: int, count: int, verbose: bool = False
) -> tuple[Counter, list[str], Counter]:
    counts: Counter[str] = Counter()
    by_op: Counter[tuple[str, str]] = Counter()
    failures = []
    tables = seeds()
    for seed in range(first, first + count):
        m = mutant(seed, tables)
        outcome, detail = judge(m, tmp)
        counts[outcome] += 1
        for op in set(m.ops) or {"none"}:
            by_op[op, outcome] += 1
        if outcome in BAD:
            failures.append(
                f"seed {seed} ({m.name}, {m.target}: {', '.join(m.ops)}; {m.formats}): {outcome}: {detail}"
            )
        for f in tmp.iterdir():
            f.unlink()
    return counts, failures, by_op


def _report(first: int, count: int, counts: Counter) -> str:
    return f"columnar fuzz mutants {first}..{first + count - 1}: " + ", ".join(
        f"{k}: {v}" for k, v in sorted(counts.items())
    )


def _check(tmp: Path, first: int, count: int) -> None:
    counts, failures, _ = fuzz(tmp, first, count)
    print("\n" + _report(first, count, counts))
    assert not failures, "\n".join(failures[:20])
    # the tier must exercise both outcomes, not pass vacuously
    assert counts[Outcome.EQUAL] > count // 10 and counts[Outcome.REFUSED] > count // 10, counts


def test_fuzz_columnar(tmp_path):
    _check(tmp_path, 0, DEFAULT_MUTANTS)


@pytest.mark.slow
def test_fuzz_columnar_more(tmp_path):
    _check(tmp_path, 100_000, SLOW_MUTANTS)


def test_columnar_mutants_are_reproducible():
    a, b = mutant(7, seeds()), mutant(7, seeds())
    assert a.ops == b.ops and a.run.equals(b.run) and a.qrels.equals(b.qrels)


def test_clean_tables_give_the_text_files_numbers(tmp_path):
    """The unmutated tables, in every format, give the strict reference's numbers (no mutation, no refusal)."""
    for fmt in FORMATS:
        for i, (name, run, qrels) in enumerate(seeds()):
            m = Mutant(i, name, "run", [], run, qrels, (fmt, fmt))
            assert judge(m, tmp_path) == (Outcome.EQUAL, "")


def test_swapped_clean_tables_are_refused(tmp_path):
    for i, (name, run, qrels) in enumerate(seeds()):
        m = Mutant(i, name, "swap", ["swap"], run, qrels)
        assert judge(m, tmp_path) == (Outcome.REFUSED, "")


if __name__ == "__main__":  # python -m tests.io.test_fuzz_columnar [N] [FIRST]
    import tempfile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MUTANTS
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with tempfile.TemporaryDirectory() as d:
        c, fails, ops = fuzz(Path(d), start, n)
    print(_report(start, n, c))
    for (op, outcome), k in sorted(ops.items()):
        print(f"  {op:20s} {outcome:28s} {k}")
    print("\n".join(fails[:30]))
    sys.exit(1 if fails else 0)
