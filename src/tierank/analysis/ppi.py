"""Prediction-powered inference (PPI) of a mean from machine labels for every query and human labels
for some of them.

The setting (Angelopoulos et al., "Prediction-powered inference", Science 2023; PPI++: Angelopoulos,
Duchi and Zrnic, arXiv 2311.01453, 2023): ``n`` labelled queries carry the measure under the human
grades ``Y`` and under the machine grades ``Yhat``; ``N`` further queries carry ``Yhat`` only (the
unlabelled ones, disjoint from the labelled). The estimate of the mean of ``Y`` is

    theta(lam) = lam * mean(Yhat_unlabelled) + mean(Y - lam * Yhat)

(``lam = 1``: PPI; ``lam = 0``: the human-only mean), with the normal interval
``theta -+ z * sqrt(var(lam * Yhat_unlabelled) / N + var(Y - lam * Yhat) / n)`` (variances with
divisor ``N`` and ``n``, as ``ppi-python`` computes them).  PPI++ tunes ``lam`` to the variance-optimal

    lam = cov(Y, Yhat) / ((1 + n / N) * var(Yhat over all n + N queries))

(covariance with divisor ``n``, variance with divisor ``n + N - 1``, clipped to [0, 1]), as ``ppi-python``'s
``ppi_mean_ci(..., lam=None)`` does; PPI++ is never worse than the human-only mean asymptotically.

A paired difference of two systems is the PPI mean of the per-query differences (``Y_A - Y_B`` against
``Yhat_A - Yhat_B``).  The functions take arrays whose last axis holds the queries, so that many
estimates (replications of a simulation, many systems) are one call.

With fewer than `MIN_LABELED` labelled queries, or no unlabelled query, the estimate is refused with
the reason (the normal interval rests on the central limit theorem over the labelled queries).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TierankInputError

#: the fewest labelled queries a PPI interval is given for
MIN_LABELED = 10
#: below this many labelled queries the interval is given with a warning (the normal approximation)
FEW_LABELED = 30


@dataclass(frozen=True)
class PPIEstimate:
    """A PPI estimate of a mean: the point estimate, the interval, the ``lam`` used (1: PPI; tuned:
    PPI++), the counts of labelled and unlabelled queries, the confidence, and the method's name."""

    mean: np.ndarray | float
    ci_low: np.ndarray | float
    ci_high: np.ndarray | float
    lam: np.ndarray | float
    n_labeled: int
    n_unlabeled: int
    confidence: float
    method: str


def check_sizes(n: int, big_n: int, what: str = "") -> str | None:
    """Refuse (``TierankInputError``) too few labelled queries or no unlabelled one; a warning (text)
    when the labelled queries are few."""
    where = f"{what}: " if what else ""
    if n < MIN_LABELED:
        raise TierankInputError(
            f"{where}only {n} quer{'y has' if n == 1 else 'ies have'} both human and machine labels; "
            f"PPI's normal interval needs at least {MIN_LABELED}"
        )
    if big_n < 1:
        raise TierankInputError(
            f"{where}every query with machine labels has human labels too: there is nothing for PPI to "
            "add (the human-only mean is the estimate)"
        )
    if n < FEW_LABELED:
        return (
            f"{where}{n} queries with human labels: PPI's normal interval may cover less than "
            "nominal with so few"
        )
    return None


def _z(confidence: float) -> float:
    from scipy.stats import norm

    if not 0 < confidence < 1:
        raise TierankInputError(f"confidence {confidence}: must be in (0, 1)")
    return float(norm.ppf(1 - (1 - confidence) / 2))


def tuned_lambda(y, yhat, yhat_unlabeled) -> np.ndarray:
    """PPI++'s variance-optimal ``lam`` (clipped to [0, 1]; see the module's documentation); NaN
    where the machine's values do not vary."""
    y, yhat, yu = (np.asarray(a, dtype=np.float64) for a in (y, yhat, yhat_unlabeled))
    n, big_n = y.shape[-1], yu.shape[-1]
    cov = ((y - y.mean(-1, keepdims=True)) * (yhat - yhat.mean(-1, keepdims=True))).mean(-1)
    var = np.concatenate([yhat, yu], axis=-1).var(-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = cov / ((1 + n / big_n) * var)
    return np.where(var > 0, np.clip(lam, 0.0, 1.0), np.nan)


def ppi_mean(
    y,
    yhat,
    yhat_unlabeled,
    confidence: float = 0.95,
    lam: float | np.ndarray | None = 1.0,
    check: bool = True,
) -> PPIEstimate:
    """The PPI (``lam=1``), PPI++ (``lam=None``: tuned) or fixed-``lam`` estimate of the mean of ``y``
    with its two-sided normal interval at ``confidence``; the last axis of each array holds the
    queries.  A tuned ``lam`` that is undefined (the machine's values do not vary) falls back to 0,
    the human-only mean.

    >>> e = ppi_mean([1.0, 0.0] * 6, [0.8, 0.1] * 6, [0.7, 0.2, 0.6, 0.1], check=False)
    >>> round(float(e.mean), 6), e.method
    (0.5, 'PPI')
    """
    y, yhat, yu = (np.asarray(a, dtype=np.float64) for a in (y, yhat, yhat_unlabeled))
    if y.shape != yhat.shape:
        raise ValueError("y and yhat must have the same shape")
    n, big_n = y.shape[-1], yu.shape[-1]
    if check:
        check_sizes(n, big_n)
    z = _z(confidence)
    if lam is None:
        lam_arr = np.nan_to_num(tuned_lambda(y, yhat, yu), nan=0.0)
        method = "PPI++"
    else:
        lam_arr = np.asarray(lam, dtype=np.float64)
        method = "PPI" if np.all(lam_arr == 1.0) else "PPI (fixed lambda)"
    lam_k = lam_arr[..., None] if lam_arr.ndim else lam_arr
    rect = y - lam_k * yhat
    mean = (lam_k * yu).mean(-1) + rect.mean(-1)
    se = np.sqrt((lam_k * yu).var(-1) / big_n + rect.var(-1) / n)
    return PPIEstimate(
        _scalar(mean),
        _scalar(mean - z * se),
        _scalar(mean + z * se),
        _scalar(lam_arr),
        n,
        big_n,
        confidence,
        method,
    )


def _scalar(v):
    v = np.asarray(v, dtype=np.float64)
    return float(v) if v.ndim == 0 else v


def ppi_difference(
    y_a, yhat_a, yu_a, y_b, yhat_b, yu_b, confidence: float = 0.95, lam=1.0, check: bool = True
) -> PPIEstimate:
    """The PPI estimate of the mean difference of two systems over the same queries: `ppi_mean` of the
    per-query differences (the labelled and the unlabelled queries the same for both)."""
    return ppi_mean(
        np.subtract(y_a, y_b),
        np.subtract(yhat_a, yhat_b),
        np.subtract(yu_a, yu_b),
        confidence=confidence,
        lam=lam,
        check=check,
    )


def split_queries(
    human: dict[str, float], machine: dict[str, float]
) -> tuple[list[str], list[str]]:
    """``(labelled, unlabelled)`` query ids: those with a human value and a machine value, and those
    with a machine value only (sorted)."""
    labelled = sorted(set(human) & set(machine))
    unlabelled = sorted(set(machine) - set(human))
    return labelled, unlabelled


__all__ = [
    "FEW_LABELED",
    "MIN_LABELED",
    "PPIEstimate",
    "check_sizes",
    "ppi_difference",
    "ppi_mean",
    "split_queries",
    "tuned_lambda",
]
