"""What a newcomer tripped over (issue 21) and the CLI's naming and message bugs of issue 22
(items 5 and 12): each test failed before its fix."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tierank
import tierank.cli
from helpers import invoke
from tierank.examples import path as example_path

Q, R = example_path("askubuntu-qrels"), example_path("askubuntu-run")
QRELS, RUN = example_path("qrels"), example_path("run")


def _one_error(p: subprocess.CompletedProcess) -> str:
    """The single ``tierank: error:`` line of a clean exit 2."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tierank: error: "), p.stderr
    return lines[0]


def _cli_at(width: int, *args) -> str:
    """``tierank ARGS`` on a terminal ``width`` columns wide (rich reads COLUMNS)."""
    return invoke(*args, env={"COLUMNS": str(width), "TERM": "dumb"}).stdout


# -- 1. swapped QRELS and RUN; QRELS first everywhere ------------------------------------------------


@pytest.mark.parametrize(
    "cmd",
    [("eval",), ("sweep",), ("report", "eval"), ("plot", "cutoff")],
    ids=["eval", "sweep", "report eval", "plot cutoff"],
)
def test_swapped_qrels_and_run_is_one_line(cmd, tmp_path):
    """`tierank eval RUN QRELS` printed 20 "expected 4 columns ... found 6" lines and "3980 more problems"."""
    out = ()
    if cmd[0] in ("report", "plot"):
        pytest.importorskip("matplotlib")
        out = ("-o", tmp_path / "out")
    line = _one_error(invoke(*cmd, R, Q, *out, check=False))
    assert line.startswith("tierank: error: did you swap QRELS and RUN? ")
    assert f"{R} looks like a run" in line and f"{Q} like qrels" in line and " QRELS RUN" in line
    assert list(tmp_path.iterdir()) == []


def test_a_qrels_file_given_as_the_run_or_a_run_as_the_qrels(tmp_path):
    run = tmp_path / "r.run"
    shutil.copy(RUN, run)
    assert "is given as a run but looks like qrels" in _one_error(
        invoke("eval", QRELS, QRELS, check=False)
    )
    assert "is given as the qrels but looks like a run" in _one_error(
        invoke("eval", RUN, run, check=False)
    )
    assert "is given as a run but looks like qrels" in _one_error(
        invoke("ties", RUN, QRELS, check=False)
    )
    # compare: QRELS first as eval, or --qrels; runs without qrels are refused in one line
    line = _one_error(invoke("compare", RUN, run, check=False))
    assert "is given as the qrels but looks like a run" in line and "--qrels" in line


def test_sweep_takes_qrels_first():
    """`sweep` took RUN QRELS (and guessed either order); every command takes QRELS before RUN."""
    doc = json.loads(
        invoke("sweep", QRELS, RUN, "-m", "R@3", "--formats", "fp32", "-f", "json").stdout
    )
    assert doc["rows"][0]["format"] == "fp32"
    for cmd in (
        ("sweep",),
        ("plot", "sweep"),
        ("report", "sweep"),
        ("eval",),
        ("report", "eval"),
        ("plot", "cutoff"),
    ):
        usage = " ".join(invoke(*cmd, "--help").stdout.split())
        assert re.search(r"\{QRELS\} \{RUN\}", usage), (cmd, usage[:200])


def test_compare_takes_qrels_first_like_eval(tmp_path):
    other = tmp_path / "other.run"
    shutil.copy(RUN, other)
    first = json.loads(invoke("compare", QRELS, RUN, other, "-m", "R@3", "-f", "json").stdout)
    option = json.loads(
        invoke("compare", RUN, other, "--qrels", QRELS, "-m", "R@3", "-f", "json").stdout
    )
    assert first == option and [s["name"] for s in first["systems"]] == ["figure1.run", "other.run"]


# -- 5 (issue 22). one naming rule: no run lost to a file-name clash ---------------------------------------


def _clashing(tmp_path):
    (tmp_path / "sub").mkdir()
    a, b, sub_a = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "sub" / "a.run"
    lines = [x.split() for x in gzip.decompress(R.read_bytes()).decode().splitlines()]
    a.write_text(gzip.decompress(R.read_bytes()).decode())
    # b: scores rounded (more ties); sub/a: every score halved and rounded differently
    b.write_text("".join(f"{q} Q0 {d} {r} {round(float(s), 0)} b\n" for q, _, d, r, s, _ in lines))
    sub_a.write_text(
        "".join(f"{q} Q0 {d} {r} {round(float(s) / 3, 1)} s\n" for q, _, d, r, s, _ in lines)
    )
    return sub_a, a, b


def test_compare_keeps_runs_whose_file_names_clash(tmp_path, monkeypatch):
    """`tierank compare sub/a.run a.run b.run` compared two systems: sub/a.run was overwritten."""
    sub_a, a, b = _clashing(tmp_path)
    monkeypatch.chdir(tmp_path)
    doc = json.loads(
        invoke(
            "compare", "sub/a.run", "a.run", "b.run", "--qrels", Q, "-m", "RR@10", "-f", "json"
        ).stdout
    )
    assert sorted(s["name"] for s in doc["systems"]) == ["a.run", "b.run", "sub/a.run"]
    alone = {
        n: json.loads(invoke("eval", Q, n, "-m", "RR@10", "-f", "json").stdout)["aggregate"][0][
            "expected"
        ]
        for n in ("sub/a.run", "a.run", "b.run")
    }
    assert {s["name"]: s["expected"] for s in doc["systems"]} == pytest.approx(alone, abs=1e-12)
    assert len(set(alone.values())) == 3  # three different systems


def test_every_command_names_runs_by_the_shortest_distinguishing_path(tmp_path, monkeypatch):
    _clashing(tmp_path)
    monkeypatch.chdir(tmp_path)
    sub_a, a, b = "sub/a.run", "a.run", "b.run"
    ties = [r["name"] for r in json.loads(invoke("ties", sub_a, a, b, "-f", "json").stdout)["runs"]]
    assert ties == ["sub/a.run", "a.run", "b.run"]
    ev = {
        json.loads(x)["run"]
        for x in invoke("eval", Q, sub_a, a, b, "-m", "AP", "-f", "jsonl").stdout.split("\n")
        if x
    }
    assert ev == {"sub/a.run", "a.run", "b.run"}
    table = invoke("eval", Q, sub_a, a, "-m", "AP").stdout
    assert "run sub/a.run" in table and "run a.run" in table and str(tmp_path) not in table
    from tierank.stream import evaluate_many

    assert list(evaluate_many(Q, [sub_a, a], ["AP"])) == ["sub/a.run", "a.run"]
    same = _one_error(invoke("ties", a, "sub/../a.run", check=False))
    assert same.endswith("a.run: given twice")
    absolute = [
        r["name"]
        for r in json.loads(invoke("ties", tmp_path / sub_a, tmp_path / a, "-f", "json").stdout)[
            "runs"
        ]
    ]
    assert absolute == [
        "sub/a.run",
        f"{tmp_path.name}/a.run",
    ]  # the shortest suffix that tells them apart


def test_plots_and_reports_keep_clashing_runs(tmp_path, monkeypatch):
    from tierank.cli.common import runs_by_name

    _clashing(tmp_path)
    monkeypatch.chdir(tmp_path)
    sub_a, a, b = (Path(x) for x in ("sub/a.run", "a.run", "b.run"))
    assert list(runs_by_name([sub_a, a, b], None)) == ["sub/a.run", "a.run", "b.run"]
    assert list(runs_by_name([sub_a, a], "fp32,bf16")) == [
        "sub/a.run [fp32]",
        "sub/a.run [bf16]",
        "a.run [fp32]",
        "a.run [bf16]",
    ]


# -- 2. compare keeps system names apart ----------------------------------------------------------


def test_compare_pairs_keep_long_system_names_apart(tmp_path):
    """The pairs table showed `askubunt…` and `askubuntu…`."""
    bf16 = tmp_path / "askubuntu-test.bm25.bf16.run"
    invoke("sweep", Q, R, "--formats", "bf16", "--write-runs", tmp_path, "-f", "json")
    out = _cli_at(100, "compare", R, bf16, "--qrels", Q)
    pairs = out[out.index("pairs (A ranked above B") :]
    row = next(line for line in pairs.splitlines() if "undecidable" in line or "FLIP" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert {cells[0], cells[1]} == {"…bf16.run", "…run.gz"}
    assert (
        "askubuntu-test.bm25.bf16.run" in out and "askubuntu-test.bm25.run.gz" in out
    )  # the systems table


def test_distinct_labels_are_unique_and_short():
    from tierank.report.terminal import distinct_labels

    names = [
        "runs/x/askubuntu-test.bm25.bf16.run",
        "runs/x/askubuntu-test.bm25.fp16.run",
        "runs/x/askubuntu-test.bm25.run",
    ]
    labels = distinct_labels(names)
    assert len(set(labels.values())) == 3 and all(len(v) < len(k) for k, v in labels.items())
    assert all(v.strip("…") in k for k, v in labels.items())
    assert distinct_labels(["a.run", "a.run.gz"]) == {"a.run": "a.run", "a.run.gz": "a.run.gz"}


# -- 3. numbers, titles and help as people read them ---------------------------------------------------


def test_counts_print_as_integers_and_no_negative_zero():
    """`NumQ 200.0000`; a bias of -0.00001 printed `-0.0000`."""
    out = _cli_at(120, "eval", Q, R, "-m", "num_q", "-m", "NumRet", "-m", "nDCG@10")
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
        for line in out.splitlines()
        if line.startswith("│")
    }
    assert rows["NumQ"][:6] == ["200", "200", "200", "200", "0", "0"]
    assert rows["NumRet"][:4] == ["4000"] * 4
    assert rows["nDCG@10"][0] == "0.5695"
    from tierank.report.terminal import num, value

    assert (
        value(-0.00004) == "0.0000" and num(-0.00004) == "0.0000" and num(-0.00005, 4) == "-0.0001"
    )
    assert value(-0.00006) == "-0.0001"


def test_bias_of_a_sweep_prints_no_negative_zero(tmp_path):
    bf16 = tmp_path / "askubuntu-test.bm25.bf16.run"
    invoke("sweep", Q, R, "--formats", "bf16", "--write-runs", tmp_path, "-f", "json")
    out = _cli_at(140, "compare", R, bf16, "--qrels", Q)
    assert "-0.0000" not in out
    assert re.search(
        r"askubuntu-test\.bm25\.bf16\.run\s+│.*│\s+0\.0000 │", out
    )  # its bias is -0.00001


def test_help_never_breaks_a_sentence_mid_line():
    """`tierank --help` listed `sweep ... scores in each format and` / `report ties, ...` on two lines."""
    top = _cli_at(80, "--help")
    assert "Re-express RUN's scores in each format and report ties" in " ".join(
        line.strip("│ ") for line in top.splitlines()
    )
    listing = top.split("Commands:")[1]
    for word in re.findall(
        r"\S+-\S+", " ".join(tierank.cli.SUMMARIES.values())
    ):  # no break at a hyphen
        assert not re.search(re.escape(word.split("-")[0]) + r"-\n", listing), word
    ev = _cli_at(80, "eval", "--help")
    assert "with --format trec_eval, its output layout are accepted" in " ".join(ev.split())
    assert not any(line.rstrip().endswith("trec_eval, its") for line in ev.splitlines())


def test_multi_run_titles_are_short_names_on_one_line(tmp_path):
    deep = tmp_path / ("d" * 60) / "very-long-folder-name-of-runs"
    deep.mkdir(parents=True)
    shutil.copy(R, deep / "bm25.run.gz")
    shutil.copy(R, deep / "bm25-copy.run.gz")
    out = _cli_at(80, "eval", Q, deep / "bm25.run.gz", deep / "bm25-copy.run.gz", "-m", "AP")
    titles = [line.strip() for line in out.splitlines() if line.strip().startswith("run ")]
    assert titles == ["run bm25.run.gz", "run bm25-copy.run.gz"]


# -- 4. measure names, IPrec's description, random tie-break, examples ---------------------------------


def test_parse_measure_accepts_what_evaluate_accepts():
    assert tierank.parse_measure("ndcg_cut.10") == tierank.parse_measure("nDCG@10")
    assert str(tierank.parse_measure("map")) == "AP" and str(tierank.parse_measure("P.5")) == "P@5"
    res = tierank.evaluate(QRELS, RUN, ["ndcg_cut.10"])
    assert res.measures == [tierank.parse_measure("ndcg_cut.10")]
    from tierank.measures import parse_measures

    assert [str(m) for m in parse_measures(["P.5,10", "map"])] == ["P@5", "P@10", "AP"]
    with pytest.raises(tierank.TierankInputError, match="is 2 measures"):
        tierank.parse_measure("P.5,10")


def test_measures_describes_iprec_as_a_recall_level():
    from tierank.measures import describe

    (params,) = [p for fam, p, _ in describe() if fam == "IPrec"]
    assert (
        "@k" not in params and "@recall required (recall level in [0, 1], e.g. IPrec@0.5)" in params
    )
    out = _cli_at(300, "measures")
    (row,) = [line for line in out.splitlines() if line.startswith("│ IPrec ")]
    assert "@recall required (recall level in [0, 1], e.g. IPrec@0.5)" in row and "@k" not in row
    invoke("eval", QRELS, RUN, "-m", "IPrec@0.5", "-f", "tsv")


def test_random_tie_break_needs_its_seed():
    """`--tie-break random` silently meant random:0."""
    line = _one_error(invoke("eval", QRELS, RUN, "--tie-break", "random", check=False))
    assert "random needs a seed: random:SEED" in line
    assert invoke("eval", QRELS, RUN, "--tie-break", "random:3", "-m", "P@1", "-f", "tsv").stdout


def test_example_synopsis_lists_every_example():
    from tierank.examples import NAMES

    top = " ".join(_cli_at(200, "--help").split())
    assert all(n in top for n in NAMES) and "rag24-mini" in top
    assert "rag24-mini" in " ".join(invoke("example", "--help").stdout.split())


def test_readme_outputs_are_git_ignored():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ignore = open(os.path.join(root, ".gitignore")).read().split()
    assert "/runs/" in ignore and "/out/" in ignore


# -- 12 (issue 22). no emoji codes or markup from the inputs ---------------------------------------


def test_line_numbers_and_ids_like_emoji_codes_are_shown_as_written(tmp_path):
    """`bad.run:100: score ...` printed as `bad.run💯 score ...`; ids like `:100:` were mangled in tables."""
    bad = tmp_path / "bad.run"
    bad.write_text(
        "".join(f"q1 Q0 d{i} {i} {1000 - i} x\n" for i in range(1, 100))
        + "q1 Q0 z 100 abc x\n"
        + "".join(f"q1 Q0 e{i} {i} 1 x\n" for i in range(101, 1234))
        + "q1 Q0 y 1234 nan x\n"
    )
    p = invoke("eval", QRELS, bad, check=False)
    assert p.returncode == 2
    assert f"tierank: error: {bad}:100: score 'abc' is not a number" in p.stderr.splitlines()
    assert any(line.startswith(f"tierank: error: {bad}:1234: ") for line in p.stderr.splitlines())
    assert "💯" not in p.stderr and "🔢" not in p.stderr
    run = tmp_path / ":100:.run"
    run.write_text(":100: Q0 [b]d1[/b] 1 2 x\n:100: Q0 :1234: 2 1 x\n:smile: Q0 d 1 1 x\n")
    qrels = tmp_path / "q.txt"
    qrels.write_text(":100: 0 [b]d1[/b] 1\n:smile: 0 d 1\n")
    table = _cli_at(120, "eval", qrels, run, "-q", "-m", "P@1")
    assert (
        "│ :100:  " in table and "│ :smile: " in table and "💯" not in table and "😄" not in table
    )
    other = tmp_path / "[b]x.run"
    shutil.copy(run, other)
    ties = _cli_at(160, "ties", run, other)
    assert ":100:.run" in ties and "[b]x.run" in ties and "💯" not in ties
    cmp = _cli_at(160, "compare", qrels, run, other, "-m", "P@1")
    assert ":100:.run" in cmp and "[b]x.run" in cmp and "💯" not in cmp


@pytest.mark.parametrize(
    "measure, says",
    [
        ("nDCG@10", "nDCG@10: the curves take a measure family without a cutoff (e.g. nDCG)"),
        ("Bpref", "Bpref: not a measure family with a rank cutoff @k; the curves take one of AP, "),
    ],
)
def test_a_curve_measure_with_a_cutoff_or_without_one_is_one_line(measure, says, tmp_path):
    """`plot cutoff -m nDCG@10` printed 20 lines ('nDCG@10@1' ... 'nDCG@10@20')."""
    pytest.importorskip("matplotlib")
    line = _one_error(
        invoke("plot", "cutoff", QRELS, RUN, "-m", measure, "-o", tmp_path / "f", check=False)
    )
    assert line.startswith(f"tierank: error: {says}"), line
    assert not list(tmp_path.iterdir())
