"""Located rows of the graded inputs (label distributions, judge columns, subtopic qrels).

Their readers share one shape: the fast path reads the canonical bytes as a table of space-separated
fields ([`space_table`][tierank.io.rows.space_table]) whose row ``i`` stands on line
``content_lines(data)[i]``; the error path walks the lines one by one
([`fields`][tierank.io.rows.fields]), and every problem is one located line ``file:line: reason``, or
``file: row N: reason`` where the rows do not come from the lines of a text file
([`RowLog`][tierank.io.rows.RowLog]).

>>> content_lines(b"a\\n\\nb\\n").tolist()
[1, 3]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import Problem, ProblemLog, quote
from . import lexer


def content_lines(data: bytes) -> np.ndarray:
    """The 1-based line numbers of the non-blank lines of canonical ``data`` (row ``i`` of a reader's
    table is on line ``result[i]``)."""
    b = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(b == 10)
    starts = np.r_[0, ends + 1]
    stops = np.r_[ends, len(b)]
    return np.flatnonzero(stops > starts) + 1


def space_table(
    data: bytes, names: list[str] | None, types: Mapping[str, pa.DataType]
) -> pa.Table | None:
    """Canonical ``data`` read by Arrow as space-separated fields (no quoting, no nulls), the columns
    named ``names`` (None: ``f0``, ``f1``, ...) and typed by ``types``; None where Arrow cannot read it
    (the caller's line-by-line path then says why, located)."""
    if not lexer.is_utf8(data) or data.startswith(lexer.BOM):
        return None
    read = (
        pacsv.ReadOptions(autogenerate_column_names=True)
        if names is None
        else pacsv.ReadOptions(column_names=names)
    )
    try:
        return pacsv.read_csv(
            pa.py_buffer(data),
            read_options=read,
            parse_options=pacsv.ParseOptions(
                delimiter=" ", quote_char=False, ignore_empty_lines=True
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(types),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


class RowLog(ProblemLog):
    """A `ProblemLog` that locates a problem by its row: ``file:line`` where ``lines`` gives each row's
    line, else ``file: row N``.

    >>> log = RowLog("d.txt", np.array([2, 5]))
    >>> log.row(1, "bad")
    >>> RowLog("d.parquet", None).where(0), [str(p) for p in log.error().problems]
    ('row 1', ['d.txt:5: bad'])
    """

    def __init__(self, source: str, lines: np.ndarray | None):
        super().__init__(source)
        self.lines = lines

    def where(self, r: int) -> str:
        """Row ``r`` in words: its line, or its 1-based row number."""
        return f"line {int(self.lines[r])}" if self.lines is not None else f"row {r + 1}"

    def row(self, r: int, reason: str) -> None:
        """``reason`` at row ``r`` (0-based)."""
        if self.lines is not None:
            self(int(self.lines[r]), reason)
        else:
            self.add([Problem(self.source, None, f"row {r + 1}: {reason}")])

    def repeated_row(self, later: int, first: int, what: str) -> None:
        """``what`` at row ``later`` repeats row ``first``."""
        if self.lines is not None:
            self.repeated(int(self.lines[later]), what, int(self.lines[first]))
        else:
            self.row(later, f"{what} (first at row {first + 1})")


def fields(
    data: bytes, log: ProblemLog, layout: str, width: int, at_least: bool = False
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of each line of canonical ``data`` that is UTF-8 and has ``width``
    fields (``at_least``: ``width`` or more); the other lines go to ``log``, located: not UTF-8, or
    ``expected WIDTH columns (LAYOUT), found N`` (``expected LAYOUT (WIDTH or more fields), found N``).
    """
    for lineno, raw in lexer.lines(data):
        line, why = lexer.decode(raw)
        if line is None:
            log(lineno, why or "not UTF-8")
            continue
        parts = line.split(" ")
        if at_least and len(parts) < width:
            log(lineno, f"expected {layout} ({width} or more fields), found {len(parts)}")
        elif not at_least and len(parts) != width:
            log(lineno, f"expected {width} columns ({layout}), found {len(parts)}")
        else:
            yield lineno, parts


def finite_grade(log: ProblemLog, lineno: int, token: str) -> float | None:
    """``token`` as a finite relevance grade, or None with the located reason in ``log``."""
    grade = lexer.parse_number(token)
    if grade is None or not np.isfinite(grade):
        log(lineno, f"relevance grade {quote(token)} is not a finite number")
        return None
    return grade


__all__ = ["RowLog", "content_lines", "fields", "finite_grade", "space_table"]
