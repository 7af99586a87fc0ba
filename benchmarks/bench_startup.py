"""Start-up: ``tierank --help``, ``tierank --version`` and ``tierank eval`` of a 1,000-line run, end to end.

Side by side in one run, interleaved (one repetition of every command, then the next), medians:
* ``python -c "import typer"``: the floor of a typer command line (``--help`` and ``--version``);
* ``tierank --help`` and ``tierank --version``;
* ``python -c "import numpy, pyarrow"``: the floor of any Python evaluator built on them;
* ``tierank eval QRELS RUN -m nDCG@10`` (default table format) and with ``-f jsonl``;
* ``python -c "import tierank.cli"`` (the start-up alone);
* trec_eval 10 on the same files, built from ``tests/vendor/trec_eval-10.0`` (skipped, with the
  reason, where make or a C compiler is missing).

Each command runs as a fresh process with Python's bytecode cache on (an installed tierank has its
``.pyc`` files; the cache goes to a temporary folder, warmed before timing, so that an environment
that sets ``PYTHONDONTWRITEBYTECODE`` does not time the compiler).  Wall time and the children's CPU
time (user + system) are both reported: on a machine loaded by other work, CPU time moves less.

    python benchmarks/bench_startup.py              # 41 repetitions
    python benchmarks/bench_startup.py --reps 11    # quick check
    python benchmarks/bench_startup.py --baseline /path/to/other/src   # also time another checkout
    python benchmarks/bench_startup.py --baseline SRC --baseline-python OTHER_VENV/bin/python
        # ... run by another interpreter (another typer, say), with its own floors
    python benchmarks/bench_startup.py --phases 11  # also: where a small run's CPU time goes

``--phases N`` runs ``tierank eval`` (table and jsonl) N more times, each in a fresh process that marks its CPU
time (``time.process_time``) after each step of the start-up (numpy and pyarrow, ``pyarrow._compute``, the
rest of ``import tierank``, typer, ``import tierank.cli``) and after the command, and lists the modules of
note that the command imports as it runs (pyarrow's lazy parts, numpy.ma, pandas, rich, pydantic: what
typer 0.29 imports to convert any option value that is not a flag): medians, in milliseconds.
"""

from __future__ import annotations

import argparse
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


def generate(folder: Path, nq: int = 10, nd: int = 100, seed: int = 0) -> tuple[Path, Path]:
    """A run of ``nq * nd`` lines (scores with 2 decimals: ties) and qrels judging every 7th document."""
    import random

    rng = random.Random(seed)
    qrels, run = folder / "small.qrels", folder / "small.run"
    with open(qrels, "w") as q, open(run, "w") as r:
        for i in range(nq):
            for j in range(nd):
                r.write(f"q{i} Q0 d{j} {j + 1} {round(rng.random(), 2)} small\n")
                if j % 7 == 0:
                    q.write(f"q{i} 0 d{j} {j % 3}\n")
    return qrels, run


def build_trec_eval(folder: Path) -> Path | None:
    """trec_eval 10 compiled into ``folder`` (as the tests build it: ``tests/trec_eval_build.py``), or None
    with the reason printed."""
    sys.path.insert(0, str(REPO / "tests"))
    from trec_eval_build import build_trec_eval as build

    try:
        return build(folder)
    except RuntimeError as e:  # (NoCompiler too)
        print(f"trec_eval: skipped ({str(e).strip()[:200]})", file=sys.stderr)
        return None


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run of ``cmd``; its output is checked and dropped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-500:]}"
        )
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


#: one fresh process of ``--phases``: CPU milliseconds after each step, then the modules of note imported by the command
PHASES_CODE = r"""
import json, os, sys, time
marks = []
def mark(name):
    marks.append((name, time.process_time() * 1000))
mark("interpreter")
import numpy, pyarrow; mark("import numpy, pyarrow")
import pyarrow._compute; mark("import pyarrow._compute (Arrow's kernels, as tierank.compute)")
import tierank; mark("rest of import tierank")
import typer; mark("import typer")
import tierank.cli; mark("rest of import tierank.cli")
before = set(sys.modules)
sys.argv = ["tierank", *sys.argv[1:]]
sys.stdout = open(os.devnull, "w")
try:
    tierank.cli.main()
except SystemExit as e:
    assert not e.code, e.code
mark("the command (converting the options; reading, evaluating, output)")
NOTE = ("numpy.ma", "pyarrow.acero", "pyarrow.dataset", "dateutil", "pandas", "rich.console",
        "rich.table", "tierank.report.formats.grouped", "tierank.io.writers", "pydantic",
        "importlib.metadata")
sys.stderr.write(json.dumps({"marks": marks, "imported": [m for m in NOTE if m in sys.modules and m not in before]}))
"""


def typer_version(py: str) -> str:
    """The version of typer that the interpreter ``py`` imports."""
    done = subprocess.run(
        [py, "-c", "from importlib.metadata import version; print(version('typer'))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "?"


def phases(py: str, env: dict, qrels: Path, run: Path, reps: int) -> list[str]:
    """The lines that say where the CPU time of a small ``tierank eval`` goes (see ``--phases``)."""
    lines = []
    for fmt in ("table", "jsonl"):
        argv = [
            "eval",
            str(qrels),
            str(run),
            "-m",
            "nDCG@10",
            *(["-f", fmt] if fmt != "table" else []),
        ]
        steps: dict[str, list[float]] = {}
        imported: set[str] = set()
        for _ in range(reps + 1):  # the first warms the caches
            done = subprocess.run(
                [py, "-c", PHASES_CODE, *argv], env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"--phases failed: {done.stderr[-500:]}")
            out = json.loads(done.stderr[done.stderr.rindex("{") :])
            prev = 0.0
            for name, ms in out["marks"]:
                steps.setdefault(name, []).append(ms - prev)
                prev = ms
            imported.update(out["imported"])
        total = sum(statistics.median(v) for v in steps.values())
        lines += [
            "",
            f"tierank eval{' -f ' + fmt if fmt != 'table' else ''}: CPU ms per step, medians of {reps} "
            f"(total of medians {total:.0f} ms)",
            "",
            "| step | CPU (ms) |",
            "|---|---:|",
        ]
        lines += [f"| {name} | {statistics.median(v):.1f} |" for name, v in steps.items()]
        lines.append(
            f"imported by the command as it runs: {', '.join(sorted(imported)) or 'none of note'}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=41, help="repetitions of each command (default 41)")
    ap.add_argument(
        "--baseline", type=Path, help="another checkout's src folder: its tierank eval is timed too"
    )
    ap.add_argument(
        "--baseline-python",
        type=Path,
        help="the interpreter of the baseline's commands (another environment: another typer, say); "
        "its own import typer and import numpy, pyarrow are timed as the baseline's floors",
    )
    ap.add_argument(
        "--phases",
        type=int,
        default=0,
        metavar="N",
        help="also N runs that show where a small run's CPU time goes, step by step (default 0: not)",
    )
    args = ap.parse_args(argv)
    if args.baseline_python is not None and args.baseline is None:
        ap.error("--baseline-python needs --baseline")
    py = sys.executable
    base_py = str(args.baseline_python or py)
    with tempfile.TemporaryDirectory(prefix="tierank-startup-") as tmp:
        folder = Path(tmp)
        qrels, run = generate(folder)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")

        def with_src(src: Path) -> dict:
            return {
                **env,
                "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])]),
            }

        here = with_src(REPO / "src")
        eval_args = ["-m", "tierank.cli", "eval", str(qrels), str(run), "-m", "nDCG@10"]
        commands: dict[str, tuple[list[str], dict]] = {
            "python -c 'import typer'": ([py, "-c", "import typer"], env),
            "tierank --help": ([py, "-m", "tierank.cli", "--help"], here),
            "tierank --version": ([py, "-m", "tierank.cli", "--version"], here),
            "python -c 'import numpy, pyarrow'": ([py, "-c", "import numpy, pyarrow"], env),
            "python -c 'import tierank.cli'": ([py, "-c", "import tierank.cli"], here),
            "tierank eval (table)": ([py, *eval_args], here),
            "tierank eval -f jsonl": ([py, *eval_args, "-f", "jsonl"], here),
        }
        if args.baseline is not None:
            if args.baseline_python is not None:
                commands["baseline: python -c 'import typer'"] = (
                    [base_py, "-c", "import typer"],
                    env,
                )
                commands["baseline: python -c 'import numpy, pyarrow'"] = (
                    [base_py, "-c", "import numpy, pyarrow"],
                    env,
                )
            commands["baseline: tierank --help"] = (
                [base_py, "-m", "tierank.cli", "--help"],
                with_src(args.baseline),
            )
            commands["baseline: tierank --version"] = (
                [base_py, "-m", "tierank.cli", "--version"],
                with_src(args.baseline),
            )
            commands["baseline: tierank eval (table)"] = (
                [base_py, *eval_args],
                with_src(args.baseline),
            )
            commands["baseline: tierank eval -f jsonl"] = (
                [base_py, *eval_args, "-f", "jsonl"],
                with_src(args.baseline),
            )
        te = build_trec_eval(folder)
        if te is not None:
            commands["trec_eval -m ndcg_cut.10"] = (
                [str(te), "-m", "ndcg_cut.10", str(qrels), str(run)],
                env,
            )
        for cmd, e in commands.values():  # warm the page cache and the bytecode cache
            timed(cmd, e)
            timed(cmd, e)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(args.reps):
            for name, (cmd, e) in commands.items():
                w, c = timed(cmd, e)
                walls[name].append(w)
                cpus[name].append(c)
        breakdown = phases(py, here, qrels, run, args.phases) if args.phases else []
    load = os.getloadavg()
    print(
        f"{args.reps} interleaved repetitions, medians; {os.cpu_count()} cores, load average "
        f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; Python {sys.version.split()[0]}; run: 1,000 lines, 10 queries"
    )
    print(f"typer {typer_version(py)} ({py})")
    if args.baseline_python is not None:
        print(f"baseline: typer {typer_version(base_py)} ({base_py})")
    print()
    print(
        "| command | wall (s) | x import typer | x import numpy, pyarrow | CPU (s) | x import typer (CPU) "
        "| x import numpy, pyarrow (CPU) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in commands:
        # the baseline's rows against its own interpreter's floors where it has one
        prefix = "baseline: " if name.startswith("baseline: ") and args.baseline_python else ""
        floor = statistics.median(walls[f"{prefix}python -c 'import numpy, pyarrow'"])
        floor_cpu = statistics.median(cpus[f"{prefix}python -c 'import numpy, pyarrow'"])
        typer_floor = statistics.median(walls[f"{prefix}python -c 'import typer'"])
        typer_cpu = statistics.median(cpus[f"{prefix}python -c 'import typer'"])
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(
            f"| {name} | {w:.3f} | {w / typer_floor:.2f} | {w / floor:.2f} | {c:.3f} | {c / typer_cpu:.2f} "
            f"| {c / floor_cpu:.2f} |"
        )
    for line in breakdown:
        print(line)
    print(unindexed())
    return 0


def unindexed() -> str:
    """The family modules that the lazy registry's index (``tierank.measures.lazy.MODULES``) does
    not list: a name of theirs is found by importing every module of ``tierank.measures``, a
    start-up cost of ``tierank eval -m NAME`` (correct either way; listing them spares it)."""
    import pkgutil

    import tierank.measures
    from tierank.measures.lazy import MODULES

    registered = {cls.__module__.rpartition(".")[2] for cls in tierank.measures.REGISTRY.values()}
    modules = {m.name for m in pkgutil.iter_modules(tierank.measures.__path__)}
    missing = sorted((registered & modules) - set(MODULES))
    return (
        "family modules outside the lazy index (measures/lazy.py MODULES; a lookup of their names "
        f"imports every family module): {', '.join(missing) or 'none'}"
    )


if __name__ == "__main__":
    sys.exit(main())
