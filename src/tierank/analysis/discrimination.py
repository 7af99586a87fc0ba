"""Discriminative power of a measure on a collection (Sakai, "Evaluating evaluation metrics based on
the bootstrap", SIGIR 2006): the share of the system pairs it separates at level ``alpha``, and the
difference it needs to separate a pair.

Two methods, on the matrix of per-topic values (``n`` topics x ``S`` systems; tierank's expected
values over tie orderings, or the oblivious values to see what one tie-break claims):

* ``"bootstrap"`` (Sakai 2006): for each pair, the paired bootstrap test of the studentized mean
  difference, with the shift method: ``z`` the per-topic differences, ``t(z) = mean(z) / (sd(z) /
  sqrt(n))``, ``w = z - mean(z)`` (the null holds for ``w``), ``B`` resamples ``w*`` of the topics and
  the achieved significance level ``ASL = #{|t(w*)| >= |t(z)|} / B``; a pair is separated where
  ``ASL < alpha``.  The estimated difference required for a pair is ``|mean(w*)|`` of the resample
  whose ``|t(w*)|`` is the ``floor(B alpha)``-th largest (the critical value on the scale of the
  difference); the collection's is the largest over the pairs (Sakai's "estimated difference
  required"), the median is reported too.  Every pair is resampled with the same topic draws
  ([`resample_counts`][tierank.analysis.inference.resample_counts]): two matrix products
  per chunk of resamples for all pairs at once.
* ``"tukey"`` (randomized Tukey HSD, Carterette 2012; Sakai's later discriminative-power
  experiments): ``B`` permutations of each topic's values across the systems
  ([`permutation_ranges`][tierank.analysis.inference.permutation_ranges]),
  ``p = (1 + #{range* >= |mean_i - mean_j|}) / (1 + B)`` as in
  [`tukey_hsd`][tierank.analysis.inference.tukey_hsd]; separated where ``p < alpha``.  The
  difference required is the same for every pair: the smallest range a difference must exceed.

Both are Monte Carlo estimates: the result carries ``method``, ``samples`` and ``seed`` and is the
same for the same seed.  A pair whose differences are all 0 is never separated; fewer than two
systems or two topics are refused.

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).normal([0.50, 0.45, 0.30], 0.1, size=(50, 3))
>>> d = discriminative_power(X, ["A", "B", "C"], samples=1000, seed=1)
>>> d.separated, d.pairs, [pair for pair, p in zip(d.pair_names, d.p) if p >= d.alpha]
(2, 3, [('A', 'B')])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TierankInputError
from . import inference
from .paired.base import REL_TOL

#: the methods of `discriminative_power`
METHODS = {
    "bootstrap": "paired bootstrap test of the studentized mean difference, shift method (Sakai 2006)",
    "tukey": "randomized Tukey HSD over all systems (Carterette 2012)",
}


@dataclass(frozen=True)
class Discrimination:
    """A measure's discriminative power on one collection.

    ``power`` is ``separated / pairs``; ``p`` the per-pair achieved significance levels (pairs in the
    order of ``pair_names``), ``diff`` the per-pair absolute mean differences, ``mean_diff`` the signed
    ones (``a - b``) with their ``1 - alpha`` interval ``[ci_low, ci_high]`` (bootstrap: the basic
    bootstrap interval from the same resamples; tukey: the simultaneous interval ``mean_diff +-
    diff_required``) and Cohen's ``dz``, ``needed`` the per-pair
    estimated differences required; ``diff_required`` the
    estimated difference required (largest over the pairs for the bootstrap), ``diff_required_median``
    its median over the pairs."""

    measure: str
    method: str
    alpha: float
    topics: int
    systems: tuple[str, ...]
    pair_names: tuple[tuple[str, str], ...]
    p: np.ndarray
    diff: np.ndarray
    mean_diff: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    dz: np.ndarray
    needed: np.ndarray
    separated: int
    pairs: int
    power: float
    diff_required: float
    diff_required_median: float
    samples: int
    seed: int
    values: str = "expected"

    def to_dict(self, per_pair: bool = False) -> dict[str, Any]:
        """``measure, values, method, method_name, alpha, topics, systems, pairs, separated, power,
        diff_required, diff_required_median, samples, seed`` and, with ``per_pair``, ``pair_results``
        (``a, b, diff, mean_diff, ci_low, ci_high, dz, needed, p, separated``)."""
        out: dict[str, Any] = {
            "measure": self.measure,
            "values": self.values,
            "method": self.method,
            "method_name": METHODS[self.method],
            "alpha": self.alpha,
            "topics": self.topics,
            "systems": len(self.systems),
            "pairs": self.pairs,
            "separated": self.separated,
            "power": self.power,
            "diff_required": _finite(self.diff_required),
            "diff_required_median": _finite(self.diff_required_median),
            "samples": self.samples,
            "seed": self.seed,
        }
        if per_pair:
            out["pair_results"] = [
                {
                    "a": a,
                    "b": b,
                    "diff": float(d),
                    "mean_diff": float(md),
                    "ci_low": _finite(float(lo)),
                    "ci_high": _finite(float(hi)),
                    "dz": _finite(float(z)),
                    "needed": _finite(float(nd)),
                    "p": float(p),
                    "separated": bool(p < self.alpha),
                }
                for (a, b), d, md, lo, hi, z, nd, p in zip(
                    self.pair_names,
                    self.diff,
                    self.mean_diff,
                    self.ci_low,
                    self.ci_high,
                    self.dz,
                    self.needed,
                    self.p,
                )
            ]
        return out


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _checked(values, names, alpha, samples, seed) -> tuple[np.ndarray, tuple[str, ...]]:
    X = np.asarray(values, dtype=np.float64)
    if X.ndim != 2:
        raise TierankInputError("discriminative_power: give a topics x systems matrix")
    n, S = X.shape
    names = tuple(str(x) for x in names) if names is not None else tuple(f"s{k}" for k in range(S))
    if len(names) != S:
        raise TierankInputError(
            f"discriminative_power: {len(names)} names for {S} systems: give one name per column"
        )
    if S < 2:
        raise TierankInputError(
            f"discriminative_power: need at least two systems, got {S}: one system has no pair to separate"
        )
    if n < 2:
        raise TierankInputError(
            f"discriminative_power: need at least two topics, got {n}: a test over topics needs a "
            "variance over topics"
        )
    if not np.all(np.isfinite(X)):
        raise TierankInputError("discriminative_power: the per-topic values must be finite numbers")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise TierankInputError(f"discriminative_power: alpha must be in (0, 1), got {alpha!r}")
    inference.check_sampling(0.5, samples, seed, "samples")
    if math.floor(samples * alpha) < 1:
        raise TierankInputError(
            f"discriminative_power: {samples} samples cannot give a p-value below alpha {alpha}"
            + (f" (need at least {math.ceil(1 / alpha):,})" if alpha > 1e-9 else "")
        )
    return X, names


def _bootstrap(X: np.ndarray, alpha: float, samples: int, seed: int):
    n, S = X.shape
    i, j = np.triu_indices(S, 1)
    Z = X[:, i] - X[:, j]
    mean = Z.mean(axis=0)
    sd = Z.std(axis=0, ddof=1)
    tol = REL_TOL * np.maximum(1.0, np.abs(Z).max(axis=0))
    live = sd > tol
    t_obs = np.where(live, np.abs(mean) / np.where(live, sd, 1.0) * math.sqrt(n), 0.0)
    Wd = Z - mean
    Wd2 = Wd * Wd
    tstar = np.empty((samples, Z.shape[1]))
    mstar = np.empty((samples, Z.shape[1]))
    start = 0
    for C in inference.resample_counts(n, samples, seed):
        Cf = C.astype(np.float64)
        m = (Cf @ Wd) / n
        var = np.maximum((Cf @ Wd2) / n - m * m, 0.0) * (n / (n - 1.0))
        se = np.sqrt(var / n)
        small = se <= tol
        tt = np.where(
            small, np.where(np.abs(m) > tol, np.inf, 0.0), np.abs(m) / np.where(small, 1.0, se)
        )
        tstar[start : start + len(C)] = tt
        mstar[start : start + len(C)] = m
        start += len(C)
    hits = (tstar >= t_obs - tol).sum(axis=0)
    p = np.where(live, hits / samples, 1.0)
    k = math.floor(samples * alpha)  # the k-th largest |t*| is the critical value
    order = np.argsort(-tstar, axis=0, kind="stable")[k - 1]
    need = np.where(live, np.abs(mstar[order, np.arange(Z.shape[1])]), np.nan)  # none: a dead pair
    # the basic bootstrap interval of the mean difference (w* is the centred resample of z)
    q_lo, q_hi = np.quantile(mstar, [alpha / 2, 1 - alpha / 2], axis=0)
    return i, j, mean, p, need, (mean - q_hi, mean - q_lo), mean / np.where(live, sd, np.nan)


def _tukey(X: np.ndarray, alpha: float, samples: int, seed: int, jobs: int | None):
    n, S = X.shape
    i, j = np.triu_indices(S, 1)
    means = X.mean(axis=0)
    signed = means[i] - means[j]
    diff = np.abs(signed)
    ranges = np.sort(inference.permutation_ranges(X, samples, seed, jobs=jobs))
    tol = REL_TOL * max(1.0, float(np.abs(X).max()))
    hits = samples - np.searchsorted(ranges, diff - tol, side="left")
    p = (1.0 + hits) / (1.0 + samples)
    # separated iff hits <= h, the largest count with (1 + h) / (1 + B) < alpha: differences beyond
    # the (h + 1)-th largest range
    h = math.ceil(alpha * (1 + samples)) - 2
    need = float(ranges[samples - 1 - h]) if h >= 0 else math.inf
    # Tukey's simultaneous interval: the difference +- the range it must exceed
    sd = np.std(X[:, i] - X[:, j], axis=0, ddof=1)
    dz = signed / np.where(sd > 0, sd, np.nan)
    return i, j, signed, p, np.full(len(i), need), (signed - need, signed + need), dz


def discriminative_power(
    values,
    names=None,
    *,
    measure: str = "",
    method: str = "bootstrap",
    alpha: float = 0.05,
    samples: int = 1000,
    seed: int = 0,
    jobs: int | None = None,
    on: str = "expected",
) -> Discrimination:
    """The discriminative power of one measure from its per-topic values (``topics x systems``).

    Parameters
    ----------
    values
        Per-topic values, one column per system (tierank's per-topic expected values, say).
    names
        The systems' names (default ``s0, s1, ...``).
    measure
        The measure's name (a label).
    method
        ``"bootstrap"`` (Sakai 2006) or ``"tukey"`` (randomized Tukey HSD); see the module docstring.
    alpha
        The significance level.
    samples, seed
        Bootstrap resamples or permutations, and the seed of the draws.
    jobs
        Threads of the Tukey permutations (same result for any number).
    on
        A label: which per-topic values were given (``"expected"`` or ``"oblivious"``).

    Raises
    ------
    TierankInputError
        Fewer than two systems or topics, non-finite values, too few samples for ``alpha``, an
        unknown method.
    """
    if method not in METHODS:
        raise TierankInputError(
            f"discriminative_power: method must be one of {', '.join(METHODS)}, got {method!r}"
        )
    X, names = _checked(values, names, alpha, samples, seed)
    if method == "bootstrap":
        i, j, mean, p, need, ci, dz = _bootstrap(X, alpha, samples, seed)
    else:
        i, j, mean, p, need, ci, dz = _tukey(X, alpha, samples, seed, jobs)
    sep = int((p < alpha).sum())
    P = len(i)
    return Discrimination(
        measure=str(measure),
        method=method,
        alpha=float(alpha),
        topics=X.shape[0],
        systems=names,
        pair_names=tuple((names[a], names[b]) for a, b in zip(i, j)),
        p=p,
        diff=np.abs(mean),
        mean_diff=mean,
        ci_low=ci[0],
        ci_high=ci[1],
        dz=dz,
        needed=need,
        separated=sep,
        pairs=P,
        power=sep / P,
        diff_required=float(np.nanmax(need)) if np.any(np.isfinite(need)) else math.nan,
        diff_required_median=float(np.nanmedian(need)) if np.any(np.isfinite(need)) else math.nan,
        samples=int(samples),
        seed=int(seed),
        values=on,
    )


__all__ = ["METHODS", "Discrimination", "discriminative_power"]
