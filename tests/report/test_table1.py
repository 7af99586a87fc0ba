"""Table 1's columns (`tierank.report.table1`) are the result's statistic columns, in Table 1's order."""

from __future__ import annotations

from tierank.report import table1
from tierank.results import COLUMNS


def test_table1_holds_every_statistic_column_once_and_nothing_else():
    assert sorted(table1.STATS) == sorted(COLUMNS) and len(set(table1.STATS)) == len(COLUMNS)
    assert set(table1.NUMBERS) <= set(COLUMNS)
    assert table1.FIELDS[3 : 3 + len(COLUMNS)] == table1.STATS
