"""``tierank trec_eval`` against trec_eval 10 and ``tierank.compat.pytrec_eval`` against pytrec_eval,
side by side in one run (interleaved: one repetition of every command, then the next; medians).

* trec_eval's own test files (``qrels.test``, ``results.test``): ``trec_eval``, ``tierank
  trec_eval`` and ``python -c "import numpy, pyarrow"`` (the floor of a Python evaluator);
* AskUbuntu x50 (200,000 lines, ``bench_all_trec.askubuntu_x50``) as it is and with its scores
  rounded to bfloat16 (ties everywhere): ``-m official``, ``-q -m all_trec`` and ``-m all_trec``;
* ``RelevanceEvaluator(qrels, {map, ndcg_cut.10, P.5, recall.100}).evaluate(run)`` on a
  1,000,000-line run dict (AskUbuntu x250), pytrec_eval-terrier against tierank's, in this process.

trec_eval is built from ``tests/vendor/trec_eval-10.0`` (skipped where make or cc is missing).
Python's bytecode cache is on (an installed tierank has its ``.pyc`` files; the cache goes to a
temporary folder, warmed before timing, so that an environment that sets
``PYTHONDONTWRITEBYTECODE`` does not time the compiler).  ``--baseline SRC`` also times
``tierank trec_eval`` of another checkout's ``src`` folder in the same run (rows ``baseline``), and
each case's evaluation alone (CPU time inside one process, after a first run) against it.

    python benchmarks/bench_trec_eval_swap.py            # 5 repetitions
    python benchmarks/bench_trec_eval_swap.py --reps 3 --skip-pytrec
    python benchmarks/bench_trec_eval_swap.py --reps 21 --test-files-only   # the start-up alone
    python benchmarks/bench_trec_eval_swap.py --baseline /path/to/main/src
        # ... the baseline's compat.pytrec_eval timed in a process of its own, after ours
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))

from bench_all_trec import askubuntu_x50  # noqa: E402


def _measure(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``cmd``; its output (the tie note on
    stderr too) is dropped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bf16(run: Path, out: Path) -> Path:
    import numpy as np
    from ml_dtypes import bfloat16

    rows = [ln.split() for ln in run.read_text().splitlines()]
    scores = np.array([float(r[4]) for r in rows]).astype(bfloat16).astype(np.float64).tolist()
    out.write_text("".join(f"{r[0]} Q0 {r[2]} {r[3]} {s!r} {r[5]}\n" for r, s in zip(rows, scores)))
    return out


def _dicts(qrels: Path, run: Path):
    q: dict = {}
    r: dict = {}
    for line in open(qrels):
        f = line.split()
        q.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in open(run):
        f = line.split()
        r.setdefault(f[0], {})[f[2]] = float(f[4])
    return q, r


#: a child's code: ``tierank trec_eval ARGV`` run in one process, once to warm it, then timed
#: (CPU seconds, ``time.process_time``: the evaluation without the start-up); prints the median
IN_PROCESS = """
import statistics, sys, time
from tierank.cli.trec_eval import run
reps, argv = int(sys.argv[1]), sys.argv[2:]
def once():
    with open('/dev/null', 'wb') as out, open('/dev/null', 'w') as err:
        t = time.process_time()
        run(argv, out=out, err=err)
        return time.process_time() - t
once()
print(statistics.median(once() for _ in range(reps)))
"""


def in_process(env: dict, argv: list[str], reps: int) -> float:
    """Median CPU seconds of ``tierank trec_eval argv`` inside one process (after a first run)."""
    done = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(reps), *argv],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(done.stdout.split()[-1])


def compat_timing(folder: Path, reps: int, label: str) -> None:
    """Print the median time of pytrec_eval's and of ``tierank.compat.pytrec_eval``'s ``evaluate`` on
    AskUbuntu x250 (1,000,000 lines), interleaved in this process, and the ratio."""
    import pytrec_eval

    import tierank.compat.pytrec_eval as compat

    big_q, big_r = askubuntu_x50(folder, copies=250)
    q, r = _dicts(big_q, big_r)
    ms = {"map", "ndcg_cut.10", "P.5", "recall.100"}
    lines = sum(map(len, r.values()))
    got: dict = {"pytrec_eval": [], f"{label}tierank.compat.pytrec_eval": []}
    for rep in range(max(5, 2 * reps)):  # (alternated: a slow spell of the machine hits both;
        # every other time compat first: neither always runs after the other)
        for who, mod in list(zip(got, (pytrec_eval, compat)))[:: 1 if rep % 2 == 0 else -1]:
            ev = mod.RelevanceEvaluator(q, ms)
            t0 = time.perf_counter()
            ev.evaluate(r)
            got[who].append(time.perf_counter() - t0)
    base = statistics.median(got["pytrec_eval"])
    for who, ts in got.items():
        w = statistics.median(ts)
        print(f"evaluate, {lines:,} lines  {who:<37} {w:8.3f} {w / base:7.2f}x", flush=True)
    ours, theirs = got[f"{label}tierank.compat.pytrec_eval"], got["pytrec_eval"]
    pairs = sorted(a / b for a, b in zip(ours, theirs))
    print(
        f"evaluate, {lines:,} lines  {label}per alternation: median {statistics.median(pairs):.2f}x,"
        f" quartiles {pairs[len(pairs) // 4]:.2f}x-{pairs[(3 * len(pairs)) // 4]:.2f}x;"
        f" fastest {min(ours) / min(theirs):.2f}x",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-pytrec", action="store_true")
    ap.add_argument(
        "--baseline", type=Path, default=None, help="src folder of another checkout, timed too"
    )
    ap.add_argument(
        "--test-files-only",
        action="store_true",
        help="only trec_eval's test files (the start-up against import numpy, pyarrow); no pytrec_eval",
    )
    ap.add_argument("--compat-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compat_only:  # (--baseline's child: the baseline's compat.pytrec_eval)
        with tempfile.TemporaryDirectory() as tmp:
            compat_timing(Path(tmp), args.reps, "baseline ")
        return 0
    from trec_eval_build import build_trec_eval

    te = str(build_trec_eval())
    tierank = [sys.executable, "-m", "tierank", "trec_eval"]
    data = REPO / "tests" / "data" / "trec_eval"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        py_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        py_env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        env = {**py_env, "PYTHONPATH": str(REPO / "src")}
        base_env = {**py_env, "PYTHONPATH": str(args.baseline)} if args.baseline else None
        import gzip

        small = []
        for name in ("qrels.test", "results.test"):
            src = data / f"{name}.gz"
            dst = folder / name
            dst.write_bytes(gzip.decompress(src.read_bytes()) if src.exists() else b"")
            small.append(str(dst))
        if not Path(small[1]).stat().st_size:  # results.test ships with the package
            from tierank.examples import path

            Path(small[1]).write_bytes(gzip.open(path("trec-run")).read())
        cases: dict = {"test files, official": ([te, *small], [*tierank, *small])}
        if not args.test_files_only:
            qrels, run = askubuntu_x50(folder)
            tied = bf16(run, folder / "bf16.run")
            cases |= {
                "bf16 -m official": ([te, "-m", "official", str(qrels), str(tied)], None),
                "bf16 -q -m all_trec": ([te, "-q", "-m", "all_trec", str(qrels), str(tied)], None),
                "-q -m all_trec": ([te, "-q", "-m", "all_trec", str(qrels), str(run)], None),
                "-m all_trec": ([te, "-m", "all_trec", str(qrels), str(run)], None),
            }
        cmds = {}
        for name, (te_cmd, ours) in cases.items():
            cmds[name, "trec_eval"] = (te_cmd, env)
            cmds[name, "tierank trec_eval"] = (ours or [*tierank, *te_cmd[1:]], env)
            if base_env is not None:
                cmds[name, "baseline"] = (ours or [*tierank, *te_cmd[1:]], base_env)
        cmds["test files, official", "import numpy, pyarrow"] = (
            [sys.executable, "-c", "import numpy, pyarrow"],
            env,
        )
        times: dict = {k: [] for k in cmds}
        for c, e in cmds.values():  # warm the caches (the bytecode cache too)
            _measure(c, e)
        for rep in range(
            args.reps
        ):  # (every other rep in reverse: no command always follows another)
            for k, (c, e) in list(cmds.items())[:: 1 if rep % 2 == 0 else -1]:
                times[k].append(_measure(c, e))

        def med(key, i=0):
            return statistics.median(t[i] for t in times[key])

        print(f"{'case':<24} {'command':<24} {'wall s':>8} {'ratio':>7} {'CPU s':>8} {'ratio':>7}")
        for name in cases:
            base, base_cpu = med((name, "trec_eval")), med((name, "trec_eval"), 1)
            for who in ("trec_eval", "tierank trec_eval", "baseline", "import numpy, pyarrow"):
                if (name, who) in times:
                    w, c = med((name, who)), med((name, who), 1)
                    print(
                        f"{name:<24} {who:<24} {w:8.3f} {w / base:7.2f}x {c:8.3f} {c / base_cpu:7.2f}x"
                    )
        floor = med(("test files, official", "import numpy, pyarrow"))
        ours_small = med(("test files, official", "tierank trec_eval"))
        floor_cpu = med(("test files, official", "import numpy, pyarrow"), 1)
        ours_cpu = med(("test files, official", "tierank trec_eval"), 1)
        print(
            f"tierank trec_eval on the test files / import numpy, pyarrow: {ours_small / floor:.2f}x "
            f"(CPU {ours_cpu / floor_cpu:.2f}x)"
        )
        if base_env is not None:
            theirs = med(("test files, official", "baseline"))
            theirs_cpu = med(("test files, official", "baseline"), 1)
            print(
                f"baseline on the test files / import numpy, pyarrow: {theirs / floor:.2f}x "
                f"(CPU {theirs_cpu / floor_cpu:.2f}x)"
            )
        if base_env is not None:  # the evaluation alone (no start-up), CPU time in one process
            print(f"{'case':<24} {'in process, CPU s':>18} {'baseline':>9} {'ratio':>7}")
            for name, (te_cmd, ours) in cases.items():
                argv = (ours or [*tierank, *te_cmd[1:]])[len(tierank) :]
                # ours, theirs, theirs, ours: neither always runs first (a later process reads
                # warmer caches); each side's two medians averaged
                mine, theirs = (
                    in_process(env, argv, args.reps),
                    in_process(base_env, argv, args.reps),
                )
                theirs = (theirs + in_process(base_env, argv, args.reps)) / 2
                mine = (mine + in_process(env, argv, args.reps)) / 2
                print(f"{name:<24} {mine:18.3f} {theirs:9.3f} {mine / theirs:7.2f}x")
        if not args.skip_pytrec and not args.test_files_only:
            compat_timing(folder, args.reps, "")
            if base_env is not None:  # the baseline's, in a process of its own
                sys.stdout.flush()
                cmd = [sys.executable, __file__, "--compat-only", "--reps", str(args.reps)]
                subprocess.run(cmd, env=base_env, check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
