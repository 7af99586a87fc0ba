"""Inference over the query sample at leaderboard scale (issue 24): 20 systems x 7,000 queries,
10,000 bootstrap resamples and 10,000 randomized Tukey HSD permutations.

Synthetic per-query expected values shaped like nDCG@10 (a third of the queries at 0, the rest
Beta-distributed, systems differing by small shifts), timed piece by piece on this machine:

* the shared bootstrap means (one multinomial count matrix x the value matrix, in chunks);
* BCa intervals of all systems from them; rank intervals from them;
* paired tests of all 190 pairs (t, with BCa intervals of the differences; and Wilcoxon);
* randomized Tukey HSD.

Wall and CPU seconds are both printed: on a shared machine the CPU seconds say what the work costs.

    python benchmarks/bench_inference.py
    python benchmarks/bench_inference.py --jobs 1                        # Tukey HSD on 1 thread
    python benchmarks/bench_inference.py --compare-jobs 3                # 1 vs default threads, interleaved
    python benchmarks/bench_inference.py --systems 5 --queries 1000      # quick check
    python benchmarks/bench_inference.py --tie-samples 5                 # + rank intervals redrawing ties
    python benchmarks/bench_inference.py --ranx 3                        # Tukey HSD side by side with ranx

CPU seconds are this process's, all its threads together. ``--compare-jobs R`` times randomized Tukey HSD
R times with 1 thread and with the default (up to 2 threads), interleaved in this one process, and prints
the medians (the two give the same result: the permutations come in seeded blocks).

``--ranx R`` times, interleaved in this process, R rounds of: tierank's randomized Tukey HSD; ranx's
``stat_test="tukey"`` (ranx 0.3.21 calls ``scipy.stats.tukey_hsd``: the classical studentized-range
test for independent groups, with no permutations: ``n_permutations`` is ignored); and ranx's only
permutation test, Fisher's randomization test (numba), on ``--ranx-pairs`` pairs with the same number
of permutations, scaled to the 190 pairs (``ranx.compare`` calls it for both orders of every pair,
380 calls). ranx's numba JIT warm-up (compiling or loading its cache) is done first and not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
import scipy.special  # noqa: F401  (imported before the clock starts: import time is not work)
import scipy.stats  # noqa: F401

from tierank.analysis import inference as inf


def values(systems: int, queries: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 2.5, size=queries)
    zero = rng.random(queries) < 1 / 3
    X = np.clip(
        base[:, None] + rng.normal(0, 0.15, (queries, systems)) + np.linspace(0.03, 0, systems),
        0,
        1,
    )
    X[zero] = 0.0
    return X


def compare_jobs(X: np.ndarray, names: list[str], a: argparse.Namespace) -> None:
    rows: dict[str, list[tuple[float, float]]] = {
        "1 thread": [],
        f"{inf.default_jobs()} threads (default)": [],
    }
    ref = None
    for _ in range(a.compare_jobs):
        for label, jobs in zip(rows, (1, None)):
            w, c = time.perf_counter(), time.process_time()
            h = inf.tukey_hsd(X, names, permutations=a.permutations, seed=a.seed, jobs=jobs)
            rows[label].append((time.perf_counter() - w, time.process_time() - c))
            assert ref is None or np.array_equal(ref, h.p), (
                "Tukey HSD p-values differ between thread counts"
            )
            ref = h.p
    print(
        f"randomized Tukey HSD, {a.systems} systems x {a.queries} queries, {a.permutations} permutations, "
        f"{a.compare_jobs} interleaved rounds ({os.cpu_count()} CPUs, 1-min load {os.getloadavg()[0]:.1f})"
    )
    for label, ts in rows.items():
        print(
            f"  {label:<22} median wall {np.median([t[0] for t in ts]):6.2f} s   "
            f"median CPU {np.median([t[1] for t in ts]):6.2f} s"
        )


def _clock(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def compare_ranx(X: np.ndarray, names: list[str], a: argparse.Namespace) -> None:
    from ranx.statistical_tests.fisher_randomization_test import fisher_randomization_test
    from ranx.statistical_tests.tukey_hsd_test import tukey_hsd_test

    S = X.shape[1]
    npairs = S * (S - 1) // 2
    _, warm, _ = _clock(lambda: fisher_randomization_test(X[:10, 0], X[:10, 1], 10, 0.01, 42))
    pairs = [(i, S - 1 - i) for i in range(a.ranx_pairs)]  # the most and next most different pairs
    rows: dict[str, list[tuple[float, float]]] = {
        "tierank randomized Tukey HSD": [],
        "ranx tukey (scipy, parametric)": [],
        f"ranx Fisher x {npairs} pairs (scaled)": [],
    }
    for _ in range(a.ranx):
        _, w, c = _clock(lambda: inf.tukey_hsd(X, names, permutations=a.permutations, seed=a.seed))
        rows["tierank randomized Tukey HSD"].append((w, c))
        _, w, c = _clock(lambda: tukey_hsd_test(names, [X[:, k] for k in range(S)], 0.05))
        rows["ranx tukey (scipy, parametric)"].append((w, c))
        ws, cs = 0.0, 0.0
        for i, j in pairs:
            _, w, c = _clock(
                lambda i=i, j=j: fisher_randomization_test(
                    X[:, i], X[:, j], a.permutations, 0.05, 42
                )
            )
            ws, cs = ws + w, cs + c
        rows[f"ranx Fisher x {npairs} pairs (scaled)"].append(
            (ws * npairs / len(pairs), cs * npairs / len(pairs))
        )
    from importlib.metadata import version

    import numba

    print(
        f"{a.systems} systems x {a.queries} queries, {a.permutations} permutations, {a.ranx} interleaved rounds "
        f"(ranx {version('ranx')}, numba {numba.__version__} on {numba.config.NUMBA_NUM_THREADS} threads, "
        f"JIT warm-up {warm:.1f} s not counted; Fisher timed on {len(pairs)} pairs; "
        f"{os.cpu_count()} CPUs, 1-min load {os.getloadavg()[0]:.1f})"
    )
    ref = [np.median([t[i] for t in rows["tierank randomized Tukey HSD"]]) for i in (0, 1)]
    for label, ts in rows.items():
        mw, mc = (np.median([t[i] for t in ts]) for i in (0, 1))
        print(
            f"  {label:<36} median wall {mw:8.2f} s (x{mw / ref[0]:7.2f})   median CPU {mc:8.2f} s "
            f"(x{mc / ref[1]:7.2f} tierank's)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="threads sharing Tukey HSD's permutations (default: up to 2)",
    )
    ap.add_argument(
        "--compare-jobs",
        type=int,
        default=0,
        metavar="R",
        help="only time Tukey HSD, R rounds of 1 thread vs the default, interleaved; print medians",
    )
    ap.add_argument(
        "--ranx",
        type=int,
        default=0,
        metavar="R",
        help="only time Tukey HSD side by side with ranx, R interleaved rounds; print medians",
    )
    ap.add_argument(
        "--ranx-pairs",
        type=int,
        default=2,
        help="pairs ranx's Fisher test is timed on (then scaled)",
    )
    ap.add_argument(
        "--tie-samples",
        type=int,
        default=0,
        help="also time bootstrap means that redraw each query's tie ordering from N draws",
    )
    ap.add_argument("--json", action="store_true", help="print the timings as one JSON object")
    a = ap.parse_args()
    X = values(a.systems, a.queries, a.seed)
    names = [f"s{i:02d}" for i in range(a.systems)]
    if a.compare_jobs:
        compare_jobs(X, names, a)
        return
    if a.ranx:
        compare_ranx(X, names, a)
        return
    t: dict[str, tuple[float, float]] = {}

    def timed(label, fn):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        t[label] = (time.perf_counter() - w, time.process_time() - c)
        return out

    boot = timed("bootstrap means", lambda: inf.bootstrap_means(X, a.resamples, a.seed))
    timed(
        "BCa CIs (all systems)",
        lambda: inf.mean_cis(X, names, method="bca", resamples=a.resamples, seed=a.seed, boot=boot),
    )
    timed(
        "rank intervals",
        lambda: inf.rank_intervals(X, names, resamples=a.resamples, seed=a.seed, boot=boot),
    )
    timed(
        "paired t + BCa diff CIs (all pairs)",
        lambda: inf.paired_tests(
            X, names, test="t", ci="bca", resamples=a.resamples, seed=a.seed, boot=boot
        ),
    )
    if a.tie_samples:
        rng = np.random.default_rng(a.seed + 1)
        draws = np.clip(X + rng.normal(0, 0.02, (a.tie_samples, *X.shape)), 0, 1)
        timed(
            f"rank intervals, {a.tie_samples} tie draws",
            lambda: inf.rank_intervals(
                X, names, resamples=a.resamples, seed=a.seed, tie_draws=draws
            ),
        )
    t["bootstrap total"] = tuple(sum(v[i] for v in t.values()) for i in (0, 1))
    timed("Wilcoxon (all pairs)", lambda: inf.paired_tests(X, names, test="wilcoxon"))
    hsd = timed(
        "randomized Tukey HSD",
        lambda: inf.tukey_hsd(X, names, permutations=a.permutations, seed=a.seed, jobs=a.jobs),
    )
    info = {
        "jobs": a.jobs,
        "systems": a.systems,
        "queries": a.queries,
        "resamples": a.resamples,
        "permutations": a.permutations,
        "cpus": os.cpu_count(),
        "load_1min": os.getloadavg()[0],
        "machine": platform.machine(),
        "numpy": np.__version__,
        "wall_s": {k: round(v[0], 2) for k, v in t.items()},
        "cpu_s": {k: round(v[1], 2) for k, v in t.items()},
        "tukey_groups": len(set("".join(hsd.groups))),
    }
    if a.json:
        print(json.dumps(info))
        return
    print(
        f"{a.systems} systems x {a.queries} queries, {a.resamples} resamples, {a.permutations} permutations "
        f"(Tukey on {a.jobs or inf.default_jobs()} thread(s); {info['cpus']} CPUs, 1-min load {info['load_1min']:.1f}, "
        f"numpy {np.__version__})"
    )
    print(f"  {'':<40} {'wall s':>8} {'CPU s':>8}")
    for k, (w, c) in t.items():
        print(f"  {k:<40} {w:8.2f} {c:8.2f}")


if __name__ == "__main__":
    main()
