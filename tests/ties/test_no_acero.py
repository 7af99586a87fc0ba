"""The judgments are looked up without Arrow's join (issue 26): ``tierank eval`` imports neither
``pyarrow.acero`` nor ``pyarrow.dataset`` (and with them the S3 filesystem), and the lookup
(:class:`tierank.ties.judgments.Judgments`) finds exactly the pairs a join finds.

Asserted on ``sys.modules`` of a fresh interpreter, as ``tests/cli/test_startup.py`` does.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from tierank.errors import NoJudgedDocuments
from tierank.evaluate import condense
from tierank.io.model import Qrels, Run
from tierank.ties.judgments import Judgments

HEAVY = ("pyarrow.acero", "pyarrow._acero", "pyarrow.dataset", "pyarrow._dataset", "pyarrow._s3fs")


@pytest.mark.parametrize(
    "extra", [[], ["--unjudged", "bounds"], ["--candidates-only"], ["--condensed"], ["-J"]]
)
def test_eval_does_not_import_acero(tmp_path, extra):
    qrels, run = tmp_path / "q.trec", tmp_path / "r.trec"
    qrels.write_text("".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(3) for j in range(0, 20, 3)))
    run.write_text(
        "".join(
            f"q{i} Q0 d{j} {j + 1} {round(1 - j / 40, 1)} t\n" for i in range(3) for j in range(20)
        )
    )
    argv = ["eval", str(qrels), str(run), "-m", "P@5", "-m", "R@10", "-f", "jsonl", *extra]
    script = (
        f"import sys, json\nsys.argv[1:] = {argv!r}\nfrom tierank.cli import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    head, _, mods = p.stderr.rpartition("\nMODULES ")
    assert p.returncode == 0 and mods, p.stderr
    assert p.stdout.count("\n") >= 6
    assert not set(HEAVY) & set(json.loads(mods)), sorted(set(HEAVY) & set(json.loads(mods)))


def _joined(q, d, jq, jd, jg):
    """The reference: a dict of the judgments (the first one of a repeated pair wins)."""
    judged: dict = {}
    for i, (a, b) in enumerate(zip(jq, jd)):
        judged.setdefault((int(a), b), i)
    return [judged.get((int(a), b), -1) for a, b in zip(q, d)]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("encode", ["plain", "dictionary", "large"])
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("docs", [16, 80], ids=["mostly judged", "mostly unjudged"])
@pytest.mark.parametrize("wide", [False, True], ids=["int32 keys", "int64 keys"])
def test_lookup_matches_a_join(seed, encode, dense, docs, wide, monkeypatch):
    if not dense or wide:  # keys found by binary search, not in the dense table
        monkeypatch.setattr(Judgments, "DENSE_PER_ROW", -(1 << 40))
    rng = np.random.default_rng(seed)
    jq = rng.integers(0, 4, 40)
    jd = [f"d{x}" for x in rng.integers(0, 15, 40)]  # repeated pairs too
    jg = rng.integers(-1, 3, 40).astype(np.float64)
    q = rng.integers(0, 5, 200)
    if wide:  # query codes far apart: keys past 2**31
        jq, q = jq * 2**29, q * 2**29
    d = [f"d{x}" for x in rng.integers(0, docs, 200)]
    # (a pair nothing judges: most of them with 80 docids, looked up apart; few with 16)
    unknown = sum(int(a) > 3 * (2**29 if wide else 1) or b not in set(jd) for a, b in zip(q, d))
    assert (unknown > 100) == (docs == 80)
    docid = pa.array(d)
    if encode == "dictionary":
        docid = docid.dictionary_encode()
    elif encode == "large":
        docid = docid.cast(pa.large_string())
    want = _joined(q, d, jq, jd, jg)
    grade = np.array([jg[i] if i >= 0 else np.nan for i in want])
    j = Judgments(jq, pa.array(jd), jg)
    assert (j.nq * j.ndocs >= 2**31) == wide
    np.testing.assert_array_equal(
        j.grades(q, docid), grade
    )  # (grades first: its own sorted grades)
    assert j.lookup(q, docid).tolist() == want
    for rows in (
        np.arange(0, 200, 7),
        rng.permutation(200)[:150],
    ):  # few rows (taken), most rows (read)
        assert j.lookup(q[rows], docid, rows).tolist() == [want[i] for i in rows]
        np.testing.assert_array_equal(j.grades(q[rows], docid, rows), grade[rows])


def test_lookup_without_judgments():
    j = Judgments(np.zeros(0, np.int64), pa.array([], pa.string()), np.zeros(0))
    assert j.lookup(np.array([0, 1]), pa.array(["a", "b"])).tolist() == [-1, -1]
    assert np.isnan(j.grades(np.array([0]), pa.array(["a"]))).all()


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("negative_unjudged", [False, True])
def test_condense_keeps_the_rows_a_join_keeps(seed, negative_unjudged):
    """:func:`tierank.evaluate.condense` (``--condensed``, ``-J``) keeps the run's rows whose (query, document)
    pair the qrels judge (with ``negative_unjudged``, with a grade >= 0), in run order, as a semi join does."""
    rng = np.random.default_rng(seed)
    n, nj = (int(rng.integers(1, 300)), int(rng.integers(1, 80))) if seed < 6 else (3, seed - 5)
    rq = [f"q{x}" for x in rng.integers(0, 6, n)]
    rd = [f"d{x}" for x in rng.integers(0, 40, n)]
    jq = [f"q{x}" for x in rng.integers(1, 8, nj)]  # q0 never judged, q6 and q7 not in the run
    jd = [f"d{x}" for x in rng.integers(0, 40, nj)]
    grade = rng.integers(-1, 3, nj).astype(np.float64)
    qid = pa.array(rq).dictionary_encode() if seed % 2 else pa.array(rq)
    run = Run(
        qid=qid,
        docid=pa.array(rd),
        score=rng.random(n),
        rank=np.arange(n, dtype=np.float64),
        source="r",
    )
    qrels = Qrels(qid=pa.array(jq), docid=pa.array(jd), grade=grade, source="q")
    judged = {(a, b) for a, b, g in zip(jq, jd, grade) if g >= 0 or not negative_unjudged}
    want = [i for i in range(n) if (rq[i], rd[i]) in judged]
    if not want:
        with pytest.raises(NoJudgedDocuments):
            condense(run, qrels, negative_unjudged)
        return
    got = condense(run, qrels, negative_unjudged)
    assert got.qid.to_pylist() == [rq[i] for i in want] and got.docid.to_pylist() == [
        rd[i] for i in want
    ]
    assert got.qid.type == pa.string() and got.source == "r"
    np.testing.assert_array_equal(got.score, run.score[want])
    np.testing.assert_array_equal(got.rank, run.rank[want])
    # the rows Arrow's semi join keeps (the reference the lookup replaced)
    t = pa.table({"q": pa.array(rq), "d": pa.array(rd), "i": np.arange(n)})
    qt = pa.table({"q": pa.array(jq), "d": pa.array(jd)}).filter(
        pa.array(grade >= 0) if negative_unjudged else pa.array(np.ones(nj, bool))
    )
    assert (
        np.sort(t.join(qt, keys=["q", "d"], join_type="left semi").column("i").to_numpy()).tolist()
        == want
    )


@pytest.mark.parametrize("dense", [True, False])
def test_query_codes_past_the_judged_ones_are_unjudged(dense, monkeypatch):
    """A query code nothing judges reads no judgment, however large (no wrap to a judged query's
    key in the keys' int32)."""
    if not dense:
        monkeypatch.setattr(Judgments, "DENSE_PER_ROW", -(1 << 40))
    j = Judgments(np.array([0, 1]), pa.array(["a", "b"]), np.array([1.0, 2.0]))
    q = np.array([0, 1, 2, 2**31, 2**32, 2**32 + 1, 1])
    docid = pa.array(["a", "b", "a", "a", "a", "b", "a"])
    np.testing.assert_array_equal(
        j.grades(q, docid), [1.0, 2.0, np.nan, np.nan, np.nan, np.nan, np.nan]
    )
    assert j.lookup(q, docid).tolist() == [0, 1, -1, -1, -1, -1, -1]
