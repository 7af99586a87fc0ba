"""Compare systems tie-aware: can ties flip which system looks better?

Ties make a system's score an interval, not a number: the tie-oblivious value
(trec_eval's tie-break, say) is one point of it, the expectation over all tie
orderings another.  Yang, Moffat & Turpin ("How precise does document scoring
need to be?", Figure 2) show overlapping [pessimal, optimal] segments of TREC7
systems; Yang et al. ("Reliable Evaluation Protocol for Low-Precision
Retrieval", Section 3, Table 1) report a BF16 reranker that beats another under the
oblivious nDCG@10 and loses under the expected one.  :func:`compare` puts a set
of runs side by side on one measure and flags, for every pair of systems:

* ``order_flip``: the oblivious means order the pair the other way round from
  the expected means;
* ``undecidable``: the systems' [min, max] intervals of the mean overlap, so
  some tie orderings would rank the pair either way (or make it equal): the
  comparison cannot be decided from these scores;
* ``significant``: a paired t-test on the per-query expected values, or with ``test`` a
  Wilcoxon signed-rank, randomization or paired bootstrap test (optionally with a
  multiple-comparison ``correction`` across all pairs: Bonferroni, Holm or Benjamini-Hochberg,
  :func:`adjust_pvalues`); every pair also gets its mean difference's CI and Cohen's d_z, every
  system a CI of its mean and its ranks, and with ``leaderboard`` bootstrap rank intervals and
  randomized Tukey HSD groups (:mod:`tierank.analysis.inference`);
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
  corrections live in :mod:`tierank.analysis.significance` (re-exported here).

With ``band=rho`` every run is also re-scored into geometric rank bands
(:func:`~tierank.analysis.banding.band_run`) and re-evaluated, and the pairs'
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
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..evaluate import evaluate
from ..io.convert import to_qrels, to_run
from ..io.model import Run
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
        (:func:`~tierank.analysis.inference.mean_cis`: ``t``, ``percentile`` or ``bca``).
    rank, rank_oblivious : int
        Rank by expected and by oblivious mean (1 = best; equal means share the better rank).
    rank_low, rank_high : int or None
        With ``leaderboard``: the 2.5-97.5% range of the rank by expected mean over query-bootstrap
        resamples (:func:`~tierank.analysis.inference.rank_intervals`).
    group : str or None
        With ``leaderboard``: randomized Tukey HSD letters (:func:`~tierank.analysis.inference.tukey_hsd`);
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
        With ``correction``: ``p`` adjusted for all pairs (:func:`adjust_pvalues`); then
        ``significant`` is ``p_adjusted < alpha``.
    p_banded_adjusted : float or None
        With ``correction`` and ``band``: ``p_banded`` adjusted the same way over all pairs; then
        ``significant_banded`` is ``p_banded_adjusted < alpha``.
    test : str
        The test behind ``p``: ``t``, ``wilcoxon``, ``randomization`` or ``bootstrap``
        (:func:`~tierank.analysis.inference.paired_tests`).
    method, samples, seed, se : str, int or None, int or None, float or None
        How ``p`` was computed: ``analytic``, ``exact`` (all sign flips; ``samples`` = 2^m) or
        ``monte-carlo`` (with ``samples``, ``seed`` and the standard error ``se`` of ``p``).
    effect_size, effect_ci_low, effect_ci_high : float
        Cohen's d_z of the per-query expected-value differences and its CI (noncentral t).
    diff_ci_low, diff_ci_high : float
        CI of ``diff_expected`` over the query sample (method: the comparison's ``ci``).
    statistic : float
        The statistic of the pair's ``test`` on the expected values: ``t`` for the t-test, W
        (scipy's) for Wilcoxon, the mean difference for the randomization and bootstrap tests.
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
    """Result of :func:`compare`.

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
        With ``band``: the Figure 4 cross-tabulation, see :func:`compare`.
    settings : dict
        Evaluation settings (tie_break, rel, complete, candidates_only) and the inference settings
        (test, ci, level, seed, resamples, permutations).
    best : tuple of str or None
        With ``leaderboard``: the systems randomized Tukey HSD cannot separate from the best.
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

    def __repr__(self) -> str:
        flips = sum(p.order_flip for p in self.pairs)
        undecidable = sum(p.undecidable for p in self.pairs)
        return (f"Comparison({self.measure}, {len(self.systems)} systems, {len(self.queries)} queries, "
                f"{len(self.pairs)} pairs: {flips} flipped, {undecidable} undecidable)")


def _sign(x: float) -> int:
    return 0 if abs(x) <= ZERO_TOL else (1 if x > 0 else -1)


def _paired_t(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test; (0.0, 1.0) when every difference is zero."""
    d = x - y
    if np.all(np.abs(d) <= ZERO_TOL):
        return 0.0, 1.0
    from scipy.stats import ttest_rel

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = ttest_rel(x, y)
    return float(res.statistic), float(res.pvalue)


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import kendalltau

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(kendalltau(x, y).statistic)


def _summary(name: str, st: dict[str, np.ndarray]) -> SystemSummary:
    n = len(st["expected"])
    obl, exp_, lo, hi = (float(np.mean(st[k])) for k in ("oblivious", "expected", "min", "max"))
    return SystemSummary(name=name, oblivious=obl, expected=exp_, min=lo, max=hi, range=hi - lo,
                         bias=obl - exp_, std=float(np.sqrt(np.sum(st["var"])) / n))


def _aligned(result, queries: list[str]) -> dict[str, np.ndarray]:
    """The result's per-query arrays of its one measure, restricted and aligned to ``queries``."""
    s = result.stats[result.measures[0]]
    pos = {q: i for i, q in enumerate(result.qids)}
    idx = np.fromiter((pos[q] for q in queries), dtype=np.int64, count=len(queries))
    return {k: np.asarray(getattr(s, k), dtype=np.float64)[idx] for k in ("oblivious", "expected", "min", "max", "var")}


def compare(runs: Mapping, qrels, measure: str, *, tie_break: str = "trec_eval", rel: int = 1,
            complete: bool = False, candidates_only: bool = False, alpha: float = 0.05,
            band: float | None = None, correction: str | None = None, test: str = "t", ci: str = "t",
            level: float = 0.95, seed: int = 0, resamples: int = inference.DEFAULT_RESAMPLES,
            permutations: int = inference.DEFAULT_PERMUTATIONS, leaderboard: bool = False,
            jobs: int | None = None, tie_samples: int = 0) -> Comparison:
    """Compare systems on one measure, tie-aware, pair by pair.

    Parameters
    ----------
    runs
        ``{name: run}``, at least two systems; each run as :func:`tierank.evaluate`
        accepts it (path, DataFrame, dict of dicts, :class:`tierank.Run`).
    qrels
        As :func:`tierank.evaluate` accepts it.
    measure
        One measure string (``"nDCG@10"``, ``"RR@10"``, ...).
    tie_break, rel, complete, candidates_only
        Passed to :func:`tierank.evaluate` for every system.
    alpha
        Significance level: a pair is significant when ``p < alpha``.
    band
        If given (rho > 1): also band every run into geometric rank bands
        (:func:`~tierank.analysis.banding.band_run`), re-evaluate, and compare the
        pairs' significance before and after banding.
    correction
        ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"``: adjust the pairs' p-values for
        the number of pairs (:func:`adjust_pvalues`); ``significant`` then reads the adjusted
        value ``p_adjusted`` (and with ``band``, ``significant_banded`` the adjusted ``p_banded``).
    test
        The pairs' test on the per-query values (:func:`~tierank.analysis.inference.paired_tests`):
        ``"t"`` (paired t, the default), ``"wilcoxon"``, ``"randomization"`` (Fisher's sign flips:
        exact with at most 20 nonzero differences, else ``permutations`` Monte Carlo flips) or
        ``"bootstrap"`` (``resamples`` paired bootstrap resamples).
    ci
        The systems' and the mean differences' confidence intervals over the query sample:
        ``"t"`` (default), ``"percentile"`` or ``"bca"`` (bootstrap, ``resamples``).
    level
        Confidence level of the intervals.
    seed, resamples, permutations
        Every sampled figure is reproducible from ``seed``: bootstrap resamples are drawn from
        ``seed`` and the number of queries only and shared by all systems, so a system's interval
        does not change when other systems are added, as long as the compared queries (those common
        to all systems) stay the same (:mod:`tierank.analysis.inference`).
    leaderboard
        Also compute the rank intervals (query bootstrap) and randomized Tukey HSD (``permutations``)
        groups of the systems, and the systems indistinguishable from the best (``best``).
    jobs
        Threads sharing Tukey HSD's permutations (the same result for any number; ``None``: up to 2).
    tie_samples
        With ``leaderboard``: also redraw each query's tie ordering in every bootstrap resample of
        the rank intervals, from ``tie_samples`` evaluations of each run under ``random:SEED`` tie
        breaking (seeds from ``seed``, the draw and the system;
        :func:`~tierank.analysis.inference.bootstrap_tie_means`). 0 (default): query sample only.
        Recorded in ``settings`` (``tie_samples``, ``rank_method``).

    Returns
    -------
    Comparison
        ``systems`` sorted by expected mean; ``pairs`` for every unordered pair
        (see :class:`PairComparison`); Kendall's tau between the orderings by
        oblivious and by expected mean (``kendall_tau``) and by min and by max mean
        (``kendall_tau_min_max``).

    Notes
    -----
    Queries: each system is evaluated as :func:`tierank.evaluate` does (queries in
    both its run and the qrels), and the comparison uses the queries common to all
    systems' evaluations, so that the paired tests pair the same queries; the number
    left out is ``dropped_queries``.  With ``complete=True`` every qrels query is
    evaluated for every system (absent ones score 0), so all qrels queries are used.

    The t-tests are two-sided paired t-tests (``scipy.stats.ttest_rel``) over the
    compared queries.  Where every per-query difference is zero (beyond ``ZERO_TOL``)
    the test is undefined and the pair gets ``t = 0.0, p = 1.0``; constant nonzero
    differences give ``t = +-inf, p = 0.0``; a single query gives NaN.

    With ``band``, the "original" p-value of a pair is the one on the *unbanded*
    runs' per-query **expected** values (``p``), not the paper's tie-free reference
    (its rho = 1.0 reads each run in file order); ``p_banded`` is the same test on
    the banded runs' per-query expected values, where a band's documents tie.
    ``band_summary`` holds ``rho, alpha, pairs``; the counts ``significant_original``,
    ``significant_banded``, ``kept`` (significant before and after),
    ``false_positives`` (only after banding), ``false_negatives`` (only before),
    ``neither``; and the percentages of all pairs ``pct_kept``,
    ``pct_false_positives``, ``pct_false_negatives``, ``pct_neither`` (summing to
    100), as in the quadrants of the paper's Figure 4.

    Raises
    ------
    TierankInputError
        Fewer than two systems, an invalid measure, alpha or rho, input that
        :func:`tierank.evaluate` rejects, or no query common to all systems.

    Examples
    --------
    The oblivious RR (trec_eval breaks the tie by docno descending: "z" first) says
    ``tied`` beats ``exact``; the expectation over the tie's orderings says otherwise.

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
    if not isinstance(runs, Mapping):
        raise TierankInputError("compare: runs must be a mapping {system name: run}")
    if len(runs) < 2:
        raise TierankInputError(f"compare: need at least two systems to compare, got {len(runs)}")
    if not isinstance(measure, str):
        raise TierankInputError(f"compare: give exactly one measure as a string, got {measure!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise TierankInputError(f"compare: alpha must be in (0, 1), got {alpha!r}")
    if band is not None:
        band = check_rho(band)
    if correction is not None and correction not in CORRECTIONS:
        raise TierankInputError(f"compare: unknown correction {correction!r}; accepted: {', '.join(CORRECTIONS)}")
    if test not in inference.TESTS:
        raise TierankInputError(f"compare: unknown test {test!r}; accepted: {', '.join(inference.TESTS)}")
    if not (isinstance(tie_samples, (int, np.integer)) and not isinstance(tie_samples, bool) and tie_samples >= 0):
        raise TierankInputError(f"compare: tie_samples must be a non-negative integer, got {tie_samples!r}")
    if ci not in inference.CI_METHODS:
        raise TierankInputError(f"compare: unknown CI method {ci!r}; accepted: {', '.join(inference.CI_METHODS)}")

    names = [str(k) for k in runs]
    if len(set(names)) != len(names):
        raise TierankInputError("compare: system names must be distinct")
    q = to_qrels(qrels)
    converted: dict[str, Run] = {}
    for name, obj in zip(names, runs.values()):
        converted[name] = obj if isinstance(obj, Run) else to_run(obj, source=name)
    opts: dict[str, Any] = dict(tie_break=tie_break, rel=rel, complete=complete, candidates_only=candidates_only)

    results = {name: evaluate(q, r, [measure], **opts) for name, r in converted.items()}
    mname = str(results[names[0]].measures[0])
    qsets = [set(res.qids) for res in results.values()]
    common = sorted(set.intersection(*qsets))
    if not common:
        raise TierankInputError(f"compare: no query is evaluated for every system ({', '.join(names)}); "
                                "the runs share no judged query")
    dropped = len(set.union(*qsets)) - len(common)
    per = {name: _aligned(res, common) for name, res in results.items()}

    summaries = {name: _summary(name, st) for name, st in per.items()}
    order = sorted(range(len(names)), key=lambda i: -summaries[names[i]].expected)  # stable
    ranked = [names[i] for i in order]

    banded_per = banded_summaries = None
    if band is not None:
        banded = {name: evaluate(q, band_run(r, float(band)), [measure], **opts) for name, r in converted.items()}
        banded_per = {name: _aligned(res, common) for name, res in banded.items()}
        banded_summaries = {name: _summary(name, st) for name, st in banded_per.items()}

    tie_draws = None
    if tie_samples and leaderboard:  # per-query values under independent uniformly random tie orderings
        tie_draws = np.empty((int(tie_samples), len(common), len(ranked)))
        for j, name in enumerate(ranked):
            for k in range(int(tie_samples)):
                rs = int(np.random.SeedSequence([int(seed), j, k]).generate_state(1, np.uint64)[0])
                res = evaluate(q, converted[name], [measure], **{**opts, "tie_break": f"random:{rs}"})
                tie_draws[k, :, j] = _aligned(res, common)["oblivious"]
    # inference over the query sample (tierank.analysis.inference), on the per-query expected values
    summaries, infer = _infer(per, ranked, summaries, test=test, ci=ci, level=level, seed=seed, resamples=resamples,
                              permutations=permutations, alpha=alpha, leaderboard=leaderboard, jobs=jobs,
                              tie_draws=tie_draws)
    pair_names = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1:]]
    kw: dict[str, Any] = dict(test=test, pairs=pair_names, level=level, resamples=resamples, samples=permutations, seed=seed)
    matrix = lambda src, k: np.column_stack([src[n][k] for n in ranked])  # noqa: E731
    tests = inference.paired_tests(matrix(per, "expected"), ranked, ci=ci, boot=infer["boot"], **kw)
    if test != "t":  # the paired t-test keeps its own path below (the default's numbers stay as they were)
        tests_obl = inference.paired_tests(matrix(per, "oblivious"), ranked, **kw)
        tests_band = (inference.paired_tests(matrix(banded_per, "expected"), ranked, **kw)
                      if banded_per is not None else None)

    pairs = []
    for k, (a, b) in enumerate(pair_names):
        sa, sb = summaries[a], summaries[b]
        d_exp, d_obl = sa.expected - sb.expected, sa.oblivious - sb.oblivious
        t, p = _paired_t(per[a]["expected"], per[b]["expected"])
        _, p_obl = _paired_t(per[a]["oblivious"], per[b]["oblivious"])
        pt = tests[k]
        if test != "t":
            p, p_obl = pt.p, tests_obl[k].p
        se, so = _sign(d_exp), _sign(d_obl)
        extra: dict[str, Any] = dict(test=test, statistic=t if test == "t" else pt.statistic, method=pt.method, samples=pt.samples, seed=pt.seed, se=pt.se,
                     effect_size=pt.effect_size, effect_ci_low=pt.effect_ci_low, effect_ci_high=pt.effect_ci_high,
                     diff_ci_low=pt.diff_ci_low, diff_ci_high=pt.diff_ci_high)
        if banded_per is not None:
            _, pb = _paired_t(banded_per[a]["expected"], banded_per[b]["expected"])
            if test != "t":
                assert tests_band is not None
                pb = tests_band[k].p
            assert banded_summaries is not None
            extra.update(p_banded=pb, diff_banded=banded_summaries[a].expected - banded_summaries[b].expected,
                         significant_banded=bool(pb < alpha))
        mean_d, var_d = diff_moments(per[a]["expected"], per[a]["var"], per[b]["expected"], per[b]["var"])
        above, above_bound = prob_above(mean_d, var_d, lo=sa.min - sb.max, hi=sa.max - sb.min)
        pairs.append(PairComparison(
            a=a, b=b, diff_expected=d_exp, diff_oblivious=d_obl, t=t, p=p, p_oblivious=p_obl,
            order_flip=bool(se != 0 and so != 0 and se != so),
            undecidable=bool(sa.min <= sb.max + ZERO_TOL and sb.min <= sa.max + ZERO_TOL),
            significant=bool(p < alpha), std_diff=math.sqrt(var_d), p_a_above=above,
            p_a_above_bound=above_bound, **extra))
    if correction is not None and pairs:
        adjusted = adjust_pvalues([pc.p for pc in pairs], correction)
        pairs = [replace(pc, p_adjusted=float(v), significant=bool(v < alpha)) for pc, v in zip(pairs, adjusted)]
        if band is not None:  # the banded tests are a family of their own, adjusted the same way
            adjusted = adjust_pvalues([pc.p_banded for pc in pairs], correction)
            pairs = [replace(pc, p_banded_adjusted=float(v), significant_banded=bool(v < alpha))
                     for pc, v in zip(pairs, adjusted)]

    col = lambda k: np.array([getattr(summaries[n], k) for n in ranked])  # noqa: E731
    band_summary = None
    if band is not None:
        band_summary = summarise_band(pairs, float(band), alpha)
    return Comparison(
        measure=mname, queries=tuple(common), dropped_queries=dropped,
        systems=tuple(summaries[n] for n in ranked), pairs=tuple(pairs),
        kendall_tau=_tau(col("oblivious"), col("expected")), kendall_tau_min_max=_tau(col("min"), col("max")),
        alpha=float(alpha), band=None if band is None else float(band),
        banded_systems=None if banded_summaries is None else tuple(banded_summaries[n] for n in ranked),
        band_summary=band_summary, best=infer["best"],
        settings={**opts, "tie_break": results[names[0]].settings["tie_break"],
                  **({"correction": correction} if correction else {}),
                  "test": test, "ci": ci, "level": float(level), "seed": int(seed), "resamples": int(resamples),
                  "permutations": int(permutations), "leaderboard": bool(leaderboard),
                  **({"tie_samples": int(tie_samples), "rank_method": infer["rank_method"]} if leaderboard else {})})


def _infer(per: dict, ranked: list[str], summaries: dict, *, test: str, ci: str, level: float, seed: int,
           resamples: int, permutations: int, alpha: float, leaderboard: bool, jobs: int | None,
           tie_draws: np.ndarray | None = None) -> tuple[dict, dict]:
    """The systems' summaries with their CI, ranks and (with ``leaderboard``) rank interval and Tukey
    group; and ``{"boot": shared bootstrap means or None, "best": systems not separated from the best}``."""
    E = np.column_stack([per[n]["expected"] for n in ranked])
    sampled = ci != "t" or test == "bootstrap" or leaderboard
    boot = inference.bootstrap_means(E, resamples, seed) if sampled else None
    cis = inference.mean_cis(E, ranked, method=ci, level=level, resamples=resamples, seed=seed, boot=boot)
    rank = inference.competition_ranks(np.array([summaries[n].expected for n in ranked]))
    rank_obl = inference.competition_ranks(np.array([summaries[n].oblivious for n in ranked]))
    lows: list[int | None] = [None] * len(ranked)
    highs: list[int | None] = [None] * len(ranked)
    groups: list[str | None] = [None] * len(ranked)
    best = None
    rank_method = None
    if leaderboard:
        ri = inference.rank_intervals(E, ranked, level=level, resamples=resamples, seed=seed, boot=boot,
                                      tie_draws=tie_draws)
        rank_method = ri.method
        lows, highs = [int(v) for v in ri.low], [int(v) for v in ri.high]
        hsd = inference.tukey_hsd(E, ranked, alpha=alpha, permutations=permutations, seed=seed, jobs=jobs)
        groups, best = list(hsd.groups), hsd.best
    out = {n: replace(summaries[n], ci_low=c.ci_low, ci_high=c.ci_high, ci_method=c.ci_method, rank=int(r),
                      rank_oblivious=int(ro), rank_low=lo, rank_high=hi, group=g)
           for n, c, r, ro, lo, hi, g in zip(ranked, cis, rank, rank_obl, lows, highs, groups)}
    return {**summaries, **out}, {"boot": boot, "best": best, "rank_method": rank_method}


def _json_value(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def records(comparison: Comparison) -> dict:
    """JSON-ready plain-Python view of a :class:`Comparison`; NaN and infinities become None.

    Keys: ``measure, queries`` (their number), ``dropped_queries, alpha, band, settings,
    systems, pairs, kendall_tau, kendall_tau_min_max, banded_systems, band_summary, best``.

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
    c = comparison
    clean = lambda d: {k: _json_value(v) for k, v in d.items()}  # noqa: E731
    return {
        "measure": c.measure,
        "queries": len(c.queries),
        "dropped_queries": c.dropped_queries,
        "alpha": c.alpha,
        "band": c.band,
        "settings": dict(c.settings),
        "systems": [clean(asdict(s)) for s in c.systems],
        "pairs": [clean(asdict(p)) for p in c.pairs],
        "kendall_tau": _json_value(c.kendall_tau),
        "kendall_tau_min_max": _json_value(c.kendall_tau_min_max),
        "banded_systems": None if c.banded_systems is None else [clean(asdict(s)) for s in c.banded_systems],
        "band_summary": None if c.band_summary is None else clean(c.band_summary),
        "best": None if c.best is None else list(c.best),
    }

