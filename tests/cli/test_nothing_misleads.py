"""What the CLI writes is what was asked, and its refusals say what the input is."""

from __future__ import annotations

import pytest

from helpers import invoke

QRELS = "q1 0 a 2\nq1 0 b 0\nq2 0 c 1\n"
RUN = "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 x 3 0.5 t\nq2 Q0 c 1 0.7 t\n"


@pytest.fixture
def pair(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "json", "csv", "table"])
@pytest.mark.parametrize("per_query", [(), ("-q",)])
def test_relstring_alone_writes_no_measure_nobody_asked_for(pair, fmt, per_query):
    """``-m relstring.10`` in a layout that cannot print strings: one line, exit 2, nothing written
    (not a ``Hits@1`` the command added to find the query set)."""
    r = invoke("eval", *pair, "-m", "relstring.10", "-f", fmt, *per_query, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert "Hits" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "--format trec_eval" in r.stderr and r.stderr.startswith(
        "tierank: error: -m relstring.10"
    )


def test_runid_and_relstring_print_only_themselves_in_trec_eval(pair):
    r = invoke("eval", *pair, "-m", "runid", "-m", "relstring.10", "-f", "trec_eval", "-q")
    names = {line.split("\t")[0].strip() for line in r.stdout.splitlines()}
    assert names == {"runid", "relstring_10"}, r.stdout
    assert "relstring_10          \tq1\t'02-'" in r.stdout  # tie: docid descending


def test_relstring_beside_a_measure_leaves_only_the_string_out(pair):
    r = invoke("eval", *pair, "-m", "relstring.10", "-m", "P@2", "-f", "tsv")
    assert [line.split("\t")[1] for line in r.stdout.splitlines()[1:]] == ["P@2"]
    assert "relstring_10: a string per query" in r.stderr


def _one_error(r) -> str:
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tierank: error: "), r.stderr
    return lines[0]


def test_a_run_gzipped_twice_is_called_compressed_twice_wherever_it_is_given(pair, tmp_path):
    import gzip

    qrels, run = pair
    twice = tmp_path / "run.gz"
    twice.write_bytes(gzip.compress(gzip.compress(run.read_bytes())))
    for args in ((qrels, twice), (twice, qrels), (qrels, run, twice)):
        line = _one_error(invoke("eval", *args, "-m", "P@2", check=False))
        assert "compressed twice" in line and "looks like" not in line, args
        assert line.startswith(f"tierank: error: {twice}: ")


@pytest.mark.parametrize("seed", range(3))
def test_random_bytes_named_run_are_not_a_trec_file(pair, tmp_path, seed):
    """Random bytes (here with a first line of four fields, the last a number: qrels by its field
    count) are said to be no TREC file, not qrels given as a run."""
    import random

    qrels, _ = pair
    noise = random.Random(seed).randbytes(2000)
    bad = tmp_path / "x.run"
    bad.write_bytes(b"\x89\x01\xfe \x02\x9c \xc3\x00\xff 7\n" + noise)
    for args in ((qrels, bad), (bad, qrels)):
        line = _one_error(invoke("eval", *args, "-m", "P@2", check=False))
        assert (
            line
            == f"tierank: error: {bad}: not a TREC file: its first line is binary data, not text"
        )


def test_a_latin1_letter_is_still_located_by_the_reader(pair, tmp_path):
    qrels, _ = pair
    run = tmp_path / "latin1.run"
    run.write_bytes("q1 Q0 caf\xe9 1 1.0 t\n".encode("latin-1"))
    r = invoke("eval", qrels, run, "-m", "P@2", check=False)
    assert r.returncode == 2 and f"{run}:1:" in r.stderr and "not valid UTF-8" in r.stderr


def test_subtopic_qrels_with_plain_measures_are_named_in_one_line(tmp_path):
    """Subtopic qrels (a document judged once per subtopic) given to plain measures: one line that
    says what the file is, not one "judged twice" line per repeat and a count of the rest."""
    lines = [
        f"q{q} {s} d{d} {(q + s + d) % 3}" for q in range(4) for s in (1, 2, 3) for d in range(10)
    ]
    (tmp_path / "sub").write_text("\n".join(lines) + "\n")
    (tmp_path / "run").write_text(
        "".join(f"q0 Q0 d{d} {d + 1} {1 - d / 10} t\n" for d in range(10))
    )
    line = _one_error(invoke("eval", tmp_path / "sub", tmp_path / "run", "-m", "P@5", check=False))
    assert line.startswith(f"tierank: error: {tmp_path / 'sub'}:11: document 'd0' judged again")
    assert "(first at line 1; 80 such lines): subtopic qrels (qid subtopic docid grade)" in line
    assert "intent-aware" in line and "more problems" not in line
    ok = invoke("eval", tmp_path / "sub", tmp_path / "run", "-m", "alpha_nDCG@5", "-f", "tsv")
    assert ok.stdout.splitlines()[1].split("\t")[1] == "alpha_nDCG@5"


def test_a_document_judged_twice_under_one_iter_is_still_located(tmp_path):
    (tmp_path / "q").write_text("q 0 a 1\nq 0 b 0\nq 0 a 2\n")
    (tmp_path / "run").write_text("q Q0 a 1 1.0 t\n")
    line = _one_error(invoke("eval", tmp_path / "q", tmp_path / "run", "-m", "P@5", check=False))
    assert (
        line
        == f"tierank: error: {tmp_path / 'q'}:3: document 'a' judged twice for query 'q' (first at line 1)"
    )
