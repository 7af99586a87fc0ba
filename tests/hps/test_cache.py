"""The score cache and OUT/ of the rerank protocol, with the fake scorer (no torch).

A cache record is never trusted: each kind of damage below is reported with
the cache file and line, its query is scored again, the records around it are
kept, and the runs and the table are those of an undamaged run.  The scorer's
description is stored with the scores, so a re-run that scores nothing writes
the same table.json.  OUT/ is locked while a run uses it.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.hps import registry
from tierank.hps.cache import CacheWarning, ScoreCache
from tierank.hps.output import locked
from tierank.hps.protocol import RERANK_MEASURES, RERANK_REGIMES, rerank
from tierank.io.readers import read_run
from tierank.report.formats import jsonable

from .fakes import FakeScorer, factory, rerank_fake, run_cli_process, write_set


def _counting(calls: list):
    """A factory whose scorers record (group, query) per scored query."""

    def make(spec, group):
        s = FakeScorer(group)
        orig = s.score_query

        def score_query(q, docs, variants):
            calls.append((group, q))
            return orig(q, docs, variants)

        s.score_query = score_query
        return s

    return make


def _record_line(out, qid):
    """The one cache file of ``out``, its lines, and the index of ``qid``'s record (q0, q1, q2 in order)."""
    (path,) = (out / "cache").glob("*.jsonl")
    lines = path.read_text().splitlines()
    queries = [json.loads(x).get("query") for x in lines]
    assert [q for q in queries if q] == ["q0", "q1", "q2"]
    return path, lines, queries.index(qid)


# ------------------------------------------------------------- metadata


def test_fully_cached_rerun_writes_the_same_table_json(tmp_path):
    data = write_set(tmp_path / "set")
    first = rerank_fake(tmp_path / "out", data)
    table = json.loads((tmp_path / "out" / "table.json").read_text())
    assert table["settings"]["scorers"] == {
        "fp32": {"scorer": "fake", "group": "fp32"},
        "bf16": {"scorer": "fake", "group": "bf16"},
    }
    log: list = []
    again = rerank_fake(tmp_path / "out", data, factory=factory(log))
    assert log == []  # nothing scored, no model loaded
    assert again.settings["scorers"] == first.settings["scorers"]  # was {} before the fix
    assert json.loads((tmp_path / "out" / "table.json").read_text()) == table


def test_python_rerank_writes_every_file_of_out(tmp_path):
    data = write_set(tmp_path / "set")
    res = rerank_fake(tmp_path / "out", data, regimes="fp32,bf16")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["cache", "runs", "table.json", "table.tsv"]
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "yesno_fake.bf16.reasoning.jsonl",
        "yesno_fake.bf16.run",
        "yesno_fake.fp32.reasoning.jsonl",
        "yesno_fake.fp32.run",
    ]
    assert json.loads((out / "table.json").read_text()) == json.loads(
        json.dumps(jsonable(res.document()))
    )
    tsv = (out / "table.tsv").read_text().splitlines()
    assert tsv[0].split("\t")[:4] == ["query", "variant", "measure", "fp32"] and len(
        tsv
    ) == 1 + len(res.rows)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


TIMING = ("model_s", "scoring_ms", "hps_overhead")


def test_cli_and_python_write_the_same_out(tmp_path, monkeypatch):
    """`tierank rerank` and rerank(out_dir=...) with their defaults (regimes, measures) on the same input:
    the same files, byte for byte (the fake scorer's timings are constant), table.json equal but for timings."""
    data = write_set(tmp_path / "set")
    model = tmp_path / "model"
    model.mkdir()
    out = tmp_path / "out"
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{model}",
        "--device",
        "cpu",
        "-o",
        out,
        "-f",
        "json",
        fake=True,
    )
    assert r.returncode == 0, r.stderr
    printed, marker = r.stdout.rsplit("torch imported: ", 1)
    assert marker == "False\n"
    cli = _files(out)
    out.rename(
        tmp_path / "cli"
    )  # the Python run writes to the same path: paths in table.json agree
    monkeypatch.setitem(
        registry._KINDS,
        "fake",
        registry.ModelKind("fake", "tests.hps.fakes:FakeScorer", frozenset({"precision", "head"})),
    )
    res = rerank(data, f"fake:{model}", out_dir=out, device="cpu")
    py = _files(out)
    assert res.settings["variants"] == list(
        RERANK_REGIMES
    )  # one default for the command and the function
    assert res.settings["measures"] == list(RERANK_MEASURES)
    runs = sorted(k for k in py if k.startswith("runs/"))
    assert runs == [
        f"runs/fake_model.{v}.{ext}"
        for v in ("bf16", "bf16_fp32", "fp32")
        for ext in ("reasoning.jsonl", "run")
    ]
    assert sorted(cli) == sorted(py) and len([k for k in py if k.startswith("cache/")]) == 3
    for name in runs + ["table.tsv"]:
        assert cli[name] == py[name], name
    tables = [json.loads(t["table.json"]) for t in (cli, py)]
    for t in tables:
        for row in t["rows"]:
            for k in TIMING:
                row.pop(k)
    assert tables[0] == tables[1]
    assert json.loads(printed) == json.loads(py["table.json"])  # what -f json prints is table.json


def test_cli_prints_cache_warnings_and_errors_as_one_line(tmp_path):
    data = write_set(tmp_path / "set")
    model = tmp_path / "model"
    model.mkdir()
    out = tmp_path / "out"
    args = (
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{model}",
        "--device",
        "cpu",
        "-o",
        out,
        "--regimes",
        "fp32",
    )
    assert run_cli_process(*args, fake=True).returncode == 0
    path, lines, i = _record_line(out, "q1")
    path.write_text("\n".join(lines[:i] + ["{not json"] + lines[i + 1 :]) + "\n")
    r = run_cli_process(*args, fake=True)
    assert r.returncode == 0
    assert r.stderr == (
        f"tierank: warning: {path}:{i + 1}: unusable cache record (not valid JSON); "
        "its query is scored again\n"
    )
    head = json.loads(path.read_text().splitlines()[0])
    head["key"]["batch_size"] = 99  # settings that are not those of the run
    path.write_text(json.dumps(head) + "\n")
    r = run_cli_process(*args, fake=True)
    assert (r.returncode, r.stderr) == (
        2,
        f"tierank: error: {path}: cache key does not match the settings; delete the file\n",
    )


def test_in_memory_evaluation_equals_the_written_runs(tmp_path):
    data = write_set(tmp_path / "set", n_queries=5)
    for tie_break in ("trec_eval", "input"):
        res = rerank_fake(tmp_path / tie_break, data, tie_break=tie_break)
        for v, path in res.runs.items():
            from_file = tierank.evaluate(
                data / "qrels.txt", read_run(path), ["nDCG@10", "RR@10", "P@3"], tie_break=tie_break
            )
            assert from_file.records() == res.evals[v].records()
            assert from_file.settings == res.evals[v].settings


# ------------------------------------------------------------- damaged records


def _damage_cut_scores(rec):
    rec["scores"] = rec["scores"][:2]


def _damage_change_score(rec):
    rec["scores"][0] = rec["scores"][0] + 0.25  # still a finite number: only the digest tells


def _damage_extra_scores(rec):
    rec["scores"] = rec["scores"] + [0.5]


def _damage_nan(rec):
    rec["scores"][1] = math.nan


def _damage_docids(rec):
    rec["docids"][0] = "elsewhere"


def _damage_types(rec):
    rec["scores"] = "0.5"


DAMAGE = {
    "cut scores": (_damage_cut_scores, "2 scores for 6 documents"),
    "changed score": (_damage_change_score, "check digest"),
    "extra scores": (_damage_extra_scores, "7 scores for 6 documents"),
    "nan": (_damage_nan, "not a finite number"),
    "docids": (_damage_docids, "check digest"),
    "types": (_damage_types, "scores is not a list"),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_damaged_record_is_reported_and_rescored(tmp_path, name):
    damage, reason = DAMAGE[name]
    data = write_set(tmp_path / "set")
    clean = rerank_fake(tmp_path / "clean", data, regimes="fp32")
    out = tmp_path / "out"
    rerank_fake(out, data, regimes="fp32")
    path, lines, i = _record_line(out, "q1")
    rec = json.loads(lines[i])
    damage(rec)
    lines[i] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    calls: list = []
    with pytest.warns(
        CacheWarning, match=rf"{path.name}:{i + 1}: unusable cache record \(.*{reason}"
    ):
        res = rerank_fake(out, data, regimes="fp32", factory=_counting(calls))
    assert calls == [("fp32", "query 1")]  # only the damaged query; q2 after it is kept
    assert res.runs["fp32"].read_text() == clean.runs["fp32"].read_text()
    assert [r["expected"] for r in res.rows] == [r["expected"] for r in clean.rows]
    with (
        warnings.catch_warnings()
    ):  # the file was repaired: a third run warns of nothing, scores nothing
        warnings.simplefilter("error")
        calls.clear()
        rerank_fake(out, data, regimes="fp32", factory=_counting(calls))
    assert calls == []


@pytest.mark.parametrize("line", ["{}", "[1, 2]", "not json", '{"query": "q1"}', "null"])
def test_garbage_line_between_records(tmp_path, line):
    data = write_set(tmp_path / "set")
    clean = rerank_fake(tmp_path / "clean", data, regimes="fp32")
    out = tmp_path / "out"
    rerank_fake(out, data, regimes="fp32")
    path, lines, i = _record_line(out, "q1")
    lines[i] = line  # q1's record replaced by garbage
    path.write_text("\n".join(lines) + "\n")
    calls: list = []
    with pytest.warns(CacheWarning, match=rf"{path.name}:{i + 1}:"):
        res = rerank_fake(out, data, regimes="fp32", factory=_counting(calls))
    assert calls == [("fp32", "query 1")]
    assert res.runs["fp32"].read_text() == clean.runs["fp32"].read_text()


def test_record_for_other_candidates_is_rescored_once_reported(tmp_path):
    data = write_set(tmp_path / "set")
    rerank_fake(tmp_path / "out", data, regimes="fp32", depth=3)
    calls: list = []
    with pytest.warns(CacheWarning, match="3 cached record.*other candidates") as rec:
        res = rerank_fake(tmp_path / "out", data, regimes="fp32", factory=_counting(calls))
    assert len(rec) == 1 and len(calls) == 3
    assert res.settings["candidates"] == 18


def test_cache_rejects_bad_records_when_written(tmp_path):
    cache = ScoreCache(tmp_path, {"model": "m", "variant": "fp32", "batch_size": 1})
    with pytest.raises(tierank.errors.TierankError, match="not a finite number"):
        cache.append(
            {"query": "q", "docids": ["a"], "scores": [math.inf], "model_s": 0.0, "scoring_s": 0.0}
        )
    assert not cache.path.exists()


# ------------------------------------------------------------- the lock


def test_second_run_on_the_same_out_is_refused(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    out.mkdir()
    log: list = []
    with locked([out]):  # as another process would hold it
        with pytest.raises(
            TierankInputError, match="another `tierank rerank` run is using this directory"
        ):
            rerank_fake(out, data, regimes="fp32", factory=factory(log))
    assert log == [] and not list(out.rglob("*.jsonl"))  # refused before any scoring
    rerank_fake(out, data, regimes="fp32", factory=factory(log))  # released: the next run works
    assert log == ["fp32"]


# ------------------------------------------------------------- SIGKILL


def test_sigkilled_run_keeps_every_finished_query(tmp_path):
    """A process killed (SIGKILL) while scoring keeps each query it finished; the next run scores the rest."""
    data = write_set(tmp_path / "set", n_queries=6)
    clean = rerank_fake(tmp_path / "clean", data)
    root = Path(__file__).resolve().parents[2]
    code = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from tests.hps.fakes import FakeScorer, rerank_fake\n"
        "from pathlib import Path\n"
        "class Killed(FakeScorer):\n"
        "    def score_query(self, q, docs, variants):\n"
        "        if self.calls == 3:\n"
        "            os.kill(os.getpid(), signal.SIGKILL)\n"
        "        return super().score_query(q, docs, variants)\n"
        f"rerank_fake(Path({str(tmp_path / 'out')!r}), Path({str(data)!r}), factory=lambda s, g: Killed(g))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == -signal.SIGKILL, p.stderr
    calls: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to repair: every line was whole
        res = rerank_fake(tmp_path / "out", data, factory=_counting(calls))
    assert [c[0] for c in calls] == ["fp32", "fp32", "bf16", "bf16", "bf16", "bf16", "bf16"]
    for v in clean.runs:
        assert res.runs[v].read_text() == clean.runs[v].read_text()
