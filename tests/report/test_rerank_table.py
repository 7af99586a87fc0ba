"""`tierank report rerank TABLE.json`: the table is read as strict JSON and its rows checked strictly
(issue 22, item 11): optional columns really optional, numbers finite, one error line and exit 2 for
anything else, never a traceback."""

from __future__ import annotations

import json
import subprocess

import pytest

pytest.importorskip("matplotlib")

ROW = {
    "variant": "fp32",
    "measure": "nDCG@10",
    "fp32": 0.5,
    "oblivious": 0.5,
    "expected": 0.5,
    "range": 0.0,
    "bias": 0.0,
    "min": 0.5,
    "max": 0.5,
}


def in_process(*args) -> subprocess.CompletedProcess:
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception  # a traceback: the test fails with it
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def _table(tmp_path, text: str):
    path = tmp_path / "table.json"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path, text: str) -> str:
    table = _table(tmp_path, text)
    p = in_process("report", "rerank", table, "-o", tmp_path / "r.html")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"tierank: error: {table}: not a table.json of `tierank rerank`: "
    )
    assert not (tmp_path / "r.html").exists()
    return lines[0].split("`tierank rerank`: ", 1)[1]


def test_rows_without_the_optional_range_are_reported(tmp_path):
    """A row without `range` passed the validator, then `r["range"]` raised KeyError."""
    rows = [
        {k: v for k, v in ROW.items() if k not in ("range", "bias", "fp32")},
        {**{k: v for k, v in ROW.items() if k != "range"}, "variant": "bf16", "min": 0.25},
    ]
    table = _table(tmp_path, json.dumps({"settings": {"model": "m"}, "rows": rows}))
    out = tmp_path / "r.html"
    p = in_process("report", "rerank", table, "-o", out)
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    assert "bf16" in html and "fp32" in html


ROWS = json.dumps([ROW])[1:-1]


@pytest.mark.parametrize(
    "text, reason",
    [
        (
            '{"settings": {}, "rows": [{"variant": "fp32", "measure": "RR", "oblivious": 0.5, "expected": 0.5, '
            '"min": 0.5, "max": ' + "9" * 400 + "}]}",
            f"not valid JSON: number {'9' * 60}…(400 chars) is beyond the range of a float (about 1.8e308)",
        ),
        (
            '{"settings": {}, "rows": [{"variant": "fp32", "measure": "RR", "oblivious": 0.5, "expected": 0.5, '
            '"min": 0.5, "max": ' + "9" * 5001 + "}]}",
            f"not valid JSON: number {'9' * 60}…(5,001 chars) is beyond the range of a float (about 1.8e308)",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"max": 0.5', '"max": NaN') + "]}",
            "not valid JSON: NaN is not a JSON number",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"max": 0.5', '"max": Infinity') + "]}",
            "not valid JSON: Infinity is not a JSON number",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"max": 0.5', '"max": -Infinity') + "]}",
            "not valid JSON: -Infinity is not a JSON number",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"max": 0.5', '"max": 1e999') + "]}",
            "not valid JSON: number 1e999 is beyond the range of a float (about 1.8e308)",
        ),
        (
            '{"settings": {}, "rows": ['
            + ROWS
            + "],"
            + '"x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}",
            "not valid JSON: nested too deeply",
        ),
        (
            '{"settings": {}, "rows": ['
            + ROWS.replace('"max": 0.5', '"max": 0.5, "max": 0.75')
            + "]}",
            "not valid JSON: key 'max' appears twice in one object",
        ),
        (
            '{"settings": {"model": "\\ud800"}, "rows": [' + ROWS + "]}",
            "not valid JSON: settings.model: a string holds a lone surrogate escape (\\ud800-\\udfff), which is not text",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"max": 0.5', '"max": true') + "]}",
            "row 1: 'max' is True, not a number",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS.replace('"variant": "fp32"', '"variant": 3') + "]}",
            "row 1: 'variant' is 3, not text",
        ),
        (
            '{"settings": {}, "rows": [' + ROWS + "]",
            "not valid JSON: Expecting ',' delimiter (line 1, column ",
        ),
    ],
    ids=[
        "400 digits",
        "5001 digits",
        "NaN",
        "Infinity",
        "-Infinity",
        "1e999",
        "deep",
        "duplicate key",
        "surrogate",
        "true",
        "variant a number",
        "truncated",
    ],
)
def test_malformed_tables_are_one_error_line(tmp_path, text, reason):
    """400 digits raised OverflowError, deep nesting RecursionError; NaN and Infinity were accepted."""
    assert _error(tmp_path, text).startswith(reason)


def test_nonfinite_values_in_memory_are_refused():
    from tierank.errors import TierankInputError
    from tierank.report.html import check_rerank_table

    with pytest.raises(TierankInputError, match=r"row 1: 'max' is inf, not a finite number"):
        check_rerank_table({"settings": {}, "rows": [{**ROW, "max": float("inf")}]}, "t.json")
    with pytest.raises(TierankInputError, match=r"row 1: 'min' is nan, not a finite number"):
        check_rerank_table({"settings": {}, "rows": [{**ROW, "min": float("nan")}]}, "t.json")
    with pytest.raises(
        TierankInputError, match=r"row 1: 'max' is 1000000000.*, not a finite number"
    ):
        check_rerank_table({"settings": {}, "rows": [{**ROW, "max": 10**400}]}, "t.json")
    # an optional column may be null (NaN in memory)
    assert check_rerank_table(
        {"settings": {}, "rows": [{**ROW, "bias": float("nan"), "std": None}]}, "t.json"
    )
