"""The systems' inference over the query sample: each system's confidence interval and ranks, and with
``leaderboard`` its rank interval and Tukey HSD group ([`tierank.analysis.inference`][tierank.analysis.inference]), on
the inference's scale (`SCALES`), mapped back to the measure's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...evaluate import Evaluator
from ...io.model import Run
from ...measures.sampling import tie_orderings
from .. import inference
from ..paired.base import interval_supported, least_supported
from .align import positions
from .results import SystemSummary
from .scales import Evaluated, back, scaled
from .settings import CompareSettings


def infer_systems(
    main: Evaluated,
    ranked: list[str],
    o: CompareSettings,
    aggregator: str,
    draws: np.ndarray | None = None,
) -> tuple[dict[str, SystemSummary], dict]:
    """The systems' summaries with their CI, ranks and (with ``leaderboard``) rank interval and Tukey
    group (``draws``: `tie_draws`); and ``{"boot": shared bootstrap means or None, "best": systems not separated from the best,
    "rank_method", "hsd", "notes"}``."""
    E = main.matrix(ranked, "expected")
    nq = E.shape[0]
    sampled = o.leaderboard or replace(o.paired(), ci=o.ci).bootstrap
    boot = inference.bootstrap_means(E, o.resamples, o.seed) if sampled else None
    cis = inference.mean_cis(
        E, ranked, method=o.ci, level=o.level, resamples=o.resamples, seed=o.seed, boot=boot
    )
    notes = []
    supported = interval_supported(nq, o.level)
    if nq < 2:
        notes.append(
            "1 query: no confidence interval"
            + (", rank interval or Tukey HSD group" if o.leaderboard else "")
            + " can be computed (null); they need at least 2 queries"
        )
    elif not supported:
        notes.append(
            f"{nq} queries: no confidence interval"
            + (" or rank interval" if o.leaderboard else "")
            + f" at level {o.level:g} (null): exact sign-flip randomization on {nq} values cannot "
            f"reach p < {1 - o.level:.4g} (its least p is 2/2^{nq} = {2.0 ** (1 - nq):.4g}); "
            f"they need at least {least_supported(o.level)} queries at this level"
        )
    if not supported:
        cis = tuple(replace(c, ci_low=float("nan"), ci_high=float("nan")) for c in cis)
    board = _leaderboard(E, ranked, o, boot, draws) if o.leaderboard and nq >= 2 else None
    if board is not None and not supported:  # no rank interval either (the Tukey groups stay)
        for fields in board["systems"]:
            fields.update(rank_low=None, rank_high=None)
    summaries = main.summaries
    rank = inference.competition_ranks(np.array([summaries[n].expected for n in ranked]))
    rank_obl = inference.competition_ranks(np.array([summaries[n].oblivious for n in ranked]))
    to_measure = lambda x: float(back(aggregator, nq, x, main.bounds))  # noqa: E731
    out = {
        n: replace(
            summaries[n],
            ci_low=to_measure(c.ci_low),
            ci_high=to_measure(c.ci_high),
            ci_method=c.ci_method,
            rank=int(rank[i]),
            rank_oblivious=int(rank_obl[i]),
            **({} if board is None else board["systems"][i]),
        )
        for i, (n, c) in enumerate(zip(ranked, cis))
    }
    return {**summaries, **out}, {
        "boot": boot,
        "best": None if board is None else board["best"],
        "rank_method": None if board is None else board["rank_method"],
        "hsd": None if board is None else board["hsd"],
        "notes": notes,
    }


def _leaderboard(
    E: np.ndarray,
    ranked: list[str],
    o: CompareSettings,
    boot: np.ndarray | None,
    tie_draws: np.ndarray | None,
) -> dict[str, Any]:
    """The leaderboard's figures: per system its rank interval and Tukey HSD group, the systems not
    separated from the best, the rank intervals' method and the Tukey HSD itself."""
    ri = inference.rank_intervals(
        E, ranked, level=o.level, resamples=o.resamples, seed=o.seed, boot=boot, tie_draws=tie_draws
    )
    hsd = inference.tukey_hsd(
        E, ranked, alpha=o.alpha, permutations=o.permutations, seed=o.seed, jobs=o.jobs
    )
    return {
        "systems": [
            dict(rank_low=int(lo), rank_high=int(hi), group=g)
            for lo, hi, g in zip(ri.low, ri.high, hsd.groups)
        ],
        "best": hsd.best,
        "rank_method": ri.method,
        "hsd": hsd,
    }


def tie_draws(
    ev: Evaluator, runs: dict[str, Run], ranked: list[str], common: list[str], o: CompareSettings
) -> np.ndarray | None:
    """With ``leaderboard`` and ``tie_samples``: the per-query values (inference scale) of every system
    under ``tie_samples`` independent uniformly random tie orderings, draws x queries x systems.

    Each run is prepared once ([`Evaluator.prepared`][tierank.evaluate.Evaluator.prepared]) and its
    orderings drawn by `tierank.measures.sampling.tie_orderings` (seed: a function of
    ``seed`` and the system's rank, so systems' orderings are independent), the measure computed once
    per chunk of orderings on their tie-free rankings."""
    if not (o.tie_samples and o.leaderboard):
        return None
    m, n, S = ev.measures[0], len(common), int(o.tie_samples)
    draws = np.empty((S, n, len(ranked)))
    for j, name in enumerate(ranked):
        prep = ev.prepared(runs[name], moments=False)
        idx = positions(prep, common)
        seed = int(np.random.SeedSequence([int(o.seed), j]).generate_state(1, np.uint64)[0])
        for first, rankings in tie_orderings(prep, S, seed):
            values = m.compute(rankings).oblivious.reshape(-1, prep.nq)[:, idx]
            st = {"oblivious": values, "expected": values}
            draws[first : first + len(values), :, j] = scaled(m, st, n)["oblivious"]
    return draws
