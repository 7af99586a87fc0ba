"""``tierank eval --format trec_eval -q -m all_trec`` against trec_eval 10 itself, side by side in one run.

Two data sets, each timed end to end as fresh processes, interleaved (one repetition of every
command, then the next), medians of wall and CPU time:

* ``askubuntu-x50``: the AskUbuntu test run and qrels of the examples (4,000 lines, 200 queries)
  copied 50 times under new query ids: 200,000 lines, 10,000 queries, its ties as they are;
* ``tied``: a synthetic heavily tied run, ``--tied-queries`` x ``--tied-docs`` documents with 20
  distinct scores per query, every 10th document judged (grades 0-2), every 2nd of the others
  left out of the qrels, a few graded -1 (infAP's unsampled pool).

Commands: trec_eval 10 built from ``tests/vendor/trec_eval-10.0`` (skipped, with the reason, where
make or a C compiler is missing), ``tierank`` (the checkout under test) and, with ``--baseline
PATH/src``, the same command on another checkout.  ``--per-measure`` also times, in this process
on data already read, each family of ``all_trec`` on the tied run (where the time goes).

    python benchmarks/bench_all_trec.py                    # 5 repetitions
    python benchmarks/bench_all_trec.py --reps 3 --baseline /path/to/old/src --per-measure
    python benchmarks/bench_all_trec.py --sets askubuntu-x50 --reps 3
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "src" / "tierank" / "examples"


def askubuntu_x50(folder: Path, copies: int = 50) -> tuple[Path, Path]:
    """The AskUbuntu example run and qrels, ``copies`` times under query ids ``<qid>_<copy>``."""
    run_lines = gzip.open(EXAMPLES / "askubuntu-test.bm25.run.gz", "rt").read().splitlines()
    qrel_lines = gzip.open(EXAMPLES / "askubuntu-test.qrels.gz", "rt").read().splitlines()
    qrels, run = folder / f"askubuntu-x{copies}.qrels", folder / f"askubuntu-x{copies}.run"
    with open(qrels, "w") as qf, open(run, "w") as rf:
        for c in range(copies):
            for line in qrel_lines:
                f = line.split()
                qf.write(f"{f[0]}_{c} {f[1]} {f[2]} {f[3]}\n")
            for line in run_lines:
                f = line.split()
                rf.write(f"{f[0]}_{c} {' '.join(f[1:])}\n")
    return qrels, run


def tied(folder: Path, nq: int, nd: int, seed: int = 0) -> tuple[Path, Path]:
    """A run of ``nq * nd`` lines with 20 distinct scores per query; qrels as in the module docstring."""
    import numpy as np

    rng = np.random.default_rng(seed)
    qrels, run = folder / f"tied-{nq}x{nd}.qrels", folder / f"tied-{nq}x{nd}.run"
    with open(qrels, "w") as qf, open(run, "w") as rf:
        for q in range(nq):
            scores = np.sort(rng.integers(0, 20, nd))[::-1]
            rf.writelines(f"q{q} Q0 d{d} {d + 1} {scores[d]} tied\n" for d in range(nd))
            for d in range(0, nd, 2):
                g = int(rng.integers(0, 3)) if d % 10 == 0 else (-1 if d % 50 == 2 else 0)
                qf.write(f"q{q} 0 d{d} {g}\n")
    return qrels, run


def _measure(cmd: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--tied-queries", type=int, default=1000)
    ap.add_argument("--tied-docs", type=int, default=1000)
    ap.add_argument(
        "--baseline", type=Path, default=None, help="src folder of another checkout, timed too"
    )
    ap.add_argument(
        "--sets", default="askubuntu-x50,tied", help="data sets to time (comma-separated)"
    )
    ap.add_argument("--per-measure", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(REPO / "tests"))
    from trec_eval_build import NoCompiler, build_trec_eval

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        makers = {
            "askubuntu-x50": lambda: askubuntu_x50(folder, args.copies),
            "tied": lambda: tied(folder, args.tied_queries, args.tied_docs),
        }
        data = {name: makers[name]() for name in args.sets.split(",")}
        tools: dict[str, tuple[list[str], dict]] = {}
        try:
            te = build_trec_eval(folder)
            tools["trec_eval"] = ([str(te), "-q", "-m", "all_trec"], dict(os.environ))
        except (NoCompiler, RuntimeError) as err:
            print(f"trec_eval skipped: {err}", file=sys.stderr)
        cli = [
            sys.executable,
            "-m",
            "tierank.cli",
            "eval",
            "--format",
            "trec_eval",
            "-q",
            "-m",
            "all_trec",
        ]
        # byte code written and reused, as an installed wheel has it (the warm-up run writes it)
        py_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        tools["tierank"] = (cli, {**py_env, "PYTHONPATH": str(REPO / "src")})
        if args.baseline:
            tools["baseline"] = (cli, {**py_env, "PYTHONPATH": str(args.baseline)})
        times: dict[str, dict[str, list]] = {d: {t: [] for t in tools} for d in data}
        for qrels, run in data.values():  # warm the byte code and the page cache
            for cmd, env in tools.values():
                _measure([*cmd, str(qrels), str(run)], env)
        for _ in range(args.reps):
            for name, (qrels, run) in data.items():
                for tool, (cmd, env) in tools.items():
                    times[name][tool].append(_measure([*cmd, str(qrels), str(run)], env))
        out: dict = {
            "reps": args.reps,
            "lines": {n: sum(1 for _ in open(r)) for n, (_, r) in data.items()},
        }
        for name, per in times.items():
            row = {
                t: {
                    "wall_s": statistics.median(w for w, _ in v),
                    "cpu_s": statistics.median(c for _, c in v),
                }
                for t, v in per.items()
            }
            if "trec_eval" in row:
                for t in row:
                    row[t]["wall_vs_trec_eval"] = row[t]["wall_s"] / row["trec_eval"]["wall_s"]
            out[name] = row
        if args.per_measure and "tied" in data:
            import tierank
            from tierank.measures.names import resolve

            qrels, run = data["tied"]
            r, q = tierank.read_run(run), tierank.read_qrels(qrels)
            fams: dict[str, list] = {}
            for m in resolve(["all_trec"]):
                fams.setdefault(type(m).__name__, []).append(m)
            per_family = {}
            for fam, ms in fams.items():
                t0 = time.perf_counter()
                tierank.evaluate(q, r, ms, tie_break="trec_eval").aggregate()
                per_family[fam] = round(time.perf_counter() - t0, 3)
            out["tied_per_family_s"] = dict(sorted(per_family.items(), key=lambda kv: -kv[1]))
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
