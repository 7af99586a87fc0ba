"""ranx in, tie-aware numbers out, and back into ranx's own comparison report.

ranx (Bassani, ECIR 2022; https://amenra.github.io/ranx) orders a query's documents with an
unstable sort on the score alone, so tied documents come out in an order that depends on how the
run was built: with 1 relevant among 5 tied documents ranx's RR is 1.0 for a ``ranx.Run`` and
0.2 for the same run given as a dict (see ``benchmarks/ties_in_frameworks.py``).  This module

* converts ``ranx.Qrels`` / ``ranx.Run`` for [`tierank.evaluate`][tierank.evaluate] ([`to_qrels`][tierank.integrations.ranx.to_qrels],
  [`to_run`][tierank.integrations.ranx.to_run]; [`evaluate`][tierank.integrations.ranx.evaluate] does both and also takes ranx metric names);
* maps ranx metric names to tierank measures ([`tierank_measure`][tierank.integrations.ranx.tierank_measure]: ``ndcg@10`` -> ``nDCG@10``,
  ``mrr@10`` -> ``RR@10``, ``map@100`` -> ``AP@100``, ``precision@5`` -> ``P@5``,
  ``recall@100`` -> ``R@100``, ``hit_rate@5`` -> ``Success@5``, ``hits@5`` -> ``Hits@5``,
  ``r-precision`` -> ``Rprec``, ``f1@5`` -> ``F1@5``, ``bpref`` -> ``Bpref``, ``rbp.95`` ->
  ``RBP(p=0.95)``; a ``-lN`` suffix is ``rel=N``);
* [`scores`][tierank.integrations.ranx.scores]: per-query expected (or min/max/oblivious) values in ranx's layout
  ``{metric: array over the qrels' queries}``;
* [`compare`][tierank.integrations.ranx.compare]: ranx's ``compare`` with those values: the same ``ranx.Report`` (Fisher's
  randomization test, paired Student's t-test or Tukey's HSD, win/tie/loss, LaTeX), computed on
  tie-aware per-query values, optionally with a Bonferroni, Holm or Benjamini-Hochberg
  correction across all pairs of systems.

Queries follow ranx's ``make_comparable``: every qrels query counts, a query the run lacks scores
0, and run queries without judgments are dropped.

Examples
--------
>>> import ranx
>>> from tierank.integrations.ranx import evaluate
>>> qrels = ranx.Qrels({"q1": {"d3": 1}})
>>> run = ranx.Run({"q1": {f"d{i}": 1.0 for i in range(1, 6)}})
>>> round(float(ranx.evaluate(qrels, run, "mrr")), 4)     # ranx's own tie order
0.3333
>>> res = evaluate(qrels, run, ["mrr"])
>>> res.aggregate()[["measure", "expected", "min", "max"]].round(4).values.tolist()
[['RR', 0.4567, 0.2, 1.0]]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..errors import NothingToEvaluate, TierankInputError
from ..evaluate import evaluate as _evaluate
from ..io.convert import to_qrels as _to_qrels
from ..io.convert import to_run as _to_run
from ..io.model import Qrels, Run
from ..measures.base import Measure, parse_measure
from ..measures.names import family_names
from . import require

require("ranx")

#: ranx metric name -> tierank family, from the families' declared ranx names (``Measure.names.ranx``),
#: in the order this module lists them; ``rbp`` is written with its persistence (``rbp.95``), read apart
FAMILIES = {
    name: fam
    for name, fam in family_names(
        "ranx",
        (
            "ndcg",
            "mrr",
            "map",
            "precision",
            "recall",
            "hit_rate",
            "hits",
            "r-precision",
            "f1",
            "bpref",
        ),
    ).items()
    if name != "rbp"
}
#: statistics over tie orderings `scores` and `compare` can report
STATS = ("expected", "min", "max", "oblivious")
_NAME = re.compile(
    r"^(?P<name>[a-z][a-z0-9_\-]*?)(?:\.(?P<p>\d+))?(?:@(?P<k>\d+))?(?:-l(?P<rel>\d+))?$"
)


def tierank_measure(metric: str) -> Measure:
    """The tierank measure of a ranx metric name (tierank's own names are accepted too).

    Examples
    --------
    >>> [str(tierank_measure(m)) for m in ("ndcg@10", "mrr", "map@100-l2", "hit_rate@5", "nDCG@5")]
    ['nDCG@10', 'RR', 'AP(rel=2)@100', 'Success@5', 'nDCG@5']
    """
    if not isinstance(metric, str):
        raise TierankInputError(f"a metric name must be a string, got {metric!r}")
    m = _NAME.match(metric)
    if m and (m["name"] in FAMILIES or m["name"] == "rbp"):
        if m["name"] == "rbp":
            if m["p"] is None:
                raise TierankInputError(
                    f"ranx metric {metric!r}: rbp needs its persistence, e.g. rbp.95"
                )
            text = f"RBP(p=0.{m['p']}" + (f",rel={m['rel']})" if m["rel"] else ")")
        else:
            text = FAMILIES[m["name"]] + (f"(rel={m['rel']})" if m["rel"] else "")
            text += f"@{m['k']}" if m["k"] else ""
        return parse_measure(text)
    try:
        return parse_measure(metric)
    except TierankInputError:
        raise TierankInputError(
            f"unknown metric {metric!r}: give a ranx name ({', '.join(FAMILIES)}, rbp.P, "
            f"with @k and -lN) or a tierank measure"
        ) from None


def _is_ranx(obj, cls: str) -> bool:
    return type(obj).__module__.startswith("ranx") and type(obj).__name__ == cls


def to_run(run) -> Run:
    """A ``ranx.Run`` (or anything [`tierank.to_run`][tierank.to_run] takes) as a tierank [`Run`][tierank.io.model.Run]."""
    if _is_ranx(run, "Run"):
        return _to_run(run.to_dict(), source=run.name or "ranx.Run")
    return _to_run(run)


def to_qrels(qrels) -> Qrels:
    """A ``ranx.Qrels`` (or anything [`tierank.to_qrels`][tierank.to_qrels] takes) as a tierank [`Qrels`][tierank.io.model.Qrels]."""
    if _is_ranx(qrels, "Qrels"):
        return _to_qrels(qrels.to_dict(), source=qrels.name or "ranx.Qrels")
    return _to_qrels(qrels)


def evaluate(qrels, run, metrics, **options):
    """[`tierank.evaluate`][tierank.evaluate] on ranx objects and ranx metric names.

    ``metrics`` is a name or a list of them (ranx's or tierank's); ``options`` go to
    [`tierank.evaluate`][tierank.evaluate].  Returns the [`tierank.EvalResult`][tierank.EvalResult].
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    return _evaluate(to_qrels(qrels), to_run(run), [tierank_measure(m) for m in metrics], **options)


def scores(qrels, run, metrics, stat: str = "expected", **options) -> dict[str, np.ndarray]:
    """Per-query values in ranx's layout: ``{metric: array}`` over the qrels' queries, in ranx's
    order (``qrels.keys()``), 0 where the run lacks the query (ranx's ``make_comparable``).

    ``stat`` is ``"expected"`` (default), ``"min"``, ``"max"`` or ``"oblivious"``.

    Examples
    --------
    >>> import ranx
    >>> s = scores(ranx.Qrels({"q1": {"b": 1}, "q2": {"x": 1}}), ranx.Run({"q1": {"a": 1.0, "b": 1.0}}),
    ...            ["mrr", "precision@1"])
    >>> {m: v.tolist() for m, v in s.items()}
    {'mrr': [0.75, 0.0], 'precision@1': [0.5, 0.0]}
    """
    if stat not in STATS:
        raise TierankInputError(f"unknown statistic {stat!r}; accepted: {', '.join(STATS)}")
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    q = to_qrels(qrels)
    order = (
        list(qrels.keys()) if _is_ranx(qrels, "Qrels") else list(dict.fromkeys(q.qid.to_pylist()))
    )
    order = [str(x) for x in order]
    measures = [tierank_measure(m) for m in metrics]
    r = to_run(run)
    out = {m: np.zeros(len(order)) for m in metrics}
    try:
        res = _evaluate(q, r, measures, **options)
    except NothingToEvaluate:  # no judged query in the run: all zeros, as ranx
        return out
    pos = {qid: i for i, qid in enumerate(res.qids)}
    idx = np.array([pos.get(qid, -1) for qid in order], dtype=np.int64)
    for name, meas in zip(metrics, measures):
        vals = np.asarray(getattr(res.stats[meas], stat), dtype=np.float64)
        out[name] = np.where(idx >= 0, vals[np.maximum(idx, 0)], 0.0)
    return out


def compare(
    qrels,
    runs: Sequence,
    metrics,
    *,
    stat: str = "expected",
    stat_test: str = "student",
    n_permutations: int = 1000,
    max_p: float = 0.01,
    random_seed: int = 42,
    rounding_digits: int = 3,
    show_percentages: bool = False,
    correction: str | None = None,
    **options,
):
    """ranx's ``compare`` on tie-aware per-query values; returns a ``ranx.Report``.

    Same arguments as ``ranx.compare`` (``runs`` are ``ranx.Run`` objects, named by ``run.name``,
    or anything [`tierank.to_run`][tierank.to_run] takes, named ``run_1``, ...), plus ``stat`` (which value
    per query: ``"expected"`` by default) and ``correction``: ``None`` (ranx's behaviour),
    ``"bonferroni"``, ``"holm"`` or ``"bh"`` (Benjamini-Hochberg), applied per metric across all
    pairs of systems, so ``significant`` means the adjusted p-value is below ``max_p`` (the
    report's ``p_value`` entries are the adjusted ones).  Every ``p_value`` is at least ``2 / 2^m``
    (``m`` queries where the pair differs: the least p exact sign-flip randomization can reach), as
    in [`tierank.analysis.compare.compare`][tierank.analysis.compare.compare].  ``options`` go to [`tierank.evaluate`][tierank.evaluate].
    """
    from ranx.data_structures import Report
    from ranx.statistical_tests import compute_statistical_significance

    from ..analysis.compare import adjust_pvalues
    from ..analysis.paired.base import sign_flip_floor

    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if len(runs) < 2:
        raise TierankInputError(f"compare: need at least two runs, got {len(runs)}")
    names, per_query, results = [], {}, {}
    for i, run in enumerate(runs):
        name = run.name if _is_ranx(run, "Run") and run.name is not None else f"run_{i + 1}"
        if name in per_query:
            raise TierankInputError(f"compare: two runs are named {name!r}")
        names.append(name)
        per_query[name] = scores(qrels, run, metrics, stat=stat, **options)
        results[name] = {m: float(np.mean(v)) for m, v in per_query[name].items()}
    comparisons = compute_statistical_significance(
        model_names=names,
        metric_scores=per_query,
        stat_test=stat_test,
        n_permutations=n_permutations,
        max_p=max_p,
        random_seed=random_seed,
    )
    pairs = [frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1 :]]
    for p in pairs:  # no p below the least p of exact sign flips on the pair's nonzero differences
        a, b = sorted(p, key=names.index)
        for m in metrics:
            m_nonzero = int(np.count_nonzero(per_query[a][m] != per_query[b][m]))
            v = max(float(comparisons[p][m]["p_value"]), float(sign_flip_floor(m_nonzero)))
            comparisons[p][m] = {"p_value": v, "significant": bool(v < max_p)}
    if correction is not None:
        for m in metrics:
            adj = adjust_pvalues([comparisons[p][m]["p_value"] for p in pairs], correction)
            for p, v in zip(pairs, adj):
                comparisons[p][m] = {"p_value": float(v), "significant": bool(v < max_p)}
    wtl = {}
    for a in names:
        for b in names:
            if a != b:
                wtl[(a, b)] = {
                    m: {
                        "W": int(np.sum(per_query[a][m] > per_query[b][m])),
                        "T": int(np.sum(per_query[a][m] == per_query[b][m])),
                        "L": int(np.sum(per_query[a][m] < per_query[b][m])),
                    }
                    for m in metrics
                }
    return Report(
        model_names=names,
        results=results,
        comparisons=comparisons,
        metrics=metrics,
        max_p=max_p,
        win_tie_loss=wtl,
        rounding_digits=rounding_digits,
        show_percentages=show_percentages,
        stat_test=stat_test,
    )
