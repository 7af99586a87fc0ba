"""Manifests of `tierank compare` and `tierank judges` (--manifest) and their `tierank verify`: a test
per cause (an input's byte, a setting, a recorded number)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.helpers import invoke
from tests.provenance.test_manifest import _keys, _schema_match
from tierank.cli.provenance import RECOMPUTE
from tierank.errors import TierankInputError
from tierank.provenance import verify
from tierank.provenance.verify import Verdict, compare_numbers

QUERIES = 8


def _write_collection(folder: Path) -> None:
    """qrels of 8 queries and three runs over their 6 documents (scores from a seeded generator,
    rounded to one decimal so that ties occur)."""
    rng = np.random.default_rng(7)
    qrels, runs = [], {"a": [], "b": [], "c": []}
    for q in range(QUERIES):
        for d in range(6):
            qrels.append(f"q{q} 0 d{d} {int(rng.integers(0, 3))}")
        for name, run in runs.items():
            for d in range(6):
                run.append(f"q{q} Q0 d{d} {d + 1} {rng.integers(0, 10) / 10} {name}")
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for name, run in runs.items():
        (folder / f"{name}.run").write_text("\n".join(run) + "\n")


COMPARE = ("compare", "qrels.txt", "a.run", "b.run", "c.run", "-m", "nDCG@5")


@pytest.fixture
def compared(tmp_path: Path) -> Path:
    """Three runs compared (Holm-corrected t-tests), with a manifest."""
    _write_collection(tmp_path)
    invoke(*COMPARE, "-f", "json", "-o", "cmp.json", "--manifest", "m.yaml", cwd=tmp_path)
    return tmp_path


def _failed(folder: Path) -> list[str]:
    p = invoke("verify", "m.yaml", cwd=folder, check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[-1].startswith("m.yaml: NOT verified")
    return lines[:-1]


def test_compare_manifest_records_the_comparison(compared: Path) -> None:
    doc = yaml.safe_load((compared / "m.yaml").read_text())
    shown = json.loads((compared / "cmp.json").read_text())
    ev = doc["method"]["evaluation"]
    assert ev["command"] == "compare" and ev["measures"] == ["nDCG@5"]
    assert ev["compare"]["correction"] == "holm" and ev["compare"]["test"] == "t"
    assert [r["path"] for r in doc["data"]["runs"]] == ["a.run", "b.run", "c.run"]
    res = doc["results"]
    assert res["queries"] == QUERIES and len(res["pairs"]) == 3
    for rec, sys_ in zip(res["systems"], shown["systems"]):
        for k in ("name", "expected", "min", "max", "oblivious", "ci_low", "ci_high", "rank"):
            assert rec[k] == sys_[k]
    for rec, pair in zip(res["pairs"], shown["pairs"]):
        for k in ("a", "b", "diff_expected", "p", "p_test", "p_adjusted", "diff_ci_low"):
            assert rec[k] == pair[k]
    assert all(p["p_adjusted"] is not None for p in res["pairs"])
    unknown = sorted(p for p in _keys(doc) if not _schema_match(p))
    assert unknown == []


def test_compare_manifest_verifies(compared: Path) -> None:
    out = invoke("verify", "m.yaml", cwd=compared)
    # 3 systems x (oblivious, expected, min, max, std, ci_low, ci_high, rank, rank_oblivious)
    # + 3 pairs x (diff_expected, diff_oblivious, p, p_test, p_adjusted, diff_ci_low,
    # diff_ci_high, p_a_above) + queries, dropped_queries
    assert out.stdout.strip() == "m.yaml: verified, 53 numbers made again"


def test_compare_a_run_changed(compared: Path) -> None:
    # b's scores replaced by a's (its tag kept): the same size, other numbers
    (compared / "b.run").write_text((compared / "a.run").read_text().replace(" a\n", " b\n"))
    lines = _failed(compared)
    assert lines[0].startswith("m.yaml: run b.run: SHA-256 differs from the manifest's")
    assert any(line.startswith("m.yaml: system b.run: expected ") for line in lines[1:])


@pytest.mark.parametrize(
    ("old", "new", "setting", "moved"),
    [
        ("  test: t\n", "  test: wilcoxon\n", "compare/test", "p "),
        ("  correction: holm\n", "  correction: bh\n", "compare/correction", "p_adjusted "),
        ("tie_break: trec_eval\n", "tie_break: docno\n", "tie_break", "oblivious "),
    ],
)
def test_compare_a_setting_edited(
    compared: Path, old: str, new: str, setting: str, moved: str
) -> None:
    text = (compared / "m.yaml").read_text()
    assert old in text
    (compared / "m.yaml").write_text(text.replace(old, new, 1))
    lines = _failed(compared)
    assert lines[0].startswith(f"m.yaml: setting {setting} edited after the manifest was written")
    assert any(f": {moved}" in line for line in lines[1:]), lines


def test_compare_a_recorded_number_edited(compared: Path) -> None:
    doc = yaml.safe_load((compared / "m.yaml").read_text())
    pair = doc["results"]["pairs"][1]
    pair["p_test"] = 0.5
    (compared / "m.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _failed(compared) == [
        "m.yaml: the manifest's results edited after it was written (its seal differs)",
        f"m.yaml: pair {pair['a']} vs {pair['b']}: p_test 0.5 in the manifest, "
        + _now(compared, 1, "p_test"),
    ]


def _now(folder: Path, pair: int, key: str) -> str:
    """The account's tail for a pair's edited value: the value now and the difference."""
    now = json.loads((folder / "cmp.json").read_text())["pairs"][pair][key]
    return f"{now!r} now ({now - 0.5:+.6g})"


def test_compare_sampled_p_within_its_standard_errors() -> None:
    rec = {"p": 0.20, "method": "sampled", "se": 0.01}
    ok = Verdict("m")
    compare_numbers(ok, "pair A vs B:", {"p": 0.20}, {"p": 0.239}, 4 * 0.01)
    assert ok.ok and ok.checked == 1
    bad = Verdict("m")
    compare_numbers(bad, "pair A vs B:", {"p": rec["p"]}, {"p": 0.241}, 4 * 0.01)
    assert bad.causes == ["m: pair A vs B: p 0.2 in the manifest, 0.241 now (+0.041)"]


def test_compare_bootstrap_manifest_verifies(tmp_path: Path) -> None:
    _write_collection(tmp_path)
    invoke(
        *COMPARE, "--test", "bootstrap", "--resamples", "2000", "--manifest", "m.yaml", cwd=tmp_path
    )
    doc = yaml.safe_load((tmp_path / "m.yaml").read_text())
    assert doc["method"]["evaluation"]["compare"]["resamples"] == 2000
    v = verify(tmp_path / "m.yaml", RECOMPUTE)
    assert v.ok, v.causes
    with pytest.raises(TierankInputError, match="verify recomputes manifests of `eval`, `rerank`$"):
        verify(tmp_path / "m.yaml")  # without the commands' own recomputation


def _write_judges(folder: Path) -> None:
    """A reference of 8 queries x 6 documents graded 0..2, two judges that disagree with it on a
    seeded share of the pairs, and three runs."""
    _write_collection(folder)
    rng = np.random.default_rng(11)
    ref = [line.split() for line in (folder / "qrels.txt").read_text().splitlines()]
    for judge, share in (("j1", 0.2), ("j2", 0.5)):
        lines = []
        for q, _, d, g in ref:
            grade = int(rng.integers(0, 3)) if rng.random() < share else int(g)
            lines.append(f"{q} 0 {d} {grade}")
        (folder / f"{judge}.qrels").write_text("\n".join(lines) + "\n")


JUDGES = ("judges", "qrels.txt", "j1.qrels", "j2.qrels", "--bootstrap", "200", "--seed", "3")
WITH_RUNS = ("--runs", "a.run", "--runs", "b.run", "--runs", "c.run", "-m", "nDCG@5")


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    """Two judges against a reference, with three runs, and a manifest."""
    _write_judges(tmp_path)
    invoke(*JUDGES, *WITH_RUNS, "-f", "json", "-o", "j.json", "--manifest", "m.yaml", cwd=tmp_path)
    return tmp_path


def test_judges_manifest_records_the_agreement(judged: Path) -> None:
    doc = yaml.safe_load((judged / "m.yaml").read_text())
    shown = json.loads((judged / "j.json").read_text())
    ev = doc["method"]["evaluation"]
    assert ev["command"] == "judges" and ev["measures"] == ["nDCG@5"]
    assert ev["judges"]["bootstrap"] == 200 and ev["judges"]["seed"] == 3
    assert [j["path"] for j in doc["data"]["judges"]] == ["j1.qrels", "j2.qrels"]
    assert [r["name"] for r in doc["data"]["runs"]] == ["a.run", "b.run", "c.run"]
    assert doc["results"]["agreement"] == [
        {k: v for k, v in r.items() if k != "query"} for r in shown["judges"]
    ]
    assert doc["results"]["agreement"][0]["confusion"]  # the confusion matrix too
    assert doc["results"]["orderings"] == [
        {k: r[k] for k in doc["results"]["orderings"][0]} for r in shown["orderings"]
    ]
    assert len(doc["results"]["systems"]) == 9  # 3 runs x (reference, j1, j2)
    unknown = sorted(p for p in _keys(doc) if not _schema_match(p))
    assert unknown == []


def test_judges_manifest_verifies(judged: Path) -> None:
    out = invoke("verify", "m.yaml", cwd=judged)
    assert out.stdout.startswith("m.yaml: verified, ")
    assert verify(judged / "m.yaml", RECOMPUTE).checked > 60


def test_judges_a_byte_of_a_judge_changed(judged: Path) -> None:
    text = (judged / "j1.qrels").read_text()
    first = text.splitlines()[0]
    grade = int(first.split()[-1])
    (judged / "j1.qrels").write_text(text.replace(first, first[:-1] + str((grade + 1) % 3), 1))
    lines = _failed(judged)
    assert lines[0].startswith("m.yaml: judge j1.qrels: SHA-256 differs from the manifest's")
    assert any(line.startswith("m.yaml: agreement j1: cohen_kappa ") for line in lines[1:])
    assert not any("agreement j2" in line for line in lines)


def test_judges_a_setting_edited(judged: Path) -> None:
    text = (judged / "m.yaml").read_text()
    assert "  seed: 3\n" in text
    (judged / "m.yaml").write_text(text.replace("  seed: 3\n", "  seed: 4\n", 1))
    lines = _failed(judged)
    assert lines[0] == ("m.yaml: setting judges/seed edited after the manifest was written (now 4)")
    # a new seed redraws the bootstrap: the intervals move, the point estimates stay
    assert any("cohen_kappa_ci_low" in line for line in lines[1:])
    assert not any(": cohen_kappa " in line for line in lines[1:])


def test_judges_a_recorded_number_edited(judged: Path) -> None:
    doc = yaml.safe_load((judged / "m.yaml").read_text())
    doc["results"]["orderings"][0]["kendall_tau_b"] = 0.25
    (judged / "m.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    lines = _failed(judged)
    assert lines[0] == (
        "m.yaml: the manifest's results edited after it was written (its seal differs)"
    )
    assert lines[1].startswith("m.yaml: orderings j1 nDCG@5: kendall_tau_b 0.25 in the manifest, ")
    assert len(lines) == 2


def test_compare_over_collections_refuses_a_manifest(tmp_path: Path) -> None:
    for name in ("c1", "c2"):
        (tmp_path / name).mkdir()
        _write_collection(tmp_path / name)
    p = invoke("compare", "c1", "c2", "--manifest", "m.yaml", cwd=tmp_path, check=False)
    assert p.returncode == 2 and not (tmp_path / "m.yaml").exists()
    assert p.stderr.strip() == (
        "tierank: error: tierank compare over collections: --manifest applies to one collection "
        "(tierank compare QRELS RUN RUN...), not to a meta-analysis over collection folders"
    )
