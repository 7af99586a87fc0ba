"""The systems of a comparison lined up: each run read once and evaluated by one
[`tierank.Evaluator`][tierank.Evaluator] (the qrels read and the measure resolved once), on the queries
evaluated for every system, their per-query values aligned to those queries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ... import compute as ac
from ...errors import TierankInputError
from ...evaluate import Evaluator
from ...io.convert import to_run
from ...io.model import Run
from ...measures.base import Measure
from ...results import EvalResult
from ...settings import EvalSettings


def checked_runs(runs: Any) -> dict[str, Run]:
    """``{name: Run}``: each run converted (read) once, named by its key."""
    if not isinstance(runs, Mapping):
        raise TierankInputError("compare: runs must be a mapping {system name: run}")
    if len(runs) < 2:
        raise TierankInputError(f"compare: need at least two systems to compare, got {len(runs)}")
    names = [str(k) for k in runs]
    if len(set(names)) != len(names):
        raise TierankInputError("compare: system names must be distinct")
    return {
        name: obj if isinstance(obj, Run) else to_run(obj, source=name)
        for name, obj in zip(names, runs.values())
    }


def evaluator(qrels: Any, measure: Any, settings: EvalSettings) -> Evaluator:
    """The evaluator of every system: the qrels read and the one measure resolved, once."""
    if not isinstance(measure, (str, Measure)):
        raise TierankInputError(f"compare: give exactly one measure as a string, got {measure!r}")
    ev = Evaluator(qrels, measure, settings, stacklevel=4)
    if len(ev.measures) != 1:
        raise TierankInputError(
            f"compare: give exactly one measure as a string, got {measure!r} "
            f"({len(ev.measures)} measures: {', '.join(map(str, ev.measures))})"
        )
    return ev


def positions(result, queries: list[str]) -> np.ndarray:
    pos = {q: i for i, q in enumerate(result.qids)}
    return np.fromiter((pos[q] for q in queries), dtype=np.int64, count=len(queries))


def aligned(result, queries: list[str]) -> dict[str, np.ndarray]:
    """The result's per-query arrays of its one measure, restricted and aligned to ``queries``
    (``root_mean`` too where the measure's statistics carry it)."""
    s = result.stats[result.measures[0]]
    idx = positions(result, queries)
    out = {
        k: np.asarray(getattr(s, k), dtype=np.float64)[idx]
        for k in ("oblivious", "expected", "min", "max", "var")
    }
    root = getattr(s, "root_mean", None)
    if root is not None and getattr(s, "root_n", None) == len(queries):
        out["root_mean"] = np.asarray(root, dtype=np.float64)[idx]
    return out


def _numeric(m, results: dict, common: list[str]) -> None:
    """Refuse a measure that gives no number to compare (a string per query, or a non-finite value),
    naming the measure, the system and the query."""
    for name, res in results.items():
        if getattr(m, "string_valued", False):
            raise TierankInputError(
                f"compare: measure {m} is a string per query, not a number (system {name}): "
                "a non-numeric measure cannot be compared"
            )
        st = aligned(res, common)
        for k in ("oblivious", "expected"):
            bad = np.flatnonzero(~np.isfinite(st[k]))
            if len(bad):
                raise TierankInputError(
                    f"compare: measure {m} has no finite {k} value for system {name} at "
                    f"query {common[int(bad[0])]}: it cannot be compared"
                )


def common_queries(
    ev: Evaluator, runs: dict[str, Run]
) -> tuple[Evaluator, dict[str, EvalResult], list[str], int]:
    """Every run evaluated on the queries evaluated for all (the evaluator judging those alone when the
    measure's summary is not additive), those queries sorted, and how many were dropped."""
    results = {name: ev.evaluate(r) for name, r in runs.items()}
    m = ev.measures[0]
    qsets = [set(res.qids) for res in results.values()]
    common = sorted(set.intersection(*qsets))
    if not common:
        raise TierankInputError(
            f"compare: no query is evaluated for every system ({', '.join(runs)}); "
            "the runs share no judged query"
        )
    dropped = len(set.union(*qsets)) - len(common)
    _numeric(m, results, common)
    if dropped and not m.additive:  # a summary that is not additive: the common queries alone
        ev = ev.judging(ac.array(common, ac.decoded(ev.qrels.qid).type))
        results = {name: ev.evaluate(r) for name, r in runs.items()}
    return ev, results, common, dropped
