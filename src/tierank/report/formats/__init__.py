"""The one door for outputs: every output format, one module each, registered in :data:`FORMATS`.

A format is a module of this package that builds one :class:`Format` and registers it with
:func:`register` (its registration: the module's name in :data:`MODULES`).  A format renders the one
grouped result, :class:`~tierank.report.formats.grouped.ResultTable` (query x measure x statistics
for one or several runs), and, when it can, flat records (``tierank ties``, ``sweep``, ``bands``,
the leaderboard).  The command line's ``--format`` choices and their help come from this registry:
:func:`names` (``table`` is the terminal table, drawn by :mod:`tierank.report.terminal`).

Adding a format: one module here (``render(table, per_query, **options) -> str`` and optionally
``records(records, fields, document) -> str``) and its name in :data:`MODULES`.

Examples
--------
>>> names("results")
('table', 'tsv', 'json', 'jsonl', 'csv', 'trec_eval', 'markdown', 'latex')
>>> names("records")
('table', 'tsv', 'json', 'jsonl', 'csv', 'markdown', 'latex')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from ...errors import TierankInputError
from .grouped import Block, Group, ResultTable, jsonable, num, num_column

__all__ = ["FORMATS", "Format", "register", "names", "render", "render_records", "ResultTable", "Group", "Block",
           "jsonable", "num", "num_column", "help_text"]


@dataclass(frozen=True)
class Format:
    """An output format: its ``name`` (the ``--format`` value), one line of ``help``, ``render`` (a
    :class:`ResultTable` to text; None for the terminal table) and ``records`` (flat records to text;
    None when the format has none: trec_eval's layout); ``order`` places its ``--format`` choice."""

    name: str
    help: str
    render: Callable[..., str] | None = None
    records: Callable[..., str] | None = None
    order: int = 100


#: every format by name, by ``order`` (the order of the ``--format`` choices)
FORMATS: dict[str, Format] = {}

#: the format modules, in the order their formats are listed: a new format is one module and its name here
MODULES = ("table", "delimited", "jsondoc", "jsonl", "trec_eval", "markdown", "latex")


def register(fmt: Format) -> Format:
    """Register ``fmt`` (a module's registration); a name given twice is an error."""
    if fmt.name in FORMATS:
        raise ValueError(f"output format {fmt.name!r} registered twice")
    FORMATS[fmt.name] = fmt
    ordered = sorted(FORMATS.values(), key=lambda f: f.order)
    FORMATS.clear()
    FORMATS.update((f.name, f) for f in ordered)
    return fmt


for _module in MODULES:
    importlib.import_module(f"{__name__}.{_module}")


def names(kind: str = "results") -> tuple[str, ...]:
    """The format names for ``kind``: ``"results"`` (``tierank eval``: every format), ``"records"``
    (the formats of flat records, and of MTEB's results: all but trec_eval's layout)."""
    if kind == "results":
        return tuple(FORMATS)
    if kind == "records":
        return tuple(n for n, f in FORMATS.items() if f.records is not None or f.render is None)
    raise ValueError(f"unknown kind of format names {kind!r}")


def help_text(kind: str = "results") -> str:
    """``name: help`` of every format of ``kind``, for the command line's help."""
    return "; ".join(f"{n}: {FORMATS[n].help}" for n in names(kind))


def _get(fmt: str, kind: str) -> Format:
    f = FORMATS.get(fmt)
    if f is None or fmt not in names(kind) or (kind == "results" and f.render is None) or \
            (kind == "records" and f.records is None):
        raise TierankInputError(f"unknown format {fmt!r}; accepted: {', '.join(names(kind))}")
    return f


def render(table, fmt: str, per_query: bool = False, **options) -> str:
    """``table`` (a :class:`ResultTable`, an :class:`~tierank.results.EvalResult` or ``{run name:
    EvalResult}``) in format ``fmt``; ``options`` go to the format (trec_eval's ``plan``, ``stat``,
    ``summary``, ``runid``)."""
    if not isinstance(table, ResultTable):
        table = ResultTable.of(table)
    f = _get(fmt, "results")
    assert f.render is not None
    return f.render(table, per_query, **options)


def render_records(records: list[dict], fields: tuple[str, ...], fmt: str, document: dict | None = None,
                   stream: list[dict] | None = None) -> str:
    """Flat records in format ``fmt``: the tables (tsv, csv, markdown, latex) show ``fields`` of each
    record; ``json`` writes ``document`` when given (the records otherwise); ``jsonl`` writes each
    record's ``fields``, or every record of ``stream`` whole when given (e.g. the runs and a summary)."""
    f = _get(fmt, "records")
    assert f.records is not None
    return f.records(records, fields, document, stream)
