"""The scales of a comparison: each system's summary is its measure's own (``Measure.aggregate``: a
mean, a sum for counts, a geometric mean for GMAP), and the inference runs on the per-query values that
summary averages (`SCALES`), its intervals mapped back to the measure's scale (`back`)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from ...measures.base import Measure
from ...results import COLUMNS, EvalResult, statistic
from .align import aligned, positions
from .results import SystemSummary

#: what the inference is computed on, per aggregator of the measure (``Measure.aggregator``)
SCALES = {
    "mean": "per-query values; intervals of the mean",
    "sum": "per-query values (a sum is n times their mean: the same tests); intervals and mean-difference "
    "statistics scaled by n",
    "geometric_mean": "log of the per-query values (floored as the measure floors them; for the expected "
    "values n log E[X_q^(1/n)], whose mean is the log of the expected geometric mean); intervals bounded "
    "to [log floor, 0] and mapped back with exp, pair differences as ratios",
}


def log_bounds(m) -> tuple[float, float] | None:
    """The range of a geometric-mean measure's per-query values on the log scale: ``[log floor, 0]``
    (GMAP and GMBpref average the logs of AP and bpref, floored, in ``[floor, 1]``; so does every
    term ``n log E[X_q^(1/n)]`` of the expected value, a power mean of ``X_q``); None for the others
    (their intervals are not bounded)."""
    if m.aggregator != "geometric_mean":
        return None
    floor = float(getattr(m, "floor", 0.0)) or np.finfo(np.float64).tiny
    return float(np.log(floor)), 0.0


def _log_values(m, st, n: int) -> dict[str, np.ndarray]:
    """A geometric-mean measure's per-query values on the log scale its summary averages: the log of
    the (floored) oblivious value, and for the expectation ``n log E[X_q^(1/n)]``, whose mean over the
    ``n`` queries is exactly the log of the expected geometric mean (where the statistics carry the
    roots; else the log of the expectation)."""
    floor = float(getattr(m, "floor", 0.0)) or np.finfo(np.float64).tiny
    root = st.get("root_mean")
    if root is not None and len(root) == n:
        exp_ = n * np.log(np.maximum(root, floor ** (1.0 / n)))
    else:
        exp_ = np.log(np.maximum(st["expected"], floor))
    return {**st, "expected": exp_, "oblivious": np.log(np.maximum(st["oblivious"], floor))}


def scaled(m, st: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Per-query values on the scale of the measure's inference (`SCALES`)."""
    return _log_values(m, st, n) if m.aggregator == "geometric_mean" else st


def back(aggregator: str, n: int, x, bounds: tuple[float, float] | None = None):
    """An interval endpoint from the inference scale to the measure's: exp for a geometric mean, n x
    for a sum, as is for a mean; first brought into ``bounds`` where given (`log_bounds`: the mean of
    values in a range lies in it, so no interval of it reaches past it; NaN stays NaN)."""
    x = np.asarray(x, dtype=np.float64)
    if bounds is not None:
        x = np.clip(x, *bounds)
    if aggregator == "geometric_mean":
        return np.exp(x)
    return x * n if aggregator == "sum" else x


def _summary(name: str, result, queries: list[str]) -> SystemSummary:
    """The system's summary over ``queries``: its measure's own aggregate (``Measure.aggregate``: the
    mean, a sum for counts, a geometric mean for GMAP), the number ``tierank eval`` prints."""
    m = result.measures[0]
    stats = result.stats[m]
    if list(result.qids) != list(
        queries
    ):  # additive summaries only (non-additive ones are re-evaluated)
        idx = positions(result, queries)
        stats = replace(
            stats,
            **{
                f.name: getattr(stats, f.name)[idx]
                for f in fields(stats)
                if isinstance(getattr(stats, f.name), np.ndarray)
            },
        )
    a = m.aggregate(stats)
    return SystemSummary(
        name=name,
        **{c: statistic(a, c) for c in COLUMNS},
    )


@dataclass(frozen=True)
class Evaluated:
    """Every system's evaluation on the compared queries: its summary, its per-query values on the
    measure's scale (``raw``) and on the inference's (``per``, `SCALES`)."""

    summaries: dict[str, SystemSummary]
    raw: dict[str, dict[str, np.ndarray]]
    per: dict[str, dict[str, np.ndarray]]
    bounds: tuple[float, float] | None = None

    @classmethod
    def of(cls, m: Measure, results: dict[str, EvalResult], common: list[str]) -> Evaluated:
        raw = {name: aligned(res, common) for name, res in results.items()}
        return cls(
            summaries={name: _summary(name, res, common) for name, res in results.items()},
            raw=raw,
            per={name: scaled(m, st, len(common)) for name, st in raw.items()},
            bounds=log_bounds(m),
        )

    def matrix(self, ranked: list[str], key: str) -> np.ndarray:
        """The per-query values ``key`` on the inference's scale, queries x systems of ``ranked``."""
        return np.column_stack([self.per[n][key] for n in ranked])
