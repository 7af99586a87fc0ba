"""A comparison's prediction-powered estimates: with human qrels for some of the compared queries (the
comparison's own qrels being a machine judge's, for every query), each system's PPI and PPI++ mean
and each pair's PPI and PPI++ mean difference, from the per-query differences
([`tierank.analysis.ppi`][tierank.analysis.ppi], the estimates of ``tierank eval --ppi``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...errors import TierankInputError
from ...evaluate import Evaluator
from ...io.model import Run
from ...measures.names import plan as measure_plan
from ..ppi import check_sizes, estimates
from .align import positions
from .results import PairComparison, SystemSummary
from .scales import Evaluated


def check_measure(measure: Any) -> None:
    """Refuse, before anything is read, a measure whose summary is not a mean over queries (a sum, a
    geometric mean): prediction-powered inference estimates means."""
    for m in measure_plan([measure]).measures:
        if m.aggregator != "mean":
            raise TierankInputError(
                f"--ppi: {m} is summarised by a {m.aggregator.replace('_', ' ')}, not a mean over "
                "queries: prediction-powered inference estimates means"
            )


def human_values(
    ev: Evaluator, human: Any, runs: dict[str, Run], common: list[str]
) -> tuple[list[str], dict[str, np.ndarray]]:
    """The compared queries the ``human`` qrels judge for every system (sorted) and each system's
    per-query expected values on them under the human grades (the comparison's measure and settings)."""
    m = ev.measures[0]
    hev = Evaluator(human, m, ev.settings, stacklevel=4)
    results = {name: hev.evaluate(run) for name, run in runs.items()}
    judged = set(common).intersection(*(set(r.qids) for r in results.values()))
    labelled = [q for q in common if q in judged]
    values = {
        name: np.asarray(res.stats[res.measures[0]].expected, dtype=np.float64)[
            positions(res, labelled)
        ]
        for name, res in results.items()
    }
    return labelled, values


def with_ppi(
    main: Evaluated,
    common: list[str],
    labelled: list[str],
    human: dict[str, np.ndarray],
    systems: dict[str, SystemSummary],
    pairs: list[PairComparison],
    level: float,
) -> tuple[dict[str, SystemSummary], list[PairComparison], dict[str, Any], list[str]]:
    """The systems and pairs with their PPI fields (`estimates` at ``level``), the record of the method
    (``Comparison.inference["ppi"]``) and the notes; refused where the human labels are too few or
    cover every compared query, warned where they are few (`check_sizes`: ``tierank eval --ppi``'s
    thresholds)."""
    where = {q: i for i, q in enumerate(common)}
    lab = np.fromiter((where[q] for q in labelled), dtype=np.int64, count=len(labelled))
    unl = np.setdiff1d(np.arange(len(common)), lab)
    try:
        warn = check_sizes(len(lab), len(unl), "--ppi")
    except TierankInputError as e:
        raise TierankInputError(f"compare {e.problems[0].reason}") from None
    machine = {name: st["expected"] for name, st in main.raw.items()}
    out = {
        name: replace(
            s,
            human_mean=float(human[name].mean()),
            **estimates(human[name], machine[name][lab], machine[name][unl], level),
        )
        for name, s in systems.items()
    }
    with_pairs = []
    for pc in pairs:
        y = human[pc.a] - human[pc.b]
        d = machine[pc.a] - machine[pc.b]
        fields = estimates(y, d[lab], d[unl], level, "diff")
        with_pairs.append(replace(pc, human_diff=float(y.mean()), **fields))
    info = {
        "method": "PPI (lambda 1) and PPI++ (power-tuned lambda), normal intervals",
        "values": "per-query tie-aware expected values; pairs: their per-query differences",
        "labeled": len(lab),
        "unlabeled": len(unl),
        "confidence": float(level),
    }
    return out, with_pairs, info, [warn] if warn else []
