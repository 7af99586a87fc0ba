"""The command line and its output contract, run in this process (``helpers.invoke``); the exit status
of bad input is also checked on a real process (``helpers.run_cli``)."""

from __future__ import annotations

import csv
import json

import pytest

import tierank
from helpers import invoke, run_cli

EXAMPLE = tierank.__file__.rsplit("/", 1)[0] + "/examples/"
QRELS, RUN = EXAMPLE + "figure1.qrels", EXAMPLE + "figure1.run"
KEYS = {"query", "measure", "oblivious", "expected", "min", "max", "range", "bias", "std"}


cli = invoke


def test_default_table_shows_measures_and_tie_summary():
    out = " ".join(cli("eval", QRELS, RUN, "-m", "R@3").stdout.split())
    assert (
        "R@3" in out
        and "0.7778" in out
        and "3 documents in tie groups (60.0%)" in out
        and "1 query, 5 documents" in out
        and "largest group 3" in out
    )


def test_jsonl_contract():
    lines = cli(
        "eval", QRELS, RUN, "-m", "R@3", "-m", "AP", "--format", "jsonl"
    ).stdout.splitlines()
    recs = [json.loads(x) for x in lines]
    assert all(KEYS <= set(r) for r in recs)
    assert [(r["query"], r["measure"]) for r in recs] == [
        ("q1", "R@3"),
        ("q1", "AP"),
        ("all", "R@3"),
        ("all", "AP"),
    ]
    r3 = recs[2]
    assert r3["expected"] == pytest.approx(7 / 9) and r3["range"] == pytest.approx(1 / 3)
    # AP over the orderings of {d2, d3, d4}: (1 + 2/3 + 3/4)/3, (1 + 1 + 3/4)/3, 1, equally likely
    ap = [(1 + 2 / 3 + 3 / 4) / 3, (1 + 1 + 3 / 4) / 3, 1.0]
    mean = sum(ap) / 3
    assert recs[3]["std"] == pytest.approx((sum((x - mean) ** 2 for x in ap) / 3) ** 0.5)


@pytest.mark.parametrize("fmt, sep", [("tsv", "\t"), ("csv", ",")])
def test_delimited(fmt, sep, tmp_path):
    out = tmp_path / f"o.{fmt}"
    cli("eval", QRELS, RUN, "-m", "P@2", "--per-query", "--format", fmt, "-o", str(out))
    rows = list(csv.reader(out.open(), delimiter=sep))
    assert rows[0] == [
        "query",
        "measure",
        "oblivious",
        "expected",
        "min",
        "max",
        "range",
        "bias",
        "std",
        "method",
        "se",
    ]
    assert [r[0] for r in rows[1:]] == ["q1", "all"]
    assert float(rows[2][3]) == pytest.approx(5 / 6)
    assert [r[-2:] for r in rows[1:]] == [["exact", ""], ["exact", ""]]


def test_json_document():
    doc = json.loads(
        cli("eval", QRELS, RUN, "-m", "RR", "--format", "json", "--tie-break", "random:3").stdout
    )
    assert doc["settings"]["tie_break"] == "random:3" and doc["ties"]["largest"] == 3
    assert doc["aggregate"][0]["measure"] == "RR" and "per_query" not in doc


def test_errors_exit_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 nan x\n")
    p = run_cli("eval", QRELS, str(bad), check=False)  # the exit status of the real process
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{bad}:1: score 'nan' is not finite" in p.stderr
    p = cli("eval", QRELS, RUN, "-m", "P@0", "-m", "XYZ", check=False)
    assert (
        p.returncode == 2 and p.stderr.count("tierank: error:") == 2 and "Traceback" not in p.stderr
    )
    p = cli("eval", QRELS, str(tmp_path / "missing.run"), check=False)
    assert p.returncode == 2 and "no such file" in p.stderr
    p = cli("eval", QRELS, RUN, "--tie-break", "sideways", check=False)
    assert p.returncode == 2 and "unknown tie-break policy" in p.stderr


def test_output_never_overwrites_an_input(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(open(RUN).read())
    before = run.read_text()
    p = cli("eval", QRELS, str(run), "-o", str(run), "--format", "tsv", check=False)
    assert p.returncode == 2 and "refusing to overwrite an input" in p.stderr
    assert run.read_text() == before


def test_output_is_atomic_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "res.jsonl"
    out.write_text("old\n")
    cli("eval", QRELS, RUN, "-m", "P@1", "--format", "jsonl", "-o", str(out))
    assert out.read_text().startswith('{"query"') and sorted(
        p.name for p in tmp_path.iterdir()
    ) == ["res.jsonl"]


def test_measures_and_example_commands():
    assert "nDCG" in cli("measures").stdout and "RBP" in cli("measures").stdout
    assert cli("example", "run").stdout.strip().endswith("figure1.run")


def test_unjudged_bounds_and_refusal(tmp_path):
    qrels = tmp_path / "q"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    run = tmp_path / "r"
    run.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 x 2 1.0 t\nq1 Q0 b 3 0.5 t\nq1 Q0 y 4 0.5 t\n")
    recs = [
        json.loads(x)
        for x in cli(
            "eval",
            str(qrels),
            str(run),
            "-m",
            "P@2",
            "-m",
            "RBP(p=0.5)",
            "--unjudged",
            "bounds",
            "--format",
            "jsonl",
        ).stdout.splitlines()
    ]
    agg = {r["measure"]: r for r in recs if r["query"] == "all"}
    assert KEYS <= set(agg["P@2"]) and agg["P@2"]["lower"] == 0.5 and agg["P@2"]["upper"] == 1.0
    assert agg["RBP(p=0.5)"]["residual"] == pytest.approx(0.6875) and agg["P@2"]["residual"] is None
    table = " ".join(cli("eval", str(qrels), str(run), "-m", "P@2").stdout.split())
    assert "Judged@10" in table and "50.0% of the top 10 is unjudged" in table
    p = cli(
        "eval",
        str(qrels),
        str(run),
        "-m",
        "AP",
        "-m",
        "nDCG@5",
        "--unjudged",
        "bounds",
        check=False,
    )
    assert (
        p.returncode == 2 and p.stderr.count("no valid bound") == 2 and "Traceback" not in p.stderr
    )
    cond = json.loads(
        cli("eval", str(qrels), str(run), "-m", "P@1", "--condensed", "--format", "json").stdout
    )
    assert cond["settings"]["unjudged"] == "condensed" and cond["aggregate"][0]["expected"] == 1.0


@pytest.mark.parametrize("target", ["file", "-"])
def test_table_written_with_output_is_the_plain_table(target, tmp_path):
    """`--format table -o FILE` used to write an empty file (the recording console was captured)."""
    out = tmp_path / "table.txt"
    p = cli("eval", QRELS, RUN, "-m", "R@3", "-o", out if target == "file" else "-")
    text = out.read_text() if target == "file" else p.stdout
    lines = text.splitlines()
    assert lines[0].strip() == "tierank eval"
    assert (
        "│ R@3     │    1.0000 │   0.7778 │ 0.6667 │ 1.0000 │ 0.3333 │ 0.2222 │ 0.1571 │" in lines
    )
    assert "\x1b" not in text and "1 query, 5 documents. Ties: 1 tie group" in text


def test_ties_table_to_a_file(tmp_path):
    out = tmp_path / "ties.txt"
    cli("ties", RUN, "-o", out)
    text = " ".join(out.read_text().split())
    assert "tied scores │ 100.0 │ 100.0 │ 40.00" in text and "figure1.run │ 5 │ 1/1 │ 40.00" in text
