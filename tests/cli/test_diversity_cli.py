"""`tierank diversity QRELS RUN -m ...`: intent-aware measures on subtopic qrels from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import invoke
from tierank.evaluate import evaluate_diversity

DATA = Path(__file__).resolve().parents[1] / "data" / "diversity"


def test_prints_the_library_values_per_query_and_averaged():
    p = invoke(
        "diversity",
        DATA / "qrels.txt",
        DATA / "run-ties.txt",
        "-m",
        "alpha_nDCG@5",
        "-m",
        "MAP_IA",
        "-q",
    )
    lines = [line.split("\t") for line in p.stdout.splitlines()]
    assert lines[0] == ["measure", "query", "oblivious", "expected", "min", "max", "std", "method"]
    assert [(r[0], r[1]) for r in lines[1:]] == [
        ("alpha_nDCG@5", "101"),
        ("alpha_nDCG@5", "102"),
        ("alpha_nDCG@5", "all"),
        ("AP_IA", "101"),
        ("AP_IA", "102"),
        ("AP_IA", "all"),
    ]
    a = evaluate_diversity(DATA / "qrels.txt", DATA / "run-ties.txt", ["alpha_nDCG@5"]).aggregate(
        "alpha_nDCG@5"
    )
    assert lines[3][2:] == [f"{x:.4f}" for x in (a.oblivious, a.expected, a.min, a.max, a.std)] + [
        "exact"
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        (
            "101 1 d1\n",
            "bad.qrels: its first line has 3 fields; the intent-aware measures need subtopic "
            "qrels (qid subtopic docid grade)",
        ),
        (
            "101 1 d1 1\n101 1 d2\n",
            "bad.qrels:2: expected 4 columns (qid subtopic docid grade), found 3",
        ),
        ("101 1 d1 1\n101 1 d2 x\n", "bad.qrels:2: relevance grade 'x' is not a finite number"),
    ],
)
def test_bad_subtopic_qrels_exit_2_naming_file_line_and_reason(tmp_path, content, message):
    (tmp_path / "bad.qrels").write_text(content)
    p = invoke(
        "diversity", "bad.qrels", DATA / "run.txt", "-m", "P_IA@5", check=False, cwd=tmp_path
    )
    assert p.returncode == 2
    assert p.stderr.strip() == f"tierank: error: {message}"


def test_unknown_measure_exits_2():
    p = invoke("diversity", DATA / "qrels.txt", DATA / "run.txt", "-m", "nDCG@5", check=False)
    assert p.returncode == 2 and "unknown intent-aware measure" in p.stderr
