r"""``markdown``: a GitHub-flavoured Markdown table (pipes), numbers with 4 decimals and right-aligned;
a ``|`` in a text cell is escaped as ``\|``.  The per-query rows (with ``-q``) precede the aggregate
rows (``query`` = ``all``), as in tsv.

Examples
--------
>>> import tierank
>>> from tierank.report.formats import ResultTable
>>> res = tierank.evaluate({"q_1": {"b": 1}}, {"q_1": {"a": 0.5, "b": 0.5}}, ["P@1"])
>>> print(render(ResultTable.of(res), True), end="")
| query | measure | oblivious | expected | min | max | range | bias | std |
|:--|:--|--:|--:|--:|--:|--:|--:|--:|
| q_1 | P@1 | 1.0000 | 0.5000 | 0.0000 | 1.0000 | 1.0000 | 0.5000 | 0.5000 |
| all | P@1 | 1.0000 | 0.5000 | 0.0000 | 1.0000 | 1.0000 | 0.5000 | 0.5000 |
>>> print(records([{"name": "a|b", "n": 3, "x": None}], ("name", "n", "x")), end="")
| name | n | x |
|:--|--:|--:|
| a\|b | 3 |  |
"""

from __future__ import annotations

from collections.abc import Iterable

from . import register
from .grouped import human_table_format


def escape(text: str) -> str:
    """A Markdown table cell: ``|`` escaped, line breaks as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _table(header: Iterable[str], numeric: list[bool], rows: Iterable[list[str]]) -> str:
    out = ["| " + " | ".join(escape(h) for h in header) + " |\n",
           "|" + "|".join("--:" if n else ":--" for n in numeric) + "|\n"]
    out.extend("| " + " | ".join(escape(c) for c in row) + " |\n" for row in rows)
    return "".join(out)


render, records = human_table_format(_table)

FORMAT = register("markdown", render, records)
