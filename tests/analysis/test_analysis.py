"""Run analysis: tie prevalence and defects, number formats, precision sweeps, rank bands."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import tierank
from helpers import run_cli
from tierank.analysis.banding import band_of_rank, band_run, band_starts
from tierank.analysis.precision import quantize, requantize_run
from tierank.analysis.prevalence import analyze, analyze_run
from tierank.analysis.sweep import sweep
from tierank.io import read_run

# q1: a tie of three (b, c, d); rank column contradicts scores at e/f; line of f sorted as text
# (-7.7e-05 after -1.37); q2: duplicate document x; rank order broken between y and z
DEFECTS = """q1 Q0 a 1 9.5 t
q1 Q0 b 2 5 t
q1 Q0 c 3 5 t
q1 Q0 d 4 5.0 t
q1 Q0 e 6 -1.37 t
q1 Q0 f 5 -7.7e-05 t
q2 Q0 x 1 3 t
q2 Q0 y 3 2 t
q2 Q0 z 2 1 t
q2 Q0 x 4 0.5 t
"""


@pytest.fixture
def defects(tmp_path):
    p = tmp_path / "defects.run"
    p.write_text(DEFECTS)
    return p


def test_prevalence_counts_every_planted_defect(defects):
    with pytest.raises(tierank.TierankInputError, match="appears twice"):
        read_run(defects)
    r = analyze_run(read_run(defects, duplicates="keep"), "defects")
    assert (r.queries, r.docs) == (2, 10)
    assert (r.tie_groups, r.docs_in_ties, r.docs_tied_with_predecessor) == (1, 3, 2)
    assert r.largest_groups == [{"query": "q1", "score": 5.0, "size": 3}]
    # sorted by score, f (-7.7e-05, rank 5) comes before e (-1.37, rank 6): consistent;
    # q2 sorted by score: x(1) y(3) z(2) x(4): z after y with a smaller rank
    assert r.contradictions == 1 and r.examples["contradictions"] == [{"query": "q2", "row": 9}]
    assert r.score_order_violations == 1
    assert r.examples["score_order_violations"][0] == {
        "query": "q1",
        "row": 6,
        "score": -7.7e-05,
        "previous_score": -1.37,
    }
    assert r.rank_order_violations == 2  # e (6) -> f (5), y (3) -> z (2)
    assert r.duplicates == 1 and r.examples["duplicates"][0]["docid"] == "x"


def test_set_summary_matches_paper_definitions(defects):
    clean = tierank.to_run({"q": {"a": 3.0, "b": 2.0}})
    rep = analyze({"defects": read_run(defects, duplicates="keep"), "clean": clean})
    s = rep.summary
    assert s["systems"] == 2 and s["system_topics"] == 3 and s["docs"] == 12
    assert s["tied_scores"]["systems_pct"] == 50.0
    assert s["tied_scores"]["system_topics_pct"] == pytest.approx(100 / 3)
    assert s["tied_scores"]["docs_pct"] == pytest.approx(100 * 2 / 12)
    assert s["rank_score_contradictions"]["docs_pct"] == pytest.approx(100 / 12)


@pytest.mark.parametrize(
    "fmt, dtype",
    [
        ("fp16", np.float16),
        ("bf16", ml_dtypes.bfloat16),
        ("fp8_e4m3", ml_dtypes.float8_e4m3fn),
        ("fp8_e5m2", ml_dtypes.float8_e5m2),
    ],
)
def test_float_formats_are_exact_casts(fmt, dtype):
    rng = np.random.default_rng(0)
    s = rng.normal(size=1000) * 10
    q = quantize(s, fmt)
    finite = np.isfinite(s.astype(dtype).astype(np.float64))
    np.testing.assert_array_equal(q[finite], s.astype(dtype).astype(np.float64)[finite])
    assert np.isfinite(q).all()
    assert np.all(np.diff(q[np.argsort(s)]) >= 0)  # order-preserving (monotone)


def test_int8_is_per_query_and_monotone():
    s = np.array([0.0, 0.5, 1.0, 100.0, 150.0, 200.0])
    qi = np.array([0, 0, 0, 1, 1, 1])
    q = quantize(s, "int8", qi)
    assert q.tolist() == [-128.0, 0.0, 127.0, -128.0, 0.0, 127.0]
    assert quantize(np.array([3.0, 3.0]), "int8", np.array([0, 0])).tolist() == [-128.0, -128.0]


def test_significant_digits_and_bad_formats():
    assert quantize(np.array([0.123456, -98765.0, 0.0]), "sig2").tolist() == [0.12, -99000.0, 0.0]
    for bad in ("fp7", "sig0", "bandx", "band1"):
        with pytest.raises(tierank.TierankInputError):
            requantize_run(tierank.to_run({"q": {"a": 1.0}}), bad)


def test_bands():
    assert band_starts(2.0, 7).tolist() == [1, 2, 4, 8]
    assert band_of_rank(np.arange(1, 9), 2.0).tolist() == [1, 2, 2, 3, 3, 3, 3, 4]
    run = tierank.to_run({"q": {f"d{i}": 10.0 - i for i in range(7)}})
    b = band_run(run, 2.0)
    assert sorted(set(b.score.tolist()), reverse=True) == [1.0, 0.5, 1 / 3]
    res = tierank.evaluate({"q": {"d2": 1}}, b, ["RR"]).aggregate().iloc[0]
    assert res["expected"] == pytest.approx((1 / 2 + 1 / 3) / 2)  # d2 shares band [2, 3]


def test_sweep_rows_equal_direct_evaluation():
    rng = np.random.default_rng(1)
    run = {f"q{q}": {f"d{i}": float(x) for i, x in enumerate(rng.random(40))} for q in range(5)}
    qrels = {f"q{q}": {f"d{i}": int(rng.integers(0, 3)) for i in range(0, 40, 4)} for q in range(5)}
    s = sweep(qrels, run, ["nDCG@10", "RR"], ["fp32", "fp8_e5m2", "sig1"])
    assert [r["format"] for r in s.rows] == ["fp32", "fp32", "fp8_e5m2", "fp8_e5m2", "sig1", "sig1"]
    for r in s.rows:
        direct = tierank.evaluate(
            qrels, requantize_run(tierank.to_run(run), r["format"]), [r["measure"]]
        )
        row = direct.aggregate().iloc[0]
        assert r["expected"] == pytest.approx(row["expected"]) and r["range"] == pytest.approx(
            row["range"]
        )
        assert r["tie_share"] == pytest.approx(direct.ties["share"])
    coarse = [r for r in s.rows if r["format"] == "fp8_e5m2"]
    assert coarse[0]["tie_share"] > 0.5


cli = run_cli


def test_ties_command(defects):
    out = cli("ties", defects, "--format", "json").stdout
    doc = json.loads(out)
    assert doc["runs"][0]["duplicates"] == 1 and doc["summary"]["systems"] == 1
    lines = cli("ties", defects, "--format", "jsonl").stdout.splitlines()
    assert json.loads(lines[-1])["name"] == "all"
    table = cli("ties", defects).stdout
    assert "rank/score contradictions" in table and "3 in q1" in table


def test_sweep_command_on_askubuntu_qrels_first(tmp_path, real_data):
    run, qrels = real_data / "askubuntu/test.bm25.run", real_data / "askubuntu/test.qrels"
    out = tmp_path / "s.jsonl"
    cli(
        "sweep",
        qrels,
        run,
        "-m",
        "nDCG@10",
        "--formats",
        "fp32,bf16,fp8_e5m2",
        "--format",
        "jsonl",
        "-o",
        out,
    )
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    shares = {r["format"]: r["tie_share"] for r in recs}
    assert shares["fp32"] < shares["bf16"] < shares["fp8_e5m2"]
    rng = {r["format"]: r["range"] for r in recs}
    assert rng["fp32"] < rng["bf16"] < rng["fp8_e5m2"]
    swapped = cli("sweep", run, qrels, "-m", "nDCG@10", check=False)
    assert swapped.returncode == 2 and swapped.stderr.count("\n") == 1
    assert "did you swap QRELS and RUN?" in swapped.stderr
    bad = cli("sweep", run, run, check=False)
    assert bad.returncode == 2 and "looks like a run" in bad.stderr


def test_compare_command_flags_a_tie_flip(tmp_path):
    # A ties its relevant document z with four others: trec_eval's docno-descending order puts z first
    a, b, q = tmp_path / "A.run", tmp_path / "B.run", tmp_path / "qrels"
    a.write_text("".join(f"q{i} Q0 {d} 1 1.0 A\n" for i in range(3) for d in "vwxyz"))
    b.write_text(
        "".join(f"q{i} Q0 {d} {r} {5 - r} B\n" for i in range(3) for r, d in enumerate("vzwxy", 1))
    )
    q.write_text("".join(f"q{i} 0 z 1\n" for i in range(3)))
    doc = json.loads(cli("compare", a, b, "--qrels", q, "-m", "RR", "--format", "json").stdout)
    names = [s["name"] for s in doc["systems"]]
    assert names == ["B.run", "A.run"]  # by expected: B 1/2 > A (1 + 1/2 + ... + 1/5) / 5
    pair = doc["pairs"][0]
    assert pair["order_flip"] and pair["undecidable"]
    assert "FLIP" in cli("compare", a, b, "--qrels", q, "-m", "RR").stdout
    bad = cli("compare", a, "--qrels", q, check=False)
    assert (bad.returncode, bad.stderr) == (
        2,
        "tierank: error: compare: need at least two systems to compare, got 1\n",
    )


def test_bands_command_prints_table2_next_to_ours():
    out = cli("bands").stdout
    assert "0.0417 [0.0417]" in out and "0.1016 [0.1016]" in out
    tsv = cli("bands", "--rho", "2", "--p", "0.5", "--format", "tsv").stdout.splitlines()
    assert tsv[0].split("\t") == ["rho", "RR", "RBP(p=0.5)"]
    bad = cli("bands", "--rho", "x", check=False)
    assert (bad.returncode, bad.stderr) == (
        2,
        "tierank: error: --rho and --p take comma-separated numbers, got 'x' and '0.5,0.85'\n",
    )
    bad = cli("bands", "--rho", "1.4,1", check=False)
    assert (bad.returncode, bad.stderr) == (
        2,
        "tierank: error: band parameter rho must be a finite number > 1, got 1.0\n",
    )
