"""The paired t-test (``scipy.stats.ttest_rel``, computed once for every test in [`Pairs`][tierank.analysis.paired.student.Pairs])."""

from __future__ import annotations

import numpy as np

from .base import Outcome, Pairs


def run(pairs: Pairs) -> Outcome:
    return Outcome(
        statistic=pairs.t.copy(), p=pairs.t_p.copy(), method=["analytic"] * len(pairs.t_p)
    )


def undecidable(pairs: Pairs) -> list[str | None]:
    """t is undefined with one query, and where the differences are all equal (no variance: scipy's
    ``t = +-inf, p = 0`` whatever the number of queries; R's ``t.test`` refuses such data)."""
    n, P = pairs.D.shape
    flat = np.ptp(pairs.D, axis=0) <= pairs.tol if n else np.ones(P, dtype=bool)
    out: list[str | None] = [None] * P
    for k in range(P):
        if pairs.zero[k]:
            continue
        if n < 2:
            out[k] = "t is undefined with 1 query"
        elif flat[k]:
            out[k] = f"t is undefined: the {n} differences are all equal (no variance)"
    return out
