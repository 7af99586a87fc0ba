"""A comparison's renderings: [`ComparisonReport`][tierank.report.comparison.ComparisonReport] holds a
[`Comparison`][tierank.analysis.compare.Comparison] (what [`tierank.compare`][tierank.analysis.compare.compare]
computes: ``systems``, ``pairs``, ``settings``, ...) and writes it in any records format of
[`tierank.report.formats`][tierank.report.formats] (`FORMATS`, the choices of ``tierank compare --format``
beside its terminal ``table``): ``json`` the whole comparison as one document
([`Comparison.to_dict`][tierank.analysis.compare.Comparison.to_dict]: ``systems[]``, ``pairs[]``, ...), every other
format the systems (the leaderboard's columns with ``leaderboard=True``) ranked by E[M], in the manner
of ranx's report.

Examples
--------
>>> import tierank
>>> qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
>>> runs = {"tied": {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 0.7, "d": 0.7}},
...         "exact": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9, "d": 0.1}}}
>>> report = ComparisonReport(tierank.compare(runs, qrels, "RR"))
>>> print(report.to_markdown(), end="")
| name | expected | min | max | oblivious | ci_low | ci_high | rank | rank_oblivious |
|:--|--:|--:|--:|--:|--:|--:|--:|--:|
| tied | 0.7500 | 0.5000 | 1.0000 | 0.5000 |  |  | 1 | 2 |
| exact | 0.7500 | 0.7500 | 0.7500 | 0.7500 |  |  | 1 | 1 |
>>> print(report.render("csv"), end="")  # doctest: +ELLIPSIS
name,expected,min,max,oblivious,ci_low,ci_high,rank,rank_oblivious
tied,0.75,0.5,1.0,0.5,,,1,2
...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.compare import Comparison
from .formats import names, render_records

__all__ = ["ComparisonReport", "FORMATS", "SYSTEM_FIELDS", "LEADERBOARD_FIELDS"]

#: the formats a comparison is written in (``tierank compare --format``): the records formats of the
#: catalogue ([`tierank.report.formats.names`][tierank.report.formats.names]), ``table`` the terminal tables
FORMATS = names("records")

#: the columns of the systems' table (``tierank compare --format markdown|latex|tsv|csv|jsonl``)
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


@dataclass(frozen=True)
class ComparisonReport:
    """A [`Comparison`][tierank.analysis.compare.Comparison] written as ``tierank compare --format``
    writes it (the comparison itself is left as it is: ``report.comparison``)."""

    comparison: Comparison

    @classmethod
    def of(cls, comparison: Comparison | ComparisonReport) -> ComparisonReport:
        """The report of ``comparison`` (itself if it is one)."""
        if isinstance(comparison, ComparisonReport):
            return comparison
        return cls(comparison)

    @property
    def leaderboard(self) -> bool:
        """Whether the comparison was made with ``leaderboard=True``."""
        return bool(self.comparison.settings.get("leaderboard", False))

    def system_records(self) -> list[dict[str, Any]]:
        """The systems' records (as in ``to_dict()``), ranked by E[M]."""
        systems = self.comparison.to_dict()["systems"]
        return sorted(systems, key=lambda r: (r["rank"] is None, r["rank"]))

    def render(self, fmt: str) -> str:
        """The comparison in the records format ``fmt`` (`FORMATS` but ``table``): ``json``, the whole
        comparison as one document; any other, the systems' table
        ([`system_records`][tierank.report.comparison.ComparisonReport.system_records], the leaderboard's
        columns with ``leaderboard``)."""
        fields = LEADERBOARD_FIELDS if self.leaderboard else SYSTEM_FIELDS
        document = self.comparison.to_dict() if fmt == "json" else None
        return render_records(self.system_records(), fields, fmt, document=document)

    def to_markdown(self) -> str:
        """The systems as a Markdown table (``tierank compare --format markdown``)."""
        return self.render("markdown")

    def to_latex(self) -> str:
        """The systems as a LaTeX ``tabular`` with booktabs rules (``tierank compare --format latex``)."""
        return self.render("latex")
