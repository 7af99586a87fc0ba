"""Fisher's randomization (sign-flip) test of the mean difference: exact by enumeration with at most
`EXACT_MAX` nonzero differences, else Monte Carlo."""

from __future__ import annotations

import math

import numpy as np

from .base import EXACT_MAX, REL_TOL, Outcome, Pairs, chunks


def flip_counts(D: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """Per column of ``D`` (n x P), how many of ``samples`` random sign-flip vectors (shared by all
    columns) give ``|sum(s d)| >= |sum(d)|``."""
    n = D.shape[0]
    obs = np.abs(D.sum(axis=0))
    tol = REL_TOL * np.maximum(1.0, np.abs(D).sum(axis=0))
    rng = np.random.default_rng(seed)
    hits = np.zeros(D.shape[1], dtype=np.int64)
    for c in chunks(samples, n):
        signs = rng.integers(0, 2, size=(c, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += (np.abs(signs @ D) >= obs - tol).sum(axis=0)
    return hits


def exact_flip_p(d: np.ndarray) -> tuple[float, int]:
    """Exact two-sided sign-flip p-value of the mean of ``d`` (nonzero entries only, m <= EXACT_MAX):
    the share of the 2^m sign vectors with ``|sum(s d)| >= |sum(d)|``."""
    m = len(d)
    if m == 0:
        return 1.0, 1
    codes = np.arange(2**m, dtype=np.int64)[:, None]
    signs = 1.0 - 2.0 * ((codes >> np.arange(m)) & 1).astype(np.float64)
    sums = signs @ d
    tol = REL_TOL * max(1.0, float(np.abs(d).sum()))
    return float(np.mean(np.abs(sums) >= abs(float(d.sum())) - tol)), 2**m


def randomization(D: np.ndarray, tol: np.ndarray, samples: int, seed: int) -> Outcome:
    """The test of every column of ``D`` (its statistic: the mean difference)."""
    P = D.shape[1]
    out = Outcome(
        statistic=D.mean(axis=0) if len(D) else np.full(P, np.nan),
        p=np.full(P, np.nan),
        method=["exact"] * P,
    )
    nz = np.abs(D) > tol
    exact = nz.sum(axis=0) <= EXACT_MAX
    for k in np.flatnonzero(exact):
        out.p[k], out.samples[k] = exact_flip_p(D[nz[:, k], k])
    mc = np.flatnonzero(~exact)
    if len(mc):
        hits = flip_counts(D[:, mc], samples, seed)
        for k, h in zip(mc, hits):
            out.p[k] = (1.0 + h) / (1.0 + samples)
            out.method[k], out.samples[k], out.seed[k] = "monte-carlo", int(samples), int(seed)
            out.se[k] = math.sqrt(out.p[k] * (1 - out.p[k]) / samples)
    return out


def run(pairs: Pairs) -> Outcome:
    return randomization(pairs.D, pairs.tol, pairs.samples, pairs.seed)
