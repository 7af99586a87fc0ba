"""`tierank mteb QRELS PREDICTIONS`: MTEB's saved retrieval predictions, evaluated without mteb.

Every command here runs where ``import mteb`` fails (``sys.modules['mteb'] = None``), as in an install
without the ``mteb`` extra: the predictions file is plain JSON.  The first test runs ``tierank`` as a
subprocess, as users do; the others run the same command line in this process (faster).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

KEYS = ["query", "measure", "oblivious", "expected", "min", "max", "range", "bias", "std"]
META = {"mteb_model_meta": {"model_name": "local/model", "revision": "r1"}}
# q1: d1 (relevant) ties with d2 at the top; q2: its relevant d5 ties with d6 and d7 below d4
RUN = {
    "q1": {"d1": 0.5, "d2": 0.5, "d3": 0.25},
    "q2": {"d4": 0.75, "d5": 0.5, "d6": 0.5, "d7": 0.5},
}
QRELS = {"q1": {"d1": 1, "d3": 0}, "q2": {"d5": 2, "d4": 0}}


def tierank_without_mteb(*args) -> subprocess.CompletedProcess:
    code = (
        "import sys; sys.modules['mteb'] = None; sys.argv = ['tierank', *sys.argv[1:]]; "
        "from tierank.cli import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True
    )


@pytest.fixture(autouse=True)
def no_mteb(monkeypatch):
    monkeypatch.setitem(sys.modules, "mteb", None)


def in_process(*args) -> subprocess.CompletedProcess:
    """The command line in this process (typer's runner), stdout and stderr apart."""
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def ok(*args, run=in_process) -> str:
    p = run(*args)
    assert p.returncode == 0, p.stderr
    return p.stdout


def errors(*args) -> list[str]:
    p = in_process(*args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert lines and all(x.startswith("tierank: error: ") for x in lines), p.stderr
    return lines


@pytest.fixture
def files(tmp_path):
    preds = tmp_path / "Task_predictions.json"
    preds.write_text(json.dumps({**META, "default": {"test": RUN}}))
    trec = tmp_path / "qrels.txt"
    trec.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    flat = tmp_path / "qrels.json"
    flat.write_text(json.dumps(QRELS))
    rows = tmp_path / "qrels.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"query-id": q, "corpus-id": d, "score": g}) + "\n"
            for q, docs in QRELS.items()
            for d, g in docs.items()
        )
    )
    return preds, trec, flat, rows


def test_jsonl_holds_the_hand_computed_statistics(files):
    preds, trec, *_ = files
    out = ok(
        "mteb", trec, preds, "-m", "mrr_at_10", "-m", "P@1", "-f", "jsonl", run=tierank_without_mteb
    )
    assert out == ok(
        "mteb", trec, preds, "-m", "mrr_at_10", "-m", "P@1", "-f", "jsonl"
    )  # in process: the same
    recs = [json.loads(x) for x in out.splitlines()]
    assert all(list(r)[:9] == KEYS for r in recs)
    by = {(r["query"], r["measure"]): r for r in recs}
    # q1: RR is 1 or 1/2; MTEB's order (docid descending) puts d2 first: oblivious 1/2
    assert [by["q1", "RR@10"][k] for k in ("oblivious", "expected", "min", "max")] == [
        0.5,
        0.75,
        0.5,
        1.0,
    ]
    # q2: d5 at rank 2, 3 or 4; docid descending puts it last: 1/4
    e2 = (1 / 2 + 1 / 3 + 1 / 4) / 3
    assert by["q2", "RR@10"]["oblivious"] == 0.25 and by["q2", "RR@10"][
        "expected"
    ] == pytest.approx(e2)
    assert by["all", "RR@10"]["expected"] == pytest.approx((0.75 + e2) / 2)
    assert (
        by["all", "P@1"]["expected"] == 0.25
        and by["all", "P@1"]["min"] == 0.0
        and by["all", "P@1"]["max"] == 0.5
    )


def test_every_qrels_layout_gives_the_same_numbers(files, tmp_path):
    preds, trec, flat, rows = files
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"default": {"test": QRELS}}))
    outs = [
        ok("mteb", q, preds, "-m", "ndcg_at_3", "-m", "map_at_10", "-f", "jsonl")
        for q in (trec, flat, rows, nested)
    ]
    assert len(set(outs)) == 1 and '"measure": "nDCG@3"' in outs[0]
    # MTEB's names and tierank's give the same records
    assert ok("mteb", trec, preds, "-m", "nDCG@3", "-m", "AP@10", "-f", "jsonl") == outs[0]


def test_several_subsets_tag_their_records_and_can_be_picked(tmp_path, files):
    _, trec, *_ = files
    preds = tmp_path / "multi_predictions.json"
    preds.write_text(
        json.dumps(
            {
                **META,
                "en": {"test": RUN, "dev": {"q1": RUN["q1"]}},
                "fr": {"test": {"q2": RUN["q2"]}},
            }
        )
    )
    recs = [
        json.loads(x)
        for x in ok("mteb", trec, preds, "-m", "mrr_at_10", "-f", "jsonl").splitlines()
    ]
    assert [(r["subset"], r["split"], r["query"]) for r in recs] == [
        ("en", "test", "q1"),
        ("en", "test", "q2"),
        ("en", "test", "all"),
        ("en", "dev", "q1"),
        ("en", "dev", "all"),
        ("fr", "test", "q2"),
        ("fr", "test", "all"),
    ]
    assert recs[4]["expected"] == 0.75
    tsv = list(
        csv.reader(
            ok("mteb", trec, preds, "-m", "mrr_at_10", "-f", "tsv").splitlines(), delimiter="\t"
        )
    )
    assert tsv[0][:5] == ["subset", "split", "query", "measure", "oblivious"] and len(tsv) == 4
    # one subset and split picked: the output of `tierank eval` for one run (no subset/split keys)
    one = ok("mteb", trec, preds, "-m", "mrr_at_10", "--subset", "fr", "-f", "jsonl")
    one = [json.loads(x) for x in one.splitlines()]
    assert [r["query"] for r in one] == ["q2", "all"] and "subset" not in one[0]
    doc = json.loads(
        ok("mteb", trec, preds, "-m", "mrr_at_10", "--split", "dev", "-f", "json", "-q")
    )
    assert doc["aggregate"][0]["expected"] == 0.75 and doc["per_query"][0]["query"] == "q1"


def test_table_and_output_file(files, tmp_path):
    preds, trec, *_ = files
    out = tmp_path / "out.txt"
    assert ok("mteb", trec, preds, "-m", "mrr_at_10", "-o", out) == ""
    text = " ".join(out.read_text().split())
    assert (
        "subset default, split test" in text and "RR@10" in text and "0.5556" in text
    )  # (3/4 + 13/36) / 2


def test_bad_input_is_named_with_the_file_and_exit_2(files, tmp_path):
    preds, trec, flat, _ = files
    (lines,) = [errors("mteb", trec, preds, "--subset", "en")]
    assert lines == [f"tierank: error: {preds}: no subset 'en'; available: default"]
    assert errors("mteb", trec, preds, "--split", "dev") == [
        f"tierank: error: {preds}: no split 'dev'; available: test"
    ]
    listed = tmp_path / "Classif_predictions.json"
    listed.write_text(json.dumps({**META, "default": {"test": [[0, 1], [1, 0]]}}))
    (line,) = errors("mteb", trec, listed)
    assert line.startswith(
        f"tierank: error: {listed}: subset 'default', split 'test': expected a mapping qid"
    )
    text = tmp_path / "broken.json"
    text.write_text("{not json")
    (line,) = errors("mteb", trec, text)
    assert line.startswith(f"tierank: error: {text}: not a JSON file")
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"en": {"test": QRELS}}))
    assert errors("mteb", nested, preds) == [
        f"tierank: error: {nested}: no qrels for subset 'default', split 'test'; available: en/test"
    ]
    (line,) = errors("mteb", trec, preds, "-m", "nauc_ndcg_at_10_max")
    assert "unknown metric 'nauc_ndcg_at_10_max'" in line
    assert errors("mteb", trec, preds, "-o", preds) == [
        f"tierank: error: {preds}: refusing to overwrite an input file with the output"
    ]


def test_qrels_come_first_and_a_swap_is_named(files):
    """Every command takes QRELS first; PREDICTIONS given first is one line naming the swap."""
    preds, trec, _, _ = files
    (line,) = errors("mteb", preds, trec, "-m", "mrr_at_10")
    assert line == (
        f"tierank: error: did you swap QRELS and PREDICTIONS? {trec} is not a JSON object and {preds} "
        "is one; usage: tierank mteb QRELS PREDICTIONS"
    )
    assert '"measure": "RR@10"' in ok("mteb", trec, preds, "-m", "mrr_at_10", "-f", "jsonl")


def test_two_json_files_swapped_are_refused_not_evaluated(tmp_path):
    """Both files JSON, predictions given as the qrels: real-valued grades or MTEB's meta key give one line
    (before the fix: nDCG@10 0.677, exit 0, from the predictions read as judgments)."""
    preds = tmp_path / "Task_predictions.json"
    preds.write_text(json.dumps({"default": {"test": {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}}}}))
    nested = tmp_path / "qrels.json"
    nested.write_text(json.dumps({"default": {"test": {"q1": {"d3": 1, "d1": 0}}}}))
    (line,) = errors("mteb", preds, nested, "-m", "ndcg_at_10")
    assert line == (
        f"tierank: error: {preds} [default/test]: query 'q1', document 'd1': grade 0.9 is not an integer: "
        "MTEB's qrels hold integer grades (are these predictions? QRELS come first)"
    )
    assert '"expected": 0.5' in ok(
        "mteb", nested, preds, "-m", "ndcg_at_10", "-f", "jsonl"
    )  # d3 at rank 3
    meta = tmp_path / "Meta_predictions.json"
    meta.write_text(json.dumps({**META, "default": {"test": {"q1": {"d1": 1, "d2": 0}}}}))
    (line,) = errors("mteb", meta, nested)
    assert line == (
        f"tierank: error: {meta}: holds 'mteb_model_meta': these are MTEB's predictions, not qrels "
        "(QRELS come first)"
    )


# ------------------------------------------------------------------ a folder of models: the leaderboard

ASKUBUNTU = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "askubuntu"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The shipped AskUbuntu BM25 run at three precisions (exact scores, rounded to 1 and to 10: more and
    more ties), as MTEB predictions (one MODEL.json each) and as TREC runs (one file each)."""
    import gzip

    root = tmp_path_factory.mktemp("models")
    (root / "preds").mkdir()
    (root / "runs").mkdir()
    run: dict[str, dict[str, float]] = {}
    with gzip.open(ASKUBUNTU / "dev.bm25.run.gz", "rt") as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    for name, ndigits in (("exact", None), ("round1", 0), ("round10", -1)):
        r = {
            q: {d: s if ndigits is None else round(s, ndigits) for d, s in docs.items()}
            for q, docs in run.items()
        }
        (root / "preds" / f"{name}.json").write_text(json.dumps({**META, "default": {"test": r}}))
        (root / "runs" / name).write_text(
            "".join(
                f"{q} Q0 {d} {i} {s!r} bm25\n"
                for q, docs in r.items()
                for i, (d, s) in enumerate(docs.items(), 1)
            )
        )
    return root


def test_a_folder_of_models_gives_the_leaderboard_of_tierank_compare_on_the_same_runs(models):
    qrels = ASKUBUNTU / "dev.qrels.gz"
    opts = [
        "--resamples",
        "400",
        "--permutations",
        "400",
        "--seed",
        "3",
        "--tie-samples",
        "2",
        "--format",
        "json",
    ]
    got = json.loads(ok("mteb", qrels, models / "preds", "-m", "ndcg_at_10", *opts))
    runs = [models / "runs" / n for n in ("exact", "round1", "round10")]
    want = json.loads(
        ok("compare", *runs, "--qrels", qrels, "-m", "nDCG@10", "--leaderboard", *opts)
    )
    assert [s["name"] for s in got["systems"]] == ["exact", "round1", "round10"]
    assert got["systems"] == want["systems"] and got["pairs"] == want["pairs"]
    assert got["settings"] == want["settings"]
    # real numbers: E[nDCG@10] falls and the tie interval widens as the scores lose precision
    exact, round1, round10 = got["systems"]
    assert round(exact["expected"], 4) == 0.5246 and round(round10["expected"], 4) == 0.4836
    assert (
        round10["max"] - round10["min"]
        > round1["max"] - round1["min"]
        > exact["max"] - exact["min"]
    )
    assert [s["group"] for s in got["systems"]] == ["a", "a", "b"]
    md = ok(
        "mteb",
        qrels,
        models / "preds",
        "--resamples",
        "400",
        "--permutations",
        "400",
        "--format",
        "markdown",
    )
    assert md.splitlines()[0].startswith("| name | expected |") and "| round10 | 0.4836 |" in md
    table = ok("mteb", qrels, models / "preds", "--resamples", "400", "--permutations", "400")
    assert "leaderboard: nDCG@10, 200 queries" in table and "rank interval" in table


def test_a_folder_needs_two_models_one_subset_and_split_and_no_per_query(models, tmp_path):
    qrels = ASKUBUNTU / "dev.qrels.gz"
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "m.json").write_text((models / "preds" / "exact.json").read_text())
    assert "at least two models" in errors("mteb", qrels, tmp_path / "one")[0]
    assert "--per-query" in errors("mteb", qrels, models / "preds", "--per-query")[0]
    two = tmp_path / "two"
    two.mkdir()
    for name in ("a", "b"):
        preds = json.loads((models / "preds" / "exact.json").read_text())
        preds["other"] = preds["default"]
        (two / f"{name}_predictions.json").write_text(json.dumps(preds))
    assert "give --subset and --split" in errors("mteb", qrels, two)[0]
    out = json.loads(
        ok(
            "mteb",
            qrels,
            two,
            "--subset",
            "other",
            "--resamples",
            "100",
            "--permutations",
            "100",
            "--format",
            "json",
        )
    )
    assert [s["name"] for s in out["systems"]] in (["a", "b"], ["b", "a"])
