"""The one grouped result every output format renders: [`ResultTable`][tierank.report.formats.grouped.ResultTable].

A [`ResultTable`][tierank.report.formats.grouped.ResultTable] holds one or several [`EvalResult`][tierank.results.EvalResult] (one per run, or per
MTEB subset and split), each tagged with its key values (``{"run": name}``, ``{"subset": s, "split":
t}``, or none for a single result).  Its rows are query x measure x statistics.  Formats read it
column-wise ([`ResultTable.blocks`][tierank.report.formats.grouped.ResultTable.blocks]: one [`Block`][tierank.report.formats.grouped.Block] of per-query columns per group and
measure, each column formatted once); records (dicts) are built only when asked for
([`ResultTable.records`][tierank.report.formats.grouped.ResultTable.records]), e.g. by a Python caller or a format that needs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ... import compute as ac
from ...results import EvalResult, jsonable  # noqa: F401  # the JSON conversion, re-exported for the formats
from ..marks import SAMPLED_MARK, sampled_note


@dataclass(frozen=True)
class Group:
    """One result of a [`ResultTable`][tierank.report.formats.grouped.ResultTable] with its key values (``{"run": "bm25"}``) and, for
    trec_eval's layout, the run's tag (``runid``; None when unknown)."""

    keys: dict[str, str]
    result: EvalResult
    runid: str | None = None


@dataclass(frozen=True)
class Block:
    """One group's per-query rows of one measure, column-wise: ``queries`` (the evaluated query ids),
    ``measure`` (its name) and ``values`` (``{column: float64 array}``, NaN where a record has None)."""

    keys: dict[str, str]
    queries: list[str]
    measure: str
    values: dict[str, np.ndarray]


@dataclass(frozen=True)
class ResultTable:
    """Evaluation results grouped for output: ``groups`` in output order, ``keys`` the names of their
    key columns (``()`` for one result, which renders exactly as that result alone), ``nest`` the
    key of the JSON document that nests several groups (``"runs"``, ``"subsets"``).

    Examples
    --------
    >>> import tierank
    >>> res = tierank.evaluate({"q": {"b": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["P@1"])
    >>> t = ResultTable.of(res)
    >>> t.keys, t.columns[:2], [b.values["expected"].tolist() for b in t.blocks()]
    ((), ('oblivious', 'expected'), [[0.5]])
    >>> ResultTable.of({"A": res, "B": res}).keys
    ('run',)
    """

    groups: list[Group]
    keys: tuple[str, ...] = ()
    nest: str = "runs"

    @classmethod
    def of(cls, results, key: str = "run", runids: dict | None = None) -> ResultTable:
        """One [`EvalResult`][tierank.results.EvalResult], or ``{name: EvalResult}`` (one result: no key column), as a table."""
        if isinstance(results, EvalResult):
            return cls([Group({}, results)])
        runids = runids or {}
        if len(results) == 1:
            ((name, r),) = results.items()
            return cls([Group({}, r, runids.get(name))])
        return cls(
            [Group({key: name}, r, runids.get(name)) for name, r in results.items()],
            (key,),
            key + "s",
        )

    @classmethod
    def nested(cls, results: dict, keys: tuple[str, ...], nest: str) -> ResultTable:
        """``{(k1, k2, ...): EvalResult}`` (e.g. MTEB's ``(subset, split)``) as a table; one result: no key
        columns."""
        if len(results) == 1:
            return cls([Group({}, next(iter(results.values())))])
        return cls([Group(dict(zip(keys, k)), r) for k, r in results.items()], keys, nest)

    @property
    def columns(self) -> tuple[str, ...]:
        """The statistic columns (those of the first result)."""
        return self.groups[0].result.columns if self.groups else ()

    def fields(self) -> tuple[str, ...]:
        """Every column of a row: the key columns, ``query``, ``measure``, the statistics."""
        return (*self.keys, "query", "measure", *self.columns)

    def blocks(self, group: Group | None = None) -> Iterator[Block]:
        """Per-query rows column-wise, group by group (or of ``group``), measure by measure, in record
        order; values as float64 (NaN for None)."""
        for g in [group] if group is not None else self.groups:
            r = g.result
            for m in r.measures:
                t = r.table(m)
                yield Block(
                    g.keys,
                    r.qids,
                    str(m),
                    {c: np.asarray(t[c], dtype=np.float64) for c in r.columns},
                )

    def exact(self, group: Group, measure) -> bool:
        """True when ``measure``'s values in ``group`` are exact (its records carry only ``method``)."""
        return group.result.stats[measure].method == "exact"

    def records(self, per_query: bool = True) -> list[dict]:
        """Every record as a dict (key columns first), the order of the jsonl output."""
        return [
            {**g.keys, **rec} for g in self.groups for rec in g.result.records(per_query=per_query)
        ]


def num(x) -> str:
    """A statistic as text in tsv/csv: empty for None or NaN, otherwise the float's ``repr``."""
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else repr(float(x))


def repr_column(v: np.ndarray, nan: str = "nan") -> list[str]:
    """``repr`` of every value of a float64 column, ``nan`` for NaN: each distinct value formatted once
    when values repeat (scores of a measure often do), then taken by index.

    Examples
    --------
    >>> repr_column(np.array([0.5, 0.0, 0.5, float("nan"), 0.5, 0.5]), nan="")
    ['0.5', '0.0', '0.5', '', '0.5', '0.5']
    >>> repr_column(np.array([0.0, -0.0] * 40))[:2]
    ['0.0', '-0.0']
    """
    bits = np.ascontiguousarray(v, dtype=np.float64).view(
        np.int64
    )  # distinct bit patterns: -0.0 apart from 0.0
    if (
        len(v) >= 64 and 2 * len(np.unique(bits[:64])) <= 64
    ):  # the first values tell whether values repeat
        uniq, inverse = np.unique(bits, return_inverse=True)
        if 2 * len(uniq) <= len(v):
            text = np.array(
                [nan if x != x else repr(x) for x in uniq.view(np.float64).tolist()], dtype=object
            )
            return text[inverse.reshape(-1)].tolist()
    return float_reprs(v, nan)


#: magnitudes where Arrow's text of a float64 that is not a whole number is its ``repr``: both write the
#: shortest digits that read back to the same float, positional from 1e-4 (below it ``repr`` switches to
#: an exponent) to 1e10 (where Arrow switches); a decade of margin at the top
_ARROW_TEXT = (1e-4, 1e9)


def float_reprs(v: np.ndarray, nan: str = "nan") -> list[str]:
    """``repr`` of every value of a float64 column (``nan`` for NaN), about 3x faster than one ``repr``
    per value: Arrow's cast to text where it is ``repr``'s text (values that are not whole numbers,
    of magnitude in `_ARROW_TEXT`), ``repr`` for the others (whole numbers, very small or large
    values, NaN, infinities).  The test suite checks it against ``repr`` on millions of floats.

    >>> float_reprs(np.array([0.1 + 0.2, 1.0, -0.0, 2.5e-05, 123.456, 1e300, float("nan")]), nan="null")
    ['0.30000000000000004', '1.0', '-0.0', '2.5e-05', '123.456', '1e+300', 'null']
    """
    v = np.ascontiguousarray(v, dtype=np.float64)
    if len(v) < 64:  # Arrow's call costs more than it saves
        return [nan if x != x else repr(x) for x in v.tolist()]
    mag = np.abs(v)
    arrow = (mag >= _ARROW_TEXT[0]) & (mag < _ARROW_TEXT[1])
    arrow &= v != np.trunc(v)
    own = np.flatnonzero(~arrow)
    if len(own) * 2 > len(v):  # mostly whole numbers and the like: repr throughout
        out = list(map(float.__repr__, v.tolist()))
        if np.isnan(v).any():
            out = [nan if s == "nan" else s for s in out]
        return out
    out = ac.cast(ac.array(v), pa.string()).to_pylist()
    for i, x in zip(own.tolist(), v[own].tolist()):
        out[i] = nan if x != x else repr(x)
    return out


_JSON_PLAIN = re.compile(
    r"[^ !#-\[\]-~]"
)  # what json.dumps escapes: quote, backslash, controls, non-ASCII


def json_strings(values: list[str]) -> list[str]:
    """``json.dumps`` of every string of ``values``: plain printable ASCII (the usual query ids) is quoted
    without a call per string; anything else is left to ``json.dumps``.

    >>> json_strings(["q1", "query 2"])
    ['"q1"', '"query 2"']
    >>> import json
    >>> ids = ["q1", 'say "hi"', "caf\u00e9", "a\\b", "tab\there", "\x7f"]
    >>> json_strings(ids) == [json.dumps(x) for x in ids]
    True
    """
    import json

    if _JSON_PLAIN.search("".join(values)) is None:
        return ['"' + v + '"' for v in values]
    return list(map(json.dumps, values))


def num_column(v: np.ndarray) -> list[str]:
    """[`num`][tierank.report.formats.grouped.num] of every value of a float64 column (formatted once, column-wise)."""
    return repr_column(v, "")


def fixed_column(v: np.ndarray, digits: int = 4) -> list[str]:
    """Every value of a float64 column with ``digits`` decimals, empty for NaN (the human tables)."""
    form = f"{{:.{digits}f}}".format
    return ["" if x != x else form(x) for x in v.tolist()]


def cell(x, digits: int = 4) -> str:
    """One value of a flat record as table text: empty for None and NaN, floats with ``digits``
    decimals, sequences joined with ``", "``, everything else by ``str``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{digits}f}"
    if isinstance(x, (list, tuple)):
        return ", ".join(cell(v, digits) for v in x)
    return str(x)


def text_rows(table: ResultTable, per_query: bool, digits: int = 4) -> Iterator[list[str]]:
    """The rows of a human table of ``table`` (key columns, query, measure, statistics as text with
    ``digits`` decimals): per query (with ``per_query``; column-wise) then the aggregate rows, group by
    group."""
    for g in table.groups:
        keys = list(g.keys.values())
        if per_query:
            for m, b in zip(g.result.measures, table.blocks(g)):
                cols = [fixed_column(b.values[c], digits) for c in table.columns]
                marked = b.measure + SAMPLED_MARK
                sampled = g.result.stats[m].sampled_queries().tolist()
                for q, drawn, *vals in zip(b.queries, sampled, *cols):
                    yield [*keys, q, marked if drawn else b.measure, *vals]
        for rec in g.result.records(per_query=False):
            yield [
                *keys,
                rec["query"],
                rec["measure"] + (SAMPLED_MARK if rec.get("method") == "sampled" else ""),
                *(cell(rec[c], digits) for c in table.columns),
            ]


def numeric_fields(records: list[dict], fields: tuple[str, ...]) -> list[bool]:
    """Per field: True when every value given is a number (right-aligned in the human tables)."""

    def number(x) -> bool:
        return x is None or (isinstance(x, (int, float, np.number)) and not isinstance(x, bool))

    return [bool(records) and all(number(r.get(k)) for r in records) for k in fields]


#: a human table's layout: (header, per column whether it is numeric, rows of cell texts) -> text
TableLayout = Callable[[Iterable[str], list[bool], Iterable[list[str]]], str]


def human_table_format(
    layout: TableLayout, footnote: Callable[[str], str] = lambda note: f"\n{note}\n"
) -> tuple[Callable[..., str], Callable[..., str]]:
    """The ``render`` and ``records`` of a format that writes one human table in ``layout`` (Markdown,
    LaTeX): a [`ResultTable`][tierank.report.formats.grouped.ResultTable] with the statistics right-aligned (4 decimals), a row partly sampled
    marked (`SAMPLED_MARK`) and ``footnote(sampled_note)`` after the table; flat records with
    their numeric fields right-aligned."""

    def render(table: ResultTable, per_query: bool, **_) -> str:
        fields = table.fields()
        numeric = [False] * (len(fields) - len(table.columns)) + [True] * len(table.columns)
        out = layout(fields, numeric, text_rows(table, per_query))
        note = sampled_note(g.result for g in table.groups)
        return out if note is None else out + footnote(note)

    def records(
        recs: list[dict], fields: tuple[str, ...], document: dict | None = None, stream=None
    ) -> str:
        return layout(
            fields, numeric_fields(recs, fields), ([cell(r.get(k)) for k in fields] for r in recs)
        )

    for f in (
        render,
        records,
    ):  # they belong to the format's module (its registration says where it lives)
        f.__module__ = layout.__module__
    return render, records
