"""Table 1 of the protocol: one row per (measure, variant), built from evaluations, ties and timings.

Columns (`TABLE_FIELDS`): M at FP32 (the ``fp32`` variant's oblivious
value), then per variant M_obl, E[M], range, bias, min, max, std (the public
aggregate records of [`tierank.results.EvalResult`][tierank.results.EvalResult]), the tie
statistics of its scores, the forward-pass time, the scoring-step time and
HPS's overhead: ``(scoring_s(X->fp32) - scoring_s(X)) / model_s``, the number of queries, and how
far the variant's ranking is from FP32's ([`fp32_similarity`][tierank.hps.table.fp32_similarity]): ``rbo_fp32``, the mean over queries
of the expected rank-biased overlap (RBO_ext, persistence `RBO_P`) with the ``fp32`` variant's
ranking over the orderings of both runs' tie groups, and ``rbo_fp32_min``, ``rbo_fp32_max``, the means
of its minimum and maximum over those orderings ([`tierank.analysis.similarity`][tierank.analysis.similarity], exact; None
without an ``fp32`` variant).  The ``fp32`` row compares FP32 with itself: 1 without ties, less when
its own ties leave the order open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tierank.report.table1 import FIELDS, STATS, TIES

__all__ = ["TABLE_FIELDS", "RBO_P", "tie_stats", "table_rows", "fp32_similarity"]

#: Table 1's similarity columns and the `tierank.analysis.similarity.similarity` means they hold
SIMILARITY_COLUMNS = {
    "rbo_fp32": "rbo_expected",
    "rbo_fp32_min": "rbo_lo",
    "rbo_fp32_max": "rbo_hi",
}
#: Table 1's columns: ``query``, a row's columns (`tierank.report.table1.FIELDS`), the similarity columns
TABLE_FIELDS = ("query", *FIELDS, *SIMILARITY_COLUMNS)

#: RBO's persistence in Table 1's similarity to FP32 (`fp32_similarity`)
RBO_P = 0.9


def tie_stats(run) -> dict:
    """Candidates, tied candidates and their share, number, mean and largest size of tie groups (size >= 2).

    Read from `tierank.ties.layout` (the one tie grouping of tierank); ``run`` is a run or its layout.

    >>> from tierank import to_run
    >>> tie_stats(to_run({"q": {"a": 1.0, "b": 1.0, "c": 0.5, "d": 0.2, "e": 0.2, "f": 0.2}, "r": {"x": 0.2}}))
    {'candidates': 7, 'tied': 5, 'tied_share': 0.7142857142857143, 'tie_groups': 2, 'mean_group': 2.5, 'max_group': 3}
    """
    from tierank.ties import RunLayout, layout

    return (run if isinstance(run, RunLayout) else layout(run)).summary.table1_fields()


def fp32_similarity(
    runs: Mapping[str, Any], reference: str = "fp32", p: float = RBO_P
) -> dict[str, dict]:
    """variant -> its similarity columns (`SIMILARITY_COLUMNS`) against the ``reference`` variant's
    run: the means over the queries of the expected, minimum and maximum RBO_ext over the tie orderings
    of both runs (persistence ``p``).  ``runs`` maps variant names to runs (anything
    [`tierank.to_run`][tierank.to_run] reads); without the reference every column is None.

    >>> a = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q": {"d1": 2.0, "d2": 2.0, "d3": 1.0}}  # a low-precision variant that ties d1 and d2
    >>> sim = fp32_similarity({"fp32": a, "bf16": b})
    >>> {col: round(x, 4) for col, x in sim["bf16"].items()}
    {'rbo_fp32': 0.95, 'rbo_fp32_min': 0.9, 'rbo_fp32_max': 1.0}
    >>> round(sim["fp32"]["rbo_fp32"], 12)  # FP32 against itself, without ties
    1.0
    """
    from tierank.analysis.similarity import similarity

    if reference not in runs:
        return {name: dict.fromkeys(SIMILARITY_COLUMNS) for name in runs}
    out = {}
    for name, run in runs.items():
        mean = similarity(runs[reference], run, p=p).mean
        out[name] = {col: mean[field] for col, field in SIMILARITY_COLUMNS.items()}
    return out


def _aggregates(result) -> dict[str, dict]:
    """measure name -> the aggregate record (public API: ``EvalResult.records(per_query=False)``)."""
    return {r["measure"]: r for r in result.records(per_query=False)}


def table_rows(
    variants: Sequence[Any],
    measures: Sequence[Any],
    evals: Mapping[str, Any],
    ties: Mapping[str, dict],
    timing: Mapping[str, dict],
    n_queries: int,
    similarity: Mapping[str, dict] | None = None,
) -> list[dict]:
    """Table 1's rows, measure by measure, variant by variant (see the module docstring); ``similarity``:
    each variant's similarity columns ([`fp32_similarity`][tierank.hps.table.fp32_similarity]; None: left empty)."""
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
            rows.append(
                {
                    "query": "all",
                    "variant": v.name,
                    "measure": str(m),
                    "fp32": fp32_val,
                    **{c: a[c] for c in STATS},
                    **{c: st[c] for c in TIES},
                    "model_s": t["model_s"],
                    "scoring_ms": 1000 * t["scoring_s"],
                    "hps_overhead": overhead,
                    "queries": n_queries,
                    **(similarity or {}).get(v.name, dict.fromkeys(SIMILARITY_COLUMNS)),
                }
            )
    return rows
