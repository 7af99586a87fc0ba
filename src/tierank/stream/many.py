"""Many runs against one qrels, read once ([`evaluate_many`][tierank.stream.many.evaluate_many]), in worker processes if asked."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import as_completed

import pyarrow as pa

from ..errors import TierankInputError
from ..evaluate import Evaluator, Measures
from ..io.naming import name_runs
from ..results import EvalResult
from ..settings import EvalSettings
from .workers import worker_pool

__all__ = ["evaluate_many"]


def _evaluate_named(args) -> tuple[str, EvalResult]:
    name, evaluator, run = args
    return name, evaluator.evaluate(run)


def evaluate_many(
    qrels,
    runs,
    measures: Measures | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    settings: EvalSettings | None = None,
    **options,
) -> dict[str, EvalResult]:
    """Evaluate many runs against one qrels, read once: ``{run name: EvalResult}`` in the order given.

    ``runs`` is a list of paths (named by file name) or a dict ``{name: run}`` of any input
    [`tierank.evaluate`][tierank.evaluate] takes.  ``qrels`` may be an [`tierank.evaluate.Evaluator`][tierank.evaluate.Evaluator] (then
    without ``measures`` or settings).  ``jobs`` worker processes evaluate runs in parallel;
    ``progress(name)`` is called as each run is done.  Each result equals
    ``tierank.evaluate(qrels, run, measures, settings, **options)``: one
    [`tierank.evaluate.Evaluator`][tierank.evaluate.Evaluator], built once, evaluates every run.

    >>> from tierank.examples import path
    >>> res = evaluate_many(path("qrels"), {"a": path("run"), "b": path("run")}, ["P@2"])
    >>> [(name, r.aggregate()["expected"].round(4).tolist()) for name, r in res.items()]
    [('a', [0.8333]), ('b', [0.8333])]
    """
    named = name_runs(runs)
    if not named:
        raise TierankInputError("no run given")
    if isinstance(qrels, Evaluator):
        if measures is not None or settings is not None or options:
            raise TierankInputError(
                "evaluate_many: an Evaluator already holds its measures and settings"
            )
        evaluator = qrels
    else:
        if measures is None:
            raise TierankInputError("no measure given")
        evaluator = Evaluator(qrels, measures, EvalSettings.of(settings, **options), stacklevel=3)
    jobs_args = [
        (name, evaluator, r if not isinstance(r, (str, os.PathLike)) else str(r))
        for name, r in named.items()
    ]
    done: dict[str, EvalResult] = {}

    def finished(name: str, res: EvalResult) -> None:
        done[name] = res
        if progress is not None:
            progress(name)

    if jobs <= 1 or len(jobs_args) == 1:
        for a in jobs_args:
            finished(*_evaluate_named(a))
    else:
        with worker_pool(min(jobs, len(jobs_args)), pa.set_cpu_count, (1,)) as pool:
            for fut in as_completed([pool.submit(_evaluate_named, a) for a in jobs_args]):
                finished(*fut.result())
    return {name: done[name] for name in named}
