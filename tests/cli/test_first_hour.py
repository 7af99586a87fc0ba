"""What a newcomer meets in the first hour: standard input as ``-``, other compressions named, the
output format taken from ``-o FILE``, the queries the qrels lack counted, the two tie shares named."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys

import pytest

from helpers import invoke
from tierank.examples import path as example_path

Q, R = example_path("qrels"), example_path("run")
AQ, AR = example_path("askubuntu-qrels"), example_path("askubuntu-run")


def _tierank(*args, input: bytes | None = None) -> subprocess.CompletedProcess:
    """``python -m tierank ARGS`` in a real process (standard input is the point)."""
    return subprocess.run(
        [sys.executable, "-m", "tierank", *map(str, args)], input=input, capture_output=True
    )


@pytest.mark.parametrize("which", ["run", "qrels", "gzip run"])
def test_a_dash_reads_standard_input(which):
    ref = invoke("eval", Q, R, "-m", "AP", "-m", "nDCG@3", "-f", "jsonl", "-q").stdout
    run, qrels = R.read_bytes(), Q.read_bytes()
    args, data = {
        "run": ((Q, "-"), run),
        "qrels": (("-", R), qrels),
        "gzip run": ((Q, "-"), gzip.compress(run)),
    }[which]
    p = _tierank("eval", *args, "-m", "AP", "-m", "nDCG@3", "-f", "jsonl", "-q", input=data)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == ref and json.loads(p.stdout.splitlines()[-1])["expected"] > 0


@pytest.mark.parametrize(
    "name, compress, tool",
    [
        ("run.bz2", bz2.compress, "bunzip2"),
        ("run.xz", lzma.compress, "unxz"),
        ("run.zst", lambda b: b"\x28\xb5\x2f\xfd" + b, "unzstd"),
    ],
)
def test_another_compression_is_named_with_what_is_read(tmp_path, name, compress, tool):
    f = tmp_path / name
    f.write_bytes(compress(R.read_bytes()))
    p = invoke("eval", Q, f, "-m", "AP", check=False)
    kind = {"bunzip2": "bzip2", "unxz": "xz", "unzstd": "zstd"}[tool]
    assert p.returncode == 2 and p.stderr.splitlines() == [
        f"tierank: error: {f}: {kind}-compressed: tierank reads plain text or gzip (.gz); decompress it first ({tool})"
    ]


@pytest.mark.parametrize(
    "suffix, first",
    [
        (".tsv", "query\tmeasure\t"),
        (".csv", "query,measure,"),
        (".jsonl", '{"query": '),
        (".md", "| "),
    ],
)
def test_the_output_format_follows_the_file_extension(tmp_path, suffix, first):
    out = tmp_path / f"out{suffix}"
    invoke("eval", Q, R, "-m", "AP", "-o", out)
    assert out.read_text().startswith(first)
    explicit = tmp_path / f"explicit{suffix}"
    fmt = {".tsv": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".md": "markdown"}[suffix]
    invoke("eval", Q, R, "-m", "AP", "-o", explicit, "-f", fmt)
    assert explicit.read_text() == out.read_text()


def test_a_format_that_contradicts_the_extension_is_refused(tmp_path):
    out = tmp_path / "out.tsv"
    p = invoke("eval", Q, R, "-m", "AP", "-o", out, "-f", "jsonl", check=False)
    assert p.returncode == 2 and not out.exists()
    assert p.stderr.splitlines() == [
        f"tierank: error: -o {out}: a .tsv file is written as --format tsv, but "
        "--format jsonl is given: drop -f, or name the file otherwise"
    ]
    other = tmp_path / "out.txt"  # an extension that names no format: the default table
    invoke("eval", Q, R, "-m", "AP", "-o", other)
    assert "tierank eval" in other.read_text()


@pytest.mark.parametrize(
    "jobs", [(), ("-j", "2", "--block-bytes", "20000")], ids=["in memory", "streamed"]
)
def test_queries_the_qrels_lack_are_counted_on_stderr(tmp_path, jobs):
    lines = gzip.decompress(AQ.read_bytes()).decode().splitlines(keepends=True)
    first = lines[0].split()[0]
    qrels = tmp_path / "fewer.qrels"
    qrels.write_text("".join(line for line in lines if line.split()[0] != first))
    p = invoke("eval", qrels, AR, "-m", "AP", "-f", "tsv", *jobs)
    assert p.stderr.splitlines() == [
        f"tierank: note: {AR.name}: 1 of its 200 queries is not in {qrels} and is not "
        "evaluated (as trec_eval does)"
    ]
    assert (
        invoke("eval", qrels, AR, "-m", "AP", "-f", "tsv", "-c").stderr == ""
    )  # -c: the qrels' queries
    assert invoke("eval", AQ, AR, "-m", "AP", "-f", "tsv").stderr == ""


def test_the_two_tie_shares_are_named_in_both_outputs():
    """eval counts every document of a tie group (170 of 4,000: 4.25%); ties counts those tied with their
    predecessor, as the paper does (a group of n counts n - 1: 105 of 4,000, 2.62%); each says which."""
    ev = " ".join(invoke("eval", AQ, AR, "-m", "AP", env={"COLUMNS": "200"}).stdout.split())
    assert "170 documents in tie groups (4.2%)" in ev
    ties = " ".join(invoke("ties", AR, env={"COLUMNS": "200"}).stdout.split())
    assert (
        "2.62" in ties
        and "a tie group of n documents counts n - 1; tierank eval's share counts all n" in ties
    )
