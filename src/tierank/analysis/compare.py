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

import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..measures.base import Measure
from ..settings import EvalSettings
from . import inference
from .banding import band_run
from .comparison.align import checked_runs, common_queries, evaluator
from .comparison.infer import infer_systems, tie_draws
from .comparison.pairs import compare_pairs
from .comparison.ppi import check_measure, human_values, with_ppi
from .comparison.results import Comparison, PairComparison, SystemSummary
from .comparison.scales import SCALES, Evaluated
from .comparison.settings import (
    EVAL_KEYWORDS,
    CompareSettings,
    compare_settings,
    default_correction,
)
from .paired.base import least_supported
from .significance import (
    CORRECTIONS,
    ZERO_TOL,
    adjust_pvalues,
    diff_moments,
    prob_above,
)
from .significance import band_summary as summarise_band


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import kendalltau

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(kendalltau(x, y).statistic)


def compare(
    runs: Mapping,
    qrels: Any,
    measure: str | Measure,
    settings: EvalSettings | None = None,
    options: CompareSettings | None = None,
    *,
    ppi: Any = None,
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
    ppi
        Human qrels for some of the queries (as [`tierank.evaluate`][tierank.evaluate] accepts them), ``qrels``
        being a machine judge's for every query: also each system's prediction-powered mean and each
        pair's prediction-powered mean difference, PPI and PPI++ with their intervals at ``level``
        ([`tierank.analysis.ppi`][tierank.analysis.ppi]; the pairs' from their per-query differences),
        on the per-query expected values.  Refused for a measure whose summary is not a mean, with
        fewer than 10 compared queries judged by the humans, or with none left to the machine alone;
        fewer than 30 are noted (``tierank eval --ppi``'s thresholds).
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

    No p-value is below the least p exact sign-flip randomization can reach on the pair's ``m``
    nonzero differences, ``2 / 2^m`` (``p_floor``; ``p_test`` keeps the test's own p), whatever the
    test, Tukey HSD's included; the intervals at ``level`` are null where that floor is not below
    ``1 - level`` (the systems' CIs and rank intervals by the number of queries, a pair's intervals by
    its nonzero differences; at 0.95 both need 6), with the reason in ``notes``.

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
    if ppi is not None:
        check_measure(measure)
    converted = checked_runs(runs)
    ev, results, common, dropped = common_queries(evaluator(qrels, measure, s), converted)
    m = ev.measures[0]
    main = Evaluated.of(m, results, common)
    ranked = sorted(converted, key=lambda name: -main.summaries[name].expected)  # stable
    banded = None
    if o.band is not None:
        bands = {name: ev.evaluate(band_run(r, o.band)) for name, r in converted.items()}
        banded = Evaluated.of(m, bands, common)
    draws = tie_draws(ev, converted, ranked, common, o)
    summaries, infer = infer_systems(main, ranked, o, m.aggregator, draws)
    pairs = compare_pairs(m, ranked, replace(main, summaries=summaries), banded, o, infer)
    if ppi is not None:
        labelled, human = human_values(ev, ppi, converted, common)
        summaries, pairs, infer["ppi"], notes = with_ppi(
            main, common, labelled, human, summaries, pairs, o.level
        )
        infer["notes"] = [*infer["notes"], *notes]
    return _comparison(m, common, dropped, ranked, summaries, pairs, banded, o, infer, ev.settings)


def _comparison(
    m: Measure,
    common: list[str],
    dropped: int,
    ranked: list[str],
    summaries: dict[str, SystemSummary],
    pairs: list[PairComparison],
    banded: Evaluated | None,
    o: CompareSettings,
    infer: dict,
    settings: EvalSettings,
) -> Comparison:
    """The [`Comparison`][tierank.analysis.compare.Comparison] of the ranked systems and their pairs."""
    col = lambda k: np.array([getattr(summaries[n], k) for n in ranked])  # noqa: E731
    notes = (
        list(infer["notes"])
        + [
            f"{pc.a} vs {pc.b}: {pc.fallback}; p from the exact randomization test"
            for pc in pairs
            if pc.fallback is not None
        ]
        + _floor_notes(pairs, o.level)
    )
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
            **({"ppi": infer["ppi"]} if "ppi" in infer else {}),
        },
        notes=tuple(notes),
        settings=_settings_record(settings, o, infer),
    )


def _floor_notes(pairs: list[PairComparison], level: float) -> list[str]:
    """What the floor of the paired p-values changed (`PairComparison`'s ``p_floor``): the pairs whose
    test's p was raised to it, and those left without intervals."""
    notes = []
    raised = [pc for pc in pairs if pc.p_test < pc.p_floor]
    if raised:
        least = min(pc.p_floor for pc in raised)
        notes.append(
            f"{len(raised)} of {len(pairs)} pairs: the test's p is below the least p exact sign-flip "
            f"randomization reaches on their nonzero differences (2/2^m, here >= {least:.4g}): p is "
            "raised to it (p_test keeps the test's own)"
        )
    bare = sum(pc.p_floor >= 1.0 - level for pc in pairs)
    if bare:
        notes.append(
            f"{bare} of {len(pairs)} pairs: fewer than {least_supported(level)} nonzero differences, "
            f"no interval of the difference at level {level:g} (null)"
        )
    return notes


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


__all__ = [
    "CORRECTIONS",
    "EVAL_KEYWORDS",
    "SCALES",
    "ZERO_TOL",
    "CompareSettings",
    "Comparison",
    "PairComparison",
    "SystemSummary",
    "adjust_pvalues",
    "compare",
    "compare_settings",
    "default_correction",
    "diff_moments",
    "prob_above",
    "records",
]
