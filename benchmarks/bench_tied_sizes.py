"""One measure at a time on heavily tied runs of several sizes: tierank against trec_eval 10, side by side.

The run of each size (``QxD``: Q queries of D documents) has 20 distinct scores per query (heavy
ties) and the qrels of ``bench_all_trec.tied`` (every 10th document judged 0-2, every 2nd of the
others left out, a few graded -1).  For each size and measure, interleaved repetitions of:

* ``trec_eval``: trec_eval 10 built from ``tests/vendor/trec_eval-10.0`` (``-m NAME``, summary only;
  skipped, with the reason, where make or a C compiler is missing);
* ``tierank``: ``tierank eval QRELS RUN -m MEASURE -f jsonl`` in a fresh process (end to end: start-up,
  reading, every statistic: expected, min, max, std);
* ``compute``: ``tierank.evaluate`` in this process on the run and qrels already read (the measure
  alone), with the number of per-query rows whose expectation is sampled rather than exact.

Medians of wall time; ``ratio`` is tierank's over trec_eval's (below 1: tierank is faster).

    python benchmarks/bench_tied_sizes.py                                   # 100x100, 1000x100, 1000x1000
    python benchmarks/bench_tied_sizes.py --sizes 1000x1000 --measures G --reps 1
    python benchmarks/bench_tied_sizes.py --out tied.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO / "tests")]

MEASURES = "AP,GMAP,bpref,GMBpref,infAP,G"


def _wall(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--sizes", default="100x100,1000x100,1000x1000", help="QUERIESxDOCS, comma-separated"
    )
    ap.add_argument("--measures", default=MEASURES, help="tierank names, comma-separated")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)

    from bench_all_trec import tied

    import tierank
    from tierank.measures.names import parse_measure, trec_name
    from trec_eval_build import NoCompiler, build_trec_eval

    measures = args.measures.split(",")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            te: Path | None = build_trec_eval(folder)
        except (NoCompiler, RuntimeError) as err:
            print(f"trec_eval skipped: {err}", file=sys.stderr)
            te = None
        for size in args.sizes.split(","):
            nq, nd = (int(x) for x in size.lower().split("x"))
            qrels, run = tied(folder, nq, nd)
            q, r = tierank.read_qrels(qrels), tierank.read_run(run)
            for name in measures:
                cmds = {
                    "tierank": [
                        sys.executable,
                        "-m",
                        "tierank.cli",
                        "eval",
                        str(qrels),
                        str(run),
                        "-m",
                        name,
                        "-f",
                        "jsonl",
                    ]
                }
                if te is not None:
                    cmds["trec_eval"] = [
                        str(te),
                        "-m",
                        trec_name(parse_measure(name)),
                        str(qrels),
                        str(run),
                    ]
                times: dict[str, list[float]] = {"compute": [], **{k: [] for k in cmds}}
                sampled = 0
                for _ in range(args.reps):
                    for tool, cmd in cmds.items():
                        times[tool].append(_wall(cmd, env))
                    t0 = time.perf_counter()
                    res = tierank.evaluate(q, r, [name])
                    res.aggregate()
                    times["compute"].append(time.perf_counter() - t0)
                    sampled = sum(
                        1
                        for rec in res.records()
                        if rec.get("method") == "sampled" and rec["query"] != "all"
                    )
                row = {
                    "size": size,
                    "lines": nq * nd,
                    "measure": name,
                    **{f"{k}_s": round(statistics.median(v), 3) for k, v in times.items()},
                    "sampled_queries": sampled,
                }
                if "trec_eval" in times:
                    row["ratio"] = round(row["tierank_s"] / row["trec_eval_s"], 2)
                    row["compute_ratio"] = round(row["compute_s"] / row["trec_eval_s"], 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps({"reps": args.reps, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
