"""`tierank eval QRELS RUN [RUN...]` (folders too) and `--jobs` streaming: same numbers, tagged by run.

Commands run in this process (``helpers.invoke``) except those with ``--jobs`` (worker processes)
and the killed evaluation, which run as users run them (``helpers.run_cli``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from helpers import invoke, run_cli
from tierank.examples import path as example_path

Q, R = example_path("askubuntu-qrels"), example_path("askubuntu-run")


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_several_runs_are_tagged_and_equal_one_at_a_time(tmp_path):
    other = tmp_path / "other.trec"
    # a second, different run: every score halved then rounded (more ties)
    lines = [
        x.split()
        for x in subprocess.run(
            ["zcat", str(R)], capture_output=True, text=True
        ).stdout.splitlines()
    ]
    other.write_text(
        "".join(f"{q} Q0 {d} {r} {round(float(s) / 2, 1)} t\n" for q, _, d, r, s, _ in lines)
    )
    both = _jsonl(invoke("eval", Q, R, other, "-m", "AP", "-m", "RR@10", "-f", "jsonl").stdout)
    assert {r["run"] for r in both} == {R.name, other.name}  # named as every command names runs
    for name in (R, other):
        alone = _jsonl(invoke("eval", Q, name, "-m", "AP", "-m", "RR@10", "-f", "jsonl").stdout)
        assert "run" not in alone[0]
        assert [
            {k: v for k, v in r.items() if k != "run"} for r in both if r["run"] == name.name
        ] == alone
    tsv = invoke("eval", Q, R, other, "-m", "AP", "-f", "tsv").stdout.splitlines()
    assert tsv[0].startswith("run\tquery\tmeasure\toblivious") and tsv[1].startswith(
        f"{R.name}\tall\tAP\t"
    )


def test_a_folder_of_runs_and_parallel_runs(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(R, folder / "a.trec.gz")
    shutil.copy(R, folder / "b.trec.gz")
    (folder / "notes.md").write_text("not a run")
    one = invoke("eval", Q, folder, "-m", "AP", "-f", "jsonl").stdout
    two = run_cli("eval", Q, folder, "-m", "AP", "-f", "jsonl", "-j", "2").stdout
    assert one == two
    assert {r["run"] for r in _jsonl(one)} == {"a.trec.gz", "b.trec.gz"}
    bad = invoke("eval", Q, R, R, "-m", "AP", check=False)
    assert bad.returncode == 2 and "given twice" in bad.stderr


def test_jobs_streams_with_the_same_bits():
    ref = invoke("eval", Q, R, "-q", "-m", "AP", "-m", "nDCG@10", "-f", "jsonl").stdout
    assert (
        run_cli("eval", Q, R, "-q", "-m", "AP", "-m", "nDCG@10", "-f", "jsonl", "-j", "2").stdout
        == ref
    )
    assert (
        run_cli("eval", Q, R, "-q", "-m", "map", "-f", "trec_eval", "-j", "1").stdout
        == invoke("eval", Q, R, "-q", "-m", "map", "-f", "trec_eval").stdout
    )
    bad = run_cli("eval", Q, R, "-m", "GMAP", "-j", "2", check=False)
    assert bad.returncode == 2 and "needs every query at once" in bad.stderr


@pytest.mark.keep_default  # the default tier's representative of its category
def test_a_killed_streaming_evaluation_leaves_no_output(tmp_path):
    run = tmp_path / "big.trec"
    with open(run, "w") as fh:
        for q in range(3000):
            fh.write(
                "".join(f"q{q} Q0 d{d} {d + 1} {(d * 7919) % 97 / 10} t\n" for d in range(300))
            )
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q % 300} 1\n" for q in range(3000)))
    out = tmp_path / "out.jsonl"
    for delay in (
        1.0,
        0.5,
        0.3,
        0.2,
        0.1,
    ):  # shorter until the kill comes before the end (a fast machine)
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tierank.cli",
                "eval",
                str(qrels),
                str(run),
                "-m",
                "AP",
                "-f",
                "jsonl",
                "-o",
                str(out),
                "-j",
                "1",
            ],
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        if p.wait() == -signal.SIGKILL:
            break
        out.unlink(
            missing_ok=True
        )  # it finished first: its output is complete; try again, killed sooner
    assert p.returncode == -signal.SIGKILL, "the evaluation finished before it could be killed"
    # no output; killed while writing, only its temporary file (named after the killed process) may be left,
    # and the next write into the folder removes it
    left = sorted(set(os.listdir(tmp_path)) - {"big.trec", "qrels.txt"})
    assert all(
        re.fullmatch(rf"\.out\.jsonl\.tierank-[A-Za-z0-9-]*-{p.pid}-[0-9a-f]{{8}}\.tmp", n)
        for n in left
    ), left
    small = tmp_path / "in" / "small.trec"
    small.parent.mkdir()
    small.write_text("q1 Q0 d1 1 1.0 t\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tierank.cli",
            "eval",
            str(qrels),
            str(small),
            "-m",
            "AP",
            "-f",
            "jsonl",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == [
        "big.trec",
        "in",
        "out.jsonl",
        "qrels.txt",
    ]  # the stale temporary file is gone
