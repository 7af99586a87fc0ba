"""A comparison of systems with its renderings: [`ComparisonReport`][tierank.report.comparison.ComparisonReport] and [`compare`][tierank.report.comparison.compare]
(``tierank.compare``), in the manner of ranx's ``compare`` and its report.

The numbers are [`tierank.analysis.compare.compare`][tierank.analysis.compare.compare]'s (a
[`Comparison`][tierank.analysis.compare.Comparison]: ``systems``, ``pairs``, ``settings``, ...); the report
adds the text of ``tierank compare --format``: `ComparisonReport.to_dict` is the ``json``
document, [`to_markdown`][tierank.report.comparison.ComparisonReport.to_markdown] and [`to_latex`][tierank.report.comparison.ComparisonReport.to_latex] the systems (the
leaderboard's columns with ``leaderboard=True``) ranked by E[M].

Examples
--------
>>> qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
>>> runs = {"tied": {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 0.7, "d": 0.7}},
...         "exact": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9, "d": 0.1}}}
>>> report = compare(runs, qrels, "RR")
>>> print(report.to_markdown(), end="")
| name | expected | min | max | oblivious | ci_low | ci_high | rank | rank_oblivious |
|:--|--:|--:|--:|--:|--:|--:|--:|--:|
| tied | 0.7500 | 0.5000 | 1.0000 | 0.5000 |  |  | 1 | 2 |
| exact | 0.7500 | 0.7500 | 0.7500 | 0.7500 |  |  | 1 | 1 |
>>> sorted(report.to_dict())[:4], report.to_dict()["pairs"][0]["undecidable"]
(['alpha', 'band', 'band_summary', 'banded_systems'], True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from ..analysis.compare import CompareSettings, Comparison
from ..analysis.compare import compare as compare_systems
from ..measures.base import Measure
from ..settings import EvalSettings

__all__ = ["ComparisonReport", "compare", "SYSTEM_FIELDS", "LEADERBOARD_FIELDS"]

#: the columns of the systems' table (``tierank compare --format markdown|latex``)
SYSTEM_FIELDS = (
    "name",
    "expected",
    "min",
    "max",
    "oblivious",
    "ci_low",
    "ci_high",
    "rank",
    "rank_oblivious",
)
#: ... and of the leaderboard's (``--leaderboard``)
LEADERBOARD_FIELDS = SYSTEM_FIELDS + ("rank_low", "rank_high", "group")


class ComparisonReport(Comparison):
    """A [`Comparison`][tierank.analysis.compare.Comparison] that renders itself as ``tierank compare
    --format`` writes it (``to_dict()``: the ``json`` document, its ``systems[]`` and ``pairs[]``)."""

    @classmethod
    def of(cls, comparison: Comparison) -> ComparisonReport:
        """The report of ``comparison`` (the same values)."""
        if isinstance(comparison, cls):
            return comparison
        return cls(**{f.name: getattr(comparison, f.name) for f in fields(comparison)})

    @property
    def leaderboard(self) -> bool:
        """Whether the comparison was made with ``leaderboard=True``."""
        return bool(self.settings.get("leaderboard", False))

    def system_records(self) -> list[dict[str, Any]]:
        """The systems' records (as in `to_dict`), ranked by E[M]."""
        return sorted(self.to_dict()["systems"], key=lambda r: (r["rank"] is None, r["rank"]))

    def render(self, fmt: str) -> str:
        """The comparison in the records format ``fmt`` ([`tierank.report.formats`][tierank.report.formats]): ``json``, the
        whole comparison as one document; any other, the systems' table ([`system_records`][tierank.report.comparison.ComparisonReport.system_records], the
        leaderboard's columns with ``leaderboard``)."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"
        from .formats import render_records

        fields_ = LEADERBOARD_FIELDS if self.leaderboard else SYSTEM_FIELDS
        return render_records(self.system_records(), fields_, fmt)

    def to_markdown(self) -> str:
        """The systems as a Markdown table (``tierank compare --format markdown``)."""
        return self.render("markdown")

    def to_latex(self) -> str:
        """The systems as a LaTeX ``tabular`` with booktabs rules (``tierank compare --format latex``)."""
        return self.render("latex")


def compare(
    runs: Mapping,
    qrels: Any,
    measure: str | Measure,
    settings: EvalSettings | None = None,
    options: CompareSettings | None = None,
    **keywords: Any,
) -> ComparisonReport:
    """Compare systems on one measure, tie-aware, pair by pair: [`tierank.analysis.compare.compare`][tierank.analysis.compare.compare]
    (the same arguments: ``runs`` as ``{name: run}``, ``qrels``, one ``measure``, an
    [`tierank.EvalSettings`][tierank.EvalSettings], a [`CompareSettings`][tierank.analysis.compare.CompareSettings], or their
    fields by name), as a [`ComparisonReport`][tierank.report.comparison.ComparisonReport]."""
    return ComparisonReport.of(compare_systems(runs, qrels, measure, settings, options, **keywords))
