"""Confidence intervals: of each system's mean (Student's t, bootstrap percentile or BCa:
[`mean_cis`][tierank.analysis.inference.mean_cis]), of a reported mean with the ties left to chance too
([`combined_se`][tierank.analysis.inference.combined_se]), and the pieces the pairs' intervals share
(`t_interval`, `bootstrap_interval`, Cohen's d_z's `dz_interval`)."""

from __future__ import annotations

import math

import numpy as np

from ...errors import TierankInputError
from .resampling import bootstrap_means
from .results import CombinedSE, MeanCI
from .settings import DEFAULT_RESAMPLES, check_ci_method, check_sampling, matrix


def _quantiles(theta_b: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per column ``j`` of ``theta_b`` (B x S), the linear-interpolation quantiles at ``probs[:, j]``
    (as ``numpy.percentile`` / ``scipy.stats.quantile`` compute them)."""
    B = theta_b.shape[0]
    srt = np.sort(theta_b, axis=0)
    pos = np.clip(probs * (B - 1), 0, B - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, B - 1)
    frac = pos - lo
    cols = np.arange(theta_b.shape[1])[None, :]
    return srt[lo, cols] * (1 - frac) + srt[hi, cols] * frac


def _bca_probs(X: np.ndarray, theta_b: np.ndarray, alpha: float) -> np.ndarray:
    """The BCa quantile levels (2 x S) for the means of the columns of X (Efron & Tibshirani
    Eq. 14.14-14.15; the jackknife of a mean is ``(sum - x_i) / (n - 1)``)."""
    from scipy.special import ndtr, ndtri

    n = X.shape[0]
    theta = X.mean(axis=0)
    B = theta_b.shape[0]
    below = (theta_b < theta).sum(axis=0) + (theta_b <= theta).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(below / (2.0 * B))
        jack = (X.sum(axis=0) - X) / (n - 1)
        u = (n - 1) * (jack.mean(axis=0) - jack)
        a = (np.sum(u**3, axis=0) / n**3) / (6.0 * (np.sum(u**2, axis=0) / n**2) ** 1.5)
        z = ndtri(np.array([alpha / 2, 1 - alpha / 2]))[:, None]
        num = z0 + z
        probs = ndtr(z0 + num / (1 - a * num))
    return probs


def bootstrap_interval(
    X: np.ndarray, theta_b: np.ndarray, method: str, level: float
) -> tuple[np.ndarray, np.ndarray]:
    alpha = 1.0 - level
    S = X.shape[1]
    if method == "percentile":
        probs = np.tile(np.array([[alpha / 2], [1 - alpha / 2]]), (1, S))
    else:
        probs = _bca_probs(X, theta_b, alpha)
    lo = np.full(S, np.nan)
    hi = np.full(S, np.nan)
    if X.shape[0] < 2:  # one query: every resample is that query, the interval says nothing
        return lo, hi
    ok = np.all(np.isfinite(probs), axis=0)
    const = np.ptp(X, axis=0) == 0  # every resample equals the mean: the interval is the point
    lo[const] = hi[const] = X[0, const]
    use = ok & ~const
    if np.any(use):
        q = _quantiles(theta_b[:, use], probs[:, use][0][None, :])[0]
        r = _quantiles(theta_b[:, use], probs[:, use][1][None, :])[0]
        lo[use], hi[use] = q, r
    return lo, hi


def t_interval(X: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from scipy.stats import t as student

    n = X.shape[0]
    mean = X.mean(axis=0)
    if n < 2:
        nan = np.full(X.shape[1], np.nan)
        return nan, nan.copy(), nan.copy()
    se = X.std(axis=0, ddof=1) / math.sqrt(n)
    # scipy.stats.t.interval(level, n - 1, loc=mean, scale=se), term for term
    q_lo, q_hi = student.ppf((1 - level) / 2, n - 1), student.ppf((1 + level) / 2, n - 1)
    return q_lo * se + mean, q_hi * se + mean, se


def mean_cis(
    values,
    names=None,
    *,
    method: str = "bca",
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    boot: np.ndarray | None = None,
) -> tuple[MeanCI, ...]:
    """Confidence intervals of the mean of each column of ``values`` (queries x systems).

    Parameters
    ----------
    values
        ``(n, S)`` per-query values (tie-aware: the expected values), or ``(n,)`` for one system.
    names
        ``S`` system names (default ``s0, s1, ...``).
    method
        ``"t"`` (Student's t, as ``scipy.stats.t.interval``), ``"percentile"`` or ``"bca"``
        (bootstrap, as ``scipy.stats.bootstrap``).
    level
        Confidence level.
    resamples, seed
        Bootstrap resamples and seed ([`bootstrap_means`][tierank.analysis.inference.bootstrap_means]); ignored by ``t``.
    boot
        Optional precomputed [`bootstrap_means`][tierank.analysis.inference.bootstrap_means] of ``values`` with ``resamples`` and ``seed``.

    Returns
    -------
    tuple of MeanCI

    Examples
    --------
    >>> cis = mean_cis([[0.1], [0.5], [0.6], [0.9]], ["A"], method="percentile", resamples=2000, seed=7)
    >>> c = cis[0]
    >>> c.ci_method, c.method, c.samples, c.seed, c.ci_low < c.mean < c.ci_high
    ('percentile', 'bootstrap', 2000, 7, True)
    """
    X, names = matrix(values, names)
    check_sampling(level, resamples, seed, "resamples")
    check_ci_method(method)
    if method == "t":
        return _t_cis(X, names, level)
    theta_b = bootstrap_means(X, resamples, seed) if boot is None else boot
    return _bootstrap_cis(X, names, theta_b, method, level, (resamples, seed))


def _t_cis(X: np.ndarray, names: tuple[str, ...], level: float) -> tuple[MeanCI, ...]:
    """Student's t interval of every column's mean (`mean_cis` with ``method="t"``)."""
    lo, hi, se = t_interval(X, level)
    return _column_cis(X, names, (lo, hi, se), "t", level, "analytic")


def _bootstrap_cis(
    X: np.ndarray,
    names: tuple[str, ...],
    theta_b: np.ndarray,
    method: str,
    level: float,
    drawn: tuple[int, int],
) -> tuple[MeanCI, ...]:
    """The bootstrap interval ``method`` of every column's mean from its resampled means ``theta_b``
    (``drawn``: how many resamples, from which seed); ``se`` their standard deviation."""
    resamples, seed = drawn
    lo, hi = bootstrap_interval(X, theta_b, method, level)
    se = theta_b.std(axis=0, ddof=1) if resamples > 1 else np.full(X.shape[1], np.nan)
    return _column_cis(
        X, names, (lo, hi, se), method, level, "bootstrap", int(resamples), int(seed)
    )


def _column_cis(
    X: np.ndarray,
    names: tuple[str, ...],
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray],
    ci_method: str,
    level: float,
    method: str,
    samples: int | None = None,
    seed: int | None = None,
) -> tuple[MeanCI, ...]:
    """One `MeanCI` per column of ``X`` from its interval ``bounds`` (low, high, standard error)."""
    return tuple(
        MeanCI(
            name=nm,
            mean=float(m),
            ci_low=float(a),
            ci_high=float(b),
            ci_method=ci_method,
            level=level,
            n=X.shape[0],
            se=float(s),
            method=method,
            samples=samples,
            seed=seed,
        )
        for nm, m, a, b, s in zip(names, X.mean(axis=0), *bounds)
    )


def combined_se(expected, var, names=None, *, level: float = 0.95) -> tuple[CombinedSE, ...]:
    """Standard error of a reported mean when both the queries and the tie orderings are left to
    chance: ``sqrt(sum_q v_q / n^2 + s_e^2 / n)`` (law of total variance, module docstring).

    Examples
    --------
    >>> c = combined_se([[0.5], [1.0], [0.0]], [[0.25], [0.0], [0.0]])[0]
    >>> round(c.se_tie, 4), round(c.se_sampling, 4), round(c.se_combined, 4)
    (0.1667, 0.2887, 0.3333)
    """
    from scipy.stats import norm

    E, names = matrix(expected, names)
    V, _ = matrix(var, names)
    if V.shape != E.shape or np.any(V < 0):
        raise TierankInputError("combined_se: var must match expected in shape and be >= 0")
    n = E.shape[0]
    mean = E.mean(axis=0)
    se_tie = np.sqrt(V.sum(axis=0)) / n
    se_s = E.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full(E.shape[1], np.nan)
    se_c = np.sqrt(se_tie**2 + se_s**2)
    z = float(norm.ppf(0.5 + level / 2))
    return tuple(
        CombinedSE(
            name=nm,
            mean=float(m),
            se_tie=float(a),
            se_sampling=float(b),
            se_combined=float(c),
            ci_low=float(m - z * c),
            ci_high=float(m + z * c),
            level=level,
        )
        for nm, m, a, b, c in zip(names, mean, se_tie, se_s, se_c)
    )


def dz_interval(dz: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """CI of Cohen's d_z by inverting the noncentral t distribution of ``t = sqrt(n) d_z`` (df
    ``n - 1``): the noncentrality ``nc`` with ``P(T <= t_obs; nc) = 1 - alpha/2`` (low) and
    ``alpha/2`` (high), divided by ``sqrt(n)``; bisection, vectorised over the pairs."""
    from scipy.stats import nct

    lo = np.full(dz.shape, np.nan)
    hi = np.full(dz.shape, np.nan)
    ok = np.isfinite(dz)
    if n < 2 or not np.any(ok):
        return lo, hi
    t_obs = dz[ok] * math.sqrt(n)
    df = n - 1
    alpha = 1.0 - level
    out = []
    # bracket: 8 standard errors of the normal approximation sd(nc) ~ sqrt(1 + t^2 / (2 df)),
    # widened until it holds the root (nct.cdf is costly: bisection to 1e-9 on a tight bracket)
    half = 8.0 * np.sqrt(1.0 + t_obs**2 / (2.0 * df)) + 1.0
    for target in (1 - alpha / 2, alpha / 2):  # cdf decreases in nc: low end first
        a, b = t_obs - half, t_obs + half
        with np.errstate(all="ignore"):
            for _ in range(60):
                bad_a = nct.cdf(t_obs, df, a) < target
                bad_b = nct.cdf(t_obs, df, b) > target
                if not (np.any(bad_a) or np.any(bad_b)):
                    break
                a = np.where(bad_a, a - 2 * half, a)
                b = np.where(bad_b, b + 2 * half, b)
            for _ in range(200):
                mid = 0.5 * (a + b)
                above = nct.cdf(t_obs, df, mid) > target  # nc too small
                a = np.where(above, mid, a)
                b = np.where(above, b, mid)
                if np.all(b - a <= 1e-9):
                    break
        out.append(0.5 * (a + b) / math.sqrt(n))
    lo[ok], hi[ok] = out
    return lo, hi
