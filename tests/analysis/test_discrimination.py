"""Discriminative power (tierank.analysis.discrimination): the vectorized bootstrap against a loop
over pairs and resamples, the Tukey variant against tierank's randomized Tukey HSD."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tierank.analysis.discrimination import discriminative_power
from tierank.analysis.inference import resample_counts, tukey_hsd
from tierank.errors import TierankInputError


def _data(seed=0, n=40, S=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(np.linspace(0.5, 0.38, S), 0.15, size=(n, S))
    X[:, -1] = X[:, -2]  # a pair with no difference at all
    return X


def _t(z):
    sd = np.std(z, ddof=1)
    return abs(z.mean()) / (sd / math.sqrt(len(z)))


def test_bootstrap_equals_a_loop_over_pairs_and_resamples():
    X = _data()
    n, S = X.shape
    B, alpha, seed = 400, 0.05, 7
    got = discriminative_power(X, samples=B, alpha=alpha, seed=seed)
    C = np.vstack(list(resample_counts(n, B, seed)))  # the same topic draws
    idx = [np.repeat(np.arange(n), row) for row in C]  # each resample as a list of topics
    k = math.floor(B * alpha)
    for pos, (a, b) in enumerate(zip(*np.triu_indices(S, 1))):
        z = X[:, a] - X[:, b]
        if np.all(z == 0):
            assert got.p[pos] == 1.0 and math.isnan(got.needed[pos])
            continue
        w = z - z.mean()
        ts = np.array([_t(w[r]) for r in idx])
        signed = np.array([w[r].mean() for r in idx])
        ms = np.abs(signed)
        assert got.p[pos] == pytest.approx(np.mean(ts >= _t(z)), abs=1e-12)
        assert got.diff[pos] == pytest.approx(abs(z.mean()), abs=1e-15)
        kth = np.argsort(-ts, kind="stable")[k - 1]
        assert ts[kth] == pytest.approx(np.sort(ts)[::-1][k - 1])
        assert got.needed[pos] == pytest.approx(ms[kth], abs=1e-12)
        lo, hi = np.quantile(signed, [alpha / 2, 1 - alpha / 2])
        assert got.ci_low[pos] == pytest.approx(z.mean() - hi, abs=1e-12)
        assert got.ci_high[pos] == pytest.approx(z.mean() - lo, abs=1e-12)
        assert got.mean_diff[pos] == pytest.approx(z.mean(), abs=1e-15)
        assert got.dz[pos] == pytest.approx(z.mean() / np.std(z, ddof=1), rel=1e-12)
    assert got.pairs == S * (S - 1) // 2
    assert got.separated == int((got.p < alpha).sum())
    assert 0 < got.separated < got.pairs
    assert got.diff_required == np.nanmax(got.needed)


def test_tukey_equals_tierank_tukey_hsd():
    X = _data(1, n=30, S=6)
    got = discriminative_power(X, method="tukey", samples=500, seed=3, alpha=0.05)
    ref = tukey_hsd(X, permutations=500, seed=3, alpha=0.05)
    i, j = np.triu_indices(6, 1)
    np.testing.assert_allclose(got.p, ref.p[i, j], rtol=0, atol=1e-15)
    # every pair beyond the difference required is separated, none at or below it
    sep = got.p < 0.05
    assert np.all(sep == (got.diff > got.diff_required + 1e-12))
    assert got.diff_required == got.diff_required_median
    np.testing.assert_allclose(got.ci_high - got.ci_low, 2 * got.diff_required, rtol=1e-12)
    # Tukey's simultaneous interval excludes 0 exactly where the pair is separated
    assert np.all(sep == ((got.ci_low > 1e-12) | (got.ci_high < -1e-12)))


def test_deterministic_under_seed_and_labelled():
    X = _data(2)
    a = discriminative_power(X, samples=300, seed=5)
    b = discriminative_power(X, samples=300, seed=5)
    c = discriminative_power(X, samples=300, seed=6)
    np.testing.assert_array_equal(a.p, b.p)
    assert not np.array_equal(a.p, c.p)
    rec = a.to_dict(per_pair=True)
    assert rec["method"] == "bootstrap" and rec["samples"] == 300 and rec["seed"] == 5
    assert len(rec["pair_results"]) == rec["pairs"]


def test_identical_systems_are_never_separated():
    X = np.tile(np.random.default_rng(0).uniform(size=(20, 1)), (1, 3))
    for method in ("bootstrap", "tukey"):
        d = discriminative_power(X, method=method, samples=200)
        assert d.separated == 0 and d.power == 0.0


def test_refusals():
    with pytest.raises(TierankInputError, match="at least two topics"):
        discriminative_power([[0.1, 0.2]])
    with pytest.raises(TierankInputError, match="at least two systems"):
        discriminative_power([[0.1], [0.2]])
    with pytest.raises(TierankInputError, match="cannot give a p-value below alpha"):
        discriminative_power(_data(), samples=10, alpha=0.05)
    with pytest.raises(TierankInputError, match="method must be one of"):
        discriminative_power(_data(), method="t")
