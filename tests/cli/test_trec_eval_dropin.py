"""``tierank eval`` as a drop-in for trec_eval: its names, flags and ``--format trec_eval``.

Worked examples with hand-computed values (the layout, ``--stat``, ``-J``, ``runid``), the
``--stat`` columns against the jsonl records, and bad input (exit 2, one message per problem).
The conformance with the real trec_eval binary is in ``tests/crosscheck/test_trec_eval_binary.py``.
The command runs in-process (typer's runner) to keep the tests fast.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import tierank
from tierank.cli import app
from tierank.examples import path as example
from tierank.measures import parse_measure
from tierank.measures.names import plan, trec_name

TAB = "\t"


def tierank_eval(*args) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["eval", *map(str, args)])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def line(name: str, q: str, v: str) -> str:
    return f"{name:<22}{TAB}{q}{TAB}{v}"


@pytest.fixture
def small(tmp_path):
    """q1: a (rel 1) first, then b (grade 0) and c (grade 2) tied, then unjudged d;
    q2: unjudged y, then x (rel).  trec_eval's tie-break (docno descending) puts c before b.
    The run's tags differ: trec_eval's runid is the tag of the last line."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\n")
    run = tmp_path / "run"
    run.write_text(
        "q1 Q0 a 1 0.9 first\nq1 Q0 b 2 0.5 first\nq1 Q0 c 3 0.5 first\nq1 Q0 d 4 0.1 first\n"
        "q2 Q0 y 1 0.9 first\nq2 Q0 x 2 0.8 last\n\n"
    )
    return qrels, run


def test_layout_hand_computed(small):
    """P_1, P_2, map per query (q1: a, c, b, d; q2: y, x), then all; num_q in all only, as integer."""
    code, out, err = tierank_eval(
        "-q", "-f", "trec_eval", "-m", "P.2,1", "-m", "map", "-m", "num_q", *small
    )
    assert code == 0, err
    assert out.splitlines() == [
        line("map", "q1", "1.0000"),
        line("P_1", "q1", "1.0000"),
        line("P_2", "q1", "1.0000"),
        line("map", "q2", "0.5000"),
        line("P_1", "q2", "0.0000"),
        line("P_2", "q2", "0.5000"),
        line("num_q", "all", "2"),
        line("map", "all", "0.7500"),
        line("P_1", "all", "0.5000"),
        line("P_2", "all", "0.7500"),
    ]


@pytest.mark.parametrize(
    "stat, q1_map, q1_p2, all_map, all_p2",
    [
        # q1's tie (b non-relevant, c relevant) at ranks 2-3: min puts b first, max c first
        ("oblivious", "1.0000", "1.0000", "0.7500", "0.7500"),
        ("min", "0.8333", "0.5000", "0.6667", "0.5000"),  # map q1 = (1 + 2/3) / 2
        ("max", "1.0000", "1.0000", "0.7500", "0.7500"),
        ("expected", "0.9167", "0.7500", "0.7083", "0.6250"),  # E[prec at c] = (1 + 2/3) / 2
        ("range", "0.1667", "0.5000", "0.0833", "0.2500"),
        ("bias", "0.0833", "0.2500", "0.0417", "0.1250"),
        (
            "std",
            "0.0833",
            "0.2500",
            "0.0417",
            "0.1250",
        ),  # two equally likely values; std of the mean /2
    ],
)
def test_stat_hand_computed(small, stat, q1_map, q1_p2, all_map, all_p2):
    code, out, err = tierank_eval(
        "-q", "-f", "trec_eval", "--stat", stat, "-m", "map", "-m", "P.2", *small
    )
    assert code == 0, err
    got = {
        (ln.split(TAB)[0].rstrip(), ln.split(TAB)[1]): ln.split(TAB)[2] for ln in out.splitlines()
    }
    assert (got["map", "q1"], got["P_2", "q1"]) == (q1_map, q1_p2)
    assert (got["map", "all"], got["P_2", "all"]) == (all_map, all_p2)
    assert got["map", "q2"] == (
        "0.5000" if stat in ("oblivious", "min", "max", "expected") else "0.0000"
    )


@pytest.mark.parametrize("stat", ["oblivious", "expected", "min", "max", "std", "range", "bias"])
def test_stat_columns_equal_jsonl(stat):
    """Every value of ``--format trec_eval --stat S`` is the jsonl record's column S (same query and
    measure, at the printed precision) on the shipped AskUbuntu BM25 run (65 tie groups)."""
    files = (example("askubuntu-qrels"), example("askubuntu-run"))
    ms = [
        "-m",
        "official",
        "-m",
        "ndcg_cut.10",
        "-m",
        "recall.100",
        "-m",
        "success.1",
        "-m",
        "RR@10",
    ]
    code, out, err = tierank_eval("-q", "-f", "trec_eval", "--stat", stat, *ms, *files)
    assert code == 0, err
    code, js, err = tierank_eval("-q", "-f", "jsonl", *ms, *files)
    assert code == 0, err
    records = {}
    for rec in map(json.loads, js.splitlines()):
        m = parse_measure(rec["measure"])
        records[(trec_name(m) or str(m), rec["query"])] = rec[stat]
    lines = [ln.split(TAB) for ln in out.splitlines() if not ln.startswith("runid")]
    assert len(lines) > 1000
    varied = 0
    for name, q, v in lines:
        ref = records[(name.rstrip(), q)] if name.rstrip() != "num_q" else None
        if ref is None:
            continue
        assert abs(float(v) - ref) <= 5e-5 + 1e-12, (name, q, v, ref)
        varied += ref != 0
    assert varied > 0


def test_runid_is_the_last_lines_tag(small):
    code, out, err = tierank_eval("-f", "trec_eval", "-m", "official", *small)
    assert code == 0, err
    assert out.splitlines()[0] == line("runid", "all", "last")


def test_default_measures_are_official(small):
    code, out, err = tierank_eval("-f", "trec_eval", *small)
    assert code == 0, err
    names = [ln.split(TAB)[0].rstrip() for ln in out.splitlines()]
    assert names == ["runid"] + [e.name for e in plan(["official"]).printed]


def test_no_summary(small):
    code, out, err = tierank_eval("-q", "-n", "-f", "trec_eval", "-m", "map", *small)
    assert code == 0, err
    assert out.splitlines() == [line("map", "q1", "1.0000"), line("map", "q2", "0.5000")]
    code, out, err = tierank_eval("-n", "-f", "trec_eval", "-m", "map", *small)
    assert code == 0 and out == ""


def test_attached_short_options(small):
    """trec_eval users write -mP.2 and -l2."""
    code, out, err = tierank_eval("-f", "trec_eval", "-mP.2", "-l2", *small)
    assert code == 0, err
    assert out.splitlines() == [
        line("P_2", "all", "0.2500")
    ]  # only c (grade 2) counts: q1 1/2, q2 0


def test_max_retrieved(small):
    """-M 2 keeps ranks 1-2: the tie (b, c) straddles the cut, so P_2's min/max differ and the
    values are evaluate(max_depth=2)'s; -M 3 keeps the whole tie."""
    qrels, run = small
    res = (
        tierank.evaluate(str(qrels), str(run), ["AP", "P@5"], max_depth=2)
        .aggregate()
        .set_index("measure")
    )
    code, out, err = tierank_eval(
        "-f", "trec_eval", "--stat", "expected", "-M", "2", "-m", "map", "-m", "P.5", qrels, run
    )
    assert code == 0, err
    assert out.splitlines() == [
        line("map", "all", f"{res.loc['AP', 'expected']:6.4f}"),
        line("P_5", "all", f"{res.loc['P@5', 'expected']:6.4f}"),
    ]
    # map with -M 2: q1 (1 + E[c at rank 2] 1/2 * 2/2) / 2 = 0.75, q2 (x at rank 2) 0.5: mean 0.625
    assert out.splitlines()[0] == line("map", "all", "0.6250")
    _, full, _ = tierank_eval("-f", "trec_eval", "--stat", "expected", "-m", "map", qrels, run)
    assert full.splitlines() == [line("map", "all", "0.7083")]


def test_judged_only(tmp_path, small):
    """-J drops unjudged documents (d, y) before ranking, so x is at rank 1; like --condensed, and
    also (trec_eval's convention) documents with a negative grade, and a query left with no
    document still counts (q3: map 0)."""
    code, out, err = tierank_eval("-q", "-J", "-f", "trec_eval", "-m", "map", "-m", "num_q", *small)
    assert code == 0, err
    assert out.splitlines() == [
        line("map", "q1", "1.0000"),
        line("map", "q2", "1.0000"),
        line("num_q", "all", "2"),
        line("map", "all", "1.0000"),
    ]
    _, cond, _ = tierank_eval(
        "-q", "--condensed", "-f", "trec_eval", "-m", "map", "-m", "num_q", *small
    )
    assert cond == out
    qrels = tmp_path / "qrels-neg"
    qrels.write_text("q1 0 a -1\nq1 0 b 1\nq3 0 z 1\n")
    run = tmp_path / "run-neg"
    run.write_text("q1 Q0 a 1 0.9 t\nq1 Q0 b 2 0.5 t\nq3 Q0 w 1 0.9 t\n")
    code, out, err = tierank_eval(
        "-q", "-J", "-f", "trec_eval", "-m", "map", "-m", "num_q", qrels, run
    )
    assert code == 0, err
    assert out.splitlines() == [
        line("map", "q1", "1.0000"),
        line("map", "q3", "0.0000"),
        line("num_q", "all", "2"),
        line("map", "all", "0.5000"),
    ]
    _, cond, _ = tierank_eval("-q", "--condensed", "-f", "trec_eval", "-m", "map", qrels, run)
    assert cond.splitlines()[0] == line(
        "map", "q1", "0.5000"
    )  # a (grade -1) is judged for --condensed


def test_docs_in_collection_is_read_by_utility_only(small):
    _, a, _ = tierank_eval("-f", "trec_eval", "-m", "official", *small)
    code, b, err = tierank_eval("-f", "trec_eval", "-N", "1000000", "-m", "official", *small)
    assert code == 0, err
    assert a == b and a


def test_all_trec_leaves_nothing_out(small):
    code, out, err = tierank_eval("-f", "trec_eval", "-m", "all_trec", *small)
    assert code == 0, err
    assert "left out" not in err
    # every measure of all_trec is printed; relstring only per query (-q), as trec_eval prints it
    assert "ndcg_cut_10" in out and "infAP" in out and "utility" in out and "relstring" not in out
    _, per_query, _ = tierank_eval("-q", "-f", "trec_eval", "-m", "all_trec", *small)
    assert "relstring" in per_query


def test_trec_names_in_the_table_and_jsonl(small):
    code, out, err = tierank_eval("-f", "jsonl", "-m", "map", "-m", "P.2", *small)
    assert code == 0, err
    assert {json.loads(x)["measure"] for x in out.splitlines()} == {"AP", "P@2"}
    code, out, err = tierank_eval("-m", "ndcg_cut.3", "-m", "recip_rank", *small)
    assert code == 0, err
    assert "nDCG@3" in out and "RR" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--stat", "expected"], "--stat picks the statistic of --format trec_eval"),
        (["-n"], "-n/--no-summary applies to --format trec_eval"),
        (["-J", "--unjudged", "bounds", "-m", "P.5"], "-J/--judged-only drops unjudged documents"),
        (["-m", "ndcg@10"], "did you mean 'nDCG@10'"),
        (["-m", "MRR@10"], "did you mean 'RR@10'"),
        (["-m", "yaap"], "is not implemented by tierank"),
        (["-m", "P.0"], "cutoffs must be positive"),
        (["-m", "P.5,5"], "duplicate cutoffs"),
        (["-f", "trec_eval", "--stat", "median"], "median"),
        (["-M", "0"], "-M"),
    ],
)
def test_bad_input_exit_2(small, args, message):
    code, out, err = tierank_eval(*args, *small)
    assert code == 2, (out, err)
    assert message in err
    assert "Traceback" not in err
