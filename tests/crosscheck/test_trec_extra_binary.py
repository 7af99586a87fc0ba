"""infAP, utility (with its coefficients and -N), Rprec_mult, relative_P and set_relative_P line for line
against the real trec_eval 10 (built from ``tests/vendor/trec_eval-10.0``) on qrels with sampled pools:
``-1`` grades (pooled, not judged), unpooled documents, ties everywhere.  The real runs of
``test_trec_eval_binary.py`` have no ``-1`` grade, so infAP's three document classes are exercised here.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from crosscheck.test_trec_eval_binary import lines_of, run_te, run_tierank

ARGS = [
    ["-m", "infAP"],
    ["-m", "utility"],
    ["-m", "utility.2,-1,0.5,0.1", "-N", "500"],
    ["-m", "Rprec_mult"],
    ["-m", "Rprec_mult.0.05,0.5,3"],
    ["-m", "relative_P"],
    ["-m", "relative_P.1,3,7"],
    ["-m", "set_relative_P"],
    ["-m", "all_trec", "-M", "7"],
    ["-m", "infAP", "-m", "set_relative_P", "-l", "2"],
]


def write_sampled(tmp: Path, seed: int) -> tuple[Path, Path]:
    """A qrels with -1 grades (pooled, unsampled) and a run with heavy ties."""
    rng = random.Random(seed)
    q_lines, r_lines = [], []
    for q in range(1, 9):
        docs = [f"D{q}-{i}" for i in range(rng.randint(3, 25))]
        for d in docs + [f"X{q}-{i}" for i in range(rng.randint(0, 4))]:
            if rng.random() < 0.75:
                q_lines.append(f"{q} 0 {d} {rng.choice([-1, -1, 0, 0, 1, 1, 2])}")
        for i, d in enumerate(docs):
            r_lines.append(f"{q} Q0 {d} {i + 1} {rng.choice([1.0, 2.0, 2.5, 3.0])} tag")
    qrels, run = tmp / f"qrels{seed}", tmp / f"run{seed}"
    qrels.write_text("\n".join(q_lines) + "\n")
    run.write_text("\n".join(r_lines) + "\n")
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lines_match_trec_eval(trec_eval_bin, tmp_path, seed):
    qrels, run = write_sampled(tmp_path, seed)
    for args in ARGS:
        te = run_te(trec_eval_bin, ["-q", *args, qrels, run])
        assert te.returncode == 0, te.stderr
        code, out, err = run_tierank("-q", "-f", "trec_eval", *args, qrels, run)
        assert code == 0, err
        theirs = lines_of(te.stdout)
        if args[1] == "all_trec":  # the measures tierank has: every line it prints is trec_eval's
            ours = lines_of(out)
            assert ours == [ln for ln in theirs if ln in set(ours)] and len(ours) > 100, args
            names = {ln.split("\t")[0].rstrip() for ln in ours}
            for name in ("infAP", "utility", "Rprec_mult_0.20", "relative_P_5", "set_relative_P"):
                assert name in names, name
        else:
            assert lines_of(out) == theirs, (args, out, te.stdout)
