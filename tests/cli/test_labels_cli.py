"""``tierank eval QRELS RUN --labels DISTRIBUTIONS`` on the shipped llmjudge-mini sample."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from helpers import invoke
from tierank.analysis.labels import evaluate_labels
from tierank.examples import path as example

D = example("llmjudge-mini")
HUMAN = D / "human.qrels.gz"
LABELS = D / "labels.txt.gz"
KEPT = ("query", "measure", "oblivious", "expected", "min", "max", "range", "bias", "std")
ADDED = ("label_expected", "var_tie", "var_label", "label_std", "plugin", "label_se")


@pytest.fixture
def run(tmp_path):
    lines = (
        gzip.decompress((D / "judges" / "Olz-gpt4o.qrels.gz").read_bytes()).decode().splitlines()
    )
    path = tmp_path / "olz.run"
    path.write_text("".join(f"{q} Q0 {d} 0 {g} olz\n" for q, _, d, g in map(str.split, lines)))
    return path


def test_jsonl_keeps_the_evaluation_keys_and_adds_the_label_statistics(run):
    r = invoke(
        "eval", HUMAN, run, "-m", "P@5", "-m", "nDCG@10", "-q", "-f", "jsonl", "--labels", LABELS
    )
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    plain = [
        json.loads(x)
        for x in invoke(
            "eval", HUMAN, run, "-m", "P@5", "-m", "nDCG@10", "-q", "-f", "jsonl"
        ).stdout.splitlines()
    ]
    assert len(recs) == len(plain) == 2 * 26
    for a, b in zip(recs, plain, strict=True):
        assert {k: a[k] for k in KEPT} == {k: b[k] for k in KEPT}
        assert set(ADDED) <= set(a)
    want = evaluate_labels(LABELS, run, ["P@5", "nDCG@10"], samples=1000, seed=0)
    for rec in recs:
        s = want[rec["measure"]]
        if rec["query"] == "all":
            assert rec["label_expected"] == pytest.approx(s.aggregate["expected"], abs=1e-12)
            assert rec["var_label"] == pytest.approx(s.aggregate["var_label"], abs=1e-12)
        else:
            i = want.qids.index(rec["query"])
            assert rec["var_tie"] == pytest.approx(s.var_tie[i], abs=1e-12)
            assert rec["plugin"] == pytest.approx(s.plugin[i], abs=1e-12)
        assert rec["label_method"] == ("exact" if rec["measure"] == "P@5" else "sampled")


def test_bad_distributions_are_one_located_line_and_exit_2(tmp_path, run):
    bad = tmp_path / "bad.txt"
    bad.write_text("q0 0 p1 0.5 0.5\nq0 0 p2 0.5 0.25\n")
    r = invoke("eval", HUMAN, run, "--labels", bad, check=False)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"tierank: error: {bad}:2: query 'q0' document 'p2': probabilities sum to 0.75, not 1 (within 1e-06)"
    ]


def test_trec_eval_layout_is_refused(run):
    r = invoke("eval", HUMAN, run, "--labels", LABELS, "-f", "trec_eval", check=False)
    assert r.returncode == 2 and "--labels" in r.stderr


def test_distributions_of_other_queries_than_qrels_are_refused(tmp_path, run):
    lines = gzip.decompress(LABELS.read_bytes()).decode().splitlines()
    fewer = tmp_path / "fewer.txt"
    fewer.write_text("".join(x + "\n" for x in lines if not x.startswith("q0 ")))
    r = invoke("eval", HUMAN, run, "--labels", fewer, "-f", "jsonl", check=False)
    assert r.returncode == 2
    assert (
        "query 'q0' of olz.run is evaluated under QRELS and has no label distribution" in r.stderr
    )


# ------------------------------------------------------------------------------- --panel JUDGE...


def _panel_files(tmp_path):
    """QRELS (judge A's grades), a run with a tie at the top of q, and two judges' files."""
    a = {"q": {"a": 1, "b": 0, "c": 1}, "r": {"x": 0}}
    b = {"q": {"a": 1, "b": 1, "c": 0}, "r": {"x": 1}}
    files = []
    for name, qrels in (("A", a), ("B", b)):
        path = tmp_path / f"{name}.qrels"
        path.write_text(
            "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
        )
        files.append(path)
    run = tmp_path / "tied.run"
    run.write_text("q Q0 a 1 1 t\nq Q0 b 2 1 t\nq Q0 c 3 0 t\nr Q0 x 1 2 t\n")
    column = tmp_path / "panel.txt"
    column.write_text(
        "".join(
            f"{q} {name} {d} {g}\n"
            for name, qrels in (("A", a), ("B", b))
            for q, docs in qrels.items()
            for d, g in docs.items()
        )
    )
    return files, run, column


def test_panel_gives_the_expectation_over_judges_and_orderings(tmp_path):
    """P@1 by hand, every judge x every ordering: q under A is 1 or 0 (a, b tied), under B 1: E 0.75,
    tie variance (0.25 + 0) / 2, label variance var(0.5, 1); r: 0 under A, 1 under B.  The aggregate:
    the judges' means 0.25 and 1 (one judge grades both queries)."""
    (a, b), run, _ = _panel_files(tmp_path)
    r = invoke("eval", a, run, "-m", "P@1", "-q", "-f", "jsonl", "--panel", a, "--panel", b)
    recs = {x["query"]: x for x in map(json.loads, r.stdout.splitlines())}
    want = {  # query: (label_expected, var_tie, var_label)
        "q": (0.75, 0.125, 0.0625),
        "r": (0.5, 0.0, 0.25),
        "all": (0.625, (0.25 / 4 + 0.0) / 2, np.var([0.25, 1.0])),
    }
    for q, (e, vt, vl) in want.items():
        rec = recs[q]
        assert (rec["label_expected"], rec["var_tie"], rec["var_label"]) == pytest.approx(
            (e, vt, vl), abs=1e-12
        )
        assert rec["label_std"] == pytest.approx(np.sqrt(vt + vl), abs=1e-12)
        assert (rec["label_method"], rec["label_samples"], rec["label_se"]) == ("exact", 2, 0.0)
    # the evaluation's own keys are those of QRELS (judge A): q's P@1 over the tie of a and b
    assert (recs["q"]["expected"], recs["r"]["expected"]) == (0.5, 0.0)
    # plug-in: the mean grades (q: a 1, b 0.5, c 0.5; r: x 0.5) read against rel 1
    assert (recs["q"]["plugin"], recs["r"]["plugin"]) == (0.5, 0.0)


def test_a_judge_column_file_is_the_same_panel(tmp_path):
    files, run, column = _panel_files(tmp_path)
    args = ("eval", files[0], run, "-m", "P@1", "-m", "nDCG@2", "-q", "-f", "jsonl")
    by_file = invoke(*args, "--panel", files[0], "--panel", files[1]).stdout
    by_column = invoke(*args, "--panel", column, "--judge-column").stdout
    assert by_file == by_column
    assert len(by_file.splitlines()) == 2 * 3


def test_panel_on_the_shipped_judges_matches_python(run):
    judges = sorted((D / "judges").glob("*.qrels.gz"))
    args = [x for j in judges for x in ("--panel", j)]
    r = invoke("eval", HUMAN, run, "-m", "P@5", "-m", "nDCG@10", "-f", "json", *args)
    doc = json.loads(r.stdout)
    assert doc["labels"]["judges"] == [j.name.removesuffix(".qrels.gz") for j in judges]
    from tierank.io.judgments import read_judges

    found, _ = read_judges([str(j) for j in judges])
    want = evaluate_labels(found, run, ["P@5", "nDCG@10"])
    for rec in doc["records"]:
        agg = want[rec["measure"]].aggregate
        for key, field in (("label_expected", "expected"), ("var_tie", "var_tie")):
            assert rec[key] == pytest.approx(agg[field], abs=1e-12)
        assert rec["var_label"] == pytest.approx(agg["var_label"], abs=1e-12)
        assert rec["label_method"] == "exact" and rec["label_samples"] == 5


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--panel", "{a}"), "--panel: {a}: one judge; a panel needs at least 2 judges"),
        (("--judge-column",), "--judge-column reads the --panel files; no --panel given"),
        (
            ("--panel", "{a}", "--panel", "{b}", "--labels", str(LABELS)),
            "--panel evaluates the runs in memory",
        ),
        (("--panel", "{a}", "--panel", "{b}", "-f", "trec_eval"), "no --format trec_eval"),
        (("--panel", "{a}", "--panel", "{a}x"), "--panel '{a}x': no such file"),
    ],
)
def test_panel_misuse_is_one_line_and_exit_2(tmp_path, extra, said):
    (a, b), run, _ = _panel_files(tmp_path)
    extra = tuple(x.format(a=a, b=b) for x in extra)
    r = invoke("eval", a, run, "-m", "P@1", *extra, check=False)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and said.format(a=a) in lines[0], r.stderr


def test_bad_panel_file_is_located_and_a_judge_without_a_query_refused(tmp_path):
    (a, b), run, column = _panel_files(tmp_path)
    column.write_text("q A a 1\nq B a x\n")
    r = invoke("eval", a, run, "--panel", column, "--judge-column", check=False)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"tierank: error: {column}:2: relevance grade 'x' is not a finite number"
    )
    b.write_text("q 0 a 1\n")  # B grades no document of r
    r = invoke("eval", a, run, "--panel", a, "--panel", b, check=False)
    assert r.returncode == 2
    assert "judge 'B' grades another set of the run's queries than the panel" in r.stderr
