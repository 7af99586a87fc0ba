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

The package holds one job a module: ``settings`` (defaults, validation, `PairedSettings`),
``results`` (the result values), ``resampling`` (the query bootstrap), ``intervals`` (the systems'
intervals), ``pairs`` (the paired tests), ``tukey`` (randomized Tukey HSD) and ``ranks`` (ranks and
rank intervals); the public names are imported from here.
"""

from __future__ import annotations

from ..methods import CI_METHODS
from ..paired import REGISTRY as PAIRED_TESTS
from ..paired.base import EXACT_MAX
from ..paired.wilcoxon import WILCOXON_EXACT_MAX, WILCOXON_PERMUTATION_MAX, wilcoxon_method
from .intervals import combined_se, mean_cis
from .pairs import paired_tests
from .ranks import competition_ranks, rank_intervals
from .resampling import bootstrap_means, bootstrap_tie_means, resample_counts
from .results import CombinedSE, MeanCI, PairTest, RankIntervals, TukeyHSD
from .settings import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    TESTS,
    PairedSettings,
    check_sampling,
)
from .tukey import default_jobs, letter_groups, permutation_ranges, tukey_hsd

__all__ = [
    "CI_METHODS",
    "PAIRED_TESTS",
    "WILCOXON_EXACT_MAX",
    "WILCOXON_PERMUTATION_MAX",
    "default_jobs",
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
