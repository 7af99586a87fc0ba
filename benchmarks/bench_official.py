"""trec_eval's ``official`` measure set against the five-measure default, on the benchmark runs.

Issue 12 asks that ``-m official`` (num_q, num_ret, num_rel, num_rel_ret, map, gm_map, Rprec,
bpref, recip_rank, iprec_at_recall at 11 levels, P at 9 cutoffs: 28 measures, of which
iprec_at_recall and gm_map have sampled expectations) on the 7M-line bf16 run stays within 2x
of the five-measure time.  Both are timed in ONE process on the same data already read, so the
ratio compares the evaluation alone; the end-to-end ``tierank eval`` wall time of each (reading
included) is measured too, each in a fresh process.

    python benchmarks/bench_official.py                        # 6,980 x 1,000 (7M lines)
    python benchmarks/bench_official.py --queries 500          # quick check

The data is the generator of ``bench_eval.py`` (cached in ``bench-data/``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_eval import REPO, generate  # noqa: E402

FIVE = ["nDCG@10", "RR@10", "AP", "P@10", "R@100"]


def _time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data")
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--flavour", default="bf16", choices=["f32", "bf16"])
    ap.add_argument("--repeat", type=int, default=2, help="best of N for the in-process timings")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)

    import tierank
    from tierank.measures.names import resolve

    paths = generate(
        args.data_dir,
        args.queries,
        args.docs,
        args.seed,
        False,
        lambda s: print(s, file=sys.stderr),
    )
    run_path, qrels_path = paths[args.flavour], paths["qrels"]
    run, qrels = tierank.read_run(run_path), tierank.read_qrels(qrels_path)
    official = resolve(["official"])
    out = {"run": run_path.name, "lines": len(run), "official_measures": [str(m) for m in official]}
    t5 = _time(lambda: tierank.evaluate(qrels, run, FIVE).aggregate(), args.repeat)
    to = _time(lambda: tierank.evaluate(qrels, run, official).aggregate(), args.repeat)
    out.update(five_s=t5, official_s=to, ratio=to / t5)
    res = tierank.evaluate(qrels, run, official)
    out["sampled"] = sorted({str(m) for m in official if res.stats[m].method != "exact"})
    # per family: which measures cost what (one call each, same data)
    fams = {}
    for m in official:
        fams.setdefault(type(m).__name__, []).append(m)
    out["per_family_s"] = {
        f: _time(lambda ms=ms: tierank.evaluate(qrels, run, ms).aggregate(), 1)
        for f, ms in fams.items()
    }
    # end to end, fresh processes
    for name, ms in (("five", FIVE), ("official", ["official"])):
        cmd = [
            sys.executable,
            "-m",
            "tierank.cli",
            "eval",
            str(qrels_path),
            str(run_path),
            "--format",
            "jsonl",
        ]
        for m in ms:
            cmd += ["-m", m]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        out[f"cli_{name}_s"] = time.perf_counter() - t0
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
