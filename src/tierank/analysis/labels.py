r"""Evaluation over label uncertainty, jointly with ties.

The grades are random: each pair's grade is drawn from its label distribution, pairs independently
([`tierank.io.distributions`][tierank.io.distributions]), or one judge is drawn from a panel, every
judge equally likely.  The orderings inside tie groups are random too, independently of the grades.
For every measure ``M`` and query, [`evaluate_labels`][tierank.analysis.labels.evaluate_labels] gives

* ``expected``: ``E[M]`` over grades and orderings;
* ``var_tie = E_g[Var_pi(M | g)]`` and ``var_label = Var_g(E_pi[M | g])``, whose sum is ``Var[M]``
  (the law of total variance); ``std = sqrt(var_tie + var_label)``;
* ``plugin``: the measure (expected over ties) on the expected grades ``E[g]`` as float grades (the
  "float gains" nDCG of MTEB), beside ``expected`` = ``E[nDCG]``: they differ wherever the measure
  is not linear in the grades.

**Exact** (``method="exact"``) for a measure that is a weighted sum of independent document values
with a fixed normaliser, ``M = sum_d w_d a_d / Z`` (P, Hits, RBP, Judged: the positional sums of
`tierank.measures.linear` whose divisor does not depend on the grades).
The weight ``w_d`` of document ``d`` in a tie group ``G`` of ``m`` documents is the weight of a
uniformly random position of ``G``: mean ``wbar_G``, variance ``v_G`` (over the group's positions),
covariance ``-v_G / (m - 1)`` between two documents of ``G``, and independent of the grades.  With
``mu_d = E[a_d]`` and ``s2_d = Var[a_d]`` (documents independent):

* ``E[M] = sum_d wbar_G mu_d / Z``;
* ``var_label = Var_g(sum_d wbar_G a_d) / Z^2 = sum_d wbar_G^2 s2_d / Z^2`` (no covariance terms:
  the documents are independent);
* ``var_tie = E_g[a' C a] / Z^2 = (mu' C mu + sum_d C_dd s2_d) / Z^2`` with ``C = Cov_pi(w)``:
  ``E[a_d a_e] = mu_d mu_e`` for ``d != e`` leaves only the diagonal's extra ``C_dd s2_d = v_G s2_d``,
  and ``mu' C mu = sum_G m v_G / (m - 1) * sum_{d in G} (mu_d - mubar_G)^2`` (Hoeffding's variance of
  a linear permutation statistic).

**Sampled** (``method="sampled"``) otherwise: ``samples`` grade assignments are drawn (seeded), each
evaluated exactly over ties by tierank's engine, all draws in one evaluation (query ``q`` of draw
``s`` renamed ``q#s``); ``expected`` is the mean over draws with its standard error ``se``,
``var_tie`` the mean of the tie variances, ``var_label`` the variance (divisor ``samples - 1``) of the
tie-expected values.  A panel of judges is enumerated (``method="exact"``, ``samples`` = the judges):
divisor the number of judges, ``se`` 0.

The aggregate is the arithmetic mean over the evaluated queries.  With distributions, draws are
independent across queries: the aggregate's ``var_tie`` and exact ``var_label`` are the per-query
sums over ``nq^2``; a sampled or panel ``var_label`` is the variance of the per-draw means (one judge
grades every query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import TierankInputError
from ..evaluate import evaluate
from ..io.convert import to_run
from ..io.distributions import LabelDistributions, read_distributions
from ..io.model import Qrels, Run
from ..measures.base import Measure
from ..measures.linear import Linear
from ..measures.names import plan as measure_plan
from ..ties.prepare import Prepared, prepare

#: the per-query and aggregate statistics, in record order
FIELDS = ("expected", "var_tie", "var_label", "std", "plugin", "se")
#: rows of the renamed run evaluated at once by the sampled path
CHUNK_ROWS = 4_000_000


@dataclass(frozen=True)
class LabelStats:
    """One measure's statistics over grades and tie orderings: per query (arrays in ``qids`` order)
    and ``aggregate`` (a dict of `FIELDS`), with the method (``"exact"`` or ``"sampled"``),
    ``samples`` (draws, or the panel's judges; None where exact over distributions) and ``seed``."""

    measure: Measure
    expected: np.ndarray
    var_tie: np.ndarray
    var_label: np.ndarray
    plugin: np.ndarray
    se: np.ndarray
    aggregate: dict[str, float]
    method: str
    samples: int | None = None
    seed: int | None = None

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var_tie + self.var_label)


@dataclass(frozen=True)
class LabelResult:
    """[`evaluate_labels`][tierank.analysis.labels.evaluate_labels]'s result: the evaluated queries
    and one [`LabelStats`][tierank.analysis.labels.LabelStats] a measure."""

    qids: list[str]
    stats: dict[Measure, LabelStats]
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, measure: str | Measure) -> LabelStats:
        for m, s in self.stats.items():
            if str(m) == str(measure):
                return s
        raise KeyError(str(measure))

    def records(self, per_query: bool = True) -> list[dict[str, Any]]:
        """One dict per (query, measure) (with ``per_query``) and per measure for the aggregate
        (query ``"all"``): query, measure, the `FIELDS`, method, samples, seed."""
        out: list[dict[str, Any]] = []
        for m, s in self.stats.items():
            label = {"method": s.method, "samples": s.samples, "seed": s.seed}
            if per_query:
                for i, q in enumerate(self.qids):
                    row = {
                        "expected": s.expected[i],
                        "var_tie": s.var_tie[i],
                        "var_label": s.var_label[i],
                        "std": s.std[i],
                        "plugin": s.plugin[i],
                        "se": s.se[i],
                    }
                    out.append(
                        {"query": q, "measure": str(m), **{k: float(v) for k, v in row.items()}}
                        | label
                    )
            out.append({"query": "all", "measure": str(m), **s.aggregate} | label)
        return out


# ----------------------------------------------------------------------------- exact families


def exact_family(m: Measure) -> bool:
    """Whether ``m`` is a weighted sum of document values over positions with a divisor that does not
    depend on the grades (the exact path; see the module's documentation)."""
    if not isinstance(m, Linear):
        return False
    cls = type(m)
    hooks = ("stats", "view", "denominator", "cutoff_per_query", "weights", "rows")
    if any(getattr(cls, h) is not getattr(Linear, h) for h in hooks):
        return False
    if cls.values is not Linear.values and not _values_default(m):
        return False
    if m.kind not in ("rel", "gain", "judged"):
        return False
    retrieved = np.array([10.0, 10.0, 3.0])
    a = m.normalizer(np, np.array([0.0, 1.0, 5.0]), retrieved)
    b = m.normalizer(np, np.array([2.0, 3.0, 9.0]), retrieved)
    if a is None or b is None:
        return a is None and b is None
    return bool(np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))


def _values_default(m: Linear) -> bool:
    """A family with its own ``values`` that keeps the default document values for these parameters
    (RBP without trec_eval's gains)."""
    empty = Prepared(
        [], np.zeros(1, np.int64), *(np.zeros(0, np.int64),) * 4, np.zeros(0),
        (np.zeros(0), np.zeros(0)), 1, np.zeros(0, np.int64),
    )  # fmt: skip
    return m.values(empty) is None


def _value_of_grades(m: Linear, k: int, rel: int) -> np.ndarray:
    """The document value of each grade ``0..k`` as ``m`` reads it."""
    g = np.arange(k + 1, dtype=np.float64)
    if m.kind == "rel":
        return (g >= (rel if m.rel is None else m.rel)).astype(np.float64)
    if m.kind == "gain":
        return g
    return np.ones_like(g)


def _exact(m: Linear, prep: Prepared, dist: LabelDistributions, rel: int):
    """Per query ``(expected, var_tie, var_label)`` of ``m`` (see the module's documentation);
    ``prep``'s grades are the rows' pair indices (NaN: unjudged, value 0)."""
    nq = prep.nq
    a = _value_of_grades(m, dist.probs.shape[1] - 1, rel)
    mu_pair, m2_pair = dist.probs @ a, dist.probs @ (a * a)
    rows = m.rows(prep)
    gid, size = prep.gid, prep.gsize_float
    ng = len(size)
    # only the tie groups holding a weighted rank add anything: every sum runs over their rows
    active = np.zeros(ng, bool)
    active[gid[rows]] = True
    keep = np.flatnonzero(active[gid])
    w = np.zeros(prep.n)
    w[rows] = m.weights(prep, rows)
    w, gid, qi = w[keep], gid[keep], prep.qi[keep]
    grade = prep.grade[keep]
    judged = ~np.isnan(grade)
    idx = np.where(judged, np.nan_to_num(grade), 0).astype(np.int64)
    mu = np.where(judged, mu_pair[idx], 0.0)
    s2 = np.where(judged, np.maximum(m2_pair[idx] - mu_pair[idx] ** 2, 0.0), 0.0)
    wbar = np.bincount(gid, weights=w, minlength=ng) / size
    vw = np.bincount(gid, weights=(w - wbar[gid]) ** 2, minlength=ng) / size
    mubar = np.bincount(gid, weights=mu, minlength=ng) / size
    ss_mu = np.bincount(gid, weights=(mu - mubar[gid]) ** 2, minlength=ng)
    with np.errstate(divide="ignore", invalid="ignore"):
        hoeff = np.where(size > 1, size * vw / (size - 1.0) * ss_mu, 0.0)
    expected = np.bincount(qi, weights=wbar[gid] * mu, minlength=nq)
    var_label = np.bincount(qi, weights=wbar[gid] ** 2 * s2, minlength=nq)
    var_tie = np.bincount(prep.gq, weights=hoeff, minlength=nq) + np.bincount(
        qi, weights=vw[gid] * s2, minlength=nq
    )
    den = m.denominator(prep)
    if den is not None:
        z = np.broadcast_to(np.asarray(den, dtype=np.float64), (nq,))
        ok = z > 0
        safe = np.where(ok, z, 1.0)
        expected = np.where(ok, expected / safe, 0.0)
        var_label = np.where(ok, var_label / safe**2, 0.0)
        var_tie = np.where(ok, var_tie / safe**2, 0.0)
    return expected, var_tie, var_label


# ----------------------------------------------------------------------------- sampled / panel


def _renamed(run: Run, draws: Sequence[int]) -> Run:
    """``run`` once per draw, query ``q`` of draw ``s`` renamed ``q#s``."""
    qid = run.qid.cast(pa.string()) if pa.types.is_dictionary(run.qid.type) else run.qid
    qids = [pc.binary_join_element_wise(qid, pa.scalar(f"#{s}"), "") for s in draws]
    return Run(
        pa.concat_arrays(qids),
        pa.concat_arrays([run.docid] * len(draws)),
        np.tile(run.score, len(draws)),
        None,
        run.source,
    )


def _per_draw(
    qrels: list[Qrels], run: Run, measures: list[Measure], qids: list[str], settings: Any
) -> dict[Measure, tuple[np.ndarray, np.ndarray, str]]:
    """Per measure ``(expected, var)`` over ties as ``(draws, queries)`` arrays and the engine's tie
    method, every draw of ``qrels`` evaluated in one engine call (chunked by `CHUNK_ROWS`)."""
    s_all = len(qrels)
    per = max(1, CHUNK_ROWS // max(1, len(run.score)))
    exp = {m: np.zeros((s_all, len(qids))) for m in measures}
    var = {m: np.zeros((s_all, len(qids))) for m in measures}
    how = {m: "exact" for m in measures}
    at = {q: i for i, q in enumerate(qids)}
    for lo in range(0, s_all, per):
        draws = list(range(lo, min(s_all, lo + per)))
        big = Qrels(
            pa.concat_arrays(
                [pc.binary_join_element_wise(qrels[s].qid, pa.scalar(f"#{s}"), "") for s in draws]
            ),
            pa.concat_arrays([qrels[s].docid for s in draws]),
            np.concatenate([qrels[s].grade for s in draws]),
            "draws",
        )
        res = evaluate(big, _renamed(run, draws), measures, settings)
        base, _, draw = np.char.rpartition(np.asarray(res.qids, dtype=str), "#").T
        try:
            col = np.array([at[q] for q in base.tolist()], dtype=np.int64)
        except KeyError:  # pragma: no cover - every draw holds every pair
            raise TierankInputError("a label draw evaluated another set of queries") from None
        row = draw.astype(np.int64)
        for m in measures:
            st = res.stats[m]
            exp[m][row, col] = st.expected
            var[m][row, col] = st.var
            if st.method != "exact":
                how[m] = st.method
    return {m: (exp[m], var[m], how[m]) for m in measures}


def _spread(x: np.ndarray, ddof: int) -> np.ndarray:
    """The variance over the first axis (divisor ``n - ddof``), exactly 0 where every value is the
    same (no rounding residue of the mean)."""
    v = x.var(0, ddof=ddof)
    return np.where(np.ptp(x, axis=0) == 0, 0.0, v)


def _draw(dist: LabelDistributions, samples: int, seed: int) -> np.ndarray:
    """``(samples, pairs)`` grades, each pair's drawn from its distribution (inverse CDF)."""
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(dist.probs, axis=1)[:, :-1]
    out = np.empty((samples, len(dist)), dtype=np.float64)
    step = max(1, 2_000_000 // max(1, len(dist) * max(1, cdf.shape[1])))
    for lo in range(0, samples, step):
        u = rng.random((min(step, samples - lo), len(dist)))
        out[lo : lo + len(u)] = (u[:, :, None] >= cdf[None]).sum(-1)
    return out


def _panel_mean(judges: Mapping[str, Qrels]) -> Qrels:
    """Per pair the mean grade over the judges that graded it."""
    qid = pa.concat_arrays([q.qid.cast(pa.string()) for q in judges.values()])
    doc = pa.concat_arrays([q.docid.cast(pa.string()) for q in judges.values()])
    g = np.concatenate([q.grade for q in judges.values()])
    key = np.char.add(
        np.char.add(np.asarray(qid.to_pylist(), dtype=str), "\x1f"),
        np.asarray(doc.to_pylist(), dtype=str),
    )
    keys, inv = np.unique(key, return_inverse=True)
    mean = np.bincount(inv, weights=g) / np.bincount(inv)
    split = np.char.partition(keys, "\x1f")
    return Qrels(
        pa.array(split[:, 0].tolist(), pa.string()),
        pa.array(split[:, 2].tolist(), pa.string()),
        mean,
        "panel mean",
    )


# ----------------------------------------------------------------------------- the entry point


def evaluate_labels(
    labels: Any,
    run: Any,
    measures: Any,
    *,
    samples: int = 1000,
    seed: int = 0,
    settings: Any = None,
) -> LabelResult:
    """Every measure of ``run`` over random grades and random tie orderings (see the module's
    documentation).

    Parameters
    ----------
    labels
        Label distributions (anything [`read_distributions`][tierank.io.distributions.read_distributions]
        reads), or a panel: a dict ``{judge: qrels}`` (each a `Qrels` or anything
        [`tierank.io.convert.to_qrels`][tierank.io.convert.to_qrels] takes), judges equally likely.
    run, measures, settings
        As [`tierank.evaluate`][tierank.evaluate.evaluate] takes them (``settings``: an
        `EvalSettings`; its tie-break, ``rel`` and query-set conventions apply to every draw).
    samples, seed
        Grade assignments drawn for the measures without an exact method, and their seed.

    Examples
    --------
    >>> res = evaluate_labels({"q": {"a": [0.5, 0.5], "b": [0.0, 1.0]}},
    ...                       {"q": {"a": 1.0, "b": 1.0}}, ["P@1", "nDCG@1"], samples=2000)
    >>> p = res["P@1"]
    >>> p.method, float(p.expected[0]), float(p.var_tie[0]), float(p.var_label[0])
    ('exact', 0.75, 0.125, 0.0625)
    >>> n = res["nDCG@1"]
    >>> n.method, float(n.plugin[0]), round(float(n.expected[0]), 2)
    ('sampled', 0.75, 0.75)
    """
    from ..io.convert import to_qrels
    from ..settings import EvalSettings

    settings = EvalSettings() if settings is None else settings
    if settings.unjudged != "nonrelevant" or settings.judged_only:
        raise TierankInputError(
            "evaluation over label uncertainty reads unjudged documents as nonrelevant (no "
            "--unjudged bounds|condensed, no -J)"
        )
    if samples < 2:
        raise TierankInputError(f"samples {samples}: at least 2 label draws are needed")
    from ..measures.names import Plan

    if isinstance(measures, Plan):
        ms: list[Measure] = measures.measures
    else:
        ms = measure_plan(
            [measures] if isinstance(measures, (str, Measure)) else list(measures)
        ).measures
    if not ms:
        raise TierankInputError("no measure given")
    odd = [str(m) for m in ms if m.aggregator != "mean"]
    if odd:
        raise TierankInputError(
            f"{', '.join(odd)}: aggregated otherwise than by the mean; evaluation over labels "
            "aggregates by the mean of the queries"
        )
    run = to_run(run)
    if isinstance(labels, Mapping) and not _looks_like_distributions(labels):
        judges = {str(k): to_qrels(v) for k, v in labels.items()}
        return _panel(judges, run, ms, settings)
    dist = read_distributions(labels)
    return _distributions(dist, run, ms, samples, seed, settings)


def _looks_like_distributions(labels: Mapping) -> bool:
    for v in labels.values():
        if isinstance(v, Mapping):
            first = next(iter(v.values()), None)
            return isinstance(first, (list, tuple, np.ndarray))
        return False
    return False


def _aggregate(
    expected, var_tie, var_label, plugin, se_draws: np.ndarray | None, label_sum: bool
) -> dict[str, float]:
    nq = expected.shape[-1]
    out = {
        "expected": float(expected.mean()),
        "var_tie": float(var_tie.sum() / nq**2),
        "plugin": float(plugin.mean()),
    }
    if se_draws is None:
        out["var_label"] = float(var_label.sum() / nq**2) if label_sum else 0.0
        out["se"] = 0.0
    else:
        out["var_label"], out["se"] = float(se_draws[0]), float(se_draws[1])
    out["std"] = float(np.sqrt(out["var_tie"] + out["var_label"]))
    return {k: out[k] for k in FIELDS}


def _plugin(qrels: Qrels, run: Run, ms: list[Measure], qids: list[str], settings: Any) -> dict:
    res = evaluate(qrels, run, ms, settings)
    if res.qids != qids:  # pragma: no cover - the same pairs give the same queries
        raise TierankInputError("the expected grades evaluate another set of queries")
    return {m: res.stats[m].expected for m in ms}


def _distributions(
    dist: LabelDistributions, run: Run, ms: list[Measure], samples: int, seed: int, settings: Any
) -> LabelResult:
    mean_q = dist.qrels(dist.expected_grade())
    plugin_res = evaluate(mean_q, run, ms, settings)
    qids, nq = plugin_res.qids, len(plugin_res.qids)
    plugin = {m: plugin_res.stats[m].expected for m in ms}
    out: dict[Measure, LabelStats] = {}
    exact = [m for m in ms if exact_family(m)]
    if exact:
        prep = prepare(
            run, dist.qrels(np.arange(len(dist), dtype=np.float64)), settings, measures=tuple(exact)
        )
        if prep.qids != qids:  # pragma: no cover - the same pairs and run give the same queries
            raise TierankInputError("the exact path evaluated another set of queries")
        for m in exact:
            assert isinstance(m, Linear)
            e, vt, vl = _exact(m, prep, dist, settings.rel)
            agg = _aggregate(e, vt, vl, plugin[m], None, True)
            out[m] = LabelStats(m, e, vt, vl, plugin[m], np.zeros(nq), agg, "exact")
    rest = [m for m in ms if m not in out]
    if rest:
        grades = _draw(dist, samples, seed)
        draws = [dist.qrels(g, f"draw {s}") for s, g in enumerate(grades)]
        per = _per_draw(draws, run, rest, qids, settings)
        for m in rest:
            e_sq, v_sq, how = per[m]
            e = e_sq.mean(0)
            vl = _spread(e_sq, 1)
            vt = v_sq.mean(0)
            means = e_sq.mean(1)
            agg = _aggregate(
                e,
                vt,
                vl,
                plugin[m],
                np.array([_spread(means, 1), np.sqrt(_spread(means, 1) / samples)]),
                False,
            )
            agg["var_tie"] = float(v_sq.sum(1).mean() / nq**2)
            agg["std"] = float(np.sqrt(agg["var_tie"] + agg["var_label"]))
            method = "sampled" if how == "exact" else f"sampled (ties: {how})"
            out[m] = LabelStats(
                m, e, vt, vl, plugin[m], np.sqrt(vl / samples), agg, method, samples, seed
            )
    return LabelResult(qids, {m: out[m] for m in ms})


def _panel(judges: dict[str, Qrels], run: Run, ms: list[Measure], settings: Any) -> LabelResult:
    if len(judges) < 2:
        raise TierankInputError("a panel needs at least 2 judges")
    mean_q = _panel_mean(judges)
    plugin_res = evaluate(mean_q, run, ms, settings)
    qids = plugin_res.qids
    sets = {name: evaluate(q, run, ms, settings) for name, q in judges.items()}
    for name, r in sets.items():
        if r.qids != qids:
            raise TierankInputError(
                f"judge {name!r} grades another set of the run's queries than the panel: every "
                "judge must grade every evaluated query"
            )
    out: dict[Measure, LabelStats] = {}
    j = len(judges)
    for m in ms:
        e_sq = np.stack([r.stats[m].expected for r in sets.values()])
        v_sq = np.stack([r.stats[m].var for r in sets.values()])
        e, vl, vt = e_sq.mean(0), _spread(e_sq, 0), v_sq.mean(0)
        pl = plugin_res.stats[m].expected
        agg = _aggregate(e, vt, vl, pl, np.array([_spread(e_sq.mean(1), 0), 0.0]), False)
        agg["var_tie"] = float(v_sq.sum(1).mean() / len(qids) ** 2)
        agg["std"] = float(np.sqrt(agg["var_tie"] + agg["var_label"]))
        out[m] = LabelStats(m, e, vt, vl, pl, np.zeros(len(qids)), agg, "exact", j, None)
    return LabelResult(qids, out)


__all__ = ["FIELDS", "LabelResult", "LabelStats", "evaluate_labels", "exact_family"]
