"""`tierank judges` and `tierank eval --ppi` on the shipped LLMJudge sample: numbers against
scikit-learn, krippendorff, scipy and ppi-python on the files read independently; errors located."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from helpers import invoke
from tierank.examples import path as example

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")

D = example("llmjudge-mini")
HUMAN = D / "human.qrels.gz"
JUDGES = sorted((D / "judges").glob("*.qrels.gz"))


def _grades(path) -> dict[tuple[str, str], float]:
    out = {}
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        q, _, d, g = line.split()
        out[(q, d)] = float(g)
    return out


def _clipped(path) -> tuple[list[float], list[float]]:
    h, j = _grades(HUMAN), _grades(path)
    keys = sorted(h)
    return [h[k] for k in keys], [min(j[k], 3.0) for k in keys]


def test_json_records_equal_sklearn_and_krippendorff_for_every_judge():
    r = invoke("judges", HUMAN, *JUDGES, "--out-of-scale", "clip", "-f", "json", "--bootstrap", "0")
    doc = json.loads(r.stdout)
    assert [j["judge"] for j in doc["judges"]] == [p.name.removesuffix(".qrels.gz") for p in JUDGES]
    for rec, path in zip(doc["judges"], JUDGES):
        ref, grades = _clipped(path)
        assert rec["n_pairs"] == len(ref) == 403
        assert rec["cohen_kappa"] == pytest.approx(
            sklearn_metrics.cohen_kappa_score(ref, grades), abs=1e-12
        )
        assert rec["cohen_kappa_quadratic"] == pytest.approx(
            sklearn_metrics.cohen_kappa_score(ref, grades, weights="quadratic"), abs=1e-12
        )
        assert rec["krippendorff_alpha_ordinal"] == pytest.approx(
            krippendorff.alpha(np.vstack([ref, grades]), level_of_measurement="ordinal"), abs=1e-12
        )
        assert np.array(rec["confusion"]["counts"]).sum() == 403
    assert "out of scale" not in r.stderr and "clipped to 0..3" in r.stderr


def test_out_of_scale_grades_are_one_located_line_each_and_exit_2():
    r = invoke("judges", HUMAN, *JUDGES, check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 3
    assert all(ln.startswith("tierank: error: ") and ".qrels.gz:" in ln for ln in lines)
    assert (
        sum("grade 5 " in ln for ln in lines) == 2 and sum("grade 10 " in ln for ln in lines) == 1
    )
    assert "Traceback" not in r.stderr


def test_the_judge_column_file_gives_the_same_records_as_the_files_a_judge():
    a = invoke(
        "judges", HUMAN, *JUDGES, "--out-of-scale", "drop", "-f", "jsonl", "--bootstrap", "50"
    )
    b = invoke(
        "judges",
        HUMAN,
        D / "judges.qrels.gz",
        "--judge-column",
        "--out-of-scale",
        "drop",
        "-f",
        "jsonl",
        "--bootstrap",
        "50",
    )
    ra = sorted((json.loads(x) for x in a.stdout.splitlines()), key=lambda r: r["judge"])
    rb = sorted((json.loads(x) for x in b.stdout.splitlines()), key=lambda r: r["judge"])
    assert ra == rb
    assert {r["n_pairs"] for r in ra} == {401, 402, 403}  # 2 and 1 pairs dropped


def test_tsv_holds_the_documented_fields_and_per_query_rows():
    r = invoke("judges", HUMAN, JUDGES[0], "-f", "tsv", "-q", "--bootstrap", "0")
    rows = [ln.split("\t") for ln in r.stdout.strip().splitlines()]
    head = rows[0]
    for f in (
        "judge",
        "n_pairs",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "krippendorff_alpha_ordinal",
    ):
        assert f in head
    assert len(rows) == 1 + 1 + 25  # the pooled record and one per query


def _runs(tmp_path):
    """Three rankers that score each pair by an LLM judge's grade (ties kept)."""
    out = []
    for p in JUDGES[:4]:
        name = tmp_path / f"{p.name.removesuffix('.qrels.gz')}.run"
        name.write_text(
            "".join(f"{q} Q0 {d} 0 {min(g, 3)} x\n" for (q, d), g in sorted(_grades(p).items()))
        )
        out.append(name)
    return out


def test_runs_orderings_equal_scipy_on_the_systems_means(tmp_path):
    from scipy.stats import kendalltau

    import tierank

    runs = _runs(tmp_path)
    r = invoke(
        "judges",
        HUMAN,
        JUDGES[1],
        "--out-of-scale",
        "clip",
        "-f",
        "json",
        "--bootstrap",
        "0",
        *[x for run in runs for x in ("--runs", run)],
        "-m",
        "P@5",
    )
    doc = json.loads(r.stdout)
    (rec,) = doc["orderings"]
    judge = tmp_path / "judge.qrels"
    judge.write_text(
        "".join(f"{q} 0 {d} {min(g, 3)}\n" for (q, d), g in _grades(JUDGES[1]).items())
    )
    ref_means = [
        tierank.evaluate(str(HUMAN), str(run), ["P@5"]).aggregate()["expected"][0] for run in runs
    ]
    jud_means = [
        tierank.evaluate(str(judge), str(run), ["P@5"]).aggregate()["expected"][0] for run in runs
    ]
    assert rec["kendall_tau_b"] == pytest.approx(
        kendalltau(ref_means, jud_means).statistic, abs=1e-12
    )
    rank = lambda v: np.argsort(np.argsort(-np.array(v), kind="stable"), kind="stable")  # noqa: E731
    assert rec["largest_rank_change"] == int(np.abs(rank(ref_means) - rank(jud_means)).max())
    assert rec["systems"] == 4
    # each system's mean under the reference and under the judge
    got = {(m["judge"], m["run"]): m["mean"] for m in doc["systems"]}
    names = [run.name for run in runs]
    assert [got[("reference", n)] for n in names] == pytest.approx(ref_means, abs=1e-12)
    assert [got[("RMITIR-llama70B", n)] for n in names] == pytest.approx(jud_means, abs=1e-12)


def test_eval_ppi_aggregate_records_equal_ppi_python_on_the_per_query_values(tmp_path):
    ppi_py = pytest.importorskip("ppi_py")
    runs = _runs(tmp_path)[:1]
    machine = tmp_path / "machine.qrels"
    machine.write_text(
        "".join(f"{q} 0 {d} {min(g, 3)}\n" for (q, d), g in _grades(JUDGES[3]).items())
    )
    some = sorted({q for q, _ in _grades(HUMAN)})[:12]
    human = tmp_path / "human.qrels"
    human.write_text(
        "".join(f"{q} 0 {d} {g}\n" for (q, d), g in _grades(HUMAN).items() if q in some)
    )
    r = invoke("eval", machine, runs[0], "-m", "nDCG@10", "--ppi", human, "-f", "jsonl")
    (agg,) = [json.loads(x) for x in r.stdout.splitlines() if json.loads(x)["query"] == "all"]
    per = {}
    for qrels in (machine, human):
        out = invoke("eval", qrels, runs[0], "-m", "nDCG@10", "-f", "jsonl").stdout
        per[qrels] = {
            rec["query"]: rec["expected"]
            for rec in map(json.loads, out.splitlines())
            if rec["query"] != "all"
        }
    lab = sorted(per[human])
    y = np.array([per[human][q] for q in lab])
    yhat = np.array([per[machine][q] for q in lab])
    yu = np.array([per[machine][q] for q in sorted(set(per[machine]) - set(lab))])
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05, lam=1)
    assert agg["ppi_mean"] == pytest.approx(
        float(ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=1)[0]), abs=1e-10
    )
    assert (agg["ppi_ci_low"], agg["ppi_ci_high"]) == pytest.approx(
        (float(lo[0]), float(hi[0])), abs=1e-10
    )
    lo2, hi2 = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.05)
    assert (agg["ppi_pp_ci_low"], agg["ppi_pp_ci_high"]) == pytest.approx(
        (float(lo2[0]), float(hi2[0])), abs=1e-10
    )
    assert (agg["ppi_n_labeled"], agg["ppi_n_unlabeled"]) == (12, 13)
    assert "fewer than 30" in r.stderr


def test_eval_ppi_refuses_too_few_human_queries_with_the_reason(tmp_path):
    run = _runs(tmp_path)[0]
    human = tmp_path / "h.qrels"
    human.write_text(
        "".join(f"{q} 0 {d} {g}\n" for (q, d), g in _grades(HUMAN).items() if q in ("q0", "q1"))
    )
    r = invoke("eval", JUDGES[0], run, "--ppi", human, check=False)
    assert r.returncode == 2
    assert (
        "only 2 queries have both human and machine labels; PPI's normal interval needs at least 10"
        in r.stderr
    )


def test_eval_reads_float_grades_as_floats_and_says_so(tmp_path):
    qrels = tmp_path / "f.qrels"
    qrels.write_text("q1 0 a 0.5\nq1 0 b 1.7\nq1 0 c 0\n")
    run = tmp_path / "f.run"
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\n")
    r = invoke("eval", qrels, run, "-m", "P@1", "-m", "P@2", "-m", "nDCG@2", "-f", "jsonl")
    agg = {x["measure"]: x["expected"] for x in map(json.loads, r.stdout.splitlines())}
    # 0.5 is below rel=1 (not truncated to 0 and not rounded to 1), 1.7 above it
    assert (agg["P@1"], agg["P@2"]) == (0.0, 0.5)
    # the gains are the float grades themselves (trec_eval's linear gain, log2 discount)
    ideal = 1.7 + 0.5 / np.log2(3)
    assert agg["nDCG@2"] == pytest.approx((0.5 + 1.7 / np.log2(3)) / ideal, abs=1e-12)
    assert "2 grades not a whole number, read as floats" in r.stderr
