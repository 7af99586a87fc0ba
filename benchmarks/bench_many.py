"""Many runs against one qrels (issue 15): 100 runs of 1,000 queries x 100 documents.

Side by side, on the same files:
* ``evaluate_many``: ``tierank.stream.evaluate_many`` in one process (qrels read once), 1 and 2 jobs;
* 100 separate ``tierank eval`` processes (what a shell loop over a TREC track does today);
* pytrec_eval's best case: one ``RelevanceEvaluator`` built once and reused for all 100 runs, the
  runs read into dicts with ``line.split()`` (tie-oblivious values only; tierank computes every
  statistic).

    python benchmarks/bench_many.py                 # 100 runs
    python benchmarks/bench_many.py --runs 10       # quick check
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
            scores = np.sort(np.round(rng.normal(size=nd), 2))[::-1]  # 2 decimals: ties, as low precision makes
            rows.extend(f"q{q} Q0 d{d} {i + 1} {s} r{r}\n" for i, (d, s) in enumerate(zip(docs, scores)))
        p.write_text("".join(rows))
    return qrels, paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data" / "many")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip-processes", action="store_true", help="skip the 100 separate processes")
    args = ap.parse_args(argv)
    qrels, runs = generate(args.data_dir, args.runs, args.queries, args.docs, args.seed)
    out = {"runs": len(runs), "lines_per_run": args.queries * args.docs}

    import tierank
    from tierank.stream import evaluate_many

    for jobs in (1, 2):
        t = time.perf_counter()
        res = evaluate_many(str(qrels), [str(p) for p in runs], MEASURES, jobs=jobs)
        out[f"evaluate_many_jobs{jobs}_s"] = time.perf_counter() - t
    first = res[runs[0].name].aggregate().set_index("measure")
    out["tierank_first_run"] = {m: [first.loc[m, "oblivious"], first.loc[m, "expected"]] for m in MEASURES}

    if not args.skip_processes:
        t = time.perf_counter()
        for p in runs:
            cmd = [sys.executable, "-m", "tierank.cli", "eval", str(qrels), str(p), "--format", "jsonl"]
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


if __name__ == "__main__":
    raise SystemExit(main())
