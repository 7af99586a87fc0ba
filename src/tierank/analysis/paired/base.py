"""What every paired test receives ([`Pairs`][tierank.analysis.paired.base.Pairs]) and returns ([`Outcome`][tierank.analysis.paired.base.Outcome])."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: about this many matrix cells per chunk of resamples (memory bound, not a tuning knob: the chunk
#: size depends on n only, so results depend on seed, n and the number of resamples only)
CHUNK_CELLS = 2_000_000
#: values this close (relative to the data's scale) count as equal when counting permutation hits
REL_TOL = 1e-12
#: the randomization test enumerates all 2^m sign flips when at most this many differences are nonzero
EXACT_MAX = 20


def sign_flip_floor(m) -> np.ndarray:
    """The smallest two-sided p-value the exact sign-flip (randomization) test can reach on ``m``
    nonzero paired differences, whatever their values: ``2 / 2^m`` (only the observed signs and
    their negation give the largest ``|sum|``), 1 where ``m <= 1``.  It is the floor of every
    paired p-value tierank reports (`floored`): no test claims from few queries what exact
    randomization on the same differences could never reach.

    Examples
    --------
    >>> sign_flip_floor([0, 1, 2, 3, 6]).tolist()
    [1.0, 1.0, 0.5, 0.25, 0.03125]
    """
    m = np.asarray(m, dtype=np.float64)
    return np.minimum(1.0, np.exp2(1.0 - m))


def interval_supported(m: int, level: float) -> bool:
    """Whether an interval at confidence ``level`` from ``m`` values (nonzero differences, or
    queries) can be given: the exact sign-flip test on ``m`` values can reach ``alpha = 1 - level``
    (`sign_flip_floor` ``< 1 - level``).  Where it cannot, an interval excluding a value would
    claim a significance that no exact randomization on the same data could; tierank then gives
    none (null, with a note).

    Examples
    --------
    >>> [interval_supported(m, 0.95) for m in (3, 5, 6)], interval_supported(5, 0.9)
    ([False, False, True], True)
    """
    return bool(sign_flip_floor(m) < 1.0 - level)


def least_supported(level: float) -> int:
    """The fewest values (nonzero differences, queries) with which `interval_supported` gives an
    interval at ``level``: the least ``m`` with ``2 / 2^m < 1 - level``.

    Examples
    --------
    >>> least_supported(0.95), least_supported(0.9), least_supported(0.99)
    (6, 5, 8)
    """
    m = 1
    while not interval_supported(m, level):
        m += 1
    return m


def nonzero(D: np.ndarray, tol) -> np.ndarray:
    """Per column of ``D`` (``n x P``), how many differences are nonzero (beyond ``tol``)."""
    return (np.abs(D) > tol).sum(axis=0)


def chunks(total: int, n: int):
    """Chunk sizes of ``total`` resamples over ``n`` queries (a function of ``n`` only)."""
    size = max(1, CHUNK_CELLS // max(n, 1))
    done = 0
    while done < total:
        c = min(size, total - done)
        yield c
        done += c


@dataclass(frozen=True)
class Pairs:
    """The ``P`` pairs to test: ``D`` (``n x P``) the per-query differences ``a - b``; ``zero`` the
    pairs whose differences are all zero (within ``tol``, per pair); ``mean_d`` their means; ``t``
    and ``t_p`` the paired t statistic and p (computed once for every test); ``boot_d`` (``B x P``)
    the bootstrap means of the differences where drawn; ``samples``, ``resamples`` and ``seed``."""

    D: np.ndarray
    zero: np.ndarray
    tol: np.ndarray
    mean_d: np.ndarray
    t: np.ndarray
    t_p: np.ndarray
    samples: int
    resamples: int
    seed: int
    boot_d: np.ndarray | None = None


@dataclass
class Outcome:
    """Per pair: the statistic, the two-sided p, how it was computed (``method``) and, where
    sampled, ``samples``, ``seed`` and the standard error ``se`` of ``p``."""

    statistic: np.ndarray
    p: np.ndarray
    method: list[str]
    samples: list[int | None] = field(default_factory=list)
    seed: list[int | None] = field(default_factory=list)
    se: list[float | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        P = len(self.p)
        for name in ("samples", "seed", "se"):
            if not getattr(self, name):
                setattr(self, name, [None] * P)
