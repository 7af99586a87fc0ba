"""Putting the results of batches together: one [`EvalResult`][tierank.results.EvalResult] equal, bit for bit,
to the in-memory engine's on the whole run (per-query arrays concatenated in sorted query order)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..measures import Stats
from ..results import EvalResult
from ..ties import TieSummary

__all__ = ["combine_parts"]


# the results of batches with disjoint queries as one result (streaming and tierank.cluster)
def combine_parts(parts: list[EvalResult], measures, settings: dict) -> EvalResult:
    qids = [q for p in parts for q in p.qids]
    order = sorted(range(len(qids)), key=qids.__getitem__)
    idx = np.asarray(order, dtype=np.int64)

    def cat(arrays):
        return np.concatenate(arrays)[idx] if arrays else np.zeros(0)

    stats = {}
    for m in measures:
        ss = [p.stats[m] for p in parts]
        se = (
            None
            if all(s.se is None for s in ss)
            else cat([s.se if s.se is not None else np.zeros(len(s.expected)) for s in ss])
        )
        labelled = next((s for s in ss if s.method != "exact"), ss[0])  # sampled if any batch is
        stats[m] = replace(
            Stats(
                *(getattr(labelled, f) for f in ("oblivious", "expected", "min", "max", "var")),  # type: ignore[misc]
                method=labelled.method,
                samples=labelled.samples,
                seed=labelled.seed,
            ),
            oblivious=cat([s.oblivious for s in ss]),
            expected=cat([s.expected for s in ss]),
            min=cat([s.min for s in ss]),
            max=cat([s.max for s in ss]),
            var=cat([s.var for s in ss]),
            se=se,
            sampled=None if labelled.method == "exact" else cat([s.sampled_queries() for s in ss]),
        )
    bounds = {
        m: tuple(cat([p.bounds[m][i] for p in parts]) for i in (0, 1)) for m in parts[0].bounds
    }
    residual = {m: cat([p.residual[m] for p in parts]) for m in parts[0].residual}
    ties = TieSummary.combine(p.ties for p in parts)
    return EvalResult(
        measures=list(measures),
        qids=[qids[i] for i in order],
        stats=stats,
        ties=ties,
        settings=settings,
        bounds=bounds,
        residual=residual,
        unevaluated=sum(p.unevaluated for p in parts),
    )
