"""``tierank eval``'s records with columns added (``--labels``, ``--panel``, ``--ppi``): one writer for
every format but trec_eval's, whose layout has no place for them."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TierankInputError
from .common import emit, print_tables


@dataclass(frozen=True)
class Written:
    """Where and how eval's records are written: ``fmt``, ``per_query``, ``output`` (None: stdout),
    and the input files ``protect`` that ``output`` must not overwrite."""

    fmt: str
    per_query: bool
    output: Path | None
    protect: tuple


def refuse_trec_eval(fmt: str, option: str, what: str) -> None:
    """Refuse ``--format trec_eval`` for ``option``, which adds ``what``."""
    if fmt == "trec_eval":
        raise TierankInputError(
            f"{option} writes its {what} in the other formats; trec_eval's layout has no place for "
            "them"
        )


def with_added(
    results: Mapping[str, Any], to: Written, added: Callable[[str, dict], Mapping[str, Any]]
) -> list[dict]:
    """Every run's records (``run`` first, the evaluation's keys as they are; per query where ``to``
    says so) with the keys ``added(run, record)`` gives."""
    return [
        {"run": name, **rec, **added(name, rec)}
        for name, res in results.items()
        for rec in res.records(per_query=to.per_query)
    ]


def write_added(
    records: list[dict],
    fields: tuple[str, ...],
    results: Mapping[str, Any],
    to: Written,
    *,
    tables: Callable[[], list],
    about: Mapping[str, Any],
    more: Mapping[str, Any] | None = None,
) -> None:
    """Write ``records`` as ``to`` says: ``table``, the rich ``tables()``; ``json``, a document of
    ``about`` (what the added keys mean), the records and ``more``; the other formats, the records
    with the evaluation's columns and then ``fields``."""
    from ..report.formats import render_records

    fmt, output, protect = to.fmt, to.output, to.protect
    first = next(iter(results.values()))
    columns = ("run", "query", "measure", *first.columns, *fields)
    if fmt == "table":
        print_tables(tables(), output, protect)
    elif fmt == "json":
        from ..report.formats.grouped import jsonable

        doc = {**about, "records": records, **(more or {})}
        emit(json.dumps(jsonable(doc), indent=2, allow_nan=False) + "\n", output, protect)
    elif fmt == "jsonl":
        emit(render_records(records, columns, "jsonl", stream=records), output, protect)
    else:
        emit(render_records(records, columns, fmt), output, protect)


__all__ = ["Written", "refuse_trec_eval", "with_added", "write_added"]
