"""A run file is opened once: ``tierank eval`` in memory (its role check, the choice to stream it, its
reading and trec_eval's ``runid`` all come from one read), `tierank.compare`, and ``tierank compare``,
``sweep``, ``ties`` and ``similarity`` (the role check and the reading from one read).

The opens are counted with an audit hook (``sys.addaudithook``: Python's ``open`` and ``os.open``
report every file they open), for the run files only.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import tierank
from helpers import invoke
from tierank.cli import eval as eval_cli
from tierank.io.readers import run_tag

#: the files watched, and how often each was opened while watched
_WATCHED: set[str] = set()
_OPENS: Counter[str] = Counter()


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _WATCHED or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    name = os.path.abspath(os.fsdecode(args[0]))
    if name in _WATCHED:
        _OPENS[name] += 1


_HOOKED: list[bool] = []


@contextmanager
def opens(*paths) -> Iterator[Counter[str]]:
    """How often each of ``paths`` is opened inside the block (by its absolute name)."""
    if (
        not _HOOKED
    ):  # an audit hook cannot be removed: one for the whole session, idle when nothing is watched
        sys.addaudithook(_hook)
        _HOOKED.append(True)
    _OPENS.clear()
    _WATCHED.update(os.path.abspath(p) for p in paths)
    try:
        yield _OPENS
    finally:
        _WATCHED.clear()


QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq2 0 y 0\n"
# the tags differ: trec_eval's runid is the tag of the last content line (a comment and blank lines after it)
RUN = (
    "q1 Q0 a 1 0.9 first\nq1 Q0 b 2 0.5 first\nq1 Q0 c 3 0.5 first\nq1 Q0 d 4 0.1 first\n"
    "q2 Q0 y 1 0.9 first\nq2 Q0 x 2 0.8 last\n# a comment\n\n"
)


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    plain = tmp_path / "run.txt"
    plain.write_text(RUN)
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(RUN.encode()))
    other = tmp_path / "other.txt"
    other.write_text(RUN.replace("0.5 first", "0.4 first", 1).replace(" last", " other"))
    return qrels, plain, gz, other


@pytest.mark.parametrize("kind", ["plain", "gzip"])
@pytest.mark.parametrize(
    "args",
    [(), ("-m", "runid", "-m", "map", "-f", "trec_eval"), ("-f", "jsonl", "-m", "P@2")],
)
def test_eval_opens_the_run_once(files, kind, args):
    qrels, plain, gz, _ = files
    run = plain if kind == "plain" else gz
    with opens(run) as seen:
        out = invoke("eval", qrels, run, *args).stdout
    assert seen[os.path.abspath(run)] == 1, dict(seen)
    # the one read gives what reading the path gives: the numbers, and the runid of the last line
    assert out == invoke("eval", qrels, run, *args, "-j", "1").stdout
    if "runid" in args:
        assert out.splitlines()[0].split("\t") == ["runid".ljust(22), "all", "last"]
        assert run_tag(run) == "last"


def test_eval_of_a_large_file_streams_as_before(files, monkeypatch):
    """Over the streaming size the run is streamed (not read whole), its runid read from its end: the
    same output as in memory."""
    import tierank.stream

    qrels, plain, _, _ = files
    streamed = []

    def evaluate_stream(*args, **kwargs):
        streamed.append(args[1])
        return through(*args, **kwargs)

    through = tierank.stream.evaluate_stream
    monkeypatch.setattr(tierank.stream, "evaluate_stream", evaluate_stream)
    args = ("eval", qrels, plain, "-m", "runid", "-m", "map", "-f", "trec_eval")
    in_memory = invoke(*args).stdout
    assert streamed == []
    monkeypatch.setattr(eval_cli, "AUTO_STREAM_BYTES", 16)
    assert invoke(*args).stdout == in_memory
    assert streamed == [str(plain)]


def test_eval_swapped_files_still_said(files):
    """The role check reads the run's first line from the one read: qrels given as the run."""
    qrels, plain, _, _ = files
    with opens(plain) as seen:
        res = invoke("eval", plain, qrels, check=False)
    assert res.returncode == 2
    assert "did you swap QRELS and RUN?" in res.stderr
    assert seen[os.path.abspath(plain)] == 1  # plain is the qrels here: sniffed once, never read


def test_compare_opens_each_run_once(files):
    qrels, plain, gz, other = files
    with opens(plain, gz, other) as seen:
        cmp = tierank.compare({"a": plain, "b": gz, "c": other}, qrels, "nDCG@10")
    assert {k: seen[os.path.abspath(k)] for k in (plain, gz, other)} == {
        plain: 1,
        gz: 1,
        other: 1,
    }
    # a and b are the same run (plain and gzip): equal means
    means = {s.name: s.expected for s in cmp.systems}
    assert means["a"] == means["b"]


def _once(*paths) -> dict:
    return {os.path.abspath(p): 1 for p in paths}


@pytest.mark.parametrize("args", [("-m", "AP", "-f", "json"), ("-m", "P@2", "--test", "wilcoxon")])
def test_compare_command_opens_each_run_once(files, args):
    """The role check against the qrels reads each run's first line from the bytes its reader takes."""
    qrels, plain, gz, other = files
    with opens(plain, gz, other, qrels) as seen:
        out = invoke("compare", qrels, plain, gz, other, *args).stdout
    runs = (plain, gz, other)
    assert {k: v for k, v in seen.items() if k != os.path.abspath(qrels)} == _once(*runs)
    # the qrels: the layout of the first file, its role (once for every run), its reading
    assert seen[os.path.abspath(qrels)] == 3, dict(seen)
    if "json" in args:  # the document the library writes for the same files
        want = tierank.compare(
            {"run.txt": plain, "run.txt.gz": gz, "other.txt": other}, qrels, "AP", correction="holm"
        ).to_dict()
        got = json.loads(out)
        assert [s["name"] for s in got["systems"]] == [s["name"] for s in want["systems"]]
        assert got["systems"] == want["systems"] and got["pairs"] == want["pairs"]


def test_compare_command_still_says_swapped_files(files):
    qrels, plain, _, other = files
    with opens(plain, other) as seen:
        res = invoke("compare", "--qrels", plain, qrels, other, check=False)
    assert res.returncode == 2
    assert "did you swap QRELS and RUN?" in res.stderr
    assert seen[os.path.abspath(other)] == 1


@pytest.mark.parametrize("kind", ["plain", "gzip"])
def test_sweep_opens_the_run_once(files, tmp_path, kind):
    """Its role check, its sweep and the runs --write-runs writes come from one read."""
    qrels, plain, gz, _ = files
    run = plain if kind == "plain" else gz
    folder = tmp_path / "written"
    with opens(run) as seen:
        out = invoke(
            "sweep",
            qrels,
            run,
            "-m",
            "P@2",
            "--formats",
            "fp32,sig1",
            "-f",
            "json",
            "--write-runs",
            folder,
        ).stdout
    assert dict(seen) == _once(run)
    assert json.loads(out)["settings"]["run"] == str(run)
    rows = {r["format"]: r for r in json.loads(out)["rows"]}
    # each written run evaluates to the row of its format
    for fmt, row in rows.items():
        (written,) = folder.glob(f"*.{fmt}.run")
        res = tierank.evaluate(qrels, written, "P@2")
        assert res.summary(res.measures[0]).expected == row["expected"]


def test_ties_and_similarity_open_each_run_once(files):
    _, plain, gz, other = files
    with opens(plain, gz, other) as seen:
        ties = json.loads(invoke("ties", plain, gz, other, "-f", "json").stdout)
    assert dict(seen) == _once(plain, gz, other)
    assert [r["name"] for r in ties["runs"]] == ["run.txt", "run.txt.gz", "other.txt"]
    with opens(plain, other) as seen:
        invoke("similarity", plain, other)
    assert dict(seen) == _once(plain, other)


def test_eval_reads_a_pipe_once_with_its_runid(files):
    """A pipe can be read once: its role is not sniffed, and its runid comes from the one read."""
    qrels, plain, _, _ = files
    args = ["eval", qrels, "/dev/stdin", "-m", "runid", "-m", "map", "-f", "trec_eval"]
    with open(plain, "rb") as fh:
        piped = subprocess.run(
            [sys.executable, "-m", "tierank.cli", *map(str, args)],
            input=fh.read(),
            capture_output=True,
        )
    assert piped.returncode == 0, piped.stderr
    want = invoke("eval", qrels, plain, "-m", "runid", "-m", "map", "-f", "trec_eval").stdout
    assert piped.stdout.decode() == want
