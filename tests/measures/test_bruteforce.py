"""Property tests: tierank's closed forms against brute-force enumeration of every ordering.

Each hypothesis example is a small multi-query run with heavy ties (scores drawn
from four values), graded qrels with unjudged documents, relevant documents the
run never retrieved, queries without any relevant document, and cutoffs below
and beyond the list length.  For each query the reference enumerates every
ranking consistent with the scores (product of permutations of tie groups,
at most 7! = 5040) and computes the measure from its textbook definition.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection, judged_info
from reference import brute_stats, ordered, orderings, value

MEASURES = [
    "P@1",
    "P@3",
    "P@10",
    "R@2",
    "R@5",
    "R@10",
    "F1@1",
    "F1@4",
    "F1@10",
    "Hits@3",
    "Hits@9",
    "Success@1",
    "Success@3",
    "Success@10",
    "RR",
    "RR@1",
    "RR@3",
    "AP",
    "AP@2",
    "AP@5",
    "nDCG",
    "nDCG@1",
    "nDCG@3",
    "nDCG@10",
    "Rprec",
    "RBP(p=0.8)",
    "RBP(p=0.5)@3",
    "R",
    "Judged@1",
    "Judged@3",
    "Judged@10",
]
# measures whose std has no closed form (reported as NaN): none since AP's was derived
NO_VARIANCE: tuple[str, ...] = ()
TOL = 1e-9


def _check(result, qs, qrels, measures, level=1, candidates_only=False):
    pq = result.per_query().set_index(["query", "measure"])
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            assert q not in result.qids
            continue
        nrel, judged = judged_info(docs, extra, level, candidates_only)
        for m in measures:
            ref = brute_stats(m, docs, nrel, judged, level)
            row = pq.loc[(q, m)]
            for stat in ("expected", "min", "max"):
                assert math.isclose(row[stat], ref[stat], abs_tol=TOL), (
                    q,
                    m,
                    stat,
                    row[stat],
                    ref,
                    docs,
                    extra,
                )
            if m.split("@")[0] in NO_VARIANCE:
                assert math.isnan(row["std"]) if ref["max"] > ref["min"] else row["std"] == 0
            else:
                assert math.isclose(row["std"], ref["std"], abs_tol=1e-12), (
                    q,
                    m,
                    row["std"],
                    ref,
                    docs,
                    extra,
                )
            obl = value(m, [g for _, _, g in ordered(docs, "trec_eval")], nrel, judged, level)
            assert math.isclose(row["oblivious"], obl, abs_tol=TOL), (
                q,
                m,
                row["oblivious"],
                obl,
                docs,
            )


SETTINGS = settings(
    max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(collection())
def test_all_measures_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, MEASURES)
    _check(res, qs, qrels, MEASURES)


@SETTINGS
@given(collection())
def test_candidates_only_matches_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, MEASURES, candidates_only=True)
    _check(res, qs, qrels, MEASURES, candidates_only=True)


@settings(max_examples=examples(200), deadline=None)
@given(collection(), st.sampled_from([0, 2, 3]))
def test_relevance_level_matches_brute_force(data, level):
    qs, run, qrels = data
    assume(qrels)
    ms = ["P@3", "R@5", "RR", "AP", "Success@2", "Rprec", "RBP(p=0.8)", "F1@2", "Hits@4"]
    res = tierank.evaluate(qrels, run, ms, rel=level)
    _check(res, qs, qrels, ms, level=level)
    # the per-measure parameter is the same as the global threshold
    res2 = tierank.evaluate(qrels, run, [f"P(rel={level})@3", f"AP(rel={level})"])
    a = res2.per_query()["expected"].to_numpy()
    b = res.per_query().set_index("measure").loc[["P@3", "AP"], "expected"].to_numpy()
    np.testing.assert_allclose(a, b, atol=TOL)


@settings(max_examples=examples(150), deadline=None)
@given(collection(), st.sampled_from(["input", "docno", "trec_eval"]))
def test_oblivious_policies(data, policy):
    qs, run, qrels = data
    assume(qrels)
    ms = ["P@2", "RR", "AP@3", "nDCG@3"]
    res = tierank.evaluate(qrels, run, ms, tie_break=policy)
    pq = res.per_query().set_index(["query", "measure"])
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        nrel, judged = judged_info(docs, extra, 1, False)
        for m in ms:
            obl = value(m, [g for _, _, g in ordered(docs, policy)], nrel, judged)
            assert math.isclose(pq.loc[(q, m), "oblivious"], obl, abs_tol=TOL)


@settings(max_examples=examples(100), deadline=None)
@given(collection(max_queries=2), st.integers(0, 2**70), st.randoms(use_true_random=False))
def test_random_policy_is_one_valid_ordering_whatever_the_file_order(data, seed, rnd):
    """random:SEED orders ties as a function of (seed, query, docid) only: the file order does not
    matter, and the oblivious values of every measure are those of ONE ranking consistent with
    the scores (found by enumerating them all)."""
    qs, run, qrels = data
    assume(qrels)
    ms = ["AP", "nDCG@3", "RR", "P@2", "RBP(p=0.5)"]
    policy = f"random:{seed}"
    res = (
        tierank.evaluate(qrels, run, ms, tie_break=policy)
        .per_query()
        .set_index(["query", "measure"])
    )
    shuffled = {
        q: dict(rnd.sample(list(run[q].items()), len(run[q])))
        for q in rnd.sample(list(run), len(run))
    }
    other = (
        tierank.evaluate(qrels, shuffled, ms, tie_break=policy)
        .per_query()
        .set_index(["query", "measure"])
    )
    assert other["oblivious"].to_dict() == res["oblivious"].to_dict()
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        nrel, judged = judged_info(docs, extra)
        got = [res.loc[(q, m), "oblivious"] for m in ms]
        assert any(
            all(
                math.isclose(value(m, [g for _, _, g in o], nrel, judged), v, abs_tol=TOL)
                for m, v in zip(ms, got)
            )
            for o in orderings(docs)
        ), (q, got, docs)


@settings(max_examples=examples(100), deadline=None)
@given(collection(), st.randoms(use_true_random=False))
def test_invariances(data, rnd):
    """Input order and strictly monotone score transforms change no tie-aware statistic."""
    qs, run, qrels = data
    assume(qrels)
    ms = ["P@3", "RR@3", "AP", "nDCG@5", "RBP(p=0.8)"]
    base = tierank.evaluate(qrels, run, ms).per_query()
    shuffled = {}
    for q in rnd.sample(list(run), len(run)):
        items = list(run[q].items())
        rnd.shuffle(items)
        shuffled[q] = {d: 3.0 * s + 7.0 for d, s in items}  # monotone transform, shuffled order
    other = tierank.evaluate(qrels, shuffled, ms).per_query()
    cols = ["expected", "min", "max", "std", "oblivious"]  # trec_eval policy ignores file order
    np.testing.assert_allclose(
        base[cols].to_numpy(dtype=float),
        other[cols].to_numpy(dtype=float),
        atol=TOL,
        equal_nan=True,
    )


@settings(max_examples=examples(100), deadline=None)
@given(collection())
def test_aggregate_is_mean_and_std_of_mean(data):
    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, ["nDCG@3", "RR"])
    pq, agg = res.per_query(), res.aggregate().set_index("measure")
    for m, grp in pq.groupby("measure"):
        for c in ("oblivious", "expected", "min", "max", "range", "bias"):
            assert math.isclose(agg.loc[m, c], grp[c].mean(), abs_tol=TOL)
        assert math.isclose(
            agg.loc[m, "std"], math.sqrt((grp["std"] ** 2).sum()) / len(grp), abs_tol=TOL
        )


@settings(max_examples=examples(100), deadline=None)
@given(collection())
def test_complete_averages_over_all_qrels_queries(data):
    qs, run, qrels = data
    assume(qrels)
    # drop one run query: with complete=True it still counts, scoring 0 everywhere
    dropped = sorted(run)[0]
    partial = {q: d for q, d in run.items() if q != dropped}
    assume(any(q in qrels for q in partial))
    res = tierank.evaluate(qrels, partial, ["P@3", "AP", "RR"], complete=True)
    assert res.qids == sorted(qrels)
    pq = res.per_query()
    if dropped in qrels:
        rows = pq[pq["query"] == dropped]
        assert (
            rows[["oblivious", "expected", "min", "max", "std"]].to_numpy(dtype=float) == 0
        ).all()


def test_all_tied_list_large_group():
    """One group of 200 tied documents, 7 relevant: closed forms vs the known hypergeometric values."""
    n, r = 200, 7
    run = {"q": {f"d{i}": 1.0 for i in range(n)}}
    qrels = {"q": {f"d{i}": 1 for i in range(0, n, n // r)[:r]}}
    res = (
        tierank.evaluate(qrels, run, ["P@10", "RR", "Success@5", "R@50"])
        .aggregate()
        .set_index("measure")
    )
    assert math.isclose(res.loc["P@10", "expected"], r / n, rel_tol=1e-12)
    # E[1/first] by the negative hypergeometric law, summed directly
    e_rr = sum(math.comb(n - t - 1, r - 1) / math.comb(n, r) / (t + 1) for t in range(n - r + 1))
    assert math.isclose(res.loc["RR", "expected"], e_rr, rel_tol=1e-10)
    assert math.isclose(
        res.loc["Success@5", "expected"], 1 - math.comb(n - r, 5) / math.comb(n, 5), rel_tol=1e-10
    )
    # hypergeometric variance of hits in a sample of 50 from 200 with 7 successes
    var_hits = 50 * (r / n) * (1 - r / n) * (n - 50) / (n - 1)
    assert math.isclose(res.loc["R@50", "std"], math.sqrt(var_hits) / r, rel_tol=1e-10)


@pytest.mark.parametrize("k", [1, 2, 5, 8])
def test_cutoff_beyond_list_length(k):
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.0}}
    qrels = {"q": {"a": 1, "c": 1}}
    res = tierank.evaluate(qrels, run, [f"P@{k}", f"nDCG@{k}"]).per_query().set_index("measure")
    docs = [("a", 1.0, 1.0), ("b", 1.0, None), ("c", 0.0, 1.0)]
    for m in (f"P@{k}", f"nDCG@{k}"):
        ref = brute_stats(m, docs, 2, [1.0, 1.0])
        assert math.isclose(res.loc[m, "expected"], ref["expected"], abs_tol=TOL)


@settings(max_examples=examples(150), deadline=None)
@given(collection(), st.sampled_from(["trec_eval", "input", "docno", "random:5"]))
def test_pruning_to_the_measured_depth_changes_nothing(data, policy):
    """Alone, cutoff measures see only the ranks they read (whole tie groups kept);
    next to a measure without cutoff, the whole list is kept. Values must agree."""
    qs, run, qrels = data
    assume(qrels)
    ms = ["P@2", "nDCG@3", "AP@2", "RR@1", "Rprec", "Success@2", "RBP(p=0.5)@2"]
    pruned = tierank.evaluate(qrels, run, ms, tie_break=policy).per_query()
    full = tierank.evaluate(qrels, run, ms + ["RR"], tie_break=policy).per_query()
    full = full[full["measure"] != "RR"].reset_index(drop=True)
    cols = ["oblivious", "expected", "min", "max", "std"]
    np.testing.assert_allclose(
        pruned[cols].to_numpy(float), full[cols].to_numpy(float), atol=TOL, equal_nan=True
    )
    assert tierank.evaluate(qrels, run, ["P@1"]).ties == tierank.evaluate(qrels, run, ["RR"]).ties
