"""The one adapter layer: files, DataFrames and dicts in; :class:`Run` / :class:`Qrels` out.

Accepted inputs for a run (and likewise for qrels):

* a path (``str`` or ``os.PathLike``) to a TREC file, plain or gzip, or to a Parquet or Arrow
  IPC file (``.parquet``, ``.arrow``, ``.feather``, ``.ipc``; :mod:`tierank.io.columnar`) with
  the columns named as for DataFrames below;
* a pyarrow Table;
* a :class:`Run` / :class:`Qrels` already built;
* a pandas or polars DataFrame with a query column, a document column and a
  score (run) or relevance (qrels) column, named as ir_measures, ranx or BEIR
  name them (``query_id``/``qid``/``query-id``, ``doc_id``/``docno``/``corpus-id``,
  ``score``, ``relevance``/``rel``/``grade``/``label``);
* a dict of dicts ``{qid: {docid: score_or_grade}}`` as pytrec_eval and ranx take;
* ``ranx.Run`` and ``ranx.Qrels`` objects (read through their ``to_dict()``; ranx is not imported).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import Problem, TierankInputError, quote, shorten
from .columnar import is_columnar, read_table
from .lexer import NUMBER_PATTERN, parse_number
from .model import Qrels, Run
from .readers import MAX_PROBLEMS, RESERVED_QID, RESERVED_REASON, read_qrels, read_run

QUERY_COLUMNS = ("query_id", "qid", "query", "q_id", "query-id", "query-id")
DOC_COLUMNS = ("doc_id", "docid", "docno", "doc", "corpus-id", "corpus_id", "did")
SCORE_COLUMNS = ("score", "sim", "similarity")
GRADE_COLUMNS = ("relevance", "rel", "grade", "label", "judgment", "score")


def _pick(columns: list[str], wanted: tuple[str, ...], what: str, source: str) -> str:
    lower = {c.lower(): c for c in columns}
    for w in wanted:
        if w in lower:
            return lower[w]
    raise TierankInputError([Problem(source, None,
        f"no {what} column among {columns}; accepted names: {', '.join(dict.fromkeys(wanted))}")])


def _frame_to_table(df, source: str) -> pa.Table:
    if isinstance(df, pa.Table):
        return df
    mod = type(df).__module__
    if mod.startswith("polars"):
        return df.to_arrow()
    if mod.startswith("pandas"):
        return pa.Table.from_pandas(df, preserve_index=False)
    raise TypeError(f"unsupported input type {type(df).__name__}")


def _ids(col: pa.ChunkedArray | pa.Array, source: str) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if not pa.types.is_string(col.type):
        try:
            if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
                return col.cast(pa.string())
            col = pc.cast(col, pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise TierankInputError([Problem(source, None, f"identifiers of type {col.type} cannot be "
                                             f"read as text ({e})")]) from None
    return col


def _rows_problem(source: str, rows: np.ndarray, reason: str) -> TierankInputError:
    probs = [Problem(source, None, f"row {int(r) + 1}: {reason}") for r in rows[:MAX_PROBLEMS]]
    if len(rows) > MAX_PROBLEMS:
        probs.append(Problem(source, None, f"... and {len(rows) - MAX_PROBLEMS} more rows"))
    return TierankInputError(probs)


def _values(col: pa.ChunkedArray, source: str, what: str) -> np.ndarray:
    """float64 values of a score/grade column; text is read with the file readers' number grammar."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
        ok = pc.fill_null(pc.match_substring_regex(col, f"^(?:{NUMBER_PATTERN})$"), False)
        bad = np.flatnonzero(~np.asarray(ok))
        if len(bad):
            raise _rows_problem(source, bad, f"{'score' if what == 'run' else 'grade'} is not a number")
        return pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
    try:
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    except (TypeError, ValueError, pa.ArrowException):
        raise TierankInputError([Problem(source, None, f"{'score' if what == 'run' else 'relevance'} column "
                                         f"of type {col.type} is not numeric")]) from None


def _validate_columns(qid: pa.Array, docid: pa.Array, values: np.ndarray, source: str, what: str) -> None:
    if len(values) == 0:
        raise TierankInputError([Problem(source, None, f"empty {what}: no rows")])
    if qid.null_count or docid.null_count:
        rows = np.flatnonzero(np.asarray(pc.or_(pc.is_null(qid), pc.is_null(docid))))
        raise _rows_problem(source, rows, "missing query or document id")
    reserved = np.asarray(pc.equal(qid, RESERVED_QID))
    if reserved.any():
        raise _rows_problem(source, np.flatnonzero(reserved), RESERVED_REASON)
    bad = ~np.isfinite(values)
    if bad.any():
        raise _rows_problem(source, np.flatnonzero(bad), f"{'score' if what == 'run' else 'grade'} is NaN or infinite")
    t = pa.table({"q": qid, "d": docid, "i": np.arange(len(values))})
    first = t.group_by(["q", "d"]).aggregate([("i", "min"), ("i", "count")])
    dup = np.asarray(first.column("i_count")) > 1
    if dup.any():
        tab = first.filter(pa.array(dup))
        probs = [Problem(source, None, f"document {quote(d)} appears more than once in query {quote(q)}")
                 for q, d in zip(tab.column("q").to_pylist()[:MAX_PROBLEMS], tab.column("d").to_pylist())]
        raise TierankInputError(probs)


def _float(v) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _from_dict(obj: Mapping, source: str, what: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    qids: list[str] = []
    docids: list[str] = []
    vals: list[float] = []
    for q, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise TierankInputError([Problem(source, None,
                f"query {quote(str(q))}: expected a mapping docid -> {'score' if what == 'run' else 'grade'}, "
                f"got {type(docs).__name__}")])
        for d, v in docs.items():
            qids.append(str(q))
            docids.append(str(d))
            x = parse_number(v) if isinstance(v, str) else _float(v)
            if x is None:
                raise TierankInputError([Problem(source, None,
                    f"query {quote(str(q))}, document {quote(str(d))}: value "
                    f"{quote(v) if isinstance(v, str) else shorten(repr(v))} "
                    f"is not a number")]) from None
            vals.append(x)
    return pa.array(qids, pa.string()), pa.array(docids, pa.string()), np.asarray(vals, dtype=np.float64)


def _columns(obj, source: str, what: str, value_names: tuple[str, ...]):
    """(qid, docid, values) from a DataFrame or a dict of dicts, validated."""
    if isinstance(obj, Mapping):
        q, d, v = _from_dict(obj, source, what)
    else:
        t = _frame_to_table(obj, source)
        cols = t.column_names
        q = _ids(t.column(_pick(cols, QUERY_COLUMNS, "query id", source)), source)
        d = _ids(t.column(_pick(cols, DOC_COLUMNS, "document id", source)), source)
        col = t.column(_pick(cols, value_names, "score" if what == "run" else "relevance", source))
        v = _values(col, source, what)
    _validate_columns(q, d, v, source, what)
    return q, d, v


def _unwrap(obj, source: str | None, read_text):
    """``(obj, source)`` with a ranx object turned into its dict (no ranx import), a columnar file
    into its table and a text file read by ``read_text`` (then ``obj`` is the Run/Qrels itself)."""
    if type(obj).__module__.startswith("ranx.") and hasattr(obj, "to_dict"):  # ranx.Run / ranx.Qrels
        source = source or getattr(obj, "name", None) or f"ranx.{type(obj).__name__}"
        obj = obj.to_dict()
    if isinstance(obj, (str, os.PathLike)):
        if not is_columnar(obj):
            return read_text(obj), source
        source, obj = str(obj), read_table(obj)
    return obj, source


def to_run(obj, source: str | None = None) -> Run:
    """Convert any accepted run input to a :class:`Run`.

    Examples
    --------
    >>> run = to_run({"q1": {"d1": 0.5, "d2": 0.5}})
    >>> len(run), run.score.tolist()
    (2, [0.5, 0.5])
    """
    if isinstance(obj, Run):
        return obj
    obj, source = _unwrap(obj, source, read_run)
    if isinstance(obj, Run):
        return obj
    source = source or "run"
    q, d, s = _columns(obj, source, "run", SCORE_COLUMNS)
    return Run(qid=q, docid=d, score=s, rank=None, source=source)


def to_qrels(obj, source: str | None = None) -> Qrels:
    """Convert any accepted qrels input to a :class:`Qrels`.

    Examples
    --------
    >>> qrels = to_qrels({"q1": {"d1": 2, "d9": 0}})
    >>> qrels.grade.tolist()
    [2.0, 0.0]
    """
    if isinstance(obj, Qrels):
        return obj
    obj, source = _unwrap(obj, source, read_qrels)
    if isinstance(obj, Qrels):
        return obj
    source = source or "qrels"
    q, d, g = _columns(obj, source, "qrels", GRADE_COLUMNS)
    return Qrels(qid=q, docid=d, grade=g, source=source)
