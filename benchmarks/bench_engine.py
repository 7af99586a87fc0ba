"""The engine alone (issue 26): ``tierank.evaluate`` on runs already read, CPU seconds.

Times what follows the reading of the files: :func:`tierank.evaluate` (joining the qrels,
laying the run out in the policy's order with its tie groups, breaking ties, every measure's
statistics and the tie summary), on runs that were read once beforehand.  Two jobs of issue 26:

* ``7M``: the 7M-line bf16 run (6,980 queries x 1,000 documents, ~96% tied) with nDCG@10, AP@100,
  RR@10, R@100, P@10;
* ``many``: 50 runs of 1,000 queries x 100 documents (``bench_many.py --jsonl-cli``'s data) with
  nDCG@10, RR@10, AP, P@10, R@100, evaluated one after the other.

Each source tree (this checkout's ``src``, and ``--baseline`` another one) runs in its own worker
process that reads the files once; the workers are then asked in turn (interleaved: one repetition
of every tree, then the next) and each reports the CPU seconds (``time.process_time``) of one
repetition, with one thread for Arrow and numpy.  The table gives medians; the workers also compare
a digest of every number they computed, so that a faster engine that changed a bit shows up.

    python benchmarks/bench_engine.py --baseline /work/main/src            # both jobs, 7 repetitions
    python benchmarks/bench_engine.py --job many --reps 11 --baseline ../main/src
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
JOBS = {
    "7M": (
        ["nDCG@10", "AP@100", "RR@10", "R@100", "P@10"],
        "bench-data/qrels-6980x1000.trec",
        ["bench-data/run-6980x1000-bf16.trec"],
    ),
    "many": (
        ["nDCG@10", "RR@10", "AP", "P@10", "R@100"],
        "/tmp/many_bench/qrels.trec",
        [f"/tmp/many_bench/run{i:03d}.trec" for i in range(50)],
    ),
}

WORKER = r"""
import hashlib, json, sys, time
import pyarrow as pa
pa.set_cpu_count(1)
import numpy as np
import tierank
from tierank.io import read_qrels, read_run
measures, qrels_path, run_paths = json.loads(sys.argv[1])
qrels = read_qrels(qrels_path)
runs = [read_run(p) for p in run_paths]
print(json.dumps({"ready": tierank.__file__}), flush=True)
for line in sys.stdin:
    digest = hashlib.sha256()
    t0 = time.process_time()
    results = [tierank.evaluate(qrels, r, measures) for r in runs]
    cpu = time.process_time() - t0
    for res in results:
        for s in res.stats.values():
            for a in (s.oblivious, s.expected, s.min, s.max, s.var):
                digest.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        digest.update(repr(res.ties.to_dict()).encode())
    print(json.dumps({"cpu": cpu, "digest": digest.hexdigest()}), flush=True)
"""


def start(src: Path, job: str, data_root: Path) -> subprocess.Popen:
    measures, qrels, runs = JOBS[job]
    spec = json.dumps([measures, str(data_root / qrels), [str(data_root / r) for r in runs]])
    env = {
        **os.environ,
        "PYTHONPATH": str(src.resolve()),
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    p = subprocess.Popen(
        [sys.executable, "-c", WORKER, spec],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert p.stdout is not None
    ready = json.loads(p.stdout.readline())
    print(f"  {src}: tierank from {ready['ready']}", file=sys.stderr)
    return p


def ask(p: subprocess.Popen) -> dict:
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write("go\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--job", choices=[*JOBS, "all"], default="all")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--baseline", type=Path, help="another checkout's src folder, timed side by side"
    )
    ap.add_argument(
        "--data-root",
        type=Path,
        default=Path("/work/main"),
        help="folder that holds bench-data/ (relative paths of the 7M job)",
    )
    args = ap.parse_args(argv)
    trees = {"this": REPO / "src"}
    if args.baseline is not None:
        trees = {"baseline": args.baseline, **trees}
    for job in list(JOBS) if args.job == "all" else [args.job]:
        print(
            f"job {job} ({args.reps} repetitions, load {os.getloadavg()[0]:.1f}):", file=sys.stderr
        )
        workers = {name: start(src, job, args.data_root) for name, src in trees.items()}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        digests: dict[str, set[str]] = {name: set() for name in trees}
        for _ in range(args.reps):
            for name, w in workers.items():
                out = ask(w)
                cpu[name].append(out["cpu"])
                digests[name].add(out["digest"])
        for w in workers.values():
            assert w.stdin is not None
            w.stdin.close()
            w.wait()
        for name in trees:
            med = statistics.median(cpu[name])
            line = f"{job:5s} {name:9s} evaluate CPU median {med:.3f} s (min {min(cpu[name]):.3f})"
            if name != "baseline" and "baseline" in cpu:
                line += f"  x{statistics.median(cpu['baseline']) / med:.2f} vs baseline"
            print(line)
        same = len(set().union(*digests.values())) == 1
        print(
            f"{job:5s} digests of every statistic: {'identical' if same else 'DIFFERENT'}"
            f" ({hashlib.sha256(repr(sorted(set().union(*digests.values()))).encode()).hexdigest()[:12]})"
        )


if __name__ == "__main__":
    main()
