"""What ``--manifest`` adds to ``tierank eval``: the same evaluation with and without it, side by side.

A synthetic run of ``--queries`` x ``--docs`` lines (default 7,000 x 1,000 = 7M lines, scores
rounded to bf16 so that they tie) and its qrels are written once; then ``tierank eval QRELS RUN -m
nDCG@10 -m AP -m RR -f jsonl`` runs as fresh processes, alternately without and with ``--manifest``
(one repetition of each, then the next), and the medians of wall time and their ratio are printed.
``tierank verify`` is timed once at the end (it recomputes every number: about one evaluation).

    python benchmarks/bench_manifest.py                         # 7M lines, 3 repetitions
    python benchmarks/bench_manifest.py --queries 1000 --reps 5 # 1M lines
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_data(folder: Path, nq: int, nd: int, seed: int = 0) -> tuple[Path, Path]:
    """A run of ``nq * nd`` lines (bf16-rounded scores) and qrels judging every 5th document."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng(seed)
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    docs = np.array([f"d{i}" for i in range(nd)])
    with open(run, "w") as rf, open(qrels, "w") as qf:
        for q in range(nq):
            s = rng.random(nd).astype(ml_dtypes.bfloat16).astype(np.float64)
            order = np.argsort(-s, kind="stable")
            lines = [
                f"q{q} Q0 {docs[j]} {r + 1} {float(s[j])!r} sys\n" for r, j in enumerate(order)
            ]
            rf.writelines(lines)
            judged = rng.choice(nd, nd // 5, replace=False)
            qf.writelines(f"q{q} 0 {docs[j]} {int(rng.integers(0, 3))}\n" for j in judged)
    return qrels, run


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run = write_data(folder, args.queries, args.docs)
        size = run.stat().st_size
        base = [sys.executable, "-m", "tierank.cli", "eval", str(qrels), str(run)]
        base += ["-m", "nDCG@10", "-m", "AP", "-m", "RR", "-f", "jsonl"]
        manifest = folder / "m.yaml"
        plain, with_manifest = [], []
        for _ in range(args.reps):
            plain.append(timed(base))
            with_manifest.append(timed([*base, "--manifest", str(manifest)]))
        verify = timed([sys.executable, "-m", "tierank.cli", "verify", str(manifest)])
        a, b = statistics.median(plain), statistics.median(with_manifest)
        lines = args.queries * args.docs
        print(f"{lines:,} lines ({size / 2**20:.0f} MiB), {args.reps} repetitions, medians")
        print(f"eval               {a:8.2f} s")
        print(f"eval --manifest    {b:8.2f} s   ratio {b / a:.3f} (+{100 * (b / a - 1):.1f}%)")
        print(f"verify             {verify:8.2f} s")


if __name__ == "__main__":
    main()
