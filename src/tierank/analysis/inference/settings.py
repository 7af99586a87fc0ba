"""What the inference takes and how it is checked: the defaults of its sampling, the validation of its
inputs (a matrix of per-query values, a level, a count of samples, a seed, a CI method) and the
settings of the paired tests ([`PairedSettings`][tierank.analysis.inference.PairedSettings])."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ...errors import TierankInputError
from ..methods import CI_METHODS
from ..paired import REGISTRY as PAIRED_TESTS

#: default number of bootstrap resamples
DEFAULT_RESAMPLES = 10_000
#: default number of permutations (randomized Tukey HSD) and sign-flip samples (randomization test)
DEFAULT_PERMUTATIONS = 10_000
#: the names of the paired tests registered when this module was imported
#: (`tierank.analysis.paired.REGISTRY`, which `paired_tests` reads)
TESTS = tuple(PAIRED_TESTS)


def matrix(values, names) -> tuple[np.ndarray, tuple[str, ...]]:
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


def check_ci_method(method: str) -> None:
    if method not in CI_METHODS:
        raise TierankInputError(
            f"inference: unknown CI method {method!r}; accepted: {', '.join(CI_METHODS)}"
        )


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
        check_ci_method(self.ci)

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
