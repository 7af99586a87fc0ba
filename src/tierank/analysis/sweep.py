"""Precision sweep: evaluate one run with its scores re-expressed in each number format.

For each format (see `precision`): the tie statistics it creates and, per measure,
the oblivious value, the exact expectation, min, max, range, bias and std over tie orderings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TierankInputError
from ..evaluate import evaluate
from ..io.convert import to_qrels, to_run
from ..results import COLUMNS
from ..settings import EvalSettings
from .precision import DEFAULT_FORMATS, requantize_run

FIELDS = (
    "format",
    "measure",
    *COLUMNS,
    "tie_share",
    "tie_groups",
    "largest_group",
    "queries_with_ties",
)


@dataclass(frozen=True)
class Sweep:
    """One row per (format, measure), in the order asked for."""

    rows: list[dict]
    settings: dict

    def to_records(self) -> list[dict]:
        return [dict(r) for r in self.rows]


def sweep(
    qrels,
    run,
    measures,
    formats=DEFAULT_FORMATS,
    settings: EvalSettings | None = None,
    *,
    progress=None,
    **options: Any,
) -> Sweep:
    """Evaluate ``run`` once per score format, under ``settings`` (an `tierank.EvalSettings`) with
    ``options`` (its fields by name: ``tie_break``, ``rel``, ``complete``, ``candidates_only``, ...)
    applied over them, as [`tierank.evaluate`][tierank.evaluate] takes them.

    Examples
    --------
    >>> s = sweep({"q": {"a": 1}}, {"q": {"a": 0.30079, "b": 0.30078125}}, ["RR"], ["fp32", "bf16"])
    >>> [(r["format"], r["expected"], r["tie_share"]) for r in s.rows]
    [('fp32', 1.0, 0.0), ('bf16', 0.75, 1.0)]
    """
    formats = list(formats)
    if not formats:
        raise TierankInputError("sweep: no score format given; the sweep would be empty")
    settings = EvalSettings.of(settings, **options)
    q = to_qrels(qrels)
    r = to_run(run)
    rows = []
    for fmt in formats:
        res = evaluate(q, requantize_run(r, fmt), measures, settings)
        t = res.ties
        for rec in res.records(per_query=False):
            rows.append(
                {
                    "format": fmt,
                    **{k: rec[k] for k in FIELDS[1:9]},
                    "tie_share": t["share"],
                    "tie_groups": t["groups"],
                    "largest_group": t["largest"],
                    "queries_with_ties": t["queries_with_ties"],
                }
            )
        if progress is not None:
            progress(fmt)
    return Sweep(
        rows=rows,
        settings={
            "run": r.source,
            "qrels": q.source,
            "tie_break": str(settings.tie_break),
            "formats": list(formats),
            "measures": [str(m) for m in measures],
        },
    )
