"""How systems are compared, beyond how each is evaluated: [`CompareSettings`][tierank.analysis.compare.CompareSettings],
and how `compare`'s keywords split between it and [`tierank.EvalSettings`][tierank.EvalSettings]."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ...errors import TierankInputError
from ...settings import EvalSettings
from .. import inference
from ..banding import check_rho
from ..paired import REGISTRY as PAIRED_TESTS
from ..significance import CORRECTIONS

#: the keywords of `compare` that set the evaluation of every system (`EvalSettings`;
#: ``seed`` is the comparison's own, `CompareSettings`)
EVAL_KEYWORDS = tuple(f.name for f in fields(EvalSettings) if f.name != "seed")


def _count(value: Any, low: int) -> bool:
    return bool(
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low
    )


@dataclass(frozen=True)
class CompareSettings:
    """How systems are compared, beyond how each is evaluated ([`tierank.EvalSettings`][tierank.EvalSettings]): one
    frozen value, validated when built.

    Attributes
    ----------
    alpha
        Significance level: a pair is significant when ``p < alpha`` (also the level of the
        ``leaderboard``'s Tukey HSD groups).
    band
        If given (rho > 1): also band every run into geometric rank bands
        ([`band_run`][tierank.analysis.banding.band_run]), re-evaluate, and compare the pairs' significance
        before and after banding (``band_summary``: the quadrants of Yang et al.'s Figure 4).
    correction
        ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"``: adjust the pairs' p-values for the number
        of pairs ([`adjust_pvalues`][tierank.analysis.compare.adjust_pvalues]); ``significant`` then reads the adjusted value ``p_adjusted``
        (and with ``band``, ``significant_banded`` the adjusted ``p_banded``).
    test
        The pairs' test on the per-query values ([`paired_tests`][tierank.analysis.inference.paired_tests], the
        registry `tierank.analysis.paired`): ``"t"`` (paired t, the default), ``"wilcoxon"``,
        ``"randomization"`` (Fisher's sign flips: exact with at most 20 nonzero differences, else
        ``permutations`` Monte Carlo flips) or ``"bootstrap"`` (``resamples`` paired bootstrap
        resamples).
    ci
        The systems' and the mean differences' confidence intervals over the query sample: ``"t"``
        (default), ``"percentile"`` or ``"bca"`` (bootstrap, ``resamples``).
    level
        Confidence level of the intervals.
    seed, resamples, permutations
        Every sampled figure is reproducible from ``seed``: bootstrap resamples are drawn from ``seed``
        and the number of queries only and shared by all systems, so a system's interval does not
        change when other systems are added, as long as the compared queries (those common to all
        systems) stay the same ([`tierank.analysis.inference`][tierank.analysis.inference]).
    leaderboard
        Also compute the rank intervals (query bootstrap) and randomized Tukey HSD (``permutations``)
        groups of the systems, and the systems indistinguishable from the best (``best``).
    jobs
        Threads sharing Tukey HSD's permutations (the same result for any number; ``None``: up to 2).
    tie_samples
        With ``leaderboard``: also redraw each query's tie ordering in every bootstrap resample of the
        rank intervals, from ``tie_samples`` uniformly random tie orderings of each run
        (`tierank.measures.sampling.tie_orderings`, seeded from ``seed`` and the system;
        [`bootstrap_tie_means`][tierank.analysis.inference.bootstrap_tie_means]).
        0 (default): query sample only.  Recorded in ``settings`` (``tie_samples``, ``rank_method``).

    Examples
    --------
    >>> CompareSettings(test="wilcoxon", correction="holm").test
    'wilcoxon'
    >>> CompareSettings(alpha=2)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: compare: alpha must be in (0, 1), got 2
    """

    alpha: float = 0.05
    band: float | None = None
    correction: str | None = None
    test: str = "t"
    ci: str = "t"
    level: float = 0.95
    seed: int = 0
    resamples: int = inference.DEFAULT_RESAMPLES
    permutations: int = inference.DEFAULT_PERMUTATIONS
    leaderboard: bool = False
    jobs: int | None = None
    tie_samples: int = 0

    def __post_init__(self) -> None:
        if not (isinstance(self.alpha, (int, float)) and 0.0 < self.alpha < 1.0):
            raise TierankInputError(f"compare: alpha must be in (0, 1), got {self.alpha!r}")
        if self.band is not None:
            object.__setattr__(self, "band", check_rho(self.band))
        if self.correction is not None and self.correction not in CORRECTIONS:
            raise TierankInputError(
                f"compare: unknown correction {self.correction!r}; accepted: {', '.join(CORRECTIONS)}"
            )
        if self.test not in PAIRED_TESTS:
            raise TierankInputError(
                f"compare: unknown test {self.test!r}; accepted: {', '.join(PAIRED_TESTS)}"
            )
        if not _count(self.tie_samples, 0):
            raise TierankInputError(
                f"compare: tie_samples must be a non-negative integer, got {self.tie_samples!r}"
            )
        if self.ci not in inference.CI_METHODS:
            raise TierankInputError(
                f"compare: unknown CI method {self.ci!r}; accepted: {', '.join(inference.CI_METHODS)}"
            )
        inference.check_sampling(self.level, self.resamples, self.seed, "resamples")
        inference.check_sampling(self.level, self.permutations, self.seed, "permutations")
        if self.jobs is not None and not _count(self.jobs, 1):
            raise TierankInputError(
                f"inference: jobs must be a positive integer, got {self.jobs!r}"
            )

    def paired(self) -> inference.PairedSettings:
        """The settings of the pairs' tests ([`paired_tests`][tierank.analysis.inference.paired_tests]):
        the test, ``level``, ``resamples``, ``permutations`` (its sign flips) and ``seed``; the
        intervals by Student's t (the comparison's ``ci`` is for the expected values only)."""
        return inference.PairedSettings(
            test=self.test,
            level=self.level,
            resamples=self.resamples,
            samples=self.permutations,
            seed=self.seed,
        )

    def record(self) -> dict[str, Any]:
        """The comparison's part of ``Comparison.settings`` (keys in their stable order)."""
        return {
            **({"correction": self.correction} if self.correction else {}),
            "test": self.test,
            "ci": self.ci,
            "level": float(self.level),
            "seed": int(self.seed),
            "resamples": int(self.resamples),
            "permutations": int(self.permutations),
            "leaderboard": bool(self.leaderboard),
        }


def default_correction(choice: str | None, systems: int) -> str | None:
    """The correction of a comparison of ``systems`` systems given ``choice``: ``"holm"`` with more
    than one pair when none is chosen, ``None`` for ``"none"``, else ``choice``.

    >>> default_correction(None, 3), default_correction(None, 2), default_correction("none", 5)
    ('holm', None, None)
    """
    if choice is None:
        return "holm" if systems > 2 else None
    return None if choice == "none" else choice


def compare_settings(
    settings: EvalSettings | None, options: CompareSettings | None, keywords: dict[str, Any]
) -> tuple[EvalSettings, CompareSettings]:
    """The two settings of a comparison: ``settings`` and ``options`` with ``keywords`` applied, each
    keyword to the settings it names (`EVAL_KEYWORDS` to the evaluation's, the rest to
    [`CompareSettings`][tierank.analysis.compare.CompareSettings]); an unknown keyword is a `TypeError`, as Python's own."""
    ours = {f.name for f in fields(CompareSettings)}
    unknown = sorted(set(keywords) - ours - set(EVAL_KEYWORDS))
    if unknown:
        raise TypeError(f"compare() got an unexpected keyword argument {unknown[0]!r}")
    evals = {k: v for k, v in keywords.items() if k in EVAL_KEYWORDS}
    cmps = {k: v for k, v in keywords.items() if k in ours}
    s = EvalSettings.of(settings, **evals)
    o = replace(options, **cmps) if options is not None else CompareSettings(**cmps)
    return s, o
