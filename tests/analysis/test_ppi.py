"""Prediction-powered inference (`tierank.analysis.ppi`) against ``ppi-python`` (``ppi_mean_ci`` and
``ppi_mean_pointestimate``, with ``lam`` 1, tuned and fixed), its refusals, and (full tier) a simulation
with known truth: 1,000 replications, coverage of the 95% intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.analysis.ppi import MIN_LABELED, ppi_difference, ppi_mean, tuned_lambda
from tierank.errors import TierankInputError

ppi_py = pytest.importorskip("ppi_py")


def _reference(y, yhat, yu, lam, confidence):
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=1 - confidence, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)
    return float(np.squeeze(point)), float(np.squeeze(lo)), float(np.squeeze(hi))


@settings(max_examples=examples(200), deadline=None)
@given(
    n=st.integers(MIN_LABELED, 60),
    big_n=st.integers(1, 200),
    seed=st.integers(0, 2**31),
    lam=st.sampled_from([1.0, None, 0.0, 0.37]),
    confidence=st.sampled_from([0.9, 0.95, 0.99]),
)
def test_mean_and_interval_equal_ppi_python(n, big_n, seed, lam, confidence):
    rng = np.random.default_rng(seed)
    y = rng.random(n)
    yhat = np.clip(0.7 * y + rng.normal(0.1, 0.15, n), 0, 1)
    yu = rng.random(big_n)
    e = ppi_mean(y, yhat, yu, confidence=confidence, lam=lam)
    point, lo, hi = _reference(y, yhat, yu, lam, confidence)
    assert e.mean == pytest.approx(point, abs=1e-10)
    assert e.ci_low == pytest.approx(lo, abs=1e-10)
    assert e.ci_high == pytest.approx(hi, abs=1e-10)
    assert (e.n_labeled, e.n_unlabeled) == (n, big_n)
    assert e.method == {1.0: "PPI", None: "PPI++"}.get(lam, "PPI (fixed lambda)")


def test_tuned_lambda_is_ppi_pythons_and_lies_in_0_1():
    rng = np.random.default_rng(0)
    y = rng.random(30)
    yhat = y + rng.normal(0, 0.05, 30)
    yu = rng.random(300)
    lam = float(tuned_lambda(y, yhat, yu))
    from ppi_py.ppi import _calc_lam_glm

    # ppi-python's lam for the mean: gradients Y - theta, identity Hessian, clipped
    theta = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=1)
    ref = _calc_lam_glm(
        (y - theta).reshape(-1, 1),
        (yhat - theta).reshape(-1, 1),
        (yu - theta).reshape(-1, 1),
        np.eye(1),
        clip=True,
    )
    assert lam == pytest.approx(ref, abs=1e-12)
    assert 0 <= lam <= 1


def test_difference_is_the_ppi_mean_of_the_per_query_differences():
    rng = np.random.default_rng(1)
    ya, yb = rng.random(20), rng.random(20)
    ha, hb = ya + rng.normal(0, 0.1, 20), yb + rng.normal(0, 0.1, 20)
    ua, ub = rng.random(50), rng.random(50)
    d = ppi_difference(ya, ha, ua, yb, hb, ub, lam=None)
    point, lo, hi = _reference(ya - yb, ha - hb, ua - ub, None, 0.95)
    assert (d.mean, d.ci_low, d.ci_high) == pytest.approx((point, lo, hi), abs=1e-10)


def test_vectorised_over_replications_equals_one_by_one():
    rng = np.random.default_rng(2)
    y, yhat, yu = rng.random((5, 15)), rng.random((5, 15)), rng.random((5, 40))
    many = ppi_mean(y, yhat, yu, lam=None)
    for r in range(5):
        one = ppi_mean(y[r], yhat[r], yu[r], lam=None)
        assert many.mean[r] == pytest.approx(one.mean, abs=1e-14)
        assert many.ci_high[r] == pytest.approx(one.ci_high, abs=1e-14)


def test_too_few_labelled_queries_or_no_unlabelled_are_refused_with_the_reason():
    with pytest.raises(TierankInputError, match=f"needs at least {MIN_LABELED}"):
        ppi_mean(np.ones(MIN_LABELED - 1), np.ones(MIN_LABELED - 1), np.ones(5))
    with pytest.raises(TierankInputError, match="nothing for PPI to add"):
        ppi_mean(np.ones(20), np.ones(20), np.ones(0))


def test_a_machine_that_never_varies_falls_back_to_the_human_mean():
    rng = np.random.default_rng(4)
    y = rng.random(20)
    e = ppi_mean(y, np.full(20, 0.5), np.full(30, 0.5), lam=None)
    assert e.lam == 0.0
    assert e.mean == pytest.approx(y.mean())


@pytest.mark.full
@pytest.mark.parametrize("lam", [1.0, None])
def test_coverage_of_the_95_interval_in_1000_replications_with_known_truth(lam):
    """Per-query values Y ~ Beta(2, 3) (true mean 0.4); a biased, noisy machine Yhat = 0.6 Y + 0.25 + noise;
    n = 100 labelled and N = 1,000 unlabelled queries per replication, 1,000 replications (seed 0)."""
    rng = np.random.default_rng(0)
    reps, n, big_n = 1000, 100, 1000
    y = rng.beta(2, 3, (reps, n))
    yhat = 0.6 * y + 0.25 + rng.normal(0, 0.1, (reps, n))
    yu = 0.6 * rng.beta(2, 3, (reps, big_n)) + 0.25 + rng.normal(0, 0.1, (reps, big_n))
    e = ppi_mean(y, yhat, yu, confidence=0.95, lam=lam)
    covered = (e.ci_low <= 0.4) & (0.4 <= e.ci_high)
    assert covered.mean() >= 0.94
    # the machine alone is biased: its own mean misses the truth
    assert abs(yu.mean() - 0.4) > 0.05
