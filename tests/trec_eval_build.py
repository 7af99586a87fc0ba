"""trec_eval 10 compiled from its C source in the repository (``tests/vendor/trec_eval-10.0``): for the
conformance tests (fixture ``trec_eval_bin``) and the benchmarks (``benchmarks/bench_startup.py``).

The build is cached in the temporary folder under the hash of the source (and the compiler's name), so
it is compiled once per machine and source, not once per test session or per pytest-xdist worker; a
lock file serialises concurrent builders, and the binary is moved into place only when complete.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

TREC_EVAL_SOURCE = Path(__file__).resolve().parent / "vendor" / "trec_eval-10.0"
CACHE_ROOT = Path(tempfile.gettempdir()) / "tierank-trec_eval-cache"


class NoCompiler(RuntimeError):
    """make or a C compiler is missing: trec_eval cannot be built here."""


def source_hash(source: Path = TREC_EVAL_SOURCE, cc: str = "") -> str:
    """A digest of every file of ``source`` (relative path and bytes) and the compiler's name."""
    h = hashlib.sha256(cc.encode())
    for p in sorted(q for q in source.rglob("*") if q.is_file()):
        h.update(str(p.relative_to(source)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _compile(folder: Path, cc: str) -> Path:
    src = folder / "te"
    shutil.copytree(TREC_EVAL_SOURCE, src)
    for p in [src, *src.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    env = {**os.environ, "CC": os.environ.get("CC") or Path(cc).name}
    done = subprocess.run(["make", "-s", "-C", str(src)], capture_output=True, text=True, env=env)
    if done.returncode != 0 or not (src / "trec_eval").exists():
        raise RuntimeError(f"building trec_eval failed:\n{done.stdout}\n{done.stderr}")
    return src / "trec_eval"


def build_trec_eval(folder: Path | None = None, *, cache: bool = True) -> Path:
    """The path of trec_eval 10 built from ``tests/vendor`` (compiled once per source hash).

    With ``cache`` (the default) the binary lives in ``CACHE_ROOT/<hash>/trec_eval`` and ``folder`` is
    only used for the build itself; without it, the build and the binary are in ``folder``.  Raises
    :class:`NoCompiler` where make or a C compiler (cc or gcc) is missing, and RuntimeError with
    make's output where the build fails."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if shutil.which("make") is None or cc is None:
        raise NoCompiler(
            "building trec_eval 10 (tests/vendor/trec_eval-10.0) needs make and a C compiler (cc or gcc)"
        )
    if not cache:
        assert folder is not None
        return _compile(folder, cc)
    target = CACHE_ROOT / source_hash(cc=os.environ.get("CC") or Path(cc).name)
    binary = target / "trec_eval"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.is_file():
            return binary
        with tempfile.TemporaryDirectory(dir=CACHE_ROOT) as tmp:
            built = _compile(Path(tmp), cc)
            target.mkdir(exist_ok=True)
            staged = target / ".trec_eval.partial"
            shutil.copy2(built, staged)
            os.replace(staged, binary)
    return binary
