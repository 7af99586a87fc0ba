"""Streaming with 1 and 2 workers against trec_eval, side by side in one run (issue 26).

The 7M-line bf16 run of ``bench_eval.py`` (6,980 queries x 1,000 documents, about 96% of documents
tied) and, with ``--sizes 7,28``, four renamed copies of it (28M lines, made as ``bench_stream.py``
does).  Each round runs, in a fresh process and in turn (interleaved, so that load drifts hit every
command alike): ``tierank eval`` with ``-j 1``, ``-j 2`` and the default jobs (five measures
nDCG@10, AP@100, RR@10, R@100, P@10; ``--format jsonl`` to a file), trec_eval 10 built from the
vendored source (``-q``, the same five measures, output to /dev/null; trec_eval does not read
gzip, so plain files), and the parts of the realistic floor (``cat`` of the run, ``python -c
"import numpy, pyarrow"``).  Wall time and CPU seconds (user + system of the process and its
children) are recorded; the table gives medians over the rounds, and the load average is printed.

    python benchmarks/bench_jobs.py --sizes 7,28 --rounds 3 --trec-eval /tmp/te/trec_eval

Results go to ``DATA_DIR/jobs.json``.  The jsonl outputs of ``-j 1`` and ``-j 2`` are compared
byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_eval import MEASURES, REPO, generate  # noqa: E402
from bench_stream import copies  # noqa: E402

TREC_EVAL_MEASURES = ["ndcg_cut.10", "map_cut.100", "recip_rank", "recall.100", "P.10"]


def timed(cmd: list[str], stdout=subprocess.DEVNULL) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"{cmd}: exit {p.returncode}: {p.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data")
    ap.add_argument("--sizes", default="7", help="millions of lines, multiples of 7 (comma-separated)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trec-eval", type=Path, default=None, help="trec_eval binary (7M only; none: skipped)")
    ap.add_argument("--seed", type=int, default=20240607)
    args = ap.parse_args(argv)

    base = generate(args.data_dir, 6980, 1000, args.seed, False, lambda s: print(s, file=sys.stderr))
    py = sys.executable
    rows: list[dict] = []
    for size in (int(x) for x in args.sizes.split(",") if x):
        n = max(1, size // 7)
        run = base["bf16"] if n == 1 else args.data_dir / f"run-x{n}-bf16.trec"
        qrels = base["qrels"] if n == 1 else args.data_dir / f"qrels-x{n}.trec"
        copies(base["bf16"], run, n, 1)
        copies(base["qrels"], qrels, n, 1)
        lines = 6_980_000 * n
        outs = {}
        cmds: dict[str, list[str]] = {}
        for label, jobs in (("tierank -j 1", ["-j", "1"]), ("tierank -j 2", ["-j", "2"]), ("tierank default", [])):
            out = args.data_dir / f"out-{size}M-{label.split()[-1]}.jsonl"
            outs[label] = out
            cmd = [py, "-m", "tierank.cli", "eval", str(qrels), str(run)]
            for m in MEASURES:
                cmd += ["-m", m]
            cmds[label] = cmd + [*jobs, "--format", "jsonl", "-o", str(out)]
        if args.trec_eval and n == 1:
            te = [str(args.trec_eval), "-q"]
            for m in TREC_EVAL_MEASURES:
                te += ["-m", m]
            cmds["trec_eval -q"] = [*te, str(qrels), str(run)]
        cmds["cat run"] = ["cat", str(run)]
        cmds["import numpy, pyarrow"] = [py, "-c", "import numpy, pyarrow"]
        samples: dict[str, list[dict]] = {k: [] for k in cmds}
        for r in range(args.rounds):
            for label, cmd in cmds.items():
                s = timed(cmd)
                s["load1"] = os.getloadavg()[0]
                samples[label].append(s)
                print(f"{size}M round {r + 1} {label}: {s['wall_s']:.2f} s wall, {s['cpu_s']:.2f} s CPU, "
                      f"load {s['load1']:.2f}", file=sys.stderr, flush=True)
        same = filecmp.cmp(outs["tierank -j 1"], outs["tierank -j 2"], shallow=False)
        for label, ss in samples.items():
            rows.append({"size": f"{size}M", "lines": lines, "command": label,
                         "wall_s": statistics.median(s["wall_s"] for s in ss),
                         "cpu_s": statistics.median(s["cpu_s"] for s in ss),
                         "load1": statistics.median(s["load1"] for s in ss), "samples": ss,
                         "jsonl_j1_equals_j2": same})
    print("| size | command | wall s | CPU s | M lines/s | vs -j 1 | vs trec_eval | load |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ref = {x["command"]: x["wall_s"] for x in rows if x["size"] == r["size"]}
        mls = f"{r['lines'] / r['wall_s'] / 1e6:.2f}" if r["command"].startswith("tierank") else ""
        vs1 = f"{ref['tierank -j 1'] / r['wall_s']:.2f}x" if r["command"].startswith("tierank") else ""
        vte = f"{r['wall_s'] / ref['trec_eval -q']:.2f}" if "trec_eval -q" in ref and r["command"] != "cat run" else ""
        print(f"| {r['size']} | {r['command']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {mls} | {vs1} | {vte} | "
              f"{r['load1']:.1f} |")
    for size in sorted({r["size"] for r in rows}):
        print(f"{size}: jsonl of -j 1 and -j 2 byte-identical: "
              f"{next(r['jsonl_j1_equals_j2'] for r in rows if r['size'] == size)}")
    (args.data_dir / "jobs.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
