"""trec_eval 10 compiled from its C source in the repository (``tests/vendor/trec_eval-10.0``): for the
conformance tests (fixture ``trec_eval_bin``) and the benchmarks (``benchmarks/bench_startup.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

TREC_EVAL_SOURCE = Path(__file__).resolve().parent / "vendor" / "trec_eval-10.0"


class NoCompiler(RuntimeError):
    """make or a C compiler is missing: trec_eval cannot be built here."""


def build_trec_eval(folder: Path) -> Path:
    """The path of trec_eval 10 built in ``folder`` (a copy of the source, made writable, then ``make``).

    Raises :class:`NoCompiler` where make or a C compiler (cc or gcc) is missing, and RuntimeError with
    make's output where the build fails."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if shutil.which("make") is None or cc is None:
        raise NoCompiler("building trec_eval 10 (tests/vendor/trec_eval-10.0) needs make and a C compiler (cc or gcc)")
    src = folder / "te"
    shutil.copytree(TREC_EVAL_SOURCE, src)
    for p in [src, *src.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    env = {**os.environ, "CC": os.environ.get("CC") or Path(cc).name}
    done = subprocess.run(["make", "-s", "-C", str(src)], capture_output=True, text=True, env=env)
    if done.returncode != 0 or not (src / "trec_eval").exists():
        raise RuntimeError(f"building trec_eval failed:\n{done.stdout}\n{done.stderr}")
    return src / "trec_eval"
