"""How the ordering of systems moves when a judge's grades replace the reference's: each run evaluated
under the reference and under every judge (tie-aware expected values, over the queries the reference
judged), then per judge Kendall's tau-b and Yilmaz et al.'s tau-AP of the systems' means against the
reference's, the largest change of a system's rank, and the pairs of systems whose difference is
significant under the reference (paired t-test on the per-query values, two-sided, ``alpha``) that
change sign under the judge."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..errors import TierankInputError
from ..io.judgments import Judged
from .similarity import kendall_tau_b, tau_ap

#: the significance level of the paired t-tests
ALPHA = 0.05
#: the ``judge`` of the systems' means under the reference
REFERENCE = "reference"


def _ranks(means: np.ndarray) -> np.ndarray:
    """Each system's rank (1: best) by descending mean, ties by name order (stable)."""
    order = np.argsort(-means, kind="stable")
    ranks = np.empty(len(means), np.intp)
    ranks[order] = np.arange(1, len(means) + 1)
    return ranks


def ordering_stats(reference: np.ndarray, judged: np.ndarray, alpha: float = ALPHA) -> dict:
    """The ordering statistics of one judge: ``reference`` and ``judged`` are ``(systems, queries)``
    per-query values of the same systems over the same queries."""
    from scipy.stats import ttest_rel

    ref_mean, jud_mean = reference.mean(axis=1), judged.mean(axis=1)
    s = len(ref_mean)
    rr, jr = _ranks(ref_mean), _ranks(jud_mean)
    i, j = np.triu_indices(s, 1)
    sig = np.zeros(len(i), bool)
    if reference.shape[1] >= 2 and len(i):
        with np.errstate(invalid="ignore", divide="ignore"):
            p = ttest_rel(reference[i], reference[j], axis=1).pvalue
        sig = np.nan_to_num(p, nan=1.0) < alpha
    ref_d = ref_mean[i] - ref_mean[j]
    jud_d = jud_mean[i] - jud_mean[j]
    flipped = sig & (np.sign(ref_d) * np.sign(jud_d) < 0)
    n_sig = int(sig.sum())
    return {
        "systems": s,
        "kendall_tau_b": kendall_tau_b(ref_mean, jud_mean),
        # the judge's ranking, each system given its rank under the reference
        "tau_ap": tau_ap(rr[np.argsort(jr)]),
        "largest_rank_change": int(np.abs(rr - jr).max()) if s else 0,
        "significant_pairs": n_sig,
        "flipped_pairs": int(flipped.sum()),
        "flipped_share": float(flipped.sum() / n_sig) if n_sig else float("nan"),
    }


def orderings(
    judged: Judged, runs: Sequence, measure: str = "nDCG@10", alpha: float = ALPHA
) -> tuple[list[dict], list[dict], list[str]]:
    """One record per judge (`ordering_stats`, with ``judge`` and ``measure``) for ``runs`` (paths or
    runs) under ``judged``'s reference and judges; each system's mean under the reference (``judge``
    `REFERENCE`) and under each judge (over the queries both answer); and notes."""
    from ..evaluate import Evaluator
    from ..io.naming import name_runs
    from ..io.sources import read

    if len(runs) < 2:
        raise TierankInputError("--runs: give at least two runs to compare their ordering")
    named = name_runs([os.fspath(r) for r in runs])
    loaded = {name: read(path, "run", str(path)) for name, path in named.items()}
    queries = [str(q) for q in judged.queries]

    def values(qrels) -> np.ndarray:
        ev = Evaluator(qrels, [measure])
        out = np.full((len(loaded), len(queries)), np.nan)
        for k, run in enumerate(loaded.values()):
            res = ev.evaluate(run)
            m = res.measures[0]
            at = {q: n for n, q in enumerate(res.qids)}
            vals = res.stats[m].expected
            for n, q in enumerate(queries):
                if q in at:
                    out[k, n] = vals[at[q]]
        return out

    ref = values(judged.reference_qrels())
    answered = ~np.isnan(ref).any(axis=0)
    notes = []
    if not answered.all():
        notes.append(
            f"--runs: {int((~answered).sum())} of the reference's {len(queries)} queries are not in "
            "every run: left out of the orderings"
        )
    if answered.sum() < 2:
        raise TierankInputError("--runs: the runs share fewer than 2 of the reference's queries")
    records = []
    runs_named = list(loaded)
    means = [
        {"judge": REFERENCE, "run": r, "measure": measure, "mean": float(v), "queries": int(n)}
        for r, v, n in zip(
            runs_named, ref[:, answered].mean(axis=1), [answered.sum()] * len(runs_named)
        )
    ]
    for j, name in enumerate(judged.judges):
        jv = values(judged.judge_qrels(j))
        ok = answered & ~np.isnan(jv).any(axis=0)
        records.append(
            {"judge": name, "measure": measure, **ordering_stats(ref[:, ok], jv[:, ok], alpha)}
        )
        means += [
            {
                "judge": name,
                "run": r,
                "measure": measure,
                "mean": float(v),
                "queries": int(ok.sum()),
            }
            for r, v in zip(runs_named, jv[:, ok].mean(axis=1))
        ]
    return records, means, notes


__all__ = ["ALPHA", "REFERENCE", "ordering_stats", "orderings"]
