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
