"""Comparing systems over several collections (tierank.analysis.multi) and the commands built on it:
tierank compare DIR DIR..., tierank plan, tierank discriminative-power, tierank forest."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import invoke
from tierank.analysis.meta import combine_effects
from tierank.analysis.multi import compare_collections, per_topic
from tierank.errors import TierankInputError

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "tierank" / "examples"


def _runs(seed: int, shift: float):
    """Three systems over 12 topics with ties in ``tied``; ``shift`` moves ``good``'s scores."""
    rng = np.random.default_rng(seed)
    qrels, good, bad, tied = {}, {}, {}, {}
    for q in range(12):
        qid = f"q{q}"
        docs = [f"d{k}" for k in range(6)]
        qrels[qid] = {d: int(rng.integers(0, 2)) for d in docs}
        qrels[qid]["d0"] = 1
        good[qid] = {d: float(rng.uniform()) + (shift if qrels[qid][d] else 0.0) for d in docs}
        bad[qid] = {d: float(rng.uniform()) for d in docs}
        tied[qid] = {d: float(round(rng.uniform(), 1)) for d in docs}
    return qrels, {"good": good, "bad": bad, "tied": tied}


def test_per_collection_effects_and_pooling():
    c1, c2 = _runs(0, 0.5), _runs(1, 0.1)
    mc = compare_collections({"c1": c1, "c2": c2}, "nDCG@10")
    assert mc.systems == ("bad", "good", "tied") and mc.topics == (12, 12)
    p = mc.pair("good", "tied")
    for (qrels, runs), e in zip((c1, c2), p.effects):
        pt = per_topic(runs, qrels, "nDCG@10")
        a, b = pt.systems.index("good"), pt.systems.index("tied")
        d = pt.expected[:, a] - pt.expected[:, b]
        assert e.diff == pytest.approx(d.mean(), abs=1e-15)
        assert e.var_sampling == pytest.approx(np.var(d, ddof=1) / 12, rel=1e-12)
        assert e.var_tie == pytest.approx((pt.var[:, a] + pt.var[:, b]).sum() / 144, rel=1e-12)
        assert e.var_tie > 0 and pt.var[:, a].sum() == 0  # only ``tied`` has ties
    ref = combine_effects([e.diff for e in p.effects], [e.var_diff for e in p.effects], "pm")
    assert p.meta["diff"]["pm"].effect == ref.effect
    assert p.plain_mean == pytest.approx(np.mean([e.diff for e in p.effects]))
    rec = mc.to_dict()
    json.dumps(rec, allow_nan=False)
    assert set(rec["pairs"][0]["meta"]) == {"diff", "dz"}
    assert set(rec["pairs"][0]["meta"]["diff"]) == {"dl", "pm"}


def test_refusals_and_notes():
    c1 = _runs(0, 0.5)
    with pytest.raises(TierankInputError, match="at least two collections"):
        compare_collections({"c1": c1}, "AP")
    q2, r2 = _runs(1, 0.2)
    mc = compare_collections({"c1": c1, "c2": (q2, {k: r2[k] for k in ("good", "bad")})}, "AP")
    assert mc.systems == ("bad", "good")
    assert any("tied left out" in n for n in mc.notes)
    with pytest.raises(TierankInputError, match="at least two must be in all"):
        compare_collections({"c1": c1, "c2": (q2, {"good": r2["good"]})}, "AP")
    with pytest.raises(TierankInputError, match="geometric mean"):
        compare_collections({"c1": c1, "c2": (q2, r2)}, "GMAP")
    one = ({"q": {"d0": 1}}, {"good": {"q": {"d0": 1.0}}, "bad": {"q": {"d0": 0.5}}})
    with pytest.raises(TierankInputError, match="needs at least two"):
        compare_collections({"c1": c1, "c2": one}, "AP")


def test_identical_systems_get_a_reason_not_a_number():
    q, r = _runs(0, 0.5)
    same = {"a": r["good"], "b": r["good"]}
    mc = compare_collections({"c1": (q, same), "c2": (q, same)}, "AP")
    assert mc.pairs[0].meta == {} and "variance 0" in (mc.pairs[0].reason or "")


# --- the commands -----------------------------------------------------------------------------


def _folders(tmp_path: Path) -> list[Path]:
    out = []
    for k, (shift, seed) in enumerate(((0.5, 0), (0.1, 1))):
        qrels, runs = _runs(seed, shift)
        d = tmp_path / f"col{k}"
        d.mkdir()
        (d / "qrels.txt").write_text(
            "".join(f"{q} 0 {doc} {g}\n" for q, docs in qrels.items() for doc, g in docs.items())
        )
        for name, run in runs.items():
            (d / f"{name}.run").write_text(
                "".join(
                    f"{q} Q0 {doc} {i + 1} {s} {name}\n"
                    for q, docs in run.items()
                    for i, (doc, s) in enumerate(docs.items())
                )
            )
        out.append(d)
    return out


def test_compare_over_folders_json_equals_the_api(tmp_path):
    folders = _folders(tmp_path)
    p = invoke("compare", *folders, "-m", "nDCG@10", "-f", "json")
    doc = json.loads(p.stdout)
    api = compare_collections(
        {f"col{k}": _runs(seed, shift) for k, (shift, seed) in enumerate(((0.5, 0), (0.1, 1)))},
        "nDCG@10",
    ).to_dict()
    got = {(r["a"], r["b"]): r for r in doc["pairs"]}
    assert set(got) == {(r["a"], r["b"]) for r in api["pairs"]}
    for r in api["pairs"]:
        for scale in ("diff", "dz"):
            for method in ("dl", "pm"):
                g, w = got[(r["a"], r["b"])]["meta"][scale][method], r["meta"][scale][method]
                for key in ("q", "i2", "tau2"):
                    assert g[key] == pytest.approx(w[key], rel=1e-12, abs=1e-15)
                for model in ("fixed", "random"):
                    for key in ("effect", "ci_low", "ci_high", "p"):
                        assert g[model][key] == pytest.approx(w[model][key], rel=1e-12)
    assert len(doc["pairs"]) == 3 and doc["collections"][0] == {"name": "col0", "topics": 12}
    table = invoke("compare", *folders, "-m", "nDCG@10").stdout
    assert "random DL" in table and "col1 (12)" in table


def test_compare_over_folders_refusals(tmp_path):
    folders = _folders(tmp_path)
    p = invoke("compare", folders[0], "-m", "AP", check=False)
    assert p.returncode == 2 and "at least two collection folders" in p.stderr
    (folders[1] / "qrels2.txt").write_text("q0 0 d0 1\n")
    p = invoke("compare", *folders, check=False)
    assert p.returncode == 2 and "exactly one qrels file" in p.stderr
    assert "Traceback" not in p.stderr
    p = invoke("compare", *folders, "--leaderboard", "--test", "wilcoxon", check=False)
    assert p.returncode == 2 and "--test, --leaderboard applies to one collection" in p.stderr


def test_plan_command_matches_the_functions(tmp_path):
    from tierank.analysis.planning import minimal_detectable, pilot_variance, topic_set_size

    doc = json.loads(
        invoke("plan", "--diff", "0.05", "--sd", "0.2", "--topics", "50", "-f", "json").stdout
    )
    assert doc["designs"][0]["topics"] == topic_set_size(0.25)
    assert doc["designs"][1]["diff"] == pytest.approx(minimal_detectable(50, sd=0.2))
    folders = _folders(tmp_path)
    files = [folders[0] / "qrels.txt", *(folders[0] / f"{n}.run" for n in ("good", "bad", "tied"))]
    doc = json.loads(invoke("plan", *files, "-m", "AP", "--diff", "0.05", "-f", "json").stdout)
    q, r = _runs(0, 0.5)
    pt = per_topic(r, q, "AP")
    pv = pilot_variance(pt.expected, pt.var)
    assert doc["pilot"]["sigma2_diff"] == pytest.approx(pv.sigma2_diff, rel=1e-12)
    assert pv.tie > 0
    assert doc["designs"][0]["topics"] == topic_set_size(0.05 / math.sqrt(pv.sigma2_diff))
    p = invoke("plan", check=False)
    assert p.returncode == 2 and "give --effect, --diff or --topics" in p.stderr
    p = invoke("plan", "--effect", "0", check=False)
    assert p.returncode == 2 and "effect must be a finite number > 0" in p.stderr


def test_discriminative_power_command_is_seeded(tmp_path):
    folders = _folders(tmp_path)
    files = [folders[0] / "qrels.txt", *(folders[0] / f"{n}.run" for n in ("good", "bad", "tied"))]
    args = (
        "discriminative-power",
        *files,
        "-m",
        "AP",
        "-m",
        "RR",
        "--samples",
        "200",
        "--seed",
        "3",
        "-f",
        "json",
    )
    a, b = invoke(*args).stdout, invoke(*args).stdout
    assert a == b
    doc = json.loads(a)
    assert [(r["measure"], r["values"]) for r in doc["results"]] == [
        ("AP", "expected"),
        ("AP", "oblivious"),
        ("RR", "expected"),
        ("RR", "oblivious"),
    ]
    assert all(r["samples"] == 200 and r["seed"] == 3 for r in doc["results"])
    p = invoke("discriminative-power", files[0], files[1], check=False)
    assert p.returncode == 2 and "at least two systems" in p.stderr


def test_forest_and_discrimination_figures(tmp_path):
    pytest.importorskip("matplotlib")
    folders = _folders(tmp_path)
    invoke("forest", *folders, "--pair", "good,tied", "-m", "AP", "-o", tmp_path / "forest")
    assert (tmp_path / "forest.png").stat().st_size > 1000
    p = invoke("forest", *folders, "--pair", "tied,good", "-o", tmp_path / "f2", check=False)
    assert p.returncode == 2 and "listed as good vs tied" in p.stderr
    files = [folders[0] / "qrels.txt", folders[0] / "good.run", folders[0] / "bad.run"]
    invoke("discriminative-power", *files, "--samples", "100", "--plot", tmp_path / "disc")
    assert (tmp_path / "disc.svg").stat().st_size > 1000


@pytest.mark.full
def test_shipped_askubuntu_regimes_discriminative_power():
    """Real data: the shipped AskUbuntu BM25 run re-expressed in four score formats."""
    q, r = EXAMPLES / "askubuntu-test.qrels.gz", EXAMPLES / "askubuntu-test.bm25.run.gz"
    doc = json.loads(
        invoke(
            "discriminative-power",
            q,
            r,
            "--regimes",
            "fp32,bf16,fp8_e4m3,sig2",
            "-m",
            "AP",
            "--samples",
            "500",
            "--seed",
            "1",
            "-f",
            "json",
        ).stdout
    )
    assert doc["results"][0]["pairs"] == 6 and doc["results"][0]["topics"] == 200
    exp, obl = doc["results"]
    assert (exp["values"], obl["values"]) == ("expected", "oblivious")
    # the regimes' ties make the oblivious values differ from the expected ones
    assert exp["diff_required"] != obl["diff_required"]


HOSTILE = ["-1", "0", "nan", "inf", "-inf", "1e-320", "1e308", "", "/", "x", "99999999999999999999"]


@pytest.mark.full
@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--effect", "0.5"),
        ("plan", "--diff", "0.02", "--sd", "0.1", "--systems", "4"),
        (
            "discriminative-power",
            EXAMPLES / "askubuntu-test.qrels.gz",
            EXAMPLES / "askubuntu-test.bm25.run.gz",
            "--regimes",
            "fp32,sig2",
            "-m",
            "AP",
            "--samples",
            "40",
        ),
    ],
    ids=["plan", "plan-anova", "discriminative-power"],
)
def test_hostile_option_values_are_one_line_refusals(args, tmp_path):
    import typer.main

    from tierank.cli import app

    cmd = typer.main.get_command(app).commands[args[0]]  # type: ignore[attr-defined]
    opts = [
        max(p.opts, key=len)
        for p in cmd.params
        if getattr(p, "param_type_name", "") == "option"
        and not (p.is_flag or p.count)
        and "--help" not in p.opts
        and max(p.opts, key=len) not in ("--regimes", "--measure")
    ]
    for opt in opts:
        for v in HOSTILE:
            r = invoke(*args, opt, v, check=False, cwd=tmp_path)
            assert r.returncode in (0, 2), (opt, v, r.stderr[-500:])
            if r.returncode == 2:
                assert r.stderr.startswith("tierank: error: ") and "Traceback" not in r.stderr, (
                    opt,
                    v,
                )
