"""The live progress line of `tierank eval` (silent off a terminal) and the default streaming of large runs."""

from __future__ import annotations

import gzip
import io
import json

from rich.console import Console
from typer.testing import CliRunner

import tierank.stream
from helpers import run_cli
from tierank.cli import app
from tierank.cli import eval as eval_cli
from tierank.cli.progress import Progress
from tierank.examples import path as example_path

Q, R = example_path("askubuntu-qrels"), example_path("askubuntu-run")


def test_nothing_is_written_to_stderr_off_a_terminal(tmp_path):
    one = run_cli("eval", Q, R, "-m", "AP", "-j", "2", "-f", "jsonl")
    many = run_cli(
        "eval", Q, R, R.with_name(R.name), "-m", "AP", "-f", "jsonl", check=False
    )  # same file twice: error
    assert (
        one.stderr == ""
        and [json.loads(x)["query"] for x in one.stdout.splitlines()].count("all") == 1
    )
    assert (
        many.returncode == 2
        and "given twice" in many.stderr
        and "runs evaluated" not in many.stderr
    )


def test_the_terminal_line_shows_lines_queries_and_runs():
    buf = io.StringIO()
    with Progress(console=Console(file=buf, force_terminal=True, width=120)) as prog:
        prog.phase("reading qrels")
        assert prog.description == "reading qrels"
        prog.stream(1_500_000, 1_200)
        assert prog.description.startswith(
            "1,500,000 lines, 1,200 queries, "
        ) and prog.description.endswith("M lines/s")
        prog.runs(3, 10, "bm25.run")
        assert prog.description == "runs evaluated: bm25.run"
        prog._prog.refresh()
        assert "3/10" in buf.getvalue()
    off = Progress(enabled=False)
    with off:
        off.stream(10, 1)
    assert off._prog is None and "10 lines, 1 queries" in off.description


def test_a_large_run_streams_with_every_core_by_default(tmp_path, monkeypatch):
    """Above AUTO_STREAM_BYTES (64 MB; lowered here) `tierank eval` streams with all cores and prints the
    numbers of the in-memory engine; GMAP (a summary over every query at once) stays in memory."""
    plain = tmp_path / "run.txt"
    plain.write_bytes(gzip.decompress(R.read_bytes()))
    calls = []
    real = tierank.stream.evaluate_stream

    def spy(*args, **kwargs):
        calls.append(kwargs["jobs"])
        return real(*args, **kwargs)

    monkeypatch.setattr(tierank.stream, "evaluate_stream", spy)
    runner = CliRunner()
    small = runner.invoke(
        app, ["eval", str(Q), str(plain), "-m", "AP", "-m", "nDCG@10", "-f", "jsonl"]
    )
    assert small.exit_code == 0 and calls == []
    monkeypatch.setattr(eval_cli, "AUTO_STREAM_BYTES", 1000)
    big = runner.invoke(
        app, ["eval", str(Q), str(plain), "-m", "AP", "-m", "nDCG@10", "-f", "jsonl"]
    )
    assert big.exit_code == 0 and len(calls) == 1 and calls[0] >= 1
    assert [json.loads(x) for x in big.stdout.splitlines()] == [
        json.loads(x) for x in small.stdout.splitlines()
    ]
    gmap = runner.invoke(app, ["eval", str(Q), str(plain), "-m", "GMAP", "-f", "jsonl"])
    assert gmap.exit_code == 0 and len(calls) == 1  # not streamed
    gz = runner.invoke(
        app, ["eval", str(Q), str(R), "-m", "AP", "-f", "jsonl"]
    )  # gzip: 4x its size counts
    assert gz.exit_code == 0 and len(calls) == 2


def test_many_runs_report_each_run_done(tmp_path):
    names = []
    res = tierank.stream.evaluate_many(
        Q, {"a": R, "b": R, "c": R}, ["AP"], jobs=2, progress=names.append
    )
    assert sorted(names) == ["a", "b", "c"] and list(res) == ["a", "b", "c"]
    assert res["a"].records() == res["c"].records()
