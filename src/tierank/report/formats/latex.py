r"""``latex``: a LaTeX ``tabular`` with booktabs rules (``\toprule``, ``\midrule``, ``\bottomrule``;
``\usepackage{booktabs}``), numbers with 4 decimals and right-aligned; text is escaped (``_ % & # $ { }
~ ^ \``).  The per-query rows (with ``-q``) precede the aggregate rows (``query`` = ``all``), as in tsv.

Examples
--------
>>> import tierank
>>> from tierank.report.formats import ResultTable
>>> res = tierank.evaluate({"q_1": {"b": 1}}, {"q_1": {"a": 0.5, "b": 0.5}}, ["P@1"])
>>> print(render(ResultTable.of(res), False), end="")
\begin{tabular}{llrrrrrrr}
\toprule
query & measure & oblivious & expected & min & max & range & bias & std \\
\midrule
all & P@1 & 1.0000 & 0.5000 & 0.0000 & 1.0000 & 1.0000 & 0.5000 & 0.5000 \\
\bottomrule
\end{tabular}
>>> escape("50% of a_b & {c} #1 $x$ ~ ^ \\")
'50\\% of a\\_b \\& \\{c\\} \\#1 \\$x\\$ \\textasciitilde{} \\textasciicircum{} \\textbackslash{}'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import register
from .grouped import human_table_format

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "_": r"\_",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\n": " ",
    "\r": " ",
}
_SPECIAL_RE = re.compile("|".join(re.escape(c) for c in _SPECIAL))


def escape(text: str) -> str:
    """``text`` for a LaTeX cell: ``_ % & # $ { } ~ ^ \\`` escaped (one pass), line breaks as spaces."""
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group()], text)


def _table(header: Iterable[str], numeric: list[bool], rows: Iterable[list[str]]) -> str:
    out = [
        "\\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}\n",
        "\\toprule\n",
        " & ".join(escape(h) for h in header) + " \\\\\n",
        "\\midrule\n",
    ]
    out.extend(" & ".join(escape(c) for c in row) + " \\\\\n" for row in rows)
    out += ["\\bottomrule\n", "\\end{tabular}\n"]
    return "".join(out)


render, records = human_table_format(
    _table, lambda note: "\\par\\smallskip\n" + escape(note) + "\n"
)

FORMAT = register("latex", render, records)
