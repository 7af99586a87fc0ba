"""Inference over the query sample, on tie-aware per-query values: confidence intervals, paired
tests, effect sizes, randomized Tukey HSD and rank intervals.

tierank's expected value ``E[M]`` already averages over every ordering of a run's tied
documents; what it does not say is how far the mean over *these* queries is from the mean over
the population of queries they were drawn from.  This module answers that, on the matrix of
per-query expected values (``n`` queries x ``S`` systems), with the usual tools of IR
significance testing (Sakai, *Statistical Reform in Information Retrieval?*, 2014; Carterette,
*Multiple testing in statistical analysis of systems-based information retrieval experiments*,
TOIS 2012; Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993):

* [`mean_cis`][tierank.analysis.inference.mean_cis]: per system, a confidence interval of the mean of the per-query expected
  values: Student's t (``scipy.stats.t``), bootstrap percentile or bootstrap BCa (Efron &
  Tibshirani 14.3 and Eq. 15.36, as ``scipy.stats.bootstrap`` computes it).  It covers the query
  sample only: the ties are averaged out by ``E`` (the tie interval ``[min, max]`` and the tie
  std of the mean, [`SystemSummary`][tierank.analysis.compare.SystemSummary], describe the other
  uncertainty; they shrink to nothing when the scores have no ties, the CI does not).
* [`paired_tests`][tierank.analysis.inference.paired_tests]: per pair of systems, on the paired per-query expected values: paired t,
  Wilcoxon signed-rank (``scipy.stats.wilcoxon``), Fisher's randomization test (sign flips of the
  differences; exact by enumeration when at most `EXACT_MAX` differences are nonzero,
  Monte Carlo otherwise) and a paired bootstrap test; every test two-sided on the mean
  difference.  Each pair also gets the mean difference with its CI and Cohen's ``d_z`` (mean
  over standard deviation of the differences) with its CI (inverting the noncentral t
  distribution of ``sqrt(n) d_z``; exact for normal differences, Cumming & Finch 2001).
* [`tukey_hsd`][tierank.analysis.inference.tukey_hsd]: randomized Tukey HSD (Carterette 2012): the per-query values are permuted
  across systems within each query, and each pair's absolute mean difference is compared with the
  permutation distribution of the largest difference (max - min of the systems' means); plus the
  groups it cannot separate as a compact letter display, and the systems indistinguishable from
  the best.
* [`rank_intervals`][tierank.analysis.inference.rank_intervals]: the 2.5-97.5% range of each system's rank over query-bootstrap
  resamples.

**Resampling and reproducibility.** Bootstrap resamples are drawn **once per query set**, from
``seed`` and the number of queries only, and the same resamples are used for every system (a
multinomial count matrix ``W``, ``B`` resamples x ``n`` queries, built in fixed-size chunks from one
``numpy.random.Generator(seed)``; the resampled means of all systems are one matrix product
``W @ X / n``). So a system's bootstrap CI depends on its own values, ``seed``, ``n`` and ``B`` only: it
does not change when other systems are added or removed, and all systems and all pairs are resampled
jointly, which is what rank intervals and paired bootstrap differences need (a per-system stream
seeded from the system's name would keep the first property but lose the second). The sign-flip
matrix of the Monte Carlo randomization test is shared by all pairs in the same way. Monte Carlo
p-values are ``(1 + hits) / (1 + samples)`` (Phipson & Smyth 2010: never 0), with the standard error
``sqrt(p (1 - p) / samples)``; they carry ``method``, ``samples`` and ``seed``.

**The combined view (law of total variance).** A user who reports the tie-oblivious mean reports one
draw of the tie orderings. Model query ``q`` as drawn at random from a population, and its oblivious
value, given the query, as ``M_q = e_q + eps_q`` where ``e_q`` is its expected value over tie
orderings and ``eps_q`` has mean 0 and variance ``v_q`` (tierank's per-query tie variance; an
arbitrary but fixed tie-break acts, for a query drawn at random, like one random ordering). For the
mean ``Mbar`` of ``n`` independently drawn queries, the law of total variance conditioning on the
drawn queries gives

    Var[Mbar] = E[ Var[Mbar | q_1..q_n] ] + Var[ E[Mbar | q_1..q_n] ]
              = E[v] / n + Var[e] / n,

since, given the queries, the ``eps_q`` are independent (``Var = sum_q v_q / n^2``) and
``E[Mbar | q] = mean_q e_q``.  Its plug-in estimate is
``se_combined^2 = sum_q v_q / n^2 + s_e^2 / n`` (``s_e^2``: the sample variance of the ``e_q``,
ddof 1): the tie variance of the mean (``SystemSummary.std ** 2``) plus the squared standard
error of the mean of the expected values.  [`combined_se`][tierank.analysis.inference.combined_se] returns it with a normal interval
``mean_e +- z se_combined``: where a reported (oblivious) mean may land around the population's
mean when both the queries and the tie orderings are left to chance.

Examples
--------
>>> import numpy as np
>>> X = np.array([[0.5, 0.4], [0.7, 0.6], [0.2, 0.3], [0.9, 0.5], [0.6, 0.6]])
>>> [round(c.ci_low, 4) for c in mean_cis(X, ["A", "B"], method="t")]
[0.2586, 0.3181]
>>> pt = paired_tests(X, ["A", "B"], test="randomization")[0]
>>> pt.method, pt.samples, round(pt.p, 4)   # 4 nonzero differences: all 16 sign flips
('exact', 16, 0.5)
"""

from __future__ import annotations

import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from itertools import combinations
from typing import Any

import numpy as np

from ..errors import TierankInputError
from .methods import CI_METHODS
from .paired import REGISTRY as PAIRED_TESTS
from .paired.base import EXACT_MAX, Outcome, Pairs, interval_supported, nonzero, sign_flip_floor
from .paired.base import REL_TOL as _REL_TOL
from .paired.base import chunks as _chunks
from .paired.randomization import randomization as _randomization
from .paired.wilcoxon import WILCOXON_EXACT_MAX, WILCOXON_PERMUTATION_MAX, wilcoxon_method  # noqa: F401 (re-exported)

#: default number of bootstrap resamples
DEFAULT_RESAMPLES = 10_000
#: default number of permutations (randomized Tukey HSD) and sign-flip samples (randomization test)
DEFAULT_PERMUTATIONS = 10_000
#: the names of the paired tests registered when this module was imported
#: (`tierank.analysis.paired.REGISTRY`, which `paired_tests` reads)
TESTS = tuple(PAIRED_TESTS)


# --- results --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanCI:
    """A confidence interval of one system's mean over queries.

    Attributes
    ----------
    name : str
    mean : float
        Mean of the per-query values.
    ci_low, ci_high : float
    ci_method : str
        ``"t"``, ``"percentile"`` or ``"bca"``.
    level : float
        Confidence level (0.95).
    n : int
        Number of queries.
    se : float
        Standard error of the mean: ``s / sqrt(n)`` for ``t``; the standard deviation of the
        resampled means for the bootstrap.
    method : str
        ``"analytic"`` or ``"bootstrap"``.
    samples, seed : int or None
        Resamples and seed where sampled.
    """

    name: str
    mean: float
    ci_low: float
    ci_high: float
    ci_method: str
    level: float
    n: int
    se: float
    method: str
    samples: int | None = None
    seed: int | None = None


@dataclass(frozen=True)
class CombinedSE:
    """Sampling plus tie variance of a reported mean (see the module docstring).

    ``se_tie = sqrt(sum v_q) / n``, ``se_sampling = s_e / sqrt(n)``,
    ``se_combined = sqrt(se_tie^2 + se_sampling^2)``; ``ci_low, ci_high = mean -+ z se_combined``.
    """

    name: str
    mean: float
    se_tie: float
    se_sampling: float
    se_combined: float
    ci_low: float
    ci_high: float
    level: float
    ci_method: str = "normal-combined"


@dataclass(frozen=True)
class PairTest:
    """A paired test of systems ``a`` and ``b`` on per-query values (``a`` minus ``b``).

    Attributes
    ----------
    a, b : str
    test : str
        One of `TESTS`.
    statistic : float
        t for ``t``; W (scipy's) for ``wilcoxon``; the mean difference for ``randomization`` and
        ``bootstrap``.
    p : float
        Two-sided p-value.  1.0 when every difference is zero.
    method : str
        How ``p`` was computed: ``"analytic"`` (t), Wilcoxon's ``"exact"``, ``"permutation"`` or
        ``"approx"`` ([`wilcoxon_method`][tierank.analysis.inference.wilcoxon_method]), ``"exact"`` (all sign flips) or ``"monte-carlo"``.
    samples, seed : int or None
        Sign flips / resamples and seed where sampled (``samples``: 2^m for the exact test).
    se : float or None
        Monte Carlo standard error of ``p``, where sampled.
    mean_diff, diff_ci_low, diff_ci_high : float
        The mean difference and its CI (``diff_ci_method``: ``t``, ``percentile`` or ``bca``).
    effect_size, effect_ci_low, effect_ci_high : float
        Cohen's ``d_z = mean(d) / sd(d)`` (ddof 1) and its CI (noncentral t); NaN where
        ``sd(d) = 0``.
    test_used : str
        The test that gave ``p``: ``test``, or ``"randomization"`` where ``test`` cannot decide
        (``fallback`` says why).
    fallback : str or None
        Why the exact randomization test answered instead of ``test`` (its statistic undefined, or
        too few queries for its null distribution), or None.
    t : float
        The paired t statistic, whatever ``test``: 0.0 where every difference is zero, NaN where it
        is undefined (one query, or equal differences).
    p_test : float
        The p-value the test computed (scipy's, the sign flips', the bootstrap's), before the floor.
    p_floor : float
        The smallest p-value exact sign-flip randomization can reach on the pair's ``m`` nonzero
        differences, ``2 / 2^m`` (1 where ``m <= 1``; `tierank.analysis.paired.base.sign_flip_floor`):
        ``p = max(p_test, p_floor)``, so that no test claims from few queries a significance that
        exact randomization on the same differences could never reach.  The intervals
        (``diff_ci_*``, ``effect_ci_*``) follow the same rule: NaN where ``p_floor >= 1 - level``
        (no significance at ``alpha = 1 - level`` is reachable, so no interval can exclude 0
        honestly).
    """

    a: str
    b: str
    test: str
    statistic: float
    p: float
    method: str
    samples: int | None
    seed: int | None
    se: float | None
    mean_diff: float
    diff_ci_low: float
    diff_ci_high: float
    diff_ci_method: str
    effect_size: float
    effect_ci_low: float
    effect_ci_high: float
    level: float = 0.95
    test_used: str = ""
    fallback: str | None = None
    t: float = float("nan")
    p_test: float = float("nan")
    p_floor: float = float("nan")


@dataclass(frozen=True)
class TukeyHSD:
    """Randomized Tukey HSD over ``S`` systems.

    Attributes
    ----------
    names : tuple of str
        Systems, in the order given.
    means : numpy.ndarray
        ``(S,)`` means.
    p : numpy.ndarray
        ``(S, S)`` symmetric matrix of p-values ``(1 + #{t: range_t >= |mean_i - mean_j|}) / (1 + T)``
        (``p_test``), each at least the floor of every paired p-value, ``2 / 2^m`` with ``m`` the
        pair's nonzero per-query differences (`tierank.analysis.paired.base.sign_flip_floor`); 1 on
        the diagonal.  The groups and ``best`` read ``p``.
    alpha : float
    groups : tuple of str
        Per system (order of ``names``), the compact letter display: systems sharing a letter are
        not separated at ``alpha``; ``a`` is the group of the best system.
    best : tuple of str
        Systems not separated from the best (highest mean) one, the best included.
    samples, seed : int
    """

    names: tuple[str, ...]
    means: np.ndarray
    p: np.ndarray
    alpha: float
    groups: tuple[str, ...]
    best: tuple[str, ...]
    samples: int
    seed: int
    method: str = "monte-carlo"
    p_test: np.ndarray | None = None

    def pvalue(self, a: str, b: str) -> float:
        """The p-value of the pair ``a``, ``b``."""
        i, j = self.names.index(a), self.names.index(b)
        return float(self.p[i, j])


@dataclass(frozen=True)
class RankIntervals:
    """Ranks of ``S`` systems by mean (1 = best; equal means share the better rank) and the
    ``[low, high]`` quantiles of each system's rank over query-bootstrap resamples."""

    names: tuple[str, ...]
    rank: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    samples: int
    seed: int
    method: str = "bootstrap"
    tie_samples: int | None = None


# --- validation -----------------------------------------------------------------------------------


def _matrix(values, names) -> tuple[np.ndarray, tuple[str, ...]]:
    X = np.asarray(values, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0:
        raise TierankInputError(
            f"inference: need a matrix of per-query values (queries x systems), got shape {X.shape}"
        )
    if not np.all(np.isfinite(X)):
        raise TierankInputError("inference: per-query values must be finite")
    names = (
        tuple(str(n) for n in names)
        if names is not None
        else tuple(f"s{i}" for i in range(X.shape[1]))
    )
    if len(names) != X.shape[1]:
        raise TierankInputError(f"inference: {len(names)} names for {X.shape[1]} systems")
    return X, names


def check_sampling(level: float, count: int, seed, what: str) -> None:
    """Refuse a confidence ``level`` outside (0, 1), a ``count`` (``what``: resamples, samples,
    permutations) that is not a positive integer, or a negative ``seed``."""
    if not (isinstance(level, (int, float)) and 0.0 < level < 1.0):
        raise TierankInputError(f"inference: level must be in (0, 1), got {level!r}")
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise TierankInputError(f"inference: {what} must be a positive integer, got {count!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise TierankInputError(f"inference: seed must be an integer >= 0, got {seed!r}")


# --- resampling -----------------------------------------------------------------------------------


def resample_counts(n: int, resamples: int, seed: int):
    """Yield the bootstrap count matrices (``chunk x n``, how often each query is drawn in each
    resample), ``resamples`` rows in all, from ``numpy.random.default_rng(seed)``.

    The rows depend on ``n``, ``resamples``'s prefix and ``seed`` only (the chunk sizes are a
    function of ``n``), never on the values being resampled.
    """
    check_sampling(0.5, resamples, seed, "resamples")
    rng = np.random.default_rng(seed)
    for c in _chunks(resamples, n):
        idx = rng.integers(0, n, size=(c, n), dtype=np.int32 if c * n < 2**31 else np.int64)
        idx += (np.arange(c, dtype=idx.dtype) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=c * n).reshape(c, n)


def bootstrap_means(values, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``(resamples, S)`` bootstrap means of the columns of ``values`` (queries x systems), all
    columns resampled with the same query draws ([`resample_counts`][tierank.analysis.inference.resample_counts]).

    Examples
    --------
    >>> bootstrap_means([[1.0], [1.0], [1.0]], 4, seed=1).ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    X, _ = _matrix(values, None)
    n = X.shape[0]
    out = np.empty((resamples, X.shape[1]))
    start = 0
    for W in resample_counts(n, resamples, seed):
        out[start : start + len(W)] = (W.astype(np.float64) @ X) / n
        start += len(W)
    return out


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


def _boot_ci(
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


def _t_ci(X: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


# --- per system -----------------------------------------------------------------------------------


def _check_ci_method(method: str) -> None:
    if method not in CI_METHODS:
        raise TierankInputError(
            f"inference: unknown CI method {method!r}; accepted: {', '.join(CI_METHODS)}"
        )


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
    X, names = _matrix(values, names)
    check_sampling(level, resamples, seed, "resamples")
    _check_ci_method(method)
    if method == "t":
        return _t_cis(X, names, level)
    theta_b = bootstrap_means(X, resamples, seed) if boot is None else boot
    return _bootstrap_cis(X, names, theta_b, method, level, (resamples, seed))


def _t_cis(X: np.ndarray, names: tuple[str, ...], level: float) -> tuple[MeanCI, ...]:
    """Student's t interval of every column's mean (`mean_cis` with ``method="t"``)."""
    lo, hi, se = _t_ci(X, level)
    return tuple(
        MeanCI(
            name=nm,
            mean=float(m),
            ci_low=float(a),
            ci_high=float(b),
            ci_method="t",
            level=level,
            n=X.shape[0],
            se=float(s),
            method="analytic",
        )
        for nm, m, a, b, s in zip(names, X.mean(axis=0), lo, hi, se)
    )


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
    lo, hi = _boot_ci(X, theta_b, method, level)
    se = theta_b.std(axis=0, ddof=1) if resamples > 1 else np.full(X.shape[1], np.nan)
    return tuple(
        MeanCI(
            name=nm,
            mean=float(m),
            ci_low=float(a),
            ci_high=float(b),
            ci_method=method,
            level=level,
            n=X.shape[0],
            se=float(s),
            method="bootstrap",
            samples=int(resamples),
            seed=int(seed),
        )
        for nm, m, a, b, s in zip(names, X.mean(axis=0), lo, hi, se)
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

    E, names = _matrix(expected, names)
    V, _ = _matrix(var, names)
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


# --- per pair -------------------------------------------------------------------------------------


def _dz_ci(dz: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
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


@dataclass(frozen=True)
class PairedSettings:
    """How [`paired_tests`][tierank.analysis.inference.paired_tests] tests pairs: one frozen value,
    validated when built.

    Attributes
    ----------
    test
        A registered paired test (`tierank.analysis.paired.REGISTRY`): ``"t"``
        (``scipy.stats.ttest_rel``), ``"wilcoxon"`` (``scipy.stats.wilcoxon``, its defaults: zero
        differences dropped, exact or normal as scipy chooses), ``"randomization"`` (Fisher's
        sign-flip test of the mean difference: exact when at most `EXACT_MAX` differences are
        nonzero, else ``samples`` Monte Carlo sign flips) or ``"bootstrap"`` (the centred bootstrap
        distribution of the mean difference: ``p = (1 + #{|dbar* - dbar| >= |dbar|}) / (1 +
        resamples)``).  Where the test cannot decide (t with one query or equal differences; the
        bootstrap with at most `EXACT_MAX` nonzero differences) the exact randomization test
        answers, labelled (``test_used``, ``fallback``).
    level
        Confidence level of the mean difference's and the effect size's intervals.
    ci
        Method of the mean difference's CI: ``"t"``, ``"percentile"`` or ``"bca"``.
    resamples, samples, seed
        Bootstrap resamples, Monte Carlo sign flips and seed.

    Examples
    --------
    >>> PairedSettings(test="wilcoxon").ci
    't'
    >>> PairedSettings(test="z")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: inference: unknown test 'z'; accepted: t, wilcoxon, randomization, bootstrap
    """

    test: str = "t"
    level: float = 0.95
    ci: str = "t"
    resamples: int = DEFAULT_RESAMPLES
    samples: int = DEFAULT_PERMUTATIONS
    seed: int = 0

    def __post_init__(self) -> None:
        check_sampling(self.level, self.resamples, self.seed, "resamples")
        check_sampling(self.level, self.samples, self.seed, "samples")
        if self.test not in PAIRED_TESTS:
            raise TierankInputError(
                f"inference: unknown test {self.test!r}; accepted: {', '.join(PAIRED_TESTS)}"
            )
        _check_ci_method(self.ci)

    @property
    def bootstrap(self) -> bool:
        """Whether the pairs need the bootstrap means of the values: a test that draws on them
        (``PairedTest.bootstrap``) or a bootstrap CI."""
        return PAIRED_TESTS[self.test].bootstrap or self.ci != "t"

    @classmethod
    def of(cls, settings: PairedSettings | None, keywords: dict[str, Any]) -> PairedSettings:
        """``settings`` (default: the defaults) with the fields ``keywords`` names; an unknown
        keyword is a `TypeError`, as Python's own."""
        unknown = sorted(set(keywords) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"paired_tests() got an unexpected keyword argument {unknown[0]!r}")
        return replace(settings, **keywords) if settings is not None else cls(**keywords)


def paired_tests(
    values,
    names=None,
    *,
    pairs=None,
    boot: np.ndarray | None = None,
    settings: PairedSettings | None = None,
    **keywords: Any,
) -> tuple[PairTest, ...]:
    """Paired two-sided tests of pairs of columns of ``values`` (queries x systems), ``a`` minus ``b``.

    Parameters
    ----------
    values, names
        As [`mean_cis`][tierank.analysis.inference.mean_cis].
    pairs
        ``(a, b)`` name pairs; default every pair ``i < j`` in the order of ``names``.
    boot
        Optional precomputed [`bootstrap_means`][tierank.analysis.inference.bootstrap_means] of ``values`` (same resamples and seed).
    settings
        The test, the intervals' level and method, the resamples, sign flips and seed: a
        [`PairedSettings`][tierank.analysis.inference.PairedSettings] (default: its defaults).
    keywords
        Any field of [`PairedSettings`][tierank.analysis.inference.PairedSettings] by name (``test``,
        ``level``, ``ci``, ``resamples``, ``samples``, ``seed``), applied over ``settings``.

    Examples
    --------
    >>> X = [[0.9, 0.1], [0.8, 0.3], [0.7, 0.6], [0.6, 0.2]]
    >>> [(p.test, round(p.p_test, 4), p.p) for t in TESTS[:3] for p in paired_tests(X, ["A", "B"], test=t)]
    [('t', 0.0526, 0.125), ('wilcoxon', 0.125, 0.125), ('randomization', 0.125, 0.125)]

    4 nonzero differences: no p below ``2 / 2^4`` (`PairTest`'s ``p_floor``), whatever the test.
    """
    X, names = _matrix(values, names)
    s = PairedSettings.of(settings, keywords)
    ij = _pair_columns(names, pairs)
    ctx = _t_statistics(X, ij, _pairs_of(X, ij, s, boot))
    return _pair_tests(
        names, ij, ctx, _decided(PAIRED_TESTS[s.test].implementation(), ctx, s.test), s
    )


def _pairs_of(X: np.ndarray, ij: np.ndarray, s: PairedSettings, boot: np.ndarray | None) -> Pairs:
    """What every test receives about the pairs ``ij`` of columns of ``X``: their differences, which
    are all zero, and their bootstrap means where ``s`` needs them (``boot``, or drawn here); the t
    statistics not yet (`_t_statistics`)."""
    D = X[:, ij[:, 0]] - X[:, ij[:, 1]]  # n x P
    tol = _REL_TOL * np.maximum(1.0, np.abs(X).max(initial=0.0))
    boot_d = None
    if s.bootstrap:
        if boot is None:
            boot = bootstrap_means(X, s.resamples, s.seed)
        boot_d = boot[:, ij[:, 0]] - boot[:, ij[:, 1]]
    return Pairs(
        D=D,
        zero=np.all(np.abs(D) <= tol, axis=0),
        tol=tol,
        mean_d=D.mean(axis=0),
        t=np.zeros(0),
        t_p=np.zeros(0),
        samples=s.samples,
        resamples=s.resamples,
        seed=s.seed,
        boot_d=boot_d,
    )


def _pair_tests(
    names: tuple[str, ...],
    ij: np.ndarray,
    ctx: Pairs,
    decided: tuple[Outcome, list[str], list[str | None]],
    s: PairedSettings,
) -> tuple[PairTest, ...]:
    """One [`PairTest`][tierank.analysis.inference.PairTest] per pair from its test's outcome (`_decided`)
    and its intervals; where every difference is zero, ``p = 1`` and the statistic 0 (no evidence at
    all: the tests are undefined there)."""
    out, used, fallback = decided
    raw = np.where(ctx.zero, 1.0, out.p)
    m = nonzero(ctx.D, ctx.tol)
    floor = sign_flip_floor(m)
    p = np.maximum(raw, floor)  # the floor of every test (NaN stays NaN)
    stat = np.where(ctx.zero, 0.0, out.statistic)
    dlo, dhi, dz, elo, ehi = _difference_intervals(ctx, s.ci, s.level)
    refused = np.array([not interval_supported(int(mk), s.level) for mk in m], dtype=bool)
    for arr in (dlo, dhi, elo, ehi):
        arr[refused] = np.nan
    return tuple(
        PairTest(
            a=names[i],
            b=names[j],
            test=s.test,
            statistic=float(stat[k]),
            p=float(p[k]),
            method=out.method[k],
            samples=out.samples[k],
            seed=out.seed[k],
            se=out.se[k],
            mean_diff=float(ctx.mean_d[k]),
            diff_ci_low=float(dlo[k]),
            diff_ci_high=float(dhi[k]),
            diff_ci_method=s.ci,
            effect_size=float(dz[k]),
            effect_ci_low=float(elo[k]),
            effect_ci_high=float(ehi[k]),
            level=s.level,
            test_used=used[k],
            fallback=fallback[k],
            t=float(ctx.t[k]),
            p_test=float(raw[k]),
            p_floor=float(floor[k]),
        )
        for k, (i, j) in enumerate(ij)
    )


def _pair_columns(names: tuple[str, ...], pairs) -> np.ndarray:
    """The column indices ``(P, 2)`` of the ``pairs`` of names (every pair ``i < j`` by default)."""
    index = {nm: i for i, nm in enumerate(names)}
    if pairs is None:
        pairs = list(combinations(names, 2))
    try:
        return np.array([(index[a], index[b]) for a, b in pairs], dtype=np.int64).reshape(-1, 2)
    except KeyError as e:
        raise TierankInputError(f"inference: unknown system {e.args[0]!r}") from None


def _t_statistics(X: np.ndarray, ij: np.ndarray, ctx: Pairs) -> Pairs:
    """``ctx`` with every pair's paired t statistic and p-value, whatever the test (computed once): 0.0
    where every difference is zero, NaN where t is undefined (the t-test's ``undecidable``)."""
    from scipy.stats import ttest_rel

    P = ctx.D.shape[1]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = ttest_rel(X[:, ij[:, 0]], X[:, ij[:, 1]], axis=0)
    t_stat = np.where(ctx.zero, 0.0, np.asarray(res.statistic, dtype=np.float64).reshape(P))
    ctx = replace(ctx, t=t_stat, t_p=np.asarray(res.pvalue, np.float64).reshape(P))
    t_undefined = [r is not None for r in PAIRED_TESTS["t"].implementation().undecidable(ctx)]
    t_stat[t_undefined] = np.nan
    return replace(ctx, t=t_stat)


def _decided(impl, ctx: Pairs, test: str) -> tuple[Outcome, list[str], list[str | None]]:
    """The outcome of the test ``impl`` on every pair; where it cannot decide (its statistic undefined,
    or its null distribution biased at this size), the exact randomization test's instead, and says
    so: the test used per pair and why it fell back (None where it did not)."""
    out = impl.run(ctx)
    P = ctx.D.shape[1]
    used = [test] * P
    fallback = impl.undecidable(ctx) if hasattr(impl, "undecidable") else [None] * P
    redo = [k for k in range(P) if fallback[k] is not None]
    if redo:
        r = _randomization(ctx.D[:, redo], ctx.tol, ctx.samples, ctx.seed)
        for pos, col in enumerate(redo):
            out.statistic[col], out.p[col], out.method[col] = (
                ctx.mean_d[col],
                r.p[pos],
                r.method[pos],
            )
            out.samples[col], out.seed[col], out.se[col] = r.samples[pos], r.seed[pos], r.se[pos]
            used[col] = "randomization"
    return out, used, fallback


def _difference_intervals(ctx: Pairs, ci: str, level: float):
    """Per pair: the mean difference's CI (``ci``), Cohen's d_z and its CI (noncentral t)."""
    D = ctx.D
    n, P = D.shape
    if ci == "t":
        dlo, dhi, _ = _t_ci(D, level)
    else:
        assert ctx.boot_d is not None  # ci != "t" needs the bootstrap
        dlo, dhi = _boot_ci(D, ctx.boot_d, ci, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = D.std(axis=0, ddof=1) if n > 1 else np.full(P, np.nan)
        dz = np.where(sd > 0, ctx.mean_d / sd, np.nan)
    elo, ehi = _dz_ci(dz, n, level)
    return dlo, dhi, dz, elo, ehi


# --- many systems ---------------------------------------------------------------------------------

#: permutations per block of `permutation_ranges`: block ``k`` draws from ``default_rng([seed, k])``,
#: so the result does not depend on how many threads share the blocks
_PERM_BLOCK = 500


def _ranges_block(X: np.ndarray, n: int, count: int, seed: int, block: int) -> np.ndarray:
    """``count`` permutation ranges of block ``block`` (see [`permutation_ranges`][tierank.analysis.inference.permutation_ranges])."""
    m, S = X.shape
    rng = np.random.default_rng([seed, block])
    out = np.empty(count)
    start = 0
    for c in _chunks(count, m * S):
        V = np.empty((c, m, S))
        V[...] = X
        rng.permuted(V, axis=-1, out=V)
        means = V.sum(axis=1) / n
        out[start : start + c] = means.max(axis=1) - means.min(axis=1)
        start += c
    return out


def default_jobs() -> int:
    """Threads [`permutation_ranges`][tierank.analysis.inference.permutation_ranges] uses by default: the CPUs this process may run on, at most 2."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(2, cpus))


def permutation_ranges(
    values, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, *, jobs: int | None = None
) -> np.ndarray:
    """The ``(permutations,)`` largest differences of column means (max - min) after permuting each
    row of ``values`` (queries x systems) independently and uniformly (``Generator.permuted``).

    Reproducible from ``seed`` and the values, whatever ``jobs``: the permutations come in blocks
    of 500, block ``k`` drawn from ``numpy.random.default_rng([seed, k])``; ``jobs`` threads share the
    blocks (``None``: [`default_jobs`][tierank.analysis.inference.default_jobs], up to 2; ``Generator.permuted`` releases the GIL, so the
    threads run in parallel without the start-up and copying cost of processes).

    A query whose systems all score the same adds the same to every system's sum whatever the
    permutation, so it cannot change a difference: such rows are left out of the permuting (exact;
    on IR data, where every system often scores 0 on a query, it saves their share of the work).
    The cost is ``permutations x n x S`` element moves; it dominates [`tukey_hsd`][tierank.analysis.inference.tukey_hsd]."""
    X, _ = _matrix(values, None)
    check_sampling(0.5, permutations, seed, "permutations")
    if jobs is None:
        jobs = default_jobs()
    if not (isinstance(jobs, (int, np.integer)) and not isinstance(jobs, bool) and jobs >= 1):
        raise TierankInputError(f"inference: jobs must be a positive integer, got {jobs!r}")
    n = X.shape[0]
    X = np.ascontiguousarray(X[np.ptp(X, axis=1) > 0])
    if X.shape[0] == 0:
        return np.zeros(permutations)
    counts = [min(_PERM_BLOCK, permutations - k) for k in range(0, permutations, _PERM_BLOCK)]
    if jobs == 1 or len(counts) == 1:
        parts = [_ranges_block(X, n, c, seed, k) for k, c in enumerate(counts)]
    else:
        with ThreadPoolExecutor(max_workers=min(int(jobs), len(counts))) as pool:
            parts = list(
                pool.map(_ranges_block, *zip(*[(X, n, c, seed, k) for k, c in enumerate(counts)]))
            )
    return np.concatenate(parts)


def letter_groups(means: np.ndarray, separated: np.ndarray) -> tuple[str, ...]:
    """Compact letter display for systems with ``means`` and a symmetric boolean matrix
    ``separated`` (pair significantly different): sorted by mean (descending), each maximal run
    of consecutive systems in which no pair is separated gets a letter (``a`` for the run holding
    the best); a system's group is the letters of the runs holding it.  Exact when separation is
    monotone in the difference of means (as in Tukey HSD, whose p-value is a function of it).

    Examples
    --------
    >>> sep = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
    >>> letter_groups(np.array([0.9, 0.8, 0.7]), sep)
    ('a', 'ab', 'b')
    """
    S = len(means)
    order = np.argsort(-np.asarray(means), kind="stable")
    runs: list[tuple[int, int]] = []
    for start in range(S):
        end = start
        while end + 1 < S and not separated[order[end + 1], order[start : end + 1]].any():
            end += 1
        if not runs or end > runs[-1][1]:
            runs.append((start, end))
    letters = [""] * S
    for k, (start, end) in enumerate(runs):
        tag = _letter(k)
        for pos in range(start, end + 1):
            letters[order[pos]] += tag
    return tuple(letters)


def _letter(k: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    s = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        s = alphabet[r] + s
    return s if len(s) == 1 else f"[{s}]"


def tukey_hsd(
    values,
    names=None,
    *,
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    jobs: int | None = None,
) -> TukeyHSD:
    """Randomized Tukey HSD (Carterette 2012) over the columns of ``values`` (queries x systems).

    Each of ``permutations`` draws permutes every query's values across the systems; the pair
    ``(i, j)`` gets ``p = (1 + #{t: range_t >= |mean_i - mean_j|}) / (1 + permutations)``, with
    ``range_t`` the max - min of the systems' means in draw ``t`` ([`permutation_ranges`][tierank.analysis.inference.permutation_ranges];
    ``jobs`` threads share the permutations, with the same result for any ``jobs``).

    Examples
    --------
    >>> X = np.array([[0.9, 0.2, 0.3], [0.8, 0.3, 0.2], [0.95, 0.1, 0.25], [0.7, 0.35, 0.3]] * 3)
    >>> h = tukey_hsd(X, ["A", "B", "C"], permutations=2000, seed=1)
    >>> h.groups, h.best, h.pvalue("A", "B") < 0.01
    (('a', 'b', 'b'), ('A',), True)
    """
    X, names = _matrix(values, names)
    check_sampling(
        1 - alpha if isinstance(alpha, (int, float)) else alpha, permutations, seed, "permutations"
    )
    if len(names) < 2:
        raise TierankInputError("tukey_hsd: need at least two systems")
    means = X.mean(axis=0)
    ranges = np.sort(permutation_ranges(X, permutations, seed, jobs=jobs))
    diff = np.abs(means[:, None] - means[None, :])
    tol = _REL_TOL * max(1.0, float(np.abs(X).max()))
    hits = permutations - np.searchsorted(ranges, diff - tol, side="left")
    p_test = (1.0 + hits) / (1.0 + permutations)
    np.fill_diagonal(p_test, 1.0)
    # the floor of every paired p (`sign_flip_floor` of the pair's nonzero differences)
    m = np.stack([nonzero(X - X[:, [i]], tol) for i in range(X.shape[1])])  # one row a system
    p = np.maximum(p_test, sign_flip_floor(m))
    np.fill_diagonal(p, 1.0)
    separated = p < alpha
    groups = letter_groups(means, separated)
    top = int(np.argmax(means))
    best = tuple(nm for k, nm in enumerate(names) if not separated[top, k])
    return TukeyHSD(
        names=names,
        means=means,
        p=p,
        alpha=float(alpha),
        groups=groups,
        best=best,
        samples=int(permutations),
        seed=int(seed),
        p_test=p_test,
    )


def competition_ranks(means: np.ndarray) -> np.ndarray:
    """Rank 1 for the highest; equal values share the better rank (``1, 2, 2, 4``); along the last
    axis.

    Examples
    --------
    >>> competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist()
    [2, 1, 2, 4]
    """
    m = np.asarray(means)
    return 1 + (m[..., None, :] > m[..., :, None]).sum(axis=-1)


def bootstrap_tie_means(draws, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``(resamples, S)`` bootstrap means that also redraw each query's tie ordering: ``draws`` is
    ``(N, n, S)``, ``N`` per-query values of every system under independent uniformly random tie
    orderings ([`tie_orderings`][tierank.measures.sampling.tie_orderings]). Resample ``b`` draws the
    queries as [`bootstrap_means`][tierank.analysis.inference.bootstrap_means] does (the same count matrices, [`resample_counts`][tierank.analysis.inference.resample_counts]) and,
    for each query, one of the ``N`` orderings uniformly (``default_rng([seed, 1])``, the same
    index for every system of the query: the systems' orderings are independent draws already).

    Examples
    --------
    >>> D = np.stack([np.full((3, 2), 1.0), np.full((3, 2), 3.0)])  # two tie orderings
    >>> m = bootstrap_tie_means(D, 2000, seed=1)
    >>> bool(np.all((m >= 1) & (m <= 3))), round(float(m.mean()), 1)
    (True, 2.0)
    """
    D = np.asarray(draws, dtype=np.float64)
    if D.ndim != 3 or D.shape[0] == 0 or D.shape[1] == 0 or not np.all(np.isfinite(D)):
        raise TierankInputError(
            "inference: tie draws must be a finite (draws x queries x systems) array"
        )
    N, n, S = D.shape
    rng = np.random.default_rng([seed, 1])
    out = np.empty((resamples, S))
    start = 0
    for W in resample_counts(n, resamples, seed):
        K = rng.integers(0, N, size=W.shape)
        Wf = W.astype(np.float64)
        acc = np.zeros((len(W), S))
        for k in range(N):
            acc += np.where(K == k, Wf, 0.0) @ D[k]
        out[start : start + len(W)] = acc / n
        start += len(W)
    return out


def rank_intervals(
    values,
    names=None,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    boot: np.ndarray | None = None,
    tie_draws=None,
) -> RankIntervals:
    """Each system's rank by mean and the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles
    (lower and higher order statistics) of its rank over query-bootstrap resamples.

    With ``tie_draws`` (``(N, n, S)``, see [`bootstrap_tie_means`][tierank.analysis.inference.bootstrap_tie_means]) every resample also redraws
    each query's tie ordering, so the interval covers the ties' uncertainty beside the query
    sample's (``method="bootstrap+ties"``, ``tie_samples=N``); ``boot`` is then not used.

    Examples
    --------
    >>> X = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.7, 0.4, 0.3]] * 4)
    >>> r = rank_intervals(X, ["A", "B", "C"], resamples=500, seed=3)
    >>> r.rank.tolist(), r.low.tolist(), r.high.tolist()
    ([1, 2, 3], [1, 2, 3], [1, 2, 3])
    """
    X, names = _matrix(values, names)
    check_sampling(level, resamples, seed, "resamples")
    if tie_draws is not None:
        D = np.asarray(tie_draws, dtype=np.float64)
        if D.ndim != 3 or D.shape[1:] != X.shape:
            raise TierankInputError(
                f"rank_intervals: tie_draws must be (N, {X.shape[0]}, {X.shape[1]}), got {D.shape}"
            )
        theta_b = bootstrap_tie_means(D, resamples, seed)
    else:
        theta_b = bootstrap_means(X, resamples, seed) if boot is None else boot
    ranks = competition_ranks(theta_b)
    lo = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower").astype(np.int64)
    hi = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher").astype(np.int64)
    ties = None if tie_draws is None else int(np.shape(tie_draws)[0])
    return RankIntervals(
        names=names,
        rank=competition_ranks(X.mean(axis=0)),
        low=lo,
        high=hi,
        level=level,
        samples=int(resamples),
        seed=int(seed),
        method="bootstrap" if ties is None else "bootstrap+ties",
        tie_samples=ties,
    )


__all__ = [
    "CI_METHODS",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_RESAMPLES",
    "EXACT_MAX",
    "TESTS",
    "CombinedSE",
    "MeanCI",
    "PairTest",
    "PairedSettings",
    "RankIntervals",
    "TukeyHSD",
    "bootstrap_means",
    "bootstrap_tie_means",
    "check_sampling",
    "combined_se",
    "competition_ranks",
    "letter_groups",
    "mean_cis",
    "paired_tests",
    "permutation_ranges",
    "rank_intervals",
    "resample_counts",
    "tukey_hsd",
    "wilcoxon_method",
]
