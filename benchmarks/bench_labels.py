"""Evaluation over label distributions against the same evaluation with plain qrels, on one
synthetic run of ``--queries`` x ``--docs`` lines (default 1,000 x 1,000 = 1M lines; scores rounded
to 2 decimals, so ties are many), ``--judged`` judged documents a query with grades 0..3.

Timed in this process, median of ``--reps`` repetitions (after one warm-up), inputs in memory:

* ``qrels``: ``tierank.evaluate(qrels, run, measures)`` with the grades drawn once (the peer);
* ``labels``: ``tierank.evaluate_labels(distributions, run, measures)`` with a random distribution
  over 0..3 per judged pair: expectation and variance over grades and tie orderings, exact for the
  default measures (P@10, RBP, Hits@100), the plug-in value included.

The ratio ``labels / qrels`` is the goal's number (issue 49: within 3x).  ``--sampled M`` adds one
sampled measure (e.g. nDCG@10) with ``--samples`` draws, timed on its own line (it evaluates the
run once per draw).

    taskset -c 0 python benchmarks/bench_labels.py                   # 1M lines, 3 repetitions
    taskset -c 0 python benchmarks/bench_labels.py --queries 200 --sampled nDCG@10 --samples 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def _median_time(fn, reps: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-m", "--measure", action="append", default=None)
    ap.add_argument("--sampled", default=None)
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np
    import pyarrow as pa

    import tierank
    from tierank.io.distributions import LabelDistributions
    from tierank.io.model import Qrels, Run

    rng = np.random.default_rng(0)
    nq, nd, nj = args.queries, args.docs, min(args.judged, args.docs)
    qids = np.repeat([f"q{i}" for i in range(nq)], nd)
    docs = np.tile([f"d{j}" for j in range(nd)], nq)
    run = Run(
        pa.array(qids.tolist(), pa.string()),
        pa.array(docs.tolist(), pa.string()),
        np.round(rng.random(nq * nd), 2),
        None,
        "synthetic",
    )
    jq = np.repeat([f"q{i}" for i in range(nq)], nj)
    jd = np.tile([f"d{j}" for j in rng.choice(nd, nj, replace=False)], nq)
    probs = rng.dirichlet(np.ones(4) * 0.5, size=nq * nj)
    dist = LabelDistributions(jq.astype(object), jd.astype(object), probs, "synthetic")
    grades = (rng.random((nq * nj, 1)) >= np.cumsum(probs, 1)[:, :-1]).sum(1).astype(float)
    qrels = Qrels(
        pa.array(jq.tolist(), pa.string()), pa.array(jd.tolist(), pa.string()), grades, "q"
    )
    measures = args.measure or ["P@10", "RBP", "Hits@100"]
    print(
        f"run: {nq * nd:,} lines ({nq} queries x {nd}), {nq * nj:,} judged pairs, measures {measures}"
    )
    t_q = _median_time(lambda: tierank.evaluate(qrels, run, measures), args.reps)
    t_l = _median_time(lambda: tierank.evaluate_labels(dist, run, measures), args.reps)
    print(f"qrels   {t_q:8.3f} s")
    print(f"labels  {t_l:8.3f} s   ratio {t_l / t_q:.2f}x (exact: {measures})")
    if args.sampled:
        t_s = _median_time(
            lambda: tierank.evaluate_labels(dist, run, [args.sampled], samples=args.samples), 1
        )
        t_1 = _median_time(lambda: tierank.evaluate(qrels, run, [args.sampled]), 1)
        print(
            f"sampled {t_s:8.3f} s   {args.sampled}, {args.samples} draws: {t_s / t_1:.1f}x "
            f"one evaluation ({t_1:.3f} s)"
        )


if __name__ == "__main__":
    main()
