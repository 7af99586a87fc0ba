"""`tierank eval` streamed prints what it prints in memory, under every flag of `eval` that changes
numbers (issue 22 item 9): -c, -J, --condensed, -M, -l/--rel, --tie-break, --candidates-only,
--unjudged bounds, -N, several measures, per query (-q) and every output format; plain and gzip
runs, a pipe, 1 and 2 workers, blocks far smaller than a query.

The run is the shipped TREC RAG 2024 run cut to 49 queries, two of the judged ones removed so that
the qrels hold queries the run lacks (what -c scores).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tierank.cli import app
from tierank.examples import path as example_path

QRELS = example_path("rag24-qrels")
MEASURES = [
    "-m",
    "AP",
    "-m",
    "nDCG@10",
    "-m",
    "P@5",
    "-m",
    "RR",
    "-m",
    "Rprec",
    "-m",
    "R@100",
    "-m",
    "RBP(p=0.8)",
    "-m",
    "Success@3",
    "-m",
    "AP@20",
]
BOUNDS = ["-m", "P@10", "-m", "RR", "-m", "R@100", "-m", "Success@3"]

CASES = [
    [],
    ["-c"],
    ["-c", "-M", "5"],
    ["-M", "1"],
    ["-J"],
    ["-J", "-M", "5"],
    ["-J", "-c"],
    ["-J", "-c", "-M", "3"],
    ["--condensed"],
    ["--condensed", "-c", "-M", "4"],
    ["-l", "2"],
    ["--rel", "3", "-c", "-M", "10"],
    ["--tie-break", "input"],
    ["--tie-break", "docno", "-M", "7"],
    ["--tie-break", "random:3", "-c"],
    ["-N", "1000", "-c"],
    ["--candidates-only"],
    ["--candidates-only", "-c", "-M", "10"],
    ["--unjudged", "bounds", *BOUNDS],
    ["--unjudged", "bounds", "-c", "-M", "5", *BOUNDS],
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The cut run, plain and gzip."""
    judged = sorted(
        {line.split()[0] for line in gzip.decompress(QRELS.read_bytes()).decode().splitlines()}
    )
    keep = set(judged[2:]) | {f"unjudged{i}" for i in range(20)}
    lines = (
        gzip.decompress(example_path("rag24-run").read_bytes()).decode().splitlines(keepends=True)
    )
    others = sorted({x.split()[0] for x in lines} - set(judged))[:20]
    rename = {q: f"unjudged{i}" for i, q in enumerate(others)}
    text = "".join(
        x.replace(x.split()[0], rename[x.split()[0]], 1) if x.split()[0] in rename else x
        for x in lines
        if x.split()[0] in keep or x.split()[0] in rename
    ).encode()
    folder = tmp_path_factory.mktemp("runs")
    plain, gz = folder / "run.txt", folder / "run.txt.gz"
    plain.write_bytes(text)
    gz.write_bytes(gzip.compress(text))
    assert len(text.splitlines()) == 4900
    return plain, gz


def _eval(*args) -> str:
    res = CliRunner().invoke(app, ["eval", *map(str, args)])
    assert res.exit_code == 0 and res.exception is None, (args, res.output)
    return res.stdout


@pytest.mark.parametrize("flags", CASES, ids=[" ".join(c[:4]) or "default" for c in CASES])
def test_every_flag_streamed_equals_in_memory(runs, flags):
    plain, gz = runs
    measures = [] if "bounds" in flags else MEASURES
    k = CASES.index(flags)
    run = gz if k % 2 else plain
    block = (3000, 25_000)[
        k % 4 // 2
    ]  # a block smaller than a query (100 lines), or several queries
    want = _eval(QRELS, run, *flags, *measures, "-q", "-f", "jsonl")
    assert {json.loads(x)["query"] for x in want.splitlines()} >= {"all"}
    assert (
        _eval(QRELS, run, *flags, *measures, "-q", "-f", "jsonl", "-j", "1", "--block-bytes", block)
        == want
    )
    if k % 5 == 2:  # 2 workers: -c -M, --condensed, --tie-break random, --unjudged bounds
        assert (
            _eval(
                QRELS,
                run,
                *flags,
                *measures,
                "-q",
                "-f",
                "jsonl",
                "-j",
                "2",
                "--block-bytes",
                block,
            )
            == want
        )
    if k % 3 == 0:  # trec_eval's layout and the table
        for fmt in (["-f", "trec_eval", "-q"], []):
            assert _eval(
                QRELS, run, *flags, *measures, *fmt, "-j", "1", "--block-bytes", block
            ) == _eval(QRELS, run, *flags, *measures, *fmt)


@pytest.mark.parametrize("flags", [["-c", "-M", "5"], ["-J", "-M", "3", "-l", "2"]])
def test_a_piped_run_streamed_equals_in_memory(runs, flags):
    plain, _ = runs

    def piped(*extra):
        with open(plain, "rb") as fh:
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tierank.cli",
                    "eval",
                    str(QRELS),
                    "/dev/stdin",
                    *flags,
                    *MEASURES,
                    "-q",
                    "-f",
                    "jsonl",
                    *extra,
                ],
                stdin=fh,
                capture_output=True,
                text=True,
            )
        assert p.returncode == 0, p.stderr
        return p.stdout

    want = piped()
    assert len(want.splitlines()) >= 30 * 9  # (29 or 31 queries) and all, 9 measures
    assert piped("-j", "2", "--block-bytes", "5000") == want


def test_several_runs_equal_each_run_alone(runs):
    plain, gz = runs
    both = [
        json.loads(x)
        for x in _eval(
            QRELS, plain, gz, "-c", "-M", "5", *MEASURES, "-q", "-f", "jsonl", "-j", "2"
        ).splitlines()
    ]
    for run in (plain, gz):
        alone = [
            json.loads(x)
            for x in _eval(
                QRELS,
                run,
                "-c",
                "-M",
                "5",
                *MEASURES,
                "-q",
                "-f",
                "jsonl",
                "-j",
                "1",
                "--block-bytes",
                "4000",
            ).splitlines()
        ]
        assert [
            {k: v for k, v in r.items() if k != "run"} for r in both if r["run"] == run.name
        ] == alone


def test_block_bytes_is_for_one_run(runs):
    plain, gz = runs
    res = CliRunner().invoke(
        app, ["eval", str(QRELS), str(plain), str(gz), "--block-bytes", "1000"]
    )
    assert res.exit_code == 2 and "--block-bytes streams one run" in res.output


@pytest.mark.parametrize(
    "fmt", [["-f", "jsonl"], ["-f", "tsv"], ["-f", "trec_eval"]], ids=["jsonl", "tsv", "trec_eval"]
)
def test_per_query_output_of_one_and_two_workers_is_byte_identical(runs, tmp_path, fmt):
    """Issue 26: the per-query lines of every batch, merged in query order, are the same bytes with 1 and
    2 workers and in memory, on a run whose queries come in reverse order and are spread over many
    batches (each block about 3 queries), so that the output order is not the file's nor a batch's."""
    plain, _ = runs
    lines = plain.read_bytes().splitlines(keepends=True)
    by_query: dict[bytes, list[bytes]] = {}
    for line in lines:
        by_query.setdefault(line.split()[0], []).append(line)
    reversed_run = tmp_path / "reversed.txt"
    reversed_run.write_bytes(
        b"".join(x for q in sorted(by_query, reverse=True) for x in by_query[q])
    )
    want = _eval(QRELS, reversed_run, *MEASURES, *fmt, "-q")
    assert want.count("\n") > 25 * len(MEASURES) // 2  # 29 judged queries x 9 measures, and all
    for jobs in ("1", "2"):
        assert (
            _eval(QRELS, reversed_run, *MEASURES, *fmt, "-q", "-j", jobs, "--block-bytes", "25000")
            == want
        )


def test_relstring_is_refused_when_streamed_in_one_line(runs):
    """relstring's strings are kept in memory only: ``-j 2`` refuses it in one line (exit 2), while the
    in-memory evaluation prints it."""
    plain, _ = runs
    res = CliRunner().invoke(
        app,
        ["eval", str(QRELS), str(plain), "-q", "-m", "relstring.5", "-f", "trec_eval", "-j", "2"],
    )
    assert res.exit_code == 2
    assert "relstring" in res.output.lower() and "not streamed" in res.output
    assert "Traceback" not in res.output
    assert "relstring_5" in _eval(QRELS, plain, "-q", "-m", "relstring.5", "-f", "trec_eval")
