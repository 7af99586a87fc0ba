"""Table 1 of the protocol: one row per (measure, variant), built from evaluations, ties and timings.

Columns (:data:`TABLE_FIELDS`): M at FP32 (the ``fp32`` variant's oblivious
value), then per variant M_obl, E[M], range, bias, min, max, std (the public
aggregate records of :class:`tierank.results.EvalResult`), the tie
statistics of its scores, the forward-pass time, the scoring-step time and
HPS's overhead: ``(scoring_s(X->fp32) - scoring_s(X)) / model_s``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TABLE_FIELDS", "tie_stats", "table_rows"]

TABLE_FIELDS = (
    "query", "variant", "measure", "fp32", "oblivious", "expected", "range", "bias", "min", "max", "std",
    "tied_share", "tie_groups", "mean_group", "max_group", "model_s", "scoring_ms", "hps_overhead", "queries",
)


def tie_stats(run) -> dict:
    """Candidates, tied candidates and their share, number, mean and largest size of tie groups (size >= 2).

    Read from :func:`tierank.ties.layout` (the one tie grouping of tierank); ``run`` is a run or its layout.

    >>> from tierank import to_run
    >>> tie_stats(to_run({"q": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.2, "e": 0.2, "f": 0.2}, "r": {"x": 0.2}}))
    {'candidates': 7, 'tied': 5, 'tied_share': 0.7142857142857143, 'tie_groups': 2, 'mean_group': 2.5, 'max_group': 3}
    """
    from tierank.ties import RunLayout, layout

    return (run if isinstance(run, RunLayout) else layout(run)).summary.table1_fields()


def _aggregates(result) -> dict[str, dict]:
    """measure name -> the aggregate record (public API: ``EvalResult.records(per_query=False)``)."""
    return {r["measure"]: r for r in result.records(per_query=False)}


def table_rows(variants: Sequence[Any], measures: Sequence[Any], evals: Mapping[str, Any], ties: Mapping[str, dict],
               timing: Mapping[str, dict], n_queries: int) -> list[dict]:
    """Table 1's rows, measure by measure, variant by variant (see the module docstring)."""
    aggs = {name: _aggregates(res) for name, res in evals.items()}
    ref = next((v.name for v in variants if v.name == "fp32"), None)
    rows = []
    for m in measures:
        fp32_val = aggs[ref][str(m)]["oblivious"] if ref is not None else None
        for v in variants:
            a = aggs[v.name][str(m)]
            t = timing[v.name]
            twin = v.low_twin
            overhead = None
            if twin in timing and t["model_s"] > 0:
                overhead = (t["scoring_s"] - timing[twin]["scoring_s"]) / t["model_s"]
            st = ties[v.name]
            rows.append({
                "query": "all", "variant": v.name, "measure": str(m), "fp32": fp32_val,
                "oblivious": a["oblivious"], "expected": a["expected"], "range": a["range"], "bias": a["bias"],
                "min": a["min"], "max": a["max"], "std": a["std"],
                "tied_share": st["tied_share"], "tie_groups": st["tie_groups"],
                "mean_group": st["mean_group"], "max_group": st["max_group"],
                "model_s": t["model_s"], "scoring_ms": 1000 * t["scoring_s"], "hps_overhead": overhead,
                "queries": n_queries,
            })
    return rows
