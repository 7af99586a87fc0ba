r"""``markdown``: a GitHub-flavoured Markdown table (pipes), numbers with 4 decimals and right-aligned;
Markdown syntax in a text cell (``|``, ``*``, ``[``, a backtick, ``<``, ...) is backslash-escaped, so that a
run named ``*star*.run`` shows as written.  The per-query rows (with ``-q``) precede the aggregate
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

import re
from collections.abc import Iterable

from . import register
from .grouped import human_table_format

#: what Markdown reads as syntax in a cell: emphasis (``*``, ``~``, an ``_`` at a word's edge: one inside a
#: word, ``q_1``, is text), code spans, links and images (``[ ]``), HTML tags and entities (``< > &``), the
#: cell separator ``|`` and the escape ``\\`` itself; each is backslash-escaped (CommonMark: any ASCII
#: punctuation may be)
_SYNTAX = re.compile(r"[\\`*~\[\]<>&|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def escape(text: str) -> str:
    r"""A Markdown table cell: its Markdown syntax escaped (it shows as written), line breaks as spaces.

    >>> print(escape("*star* [link](x) `code` <b>bold</b> a|b _em_ q_1 ~~del~~ &amp;"))
    \*star\* \[link\](x) \`code\` \<b\>bold\</b\> a\|b \_em\_ q_1 \~\~del\~\~ \&amp;
    """
    return _SYNTAX.sub(lambda m: "\\" + m.group(0), text).replace("\r", " ").replace("\n", " ")


def _table(header: Iterable[str], numeric: list[bool], rows: Iterable[list[str]]) -> str:
    out = [
        "| " + " | ".join(escape(h) for h in header) + " |\n",
        "|" + "|".join("--:" if n else ":--" for n in numeric) + "|\n",
    ]
    out.extend("| " + " | ".join(escape(c) for c in row) + " |\n" for row in rows)
    return "".join(out)


render, records = human_table_format(_table, lambda note: "\n" + escape(note) + "\n")

FORMAT = register("markdown", render, records)
