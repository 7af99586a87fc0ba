"""Tie-aware significance: the chance that one system beats another under random tie breaking,
and multiple-comparison corrections.

Two runs with ties each score a *distribution* of means, one per way of breaking their ties.
With both runs' ties broken uniformly at random, independently across queries and systems, the
difference of the means ``D = mean_q(A_q) - mean_q(B_q)`` is a sum of independent per-query terms,
so its first two moments are exact from tierank's per-query statistics:

* ``E[D] = (1/n) sum_q (E[A_q] - E[B_q])``;
* ``Var[D] = (1/n^2) sum_q (Var[A_q] + Var[B_q])`` (independent terms; the covariance of
  ``A_q`` and ``B_q`` is 0 because the two runs' orderings are drawn independently).

[`prob_above`][tierank.analysis.significance.prob_above] turns the two moments into ``P(D > 0)``: the normal approximation
``Phi(E[D] / sd[D])`` (Lyapunov's central limit theorem for a sum of independent bounded
terms; labelled an approximation, it is not a bound), and the distribution-free lower bound of
Cantelli's one-sided inequality, ``P(D - E[D] <= -t) <= Var / (Var + t^2)`` with ``t = E[D] > 0``,
so ``P(D > 0) >= E[D]^2 / (E[D]^2 + Var[D])``.  Where ``Var[D] = 0`` no ordering changes the
difference, and where the range of ``D`` (``min_a - max_b`` to ``max_a - min_b``, from the
pessimal and optimal orderings) lies on one side of 0, the probability is known exactly: both are
then exactly 1 or 0.

[`adjust_pvalues`][tierank.analysis.significance.adjust_pvalues] adjusts p-values for multiple comparisons: Bonferroni; Holm (1979,
"A simple sequentially rejective multiple test procedure", step-down, family-wise error);
Benjamini & Hochberg (1995, "Controlling the false discovery rate", step-up).

Examples
--------
>>> import numpy as np
>>> mean, var = diff_moments(np.array([0.5, 1.0]), np.array([0.25, 0.0]),
...                          np.array([0.5, 0.5]), np.array([0.0, 0.0]))
>>> mean, var
(0.25, 0.0625)
>>> [round(x, 4) for x in prob_above(mean, var)]
[0.8413, 0.5]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TierankInputError
from .methods import CORRECTIONS

#: Differences of means at most this large in absolute value count as zero.
ZERO_TOL = 1e-12


def adjust_pvalues(pvalues, method: str) -> np.ndarray:
    """p-values adjusted for multiple comparisons: ``"bonferroni"``, ``"holm"`` (Holm 1979,
    step-down, controls the family-wise error) or ``"bh"`` (Benjamini & Hochberg 1995, step-up,
    controls the false discovery rate).  NaN p-values stay NaN and do not count as tests.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bonferroni").round(4).tolist()
    [0.03, 0.12, 0.09]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise TierankInputError(
            f"unknown correction {method!r}; accepted: {', '.join(CORRECTIONS)}"
        )
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise TierankInputError("p-values must lie in [0, 1]")
    if method == "bonferroni":
        out[ok] = np.minimum(1.0, p[ok] * m)
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, ps * (m - np.arange(m))))
    else:
        adj = np.minimum.accumulate((ps * m / np.arange(1, m + 1))[::-1])[::-1]
        adj = np.minimum(1.0, adj)
    out[order] = adj
    return out


def diff_moments(
    exp_a: np.ndarray, var_a: np.ndarray, exp_b: np.ndarray, var_b: np.ndarray
) -> tuple[float, float]:
    """Exact mean and variance of ``mean_q(A_q) - mean_q(B_q)`` over both runs' tie orderings
    (uniform, independent across queries and systems), from per-query expectations and variances
    aligned on the same ``n`` queries: ``(sum(exp_a - exp_b) / n, (sum(var_a) + sum(var_b)) / n^2)``.
    The variance is exactly 0 when every per-query variance is (no ordering moves either mean)."""
    n = len(exp_a)
    if n == 0 or not (len(var_a) == len(exp_b) == len(var_b) == n):
        raise TierankInputError(
            "diff_moments: the per-query arrays must be non-empty and of one length"
        )
    mean = float(np.sum(np.asarray(exp_a, np.float64) - np.asarray(exp_b, np.float64)) / n)
    var = float((np.sum(var_a, dtype=np.float64) + np.sum(var_b, dtype=np.float64)) / (n * n))
    return mean, var


def prob_above(
    diff: float, var: float, lo: float | None = None, hi: float | None = None
) -> tuple[float, float]:
    """``(P(D > 0) by the normal approximation, Cantelli's lower bound of it)`` for a difference
    ``D`` of mean ``diff`` and variance ``var``; exact 1/0 when ``var`` is 0.

    ``lo`` and ``hi``, if given, are the least and greatest values ``D`` can take (for two systems'
    means: ``min_a - max_b`` and ``max_a - min_b``, attained by the pessimal/optimal orderings):
    when ``lo > 0`` every ordering puts ``a`` above and both values are exactly 1; when ``hi <= 0``
    none does and both are exactly 0 (differences within ``ZERO_TOL`` of 0 count as 0).

    Examples
    --------
    >>> prob_above(0.1, 0.0), prob_above(0.0, 0.0), prob_above(-0.1, 0.0)
    ((1.0, 1.0), (0.0, 0.0), (0.0, 0.0))
    >>> [round(x, 4) for x in prob_above(0.1, 0.01)]
    [0.8413, 0.5]
    >>> prob_above(0.1, 0.01, lo=0.02, hi=0.3)
    (1.0, 1.0)
    """
    if not (math.isfinite(diff) and math.isfinite(var)) or var < 0.0:
        raise TierankInputError(
            f"prob_above: need a finite mean and a variance >= 0, got {diff!r}, {var!r}"
        )
    if lo is not None and lo > ZERO_TOL:
        return 1.0, 1.0
    if var == 0.0 or (hi is not None and hi <= ZERO_TOL):
        hit = 1.0 if diff > ZERO_TOL and var == 0.0 else 0.0
        return hit, hit
    from scipy.stats import norm

    if (
        abs(diff) <= ZERO_TOL
    ):  # level in expectation up to rounding: P = 1/2, not 1/2 - rounding noise
        diff = 0.0
    approx = float(norm.cdf(diff / math.sqrt(var)))
    bound = diff * diff / (diff * diff + var) if diff > 0 else 0.0
    return approx, float(bound)


def adjust_across(comparisons, method: str) -> list:
    """Comparisons ([`Comparison`][tierank.analysis.compare.Comparison], e.g. one per measure) with their
    pairs' p-values (of each comparison's ``test``, the paired t-test by default) adjusted together,
    as one family of ``sum(len(c.pairs))`` tests.

    Every pair gets ``p_adjusted`` and ``significant = p_adjusted < alpha`` (its comparison's alpha);
    with a band, the banded p-values are adjusted as a second family the same way and the band
    summary is recounted; ``settings["correction"]`` records ``method`` and ``settings["family"]``
    the number of tests.  Any correction already applied by [`compare`][tierank.analysis.compare.compare]
    is replaced (the raw ``p`` is kept in every pair).

    Examples
    --------
    >>> from tierank.analysis.compare import compare
    >>> runs = {"A": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 2.0, "y": 1.0}},
    ...         "B": {"q1": {"y": 2.0, "x": 1.0}, "q2": {"x": 1.0, "y": 1.0}}}
    >>> qrels = {"q1": {"x": 1}, "q2": {"x": 1}}
    >>> both = adjust_across([compare(runs, qrels, m) for m in ("RR", "P@1")], "bonferroni")
    >>> [(c.measure, round(c.pairs[0].p, 4), round(c.pairs[0].p_adjusted, 4), c.settings["family"]) for c in both]
    [('RR', 0.5, 1.0, 2), ('P@1', 0.5, 1.0, 2)]
    """
    comparisons = list(comparisons)
    flat = [(i, j) for i, c in enumerate(comparisons) for j in range(len(c.pairs))]
    adj = adjust_pvalues([comparisons[i].pairs[j].p for i, j in flat], method)
    banded = all(c.band is not None for c in comparisons) and bool(flat)
    adj_b = (
        adjust_pvalues([comparisons[i].pairs[j].p_banded for i, j in flat], method)
        if banded
        else None
    )
    pairs = [list(c.pairs) for c in comparisons]
    for n, (i, j) in enumerate(flat):
        alpha = comparisons[i].alpha
        pc = replace(pairs[i][j], p_adjusted=float(adj[n]), significant=bool(adj[n] < alpha))
        if comparisons[i].band is not None:
            pb = float(adj_b[n]) if adj_b is not None else pc.p_banded_adjusted
            pc = replace(
                pc,
                p_banded_adjusted=pb,
                significant_banded=bool(pb < alpha) if pb is not None else pc.significant_banded,
            )
        pairs[i][j] = pc
    out = []
    for c, ps in zip(comparisons, pairs):
        summary = band_summary(ps, c.band, c.alpha) if c.band is not None else c.band_summary
        out.append(
            replace(
                c,
                pairs=tuple(ps),
                band_summary=summary,
                settings={**c.settings, "correction": method, "family": len(flat)},
            )
        )
    return out


def band_summary(pairs: Sequence[Any], rho: float, alpha: float) -> dict:
    """How banding at ``rho`` changed the significance of ``pairs`` (each with ``significant`` and
    ``significant_banded``, as [`PairComparison`][tierank.analysis.compare.PairComparison]): counts and
    percentages of pairs kept, gained (false positives), lost (false negatives) and neither.

    >>> from types import SimpleNamespace as P
    >>> s = band_summary([P(significant=True, significant_banded=True),
    ...                   P(significant=True, significant_banded=False)], 0.5, 0.05)
    >>> s["kept"], s["false_negatives"], s["pct_kept"]
    (1, 1, 50.0)
    """
    n = len(pairs)
    kept = sum(p.significant and p.significant_banded for p in pairs)
    fp = sum(p.significant_banded and not p.significant for p in pairs)
    fn = sum(p.significant and not p.significant_banded for p in pairs)
    neither = n - kept - fp - fn
    pct = lambda c: 100.0 * c / n  # noqa: E731
    return {
        "rho": rho,
        "alpha": alpha,
        "pairs": n,
        "significant_original": kept + fn,
        "significant_banded": kept + fp,
        "kept": kept,
        "false_positives": fp,
        "false_negatives": fn,
        "neither": neither,
        "pct_kept": pct(kept),
        "pct_false_positives": pct(fp),
        "pct_false_negatives": pct(fn),
        "pct_neither": pct(neither),
    }


__all__ = [
    "CORRECTIONS",
    "ZERO_TOL",
    "adjust_across",
    "adjust_pvalues",
    "band_summary",
    "diff_moments",
    "prob_above",
]
