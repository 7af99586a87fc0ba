"""Issue 22: the inputs beyond TREC text never lie (Parquet/Arrow, frames, dicts, folders).

Each test failed before the fix: a silent wrong number, a lost input, a traceback, or twenty lines
of "not valid UTF-8" where one clear refusal (exit 2) or the right numbers belong.
"""

from __future__ import annotations

import datetime
import gzip
import json
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.examples import path as example_path
from tierank.io.convert import to_qrels, to_run


def cli(*args) -> subprocess.CompletedProcess:
    """The command line in this process (typer's runner), stdout and stderr apart."""
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def refused(*args) -> str:
    """The first error line of a command that must exit 2 (every line of stderr an error line)."""
    p = cli(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert lines and all(x.startswith("tierank: error: ") for x in lines), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


def aggregate(stdout: str) -> dict[str, float]:
    """``{measure: expected}`` of the ``query == "all"`` records of ``-f jsonl`` output."""
    return {
        r["measure"]: r["expected"]
        for r in map(json.loads, stdout.splitlines())
        if r["query"] == "all"
    }


def _plain(a):
    return a.dictionary_decode() if pa.types.is_dictionary(a.type) else a


@pytest.fixture(scope="module")
def askubuntu(tmp_path_factory):
    """The shipped AskUbuntu run and qrels as Parquet (BEIR's names for the qrels: query-id, corpus-id, score)."""
    d = tmp_path_factory.mktemp("askubuntu")
    run, qrels = (
        tierank.read_run(example_path("askubuntu-run")),
        tierank.read_qrels(example_path("askubuntu-qrels")),
    )
    pq.write_table(
        pa.table({"qid": _plain(run.qid), "docid": run.docid, "score": run.score}),
        d / "run.parquet",
    )
    pq.write_table(
        pa.table(
            {"query-id": qrels.qid, "corpus-id": qrels.docid, "score": qrels.grade.astype(np.int64)}
        ),
        d / "qrels.parquet",
    )
    return d / "run.parquet", d / "qrels.parquet"


# ---------------------------------------------------------------- item 1: swapped arguments


def test_swapped_parquet_arguments_are_refused_small(tmp_path):
    run, qrels = tmp_path / "run.parquet", tmp_path / "qrels.parquet"
    pq.write_table(
        pa.table({"qid": ["q1"] * 3, "docid": ["a", "b", "c"], "score": [3.5, 2, 1]}), run
    )
    pq.write_table(
        pa.table({"query-id": ["q1", "q1"], "corpus-id": ["c", "a"], "score": [1, 0]}), qrels
    )
    ok = cli("eval", qrels, run, "-m", "AP", "-f", "jsonl")
    assert ok.returncode == 0 and aggregate(ok.stdout)["AP"] == pytest.approx(1 / 3)
    line = refused("eval", run, qrels, "-m", "AP", "-f", "jsonl")  # was AP 0.6667, exit 0
    assert "did you swap QRELS and RUN?" in line
    assert (
        "run.parquet looks like a run (column 'score' holds real-valued scores (row 1: 3.5))"
        in line
    )
    # the library refuses the run as qrels, with the way out
    with pytest.raises(
        TierankInputError, match=r"looks like a run, not qrels: column 'score' holds real-valued"
    ):
        tierank.evaluate(str(run), str(qrels), ["AP"])


def test_swapped_askubuntu_parquet_is_refused(askubuntu):
    run, qrels = askubuntu
    ok = cli("eval", qrels, run, "-m", "nDCG@10", "-m", "AP", "-f", "jsonl")
    got = aggregate(ok.stdout)
    assert (
        round(got["nDCG@10"], 4) == 0.5698 and round(got["AP"], 4) == 0.5203
    )  # E[...], as the text files give
    text = aggregate(
        cli(
            "eval",
            example_path("askubuntu-qrels"),
            example_path("askubuntu-run"),
            "-m",
            "nDCG@10",
            "-m",
            "AP",
            "-f",
            "jsonl",
        ).stdout
    )
    assert got == text
    assert "did you swap QRELS and RUN?" in refused(
        "eval", run, qrels, "-m", "nDCG@10"
    )  # was 0.9267, exit 0


def test_tables_that_could_be_either_are_refused_with_the_reason(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"qid": ["q1"] * 3, "docid": ["a", "b", "c"], "score": [2, 1, 0]}), a)
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["c", "a"], "score": [1, 0]}), b)
    line = refused("eval", a, b, "-m", "AP")
    assert (
        "cannot tell the run from the qrels" in line
        and "name the qrels' grade column 'relevance'" in line
    )
    # named as judgments: no doubt left
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["c", "a"], "relevance": [1, 0]}), b)
    assert cli("eval", b, a, "-m", "AP").returncode == 0
    assert (
        "b.parquet: looks like qrels, not a run: its column 'relevance' holds judgments"
        in refused("eval", a, b)
    )
    pq.write_table(pa.table({"qid": ["q1"] * 3, "docid": ["a", "b", "c"], "score": [2.5, 1, 0]}), a)
    assert "did you swap QRELS and RUN?" in refused("eval", a, b, "-m", "AP")


def test_sweep_tells_a_parquet_run_from_parquet_qrels(askubuntu, real_data):
    """sweep takes QRELS RUN, as every command; Parquet files given the other way round are refused by
    content (a swapped pair would otherwise read: BEIR's 'score' is both a grade and a score)."""
    run, qrels = askubuntu
    b = cli("sweep", qrels, run, "--formats", "fp32,bf16", "-f", "jsonl")
    assert b.returncode == 0, b.stderr
    text = cli(
        "sweep",
        real_data / "askubuntu/test.qrels",
        real_data / "askubuntu/test.bm25.run",
        "--formats",
        "fp32,bf16",
        "-f",
        "jsonl",
    )
    assert b.stdout == text.stdout and '"format": "bf16"' in b.stdout
    assert refused("sweep", run, qrels, "--formats", "fp32,bf16").startswith(
        "tierank: error: did you swap QRELS and RUN?"
    )


# ---------------------------------------------------------------- item 2: two columns, one field


@pytest.mark.parametrize(
    "cols,first,second",
    [
        (
            {
                "qid": ["q1", "q1"],
                "query_id": ["q2", "q2"],
                "docid": ["a", "b"],
                "score": [2.0, 1.0],
            },
            "qid",
            "query_id",
        ),
        (
            {"QID": ["q1", "q1"], "qid": ["q2", "q2"], "docid": ["a", "b"], "score": [2.0, 1.0]},
            "QID",
            "qid",
        ),
        (
            {"qid": ["q1", "q1"], "docid": ["a", "b"], "doc_id": ["b", "a"], "score": [2.0, 1.0]},
            "docid",
            "doc_id",
        ),
        (
            {"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [2.0, 1.0], "sim": [1.0, 2.0]},
            "score",
            "sim",
        ),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_two_columns_naming_one_field_are_refused(tmp_path, cols, first, second):
    p = tmp_path / "run.parquet"
    pq.write_table(pa.table(cols), p)
    with pytest.raises(TierankInputError, match=f"columns '{first}', '{second}' all name the"):
        to_run(p)
    assert f"columns '{first}', '{second}' all name the" in refused(
        "eval", example_path("qrels"), p
    )


@pytest.mark.parametrize(
    "first,second",
    [
        ("score", "relevance"),
        ("score", "label"),
        ("Score", "grade"),
        ("grade", "rel"),
        ("relevance", "judgment"),
    ],
)
def test_two_grade_columns_of_qrels_are_refused(tmp_path, first, second):
    """A qrels table with two columns that could be the grade (BEIR's ``score`` beside ``relevance``, or
    two grade names) is refused naming both, as a run's two score columns are: ``score=[1,0,0]`` with
    ``relevance=[0,0,0]`` once read ``relevance`` without a word (RR 0.0)."""
    p = tmp_path / "qrels.parquet"
    pq.write_table(
        pa.table(
            {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], first: [1, 0, 0], second: [0, 0, 0]}
        ),
        p,
    )
    with pytest.raises(
        TierankInputError, match=f"columns '{first}', '{second}' all name the relevance"
    ):
        to_qrels(p)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1.0 r\n")
    assert f"columns '{first}', '{second}' all name the" in refused("eval", p, run, "-m", "RR")
    for one in (first, second):  # either column alone is read
        pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["a"], one: [1]}), p)
        assert to_qrels(p).grade.tolist() == [1.0]


def test_a_query_text_column_beside_the_id_is_not_a_second_id(tmp_path):
    frame = pd.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "query": ["what is x", "what is x"],
            "doc_id": ["a", "b"],
            "score": [2.0, 1.0],
        }
    )
    assert to_run(frame).qid.to_pylist() == ["q1", "q1"]


# ---------------------------------------------------------------- item 3: integers beyond 2**53


def test_uint64_scores_beyond_2_53_are_refused_not_tied(tmp_path):
    p = tmp_path / "run.parquet"
    top = 2**64 - 1
    pq.write_table(
        pa.table(
            {
                "qid": ["q1"] * 3,
                "docid": ["a", "b", "c"],
                "score": pa.array([top, top - 1, top - 2], pa.uint64()),
            }
        ),
        p,
    )
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 c 1\n")
    line = refused(
        "eval", qrels, p, "-m", "RR"
    )  # was oblivious 1.0, E 0.611: ties that are not in the input
    assert "row 1: integer score 18446744073709551615 cannot be held exactly as a float64" in line
    # an integer float64 holds exactly is read as before
    pq.write_table(
        pa.table(
            {
                "qid": ["q1"] * 3,
                "docid": ["a", "b", "c"],
                "score": pa.array([2**53, 2**53 - 1, 2**53 - 2], pa.int64()),
            }
        ),
        p,
    )
    res = cli("eval", qrels, p, "-m", "RR", "-f", "jsonl")
    rec = [r for r in map(json.loads, res.stdout.splitlines()) if r["query"] == "all"][0]
    assert (rec["oblivious"], rec["range"]) == (1 / 3, 0.0)


def test_decimals_follow_the_rule_of_number_text(tmp_path):
    """One rule for decimals in every surface: read as the nearest float64, as the same value written as
    text is (a Parquet decimal128(5,2) 0.30 was refused, one line per row, while "0.30" was read);
    refused only where two different decimals would become one float64 (a tie not in the input)."""
    from decimal import Decimal

    p = tmp_path / "run.parquet"
    text = tmp_path / "run.txt"
    pq.write_table(
        pa.table(
            {
                "query_id": ["q1"] * 3,
                "doc_id": ["a", "b", "c"],
                "score": pa.array(
                    [Decimal("0.30"), Decimal("0.25"), Decimal("0.30")], pa.decimal128(5, 2)
                ),
            }
        ),
        p,
    )
    text.write_text("q1 Q0 a 1 0.30 t\nq1 Q0 b 2 0.25 t\nq1 Q0 c 3 0.30 t\n")
    assert to_run(p).score.tolist() == to_run(str(text)).score.tolist() == [0.3, 0.25, 0.3]
    assert cli("eval", example_path("qrels"), p, "-m", "RR", "-f", "jsonl").returncode == 0
    close = [Decimal("0.1"), Decimal("0.1000000000000000000000000001")]
    pq.write_table(
        pa.table(
            {
                "query_id": ["q1"] * 2,
                "doc_id": ["a", "b"],
                "score": pa.array(close, pa.decimal128(38, 28)),
            }
        ),
        p,
    )
    with pytest.raises(
        TierankInputError, match="become the same float64 0.1 .a tie that is not in the input"
    ):
        to_run(p)


def test_dict_integers_beyond_2_53_are_refused():
    with pytest.raises(TierankInputError, match="cannot be held exactly as a float64"):
        to_run({"q1": {"a": 2**64 - 1, "b": 2**64 - 2}})
    assert to_run({"q1": {"a": 2**53}}).score.tolist() == [2.0**53]


# ---------------------------------------------------------------- item 6: folders of runs


def test_a_folder_reads_every_run_whatever_its_name_and_lists_what_it_skips(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    line = "q1 Q0 a 1 {} t\nq1 Q0 b 2 1.0 t\n"
    (runs / "a.run").write_text(line.format(3.0))
    (runs / "input.bm25").write_text(line.format(0.5))
    (runs / "run2").write_bytes(gzip.compress(line.format(2.0).encode(), mtime=0))
    (runs / "README").write_text("notes\n")
    (runs / ".hidden").write_text(line.format(9.0))
    (runs / "judgments").write_text("q1 0 a 1\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 b 1\n")
    p = cli("eval", qrels, runs, "-m", "RR", "-f", "jsonl")
    assert p.returncode == 0, p.stderr
    names = {r["run"] for r in map(json.loads, p.stdout.splitlines())}
    assert names == {
        "a.run",
        "input.bm25",
        "run2",
    }  # was {a.run}; named by tierank.io.naming.run_names
    notes = sorted(p.stderr.splitlines())
    assert notes == [
        f"tierank: note: {runs / '.hidden'}: skipped: hidden file",
        f"tierank: note: {runs / 'README'}: skipped: not a run: its first line has 1 field, "
        "a run line 6 (qid Q0 docid rank score tag)",
        f"tierank: note: {runs / 'judgments'}: skipped: qrels: its first line has 4 fields, "
        "a run line 6 (qid Q0 docid rank score tag)",
    ]


# ---------------------------------------------------------------- item 14: one input door


def test_every_command_reads_a_parquet_run(askubuntu, tmp_path):
    run, qrels = askubuntu
    text_run, text_qrels = example_path("askubuntu-run"), example_path("askubuntu-qrels")
    other = tmp_path / "other.parquet"
    pq.write_table(
        pq.read_table(run).set_column(
            2, "score", pa.array(np.round(pq.read_table(run)["score"].to_numpy(), 0))
        ),
        other,
    )
    other_txt = tmp_path / "other.run"
    r = tierank.read_run(text_run)
    tierank.io.writers.write_run(other_txt, _plain(r.qid), r.docid, np.round(r.score, 0), "x")
    for args, text_args in [
        (("ties", run, "-f", "jsonl"), ("ties", text_run, "-f", "jsonl")),
        (
            ("sweep", qrels, run, "--formats", "fp32,bf16", "-f", "jsonl"),
            ("sweep", text_qrels, text_run, "--formats", "fp32,bf16", "-f", "jsonl"),
        ),
        (
            ("compare", run, other, "--qrels", qrels, "-f", "json"),
            ("compare", text_run, other_txt, "--qrels", text_qrels, "-f", "json"),
        ),
    ]:
        p, t = cli(*args), cli(*text_args)
        assert p.returncode == 0 and "UTF-8" not in p.stderr, (
            p.stderr
        )  # was 20 lines of "not valid UTF-8"
        assert t.returncode == 0, t.stderr
        # the same numbers; only the names (file paths) differ
        assert _numbers(p.stdout) == _numbers(t.stdout), args[0]


def _numbers(text: str) -> list[float]:
    import re

    return [float(x) for x in re.findall(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?", text)]


def test_report_and_plot_read_a_parquet_run(askubuntu, tmp_path):
    pytest.importorskip("matplotlib")
    run, qrels = askubuntu
    p = cli("report", "sweep", qrels, run, "--formats", "fp32,bf16", "-o", tmp_path / "s.html")
    assert p.returncode == 0, p.stderr
    p = cli("plot", "ties", run, "-o", tmp_path / "fig")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "fig.png").stat().st_size > 0


# ---------------------------------------------------------------- item 15: partition() folders


def test_a_partition_folder_is_one_run(tmp_path):
    pytest.importorskip("duckdb")
    from tierank.stream import partition

    out = partition(example_path("askubuntu-run"), tmp_path / "parts", buckets=4)
    p = cli(
        "eval", example_path("askubuntu-qrels"), out, "-m", "AP", "-m", "nDCG@10", "-f", "jsonl"
    )
    assert p.returncode == 0, p.stderr
    recs = list(map(json.loads, p.stdout.splitlines()))
    assert {r.get("run", str(out)) for r in recs} == {str(out)}  # one run, not 4 partial ones
    text = cli(
        "eval",
        example_path("askubuntu-qrels"),
        example_path("askubuntu-run"),
        "-m",
        "AP",
        "-m",
        "nDCG@10",
        "-f",
        "jsonl",
    )
    assert aggregate(p.stdout) == aggregate(text.stdout)
    assert len([r for r in recs if r["query"] == "all"]) == 2
    ref = tierank.evaluate(
        example_path("askubuntu-qrels"), example_path("askubuntu-run"), ["AP"]
    ).records()
    assert tierank.evaluate(example_path("askubuntu-qrels"), out, ["AP"]).records() == ref


# ---------------------------------------------------------------- item 16: lenient inputs


@pytest.mark.parametrize(
    "column,reason",
    [
        (pa.array([True, False]), "score column 'score' of type bool is not numeric"),
        (
            pa.array([datetime.date(2024, 1, 2), datetime.date(2024, 1, 1)], pa.date32()),
            "score column 'score' of type date32[day] is not numeric",
        ),
    ],
)
def test_boolean_and_date_scores_are_refused(tmp_path, column, reason):
    p = tmp_path / "run.arrow"
    t = pa.table({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": column})
    with ipc.new_file(p, t.schema) as w:
        w.write_table(t)
    assert reason in refused("eval", example_path("qrels"), p)


def test_json_true_is_not_a_score():
    with pytest.raises(TierankInputError, match="value True is a boolean, not a number"):
        to_run({"q1": {"a": True, "b": 0.5}})
    with pytest.raises(TierankInputError, match="is a boolean"):
        to_qrels({"q1": {"a": True}})


@pytest.mark.parametrize("docid", ["", "d 1", "d\t1", "d\n1", "d\r1"])
def test_ids_no_trec_line_can_hold_are_refused(tmp_path, docid):
    p = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["a", docid], "score": [2.0, 1.0]}), p)
    assert "row 2: document id" in refused("eval", example_path("qrels"), p)
    with pytest.raises(TierankInputError, match="is empty or holds a space, tab or line end"):
        to_run(pd.DataFrame({"qid": ["q1", "q1"], "docid": ["a", docid], "score": [2.0, 1.0]}))
    with pytest.raises(TierankInputError, match="row 1: query id"):
        to_qrels(pa.table({"qid": [docid or " "], "docid": ["a"], "relevance": [1]}))


def test_sweep_refuses_no_formats():
    for cmd in (("sweep", example_path("run"), example_path("qrels")),):
        assert "no score format in ''" in refused(*cmd, "--formats", "")
        assert "no score format in ' , '" in refused(*cmd, "--formats", " , ")
    with pytest.raises(TierankInputError, match="no score format"):
        tierank.analysis.sweep.sweep(
            str(example_path("qrels")), str(example_path("run")), ["RR"], []
        )


def test_missing_values_in_an_integer_column_are_refused(tmp_path):
    p = tmp_path / "run.parquet"
    pq.write_table(
        pa.table(
            {"qid": ["q1", "q1"], "docid": ["a", "b"], "score": pa.array([1, None], pa.int64())}
        ),
        p,
    )
    assert "row 2: score is missing" in refused("eval", example_path("qrels"), p)


def test_json_true_in_mteb_predictions_is_refused(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mteb", None)
    preds = tmp_path / "Task_predictions.json"
    preds.write_text(
        json.dumps(
            {
                "mteb_model_meta": {"model_name": "m", "revision": "r"},
                "default": {"test": {"q1": {"d1": True, "d2": 0.5}}},
            }
        )
    )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    assert "score true is not a number" in refused("mteb", qrels, preds)  # was read as 1.0


def test_a_folder_skips_its_qrels_and_keeps_a_run_of_small_integer_scores(tmp_path):
    """Review findings: the qrels kept in the folder of runs was read as a run (exit 2), and an Arrow run
    whose 'score' column holds small integers was skipped as qrels (only a note on stderr)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\n")
    (runs / "t.run").write_text("q1 Q0 b 1 2.5 t\nq1 Q0 a 2 1.5 t\n")
    with pa.ipc.new_file(
        runs / "a.arrow",
        pa.schema([("qid", pa.string()), ("docid", pa.string()), ("score", pa.int64())]),
    ) as w:
        w.write_table(pa.table({"qid": ["q1"] * 3, "docid": ["a", "b", "c"], "score": [3, 2, 1]}))
    p = cli("eval", runs / "qrels.txt", runs, "-m", "RR", "-f", "jsonl")
    assert p.returncode == 0, p.stderr
    got = {
        r["run"]: r["expected"]
        for r in map(json.loads, p.stdout.splitlines())
        if r["query"] == "all"
    }
    assert got == {"a.arrow": 1.0, "t.run": 0.5}
    assert (
        p.stderr
        == f"tierank: note: {runs / 'qrels.txt'}: skipped: qrels: its first line has 4 fields, a run "
        "line 6 (qid Q0 docid rank score tag)\n"
    )
