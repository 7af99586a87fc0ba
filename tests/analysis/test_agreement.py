"""Agreement of judges (`tierank.analysis.agreement`) against the reference implementations:
scikit-learn's ``cohen_kappa_score`` (unweighted, linear, quadratic) and the ``krippendorff`` package's
``alpha`` (nominal, ordinal, interval), on random grades (hypothesis), on the shipped LLMJudge sample and
(slow) on the full LLMJudge data: 33 judges x 4,423 pairs."""

from __future__ import annotations

import glob

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.analysis.agreement import STATISTICS, agreement
from tierank.examples import path as example
from tierank.io.judgments import align, read_judges
from tierank.io.sources import read

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")

WEIGHTS = (
    (None, "cohen_kappa"),
    ("linear", "cohen_kappa_linear"),
    ("quadratic", "cohen_kappa_quadratic"),
)
LEVELS = ("nominal", "ordinal", "interval")


def _check_against_references(ref, grades, record, tol=1e-12):
    for w, field in WEIGHTS:
        expected = sklearn_metrics.cohen_kappa_score(ref, grades, weights=w)
        assert record[field] == pytest.approx(expected, abs=tol), field
    for level in LEVELS:
        expected = krippendorff.alpha(np.vstack([ref, grades]), level_of_measurement=level)
        assert record[f"krippendorff_alpha_{level}"] == pytest.approx(expected, abs=tol), level


grades_st = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 2.5]), min_size=4, max_size=40)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_kappa_and_alpha_equal_sklearn_and_krippendorff_on_random_grades(data):
    ref = np.array(data.draw(grades_st))
    n = len(ref)
    judges = np.array(
        [
            data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 2.5]), min_size=n, max_size=n))
            for _ in range(3)
        ]
    )
    a = agreement(ref, judges, ["q"] * n, samples=0)
    for j in range(3):
        rec = a.pooled[j]
        for w, field in WEIGHTS:
            # as text: scikit-learn takes 2.5 for a continuous target; "0.0" < ... < "3.0" as numbers
            expected = sklearn_metrics.cohen_kappa_score(
                [f"{g:.1f}" for g in ref], [f"{g:.1f}" for g in judges[j]], weights=w
            )
            if np.isfinite(expected) and len(np.unique(np.r_[ref, judges[j]])) > 1:
                assert rec[field] == pytest.approx(expected, abs=1e-12), field
            else:  # one grade only: undefined, never a made-up number
                assert np.isnan(rec[field])
        if len(np.unique(np.r_[ref, judges[j]])) > 1:
            for level in LEVELS:
                expected = krippendorff.alpha(
                    np.vstack([ref, judges[j]]), level_of_measurement=level
                )
                assert rec[f"krippendorff_alpha_{level}"] == pytest.approx(expected, abs=1e-12)


def test_binary_agreement_counts_pairs_on_the_same_side_of_rel():
    ref = np.array([0, 1, 2, 3, 0, 2])
    judge = np.array([1, 0, 3, 3, 0, 1])
    a = agreement(ref, [judge], ["q"] * 6, rel=2, samples=0)
    rb, jb = ref >= 2, judge >= 2
    assert a.pooled[0]["binary_agreement"] == pytest.approx(np.mean(rb == jb))
    assert a.pooled[0]["binary_kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(rb, jb))


def test_confusion_matrix_rows_are_the_reference():
    a = agreement([0, 0, 1, 2], [[1, 0, 1, 2]], ["q"] * 4, samples=0)
    assert (
        a.confusion[0].tolist()
        == sklearn_metrics.confusion_matrix([0, 0, 1, 2], [1, 0, 1, 2]).tolist()
    )


def _sample():
    d = example("llmjudge-mini")
    ref = read(str(d / "human.qrels.gz"), "qrels")
    judges, _ = read_judges(sorted(glob.glob(str(d / "judges" / "*.qrels.gz"))))
    return align(ref, judges, out_of_scale="clip")


def test_every_judge_of_the_shipped_sample_equals_the_references_pooled_and_per_query():
    j = _sample()
    a = agreement(j.reference, j.grades, j.qid, j.judges, samples=0)
    for k in range(len(j.judges)):
        _check_against_references(j.reference, j.grades[k], a.pooled[k])
    # per query: each query's pairs alone
    q0 = [r for r in a.per_query if r["judge"] == j.judges[0] and r["query"] == "q49"][0]
    rows = j.qid == "q49"
    assert q0["n_pairs"] == int(rows.sum())
    _check_against_references(j.reference[rows], j.grades[0][rows], q0)


def test_bootstrap_ci_is_seeded_labelled_and_brackets_the_estimate():
    j = _sample()
    a = agreement(j.reference, j.grades, j.qid, j.judges, samples=300, seed=7)
    b = agreement(j.reference, j.grades, j.qid, j.judges, samples=300, seed=7)
    c = agreement(j.reference, j.grades, j.qid, j.judges, samples=300, seed=8)
    assert a.pooled == b.pooled
    assert a.pooled[0]["cohen_kappa_ci_low"] != c.pooled[0]["cohen_kappa_ci_low"]
    assert a.settings["ci_method"] == "percentile bootstrap over queries"
    assert (a.settings["samples"], a.settings["seed"]) == (300, 7)
    for rec in a.pooled:
        for s in STATISTICS:
            assert rec[f"{s}_ci_low"] <= rec[s] <= rec[f"{s}_ci_high"]


def test_bootstrap_ci_equals_the_percentiles_of_sklearns_kappa_on_the_resampled_queries():
    """The CI from the confusion matrices added up per resample equals the percentiles of scikit-learn's
    kappa computed on the pairs of each resample of queries (the same draws: numpy's default_rng(seed)
    multinomial counts of the sorted queries)."""
    j = _sample()
    samples, seed = 40, 5
    a = agreement(j.reference, j.grades[:1], j.qid, j.judges[:1], samples=samples, seed=seed)
    queries = np.unique(j.qid.astype(str))
    counts = np.random.default_rng(seed).multinomial(
        len(queries), np.full(len(queries), 1 / len(queries)), samples
    )
    rows = [np.flatnonzero(j.qid == q) for q in queries]
    kappas = []
    for c in counts:
        take = np.concatenate([np.tile(r, k) for r, k in zip(rows, c) if k])
        kappas.append(sklearn_metrics.cohen_kappa_score(j.reference[take], j.grades[0][take]))
    lo, hi = np.quantile(kappas, [0.025, 0.975])
    assert a.pooled[0]["cohen_kappa_ci_low"] == pytest.approx(lo, abs=1e-12)
    assert a.pooled[0]["cohen_kappa_ci_high"] == pytest.approx(hi, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["clip", "drop"])
def test_all_33_llmjudge_judges_equal_sklearn_and_krippendorff(shared_data, policy):
    d = shared_data / "llmjudge"
    ref = read(str(d / "test.human.qrels"), "qrels")
    judges, _ = read_judges(sorted(glob.glob(str(d / "judges" / "*.txt"))))
    assert len(judges) == 33
    j = align(ref, judges, out_of_scale=policy)
    a = agreement(j.reference, j.grades, j.qid, j.judges, samples=0)
    for k in range(33):
        ok = ~np.isnan(j.grades[k])
        assert a.pooled[k]["n_pairs"] == int(ok.sum())
        _check_against_references(j.reference[ok], j.grades[k][ok], a.pooled[k])


def test_the_bootstrap_drawn_in_chunks_gives_the_same_intervals(monkeypatch):
    import tierank.analysis.agreement as module

    j = _sample()
    whole = agreement(j.reference, j.grades, j.qid, j.judges, samples=40, seed=2)
    monkeypatch.setattr(module, "BOOTSTRAP_CHUNK", 7)
    chunked = agreement(j.reference, j.grades, j.qid, j.judges, samples=40, seed=2)
    assert chunked.pooled == whole.pooled
