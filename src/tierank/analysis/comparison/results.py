"""What a comparison gives: one [`SystemSummary`][tierank.analysis.compare.SystemSummary] per system, one
[`PairComparison`][tierank.analysis.compare.PairComparison] per pair, and the
[`Comparison`][tierank.analysis.compare.Comparison] holding them with its plain-Python view (``to_dict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ...results import jsonable


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
    human_mean, ppi_mean, ppi_ci_low, ppi_ci_high : float or None
        With ``ppi`` (human qrels for some queries): the mean of the per-query expected values under
        the human grades over the queries they judge, and the prediction-powered estimate of the
        human mean over all compared queries with its interval at ``level``
        ([`tierank.analysis.ppi`][tierank.analysis.ppi]: PPI, ``lam = 1``).
    ppi_pp_mean, ppi_pp_ci_low, ppi_pp_ci_high, ppi_pp_lambda : float or None
        The same by PPI++ (power-tuned ``lam``, ``ppi_pp_lambda``).
    ppi_n_labeled, ppi_n_unlabeled : int or None
        The compared queries with human labels, and those without.
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
    human_mean: float | None = None
    ppi_mean: float | None = None
    ppi_ci_low: float | None = None
    ppi_ci_high: float | None = None
    ppi_pp_mean: float | None = None
    ppi_pp_ci_low: float | None = None
    ppi_pp_ci_high: float | None = None
    ppi_pp_lambda: float | None = None
    ppi_n_labeled: int | None = None
    ppi_n_unlabeled: int | None = None


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
        t-test by default), floored (``p_floor``).  1.0 when every per-query difference is zero (the test is undefined
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
    p_test, p_floor : float
        The p-value the test computed on the expected values, and the smallest p-value exact
        sign-flip randomization can reach on the pair's ``m`` nonzero differences, ``2 / 2^m``:
        ``p = max(p_test, p_floor)`` (every test, every p of the pair: oblivious, banded, Tukey's),
        so that a pair from few queries is never called significant at an ``alpha`` no exact
        randomization on the same differences could reach (2 queries: ``p >= 0.5``; 3: ``>= 0.25``;
        6: ``>= 0.03125``).  The pair's intervals are null where ``p_floor >= 1 - level``
        ([`PairTest`][tierank.analysis.inference.PairTest]).
    human_diff, ppi_diff, ppi_ci_low, ppi_ci_high : float or None
        With ``ppi``: the mean per-query difference under the human grades (over the queries they
        judge), and the PPI estimate of the human mean difference, from the per-query differences
        ``a - b`` (human and machine), with its interval at ``level``.
    ppi_pp_diff, ppi_pp_ci_low, ppi_pp_ci_high, ppi_pp_lambda : float or None
        The same by PPI++ (power-tuned ``lam``).
    ppi_n_labeled, ppi_n_unlabeled : int or None
        The compared queries with human labels, and those without.
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
    p_test: float = float("nan")
    p_floor: float = float("nan")
    human_diff: float | None = None
    ppi_diff: float | None = None
    ppi_ci_low: float | None = None
    ppi_ci_high: float | None = None
    ppi_pp_diff: float | None = None
    ppi_pp_ci_low: float | None = None
    ppi_pp_ci_high: float | None = None
    ppi_pp_lambda: float | None = None
    ppi_n_labeled: int | None = None
    ppi_n_unlabeled: int | None = None

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
        (`SCALES`, in words); with ``ppi``, ``ppi`` (the method, the values, the labelled and
        unlabelled queries and the confidence of the prediction-powered estimates).
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
