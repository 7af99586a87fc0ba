"""Do the test tiers still bite?  Flip one line of the core at a time and say which tier catches it.

Each mutation is applied to a copy of the tree (the repository is never touched); the default tier
runs over the test folders of the core with ``-x``, and where it passes, the full tier.  A mutation
that neither catches is printed as ``none``: either a gap in the tests, or a mutation that cannot
change any result (an equivalent mutant; the table says which where it is known).

    python benchmarks/mutation_check.py                 # all mutations (about a minute each)
    python benchmarks/mutation_check.py "GMAP" "lexer"  # those whose name contains a word given

Prints a tab-separated table: mutation, file, tier that caught it, seconds, first failing test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (name, file, line as it is, line mutated)
MUTATIONS: list[tuple[str, str, str, str]] = [
    (
        "kernel: segment_cumsum sums reversed rows",
        "src/tierank/measures/kernels.py",
        "np.cumsum(block, axis=1, out=block)",
        "np.cumsum(block[:, ::-1], axis=1, out=block)",
    ),
    (
        "lexer: a leading blank not squeezed",
        "src/tierank/io/lexer.py",
        'if data[:1] == b" " or data[-1:] == b" ":',
        'if data[-1:] == b" ":',
    ),
    (
        "tie formula: RR expectation",
        "src/tierank/measures/rank.py",
        "inv = 1.0 / (cc + t + 1.0)",
        "inv = 1.0 / (cc + t + 1.5)",
    ),
    (
        "tie formula: Success variance halved",
        "src/tierank/measures/rank.py",
        "var[q] = (1.0 - p_none) * p_none",
        "var[q] = (1.0 - p_none) * p_none * 0.5",
    ),
    (
        "oblivious kernel: RR counts rank k",
        "src/tierank/measures/rank.py",
        "return np.where(rank < k, 1.0 / (rank + 1.0), 0.0)",
        "return np.where(rank <= k, 1.0 / (rank + 1.0), 0.0)",
    ),
    (
        "aggregator: GMAP floor",
        "src/tierank/measures/gmap.py",
        "MIN_GEO_MEAN = 0.00001",
        "MIN_GEO_MEAN = 0.0001",
    ),
    (
        # equivalent: positions are sorted by score descending within a query, so a later score is
        # never greater and '<' and '!=' mark the same boundaries
        "ties: group boundary '<' for '!=' (equivalent)",
        "src/tierank/ties/layout.py",
        "new[1:] |= ss[1:] != ss[:-1]",
        "new[1:] |= ss[1:] < ss[:-1]",
    ),
    (
        "ties: a new query does not start a tie group",
        "src/tierank/ties/layout.py",
        "np.not_equal(qi_s[1:], qi_s[:-1], out=new[1:])",
        "new[1:] = False",
    ),
    (
        "tie-break: trec_eval's docno order reversed",
        "src/tierank/ties/policy.py",
        'direction = "descending" if policy.kind == "trec_eval" else "ascending"',
        'direction = "ascending"',
    ),
    (
        "reader check: only NaN refused, not infinities",
        "src/tierank/io/readers.py",
        "not np.isfinite(score).all()",
        "np.isnan(score).all()",
    ),
    (
        "AP: cumulative relevant scaled",
        "src/tierank/measures/ap.py",
        "csum = np.concatenate(([0.0], np.cumsum(prep.relevant(self.rel))))",
        "csum = np.concatenate(([0.0], np.cumsum(prep.relevant(self.rel)) * 0.999))",
    ),
]
#: the tests of the core that the check runs (test folders and the doctests)
TESTS = [
    "tests/measures",
    "tests/ties",
    "tests/io",
    "tests/crosscheck",
    "tests/stream",
    "tests/cli/test_trec_eval_dropin.py",
    "tests/test_compute.py",
    "src/tierank",
]


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(name))


def _run(tree: Path, *extra: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    env.pop("TIERANK_TEST_TIER", None)
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", *extra]
        + TESTS,
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = p.stdout.splitlines()
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    last = [line for line in lines if line.strip()][-1:]
    return p.returncode, ((failed or last or [""])[0])[:160]


def main(words: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="tierank-mutation-") as tmp:
        tree = Path(tmp)
        _copy_tree(tree)
        print("mutation\tfile\tcaught by\tseconds\tfirst failing test", flush=True)
        for name, rel, old, new in MUTATIONS:
            if words and not any(w in name for w in words):
                continue
            path = tree / rel
            text = path.read_text(encoding="utf-8")
            if text.count(old) != 1:
                print(f"{name}\t{rel}\tline not found (the code moved)\t0\t", flush=True)
                continue
            path.write_text(text.replace(old, new), encoding="utf-8")
            try:
                t = time.perf_counter()
                rc, what = _run(tree)
                tier = "default" if rc == 1 else ""
                if not tier:
                    rc, what = _run(tree, "--full")
                    tier = "full" if rc == 1 else f"none (exit {rc})"
                print(f"{name}\t{rel}\t{tier}\t{time.perf_counter() - t:.0f}\t{what}", flush=True)
            finally:
                path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
