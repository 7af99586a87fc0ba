"""trec_eval 10's own test commands (its Makefile's ``quicktest``), replayed line for line against the real
binary (built from ``tests/vendor/trec_eval-10.0``, fixture ``trec_eval_bin``), and the parameterised
measures they use walked on tied runs.

Every quicktest command that reads TREC qrels and results is in :data:`QUICKTEST`, with the expected
output file it is checked against in trec_eval's own suite; ``tierank eval --format trec_eval`` with the
same arguments must print exactly what the binary prints.  The others read trec_eval's preference and
judgment-group formats (``-R prefs``, ``-R qrels_prefs``, ``-R qrels_jg``) or z-scores (``-Z``), which
tierank refuses in one line (:data:`REFUSED`, ``test_refused_options_say_what_is_supported``).
``qrels.test.with-comments`` is not among the test files of the repository: comment lines are checked
by ``test_trec_eval_binary.py::test_comment_lines_are_skipped_as_trec_eval_skips_them``.

:data:`PARAMETERS` walks the parameterised measures (relstring.N, 11pt_avg with levels in any order,
cutoffs trec_eval reads with ``atol``, gain maps of ndcg, G, ndcg_rel and Rndcg) per query, with
``-l 2`` and ``-M 10``, on trec_eval's graded test pair and on the rag24 candidates rounded to
bfloat16 (ties everywhere: the tie-oblivious value is trec_eval's under its tie-break).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from realdata import DATA

TE = "trec_eval/"

#: (out file of trec_eval's suite, arguments): the quicktest commands on TREC qrels and results
QUICKTEST = [
    (
        "out.test.meas_params",
        [
            "-q",
            "-miprec_at_recall..10,.20,.25,.75,.50",
            "-m",
            "P.5,7,3",
            "-m",
            "recall.20,2000",
            "-m",
            "Rprec_mult.5.0,0.2,0.35",
            "-mutility.2,-1,0,0",
            "-m",
            "11pt_avg..25,.5,.75",
            "-mndcg.1=3,2=9,4=4.5",
            "-mndcg_cut.10,20,23.4",
            "-msuccess.2,5,20",
            TE + "qrels.test",
            TE + "results.test",
        ],
    ),
    (
        "out.test.aql",
        [
            "-m",
            "all_trec",
            "-mrelstring.20",
            "-q",
            "-l2",
            TE + "qrels.rel_level",
            TE + "results.test",
        ],
    ),
    ("out.test", [TE + "qrels.test", TE + "results.test"]),
    ("out.comment.test", [TE + "qrels.comment.test", TE + "results.comment.test"]),
    ("out.test.a", ["-m", "all_trec", TE + "qrels.test", TE + "results.test"]),
    ("out.test.aq", ["-m", "all_trec", "-q", TE + "qrels.test", TE + "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", TE + "qrels.test", TE + "results.trunc"]),
    (
        "out.test.aqcM",
        ["-m", "all_trec", "-q", "-c", "-M100", TE + "qrels.test", TE + "results.trunc"],
    ),
]

#: quicktest's other commands: what tierank refuses, and the words its one-line error must hold
REFUSED = [
    (["-m", "all_prefs", "-q", "-R", "prefs"], "-R prefs"),
    (["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "-R qrels_prefs"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "-R qrels_jg"),
    (["-q", "-m", "all_trec", "-Z", "zscores_file"], "-Z zscores_file"),
    (["-m", "all_prefs"], "all_prefs"),
    (["-m", "qrels_jg"], "qrels_jg"),
]

#: parameterised measures beyond the defaults
PARAMETERS = [
    "relstring.20",
    "relstring.3.7",
    "11pt_avg..25,.5,.75",
    "11pt_avg.0.5,0.2,0.9,0,0.5",
    "ndcg_cut.10,20,23.4",
    "P.2.9,5",
    "G.1=2,2=5",
    "G.0=1,1=-1",
    "ndcg_rel.1=2,2=5",
    "ndcg_rel.0=1",
    "Rndcg.2=3",
    "Rndcg.0=0.5,1=3",
    "ndcg.1=-1,2=4",
    "ndcg.0=-1,3=-2",
]
PAIRS = {
    "te-rel_level": ("trec_eval/qrels.rel_level", "trec_eval/results.test"),
    "rag24-bf16": ("rag24/qrels.txt", "rag24/candidates.run"),
}


def _run_te(binary: Path, args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, cwd=cwd)


def _run_tierank(args, cwd: Path) -> tuple[int, str, str]:
    """``tierank eval --format trec_eval ARGS`` in this process, relative paths read from ``cwd``."""
    from helpers import invoke

    res = invoke("eval", "--format", "trec_eval", *args, check=False, cwd=cwd)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.parametrize("out, args", QUICKTEST, ids=[o for o, _ in QUICKTEST])
def test_quicktest_command_replays(trec_eval_bin, out, args):
    te = _run_te(trec_eval_bin, args, DATA)
    assert te.returncode == 0, te.stderr
    code, stdout, stderr = _run_tierank(args, DATA)
    assert code == 0, stderr
    assert stdout.splitlines() == te.stdout.splitlines()
    assert len(te.stdout.splitlines()) > 3


@pytest.fixture(scope="module")
def bf16_run(tmp_path_factory) -> Path:
    """The rag24 candidates with their scores rounded to bfloat16, written as exact decimals."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    out = tmp_path_factory.mktemp("quicktest") / "candidates.bf16.run"
    lines = []
    for line in (DATA / PAIRS["rag24-bf16"][1]).read_text().splitlines():
        f = line.split()
        s = float(np.float64(f[4]).astype(ml_dtypes.bfloat16).astype(np.float64))
        lines.append(" ".join([f[0], f[1], f[2], f[3], repr(s), f[5]]))
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.parametrize("flags", [(), ("-l", "2"), ("-M", "10")], ids=["default", "-l 2", "-M 10"])
@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("measure", PARAMETERS)
def test_parameterised_measures_print_what_trec_eval_prints(
    trec_eval_bin, bf16_run, measure, pair, flags
):
    qrels, run = PAIRS[pair]
    run_path = bf16_run if pair.endswith("bf16") else DATA / run
    args = ["-q", *flags, "-m", measure, str(DATA / qrels), str(run_path)]
    te = _run_te(trec_eval_bin, args, DATA)
    assert te.returncode == 0, te.stderr
    code, stdout, stderr = _run_tierank(args, DATA)
    assert code == 0, stderr
    assert stdout.splitlines() == te.stdout.splitlines()


@pytest.mark.parametrize("args, named", REFUSED, ids=[n for _, n in REFUSED])
def test_refused_options_say_what_is_supported(args, named):
    """One line on stderr naming the option and what tierank reads instead; exit 2."""
    code, stdout, stderr = _run_tierank([*args, TE + "qrels.test", TE + "results.test"], DATA)
    assert code == 2 and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "not supported" in lines[0], stderr


def test_summary_quirks_are_trec_eval_s_in_its_layout_only(trec_eval_bin, tmp_path):
    """``num_rel`` under ``-c``: trec_eval's summary counts the judgments of grade > 0 of every qrels
    query whatever ``-l`` says (4463 on qrels.comment.test, against a per-query sum of 2082 with
    ``-l 2``); ``Rndcg`` of a query with relevant documents but no positive gain (``-l 0`` and only
    grade 0, or a gain map giving 0) is trec_eval's 0/0, ``-nan``, per query and in the summary.
    ``--format trec_eval`` prints both as trec_eval does; jsonl keeps the sums and 0."""
    import json

    q, r = TE + "qrels.comment.test", TE + "results.comment.test"
    for flags in (["-c", "-l", "2"], ["-c", "-l", "3"], ["-c", "-l", "0"], ["-c"], ["-l", "2"]):
        args = [*flags, "-m", "num_rel", "-m", "num_rel_ret", "-m", "map", q, r]
        te = _run_te(trec_eval_bin, args, DATA)
        code, stdout, stderr = _run_tierank(args, DATA)
        assert code == 0 and stdout.splitlines() == te.stdout.splitlines(), (flags, stderr)
    te = _run_te(trec_eval_bin, ["-c", "-l", "2", "-m", "num_rel", q, r], DATA)
    assert te.stdout.split("\t")[-1].strip() == "4463"
    code, stdout, _ = _run_tierank(["-c", "-l", "2", "-m", "num_rel", "-f", "jsonl", q, r], DATA)
    recs = [json.loads(x) for x in stdout.splitlines()]
    per_query = sum(x["oblivious"] for x in recs if x["query"] != "all")
    assert per_query == 2082 and [x["oblivious"] for x in recs if x["query"] == "all"] == [2082]

    (tmp_path / "qrels").write_text("q1 0 a 0\nq1 0 b 0\nq2 0 c 1\nq2 0 d 0\n")
    (tmp_path / "run").write_text(
        "q1 Q0 a 1 0.5 r\nq1 Q0 x 2 0.5 r\nq2 Q0 c 1 0.9 r\nq2 Q0 d 2 0.1 r\n"
    )
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    for args in (
        ["-q", "-l", "0", "-m", "Rndcg", "-m", "ndcg_rel", "-m", "G"],
        ["-q", "-m", "Rndcg.1=0", "-m", "Rndcg.0=2"],
        ["-q", "-l", "0", "-m", "Rndcg", "-c"],
    ):
        te = _run_te(trec_eval_bin, [*args, *files], DATA)
        assert "-nan" in te.stdout
        code, stdout, stderr = _run_tierank([*args, *files], DATA)
        assert code == 0 and stdout.splitlines() == te.stdout.splitlines(), (args, stderr)
    code, stdout, _ = _run_tierank(["-q", "-l", "0", "-m", "Rndcg", "-f", "jsonl", *files], DATA)
    recs = {x["query"]: x for x in map(json.loads, stdout.splitlines())}
    assert recs["q1"]["oblivious"] == 0.0 and recs["q2"]["oblivious"] > 0.0
    assert recs["all"]["oblivious"] == pytest.approx(recs["q2"]["oblivious"] / 2)
