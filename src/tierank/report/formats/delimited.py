"""``tsv`` and ``csv``: one row per (query, measure) and the aggregate rows (``query`` = ``all``), a
header first; key columns (``run``, or ``subset`` and ``split``) lead, ``method`` and ``se`` end each row.  Written column-wise: each
statistic column is formatted once ([`num_column`][tierank.report.formats.grouped.num_column]) and the rows
joined; text fields are quoted as `csv` quotes them.

Examples
--------
>>> import tierank
>>> res = tierank.evaluate({"q": {"b": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["P@1"])
>>> print(render(ResultTable.of(res), True, delimiter=","), end="")
query,measure,oblivious,expected,min,max,range,bias,std,method,se
q,P@1,1.0,0.5,0.0,1.0,1.0,0.5,0.5,exact,
all,P@1,1.0,0.5,0.0,1.0,1.0,0.5,0.5,exact,
"""

from __future__ import annotations

import csv
import functools
import io

import numpy as np

from . import register
from .grouped import ResultTable, num, num_column

#: the columns after the statistics: how each row was obtained (as the jsonl records' keys)
LABELS = ("method", "se")


def _quoter(delimiter: str):
    """A function that writes one text field as `csv` would inside a row of several fields."""

    @functools.lru_cache(maxsize=1 << 16)
    def quote(s: str) -> str:
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerow([s, ""])
        return buf.getvalue()[:-2]

    return quote


def _labels(stats, n: int) -> tuple[list[str], list[str]]:
    """The ``method`` and ``se`` fields of a measure's ``n`` per-query rows (``se`` empty where exact)."""
    drawn = stats.sampled_queries()
    if not drawn.any():
        return ["exact"] * n, [""] * n
    se = num_column(np.where(drawn, np.asarray(stats.se, dtype=np.float64), np.nan))
    return ["sampled" if d else "exact" for d in drawn.tolist()], se


def render(table: ResultTable, per_query: bool, *, delimiter: str = "\t") -> str:
    """``table`` as delimited text (``delimiter``: a tab for tsv, a comma for csv), each row ending in
    ``method`` (``exact`` or ``sampled``: expected, std and bias estimated from random tie orderings)
    and ``se`` (the standard error of a sampled expectation, empty where exact), as the jsonl records."""
    quote = _quoter(delimiter)
    out = [delimiter.join(quote(f) for f in (*table.fields(), *LABELS)) + "\n"]
    for g in table.groups:
        lead = "".join(quote(v) + delimiter for v in g.keys.values())
        if per_query:
            for m, b in zip(g.result.measures, table.blocks(g)):
                fixed = (
                    [lead, delimiter + quote(b.measure) + delimiter]
                    + [delimiter] * (len(table.columns) + len(LABELS) - 1)
                    + ["\n"]
                )
                row = "{}".join(
                    p.replace("{", "{{").replace("}", "}}") for p in fixed
                )  # one field per gap
                cols = [num_column(b.values[c]) for c in table.columns]
                cols += _labels(g.result.stats[m], len(b.queries))
                out.extend(map(row.format, map(quote, b.queries), *cols))
        for rec in g.result.records(per_query=False):
            out.append(
                lead
                + delimiter.join(
                    [
                        quote(rec["query"]),
                        quote(rec["measure"]),
                        *(num(rec[c]) for c in g.result.columns),
                        rec.get("method", "exact"),
                        num(rec.get("se")),
                    ]
                )
                + "\n"
            )
    return "".join(out)


def records(
    recs: list[dict],
    fields: tuple[str, ...],
    document: dict | None = None,
    stream=None,
    *,
    delimiter: str = "\t",
) -> str:
    """Flat records, one row each under a header of ``fields`` (None as an empty field, floats by ``repr``)."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    w.writerow(fields)
    for r in recs:
        w.writerow(
            [
                "" if r.get(k) is None else (num(r[k]) if isinstance(r[k], float) else r[k])
                for k in fields
            ]
        )
    return buf.getvalue()


TSV = register("tsv", render, records)
CSV = register(
    "csv", functools.partial(render, delimiter=","), functools.partial(records, delimiter=",")
)
