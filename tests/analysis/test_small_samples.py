"""No statistic from few queries claims what exact randomization on the same differences cannot
reach: every paired p-value is at least the least p of the exact sign-flip test (``2 / 2^m``, m
nonzero differences), checked against brute-force enumeration of all sign flips; the intervals of
`compare` exist only where that test can reach ``1 - level``; a geometric mean's intervals stay in
the measure's range."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.analysis.compare import compare
from tierank.analysis.inference import TESTS, paired_tests, tukey_hsd


def enumerated_least_p(d: np.ndarray) -> float:
    """The least two-sided p the exact sign-flip test of the mean can give on differences with the
    magnitudes ``|d|``, by brute force: for every sign vector taken as the observed one, its p over
    all 2^n sign vectors (zeros included); the smallest of those."""
    n = len(d)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    sums = np.abs(signs @ np.abs(d))
    return float(min(np.mean(sums >= s) for s in sums))


# differences on a grid of eighths: sums are exact, so "as large as the observed" is exact too
differences = st.lists(st.integers(-8, 8), min_size=1, max_size=7).map(
    lambda xs: np.array(xs, dtype=np.float64) / 8.0
)


@settings(max_examples=examples(300), deadline=None)
@given(d=differences, base=st.integers(0, 8))
def test_no_paired_p_below_what_exact_sign_flips_can_reach(d, base):
    X = np.column_stack([base / 8.0 + d, np.full(len(d), base / 8.0)])
    least = enumerated_least_p(d)
    for test in TESTS:
        (pt,) = paired_tests(X, ["A", "B"], test=test, resamples=200, samples=200, seed=1)
        assert pt.p >= least - 1e-12, (test, d, pt)
        assert pt.p_floor == pytest.approx(least)
        assert pt.p == max(pt.p_test, pt.p_floor) or math.isnan(pt.p)
        # a significance at alpha is one exact randomization on these differences can reach
        for alpha in (0.01, 0.05, 0.1, 0.25, 0.5):
            if pt.p < alpha:
                assert least < alpha
    if len(d) >= 2:
        h = tukey_hsd(X, ["A", "B"], permutations=200, seed=1)
        assert h.pvalue("A", "B") >= least - 1e-12


@settings(max_examples=examples(100), deadline=None)
@given(d=differences)
def test_pair_intervals_only_where_randomization_reaches_one_minus_level(d):
    from tierank.analysis.paired.base import interval_supported

    X = np.column_stack([0.5 + d, np.full(len(d), 0.5)])
    for level in (0.5, 0.8, 0.95):
        (pt,) = paired_tests(X, ["A", "B"], level=level)
        m = int(np.count_nonzero(d))
        reachable = enumerated_least_p(d) < 1 - level
        assert interval_supported(m, level) == reachable
        if not reachable:
            assert math.isnan(pt.diff_ci_low) and math.isnan(pt.diff_ci_high)
            assert math.isnan(pt.effect_ci_low) and math.isnan(pt.effect_ci_high)


def test_least_supported_is_the_first_size_enumeration_allows():
    from tierank.analysis.paired.base import least_supported

    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        k = least_supported(level)
        assert enumerated_least_p(np.ones(k)) < 1 - level <= enumerated_least_p(np.ones(k - 1))


def _rr_runs(n):
    """Two systems on ``n`` queries: A finds the relevant document first, B at ranks 5, 6, 5, ...
    (RR differences 0.8, 0.8333, 0.8, ...)."""
    qrels, a, b = {}, {}, {}
    for i in range(n):
        q = f"q{i}"
        qrels[q] = {"rel": 1}
        a[q] = {"rel": 2.0, "x": 1.0}
        depth = 5 if i % 2 == 0 else 6
        b[q] = {**{f"d{j}": 10.0 - j for j in range(depth - 1)}, "rel": 0.5}
    return qrels, {"A": a, "B": b}


@pytest.mark.parametrize(("n", "least"), [(2, 0.5), (3, 0.25)])
def test_the_t_test_on_two_or_three_queries_claims_nothing(n, least):
    qrels, runs = _rr_runs(n)
    cmp = compare(runs, qrels, "RR")
    (pair,) = cmp.pairs
    assert pair.diff_expected == pytest.approx(np.mean([0.8, 0.8333333333][:n] + [0.8] * (n - 2)))
    assert pair.p_test < 0.02  # scipy's ttest_rel: 0.013 with 2 queries, 0.00018 with 3
    assert pair.p == pair.p_floor == least and not pair.significant
    assert math.isnan(pair.diff_ci_low) and math.isnan(pair.diff_ci_high)
    assert all(math.isnan(s.ci_low) and math.isnan(s.ci_high) for s in cmp.systems)
    assert any("raised to it" in note for note in cmp.notes)
    assert any(f"{n} queries: no confidence interval at level 0.95" in note for note in cmp.notes)


def test_intervals_return_with_enough_queries():
    qrels, runs = _rr_runs(6)
    cmp = compare(runs, qrels, "RR")
    assert all(s.ci_low <= s.expected <= s.ci_high for s in cmp.systems)
    (pair,) = cmp.pairs
    assert pair.diff_ci_low <= pair.diff_expected <= pair.diff_ci_high
    assert pair.significant and pair.p == pair.p_floor == 2.0**-5


def _gmap_runs(n):
    """Two systems on ``n`` queries of one relevant document each: A finds it first on all but the
    last query (AP 1, then 0: floored at 1e-5), B at rank 2 everywhere (AP 0.5)."""
    qrels, a, b = {}, {}, {}
    for i in range(n):
        q = f"q{i}"
        qrels[q] = {"rel": 1}
        a[q] = {"rel": 2.0, "x": 1.0} if i < n - 1 else {"x": 1.0}
        b[q] = {"x": 2.0, "rel": 1.0}
    return qrels, {"A": a, "B": b}


@pytest.mark.parametrize("n", [6, 8, 12])
def test_gmap_intervals_stay_in_the_measures_range(n):
    qrels, runs = _gmap_runs(n)
    cmp = compare(runs, qrels, "GMAP")
    for s in cmp.systems:
        assert 1e-5 <= s.ci_low <= s.ci_high <= 1.0, s
        assert s.ci_low <= s.expected * (1 + 1e-12) and s.expected <= s.ci_high * (1 + 1e-12)
    (pair,) = cmp.pairs
    assert 1e-5 <= pair.ratio_ci_low <= pair.ratio_ci_high <= 1e5


def test_gmap_on_three_queries_gives_no_interval():
    qrels, runs = _gmap_runs(3)
    cmp = compare(runs, qrels, "GMAP")
    assert all(math.isnan(s.ci_low) for s in cmp.systems)
    (pair,) = cmp.pairs
    assert math.isnan(pair.ratio_ci_low) and pair.p >= 0.25


def test_gmap_tests_the_log_of_the_expected_geometric_mean():
    """The per-query terms of the expected GMAP average to the log of the expected GMAP: the
    randomization test's statistic (their mean difference) is the log of the ratio."""
    qrels, runs = _gmap_runs(8)
    runs["B"]["q0"] = {"x": 1.0, "rel": 1.0, "y": 1.0}  # a tie: B's expectation is sampled there
    cmp = compare(runs, qrels, "GMAP", test="randomization")
    (pair,) = cmp.pairs
    assert pair.statistic == pytest.approx(math.log(pair.ratio), rel=1e-9)


@pytest.mark.full  # ranx compiles with numba on first use
def test_ranx_compare_has_the_same_floor():
    ranx = pytest.importorskip("ranx")
    from tierank.integrations.ranx import compare as ranx_compare

    qrels, runs = _rr_runs(2)
    q = ranx.Qrels({k: dict(v) for k, v in qrels.items()})
    rs = [ranx.Run(runs[name], name=name) for name in ("A", "B")]
    rep = ranx_compare(q, rs, ["mrr"], stat_test="student", max_p=0.05)
    got = rep.comparisons[frozenset(("A", "B"))]["mrr"]
    stock = ranx.compare(q, rs, ["mrr"], stat_test="student", max_p=0.05)
    assert stock.comparisons[frozenset(("A", "B"))]["mrr"]["p_value"] < 0.05  # ranx alone: 0.013
    assert got == {"p_value": 0.5, "significant": False}
