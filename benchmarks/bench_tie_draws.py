"""The tie draws of ``compare --leaderboard --tie-samples N``: the sampler of `tierank.measures.sampling`
(each run prepared once, its N orderings evaluated in chunks as tie-free rankings:
`tierank.analysis.comparison.infer.tie_draws`) against its peer, one evaluation of each run under
``random:SEED`` tie breaking per draw (what compare did before), on the shipped askubuntu BM25 run and
two copies with coarser scores (rounded to 1 and 0 decimals: more ties), interleaved rounds in this
one process, medians printed with their ratio.  The two draw the same distribution (the mean of each
system's draws is printed for both).

    python benchmarks/bench_tie_draws.py                       # nDCG@10 and AP, N = 500, 3 rounds
    python benchmarks/bench_tie_draws.py --samples 50 --rounds 1
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from tierank.analysis.comparison.align import aligned, checked_runs, common_queries, evaluator
from tierank.analysis.comparison.infer import tie_draws
from tierank.analysis.comparison.scales import scaled
from tierank.analysis.comparison.settings import CompareSettings
from tierank.examples import path
from tierank.io.readers import read_run
from tierank.settings import EvalSettings


def runs() -> dict[str, dict]:
    run = read_run(path("askubuntu-run"))
    q, d = run.qid.to_pylist(), run.docid.to_pylist()
    score = np.asarray(run.score, dtype=np.float64)
    out = {}
    for name, sc in {
        "bm25": score,
        "round1": np.round(score, 1),
        "round0": np.round(score),
    }.items():
        r: dict = {}
        for a, b, c in zip(q, d, sc.tolist()):
            r.setdefault(a, {})[b] = c
        out[name] = r
    return out


def per_draw(ev, converted, ranked, common, samples: int, seed: int) -> np.ndarray:
    """The peer: one evaluation of every run under ``random:SEED`` tie breaking per draw."""
    m, n = ev.measures[0], len(common)
    draws = np.empty((samples, n, len(ranked)))
    for j, name in enumerate(ranked):
        for k in range(samples):
            rs = int(np.random.SeedSequence([seed, j, k]).generate_state(1, np.uint64)[0])
            res = ev.under(tie_break=f"random:{rs}").evaluate(converted[name])
            draws[k, :, j] = scaled(m, aligned(res, common), n)["oblivious"]
    return draws


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--samples", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--measures", default="nDCG@10,AP")
    a = ap.parse_args()
    converted = checked_runs(runs())
    o = CompareSettings(leaderboard=True, tie_samples=a.samples, seed=0)
    for measure in a.measures.split(","):
        ev, _, common, _ = common_queries(
            evaluator(path("askubuntu-qrels"), measure, EvalSettings()), converted
        )
        ranked = list(converted)
        times: dict[str, list[float]] = {"sampler": [], "per-draw": []}
        means = {}
        for _ in range(a.rounds):
            for name in ("sampler", "per-draw"):
                t = time.perf_counter()
                if name == "sampler":
                    D = tie_draws(ev, converted, ranked, common, o)
                else:
                    D = per_draw(ev, converted, ranked, common, a.samples, 0)
                times[name].append(time.perf_counter() - t)
                means[name] = D.mean(axis=(0, 1)).round(4).tolist()
        s, p = statistics.median(times["sampler"]), statistics.median(times["per-draw"])
        print(
            f"{measure}: {len(ranked)} runs x {len(common)} queries x {a.samples} draws; "
            f"sampler {s:.2f}s, per-draw {p:.2f}s (medians of {a.rounds}): {p / s:.1f}x; "
            f"mean draw per run: sampler {means['sampler']}, per-draw {means['per-draw']}"
        )


if __name__ == "__main__":
    main()
