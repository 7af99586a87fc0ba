"""``tierank trec_eval``: trec_eval's command line without the binary (the binary itself:
``tests/crosscheck/test_trec_eval_swap.py``).

Byte for byte against the expected outputs of trec_eval's own test suite (``out.test*``, in the
repository's test data), trec_eval's argument reading (getopt permutation, long options, ``atol``),
the tie note (on stderr, exactly when a printed value's range over tie orderings reaches 0.00005,
stdout unchanged) on hand-built runs, and the labels of several runs.
"""

from __future__ import annotations

import io
import json

import pytest

from realdata import DATA
from tierank.cli.trec_eval import atol, parse
from tierank.cli.trec_eval import run as trec_eval

TE = DATA / "trec_eval"


def ours(*args) -> tuple[int, bytes, str]:
    out, err = io.BytesIO(), io.StringIO()
    code = trec_eval([str(a) for a in args], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "expected, args",
    [
        ("out.test", []),
        ("out.test.a", ["-m", "all_trec"]),
        ("out.test.aq", ["-m", "all_trec", "-q"]),
        ("out.test.aq", ["-q", "--measure=all_trec"]),
        ("out.test.aq", ["FILES", "-m", "all_trec", "-q"]),
    ],
)
def test_trec_eval_suites_expected_outputs(expected, args):
    """trec_eval's suite's expected files, byte for byte (flags anywhere, long or short)."""
    files = [TE / "qrels.test", TE / "results.test"]
    argv = [*files, *args[1:]] if args[:1] == ["FILES"] else [*args, *files]
    code, out, err = ours(*argv)
    assert code == 0, err
    assert out == (TE / expected).read_bytes()
    assert err == ""  # results.test has no tie that moves a printed value


def test_comment_pair_expected_output():
    code, out, _ = ours(TE / "qrels.comment.test", TE / "results.comment.test")
    assert code == 0
    assert out == (TE / "out.comment.test").read_bytes()


def test_getopt_reading():
    a = parse(["q", "-qm", "P.5", "r", "-l2", "--Judged", "-M", "10x", "-n", "-N", "7"])
    assert (a.files, a.per_query, a.measures, a.rel, a.judged_only) == (
        ["q", "r"],
        True,
        ["P.5"],
        2,
        True,
    )
    assert (a.max_depth, a.summary, a.docs_in_collection) == (10, False, 7)
    assert atol("3.7") == 3 and atol("abc") == 0 and atol("-2") == -2


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["-x"], 1, "trec_eval: invalid option -- 'x'"),
        (["-m"], 1, "trec_eval: option requires an argument -- 'm'"),
        (["-m", "nosuch.3"], 1, "trec_eval: illegal measure 'nosuch'"),
        (["-m", "prefs_simp"], 2, "not implemented"),
        (["-R", "prefs"], 2, "-R prefs"),
        (["-Z", "zfile"], 2, "-Z"),
        (["-M", "0"], 2, "-M 0"),
        (["-T", "x"], 2, "trec_eval: Illegal retrieval results format 'x'"),
    ],
)
def test_refusals(argv, code, message):
    got, out, err = ours(TE / "qrels.test", TE / "results.test", *argv)  # options after: getopt
    assert (got, out) == (code, b"")
    assert message in err


def test_usage_without_two_files():
    code, out, err = ours("-q", TE / "qrels.test")
    assert (code, out) == (1, b"")
    assert err.startswith("Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n")


def test_bad_file_is_one_located_line_exit_2(tmp_path):
    bad = tmp_path / "run"
    bad.write_text("q1 Q0 d1 1 notanumber tag\n")
    code, out, err = ours(TE / "qrels.test", bad)
    assert (code, out) == (2, b"")
    assert len(err.splitlines()) == 1 and str(bad) in err and "Traceback" not in err


def _files(tmp_path, run: str, qrels: str):
    (tmp_path / "run").write_text(run)
    (tmp_path / "qrels").write_text(qrels)
    return tmp_path / "qrels", tmp_path / "run"


def test_tie_note_names_the_measures_and_queries(tmp_path):
    """q1: the relevant a tied with the nonrelevant b at ranks 1-2: P_1 is 0 or 1, map 1/2 or 1;
    q2: no tie.  The note names map and P_1, one query of two, and the command."""
    qrels, run = _files(
        tmp_path,
        "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq2 Q0 x 1 0.9 t\nq2 Q0 y 2 0.1 t\n",
        "q1 0 a 1\nq1 0 b 0\nq2 0 x 1\n",
    )
    code, out, err = ours("-q", "-m", "map", "-m", "P.1", "-m", "num_ret", qrels, run)
    assert code == 0
    note = err.splitlines()
    assert len(note) == 1
    assert note[0].split("): ")[1].split(";")[0] == "map, P_1"  # num_ret: no ordering moves it
    assert "1 of 2 queries" in note[0]
    assert note[0].endswith(f": tierank eval -q -m map -m P.1 -m num_ret {qrels} {run}")
    # that command runs, and its records hold q1's expected value, min and max
    from typer.testing import CliRunner

    from tierank.cli import app

    shown = note[0].rsplit(": tierank ", 1)[1].split()  # eval -q -m ... QRELS RUN
    res = CliRunner().invoke(app, [*shown, "-f", "jsonl"])
    assert res.exit_code == 0, res.stderr
    rec = next(
        r
        for r in map(json.loads, res.stdout.splitlines())
        if (r["query"], r["measure"]) == ("q1", "P@1")
    )
    assert (rec["expected"], rec["min"], rec["max"]) == (0.5, 0.0, 1.0)
    # stdout is trec_eval's layout whatever is said: trec_eval breaks the tie by docno descending
    # (b before a): P_1 of q1 is 0
    assert b"P_1                   \tq1\t0.0000\n" in out


def test_tie_note_silent_when_ties_move_nothing_printed(tmp_path):
    """Two nonrelevant documents tied: no measure moves; the note is not written."""
    qrels, run = _files(
        tmp_path,
        "q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\nq1 Q0 c 3 0.5 t\n",
        "q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n",
    )
    code, out, err = ours("-q", "-m", "all_trec", qrels, run)
    assert (code, err) == (0, "")
    assert out


def test_tie_note_threshold_is_half_a_unit_of_the_fourth_decimal(tmp_path):
    """99 relevant documents at ranks 1-99, then a relevant and a nonrelevant one tied at ranks
    1000-1001 (R = 100): map moves by (100/1000 - 100/1001)/100 < 0.00005 (silent), P_1000 by
    0.001 (said)."""
    lines = [f"q1 Q0 r{i} {i} {2000 - i} t\n" for i in range(1, 100)]
    lines += [f"q1 Q0 n{i} {i} {2000 - i} t\n" for i in range(100, 1000)]
    lines += ["q1 Q0 rx 1000 5 t\n", "q1 Q0 ny 1001 5 t\n"]
    qrels_text = "".join(f"q1 0 r{i} 1\n" for i in range(1, 100)) + "q1 0 rx 1\n"
    qrels, run = _files(tmp_path, "".join(lines), qrels_text)
    code, out, err = ours("-q", "-m", "map", qrels, run)
    assert (code, err) == (0, "")
    code, out_p, err = ours("-q", "-m", "map", "-m", "P.1000", qrels, run)
    assert code == 0 and "P_1000" in err and "map" not in err.split(":")[1].split(";")[0]
    # the note never changes stdout: the map lines are the same bytes in both
    assert [ln for ln in out_p.splitlines() if ln.startswith(b"map")] == out.splitlines()


def test_several_runs_are_labelled(tmp_path):
    """Each run's block opens with ``run <TAB> all <TAB> NAME``; each block is that run's output alone."""
    q = TE / "qrels.test"
    r1, r2 = TE / "results.test", tmp_path / "other.run"
    r2.write_bytes(r1.read_bytes().replace(b" 1 ", b" 2 ", 3))
    code, out, err = ours("-m", "map", "-m", "P.10", q, r1, r2)
    assert code == 0, err
    alone = [ours("-m", "map", "-m", "P.10", q, r)[1] for r in (r1, r2)]
    label = b"run                   \tall\t"
    assert out == label + b"results.test\n" + alone[0] + label + b"other.run\n" + alone[1]


def test_stat_prints_another_statistic_in_the_layout(tmp_path):
    qrels, run = _files(tmp_path, "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\n", "q1 0 a 1\nq1 0 b 0\n")
    code, out, err = ours("--stat", "expected", "-m", "P.1", qrels, run)
    assert (code, err) == (0, "")
    assert out == b"P_1                   \tall\t0.5000\n"
    code, out, _ = ours("--stat", "range", "-m", "P.1", qrels, run)
    assert out == b"P_1                   \tall\t1.0000\n"


@pytest.mark.parametrize(
    "flags, moments",
    [([], False), (["--stat", "min"], False), (["--stat", "range"], False)]
    + [(["--stat", s], True) for s in ("expected", "std", "bias")],
)
def test_computes_only_what_is_printed(tmp_path, monkeypatch, flags, moments):
    """The oblivious values (and the range the note reads, or the extremes ``--stat`` prints) are
    computed without the expectation and variance over tie orderings; ``--stat expected``, ``std``
    and ``bias`` compute them."""
    import tierank.measures.base as base

    seen = []
    full = base.compute_all

    def spy(prep, measures, step=None):
        seen.append(prep.moments)
        return full(prep, measures, step)

    monkeypatch.setattr(base, "compute_all", spy)
    qrels, run = _files(
        tmp_path,
        "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\nq2 Q0 x 1 0.9 t\nq2 Q0 y 2 0.1 t\n",
        "q1 0 a 1\nq1 0 b 0\nq2 0 x 1\n",
    )
    code, out, err = ours("-q", "-m", "all_trec", *flags, qrels, run)
    assert code == 0, err
    assert seen == [moments]
    assert b"map" in out
