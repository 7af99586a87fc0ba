"""The manifest (`tierank eval --manifest`, `EvalResult.manifest`) and `tierank verify`: a test per cause."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import tierank
from tests.helpers import invoke
from tierank import examples
from tierank.errors import TierankInputError
from tierank.provenance import verify
from tierank.provenance.inputs import ir_metadata
from tierank.provenance.manifest import SCHEMA, score_format
from tierank.provenance.verify import Verdict, _compare

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 1\nq2 0 a 2\nq2 0 b 0\nq2 0 c 1\n"
RUN = (
    "q1 Q0 d1 1 0.9 sys\nq1 Q0 d2 2 0.8 sys\nq1 Q0 d3 3 0.8 sys\nq1 Q0 d4 4 0.8 sys\n"
    "q1 Q0 d5 5 0.5 sys\nq2 Q0 a 1 3 sys\nq2 Q0 b 2 2 sys\nq2 Q0 c 3 2 sys\n"
)
HEADER = (
    "# ir_metadata.start\n# tag: my-bm25\n# method:\n#   automatic: true\n#   retrieval:\n"
    "#     - name: bm25\n# ir_metadata.end\n"
)
MEASURES = ("-m", "nDCG@3", "-m", "AP", "-m", "RR", "-m", "P@2")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """qrels, a run with an ir_metadata header, and its manifest written by `tierank eval`."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "sys.run").write_text(HEADER + RUN)
    invoke(
        "eval",
        "qrels.txt",
        "sys.run",
        *MEASURES,
        "-f",
        "jsonl",
        "--manifest",
        "m.yaml",
        cwd=tmp_path,
    )
    return tmp_path


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _keys(node, prefix: str = "") -> set[str]:
    """Every key path of a YAML document, lists written ``[]``."""
    out: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            out.add(path)
            if k != "ir_metadata":  # the run's own header, kept as read
                out |= _keys(v, path)
    elif isinstance(node, list):
        for item in node:
            out |= _keys(item, prefix + "[]")
    return out


def _schema_match(path: str) -> bool:
    """Whether the schema names ``path`` (its ``*`` any name; ``a, b`` several last keys)."""
    for entry, _ in SCHEMA:
        head, _, last = entry.rpartition(".")
        options = [f"{head}.{x.strip()}" if head else x.strip() for x in last.split(",")]
        for opt in options:
            pattern = "^" + re.escape(opt).replace(r"\*", "[^.]+") + "$"
            if re.match(pattern, path) or opt.startswith(path + ".") or opt.startswith(path + "["):
                return True
    return False


def test_manifest_is_yaml_with_ir_metadata_sections_and_schema_keys(folder: Path) -> None:
    doc = _load(folder / "m.yaml")
    for section in ("tag", "platform", "implementation", "method", "data"):  # ir_metadata's
        assert section in doc
    assert doc["tag"] == "my-bm25"  # the run's own header's tag
    libraries = doc["platform"]["software"]["libraries"]
    assert libraries.get("tierank") == tierank.__version__
    assert doc["method"]["evaluation"]["measures"] == ["nDCG@3", "AP", "RR", "P@2"]
    assert doc["method"]["evaluation"]["settings"]["tie_break"] == "trec_eval"
    run = doc["data"]["runs"][0]
    assert run["path"] == "sys.run" and run["size"] == len(HEADER + RUN)
    assert run["ir_metadata"] == {
        "tag": "my-bm25",
        "method": {"automatic": True, "retrieval": [{"name": "bm25"}]},
    }
    # 0.9 and 0.8 are not float32 values: the scores need float64
    assert run["ties"]["tie groups"] == 2 and run["ties"]["score format"] == "fp64"
    unknown = sorted(p for p in _keys(doc) if not _schema_match(p))
    assert unknown == []


def test_manifest_results_are_the_evaluation(folder: Path) -> None:
    doc = _load(folder / "m.yaml")
    res = tierank.evaluate(folder / "qrels.txt", folder / "sys.run", ["nDCG@3", "AP", "RR", "P@2"])
    got = {r["measure"]: r for r in doc["results"][0]["measures"]}
    for rec in res.records(per_query=False):
        for stat in ("oblivious", "expected", "min", "max", "std"):
            assert got[rec["measure"]][stat] == rec[stat]
    # the Python API's manifest holds the same results
    api = {r["measure"]: r for r in res.manifest["results"][0]["measures"]}
    assert {m: r["per_query_sha256"] for m, r in api.items()} == {
        m: r["per_query_sha256"] for m, r in got.items()
    }


def test_verify_passes_unchanged_and_after_moving_the_folder(
    folder: Path, tmp_path_factory
) -> None:
    out = invoke("verify", "m.yaml", cwd=folder)
    assert out.stdout.strip() == "m.yaml: verified, 20 numbers made again"
    moved = tmp_path_factory.mktemp("moved") / "copy"
    shutil.copytree(folder, moved)
    assert verify(moved / "m.yaml").ok


def _failed(folder: Path) -> list[str]:
    p = invoke("verify", "m.yaml", cwd=folder, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[-1].startswith("m.yaml: NOT verified")
    return lines


def test_a_byte_of_the_qrels_changed(folder: Path) -> None:
    (folder / "qrels.txt").write_text(QRELS.replace("q1 0 d3 1", "q1 0 d3 0"))
    lines = _failed(folder)
    assert (
        lines[0]
        == "m.yaml: qrels qrels.txt: SHA-256 differs from the manifest's (67 bytes then, 67 now)"
    )
    assert any("nDCG@3 expected" in line for line in lines[1:])


def test_a_byte_of_the_run_changed_that_moves_no_number(folder: Path) -> None:
    # a score changed within its rank: the numbers stay, the input does not
    (folder / "sys.run").write_text(HEADER + RUN.replace("d5 5 0.5", "d5 5 0.4"))
    lines = _failed(folder)
    assert lines[:-1] == [
        "m.yaml: run sys.run: SHA-256 differs from the manifest's (260 bytes then, 260 now)"
    ]


@pytest.mark.parametrize(
    ("old", "new", "setting"),
    [
        ("tie_break: trec_eval", "tie_break: docno", "tie_break"),
        ("rel: 1", "rel: 2", "rel"),
        ("complete: false", "complete: true", "complete"),
    ],
)
def test_a_setting_edited(folder: Path, old: str, new: str, setting: str) -> None:
    text = (folder / "m.yaml").read_text()
    assert old in text
    (folder / "m.yaml").write_text(text.replace(old, new, 1))
    lines = _failed(folder)
    assert lines[0].startswith(f"m.yaml: setting {setting} edited after the manifest was written")


def test_a_recorded_number_edited(folder: Path) -> None:
    doc = _load(folder / "m.yaml")
    doc["results"][0]["measures"][1]["expected"] = 0.5
    (folder / "m.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    lines = _failed(folder)
    assert (
        lines[0] == "m.yaml: the manifest's results edited after it was written (its seal differs)"
    )
    assert lines[1].startswith("m.yaml: run sys.run: AP expected 0.5 in the manifest, ")


def test_the_measures_edited(folder: Path) -> None:
    text = (folder / "m.yaml").read_text()
    (folder / "m.yaml").write_text(text.replace("    - RR\n", "    - RR@1\n", 1))
    lines = _failed(folder)
    assert (
        lines[0] == "m.yaml: the manifest's measures edited after it was written (its seal differs)"
    )
    assert "RR not computed again" in lines[1]


def test_missing_input_and_non_manifest_are_one_line_exit_2(folder: Path) -> None:
    (folder / "qrels.txt").unlink()
    p = invoke("verify", "m.yaml", cwd=folder, check=False)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"tierank: error: qrels qrels.txt: not found (relative to {folder}, or from here)"
    ]
    (folder / "junk.yaml").write_text("a: [1, 2\n")
    p = invoke("verify", "junk.yaml", cwd=folder, check=False)
    assert p.returncode == 2 and p.stderr.startswith("tierank: error: junk.yaml: line ")
    (folder / "other.yaml").write_text("a: 1\n")
    p = invoke("verify", "other.yaml", cwd=folder, check=False)
    assert (
        p.stderr.strip()
        == "tierank: error: other.yaml: not a tierank manifest (no 'tierank manifest' key)"
    )


def test_a_folder_of_runs_names_the_file_changed(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.run").write_text(RUN)
    (runs / "b.run").write_text(RUN.replace("sys", "other").replace("0.9", "0.95"))
    invoke(
        "eval", "qrels.txt", "runs", "-m", "AP", "-f", "jsonl", "--manifest", "m.yaml", cwd=tmp_path
    )
    assert verify(tmp_path / "m.yaml").ok
    (runs / "b.run").write_text(RUN.replace("0.9", "0.1"))
    v = verify(tmp_path / "m.yaml")
    assert not v.ok
    assert v.causes[0].startswith(f"{tmp_path / 'm.yaml'}: run b.run (runs/b.run): SHA-256 differs")
    assert not any("a.run" in c for c in v.causes)


def test_gzip_run_and_header(tmp_path: Path) -> None:
    run = tmp_path / "sys.run.gz"
    with gzip.open(run, "wt") as f:
        f.write(HEADER + RUN)
    assert ir_metadata(run)["tag"] == "my-bm25"
    bad = tmp_path / "bad.run"
    bad.write_text("# ir_metadata.start\n# tag: [x\n# ir_metadata.end\n" + RUN)
    with pytest.raises(TierankInputError, match=r"bad.run: line 2: ir_metadata header is not YAML"):
        ir_metadata(bad)
    open_only = tmp_path / "open.run"
    open_only.write_text("# ir_metadata.start\n# tag: x\n" + RUN)
    with pytest.raises(TierankInputError, match=r"open.run: line 1: '# ir_metadata.start' without"):
        ir_metadata(open_only)


def test_score_format() -> None:
    import ml_dtypes

    rng = np.random.default_rng(0)
    x = rng.random(1000)
    assert score_format(x) == "fp64"
    assert score_format(x.astype(np.float32)) == "fp32"
    assert score_format(x.astype(ml_dtypes.bfloat16).astype(np.float64)) == "bf16"
    assert score_format(x.astype(np.float16)) == "fp16"


def test_sampled_statistics_within_four_standard_errors() -> None:
    rec = {"measure": "AP", "method": "sampled", "se": 0.01, "expected": 0.5, "std": 0.1}
    ok = Verdict("m")
    _compare(ok, "r", [rec], [{**rec, "expected": 0.539, "std": 0.1}])
    assert ok.ok and ok.checked == 2
    bad = Verdict("m")
    _compare(bad, "r", [rec], [{**rec, "expected": 0.541, "std": 0.1}])
    assert not bad.ok and bad.causes == [
        "m: run r: AP expected 0.5 in the manifest, 0.541 now (+0.041)"
    ]
    exact = Verdict("m")
    rec_exact = {"measure": "AP", "method": "exact", "expected": 0.5, "per_query_sha256": "x"}
    _compare(exact, "r", [rec_exact], [{**rec_exact, "expected": 0.5 + 1e-9}])
    assert not exact.ok


def test_python_api_manifest_verifies(tmp_path: Path) -> None:
    res = tierank.evaluate(examples.path("qrels"), examples.path("run"), ["nDCG@3", "AP"])
    res.manifest.write(tmp_path / "api.yaml")
    v = verify(tmp_path / "api.yaml")
    assert v.ok and v.checked == 10
    in_memory = tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["P@1"])
    in_memory.manifest.write(tmp_path / "mem.yaml")
    with pytest.raises(TierankInputError, match="given in memory"):
        verify(tmp_path / "mem.yaml")


def test_trec_eval_layout_and_all_trec_verify(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    (tmp_path / "sys.run").write_text(RUN)
    invoke(
        "eval",
        "qrels.txt",
        "sys.run",
        "-m",
        "all_trec",
        "-N",
        "1000",
        "-f",
        "trec_eval",
        "--manifest",
        "m.yaml",
        cwd=tmp_path,
    )
    v = verify(tmp_path / "m.yaml")
    assert v.ok, v.causes
    assert v.checked > 300


def test_the_cli_records_the_narrowest_score_format(tmp_path: Path) -> None:
    # 0.875, 0.75, 0.5, 3 and 2 are bfloat16 values: the run could have been scored in bf16
    (tmp_path / "qrels.txt").write_text(QRELS)
    bf16 = RUN.replace(" 0.9 ", " 0.875 ").replace(" 0.8 ", " 0.75 ")
    (tmp_path / "sys.run").write_text(bf16)
    invoke(
        "eval",
        "qrels.txt",
        "sys.run",
        "-m",
        "AP",
        "-f",
        "jsonl",
        "--manifest",
        "m.yaml",
        cwd=tmp_path,
    )
    assert _load(tmp_path / "m.yaml")["data"]["runs"][0]["ties"]["score format"] == "bf16"
    (tmp_path / "sys.run").write_text(bf16.replace(" 0.5 ", " 0.1 "))
    invoke(
        "eval",
        "qrels.txt",
        "sys.run",
        "-m",
        "AP",
        "-f",
        "jsonl",
        "--manifest",
        "m.yaml",
        cwd=tmp_path,
    )
    assert _load(tmp_path / "m.yaml")["data"]["runs"][0]["ties"]["score format"] == "fp64"
