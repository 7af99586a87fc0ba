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
