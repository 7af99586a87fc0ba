r"""Geometric means over queries: trec_eval's ``gm_map`` (GMAP), on a reusable base.

Definition (trec_eval 10, ``m_gm_map.c`` and ``te_calc_avg_meas_s_gm`` of ``meas_avg.c``): per
query `X_q = \max(AP_q, 10^{-5})` (``MIN_GEO_MEAN``, trec_eval.h), and over the `n`
evaluated queries `G = \exp(\frac1n \sum_q \log X_q)`.  With ``-c`` the queries the run
lacks count `\log 10^{-5}`: they are evaluated here with no documents, AP 0.  trec_eval
prints it only in the summary (``summary_only``).

Statistics over tie orderings (orderings of different queries are independent):

* **oblivious, min, max: exact.**  `G` is increasing in every `X_q`, and
  `X_q` in `AP_q`, whose minimum and maximum are attained at the pessimistic and
  optimistic arrangements (all relevant documents of every tie group last / first).
* **expected: sampled.**  `E[G] = \prod_q E[X_q^{1/n}]` by independence; each factor is
  estimated from ``prep.samples`` random orderings of its query
  (`tierank.measures.sampling`), or is exactly `X_q^{1/n}` where the query's AP
  cannot vary.  We know no exact method for `E[X^{1/n}]`.
* **std: sampled.**  `Var[G] = \prod_q E[X_q^{2/n}] - \prod_q E[X_q^{1/n}]^2`, computed
  without cancellation as `E[G]^2 \,\mathrm{expm1}(\sum_q \mathrm{log1p}(v_q / a_q^2))`
  with `a_q = E[X_q^{1/n}]` and `v_q = Var[X_q^{1/n}]` (sampled, ``ddof=1``;
  exactly 0 for a query that cannot vary, so a run where nothing varies has std exactly 0).
* **se** of the summary's expectation: the delta method over the independent factors,
  `se(\hat G) = \hat G \sqrt{\sum_q v_q / (S\, a_q^2)}`.

Per query the records hold `X_q` (oblivious, min, max exact; expected and variance
sampled where `X_q` can vary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ties import Prepared
from .base import Aggregate, FamilyNames, Measure, Stats, register
from .kernels import ratio
from .linear import REL
from .sampling import Draws, extremal_draws, sample_moments

__all__ = ["GMAP", "GeometricMean", "GMStats", "MIN_GEO_MEAN", "ap_values"]

#: trec_eval's floor of the values in a geometric mean (trec_eval.h ``MIN_GEO_MEAN``)
MIN_GEO_MEAN = 0.00001


@dataclass
class GMStats(Stats):
    """[`Stats`][tierank.measures.gmap.Stats] of `X_q` plus, for the summary, `E[X_q^{1/n}]` and
    `Var[X_q^{1/n}]` per query for the ``root_n`` queries evaluated together."""

    root_mean: np.ndarray | None = None
    root_var: np.ndarray | None = None
    root_n: int | None = None


def ap_values(d: Draws, nrel: np.ndarray) -> np.ndarray:
    """trec_eval's AP of every ranking of ``d``: the precisions at the relevant ranks summed in
    rank order, divided by N+ (``nrel`` per query).

    >>> d = Draws.build(np.array([0]), np.array([0]), np.array([0, 0]), np.array([1.0, 4.0]))
    >>> float(ap_values(d, np.array([3.0]))[0])
    0.5
    """
    return ratio(
        np.bincount(d.seg, weights=d.count / d.rank, minlength=d.nseg), np.asarray(nrel)[d.query]
    )


class GeometricMean(Measure):
    """Base of trec_eval's geometric-mean summaries (``gm_map``; ``gm_bpref`` in [`tierank.measures.gmbpref`][tierank.measures.gmbpref]).

    A family gives [`base`][tierank.measures.base]: the per-ranking value from relevant-document [`Draws`][tierank.measures.gmap.Draws]
    (monotone in the ranks of the relevant documents).  The base floors it at
    `MIN_GEO_MEAN`, samples where needed and summarises by the geometric mean.
    """

    summary_only = True
    aggregator = "geometric_mean"
    cutoff_allowed = False
    floor = MIN_GEO_MEAN

    def base(self, prep: Prepared, draws: Draws) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def stats(self, prep: Prepared) -> GMStats:
        n = prep.nq
        cut = prep.cut(self.k)
        root = 1.0 / n if n else 1.0

        def values(d):
            x = np.maximum(self.base(prep, d), self.floor)
            return np.vstack([x, x**root])

        obl, lo, hi = (values(d) for d in extremal_draws(prep, self.rel, cut))
        vary = np.flatnonzero(lo[0] < hi[0])
        e, v, se = lo[0].copy(), np.zeros(n), np.zeros(n)
        rmean, rvar = lo[1].copy(), np.zeros(n)
        if not len(vary):
            return GMStats(obl[0], e, lo[0], hi[0], v, root_mean=rmean, root_var=rvar, root_n=n)
        mu, var, exact = sample_moments(prep, vary, values, self.rel, cut)
        e[vary], v[vary] = np.clip(mu[0], lo[0][vary], hi[0][vary]), var[0]
        rmean[vary], rvar[vary] = mu[1], var[1]
        sampled = np.zeros(n, dtype=bool)
        sampled[vary] = ~exact
        if not sampled.any():
            return GMStats(obl[0], e, lo[0], hi[0], v, root_mean=rmean, root_var=rvar, root_n=n)
        se[sampled] = np.sqrt(v[sampled] / prep.samples)
        return GMStats(
            obl[0],
            e,
            lo[0],
            hi[0],
            v,
            method="sampled",
            samples=int(prep.samples),
            seed=int(prep.seed),
            se=se,
            sampled=sampled,
            root_mean=rmean,
            root_var=rvar,
            root_n=n,
        )

    def aggregate(self, stats: Stats) -> Aggregate:
        """The geometric mean over queries (see the module docstring); ``linear=False``.

        The sampled expectation needs `E[X_q^{1/n}]` for the ``n`` queries summarised, which
        `stats` records in [`GMStats`][tierank.measures.gmap.GMStats] for ``prep.nq``; stats of another query set (e.g.
        batches concatenated) give ``expected``, ``std`` and ``se`` NaN, never a wrong number.
        """
        n = len(stats.expected)
        nan = float("nan")
        if n == 0:
            return Aggregate(nan, nan, nan, nan, nan, stats.method, linear=False)

        def gm(x):  # trec_eval: logs summed in query order, then exp(sum / n)
            return float(np.exp(np.cumsum(np.log(x))[-1] / n))

        obl, lo, hi = gm(stats.oblivious), gm(stats.min), gm(stats.max)
        if bool(np.all(stats.min == stats.max)):  # nothing varies: one value, exactly
            return Aggregate(obl, lo, lo, hi, 0.0, "exact", linear=False)
        exact = stats.method == "exact"
        ok = (
            isinstance(stats, GMStats)
            and stats.root_n == n
            and stats.root_mean is not None
            and len(stats.root_mean) == n
        )
        if (
            not ok
            or not isinstance(stats, GMStats)
            or stats.root_mean is None
            or stats.root_var is None
        ):
            # the factors E[X^(1/n)] were estimated for another number of queries (e.g. stats of
            # query batches concatenated): no honest estimate without resampling
            return Aggregate(obl, nan, lo, hi, nan, "sampled", se=nan, linear=False)
        a, v = stats.root_mean, stats.root_var
        expected = float(np.prod(a))
        expected = min(max(expected, lo), hi)
        rel = v / (a * a)
        var = expected * expected * float(np.expm1(np.sum(np.log1p(rel))))
        if exact:
            return Aggregate(
                obl, expected, lo, hi, float(np.sqrt(max(var, 0.0))), "exact", linear=False
            )
        # only the sampled factors carry a standard error
        est = stats.sampled_queries()
        se = expected * float(np.sqrt(np.sum(rel[est]) / stats.samples))
        return Aggregate(
            obl, expected, lo, hi, float(np.sqrt(max(var, 0.0))), stats.method, se=se, linear=False
        )


@register
class GMAP(GeometricMean):
    """Geometric mean of AP over queries, each floored at 1e-5 (trec_eval gm_map)."""

    family = "GMAP"
    pretty = "geometric mean average precision"
    definition = "geometric mean over queries of max(AP, 1e-5)"
    citation = "Robertson, S. (2006). On GMAP: and other transformations. CIKM 2006."
    names = FamilyNames(trec_eval="gm_map", ir_measures=None)
    description = (
        "geometric mean over queries of max(AP, 1e-5) (trec_eval gm_map); "
        "min/max exact, expectation sampled"
    )
    schema = (REL,)
    bounds_refusal = (
        "an unjudged document assumed relevant raises N+ and can lower AP, so neither "
        "assumption bounds it (Yang, Moffat & Turpin, sec. 2)"
    )

    def base(self, prep: Prepared, draws: Draws) -> np.ndarray:
        return ap_values(draws, prep.nrel(self.rel))
