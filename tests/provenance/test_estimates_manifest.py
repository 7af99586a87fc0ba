"""Manifests of the estimates beside the tie statistics: ``eval --ppi``, ``--labels``, ``--panel``
and ``compare --ppi`` record each file they read (role, SHA-256, size) and their settings; ``verify``
passes on the unchanged files and names the one whose byte changed; compare's runs carry their tie
profile."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml

from tests.helpers import invoke
from tests.provenance.test_manifest import _keys, _schema_match
from tierank.examples import path as example
from tierank.ties import TieSummary

D = example("llmjudge-mini")


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().splitlines()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Machine qrels (one judge), human qrels (all, and for 12 queries), label distributions, two judges'
    files (a panel) and two runs scored by two judges' grades (many ties), as plain text."""
    judges = sorted((D / "judges").glob("*.qrels.gz"))
    (tmp_path / "machine.qrels").write_text("\n".join(_lines(judges[3])) + "\n")
    human = _lines(D / "human.qrels.gz")
    (tmp_path / "all.qrels").write_text("\n".join(human) + "\n")
    some = sorted({line.split()[0] for line in human})[:12]
    (tmp_path / "human.qrels").write_text(
        "".join(f"{line}\n" for line in human if line.split()[0] in some)
    )
    (tmp_path / "labels.txt").write_text("\n".join(_lines(D / "labels.txt.gz")) + "\n")
    for i, name in enumerate(("a", "b")):
        rows = [line.split() for line in _lines(judges[i])]
        (tmp_path / f"{name}.run").write_text(
            "".join(f"{q} Q0 {d} 0 {g} {name}\n" for q, _, d, g in rows)
        )
        (tmp_path / f"j{name}.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, _, d, g in rows))
    return tmp_path


EVAL = {
    "ppi": ("eval", "machine.qrels", "a.run", "-m", "nDCG@10", "--ppi", "human.qrels"),
    "labels": ("eval", "all.qrels", "a.run", "-m", "P@5", "--labels", "labels.txt"),
    "panel": (
        "eval",
        "all.qrels",
        "a.run",
        "-m",
        "P@5",
        "--panel",
        "ja.qrels",
        "--panel",
        "jb.qrels",
    ),
}
#: each kind's inputs by role, as recorded
ROLES = {
    "ppi": [("ppi human qrels", "human.qrels")],
    "labels": [("labels", "labels.txt")],
    "panel": [("panel judge", "ja.qrels"), ("panel judge", "jb.qrels")],
}
COMPARE_PPI = (
    "compare",
    "machine.qrels",
    "a.run",
    "b.run",
    "-m",
    "nDCG@10",
    "--ppi",
    "human.qrels",
)


def _flip_a_byte(path: Path) -> None:
    """One grade of the file's last line changed (the size kept)."""
    data = bytearray(path.read_bytes())
    i = len(data.rstrip()) - 1  # the last line's last character: a digit
    data[i] = ord("1") if data[i] != ord("1") else ord("0")
    path.write_bytes(bytes(data))


def _verify(folder: Path) -> tuple[int, list[str]]:
    p = invoke("verify", "m.yaml", cwd=folder, check=False)
    return p.returncode, p.stdout.strip().splitlines()


@pytest.mark.parametrize("kind", sorted(EVAL))
def test_eval_records_each_input_of_the_estimate(folder: Path, kind: str) -> None:
    invoke(*EVAL[kind], "-f", "jsonl", "-o", "out.jsonl", "--manifest", "m.yaml", cwd=folder)
    doc = yaml.safe_load((folder / "m.yaml").read_text())
    recs = doc["data"]["estimates"]
    assert [(r["role"], r["path"]) for r in recs] == ROLES[kind]
    import hashlib

    for rec in recs:
        data = (folder / rec["path"]).read_bytes()
        assert rec["sha256"] == hashlib.sha256(data).hexdigest() and rec["size"] == len(data)
    block = doc["method"]["evaluation"]["estimates"]
    assert block["kind"] == kind and "not recorded, nor made again" in block["note"]
    assert ("judge_column" in block) == (kind != "ppi")
    assert "estimates/kind" in doc["seal"]["settings"]
    assert sorted(p for p in _keys(doc) if not _schema_match(p)) == []


@pytest.mark.parametrize("kind", sorted(EVAL))
def test_eval_verify_names_the_estimate_input_changed(folder: Path, kind: str) -> None:
    invoke(*EVAL[kind], "-f", "jsonl", "-o", "out.jsonl", "--manifest", "m.yaml", cwd=folder)
    rc, lines = _verify(folder)
    assert rc == 0 and lines[-1].startswith("m.yaml: verified"), lines
    role, name = ROLES[kind][-1]
    _flip_a_byte(folder / name)
    rc, lines = _verify(folder)
    assert rc == 1 and lines[-1].startswith("m.yaml: NOT verified"), lines
    assert lines[:-1] == [
        f"m.yaml: {role} {name}: SHA-256 differs from the manifest's "
        + (f"({(folder / name).stat().st_size} bytes then, {(folder / name).stat().st_size} now)")
    ]


def test_compare_ppi_manifest_verifies_and_names_the_human_qrels_changed(folder: Path) -> None:
    invoke(*COMPARE_PPI, "-f", "json", "-o", "cmp.json", "--manifest", "m.yaml", cwd=folder)
    doc = yaml.safe_load((folder / "m.yaml").read_text())
    assert [(r["role"], r["path"]) for r in doc["data"]["estimates"]] == ROLES["ppi"]
    assert doc["method"]["evaluation"]["estimates"]["kind"] == "ppi"
    assert sorted(p for p in _keys(doc) if not _schema_match(p)) == []
    rc, lines = _verify(folder)
    assert rc == 0 and lines[-1].startswith("m.yaml: verified"), lines
    _flip_a_byte(folder / "human.qrels")
    rc, lines = _verify(folder)
    assert rc == 1, lines
    assert lines[0].startswith("m.yaml: ppi human qrels human.qrels: SHA-256 differs")


def test_compare_manifest_holds_each_runs_tie_profile(folder: Path) -> None:
    invoke(*COMPARE_PPI[:6], "-f", "json", "-o", "cmp.json", "--manifest", "m.yaml", cwd=folder)
    doc = yaml.safe_load((folder / "m.yaml").read_text())
    assert "estimates" not in doc["data"]
    for rec in doc["data"]["runs"]:
        # counted independently: per query, each score shared by two or more documents
        groups: dict[tuple[str, str], int] = {}
        for line in (folder / rec["path"]).read_text().splitlines():
            q, _, _, _, s, _ = line.split()
            groups[(q, s)] = groups.get((q, s), 0) + 1
        tied = [n for n in groups.values() if n > 1]
        docs = sum(groups.values())
        want = TieSummary.of(
            docs=docs,
            queries=len({q for q, _ in groups}),
            queries_with_ties=len({q for (q, _), n in groups.items() if n > 1}),
            groups=len(tied),
            tied_docs=sum(tied),
            largest=max(groups.values()),
        )
        ties = rec["ties"]
        assert ties["tie groups"] == want.groups > 0
        assert ties["tied documents"] == want.tied_docs
        assert ties["tied share"] == pytest.approx(want.tied_docs / docs)
        assert ties["largest group"] == want.largest
        assert ties["queries with ties"] == want.queries_with_ties
        assert ties["score format"] == "bf16"  # small integer grades
    assert sorted(p for p in _keys(doc) if not _schema_match(p)) == []
