"""The query bootstrap: count matrices drawn once per query set and shared by every system
([`resample_counts`][tierank.analysis.inference.resample_counts]), the resampled means of every system
([`bootstrap_means`][tierank.analysis.inference.bootstrap_means]), and with each query's tie ordering redrawn
too ([`bootstrap_tie_means`][tierank.analysis.inference.bootstrap_tie_means])."""

from __future__ import annotations

import numpy as np

from ...errors import TierankInputError
from ..paired.base import chunks as _chunks
from .settings import DEFAULT_RESAMPLES, check_sampling, matrix


def resample_counts(n: int, resamples: int, seed: int):
    """Yield the bootstrap count matrices (``chunk x n``, how often each query is drawn in each
    resample), ``resamples`` rows in all, from ``numpy.random.default_rng(seed)``.

    The rows depend on ``n``, ``resamples``'s prefix and ``seed`` only (the chunk sizes are a
    function of ``n``), never on the values being resampled.
    """
    check_sampling(0.5, resamples, seed, "resamples")
    rng = np.random.default_rng(seed)
    for c in _chunks(resamples, n):
        idx = rng.integers(0, n, size=(c, n), dtype=np.int32 if c * n < 2**31 else np.int64)
        idx += (np.arange(c, dtype=idx.dtype) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=c * n).reshape(c, n)


def bootstrap_means(values, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``(resamples, S)`` bootstrap means of the columns of ``values`` (queries x systems), all
    columns resampled with the same query draws ([`resample_counts`][tierank.analysis.inference.resample_counts]).

    Examples
    --------
    >>> bootstrap_means([[1.0], [1.0], [1.0]], 4, seed=1).ravel().tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    X, _ = matrix(values, None)
    n = X.shape[0]
    out = np.empty((resamples, X.shape[1]))
    start = 0
    for W in resample_counts(n, resamples, seed):
        out[start : start + len(W)] = (W.astype(np.float64) @ X) / n
        start += len(W)
    return out


def bootstrap_tie_means(draws, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """``(resamples, S)`` bootstrap means that also redraw each query's tie ordering: ``draws`` is
    ``(N, n, S)``, ``N`` per-query values of every system under independent uniformly random tie
    orderings (`tierank.measures.sampling.tie_orderings`). Resample ``b`` draws the
    queries as [`bootstrap_means`][tierank.analysis.inference.bootstrap_means] does (the same count matrices, [`resample_counts`][tierank.analysis.inference.resample_counts]) and,
    for each query, one of the ``N`` orderings uniformly (``default_rng([seed, 1])``, the same
    index for every system of the query: the systems' orderings are independent draws already).

    Examples
    --------
    >>> D = np.stack([np.full((3, 2), 1.0), np.full((3, 2), 3.0)])  # two tie orderings
    >>> m = bootstrap_tie_means(D, 2000, seed=1)
    >>> bool(np.all((m >= 1) & (m <= 3))), round(float(m.mean()), 1)
    (True, 2.0)
    """
    D = np.asarray(draws, dtype=np.float64)
    if D.ndim != 3 or D.shape[0] == 0 or D.shape[1] == 0 or not np.all(np.isfinite(D)):
        raise TierankInputError(
            "inference: tie draws must be a finite (draws x queries x systems) array"
        )
    N, n, S = D.shape
    rng = np.random.default_rng([seed, 1])
    out = np.empty((resamples, S))
    start = 0
    for W in resample_counts(n, resamples, seed):
        K = rng.integers(0, N, size=W.shape)
        Wf = W.astype(np.float64)
        acc = np.zeros((len(W), S))
        for k in range(N):
            acc += np.where(K == k, Wf, 0.0) @ D[k]
        out[start : start + len(W)] = acc / n
        start += len(W)
    return out
