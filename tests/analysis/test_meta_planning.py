"""Meta-analysis (tierank.analysis.meta) and topic set size design (tierank.analysis.planning)
against statsmodels' combine_effects and power solvers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tierank
from tests.helpers import examples
from tierank.analysis.meta import combine_effects, pair_effect, paule_mandel
from tierank.analysis.planning import (
    achieved_power,
    minimal_detectable,
    pilot_variance,
    range_to_f,
    topic_set_size,
)
from tierank.errors import TierankInputError

sm_meta = pytest.importorskip("statsmodels.stats.meta_analysis")
sm_power = pytest.importorskip("statsmodels.stats.power")

TOL = 1e-10


def _close(a, b, tol=TOL):
    assert abs(a - b) <= tol * max(1.0, abs(b)), (a, b)


def _heterogeneous(seed: int, k: int):
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.0005, 0.01, k)
    y = rng.normal(0.03, 0.2, k)  # spread beyond the sampling variances: Q > k - 1
    return y, v


@pytest.mark.parametrize("seed,k", [(0, 15), (1, 4), (2, 2), (3, 40)])
@pytest.mark.parametrize("method,sm_method", [("dl", "chi2"), ("pm", "iterated")])
def test_combine_effects_equals_statsmodels(seed, k, method, sm_method):
    y, v = _heterogeneous(seed, k)
    got = combine_effects(y, v, method=method)
    # statsmodels' Paule-Mandel iteration (DerSimonian & Kacker's update, tolerance tightened here)
    # can overshoot below 0 and then returns tau^2 = 0 unconverged (seed 3, from 0 and from DL's
    # value): restart it from other points until it converges on its own
    for start in (0.0, 0.5 * got.tau2, 0.9 * got.tau2):
        ref = sm_meta.combine_effects(
            y, v, method_re=sm_method, use_t=False, atol=1e-14, maxiter=1000, tau2_start=start
        )
        if ref.tau2 > 0:
            break
    assert ref.q > k - 1 and ref.tau2 > 0  # heterogeneous: tau^2 > 0, no truncation in play
    fe, re_, *_ = ref.conf_int(alpha=0.05, use_t=False)
    _close(got.fixed.effect, ref.mean_effect_fe)
    _close(got.fixed.se, ref.sd_eff_w_fe)
    _close(got.fixed.ci_low, fe[0])
    _close(got.fixed.ci_high, fe[1])
    _close(got.effect, ref.mean_effect_re)
    _close(got.se, ref.sd_eff_w_re)
    _close(got.ci_low, re_[0])
    _close(got.ci_high, re_[1])
    _close(got.q, ref.q)
    _close(got.i2, ref.i2)
    _close(got.tau2, ref.tau2)
    _close(got.q_p, ref.test_homogeneity().pvalue)
    assert got.tau2 > 0 and got.random.effect != got.fixed.effect


@pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")
def test_combine_effects_homogeneous_truncates_tau2():
    """Q < k - 1: statsmodels' DerSimonian-Laird tau^2 and I^2 go negative; here they are 0 and the
    random-effects result is the fixed-effect one."""
    y = np.array([0.05, 0.051, 0.049, 0.05])
    v = np.array([0.01, 0.02, 0.015, 0.01])
    ref = sm_meta.combine_effects(y, v, method_re="chi2", use_t=False)
    assert ref.tau2 < 0 and ref.i2 < 0
    for method in ("dl", "pm"):
        got = combine_effects(y, v, method=method)
        assert got.tau2 == 0.0 and got.i2 == 0.0
        assert got.effect == got.fixed.effect
        _close(got.fixed.effect, ref.mean_effect_fe)
        _close(got.q, ref.q)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(1e-4, 1.0)), min_size=2, max_size=12))
def test_paule_mandel_solves_its_equation(rows):
    y = np.array([r[0] for r in rows])
    v = np.array([r[1] for r in rows])
    tau2 = paule_mandel(y, v)
    assert tau2 >= 0
    w = 1 / (v + tau2)
    q = w @ (y - w @ y / w.sum()) ** 2
    if tau2 > 0:
        assert q == pytest.approx(len(y) - 1, rel=1e-9)
    else:
        assert q <= len(y) - 1 + 1e-9


def test_combine_effects_refusals():
    with pytest.raises(TierankInputError, match="at least two collections"):
        combine_effects([0.1], [0.01])
    with pytest.raises(TierankInputError, match="must be > 0"):
        combine_effects([0.1, 0.2], [0.01, 0.0])
    with pytest.raises(TierankInputError, match="2 effects but 3 variances"):
        combine_effects([0.1, 0.2], [0.01, 0.02, 0.03])
    with pytest.raises(TierankInputError, match="method must be one of"):
        combine_effects([0.1, 0.2], [0.01, 0.02], method="reml")


def test_public_entry_points():
    r = tierank.combine_effects([0.2, 0.1, 0.3], [0.01, 0.02, 0.01], method="pm")
    for key in ("effect", "ci_low", "ci_high", "q", "i2", "tau2"):
        assert math.isfinite(getattr(r, key))
    assert r.fixed.model == "fixed" and r.random.model == "random"
    assert tierank.topic_set_size(0.5) == 34


def test_pair_effect_tie_variance_is_added():
    a = np.array([0.5, 0.7, 0.2, 0.9, 0.4])
    b = np.array([0.4, 0.6, 0.3, 0.5, 0.4])
    va = np.array([0.02, 0.0, 0.0, 0.01, 0.0])
    no_ties = pair_effect("c", "A", "B", a, b)
    tied = pair_effect("c", "A", "B", a, b, va, None)
    d = a - b
    assert no_ties.var_tie == 0.0
    _close(no_ties.var_diff, np.var(d, ddof=1) / 5)
    _close(tied.var_tie, va.sum() / 25)
    _close(tied.var_diff, np.var(d, ddof=1) / 5 + va.sum() / 25)
    assert tied.var_dz > no_ties.var_dz
    with pytest.raises(TierankInputError, match="at least two"):
        pair_effect("c", "A", "B", [0.1], [0.2])


# --- topic set size ---------------------------------------------------------------------------


@pytest.mark.parametrize("effect", [0.1, 0.2, 0.35, 0.5, 0.8, 1.3])
@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.01, 0.9), (0.05, 0.5)])
def test_topic_set_size_paired_t_equals_statsmodels(effect, alpha, power):
    n_real = sm_power.TTestPower().solve_power(
        effect_size=effect, alpha=alpha, power=power, alternative="two-sided"
    )
    assert topic_set_size(effect, alpha=alpha, power=power) == max(2, math.ceil(n_real))


@pytest.mark.parametrize("f", [0.1, 0.25, 0.4])
@pytest.mark.parametrize("systems", [3, 5, 10, 30])
@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.01, 0.9)])
def test_topic_set_size_anova_equals_statsmodels(f, systems, alpha, power):
    total = sm_power.FTestAnovaPower().solve_power(
        effect_size=f, alpha=alpha, power=power, k_groups=systems
    )
    assert topic_set_size(f, alpha=alpha, power=power, systems=systems) == math.ceil(
        total / systems
    )


@pytest.mark.parametrize("n", [5, 20, 50, 150])
def test_power_and_minimal_detectable_equal_statsmodels(n):
    ref = sm_power.TTestPower()
    _close(achieved_power(0.3, n), ref.power(0.3, n, 0.05, alternative="two-sided"))
    d = ref.solve_power(nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
    # statsmodels' solver stops at its own tolerance (about 1e-8 here); ours solves to 1e-14, so
    # its power equals the target to 1e-10
    mdd = minimal_detectable(n, sd=0.17)
    _close(mdd, 0.17 * d, 1e-6)
    _close(achieved_power(mdd / 0.17, n), 0.8)
    # ANOVA: the minimum detectable range is sqrt(2 m) sd f, f from FTestAnovaPower with nobs = m n
    f = sm_power.FTestAnovaPower().solve_power(nobs=5 * n, alpha=0.05, power=0.8, k_groups=5)
    mdr = minimal_detectable(n, sd=0.2, systems=5)
    _close(mdr, f * 0.2 * math.sqrt(10), 1e-6)
    _close(range_to_f(mdr, 0.2, 5), f, 1e-6)
    _close(sm_power.FTestAnovaPower().power(range_to_f(mdr, 0.2, 5), 5 * n, 0.05, k_groups=5), 0.8)


def test_topic_set_size_and_minimal_detectable_are_inverse():
    for d in (0.15, 0.4, 0.9):
        n = topic_set_size(d)
        assert minimal_detectable(n) <= d < minimal_detectable(n - 1)


def test_planning_refusals():
    with pytest.raises(TierankInputError, match="effect must be a finite number > 0"):
        topic_set_size(0.0)
    with pytest.raises(TierankInputError, match="power must be in"):
        topic_set_size(0.5, power=0.01)
    with pytest.raises(TierankInputError, match="systems must be an integer in"):
        topic_set_size(0.5, systems=1)
    with pytest.raises(TierankInputError, match="more than"):
        topic_set_size(1e-6)
    with pytest.raises(TierankInputError, match="topics must be an integer in"):
        minimal_detectable(1)
    with pytest.raises(TierankInputError, match="needs at least two"):
        pilot_variance([[0.1, 0.2]])
    with pytest.raises(TierankInputError, match="at least two systems"):
        pilot_variance([[0.1], [0.2]])


def test_pilot_variance():
    rng = np.random.default_rng(4)
    E = rng.uniform(0, 1, (30, 4))
    V = rng.uniform(0, 0.01, (30, 4))
    pv = pilot_variance(E, V)
    # residual mean square of the one-way ANOVA = pooled within-system variance
    _close(pv.sigma2_sampling, np.var(E, axis=0, ddof=1).mean())
    i, j = np.triu_indices(4, 1)
    _close(
        pv.sigma2_diff_sampling, np.mean([np.var(E[:, a] - E[:, b], ddof=1) for a, b in zip(i, j)])
    )
    _close(pv.sigma2, pv.sigma2_sampling + V.mean())
    _close(pv.sigma2_diff, pv.sigma2_diff_sampling + 2 * V.mean())
    assert pilot_variance(E).tie == 0.0


def test_power_with_many_topics_is_finite():
    """scipy's nct.cdf gives NaN in the far lower tail (n = 300, d_z = 0.5); the power does not."""
    p = achieved_power(0.5, 300)
    assert math.isfinite(p) and p == pytest.approx(1.0, abs=1e-9)
    assert 0.0 < minimal_detectable(300) < 0.2
    # with many topics the t-test is the z-test: d = (z_{1-alpha/2} + z_power) / sqrt(n)
    from scipy.stats import norm

    z = (norm.isf(0.025) + norm.isf(0.2)) / 100
    assert minimal_detectable(10_000) == pytest.approx(z, rel=1e-3)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(1e-4, 0.5)), min_size=2, max_size=30))
def test_dersimonian_laird_equals_statsmodels_on_any_input(rows):
    y = np.array([r[0] for r in rows])
    v = np.array([r[1] for r in rows])
    got = combine_effects(y, v, method="dl")
    with warnings.catch_warnings():  # its sqrt of a negative variance where tau^2 < 0
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = sm_meta.combine_effects(y, v, method_re="chi2", use_t=False)
    _close(got.fixed.effect, ref.mean_effect_fe)
    _close(got.q, ref.q)
    if ref.tau2 > 0:
        _close(got.tau2, ref.tau2)
        _close(got.effect, ref.mean_effect_re)
        _close(got.se, ref.sd_eff_w_re)
        _close(got.i2, ref.i2)
    else:  # statsmodels leaves tau^2 (and I^2) negative; here 0 and the fixed-effect result
        assert got.tau2 == 0.0 and got.i2 == 0.0 and got.effect == got.fixed.effect
