"""Per-query statistics of a measure over tie orderings ([`Stats`][tierank.measures.summary.Stats]) and their summary over
queries ([`Aggregate`][tierank.measures.summary.Aggregate], [`summarize`][tierank.measures.summary.summarize]: the one rule of every additive aggregator, for
runs and tensors)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

import numpy as np

__all__ = ["Aggregator", "AGGREGATORS", "ADDITIVE", "Stats", "Aggregate", "summarize"]

#: how a family summarises its per-query values over queries (`Measure.aggregator`):
#: ``mean`` and ``sum`` are additive (a batch of queries at a time gives the same summary: streaming
#: may evaluate them), ``geometric_mean`` needs every query at once
Aggregator = Literal["mean", "sum", "geometric_mean"]
AGGREGATORS: tuple[str, ...] = get_args(Aggregator)
ADDITIVE: frozenset[str] = frozenset({"mean", "sum"})


@dataclass
class Stats:
    """Per-query statistics of one measure over the orderings of tied documents."""

    oblivious: np.ndarray
    expected: np.ndarray
    min: np.ndarray
    max: np.ndarray
    var: np.ndarray  # variance over tie orderings (exact unless ``method == "sampled"``)
    method: str = (
        "exact"  # "exact", or "sampled": expected and var estimated from random tie orderings
    )
    samples: int | None = None  # with "sampled": orderings drawn per query
    seed: int | None = None  # with "sampled": the seed of the draws
    se: np.ndarray | None = (
        None  # with "sampled": standard error of ``expected`` per query (0 where exact)
    )
    #: with "sampled": per query, True where ``expected`` and ``var`` were estimated from random orderings
    #: (False: exact, e.g. a query no ordering changes or one whose orderings were all enumerated);
    #: None: every query
    sampled: np.ndarray | None = None

    def sampled_queries(self) -> np.ndarray:
        """Per query, whether its ``expected`` and ``var`` are estimates (see `sampled`).

        >>> z = np.zeros(2)
        >>> Stats(z, z, z, z, z).sampled_queries().tolist()
        [False, False]
        >>> Stats(z, z, z, z, z, method="sampled", sampled=np.array([True, False])).sampled_queries().tolist()
        [True, False]
        """
        n = len(self.expected)
        if self.method == "exact":
            return np.zeros(n, dtype=bool)
        return (
            np.ones(n, dtype=bool) if self.sampled is None else np.asarray(self.sampled, dtype=bool)
        )

    def settled(self) -> Stats:
        """Where no tie ordering can change the value, ``expected`` is that one value, bit for bit.

        Such a query has variance exactly 0 (the kernels make every tie group that cannot
        vary add exactly 0.0) and equal extremal values; its expectation, a different float
        sum, is then replaced by ``min``.  Requiring both guards against a variance that
        underflows to 0 for a value that can change (e.g. Success with a 1e-600 chance).
        """
        fixed = (self.var == 0.0) & (self.min == self.max)
        if not fixed.any():
            return self
        se = None if self.se is None else np.where(fixed, 0.0, self.se)
        sampled = None if self.method == "exact" else self.sampled_queries() & ~fixed
        return replace(
            self, expected=np.where(fixed, self.min, self.expected), se=se, sampled=sampled
        )


@dataclass(frozen=True)
class Aggregate:
    """The summary over queries of one measure's [`Stats`][tierank.measures.summary.Stats] (what trec_eval prints as ``all``).

    ``std`` is the standard deviation over tie orderings of the summary value itself; ``se`` the
    standard error of a sampled ``expected`` (None when exact).
    """

    oblivious: float
    expected: float
    min: float
    max: float
    std: float
    method: str = "exact"
    se: float | None = None
    #: True: the summary's ``range``, ``bias`` (and bounds) are the means (sums for counts) of the
    #: per-query columns; False: ``max - min`` and ``oblivious - expected`` of this summary
    linear: bool = True


def summarize(xp: Any, aggregator: str, oblivious, expected, lo, hi, var) -> dict[str, float]:
    """The summary over queries of per-query statistics (arrays of the array namespace ``xp``), the
    one rule of every additive `Aggregator`: the mean (``sum`` for counts) of each statistic, and
    ``std`` that of the summary value itself, exact because orderings in different queries are
    independent: ``sqrt(sum_q Var_q) / n`` (``sqrt(sum_q Var_q)`` summed); NaN for no query.

    >>> import numpy as np
    >>> s = summarize(np, "mean", *(np.array([0.5, 1.0]),) * 4, np.array([0.01, 0.03]))
    >>> s["expected"], round(s["std"], 6)
    (0.75, 0.1)
    """
    if aggregator not in ADDITIVE:
        raise ValueError(f"summarize: aggregator {aggregator!r} is not additive")
    n = int(expected.shape[0])
    if n == 0:
        nan = float("nan")
        return dict.fromkeys(("oblivious", "expected", "min", "max", "std"), nan)
    summed = aggregator == "sum"
    agg = xp.sum if summed else xp.mean
    out = {
        "oblivious": float(agg(oblivious)),
        "expected": float(agg(expected)),
        "min": float(agg(lo)),
        "max": float(agg(hi)),
    }
    out["std"] = math.sqrt(float(xp.sum(var))) / (1 if summed else n)
    return out
