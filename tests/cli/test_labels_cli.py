"""``tierank eval QRELS RUN --labels DISTRIBUTIONS`` on the shipped llmjudge-mini sample."""

from __future__ import annotations

import gzip
import json

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
