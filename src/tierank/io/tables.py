"""Tables and dicts of dicts, validated into [`Run`][tierank.io.tables.Run] / [`Qrels`][tierank.io.tables.Qrels] columns; what a table is (run or qrels).

The checks every in-memory input goes through, whatever its source ([`tierank.io.sources`][tierank.io.sources] finds and
opens a source; [`tierank.io.convert`][tierank.io.convert] is the door callers use):

Tables and frames are held to what a TREC line can say, so that no input means something a text
file could not: exactly one column per field (``qid`` beside ``query_id``, or ``QID`` beside
``qid``, is refused, naming both); scores and grades are integers, floating-point numbers, decimals
or number text (booleans, dates and other types are refused), none missing or non-finite; an integer
is held exactly by float64 (one beyond 2**53 that float64 would round is refused: it could become a
tie that is not in the input), and a decimal, like number text, is read as its nearest float64 (0.30
as 0.3), refused only where two different decimals of a column would become the same float64; ids are text or integers, never empty and never holding a space, tab
or line end.  BEIR names its grade column ``score``, as runs name theirs: such a table is told
apart by its content ([`table_role`][tierank.io.tables.table_role]), and a run given as qrels is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..errors import MAX_PROBLEMS, Problem, TierankInputError, quote, shorten
from .lexer import NUMBER_PATTERN, parse_number
from .model import Qrels, Run
from .readers import RESERVED_QID, RESERVED_REASON

#: the query id column, as ir_measures, ranx, BEIR and pyterrier name it (case-insensitive)
QUERY_COLUMNS = ("query_id", "qid", "q_id", "query-id")
#: the document id column
DOC_COLUMNS = ("doc_id", "docid", "docno", "corpus-id", "corpus_id", "did")
#: read only when none of the names above is there (a ``query`` or ``doc`` column often holds text)
QUERY_FALLBACK = ("query",)
DOC_FALLBACK = ("doc",)
#: a run's score column
SCORE_COLUMNS = ("score", "sim", "similarity")
#: a qrels' grade column; BEIR names it ``score``, as runs name theirs: read as the grade only when none
#: of these is there, and only if the content is judgments (see `table_role`)
GRADE_COLUMNS = ("relevance", "rel", "grade", "label", "judgment")
GRADE_FALLBACK = ("score",)
#: a column only runs have
RANK_COLUMNS = ("rank",)

#: characters that separate fields or end lines in TREC text: an id holding one (or an empty id) could
#: not be written as a run or qrels line, nor read back
_BREAKS_RE2 = r"[ \t\n\r]"

#: integers with a larger magnitude are not all exact in float64
_EXACT_INT = 2**53

#: judgments as a table's content shows them: integers, at most this many distinct values, in this range
JUDGMENT_LEVELS = 10
JUDGMENT_RANGE = 100


def _matches(columns: list[str], wanted: tuple[str, ...]) -> list[str]:
    return [c for c in columns if c.lower() in wanted]


def _pick(
    columns: list[str],
    wanted: tuple[str, ...],
    what: str,
    source: str,
    fallback: tuple[str, ...] = (),
) -> str:
    """The one column of ``columns`` named as ``wanted`` (else as ``fallback``), case-insensitive;
    two columns naming the same field are refused, naming both."""
    for group in (wanted, fallback):
        hits = _matches(columns, group)
        if len(hits) > 1:
            raise TierankInputError(
                [
                    Problem(
                        source,
                        None,
                        f"columns {', '.join(map(repr, hits))} all name the {what}: keep one of them (drop or rename "
                        "the others)",
                    )
                ]
            )
        if hits:
            return hits[0]
    names = ", ".join(dict.fromkeys(wanted + fallback))
    raise TierankInputError(
        [Problem(source, None, f"no {what} column among {columns}; accepted names: {names}")]
    )


def _frame_to_table(df, source: str) -> pa.Table:
    if isinstance(df, pa.Table):
        return df
    mod = type(df).__module__
    if mod.startswith("polars"):
        return df.to_arrow()
    if mod.startswith("pandas"):
        try:
            return pa.Table.from_pandas(df, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError) as e:
            raise TierankInputError(
                [Problem(source, None, f"the DataFrame cannot be read as columns ({e})")]
            ) from None
    raise TypeError(f"unsupported input type {type(df).__name__}")


def _plain(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return ac.decoded(col)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _ids(col: pa.ChunkedArray | pa.Array, source: str, name: str = "") -> pa.Array:
    col = _plain(col)
    where = f"column {name!r}: " if name else ""
    t = col.type
    if pa.types.is_boolean(t) or pa.types.is_temporal(t) or pa.types.is_nested(t):
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"{where}identifiers of type {t} are not accepted: ids are text or numbers",
                )
            ]
        )
    if pa.types.is_string(t):
        return col
    try:
        return ac.cast(col, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise TierankInputError(
            [Problem(source, None, f"{where}identifiers of type {t} cannot be read as text ({e})")]
        ) from None


def _rows_problem(source: str, rows: np.ndarray, reason: str) -> TierankInputError:
    probs = [Problem(source, None, f"row {int(r) + 1}: {reason}") for r in rows[:MAX_PROBLEMS]]
    if len(rows) > MAX_PROBLEMS:
        probs.append(Problem(source, None, f"... and {len(rows) - MAX_PROBLEMS} more rows"))
    return TierankInputError(probs)


def _rows_problems(source: str, rows: np.ndarray, reason) -> TierankInputError:
    """As `_rows_problem` with a reason per row (``reason(row)``)."""
    probs = [Problem(source, None, f"row {int(r) + 1}: {reason(r)}") for r in rows[:MAX_PROBLEMS]]
    if len(rows) > MAX_PROBLEMS:
        probs.append(Problem(source, None, f"... and {len(rows) - MAX_PROBLEMS} more rows"))
    return TierankInputError(probs)


def _inexact_ints(col: pa.Array) -> np.ndarray:
    """Rows of an integer column whose value float64 cannot hold exactly."""
    if col.type.bit_width < 64:
        return np.zeros(0, dtype=np.int64)
    x = col.to_numpy(zero_copy_only=False)
    if col.null_count:
        x = np.asarray(ac.fill_null(col, 0).to_numpy(zero_copy_only=False))
    big = np.flatnonzero(
        (x > _EXACT_INT) | (x < -_EXACT_INT) if x.dtype.kind == "i" else x > _EXACT_INT
    )
    return np.asarray([i for i in big if int(float(x[i])) != int(x[i])], dtype=np.int64)


def _values(col: pa.ChunkedArray, source: str, what: str, name: str = "") -> np.ndarray:
    """float64 values of a score/grade column; text is read with the file readers' number grammar.

    Refused: a type that is not a number (boolean, date, time, ...), a missing value, and an integer
    or decimal that float64 cannot hold exactly (beyond 2**53 they would become ties that are not in
    the input)."""
    col = _plain(col)
    label = "score" if what == "run" else "grade"
    where = f" {name!r}" if name else ""
    t = col.type
    if len(col) == 0:  # an empty table (of any column type): said as empty where it is checked
        return np.zeros(0, dtype=np.float64)
    if col.null_count and not pa.types.is_floating(
        t
    ):  # a missing float is NaN (pandas writes NaN as null)
        raise _rows_problem(
            source, np.flatnonzero(np.asarray(ac.call("is_null", col))), f"{label} is missing"
        )
    if _is_text(t):
        ok = _numbers_as_text(col)
        bad = np.flatnonzero(~np.asarray(ok))
        if len(bad):
            raise _rows_problem(source, bad, f"{label} is not a number")
        return ac.cast(col, pa.float64()).to_numpy(zero_copy_only=False)
    if pa.types.is_integer(t):
        bad = _inexact_ints(col)
        if len(bad):
            raise _rows_problems(
                source,
                bad,
                lambda r: (
                    f"integer {label} {col[int(r)].as_py()} cannot be held exactly "
                    "as a float64 (beyond 2**53 distinct integers would become ties that are not in the "
                    f"input); give {label}s as float64"
                ),
            )
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    if pa.types.is_floating(t):
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    if pa.types.is_decimal(t):
        from decimal import Decimal

        # one rule with number text: a decimal is read as its nearest float64 (0.30 as 0.3); refused only
        # where two different decimals of the column become the same float64 (a tie not in the input)
        vals = col.to_pylist()
        out = np.asarray([float(v) for v in vals], dtype=np.float64)
        first: dict[float, Decimal] = {}
        clash: list[int] = []
        for i, (v, f) in enumerate(zip(vals, out)):
            if v is None or not v.is_finite():
                continue
            if first.setdefault(float(f), v) != v:
                clash.append(i)
        if clash:
            raise _rows_problems(
                source,
                np.asarray(clash, dtype=np.int64),
                lambda r: (
                    f"decimal {label} {vals[int(r)]} and {first[float(out[int(r)])]} become the same float64 "
                    f"{float(out[int(r)])!r} (a tie that is not in the input); give {label}s as float64"
                ),
            )
        return out
    raise TierankInputError(
        [
            Problem(
                source,
                None,
                f"{label} column{where} of type {t} is not numeric: "
                f"{label}s are integers or floating-point numbers",
            )
        ]
    )


def _validate_columns(
    qid: pa.Array,
    docid: pa.Array,
    values: np.ndarray,
    source: str,
    what: str,
    duplicates: str = "error",
) -> None:
    if len(values) == 0:
        raise TierankInputError([Problem(source, None, f"empty {what}: no rows")])
    if qid.null_count or docid.null_count:
        rows = np.flatnonzero(
            np.asarray(ac.call("or", ac.call("is_null", qid), ac.call("is_null", docid)))
        )
        raise _rows_problem(source, rows, "missing query or document id")
    reserved = np.asarray(ac.equal(qid, pa.scalar(RESERVED_QID, pa.string())))
    if reserved.any():
        raise _rows_problem(source, np.flatnonzero(reserved), RESERVED_REASON)
    bad = ~np.isfinite(values)
    if bad.any():
        raise _rows_problem(
            source,
            np.flatnonzero(bad),
            f"{'score' if what == 'run' else 'grade'} is NaN or infinite",
        )
    if duplicates == "keep":
        return
    t = pa.table({"q": qid, "d": docid, "i": np.arange(len(values))})
    first = t.group_by(["q", "d"]).aggregate([("i", "min"), ("i", "count")])
    dup = np.asarray(first.column("i_count")) > 1
    if dup.any():
        tab = ac.filter(first, pa.array(dup))
        probs = [
            Problem(source, None, f"document {quote(d)} appears more than once in query {quote(q)}")
            for q, d in zip(tab.column("q").to_pylist()[:MAX_PROBLEMS], tab.column("d").to_pylist())
        ]
        raise TierankInputError(probs)


def _numbers_as_text(col: pa.Array) -> pa.Array:
    """Whether each text value of ``col`` is a number of the readers' grammar (false for a null)."""
    import pyarrow.compute as pc  # the regular expression kernel's options: a rare input (numbers as text)

    return pc.fill_null(pc.match_substring_regex(col, f"^(?:{NUMBER_PATTERN})$"), False)


def _check_text_ids(qid: pa.Array, docid: pa.Array, source: str) -> None:
    """Ids from a table: none empty, none holding a space, tab or line end (no TREC line could hold them)."""
    import pyarrow.compute as pc  # the regular expression kernel's options

    for kind, ids in (("query", qid), ("document", docid)):
        bad = pc.fill_null(
            pc.or_(pc.equal(pc.utf8_length(ids), 0), pc.match_substring_regex(ids, _BREAKS_RE2)),
            False,
        )
        rows = np.flatnonzero(np.asarray(bad))
        if len(rows):
            raise _rows_problem(
                source,
                rows,
                f"{kind} id {quote(ids[int(rows[0])].as_py())} is empty or holds a "
                "space, tab or line end (no TREC run or qrels line can hold it)",
            )


def _float(v) -> float | None:
    """``v`` as a float, None if it is not a number; a bool (JSON ``true``) is not a number, and an integer
    that float64 cannot hold exactly is refused (it could become a tie that is not in the input)."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (int, np.integer)) and abs(int(v)) > _EXACT_INT and int(float(v)) != int(v):
        return None
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return None


def _from_dict(obj: Mapping, source: str, what: str) -> tuple[pa.Array, pa.Array, np.ndarray]:
    qids: list[str] = []
    docids: list[str] = []
    vals: list[float] = []
    for q, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise TierankInputError(
                [
                    Problem(
                        source,
                        None,
                        f"query {quote(str(q))}: expected a mapping docid -> {'score' if what == 'run' else 'grade'}, "
                        f"got {type(docs).__name__}",
                    )
                ]
            )
        for d, v in docs.items():
            qids.append(str(q))
            docids.append(str(d))
            x = parse_number(v) if isinstance(v, str) else _float(v)
            if x is None:
                why = (
                    "is a boolean, not a number"
                    if isinstance(v, (bool, np.bool_))
                    else "cannot be held exactly as a float64"
                    if isinstance(v, (int, np.integer))
                    else "is not a number"
                )
                raise TierankInputError(
                    [
                        Problem(
                            source,
                            None,
                            f"query {quote(str(q))}, document {quote(str(d))}: value "
                            f"{quote(v) if isinstance(v, str) else shorten(repr(v))} {why}",
                        )
                    ]
                ) from None
            vals.append(x)
    return (
        pa.array(qids, pa.string()),
        pa.array(docids, pa.string()),
        np.asarray(vals, dtype=np.float64),
    )


def _value_column(cols: list[str], what: str, source: str) -> str:
    if what == "run":
        grades = _matches(cols, GRADE_COLUMNS)
        if grades and not _matches(cols, SCORE_COLUMNS):
            raise TierankInputError(
                [
                    Problem(
                        source,
                        None,
                        f"looks like qrels, not a run: its column {grades[0]!r} holds judgments and it has no score "
                        f"column ({', '.join(SCORE_COLUMNS)})",
                    )
                ]
            )
        return _pick(cols, SCORE_COLUMNS, "score", source)
    # a grade column and BEIR's ``score`` could both be the grade: refused as two grade columns are
    return _pick(cols, GRADE_COLUMNS + GRADE_FALLBACK, "relevance", source)


def _columns(obj, source: str, what: str, duplicates: str = "error"):
    """(qid, docid, values, table or None) from a table, a DataFrame or a dict of dicts, validated."""
    t = None
    if isinstance(obj, Mapping):
        q, d, v = _from_dict(obj, source, what)
    else:
        t = _frame_to_table(obj, source)
        cols = t.column_names
        qn = _pick(cols, QUERY_COLUMNS, "query id", source, fallback=QUERY_FALLBACK)
        dn = _pick(cols, DOC_COLUMNS, "document id", source, fallback=DOC_FALLBACK)
        vn = _value_column(cols, what, source)
        if what == "qrels" and vn.lower() in GRADE_FALLBACK:
            role, why = table_role(t)
            if role == "run":
                raise TierankInputError(
                    [
                        Problem(
                            source,
                            None,
                            f"looks like a run, not qrels: {why}; judgments are integer grades (a column named "
                            f"{', '.join(GRADE_COLUMNS)} is read as grades whatever it holds)",
                        )
                    ]
                )
        q, d = _ids(t.column(qn), source, qn), _ids(t.column(dn), source, dn)
        v = _values(t.column(vn), source, what, vn)
        if len(v):
            _check_text_ids(q, d, source)
    _validate_columns(q, d, v, source, what, duplicates)
    return q, d, v, t


# ------------------------------------------------------------------------------------ roles


def role_parts(t: pa.Table) -> tuple[str | None, str, str | None]:
    """(role by the columns' names or None, why, the shared ``score`` column to judge by content)."""
    cols = t.column_names
    rank = _matches(cols, RANK_COLUMNS)
    runs = _matches(cols, tuple(c for c in SCORE_COLUMNS if c not in GRADE_FALLBACK))
    grades, shared = _matches(cols, GRADE_COLUMNS), _matches(cols, GRADE_FALLBACK)
    if rank:
        return "run", f"it has a {rank[0]!r} column", None
    if runs and not grades:
        return "run", f"its column {runs[0]!r} holds scores", None
    if grades and not runs and not shared:
        return "qrels", f"its column {grades[0]!r} holds judgments", None
    if len(shared) == 1 and not grades and not runs:
        return None, "", shared[0]
    return None, "", None


def table_role(t: pa.Table) -> tuple[str | None, str]:
    """Whether the table ``t`` is a run or qrels, by its columns and, for BEIR's shared ``score``
    column, by its content: ``("run", why)``, ``("qrels", why)``, or ``(None, why)`` where it could be
    either (a ``score`` column of integers that are not clearly grades) or nothing is known.

    A run: a ``rank`` column, a ``sim``/``similarity`` column, or real-valued scores (some not an
    integer).  Qrels: a grade column (``relevance``, ``grade``, ...), or a ``score`` column of
    integer grades (at most `JUDGMENT_LEVELS` distinct values, all within
    +-`JUDGMENT_RANGE`).

    >>> table_role(pa.table({"qid": ["q1"] * 3, "docid": list("abc"), "score": [3.5, 2.0, 1.0]}))
    ('run', "column 'score' holds real-valued scores (row 1: 3.5)")
    >>> table_role(pa.table({"query-id": ["q1", "q1"], "corpus-id": ["c", "a"], "score": [1, 0]}))
    ('qrels', "column 'score' holds only small integers (0, 1), as judgments do")
    """
    role, why, shared = role_parts(t)
    if shared is None:
        return role, why
    col = _plain(t.column(shared))
    typ = col.type
    if _is_text(typ):
        ok = _numbers_as_text(col)
        col = ac.cast(ac.call("if_else", ok, col, pa.scalar(None, col.type)), pa.float64())
    elif not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):
        return None, ""
    x = np.asarray(col.to_numpy(zero_copy_only=False))
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            frac = np.flatnonzero(np.isfinite(x) & (x != np.round(x)))
        if len(frac):
            i = int(frac[0])
            return (
                "run",
                f"column {shared!r} holds real-valued scores (row {i + 1}: {float(x[i])!r})",
            )
        x = x[np.isfinite(x)]
    if not len(x):
        return None, ""
    levels = np.unique(x)
    if len(levels) <= JUDGMENT_LEVELS and np.abs(levels.astype(np.float64)).max() <= JUDGMENT_RANGE:
        shown = ", ".join(str(int(v)) for v in levels)
        return "qrels", f"column {shared!r} holds only small integers ({shown}), as judgments do"
    return None, f"column {shared!r} holds integers"


def _rank(t: pa.Table | None) -> np.ndarray | None:
    """The table's ``rank`` column as float64 (NaN where missing), None if it has none: informative only."""
    if t is None:
        return None
    cols = _matches(t.column_names, RANK_COLUMNS)
    if len(cols) != 1:
        return None
    col = _plain(t.column(cols[0]))
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        return None
    return np.asarray(ac.cast(col, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def table_run(obj, source: str, duplicates: str = "error") -> Run:
    """The [`Run`][tierank.io.tables.Run] of a table, a DataFrame or a dict of dicts, validated (``source`` names it in errors)."""
    q, d, s, t = _columns(obj, source, "run", duplicates)
    return Run(qid=q, docid=d, score=s, rank=_rank(t), source=source)


def table_qrels(obj, source: str) -> Qrels:
    """The [`Qrels`][tierank.io.tables.Qrels] of a table, a DataFrame or a dict of dicts, validated."""
    q, d, g, _ = _columns(obj, source, "qrels")
    return Qrels(qid=q, docid=d, grade=g, source=source)
