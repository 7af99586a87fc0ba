"""The live progress line of `tierank eval` (silent off a terminal) and the default streaming of large runs."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

import tierank.stream
from helpers import run_cli
from tierank.cli import app
from tierank.cli import eval as eval_cli
from tierank.cli.progress import Progress, size_text
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


class Recorder(Progress):
    """The command's progress display, off, keeping every (description, completed, total) it shows."""

    shown: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(enabled=False)

    def _show(self, text, **fields):
        super()._show(text, **fields)
        Recorder.shown.append((text, fields.get("completed"), fields.get("total")))


def test_an_in_memory_evaluation_shows_each_step_and_measure(monkeypatch):
    """In memory (one run, no -j), the display follows reading, the tie groups, then each measure with
    a bar of the measures done (it only said "evaluating ... in memory" for a minute of G or infAP);
    the output is the same with it."""
    import tierank.cli.progress as progress_module

    qrels, plain = example_path("qrels"), example_path("run")
    args = ["eval", str(qrels), str(plain), "-m", "AP", "-m", "nDCG@10", "-f", "jsonl"]
    before = CliRunner().invoke(app, args)
    monkeypatch.setattr(progress_module, "Progress", Recorder)
    Recorder.shown = []
    after = CliRunner().invoke(app, args)
    assert after.exit_code == 0 and after.stdout == before.stdout and after.stderr == ""
    what = f"{plain} ({size_text(plain.stat().st_size)})"
    assert Recorder.shown == [
        (f"reading {qrels}", None, None),
        (f"reading {what}", 0, 2),
        (f"finding the tie groups of {what}", 0, 2),
        (f"{what}: AP", 0, 2),
        (f"{what}: nDCG@10", 1, 2),
    ]


def test_the_steps_draw_a_bar_of_measures_on_a_terminal():
    buf = io.StringIO()
    with Progress(console=Console(file=buf, force_terminal=True, width=120)) as prog:
        prog.steps("run.txt (3.1 GB)", "G", 3, 7)
        assert prog.description == "run.txt (3.1 GB): G"
        prog._prog.refresh()
        assert "3/7" in buf.getvalue() and "run.txt (3.1 GB): G" in buf.getvalue()


@pytest.mark.full
@pytest.mark.subprocess
def test_on_a_terminal_the_display_is_on_stderr_and_stdout_is_unchanged(tmp_path):
    """stderr a terminal (a pseudo-terminal), stdout a pipe: the output is byte for byte that of a run
    without a terminal, the display went to the terminal alone."""
    import os
    import pty
    import subprocess
    import sys

    args = [sys.executable, "-m", "tierank.cli", "eval", str(Q), str(R), "-m", "AP", "-m", "G"]
    plain = subprocess.run(args, capture_output=True)
    leader, follower = pty.openpty()
    try:
        tty = subprocess.run(args, stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    assert plain.returncode == tty.returncode == 0 and plain.stderr == b""
    assert tty.stdout == plain.stdout
    assert b"askubuntu-test.bm25.run.gz" in drawn, drawn[:300]


def test_a_streamed_file_shows_the_share_done_as_a_bar():
    buf = io.StringIO()
    with Progress(console=Console(file=buf, force_terminal=True, width=140)) as prog:
        prog.stream_bytes(1_550_000_000, 3_100_000_000)
        prog.stream(1_500_000, 1_200)
        assert prog.description.endswith("M lines/s, 50% of 3.1 GB"), prog.description
        prog._prog.refresh()
        assert "50/100" in buf.getvalue()
