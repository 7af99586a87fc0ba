"""Compare systems tie-aware: can ties flip which system looks better?

Ties make a system's score an interval, not a number: the tie-oblivious value
(trec_eval's tie-break, say) is one point of it, the expectation over all tie
orderings another.  Yang, Moffat & Turpin ("How precise does document scoring
need to be?", Figure 2) show overlapping [pessimal, optimal] segments of TREC7
systems; Yang et al. ("Reliable Evaluation Protocol for Low-Precision
Retrieval", Section 3, Table 1) report a BF16 reranker that beats another under the
oblivious nDCG@10 and loses under the expected one.  [`compare`][tierank.analysis.compare.compare] puts a set
of runs side by side on one measure and flags, for every pair of systems:

* ``order_flip``: the oblivious means order the pair the other way round from
  the expected means;
* ``undecidable``: the systems' [min, max] intervals of the mean overlap, so
  some tie orderings would rank the pair either way (or make it equal): the
  comparison cannot be decided from these scores;
* ``significant``: a paired t-test on the per-query expected values, or with ``test`` a
  Wilcoxon signed-rank, randomization or paired bootstrap test (optionally with a
  multiple-comparison ``correction`` across all pairs: Bonferroni, Holm or Benjamini-Hochberg,
  [`adjust_pvalues`][tierank.analysis.compare.adjust_pvalues]); every pair also gets its mean difference's CI and Cohen's d_z, every
  system a CI of its mean and its ranks, and with ``leaderboard`` bootstrap rank intervals and
  randomized Tukey HSD groups ([`tierank.analysis.inference`][tierank.analysis.inference]);
* ``p_a_above``: the probability that ``a``'s mean exceeds ``b``'s when both runs' ties are broken
  uniformly at random, independently across queries and systems.  The difference of the means
  then has the exact mean ``diff_expected`` and the exact variance
  ``(sum_q var_a,q + sum_q var_b,q) / n^2`` (tierank's per-query variances; the orderings are
  independent); ``p_a_above`` is the normal approximation ``Phi(mean / sd)`` of that sum of
  independent per-query differences (Lyapunov CLT), and ``p_a_above_bound`` a distribution-free
  lower bound from the same two moments (Cantelli's inequality,
  ``P(D > 0) >= mean^2 / (mean^2 + var)`` for ``mean > 0``).  Where no tie can change the
  difference (variance 0), or the pair is not ``undecidable`` (every ordering ranks ``a`` above),
  both are exact: 1 or 0.  The moments, the two probabilities and the
  corrections live in [`tierank.analysis.significance`][tierank.analysis.significance] (re-exported here).

With ``band=rho`` every run is also re-scored into geometric rank bands
([`band_run`][tierank.analysis.banding.band_run]) and re-evaluated, and the pairs'
significance before and after banding is cross-tabulated as in the paper's
Figure 4 (false positives, false negatives, percentage of pairs per quadrant).

Examples
--------
>>> qrels = {"q1": {"a": 1}, "q2": {"c": 1}}
>>> runs = {"tied": {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 0.7, "d": 0.7}},
...         "exact": {"q1": {"b": 0.9, "a": 0.8}, "q2": {"c": 0.9, "d": 0.1}}}
>>> cmp = compare(runs, qrels, "RR")
>>> cmp
Comparison(RR, 2 systems, 2 queries, 1 pairs: 0 flipped, 1 undecidable)
>>> [(s.name, s.oblivious, s.expected, s.min, s.max) for s in cmp.systems]
[('tied', 0.5, 0.75, 0.5, 1.0), ('exact', 0.75, 0.75, 0.75, 0.75)]
>>> cmp.pair("exact", "tied").flags
['undecidable']
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from .. import compute as ac
from ..errors import TierankInputError
from ..evaluate import Evaluator
from ..io.convert import to_run
from ..io.model import Run
from ..measures.base import Measure
from ..results import EvalResult, jsonable
from ..settings import EvalSettings
from . import inference
from .banding import band_run, check_rho
from .significance import (  # noqa: F401 (re-exported)
    CORRECTIONS,
    ZERO_TOL,
    adjust_pvalues,
    diff_moments,
    prob_above,
)
from .significance import band_summary as summarise_band


@dataclass(frozen=True)
class SystemSummary:
    """One system's tie-aware mean scores over the compared queries.

    Attributes
    ----------
    name : str
    oblivious, expected, min, max : float
        Means over queries of the per-query values (``min``/``max``: pessimal and
        optimal tie orderings, attained in every query at once).
    range, bias : float
        ``max - min`` and ``oblivious - expected`` of the means.
    std : float
        Standard deviation of the mean over tie orderings, ``sqrt(sum_q var_q) / n_q``.
    ci_low, ci_high, ci_method : float, float, str
        Confidence interval of the mean of the per-query expected values over the query sample
        ([`mean_cis`][tierank.analysis.inference.mean_cis]: ``t``, ``percentile`` or ``bca``).
    rank, rank_oblivious : int
        Rank by expected and by oblivious mean (1 = best; equal means share the better rank).
    rank_low, rank_high : int or None
        With ``leaderboard``: the 2.5-97.5% range of the rank by expected mean over query-bootstrap
        resamples ([`rank_intervals`][tierank.analysis.inference.rank_intervals]).
    group : str or None
        With ``leaderboard``: randomized Tukey HSD letters ([`tukey_hsd`][tierank.analysis.inference.tukey_hsd]);
        systems sharing a letter are not separated at ``alpha``.
    """

    name: str
    oblivious: float
    expected: float
    min: float
    max: float
    range: float
    bias: float
    std: float
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    rank: int | None = None
    rank_oblivious: int | None = None
    rank_low: int | None = None
    rank_high: int | None = None
    group: str | None = None


@dataclass(frozen=True)
class PairComparison:
    """One unordered pair of systems, ``a`` ranked above (or level with) ``b`` by expected mean.

    Attributes
    ----------
    a, b : str
        System names; ``expected(a) >= expected(b)``.
    diff_expected, diff_oblivious : float
        Mean of ``a`` minus mean of ``b`` (``diff_expected >= 0``).
    t : float
        Paired t statistic (``scipy.stats.ttest_rel``) on the per-query expected values, ``a``
        minus ``b``.  0.0 when every per-query difference is zero; NaN with a single query.
    p : float
        Two-sided p-value of the pair's ``test`` on the per-query expected values (the paired
        t-test by default).  1.0 when every per-query difference is zero (the test is undefined
        there); NaN with a single query (t).
    p_oblivious : float
        The same test on the per-query oblivious values.
    order_flip : bool
        The oblivious means order the pair strictly the other way round: both mean
        differences nonzero (beyond ``ZERO_TOL``) with opposite signs.  A pair level in
        expectation is never a flip (its order is arbitrary), nor is a pair that the
        oblivious means call level.
    undecidable : bool
        The intervals ``[min, max]`` of the two means overlap (touching counts): some tie
        orderings would put ``b`` level with or above ``a``.
    significant : bool
        ``p < alpha``.
    p_banded, diff_banded : float or None
        With ``band``: the p-value of the same test, and the mean difference, on the
        banded runs' per-query expected values.
    significant_banded : bool or None
        With ``band``: ``p_banded < alpha``.
    std_diff : float
        Standard deviation of ``mean(a) - mean(b)`` over both runs' tie orderings (independent):
        ``sqrt(sum_q var_a,q + sum_q var_b,q) / n``; its mean over the orderings is ``diff_expected``.
    p_a_above : float
        Probability that ``a``'s mean over the compared queries is strictly above ``b``'s when
        both runs' ties are broken uniformly at random (normal approximation with the exact mean
        and variance of the difference; exactly 1.0 or 0.0 where the variance is 0 or the
        intervals do not overlap).
    p_a_above_bound : float
        A distribution-free lower bound of that probability (Cantelli), from the same moments.
    p_adjusted : float or None
        With ``correction``: ``p`` adjusted for all pairs ([`adjust_pvalues`][tierank.analysis.compare.adjust_pvalues]); then
        ``significant`` is ``p_adjusted < alpha``.
    p_banded_adjusted : float or None
        With ``correction`` and ``band``: ``p_banded`` adjusted the same way over all pairs; then
        ``significant_banded`` is ``p_banded_adjusted < alpha``.
    test : str
        The test behind ``p``: ``t``, ``wilcoxon``, ``randomization`` or ``bootstrap``
        ([`paired_tests`][tierank.analysis.inference.paired_tests]).
    method, samples, seed, se : str, int or None, int or None, float or None
        How ``p`` was computed: ``analytic``, ``exact`` (all sign flips; ``samples`` = 2^m) or
        ``monte-carlo`` (with ``samples``, ``seed`` and the standard error ``se`` of ``p``).
    effect_size, effect_ci_low, effect_ci_high : float
        Cohen's d_z of the per-query expected-value differences and its CI (noncentral t).
    diff_ci_low, diff_ci_high : float
        CI of ``diff_expected`` over the query sample (method: the comparison's ``ci``).
    statistic : float
        The statistic of the test behind ``p`` (``test_used``) on the expected values: ``t`` for the
        t-test, W (scipy's) for Wilcoxon, the mean difference for the randomization and bootstrap
        tests (on the inference's scale, `SCALES`: the sum of the differences for a sum, the
        mean log difference, a log ratio, for a geometric mean).
    test_used, fallback : str, str or None
        The test that gave ``p``: ``test``, or ``randomization`` (exact where at most 20 differences
        are nonzero) where ``test`` cannot decide; ``fallback`` says why (t undefined with one query
        or equal differences; the bootstrap biased low at that size).
    p_tukey : float or None
        With ``leaderboard``: the pair's randomized Tukey HSD p-value.
    ratio, ratio_ci_low, ratio_ci_high : float or None
        For a geometric-mean measure (GMAP): ``expected(a) / expected(b)`` and its CI (the log
        difference's CI mapped back with exp); ``diff_ci_low``/``diff_ci_high`` are then null.
    """

    a: str
    b: str
    diff_expected: float
    diff_oblivious: float
    t: float
    p: float
    p_oblivious: float
    order_flip: bool
    undecidable: bool
    significant: bool
    p_banded: float | None = None
    diff_banded: float | None = None
    significant_banded: bool | None = None
    std_diff: float = float("nan")
    p_a_above: float = float("nan")
    p_a_above_bound: float = float("nan")
    p_adjusted: float | None = None
    p_banded_adjusted: float | None = None
    test: str = "t"
    method: str = "analytic"
    samples: int | None = None
    seed: int | None = None
    se: float | None = None
    effect_size: float = float("nan")
    effect_ci_low: float = float("nan")
    effect_ci_high: float = float("nan")
    diff_ci_low: float = float("nan")
    diff_ci_high: float = float("nan")
    statistic: float = float("nan")
    test_used: str = "t"
    fallback: str | None = None
    p_tukey: float | None = None
    ratio: float | None = None
    ratio_ci_low: float | None = None
    ratio_ci_high: float | None = None

    @property
    def flags(self) -> list[str]:
        """The pair's flags as words: ``FLIP``, ``undecidable``, ``significant``, and with a band
        ``false positive`` (significant only after banding) or ``false negative`` (only before)."""
        out = []
        if self.order_flip:
            out.append("FLIP")
        if self.undecidable:
            out.append("undecidable")
        if self.significant:
            out.append("significant")
        if self.significant_banded is not None and self.significant_banded != self.significant:
            out.append("false positive" if self.significant_banded else "false negative")
        return out


@dataclass(frozen=True)
class Comparison:
    """Result of [`compare`][tierank.analysis.compare.compare].

    Attributes
    ----------
    measure : str
        The measure, as tierank names it.
    queries : tuple of str
        The compared queries (evaluated for every system), sorted.
    dropped_queries : int
        Queries evaluated for some systems but not all, left out.
    systems : tuple of SystemSummary
        Sorted by expected mean, descending (input order among equal ones).
    pairs : tuple of PairComparison
        Every unordered pair, ``a`` before ``b`` in ``systems``.
    kendall_tau : float
        Kendall's tau-b (``scipy.stats.kendalltau``) between the system orderings by
        oblivious and by expected mean; NaN when one of them is constant.
    kendall_tau_min_max : float
        The same between the orderings by min (pessimal) and by max (optimal) mean.
    alpha : float
        Significance level.
    band : float or None
        The rank-band parameter rho, if asked.
    banded_systems : tuple of SystemSummary or None
        With ``band``: the banded runs' summaries, in the order of ``systems``.
    band_summary : dict or None
        With ``band``: the Figure 4 cross-tabulation, see [`compare`][tierank.analysis.compare.compare].
    settings : dict
        Evaluation settings (tie_break, rel, complete, candidates_only) and the inference settings
        (test, ci, level, seed, resamples, permutations).
    best : tuple of str or None
        With ``leaderboard``: the systems randomized Tukey HSD cannot separate from the best.
    inference : dict
        What the tests, intervals, ranks and groups are computed on: ``aggregator`` (the measure's
        summary: ``mean``, ``sum`` or ``geometric_mean``), ``scale`` (``linear`` or ``log``) and ``on``
        (`SCALES`, in words).
    notes : tuple of str
        Why a figure is null or came from another test (one query; a test that fell back to the
        exact randomization test).
    """

    measure: str
    queries: tuple[str, ...]
    dropped_queries: int
    systems: tuple[SystemSummary, ...]
    pairs: tuple[PairComparison, ...]
    kendall_tau: float
    kendall_tau_min_max: float
    alpha: float
    band: float | None = None
    banded_systems: tuple[SystemSummary, ...] | None = None
    band_summary: dict | None = None
    settings: dict = field(default_factory=dict)
    best: tuple[str, ...] | None = None
    inference: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def system(self, name: str) -> SystemSummary:
        """The summary of system ``name``."""
        for s in self.systems:
            if s.name == name:
                return s
        raise KeyError(name)

    def pair(self, a: str, b: str) -> PairComparison:
        """The comparison of systems ``a`` and ``b``, whichever is ranked first."""
        for p in self.pairs:
            if {p.a, p.b} == {a, b} and a != b:
                return p
        raise KeyError((a, b))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain-Python view (the document ``tierank compare --format json`` writes); NaN and
        infinities become None.

        Keys: ``measure, queries`` (their number), ``dropped_queries, alpha, band, settings, systems,
        pairs, kendall_tau, kendall_tau_min_max, banded_systems, band_summary, best, inference,
        notes``; ``systems`` and ``pairs`` hold one record per [`SystemSummary`][tierank.analysis.compare.SystemSummary] and
        [`PairComparison`][tierank.analysis.compare.PairComparison], with their fields as keys.
        """
        return jsonable(
            {
                "measure": self.measure,
                "queries": len(self.queries),
                "dropped_queries": self.dropped_queries,
                "alpha": self.alpha,
                "band": self.band,
                "settings": dict(self.settings),
                "systems": [asdict(s) for s in self.systems],
                "pairs": [asdict(p) for p in self.pairs],
                "kendall_tau": self.kendall_tau,
                "kendall_tau_min_max": self.kendall_tau_min_max,
                "banded_systems": None
                if self.banded_systems is None
                else [asdict(s) for s in self.banded_systems],
                "band_summary": self.band_summary,
                "best": None if self.best is None else list(self.best),
                "inference": dict(self.inference),
                "notes": list(self.notes),
            }
        )

    def __repr__(self) -> str:
        flips = sum(p.order_flip for p in self.pairs)
        undecidable = sum(p.undecidable for p in self.pairs)
        return (
            f"Comparison({self.measure}, {len(self.systems)} systems, {len(self.queries)} queries, "
            f"{len(self.pairs)} pairs: {flips} flipped, {undecidable} undecidable)"
        )


def _sign(x: float) -> int:
    return 0 if abs(x) <= ZERO_TOL else (1 if x > 0 else -1)


#: what the inference is computed on, per aggregator of the measure (``Measure.aggregator``)
SCALES = {
    "mean": "per-query values; intervals of the mean",
    "sum": "per-query values (a sum is n times their mean: the same tests); intervals and mean-difference "
    "statistics scaled by n",
    "geometric_mean": "log of the per-query values (floored as the measure floors them); intervals mapped back "
    "with exp, pair differences as ratios",
}


def _log_values(m, st, n: int) -> dict[str, np.ndarray]:
    """A geometric-mean measure's per-query values on the log scale its summary averages: the log of
    the (floored) oblivious value, and for the expectation ``n log E[X_q^(1/n)]``, whose mean over the
    ``n`` queries is exactly the log of the expected geometric mean (where the statistics carry the
    roots; else the log of the expectation)."""
    floor = float(getattr(m, "floor", 0.0)) or np.finfo(np.float64).tiny
    root = st.get("root_mean")
    if root is not None and len(root) == n:
        exp_ = n * np.log(np.maximum(root, floor ** (1.0 / n)))
    else:
        exp_ = np.log(np.maximum(st["expected"], floor))
    return {**st, "expected": exp_, "oblivious": np.log(np.maximum(st["oblivious"], floor))}


def _scaled(m, st: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Per-query values on the scale of the measure's inference (`SCALES`)."""
    return _log_values(m, st, n) if m.aggregator == "geometric_mean" else st


def _back(aggregator: str, n: int, x):
    """An interval endpoint from the inference scale to the measure's: exp for a geometric mean, n x
    for a sum, as is for a mean."""
    x = np.asarray(x, dtype=np.float64)
    if aggregator == "geometric_mean":
        return np.exp(x)
    return x * n if aggregator == "sum" else x


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import kendalltau

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(kendalltau(x, y).statistic)


def _summary(name: str, result, queries: list[str]) -> SystemSummary:
    """The system's summary over ``queries``: its measure's own aggregate (``Measure.aggregate``: the
    mean, a sum for counts, a geometric mean for GMAP), the number ``tierank eval`` prints."""
    m = result.measures[0]
    stats = result.stats[m]
    if list(result.qids) != list(
        queries
    ):  # additive summaries only (non-additive ones are re-evaluated)
        idx = _positions(result, queries)
        stats = replace(
            stats,
            **{
                f.name: getattr(stats, f.name)[idx]
                for f in fields(stats)
                if isinstance(getattr(stats, f.name), np.ndarray)
            },
        )
    a = m.aggregate(stats)
    return SystemSummary(
        name=name,
        oblivious=a.oblivious,
        expected=a.expected,
        min=a.min,
        max=a.max,
        range=a.max - a.min,
        bias=a.oblivious - a.expected,
        std=a.std,
    )


def _positions(result, queries: list[str]) -> np.ndarray:
    pos = {q: i for i, q in enumerate(result.qids)}
    return np.fromiter((pos[q] for q in queries), dtype=np.int64, count=len(queries))


def _aligned(result, queries: list[str]) -> dict[str, np.ndarray]:
    """The result's per-query arrays of its one measure, restricted and aligned to ``queries``
    (``root_mean`` too where the measure's statistics carry it)."""
    s = result.stats[result.measures[0]]
    idx = _positions(result, queries)
    out = {
        k: np.asarray(getattr(s, k), dtype=np.float64)[idx]
        for k in ("oblivious", "expected", "min", "max", "var")
    }
    root = getattr(s, "root_mean", None)
    if root is not None and getattr(s, "root_n", None) == len(queries):
        out["root_mean"] = np.asarray(root, dtype=np.float64)[idx]
    return out


def _numeric(m, results: dict, common: list[str]) -> None:
    """Refuse a measure that gives no number to compare (a string per query, or a non-finite value),
    naming the measure, the system and the query."""
    for name, res in results.items():
        if getattr(m, "string_valued", False):
            raise TierankInputError(
                f"compare: measure {m} is a string per query, not a number (system {name}): "
                "a non-numeric measure cannot be compared"
            )
        st = _aligned(res, common)
        for k in ("oblivious", "expected"):
            bad = np.flatnonzero(~np.isfinite(st[k]))
            if len(bad):
                raise TierankInputError(
                    f"compare: measure {m} has no finite {k} value for system {name} at "
                    f"query {common[int(bad[0])]}: it cannot be compared"
                )


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
        rank intervals, from ``tie_samples`` evaluations of each run under ``random:SEED`` tie breaking
        (seeds from ``seed``, the draw and the system; [`bootstrap_tie_means`][tierank.analysis.inference.bootstrap_tie_means]).
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
        if self.test not in inference.TESTS:
            raise TierankInputError(
                f"compare: unknown test {self.test!r}; accepted: {', '.join(inference.TESTS)}"
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


def _checked_runs(runs: Any) -> dict[str, Run]:
    """``{name: Run}``: each run converted (read) once, named by its key."""
    if not isinstance(runs, Mapping):
        raise TierankInputError("compare: runs must be a mapping {system name: run}")
    if len(runs) < 2:
        raise TierankInputError(f"compare: need at least two systems to compare, got {len(runs)}")
    names = [str(k) for k in runs]
    if len(set(names)) != len(names):
        raise TierankInputError("compare: system names must be distinct")
    return {
        name: obj if isinstance(obj, Run) else to_run(obj, source=name)
        for name, obj in zip(names, runs.values())
    }


def _evaluator(qrels: Any, measure: Any, settings: EvalSettings) -> Evaluator:
    """The evaluator of every system: the qrels read and the one measure resolved, once."""
    if not isinstance(measure, (str, Measure)):
        raise TierankInputError(f"compare: give exactly one measure as a string, got {measure!r}")
    ev = Evaluator(qrels, measure, settings, stacklevel=4)
    if len(ev.measures) != 1:
        raise TierankInputError(
            f"compare: give exactly one measure as a string, got {measure!r} "
            f"({len(ev.measures)} measures: {', '.join(map(str, ev.measures))})"
        )
    return ev


@dataclass(frozen=True)
class _Evaluated:
    """Every system's evaluation on the compared queries: its summary, its per-query values on the
    measure's scale (``raw``) and on the inference's (``per``, `SCALES`)."""

    summaries: dict[str, SystemSummary]
    raw: dict[str, dict[str, np.ndarray]]
    per: dict[str, dict[str, np.ndarray]]

    @classmethod
    def of(cls, m: Measure, results: dict[str, EvalResult], common: list[str]) -> _Evaluated:
        raw = {name: _aligned(res, common) for name, res in results.items()}
        return cls(
            summaries={name: _summary(name, res, common) for name, res in results.items()},
            raw=raw,
            per={name: _scaled(m, st, len(common)) for name, st in raw.items()},
        )

    def matrix(self, ranked: list[str], key: str) -> np.ndarray:
        """The per-query values ``key`` on the inference's scale, queries x systems of ``ranked``."""
        return np.column_stack([self.per[n][key] for n in ranked])


def _common_queries(
    ev: Evaluator, runs: dict[str, Run]
) -> tuple[Evaluator, dict[str, EvalResult], list[str], int]:
    """Every run evaluated on the queries evaluated for all (the evaluator judging those alone when the
    measure's summary is not additive), those queries sorted, and how many were dropped."""
    results = {name: ev.evaluate(r) for name, r in runs.items()}
    m = ev.measures[0]
    qsets = [set(res.qids) for res in results.values()]
    common = sorted(set.intersection(*qsets))
    if not common:
        raise TierankInputError(
            f"compare: no query is evaluated for every system ({', '.join(runs)}); "
            "the runs share no judged query"
        )
    dropped = len(set.union(*qsets)) - len(common)
    _numeric(m, results, common)
    if dropped and not m.additive:  # a summary that is not additive: the common queries alone
        ev = ev.judging(ac.array(common, ac.decoded(ev.qrels.qid).type))
        results = {name: ev.evaluate(r) for name, r in runs.items()}
    return ev, results, common, dropped


def _tie_draws(
    ev: Evaluator, runs: dict[str, Run], ranked: list[str], common: list[str], o: CompareSettings
) -> np.ndarray | None:
    """With ``leaderboard`` and ``tie_samples``: the per-query values (inference scale) of every system
    under ``tie_samples`` independent uniformly random tie orderings, draws x queries x systems."""
    if not (o.tie_samples and o.leaderboard):
        return None
    m, n = ev.measures[0], len(common)
    draws = np.empty((int(o.tie_samples), n, len(ranked)))
    for j, name in enumerate(ranked):
        for k in range(int(o.tie_samples)):
            rs = int(np.random.SeedSequence([int(o.seed), j, k]).generate_state(1, np.uint64)[0])
            res = ev.under(tie_break=f"random:{rs}").evaluate(runs[name])
            draws[k, :, j] = _scaled(m, _aligned(res, common), n)["oblivious"]
    return draws


def compare(
    runs: Mapping,
    qrels: Any,
    measure: str | Measure,
    settings: EvalSettings | None = None,
    options: CompareSettings | None = None,
    **keywords: Any,
) -> Comparison:
    """Compare systems on one measure, tie-aware, pair by pair.

    Parameters
    ----------
    runs
        ``{name: run}``, at least two systems; each run as [`tierank.evaluate`][tierank.evaluate] accepts it (path,
        DataFrame, dict of dicts, [`tierank.Run`][tierank.Run]); each is read once.
    qrels
        As [`tierank.evaluate`][tierank.evaluate] accepts it.
    measure
        One measure (``"nDCG@10"``, ``"RR@10"``, a [`tierank.Measure`][tierank.Measure], ...), resolved once.
    settings
        How every system is evaluated: an [`tierank.EvalSettings`][tierank.EvalSettings] (default: trec_eval's
        conventions).
    options
        How the systems are compared: a [`CompareSettings`][tierank.analysis.compare.CompareSettings] (the test, intervals, correction,
        band, leaderboard, samples and seed).
    keywords
        Any field of either by name, applied over them: ``tie_break``, ``rel``, ``complete``,
        ``candidates_only`` (... of [`tierank.EvalSettings`][tierank.EvalSettings], but ``seed``) and ``alpha``,
        ``band``, ``correction``, ``test``, ``ci``, ``level``, ``seed``, ``resamples``,
        ``permutations``, ``leaderboard``, ``jobs``, ``tie_samples`` ([`CompareSettings`][tierank.analysis.compare.CompareSettings]).

    Returns
    -------
    Comparison
        ``systems`` sorted by expected mean; ``pairs`` for every unordered pair (see
        [`PairComparison`][tierank.analysis.compare.PairComparison]); Kendall's tau between the orderings by oblivious and by expected mean
        (``kendall_tau``) and by min and by max mean (``kendall_tau_min_max``).  ``to_dict()`` is the
        document ``tierank compare --format json`` writes.

    Notes
    -----
    Queries: each system is evaluated as [`tierank.evaluate`][tierank.evaluate] does (queries in both its run and
    the qrels), by one [`tierank.Evaluator`][tierank.Evaluator], and the comparison uses the queries common to all
    systems' evaluations, so that the paired tests pair the same queries; the number left out is
    ``dropped_queries``.  With ``complete=True`` every qrels query is evaluated for every system
    (absent ones score 0), so all qrels queries are used.

    Summaries and scale: every system's ``oblivious``, ``expected``, ``min``, ``max`` and ``std`` are
    its measure's own aggregate over the compared queries (``Measure.aggregate``, as
    [`tierank.evaluate`][tierank.evaluate] reports it): the mean, a sum for counts (NumRet, ...), trec_eval's floored
    geometric mean for GMAP and GMBpref.  The tests, intervals, ranks and groups are computed on the
    per-query values that summary averages (`SCALES`; ``inference`` in the result): log values
    for a geometric mean (CIs mapped back with exp, pairs as ratios), the per-query values for a sum
    (CIs times the number of queries).  A string-valued measure (RelString) is refused.

    Where every per-query difference is zero (beyond ``ZERO_TOL``) the test is undefined and the pair
    gets ``t = 0.0, p = 1.0``.  Where t is undefined otherwise (one query; equal nonzero differences,
    where scipy gives ``t = +-inf, p = 0``), and for the bootstrap test with at most 20 nonzero
    differences, the exact randomization test gives ``p`` (``test_used``, ``fallback`` and ``notes``
    say so).  With one query the CIs, rank intervals and Tukey groups are None, with the reason in
    ``notes``.

    With ``band``, the "original" p-value of a pair is the one on the *unbanded* runs' per-query
    **expected** values (``p``), not the paper's tie-free reference (its rho = 1.0 reads each run in
    file order); ``p_banded`` is the same test on the banded runs' per-query expected values, where a
    band's documents tie.  ``band_summary`` holds ``rho, alpha, pairs``; the counts
    ``significant_original``, ``significant_banded``, ``kept`` (significant before and after),
    ``false_positives`` (only after banding), ``false_negatives`` (only before), ``neither``; and the
    percentages of all pairs ``pct_kept``, ``pct_false_positives``, ``pct_false_negatives``,
    ``pct_neither`` (summing to 100), as in the quadrants of the paper's Figure 4.

    Raises
    ------
    TierankInputError
        Fewer than two systems, an invalid measure or setting, input that [`tierank.evaluate`][tierank.evaluate]
        rejects, or no query common to all systems.

    Examples
    --------
    The oblivious RR (trec_eval breaks the tie by docno descending: "z" first) says ``tied`` beats
    ``exact``; the expectation over the tie's orderings says otherwise.

    >>> qrels = {"q1": {"z": 1}, "q2": {"z": 1}}
    >>> runs = {"tied": {"q1": {"a": 1.0, "b": 1.0, "z": 1.0}, "q2": {"z": 0.5, "a": 0.5}},
    ...         "exact": {"q1": {"a": 0.9, "z": 0.8}, "q2": {"z": 0.9, "a": 0.8}}}
    >>> cmp = compare(runs, qrels, "RR")
    >>> [(s.name, round(s.oblivious, 4), round(s.expected, 4)) for s in cmp.systems]
    [('exact', 0.75, 0.75), ('tied', 1.0, 0.6806)]
    >>> p = cmp.pairs[0]
    >>> p.order_flip, p.undecidable, p.significant
    (True, True, False)
    >>> cmp.kendall_tau
    -1.0
    """
    s, o = compare_settings(settings, options, keywords)
    converted = _checked_runs(runs)
    ev, results, common, dropped = _common_queries(_evaluator(qrels, measure, s), converted)
    m = ev.measures[0]
    main = _Evaluated.of(m, results, common)
    ranked = sorted(converted, key=lambda name: -main.summaries[name].expected)  # stable
    banded = None
    if o.band is not None:
        bands = {name: ev.evaluate(band_run(r, o.band)) for name, r in converted.items()}
        banded = _Evaluated.of(m, bands, common)
    draws = _tie_draws(ev, converted, ranked, common, o)
    summaries, infer = _infer(main, ranked, o, m.aggregator, draws)
    pairs = _pairs(m, ranked, replace(main, summaries=summaries), banded, o, infer)
    return _comparison(m, common, dropped, ranked, summaries, pairs, banded, o, infer, ev.settings)


def _comparison(
    m: Measure,
    common: list[str],
    dropped: int,
    ranked: list[str],
    summaries: dict[str, SystemSummary],
    pairs: list[PairComparison],
    banded: _Evaluated | None,
    o: CompareSettings,
    infer: dict,
    settings: EvalSettings,
) -> Comparison:
    """The [`Comparison`][tierank.analysis.compare.Comparison] of the ranked systems and their pairs."""
    col = lambda k: np.array([getattr(summaries[n], k) for n in ranked])  # noqa: E731
    notes = list(infer["notes"]) + [
        f"{pc.a} vs {pc.b}: {pc.fallback}; p from the exact randomization test"
        for pc in pairs
        if pc.fallback is not None
    ]
    return Comparison(
        measure=str(m),
        queries=tuple(common),
        dropped_queries=dropped,
        systems=tuple(summaries[n] for n in ranked),
        pairs=tuple(pairs),
        kendall_tau=_tau(col("oblivious"), col("expected")),
        kendall_tau_min_max=_tau(col("min"), col("max")),
        alpha=float(o.alpha),
        band=o.band,
        banded_systems=None if banded is None else tuple(banded.summaries[n] for n in ranked),
        band_summary=None if o.band is None else summarise_band(pairs, o.band, o.alpha),
        best=infer["best"],
        inference={
            "aggregator": m.aggregator,
            "scale": "log" if m.aggregator == "geometric_mean" else "linear",
            "on": SCALES[m.aggregator],
            "test": inference.PAIRED_TESTS[o.test].to_dict(),
        },
        notes=tuple(notes),
        settings=_settings_record(settings, o, infer),
    )


def _settings_record(s: EvalSettings, o: CompareSettings, infer: dict) -> dict[str, Any]:
    """``Comparison.settings``: the evaluation's settings (the four of trec_eval's conventions always,
    the others where they differ from their defaults), then the comparison's."""
    out: dict[str, Any] = {
        "tie_break": str(s.tie_break),
        "rel": s.rel,
        "complete": s.complete,
        "candidates_only": s.candidates_only,
    }
    if s.unjudged != "nonrelevant":
        out["unjudged"] = s.unjudged
    if s.judged_only:
        out["judged_only"] = True
    if s.max_depth is not None:
        out["max_depth"] = s.max_depth
    out.update(o.record())
    if o.leaderboard:
        out.update(tie_samples=int(o.tie_samples), rank_method=infer["rank_method"])
    return out


def _pairs(
    m: Measure,
    ranked: list[str],
    main: _Evaluated,
    banded: _Evaluated | None,
    o: CompareSettings,
    infer: dict,
) -> list[PairComparison]:
    """Every unordered pair of ``ranked``, the higher-ranked first: its tests (on the expected values,
    the oblivious values and, with a band, the banded expected values) and flags, corrected."""
    pair_names = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]
    kw: dict[str, Any] = dict(
        test=o.test,
        pairs=pair_names,
        level=o.level,
        resamples=o.resamples,
        samples=o.permutations,
        seed=o.seed,
    )
    tests = inference.paired_tests(
        main.matrix(ranked, "expected"), ranked, ci=o.ci, boot=infer["boot"], **kw
    )
    obl = inference.paired_tests(main.matrix(ranked, "oblivious"), ranked, **kw)
    band = (
        None
        if banded is None
        else inference.paired_tests(banded.matrix(ranked, "expected"), ranked, **kw)
    )
    n = len(next(iter(main.raw.values()))["expected"])
    pairs = [
        _pair(
            m,
            n,
            pair,
            main,
            (tests[k], obl[k], None if band is None else band[k]),
            o,
            infer["hsd"],
            banded,
        )
        for k, pair in enumerate(pair_names)
    ]
    return _corrected(pairs, o)


def _corrected(pairs: list[PairComparison], o: CompareSettings) -> list[PairComparison]:
    """The pairs with their p-values adjusted by ``o.correction`` (the banded ones a family of their
    own), ``significant`` reading the adjusted value."""
    if o.correction is None or not pairs:
        return pairs
    adjusted = adjust_pvalues([pc.p for pc in pairs], o.correction)
    pairs = [
        replace(pc, p_adjusted=float(v), significant=bool(v < o.alpha))
        for pc, v in zip(pairs, adjusted)
    ]
    if o.band is not None:
        adjusted = adjust_pvalues([pc.p_banded for pc in pairs], o.correction)
        pairs = [
            replace(pc, p_banded_adjusted=float(v), significant_banded=bool(v < o.alpha))
            for pc, v in zip(pairs, adjusted)
        ]
    return pairs


def _pair(
    m: Measure,
    n: int,
    names: tuple[str, str],
    main: _Evaluated,
    tests: tuple[inference.PairTest, inference.PairTest, inference.PairTest | None],
    o: CompareSettings,
    hsd: inference.TukeyHSD | None,
    banded: _Evaluated | None,
) -> PairComparison:
    """One pair's comparison from its tests on the inference scale (`SCALES`) and the systems'
    summaries on the measure's own."""
    a, b = names
    pt, pt_obl, pt_band = tests
    sa, sb = main.summaries[a], main.summaries[b]
    extra = _test_fields(m.aggregator, n, pt, sa, sb)
    if pt_band is not None and banded is not None:
        extra.update(
            p_banded=pt_band.p,
            diff_banded=banded.summaries[a].expected - banded.summaries[b].expected,
            significant_banded=bool(pt_band.p < o.alpha),
        )
    if hsd is not None:
        extra["p_tukey"] = hsd.pvalue(a, b)
    std_diff, above, above_bound = _tie_odds(m.aggregator, n, sa, sb, main.raw[a], main.raw[b])
    d_exp, d_obl = sa.expected - sb.expected, sa.oblivious - sb.oblivious
    se, so = _sign(d_exp), _sign(d_obl)
    return PairComparison(
        a=a,
        b=b,
        diff_expected=d_exp,
        diff_oblivious=d_obl,
        t=pt.t,
        p=pt.p,
        p_oblivious=pt_obl.p,
        order_flip=bool(se != 0 and so != 0 and se != so),
        undecidable=bool(sa.min <= sb.max + ZERO_TOL and sb.min <= sa.max + ZERO_TOL),
        significant=bool(pt.p < o.alpha),
        std_diff=std_diff,
        p_a_above=above,
        p_a_above_bound=above_bound,
        **extra,
    )


def _test_fields(
    agg: str, n: int, pt: inference.PairTest, sa: SystemSummary, sb: SystemSummary
) -> dict[str, Any]:
    """A pair's fields from its test: the statistic and the intervals on the measure's scale (a ratio
    of geometric means for a geometric-mean measure)."""
    location = inference.PAIRED_TESTS[pt.test_used].statistic is None  # a mean difference
    out: dict[str, Any] = dict(
        test=pt.test,
        test_used=pt.test_used,
        fallback=pt.fallback,
        statistic=pt.statistic * n if agg == "sum" and location else pt.statistic,
        method=pt.method,
        samples=pt.samples,
        seed=pt.seed,
        se=pt.se,
        effect_size=pt.effect_size,
        effect_ci_low=pt.effect_ci_low,
        effect_ci_high=pt.effect_ci_high,
    )
    if agg == "geometric_mean":  # a difference of log values is a ratio of geometric means
        out.update(
            diff_ci_low=float("nan"),
            diff_ci_high=float("nan"),
            ratio=sa.expected / sb.expected if sb.expected > 0 else float("nan"),
            ratio_ci_low=float(_back(agg, n, pt.diff_ci_low)),
            ratio_ci_high=float(_back(agg, n, pt.diff_ci_high)),
        )
    else:
        out.update(
            diff_ci_low=float(_back(agg, n, pt.diff_ci_low)),
            diff_ci_high=float(_back(agg, n, pt.diff_ci_high)),
        )
    return out


def _tie_odds(
    agg: str,
    n: int,
    sa: SystemSummary,
    sb: SystemSummary,
    ra: dict[str, np.ndarray],
    rb: dict[str, np.ndarray],
) -> tuple[float, float, float]:
    """``std_diff``, ``p_a_above`` and ``p_a_above_bound`` of a pair: the moments of the difference of
    the summaries over both runs' independent tie orderings, and the probabilities from them."""
    if agg == "geometric_mean":  # the summaries' own moments over tie orderings
        mean_d, var_d = sa.expected - sb.expected, sa.std**2 + sb.std**2
        if not math.isfinite(var_d):
            var_d = 0.0 if sa.min == sa.max and sb.min == sb.max else float("nan")
        lo, hi, scale = sa.min - sb.max, sa.max - sb.min, 1.0
    else:  # the means' moments; a sum's probability is its mean's, its spread n times
        mean_d, var_d = diff_moments(ra["expected"], ra["var"], rb["expected"], rb["var"])
        lo = float(np.mean(ra["min"]) - np.mean(rb["max"]))
        hi = float(np.mean(ra["max"]) - np.mean(rb["min"]))
        scale = float(n) if agg == "sum" else 1.0
    if math.isfinite(var_d):
        above, above_bound = prob_above(mean_d, var_d, lo=lo, hi=hi)
    else:
        above = above_bound = float("nan")
    return scale * math.sqrt(var_d), above, above_bound


def _infer(
    main: _Evaluated,
    ranked: list[str],
    o: CompareSettings,
    aggregator: str,
    tie_draws: np.ndarray | None = None,
) -> tuple[dict[str, SystemSummary], dict]:
    """The systems' summaries with their CI, ranks and (with ``leaderboard``) rank interval and Tukey
    group; and ``{"boot": shared bootstrap means or None, "best": systems not separated from the best,
    "rank_method", "hsd", "notes"}``."""
    E = main.matrix(ranked, "expected")
    nq = E.shape[0]
    sampled = o.ci != "t" or o.test == "bootstrap" or o.leaderboard
    boot = inference.bootstrap_means(E, o.resamples, o.seed) if sampled else None
    cis = inference.mean_cis(
        E, ranked, method=o.ci, level=o.level, resamples=o.resamples, seed=o.seed, boot=boot
    )
    notes = []
    if nq < 2:
        notes.append(
            "1 query: no confidence interval"
            + (", rank interval or Tukey HSD group" if o.leaderboard else "")
            + " can be computed (null); they need at least 2 queries"
        )
    board = _leaderboard(E, ranked, o, boot, tie_draws) if o.leaderboard and nq >= 2 else None
    summaries = main.summaries
    rank = inference.competition_ranks(np.array([summaries[n].expected for n in ranked]))
    rank_obl = inference.competition_ranks(np.array([summaries[n].oblivious for n in ranked]))
    back = lambda x: float(_back(aggregator, nq, x))  # noqa: E731
    out = {
        n: replace(
            summaries[n],
            ci_low=back(c.ci_low),
            ci_high=back(c.ci_high),
            ci_method=c.ci_method,
            rank=int(rank[i]),
            rank_oblivious=int(rank_obl[i]),
            **({} if board is None else board["systems"][i]),
        )
        for i, (n, c) in enumerate(zip(ranked, cis))
    }
    return {**summaries, **out}, {
        "boot": boot,
        "best": None if board is None else board["best"],
        "rank_method": None if board is None else board["rank_method"],
        "hsd": None if board is None else board["hsd"],
        "notes": notes,
    }


def _leaderboard(
    E: np.ndarray,
    ranked: list[str],
    o: CompareSettings,
    boot: np.ndarray | None,
    tie_draws: np.ndarray | None,
) -> dict[str, Any]:
    """The leaderboard's figures: per system its rank interval and Tukey HSD group, the systems not
    separated from the best, the rank intervals' method and the Tukey HSD itself."""
    ri = inference.rank_intervals(
        E, ranked, level=o.level, resamples=o.resamples, seed=o.seed, boot=boot, tie_draws=tie_draws
    )
    hsd = inference.tukey_hsd(
        E, ranked, alpha=o.alpha, permutations=o.permutations, seed=o.seed, jobs=o.jobs
    )
    return {
        "systems": [
            dict(rank_low=int(lo), rank_high=int(hi), group=g)
            for lo, hi, g in zip(ri.low, ri.high, hsd.groups)
        ],
        "best": hsd.best,
        "rank_method": ri.method,
        "hsd": hsd,
    }


def records(comparison: Comparison) -> dict:
    """JSON-ready plain-Python view of a [`Comparison`][tierank.analysis.compare.Comparison] ([`Comparison.to_dict`][tierank.analysis.compare.Comparison.to_dict]).

    Examples
    --------
    >>> import json
    >>> cmp = compare({"A": {"q": {"x": 2.0, "y": 1.0}}, "B": {"q": {"x": 1.0, "y": 1.0}}},
    ...               {"q": {"x": 1}}, "P@1")
    >>> rec = records(cmp)
    >>> rec["systems"][0]["name"], rec["pairs"][0]["undecidable"], rec["kendall_tau_min_max"]
    ('A', True, None)
    >>> _ = json.dumps(rec, allow_nan=False)
    """
    return comparison.to_dict()
