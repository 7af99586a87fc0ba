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
            f"{where}{n} queries with human labels (fewer than {FEW_LABELED}): PPI's normal "
            "interval may cover less than its nominal level with so few"
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
    (0.45, 'PPI')
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


def estimates(y, yhat, yhat_unlabeled, confidence: float = 0.95, point: str = "mean") -> dict:
    """PPI (``lam = 1``) and PPI++ (tuned ``lam``) of the mean of ``y`` as record fields:
    ``ppi_{point}``, ``ppi_ci_low``, ``ppi_ci_high``, ``ppi_pp_{point}``, ``ppi_pp_ci_low``,
    ``ppi_pp_ci_high``, ``ppi_pp_lambda``, ``ppi_n_labeled``, ``ppi_n_unlabeled`` (``point``: ``mean``
    for a system, ``diff`` for a pair's per-query differences).  The sizes are not checked here
    (`check_sizes`).

    >>> f = estimates([1.0, 0.0] * 6, [0.8, 0.1] * 6, [0.7, 0.2, 0.6, 0.1])
    >>> round(f["ppi_mean"], 6), f["ppi_n_labeled"], f["ppi_n_unlabeled"]
    (0.45, 12, 4)
    """
    plain = ppi_mean(y, yhat, yhat_unlabeled, confidence, lam=1.0, check=False)
    tuned = ppi_mean(y, yhat, yhat_unlabeled, confidence, lam=None, check=False)
    return {
        f"ppi_{point}": plain.mean,
        "ppi_ci_low": plain.ci_low,
        "ppi_ci_high": plain.ci_high,
        f"ppi_pp_{point}": tuned.mean,
        "ppi_pp_ci_low": tuned.ci_low,
        "ppi_pp_ci_high": tuned.ci_high,
        "ppi_pp_lambda": tuned.lam,
        "ppi_n_labeled": plain.n_labeled,
        "ppi_n_unlabeled": plain.n_unlabeled,
    }


def split_queries(
    human: dict[str, float], machine: dict[str, float]
) -> tuple[list[str], list[str]]:
    """``(labelled, unlabelled)`` query ids: those with a human value and a machine value, and those
    with a machine value only (sorted)."""
    labelled = sorted(set(human) & set(machine))
    unlabelled = sorted(set(machine) - set(human))
    return labelled, unlabelled


#: the fields PPI adds to an aggregate record of ``tierank eval --ppi``
PPI_FIELDS = (
    "ppi_mean",
    "ppi_ci_low",
    "ppi_ci_high",
    "ppi_pp_mean",
    "ppi_pp_ci_low",
    "ppi_pp_ci_high",
    "ppi_pp_lambda",
    "human_mean",
    "ppi_n_labeled",
    "ppi_n_unlabeled",
    "ppi_confidence",
)


def _per_query(result, m) -> dict[str, float]:
    return dict(zip(result.qids, result.stats[m].expected.tolist(), strict=True))


def _labelled(machine: dict[str, float], human: dict[str, float]):
    lab, unl = split_queries(human, machine)
    y = np.array([human[q] for q in lab])
    yhat = np.array([machine[q] for q in lab])
    yu = np.array([machine[q] for q in unl])
    return y, yhat, yu


def ppi_records(
    machine, human, confidence: float = 0.95
) -> tuple[dict[tuple[str, str], dict], list[str]]:
    """PPI and PPI++ of every run's mean of every measure: ``machine`` and ``human`` are ``{run:
    EvalResult}`` of the same runs and measures under the machine's and under the humans' grades; the
    per-query values are the tie-aware expected values.  Gives ``{(run, measure): fields of
    `PPI_FIELDS`}`` and notes (a measure whose summary is not a mean over queries is left out, said).

    Raises
    ------
    TierankInputError
        Too few queries with human labels, or none without (`check_sizes`).
    """
    out: dict[tuple[str, str], dict] = {}
    notes: list[str] = []
    for name, res in machine.items():
        hres = human[name]
        for m in res.measures:
            if m.aggregator != "mean":
                notes.append(
                    f"--ppi: {m} is summarised by a {m.aggregator}, not a mean: no PPI for it"
                )
                continue
            y, yhat, yu = _labelled(_per_query(res, m), _per_query(hres, m))
            try:
                warn = check_sizes(len(y), len(yu))
            except TierankInputError as e:
                raise TierankInputError(f"--ppi ({name}, {m}): {e.problems[0].reason}") from None
            if warn and warn not in notes:
                notes.append(warn)
            fields = estimates(y, yhat, yu, confidence)
            lab = fields.pop("ppi_n_labeled"), fields.pop("ppi_n_unlabeled")
            out[(name, str(m))] = {
                **fields,
                "human_mean": float(y.mean()),
                "ppi_n_labeled": lab[0],
                "ppi_n_unlabeled": lab[1],
                "ppi_confidence": confidence,
            }
    return out, notes


def ppi_pairs(machine, human, confidence: float = 0.95) -> list[dict]:
    """PPI and PPI++ of the mean difference of every pair of runs (``a`` minus ``b``, in the order
    given) for every measure whose summary is a mean, over the queries both runs answer."""
    names = list(machine)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for m in machine[a].measures:
                if m.aggregator != "mean" or m not in machine[b].stats:
                    continue
                ma, mb = _per_query(machine[a], m), _per_query(machine[b], m)
                ha, hb = _per_query(human[a], m), _per_query(human[b], m)
                shared_m = {q: ma[q] - mb[q] for q in ma.keys() & mb.keys()}
                shared_h = {q: ha[q] - hb[q] for q in ha.keys() & hb.keys()}
                y, yhat, yu = _labelled(shared_m, shared_h)
                try:
                    check_sizes(len(y), len(yu))
                except TierankInputError as e:
                    raise TierankInputError(
                        f"--ppi ({a} - {b}, {m}): {e.problems[0].reason}"
                    ) from None
                out.append(
                    {
                        "a": a,
                        "b": b,
                        "measure": str(m),
                        **estimates(y, yhat, yu, confidence, "diff"),
                    }
                )
    return out


__all__ = [
    "PPI_FIELDS",
    "ppi_pairs",
    "ppi_records",
    "FEW_LABELED",
    "MIN_LABELED",
    "PPIEstimate",
    "check_sizes",
    "estimates",
    "ppi_difference",
    "ppi_mean",
    "split_queries",
    "tuned_lambda",
]
