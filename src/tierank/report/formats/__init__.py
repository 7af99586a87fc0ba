"""The one door for outputs: every output format, one module each, declared in `CATALOGUE`.

A format is a module of this package that renders the one grouped result,
[`ResultTable`][tierank.report.formats.grouped.ResultTable] (query x measure x statistics for one or several
runs), and, when it can, flat records (``tierank ties``, ``sweep``, ``bands``, the leaderboard); it
registers its renderers with [`register`][tierank.report.formats.register].  The command line's ``--format`` choices and their help
come from `CATALOGUE` ([`names`][tierank.report.formats.names], [`help_text`][tierank.report.formats.help_text]; ``table`` is the terminal table, drawn by
`tierank.report.terminal`), so that a command imports the module of the one format it writes, when
it writes it (`FORMATS`, every format registered, imports them all).

Adding a format: one module here (``render(table, per_query, **options) -> str`` and optionally
``records(records, fields, document) -> str``, registered with ``register("name", render, records)``)
and its line in `CATALOGUE`.

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
from typing import TYPE_CHECKING

from ...errors import TierankInputError

if TYPE_CHECKING:
    from .grouped import Block, Group, ResultTable, jsonable, num, num_column

__all__ = [
    "FORMATS",
    "CATALOGUE",
    "Format",
    "register",
    "names",
    "render",
    "render_records",
    "ResultTable",
    "Group",
    "Block",
    "jsonable",
    "num",
    "num_column",
    "help_text",
    "TREC_STATS",
    "SUFFIXES",
    "file_format",
    "encoded",
]


@dataclass(frozen=True)
class Format:
    """An output format: its ``name`` (the ``--format`` value), one line of ``help``, ``render`` (a
    [`ResultTable`][tierank.report.formats.ResultTable] to text; None for the terminal table) and ``records`` (flat records to text;
    None when the format has none: trec_eval's layout); ``order`` places its ``--format`` choice."""

    name: str
    help: str
    render: Callable[..., str] | None = None
    records: Callable[..., str] | None = None
    order: int = 100


#: every format, in the order of the ``--format`` choices: its name, its module, one line of help, and
#: whether it writes flat records (the terminal table draws them; trec_eval's layout has none)
CATALOGUE: tuple[tuple[str, str, str, bool], ...] = (
    ("table", "table", "the terminal table (the default)", True),
    ("tsv", "delimited", "tab-separated rows", True),
    ("json", "jsondoc", "one JSON document: settings, ties, aggregate (and per_query)", True),
    ("jsonl", "jsonl", "JSON lines: every per-query and aggregate record", True),
    ("csv", "delimited", "comma-separated rows", True),
    (
        "trec_eval",
        "trec_eval",
        "trec_eval's own layout (measure, query, value), one statistic (--stat)",
        False,
    ),
    ("markdown", "markdown", "a Markdown table (pipes)", True),
    ("latex", "latex", "a LaTeX table with booktabs rules", True),
)

#: the statistics ``--format trec_eval`` can print (``--stat``): the result's columns (`trec_eval`)
TREC_STATS = ("oblivious", "expected", "min", "max", "std", "range", "bias")

#: the format a file's extension names: ``-o FILE`` without ``-f`` writes it, with a ``-f`` that
#: contradicts it is refused (an extension not listed names no format); a trailing ``.gz`` compresses
#: whatever the format (`file_format`, `encoded`)
SUFFIXES = {
    ".tsv": "tsv",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".md": "markdown",
    ".tex": "latex",
}


def file_format(path) -> tuple[str | None, bool]:
    """The format the file name ``path`` names by its extension (`SUFFIXES`; None where it names none)
    and whether it ends in ``.gz`` (the output is then gzip-compressed), the extension read under it.

    Examples
    --------
    >>> file_format("c.md"), file_format("o.tsv.gz"), file_format("o.gz"), file_format("o.TXT")
    (('markdown', False), ('tsv', True), (None, True), (None, False))
    """
    from pathlib import PurePath

    name = PurePath(str(path))
    gz = name.suffix.lower() == ".gz"
    if gz:
        name = PurePath(name.stem)
    return SUFFIXES.get(name.suffix.lower()), gz


def encoded(text, path) -> str | bytes:
    """What to write to ``path``: ``text`` (a str, or bytes-like pieces), gzip-compressed where
    ``path`` ends in ``.gz`` (mtime 0: the same input gives the same bytes), else as it is."""
    if path is None or not file_format(path)[1]:
        return text
    import gzip

    if isinstance(text, str):
        data = text.encode("utf-8")
    elif isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
    else:
        data = b"".join(bytes(piece) for piece in text)
    return gzip.compress(data, mtime=0)


_DECLARED = {
    name: (module, help, records, order)
    for order, (name, module, help, records) in enumerate(CATALOGUE)
}

#: the formats registered so far (their modules imported), by name
_REGISTERED: dict[str, Format] = {}

#: the names `grouped` gives this package, imported on first use (the terminal table needs none)
_GROUPED = ("ResultTable", "Group", "Block", "jsonable", "num", "num_column")


def register(
    fmt: Format | str,
    render: Callable[..., str] | None = None,
    records: Callable[..., str] | None = None,
) -> Format:
    """Register a format (a module's registration): ``register("name", render, records)`` for a format
    of `CATALOGUE` (its help and place from there), or a whole [`Format`][tierank.report.formats.Format]; a name given twice
    is an error."""
    if isinstance(fmt, str):
        if fmt not in _DECLARED:
            raise ValueError(f"output format {fmt!r} is not in CATALOGUE: give its Format")
        _, help, _, order = _DECLARED[fmt]
        fmt = Format(fmt, help, render, records, order=order)
    if fmt.name in _DECLARED:
        if (fmt.records is not None or fmt.render is None) != _DECLARED[fmt.name][2]:
            raise ValueError(
                f"output format {fmt.name!r}: its flat records disagree with CATALOGUE"
            )
        _load(
            fmt.name
        )  # its module registers it (in that module's import, this is that module: no-op)
    if fmt.name in _REGISTERED:
        raise ValueError(f"output format {fmt.name!r} registered twice")
    _REGISTERED[fmt.name] = fmt
    return fmt


def _load(name: str) -> Format | None:
    """The registered format ``name``, its module imported first when it is one of `CATALOGUE`."""
    if name not in _REGISTERED and name in _DECLARED:
        importlib.import_module(f"{__name__}.{_DECLARED[name][0]}")
    return _REGISTERED.get(name)


def _every() -> dict[str, Format]:
    """Every format, registered (each module imported), by ``order`` (the order of the ``--format`` choices)."""
    for name in _DECLARED:
        _load(name)
    return dict(sorted(_REGISTERED.items(), key=lambda item: item[1].order))


def __getattr__(name: str):
    if (
        name == "FORMATS"
    ):  # every format by name, in the order of the --format choices: imports every module
        return _every()
    if name in _GROUPED:
        from . import grouped

        value = getattr(grouped, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names(kind: str = "results") -> tuple[str, ...]:
    """The format names for ``kind``: ``"results"`` (``tierank eval``: every format), ``"records"``
    (the formats of flat records, and of MTEB's results: all but trec_eval's layout)."""
    others = [
        f
        for n, f in sorted(_REGISTERED.items(), key=lambda item: item[1].order)
        if n not in _DECLARED
    ]
    if kind == "results":
        return (*_DECLARED, *(f.name for f in others))
    if kind == "records":
        return (
            *(n for n, d in _DECLARED.items() if d[2]),
            *(f.name for f in others if f.records is not None or f.render is None),
        )
    raise ValueError(f"unknown kind of format names {kind!r}")


def help_text(kind: str = "results") -> str:
    """``name: help`` of every format of ``kind``, for the command line's help."""
    helps = {n: d[1] for n, d in _DECLARED.items()} | {n: f.help for n, f in _REGISTERED.items()}
    return "; ".join(f"{n}: {helps[n]}" for n in names(kind))


def _get(fmt: str, kind: str) -> Format:
    f = _load(fmt)
    if (
        f is None
        or fmt not in names(kind)
        or (kind == "results" and f.render is None)
        or (kind == "records" and f.records is None)
    ):
        raise TierankInputError(f"unknown format {fmt!r}; accepted: {', '.join(names(kind))}")
    return f


def render(table, fmt: str, per_query: bool = False, **options) -> str:
    """``table`` (a [`ResultTable`][tierank.report.formats.ResultTable], an [`EvalResult`][tierank.results.EvalResult] or ``{run name:
    EvalResult}``) in format ``fmt``; ``options`` go to the format (trec_eval's ``plan``, ``stat``,
    ``summary``, ``runid``)."""
    from .grouped import ResultTable

    if not isinstance(table, ResultTable):
        table = ResultTable.of(table)
    f = _get(fmt, "results")
    assert f.render is not None
    return f.render(table, per_query, **options)


def render_records(
    records: list[dict],
    fields: tuple[str, ...],
    fmt: str,
    document: dict | None = None,
    stream: list[dict] | None = None,
) -> str:
    """Flat records in format ``fmt``: the tables (tsv, csv, markdown, latex) show ``fields`` of each
    record; ``json`` writes ``document`` when given (the records otherwise); ``jsonl`` writes each
    record's ``fields``, or every record of ``stream`` whole when given (e.g. the runs and a summary)."""
    f = _get(fmt, "records")
    assert f.records is not None
    return f.records(records, fields, document, stream)
