"""The paired bootstrap test: the centred bootstrap distribution of the mean difference,
``p = (1 + #{|dbar* - dbar| >= |dbar|}) / (1 + resamples)``."""

from __future__ import annotations

import math

import numpy as np

from .base import EXACT_MAX, REL_TOL, Outcome, Pairs


def run(pairs: Pairs) -> Outcome:
    assert pairs.boot_d is not None  # the caller draws the resamples (shared with the CIs)
    n, P = pairs.D.shape
    dev = np.abs(pairs.boot_d - pairs.mean_d)
    btol = REL_TOL * np.maximum(1.0, np.abs(pairs.D).sum(axis=0) / n)
    hits = (dev >= np.abs(pairs.mean_d) - btol).sum(axis=0)
    B = pairs.resamples
    p = (1.0 + hits) / (1.0 + B)
    return Outcome(
        statistic=pairs.mean_d.copy(),
        p=p,
        method=["monte-carlo"] * P,
        samples=[int(B)] * P,
        seed=[int(pairs.seed)] * P,
        se=[math.sqrt(v * (1 - v) / B) for v in p],
    )


def undecidable(pairs: Pairs) -> list[str | None]:
    """With at most `EXACT_MAX` nonzero differences, where the exact test can be computed: the
    centred bootstrap distribution of the mean difference is too narrow at small sizes (it never
    reaches the observed difference with 1-3 queries of one sign, so ``p`` is ``1 / (B + 1)``; at
    12 queries it can still be a tenth of the exact value)."""
    m = (np.abs(pairs.D) > pairs.tol).sum(axis=0)
    return [
        (
            f"the bootstrap's p is biased low with {int(m[k])} nonzero differences "
            f"(<= {EXACT_MAX}: the exact test is computable)"
        )
        if not pairs.zero[k] and m[k] <= EXACT_MAX
        else None
        for k in range(pairs.D.shape[1])
    ]
