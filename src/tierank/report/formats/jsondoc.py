"""``json``: one indented JSON document: ``settings``, ``ties``, ``aggregate`` and (with the per-query
output) ``per_query`` records; several groups nest their documents under the table's ``nest`` key
(``{"runs": {name: document}}``, ``{"subsets": {subset: {split: document}}}``).  The per-query records
are written column-wise into the document, byte for byte what ``json.dumps(..., indent=2)`` writes.

Examples
--------
>>> import tierank
>>> from tierank.report.formats import ResultTable
>>> res = tierank.evaluate({"q": {"b": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["P@1"])
>>> json.loads(render(ResultTable.of(res), True))["per_query"][0]["expected"]
0.5
"""

from __future__ import annotations

import json

import numpy as np

from . import register
from .grouped import Group, ResultTable, json_strings, jsonable
from .jsonl import _json_column


def _per_query_text(table: ResultTable, g: Group, indent: str) -> str:
    """The ``per_query`` list of group ``g`` as ``json.dumps(indent=2)`` writes it at ``indent``."""
    r = g.result
    item, inner = indent + "  ", indent + "    "
    parts: list[str] = []
    queries = None  # the query ids as JSON, once per group
    for b in table.blocks(g):
        pieces = (
            [
                f'{item}{{\n{inner}"query": ',
                f',\n{inner}"measure": ' + json.dumps(b.measure) + f',\n{inner}"{r.columns[0]}": ',
            ]
            + [f',\n{inner}"{c}": ' for c in r.columns[1:]]
            + [f',\n{inner}"method": "exact"\n{item}}}']
        )
        record = "{}".join(
            p.replace("{", "{{").replace("}", "}}") for p in pieces
        )  # one field per gap
        cols = [_json_column(b.values[c]) for c in r.columns]
        if queries is None:
            queries = json_strings(b.queries)
        parts.extend(map(record.format, queries, *cols))
    if not parts:
        return "[]"
    return "[\n" + ",\n".join(parts) + "\n" + indent + "]"


def _columnwise(g: Group) -> bool:
    r = g.result
    return all(
        r.stats[m].method == "exact" and not np.isinf(np.asarray(v, dtype=float)).any()
        for m in r.measures
        for v in r.table(m).values()
    )


def render(table: ResultTable, per_query: bool, **_) -> str:
    """``table`` as one JSON document (``per_query``: with the per-query records)."""
    holes: dict[str, Group] = {}
    docs = []
    for i, g in enumerate(table.groups):
        r = g.result
        doc = {
            "settings": r.settings,
            "ties": dict(r.ties),
            "aggregate": r.records(per_query=False),
        }
        if per_query:
            if _columnwise(g):
                hole = f"\x00tierank per_query {i}\x00"
                holes[json.dumps(hole)] = g
                doc["per_query"] = hole
            else:
                doc["per_query"] = [
                    rec for rec in r.records(per_query=True) if rec["query"] != "all"
                ]
        docs.append((g, doc))
    if not table.keys:
        top = docs[0][1]
    else:
        nested: dict = {}
        for g, doc in docs:
            values = list(g.keys.values())
            at = nested
            for v in values[:-1]:
                at = at.setdefault(v, {})
            at[values[-1]] = doc
        top = {table.nest: nested}
    text = json.dumps(top, indent=2, allow_nan=False) + "\n"
    pieces: list[str] = []
    done = 0
    for hole, g in holes.items():  # in the order of the groups: the order they appear in the text
        pos = text.index(hole, done)
        line = text[text.rindex("\n", 0, pos) + 1 : pos]
        pieces += [
            text[done:pos],
            _per_query_text(table, g, line[: len(line) - len(line.lstrip(" "))]),
        ]
        done = pos + len(hole)
    return "".join(pieces) + text[done:]


def records(
    recs: list[dict], fields: tuple[str, ...], document: dict | None = None, stream=None
) -> str:
    """``document`` (or the records) as one indented JSON document, NaN and infinities as ``null``."""
    return (
        json.dumps(jsonable(document if document is not None else recs), indent=2, allow_nan=False)
        + "\n"
    )


FORMAT = register("json", render, records)
