"""What the inference gives: one frozen value per system's interval ([`MeanCI`][tierank.analysis.inference.MeanCI],
[`CombinedSE`][tierank.analysis.inference.CombinedSE]), per pair's test ([`PairTest`][tierank.analysis.inference.PairTest]) and per
set of systems ([`TukeyHSD`][tierank.analysis.inference.TukeyHSD], [`RankIntervals`][tierank.analysis.inference.RankIntervals])."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
