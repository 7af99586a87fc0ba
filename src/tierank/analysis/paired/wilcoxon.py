"""The Wilcoxon signed-rank test (``scipy.stats.wilcoxon``), labelled with what scipy computed."""

from __future__ import annotations

import warnings

import numpy as np

from .base import Outcome, Pairs

#: ``scipy.stats.wilcoxon``'s exact null distribution is used up to this many differences
WILCOXON_EXACT_MAX = 50
#: with ties or zero differences, the sign flips are enumerated up to this many differences
WILCOXON_PERMUTATION_MAX = 13


def wilcoxon_method(d) -> tuple[str, object]:
    """How the Wilcoxon signed-rank p of the differences ``d`` is computed, as scipy's ``auto``
    chooses it, and the ``method`` argument that asks for exactly that: ``("exact", "exact")`` (the
    exact null distribution: at most `WILCOXON_EXACT_MAX` differences, no zero, no tied
    ``|d|``), ``("permutation", PermutationMethod())`` (ties or zeros and at most
    `WILCOXON_PERMUTATION_MAX` differences: every sign flip enumerated) or ``("approx",
    "asymptotic")`` (the normal approximation, no continuity correction).

    Examples
    --------
    >>> [wilcoxon_method(d)[0] for d in ([0.1, -0.3, 0.2], [0.1, 0.1, 0.2], [0.1 * i for i in range(1, 60)])]
    ['exact', 'permutation', 'approx']
    """
    from scipy.stats import PermutationMethod

    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    a = np.abs(d[d != 0])
    ties = len(np.unique(a)) < len(a)
    if n <= WILCOXON_EXACT_MAX and not ties and len(a) == n:
        return "exact", "exact"
    if n <= WILCOXON_PERMUTATION_MAX:
        return "permutation", PermutationMethod()
    return "approx", "asymptotic"


def run(pairs: Pairs) -> Outcome:
    from scipy.stats import wilcoxon

    P = pairs.D.shape[1]
    out = Outcome(statistic=np.full(P, np.nan), p=np.full(P, np.nan), method=["analytic"] * P)
    for k in np.flatnonzero(~pairs.zero):  # per pair: the method depends on the data
        label, how = wilcoxon_method(pairs.D[:, k])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res = wilcoxon(pairs.D[:, k], method=how)
        out.statistic[k], out.p[k], out.method[k] = float(res.statistic), float(res.pvalue), label
    return out
