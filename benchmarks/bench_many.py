"""Many runs against one qrels (issue 15): 100 runs of 1,000 queries x 100 documents.

Side by side, on the same files:
* ``evaluate_many``: ``tierank.stream.evaluate_many`` in one process (qrels read once), 1 and 2 jobs;
* 100 separate ``tierank eval`` processes (what a shell loop over a TREC track does today);
* pytrec_eval's best case: one ``RelevanceEvaluator`` built once and reused for all 100 runs, the
  runs read into dicts with ``line.split()`` (tie-oblivious values only; tierank computes every
  statistic).

    python benchmarks/bench_many.py                 # 100 runs
    python benchmarks/bench_many.py --runs 10       # quick check

``--jsonl-cli`` (issue 26) compares instead, side by side and interleaved (``--repeat`` rounds,
medians), each in a fresh process: ``tierank eval QRELS RUN... --format jsonl`` (every per-query
record written; default jobs and ``-j 1``) and one reused pytrec_eval evaluator that also writes
its per-query values as JSON lines.  Wall and CPU seconds (user + system, the process and its
workers) are reported with the load average, since a shared machine's wall times say little;
``--tierank-src`` names other source trees to time the same way (before/after)::

    python benchmarks/bench_many.py --runs 50 --jsonl-cli --data-dir /tmp/many_bench \\
        --tierank-src /work/main/src --tierank-src src
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MEASURES = ["nDCG@10", "RR@10", "AP", "P@10", "R@100"]
PYTREC = {"ndcg_cut_10", "recip_rank", "map", "P_10", "recall_100"}


def generate(folder: Path, runs: int, nq: int, nd: int, seed: int) -> tuple[Path, list[Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    qrels = folder / "qrels.trec"
    rng = np.random.default_rng(seed)
    if not qrels.exists():
        with open(qrels, "w") as fh:
            for q in range(nq):
                for d in rng.choice(nd * 3, size=5, replace=False):
                    fh.write(f"q{q} 0 d{d} {int(rng.integers(0, 3))}\n")
    paths = []
    for r in range(runs):
        p = folder / f"run{r:03d}.trec"
        paths.append(p)
        if p.exists():
            continue
        rows = []
        for q in range(nq):
            docs = rng.choice(nd * 3, size=nd, replace=False)
            scores = np.sort(np.round(rng.normal(size=nd), 2))[
                ::-1
            ]  # 2 decimals: ties, as low precision makes
            rows.extend(
                f"q{q} Q0 d{d} {i + 1} {s} r{r}\n" for i, (d, s) in enumerate(zip(docs, scores))
            )
        p.write_text("".join(rows))
    return qrels, paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data" / "many")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip-processes", action="store_true", help="skip the 100 separate processes")
    ap.add_argument(
        "--jsonl-cli", action="store_true", help="tierank eval --format jsonl vs reused pytrec_eval"
    )
    ap.add_argument(
        "--tierank-src", action="append", default=None, help="source tree(s) to time (PYTHONPATH)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    qrels, runs = generate(args.data_dir, args.runs, args.queries, args.docs, args.seed)
    if args.jsonl_cli:
        return jsonl_cli(qrels, runs, args.tierank_src or [str(REPO / "src")], args.repeat)
    out = {"runs": len(runs), "lines_per_run": args.queries * args.docs}

    from tierank.stream import evaluate_many

    for jobs in (1, 2):
        t = time.perf_counter()
        res = evaluate_many(str(qrels), [str(p) for p in runs], MEASURES, jobs=jobs)
        out[f"evaluate_many_jobs{jobs}_s"] = time.perf_counter() - t
    first = res[runs[0].name].aggregate().set_index("measure")
    out["tierank_first_run"] = {
        m: [first.loc[m, "oblivious"], first.loc[m, "expected"]] for m in MEASURES
    }

    if not args.skip_processes:
        t = time.perf_counter()
        for p in runs:
            cmd = [
                sys.executable,
                "-m",
                "tierank.cli",
                "eval",
                str(qrels),
                str(p),
                "--format",
                "jsonl",
            ]
            for m in MEASURES:
                cmd += ["-m", m]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        out["separate_processes_s"] = time.perf_counter() - t

    try:
        import pytrec_eval
    except ImportError:
        pytrec_eval = None
    if pytrec_eval is not None:
        t = time.perf_counter()
        qd: dict = {}
        for line in open(qrels):
            q, _, d, g = line.split()
            qd.setdefault(q, {})[d] = int(g)
        ev = pytrec_eval.RelevanceEvaluator(qd, PYTREC)
        means = None
        for p in runs:
            rd: dict = {}
            for line in open(p):
                q, _, d, _, s, _ = line.split()
                rd.setdefault(q, {})[d] = float(s)
            per = ev.evaluate(rd)
            if means is None:
                means = {m: float(np.mean([v[m] for v in per.values()])) for m in PYTREC}
        out["pytrec_eval_reused_s"] = time.perf_counter() - t
        out["pytrec_eval_first_run"] = means
    base = out["evaluate_many_jobs1_s"]
    out["ratios_vs_evaluate_many_jobs1"] = {k: v / base for k, v in out.items() if k.endswith("_s")}
    print(json.dumps(out, indent=2))
    return 0


_PYTREC_JSONL = """
import json, sys
import pytrec_eval
qrels, runs = sys.argv[1], sys.argv[2:]
qd = {}
for line in open(qrels):
    q, _, d, g = line.split()
    qd.setdefault(q, {})[d] = int(g)
ev = pytrec_eval.RelevanceEvaluator(qd, %r)
out = sys.stdout
for p in runs:
    rd = {}
    for line in open(p):
        q, _, d, _, s, _ = line.split()
        rd.setdefault(q, {})[d] = float(s)
    out.write("".join(json.dumps({"run": p, "query": q, "measure": m, "value": v}) + "\\n"
                      for q, vals in ev.evaluate(rd).items() for m, v in vals.items()))
"""


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and its children) of ``cmd``, output discarded."""
    import os
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    base = {
        k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
    }  # bytecode cached (PYCACHEPREFIX)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(base, **(env or {})))
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def jsonl_cli(qrels: Path, runs: list[Path], trees: list[str], repeat: int) -> int:
    """``tierank eval ... --format jsonl`` (each source tree, default jobs and -j 1) against one reused
    pytrec_eval evaluator writing JSON lines, interleaved, medians of wall and CPU seconds."""
    import os
    import tempfile

    cases: dict[str, tuple[list[str], dict | None]] = {}
    # an installed tierank has its .pyc files: the bytecode goes to a temporary folder, warmed by a first
    # untimed round (else an environment with PYTHONDONTWRITEBYTECODE times the compiler in each process)
    cache = {"PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="bench-many-pyc-")}
    for tree in trees:
        base = [
            sys.executable,
            "-m",
            "tierank.cli",
            "eval",
            str(qrels),
            *map(str, runs),
            "--format",
            "jsonl",
        ]
        for m in MEASURES:
            base += ["-m", m]
        cases[f"tierank[{tree}]"] = (base, {"PYTHONPATH": tree, **cache})
        cases[f"tierank[{tree}] -j 1"] = (base + ["-j", "1"], {"PYTHONPATH": tree, **cache})
    cases["pytrec_eval reused"] = (
        [sys.executable, "-c", _PYTREC_JSONL % sorted(PYTREC), str(qrels), *map(str, runs)],
        None,
    )
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    loads = []
    for cmd, env in cases.values():
        if env is not None:
            _timed(cmd, env)  # warm the bytecode cache
    for _ in range(repeat):
        for name, (cmd, env) in cases.items():
            loads.append(os.getloadavg()[0])
            times[name].append(_timed(cmd, env))
    med = {
        k: (float(np.median([w for w, _ in v])), float(np.median([c for _, c in v])))
        for k, v in times.items()
    }
    ref_wall, ref_cpu = med["pytrec_eval reused"]
    print(
        f"{len(runs)} runs, {repeat} interleaved rounds, load average (1 min) during the runs: "
        f"median {np.median(loads):.1f}, max {max(loads):.1f} on {os.cpu_count()} cores"
    )
    print(f"{'tool':50s} {'wall s':>8s} {'cpu s':>8s} {'pytrec/x wall':>14s} {'pytrec/x cpu':>13s}")
    for k, (w, c) in med.items():
        print(f"{k:50s} {w:8.2f} {c:8.2f} {ref_wall / w:14.2f} {ref_cpu / c:13.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
