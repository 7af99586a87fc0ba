"""Randomized Tukey HSD over many systems ([`tukey_hsd`][tierank.analysis.inference.tukey_hsd]): the permutation
distribution of the range of the systems' means, shared by threads
([`permutation_ranges`][tierank.analysis.inference.permutation_ranges]), and the groups it cannot separate as a
compact letter display ([`letter_groups`][tierank.analysis.inference.letter_groups])."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...errors import TierankInputError
from ..paired.base import REL_TOL as _REL_TOL
from ..paired.base import chunks as _chunks
from ..paired.base import nonzero, sign_flip_floor
from .results import TukeyHSD
from .settings import DEFAULT_PERMUTATIONS, check_sampling, matrix

#: permutations per block of `permutation_ranges`: block ``k`` draws from ``default_rng([seed, k])``,
#: so the result does not depend on how many threads share the blocks
_PERM_BLOCK = 500


def _ranges_block(X: np.ndarray, n: int, count: int, seed: int, block: int) -> np.ndarray:
    """``count`` permutation ranges of block ``block`` (see [`permutation_ranges`][tierank.analysis.inference.permutation_ranges])."""
    m, S = X.shape
    rng = np.random.default_rng([seed, block])
    out = np.empty(count)
    start = 0
    for c in _chunks(count, m * S):
        V = np.empty((c, m, S))
        V[...] = X
        rng.permuted(V, axis=-1, out=V)
        means = V.sum(axis=1) / n
        out[start : start + c] = means.max(axis=1) - means.min(axis=1)
        start += c
    return out


def default_jobs() -> int:
    """Threads [`permutation_ranges`][tierank.analysis.inference.permutation_ranges] uses by default: the CPUs this process may run on, at most 2."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(2, cpus))


def permutation_ranges(
    values, permutations: int = DEFAULT_PERMUTATIONS, seed: int = 0, *, jobs: int | None = None
) -> np.ndarray:
    """The ``(permutations,)`` largest differences of column means (max - min) after permuting each
    row of ``values`` (queries x systems) independently and uniformly (``Generator.permuted``).

    Reproducible from ``seed`` and the values, whatever ``jobs``: the permutations come in blocks
    of 500, block ``k`` drawn from ``numpy.random.default_rng([seed, k])``; ``jobs`` threads share the
    blocks (``None``: [`default_jobs`][tierank.analysis.inference.default_jobs], up to 2; ``Generator.permuted`` releases the GIL, so the
    threads run in parallel without the start-up and copying cost of processes).

    A query whose systems all score the same adds the same to every system's sum whatever the
    permutation, so it cannot change a difference: such rows are left out of the permuting (exact;
    on IR data, where every system often scores 0 on a query, it saves their share of the work).
    The cost is ``permutations x n x S`` element moves; it dominates [`tukey_hsd`][tierank.analysis.inference.tukey_hsd]."""
    X, _ = matrix(values, None)
    check_sampling(0.5, permutations, seed, "permutations")
    if jobs is None:
        jobs = default_jobs()
    if not (isinstance(jobs, (int, np.integer)) and not isinstance(jobs, bool) and jobs >= 1):
        raise TierankInputError(f"inference: jobs must be a positive integer, got {jobs!r}")
    n = X.shape[0]
    X = np.ascontiguousarray(X[np.ptp(X, axis=1) > 0])
    if X.shape[0] == 0:
        return np.zeros(permutations)
    counts = [min(_PERM_BLOCK, permutations - k) for k in range(0, permutations, _PERM_BLOCK)]
    if jobs == 1 or len(counts) == 1:
        parts = [_ranges_block(X, n, c, seed, k) for k, c in enumerate(counts)]
    else:
        with ThreadPoolExecutor(max_workers=min(int(jobs), len(counts))) as pool:
            parts = list(
                pool.map(_ranges_block, *zip(*[(X, n, c, seed, k) for k, c in enumerate(counts)]))
            )
    return np.concatenate(parts)


def letter_groups(means: np.ndarray, separated: np.ndarray) -> tuple[str, ...]:
    """Compact letter display for systems with ``means`` and a symmetric boolean matrix
    ``separated`` (pair significantly different): sorted by mean (descending), each maximal run
    of consecutive systems in which no pair is separated gets a letter (``a`` for the run holding
    the best); a system's group is the letters of the runs holding it.  Exact when separation is
    monotone in the difference of means (as in Tukey HSD, whose p-value is a function of it).

    Examples
    --------
    >>> sep = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
    >>> letter_groups(np.array([0.9, 0.8, 0.7]), sep)
    ('a', 'ab', 'b')
    """
    S = len(means)
    order = np.argsort(-np.asarray(means), kind="stable")
    runs: list[tuple[int, int]] = []
    for start in range(S):
        end = start
        while end + 1 < S and not separated[order[end + 1], order[start : end + 1]].any():
            end += 1
        if not runs or end > runs[-1][1]:
            runs.append((start, end))
    letters = [""] * S
    for k, (start, end) in enumerate(runs):
        tag = _letter(k)
        for pos in range(start, end + 1):
            letters[order[pos]] += tag
    return tuple(letters)


def _letter(k: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    s = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        s = alphabet[r] + s
    return s if len(s) == 1 else f"[{s}]"


def tukey_hsd(
    values,
    names=None,
    *,
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = 0,
    jobs: int | None = None,
) -> TukeyHSD:
    """Randomized Tukey HSD (Carterette 2012) over the columns of ``values`` (queries x systems).

    Each of ``permutations`` draws permutes every query's values across the systems; the pair
    ``(i, j)`` gets ``p = (1 + #{t: range_t >= |mean_i - mean_j|}) / (1 + permutations)``, with
    ``range_t`` the max - min of the systems' means in draw ``t`` ([`permutation_ranges`][tierank.analysis.inference.permutation_ranges];
    ``jobs`` threads share the permutations, with the same result for any ``jobs``).

    Examples
    --------
    >>> X = np.array([[0.9, 0.2, 0.3], [0.8, 0.3, 0.2], [0.95, 0.1, 0.25], [0.7, 0.35, 0.3]] * 3)
    >>> h = tukey_hsd(X, ["A", "B", "C"], permutations=2000, seed=1)
    >>> h.groups, h.best, h.pvalue("A", "B") < 0.01
    (('a', 'b', 'b'), ('A',), True)
    """
    X, names = matrix(values, names)
    check_sampling(
        1 - alpha if isinstance(alpha, (int, float)) else alpha, permutations, seed, "permutations"
    )
    if len(names) < 2:
        raise TierankInputError("tukey_hsd: need at least two systems")
    means = X.mean(axis=0)
    ranges = np.sort(permutation_ranges(X, permutations, seed, jobs=jobs))
    diff = np.abs(means[:, None] - means[None, :])
    tol = _REL_TOL * max(1.0, float(np.abs(X).max()))
    hits = permutations - np.searchsorted(ranges, diff - tol, side="left")
    p_test = (1.0 + hits) / (1.0 + permutations)
    np.fill_diagonal(p_test, 1.0)
    # the floor of every paired p (`sign_flip_floor` of the pair's nonzero differences)
    m = np.stack([nonzero(X - X[:, [i]], tol) for i in range(X.shape[1])])  # one row a system
    p = np.maximum(p_test, sign_flip_floor(m))
    np.fill_diagonal(p, 1.0)
    separated = p < alpha
    groups = letter_groups(means, separated)
    top = int(np.argmax(means))
    best = tuple(nm for k, nm in enumerate(names) if not separated[top, k])
    return TukeyHSD(
        names=names,
        means=means,
        p=p,
        alpha=float(alpha),
        groups=groups,
        best=best,
        samples=int(permutations),
        seed=int(seed),
        p_test=p_test,
    )
