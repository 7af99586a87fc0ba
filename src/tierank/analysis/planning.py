"""Before the experiment: how many topics does a test collection need (Sakai, "Topic set size design",
Information Retrieval Journal 19, 2016; *Laboratory Experiments in Information Retrieval*, 2018)?

* Two systems, paired t-test (two-sided, level ``alpha``): with standardised effect
  ``d_z = delta / sigma_d`` (the mean per-topic difference over the standard deviation of the
  per-topic differences) and ``n`` topics, ``T`` has a noncentral t distribution with ``n - 1``
  degrees of freedom and noncentrality ``d_z sqrt(n)``; the power is
  ``P(T > t_crit) + P(T < -t_crit)`` (``scipy.stats.nct``).
* ``m > 2`` systems, one-way ANOVA with ``n`` topics per system (Sakai's ANOVA-based design): with
  Cohen's ``f`` (``f^2 = sum_i (mu_i - mu)^2 / (m sigma^2)``), ``F`` has a noncentral F distribution
  with ``m - 1`` and ``m (n - 1)`` degrees of freedom and noncentrality ``f^2 m n``
  (``scipy.stats.ncf``).  A minimum detectable range ``D`` (the largest difference between the best
  and the worst system that must be detected) gives the least favourable ``f = D / (sigma sqrt(2 m))``
  (two systems at ``mu +- D/2``, the others at ``mu``), as in Sakai's design; Tukey HSD's
  simultaneous tests of all pairs are then conservatively covered.

[`topic_set_size`][tierank.analysis.planning.topic_set_size] is the smallest ``n`` whose power
reaches the target (statsmodels' ``TTestPower`` / ``FTestAnovaPower`` solve the same equations
for a real ``n``; rounded up, they agree); [`minimal_detectable`][tierank.analysis.planning.minimal_detectable]
inverts it for a given ``n``; [`pilot_variance`][tierank.analysis.planning.pilot_variance] estimates
``sigma^2`` from pilot runs, tie variance included.

**Ties.** A system evaluated once reports the oblivious value ``M_q = e_q + eps_q`` of each topic,
one draw of its tie orderings (variance ``v_q``, tierank's per-topic tie variance).  The variance that
the planned test sees is therefore the sampling variance of the expected values plus the mean tie
variance (law of total variance, as in [`tierank.analysis.inference`][tierank.analysis.inference]):
``sigma^2 = Var(e) + mean(v)`` for a system, ``sigma_d^2 = Var(e_a - e_b) + mean(v_a + v_b)`` for a
difference (independent orderings).  Both parts are reported.

Examples
--------
>>> topic_set_size(0.5)                      # d_z = 0.5, alpha 0.05, power 0.8: paired t
34
>>> topic_set_size(0.25, systems=5)          # Cohen's f = 0.25, five systems: one-way ANOVA
40
>>> round(minimal_detectable(50, sd=0.2), 4) # the difference 50 topics detect when sigma_d = 0.2
0.0808
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TierankInputError

#: the most topics a design may ask for (beyond it the effect is, for any collection, undetectable)
MAX_TOPICS = 10**9
#: the most systems a design may compare
MAX_SYSTEMS = 100_000


def _check(alpha: float, power: float, systems: int) -> None:
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise TierankInputError(f"planning: alpha must be in (0, 1), got {alpha!r}")
    if not (isinstance(power, (int, float)) and alpha < power < 1.0):
        raise TierankInputError(
            f"planning: power must be in (alpha, 1) = ({alpha}, 1), got {power!r}"
        )
    if not (
        isinstance(systems, (int, np.integer))
        and not isinstance(systems, bool)
        and 2 <= systems <= MAX_SYSTEMS
    ):
        raise TierankInputError(
            f"planning: systems must be an integer in [2, {MAX_SYSTEMS:,}], got {systems!r}"
        )


def achieved_power(effect: float, topics: int, alpha: float = 0.05, systems: int = 2) -> float:
    """The power of the paired t-test (``systems == 2``, ``effect`` = d_z) or the one-way ANOVA
    (``systems > 2``, ``effect`` = Cohen's f, ``topics`` per system) with ``topics`` topics.

    >>> round(achieved_power(0.5, 34), 4)
    0.8078
    """
    from scipy.stats import f as fdist
    from scipy.stats import ncf, nct
    from scipy.stats import t as tdist

    n = float(topics)
    if systems == 2:
        df = n - 1.0
        nc = effect * math.sqrt(n)
        crit = float(tdist.isf(alpha / 2.0, df))
        # the far tail P(T < -crit) as P(T > crit) at -nc (scipy's nct.cdf gives NaN there for large
        # nc, where the tail is below 1e-11); a NaN left is such a tail, 0 to double precision
        upper, lower = (float(nct.sf(crit, df, x)) for x in (nc, -nc))
        return (upper if math.isfinite(upper) else 1.0) + (lower if math.isfinite(lower) else 0.0)
    m = float(systems)
    d1, d2 = m - 1.0, m * (n - 1.0)
    crit = float(fdist.isf(alpha, d1, d2))
    out = float(ncf.sf(crit, d1, d2, effect * effect * m * n))
    if not math.isfinite(out):
        raise TierankInputError(
            f"planning: the noncentral F distribution has no value for f = {effect}, {systems} "
            f"systems and {topics} topics (scipy.stats.ncf): a design out of its numerical range"
        )
    return out


def topic_set_size(effect: float, alpha: float = 0.05, power: float = 0.8, systems: int = 2) -> int:
    """The number of topics needed to detect the standardised ``effect`` with probability
    ``power`` at level ``alpha``: d_z for two systems (paired t-test, two-sided), Cohen's f for
    more (one-way ANOVA, topics per system).  The smallest ``n >= 2`` whose power reaches
    ``power`` (see the module docstring).

    Raises
    ------
    TierankInputError
        ``effect`` not > 0 (no finite topic set detects no difference), ``alpha`` or ``power`` out
        of range, fewer than two systems, or a design beyond `MAX_TOPICS` topics.
    """
    _check(alpha, power, systems)
    if not (isinstance(effect, (int, float, np.floating)) and math.isfinite(effect) and effect > 0):
        raise TierankInputError(
            f"topic_set_size: effect must be a finite number > 0, got {effect!r} (an effect of 0 "
            "needs infinitely many topics; give its absolute value for a negative one)"
        )
    target = float(power)
    pw = achieved_power
    if pw(effect, 2, alpha, systems) >= target:
        return 2
    lo, hi = 2, 4
    while pw(effect, hi, alpha, systems) < target:
        lo, hi = hi, hi * 2
        if hi > MAX_TOPICS:
            raise TierankInputError(
                f"topic_set_size: effect {effect} needs more than {MAX_TOPICS:,} topics at "
                f"alpha {alpha} and power {target}"
            )
    while hi - lo > 1:  # power(lo) < target <= power(hi); the power increases with n
        mid = (lo + hi) // 2
        if pw(effect, mid, alpha, systems) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def minimal_detectable(
    topics: int, sd: float = 1.0, alpha: float = 0.05, power: float = 0.8, systems: int = 2
) -> float:
    """The smallest difference ``topics`` topics detect with probability ``power`` at level
    ``alpha``: the d_z (two systems) or the Cohen's f (more) at which the power equals ``power``
    (``scipy.optimize.brentq``), times ``sd``; for ``systems > 2`` returned as the minimum
    detectable range ``D = f sd sqrt(2 m)`` (module docstring).  ``sd = 1`` gives the
    standardised effect (for more than two systems, ``sqrt(2 m)`` times f).

    Raises
    ------
    TierankInputError
        Fewer than two topics, ``sd`` not > 0, ``alpha`` or ``power`` out of range.
    """
    from scipy.optimize import brentq

    _check(alpha, power, systems)
    if not (
        isinstance(topics, (int, np.integer))
        and not isinstance(topics, bool)
        and 2 <= topics <= MAX_TOPICS
    ):
        raise TierankInputError(
            f"minimal_detectable: topics must be an integer in [2, {MAX_TOPICS:,}], got {topics!r} "
            "(a variance over topics needs two)"
        )
    if not (isinstance(sd, (int, float, np.floating)) and math.isfinite(sd) and sd > 0):
        raise TierankInputError(f"minimal_detectable: sd must be a finite number > 0, got {sd!r}")
    pw = achieved_power
    target = float(power)
    hi = 1.0
    while pw(hi, topics, alpha, systems) < target:
        hi *= 2.0
    eff = float(
        brentq(lambda e: pw(e, topics, alpha, systems) - target, 0.0, hi, xtol=1e-14, rtol=1e-14)
    )
    return eff * sd if systems == 2 else eff * sd * math.sqrt(2.0 * systems)


def range_to_f(range_: float, sd: float, systems: int) -> float:
    """Cohen's f of the least favourable configuration with the largest difference ``range_``
    between ``systems`` systems of within-system standard deviation ``sd``:
    ``range_ / (sd sqrt(2 m))``.

    >>> round(range_to_f(0.1, 0.2, 5), 6)
    0.158114
    """
    if not (sd > 0 and systems >= 2):
        raise TierankInputError("range_to_f: sd must be > 0 and systems >= 2")
    return float(range_) / (float(sd) * math.sqrt(2.0 * systems))


@dataclass(frozen=True)
class PilotVariance:
    """Variance estimates from pilot runs (``topics`` x ``systems`` per-topic values).

    ``sigma2`` (for the ANOVA design) is the one-way ANOVA's residual variance, pooled over the
    systems (``sum_ij (e_ij - mean_j)^2 / (m (n - 1))``), plus the mean tie variance ``tie``;
    ``sigma2_diff`` (for the paired t-test) is the mean over the pairs of the sample variance of the
    per-topic differences, plus twice the mean tie variance.  ``*_sampling`` are the parts without
    ties."""

    topics: int
    systems: int
    sigma2_sampling: float
    sigma2_diff_sampling: float
    tie: float

    @property
    def sigma2(self) -> float:
        return self.sigma2_sampling + self.tie

    @property
    def sigma2_diff(self) -> float:
        return self.sigma2_diff_sampling + 2.0 * self.tie

    def to_dict(self) -> dict[str, Any]:
        """``topics, systems, sigma2, sigma2_sampling, sigma2_diff, sigma2_diff_sampling, tie``."""
        return {
            "topics": self.topics,
            "systems": self.systems,
            "sigma2": self.sigma2,
            "sigma2_sampling": self.sigma2_sampling,
            "sigma2_diff": self.sigma2_diff,
            "sigma2_diff_sampling": self.sigma2_diff_sampling,
            "tie": self.tie,
        }


def pilot_variance(expected, tie_var=None) -> PilotVariance:
    """Estimate ``sigma^2`` and ``sigma_d^2`` from pilot per-topic expected values (``topics x
    systems``) and their tie variances (same shape; None: no ties).  See `PilotVariance`.

    >>> pv = pilot_variance([[0.5, 0.4], [0.7, 0.6], [0.2, 0.3], [0.9, 0.5]], [[0.01, 0], [0, 0], [0, 0], [0, 0]])
    >>> round(pv.sigma2_sampling, 6), round(pv.sigma2_diff_sampling, 6), round(pv.tie, 6)
    (0.052917, 0.0425, 0.00125)
    """
    E = np.asarray(expected, dtype=np.float64)
    if E.ndim != 2 or E.shape[1] < 2:
        raise TierankInputError(
            "pilot_variance: give a topics x systems matrix of at least two systems (one pilot "
            "run gives no difference to estimate)"
        )
    n, m = E.shape
    if n < 2:
        raise TierankInputError(
            f"pilot_variance: the pilot has {n} topic(s): a variance over topics needs at least two"
        )
    if not np.all(np.isfinite(E)):
        raise TierankInputError("pilot_variance: the pilot values must be finite numbers")
    resid = E - E.mean(axis=0)
    s2 = float((resid**2).sum() / (m * (n - 1)))
    i, j = np.triu_indices(m, 1)
    D = E[:, i] - E[:, j]
    s2d = float(np.var(D, axis=0, ddof=1).mean())
    tie = 0.0
    if tie_var is not None:
        V = np.asarray(tie_var, dtype=np.float64)
        if V.shape != E.shape or np.any(V < 0) or not np.all(np.isfinite(V)):
            raise TierankInputError(
                "pilot_variance: tie_var must match expected in shape and be finite and >= 0"
            )
        tie = float(V.mean())
    return PilotVariance(topics=n, systems=m, sigma2_sampling=s2, sigma2_diff_sampling=s2d, tie=tie)


__all__ = [
    "MAX_SYSTEMS",
    "MAX_TOPICS",
    "PilotVariance",
    "minimal_detectable",
    "pilot_variance",
    "achieved_power",
    "range_to_f",
    "topic_set_size",
]
