"""The systems' ranks by mean ([`competition_ranks`][tierank.analysis.inference.competition_ranks]) and their
query-bootstrap intervals, with each query's tie ordering redrawn where asked
([`rank_intervals`][tierank.analysis.inference.rank_intervals])."""

from __future__ import annotations

import numpy as np

from ...errors import TierankInputError
from .resampling import bootstrap_means, bootstrap_tie_means
from .results import RankIntervals
from .settings import DEFAULT_RESAMPLES, check_sampling, matrix


def competition_ranks(means: np.ndarray) -> np.ndarray:
    """Rank 1 for the highest; equal values share the better rank (``1, 2, 2, 4``); along the last
    axis.

    Examples
    --------
    >>> competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist()
    [2, 1, 2, 4]
    """
    m = np.asarray(means)
    return 1 + (m[..., None, :] > m[..., :, None]).sum(axis=-1)


def rank_intervals(
    values,
    names=None,
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    boot: np.ndarray | None = None,
    tie_draws=None,
) -> RankIntervals:
    """Each system's rank by mean and the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles
    (lower and higher order statistics) of its rank over query-bootstrap resamples.

    With ``tie_draws`` (``(N, n, S)``, see [`bootstrap_tie_means`][tierank.analysis.inference.bootstrap_tie_means]) every resample also redraws
    each query's tie ordering, so the interval covers the ties' uncertainty beside the query
    sample's (``method="bootstrap+ties"``, ``tie_samples=N``); ``boot`` is then not used.

    Examples
    --------
    >>> X = np.array([[0.9, 0.5, 0.1], [0.8, 0.6, 0.2], [0.7, 0.4, 0.3]] * 4)
    >>> r = rank_intervals(X, ["A", "B", "C"], resamples=500, seed=3)
    >>> r.rank.tolist(), r.low.tolist(), r.high.tolist()
    ([1, 2, 3], [1, 2, 3], [1, 2, 3])
    """
    X, names = matrix(values, names)
    check_sampling(level, resamples, seed, "resamples")
    if tie_draws is not None:
        D = np.asarray(tie_draws, dtype=np.float64)
        if D.ndim != 3 or D.shape[1:] != X.shape:
            raise TierankInputError(
                f"rank_intervals: tie_draws must be (N, {X.shape[0]}, {X.shape[1]}), got {D.shape}"
            )
        theta_b = bootstrap_tie_means(D, resamples, seed)
    else:
        theta_b = bootstrap_means(X, resamples, seed) if boot is None else boot
    ranks = competition_ranks(theta_b)
    lo = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower").astype(np.int64)
    hi = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher").astype(np.int64)
    ties = None if tie_draws is None else int(np.shape(tie_draws)[0])
    return RankIntervals(
        names=names,
        rank=competition_ranks(X.mean(axis=0)),
        low=lo,
        high=hi,
        level=level,
        samples=int(resamples),
        seed=int(seed),
        method="bootstrap" if ties is None else "bootstrap+ties",
        tie_samples=ties,
    )
