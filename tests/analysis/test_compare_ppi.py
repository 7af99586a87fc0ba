"""``compare(..., ppi=HUMAN_QRELS)`` and ``tierank compare --ppi``: each system's and each pair's
prediction-powered estimates against ppi-python on the per-query values (the pairs' on the per-query
differences), to 1e-10; refusals and notes at ``tierank eval --ppi``'s thresholds."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tierank
from helpers import invoke
from tierank.errors import TierankInputError

ppi_py = pytest.importorskip("ppi_py")

QUERIES = 40


def _data(labelled: int, seed: int = 4):
    """Three systems with tied scores over ``QUERIES`` queries; a noisy machine judge for every
    query; human grades for the first ``labelled`` queries (q00, q01, ...)."""
    rng = np.random.default_rng(seed)
    qs = [f"q{i:02d}" for i in range(QUERIES)]
    truth = {q: {f"d{d}": int(rng.integers(0, 3)) for d in range(8)} for q in qs}
    machine = {
        q: {d: int(np.clip(g + rng.integers(-1, 2), 0, 2)) for d, g in docs.items()}
        for q, docs in truth.items()
    }
    human = {q: truth[q] for q in qs[:labelled]}
    runs = {
        f"s{s}": {q: {f"d{d}": float(rng.integers(0, 3 + s)) for d in range(8)} for q in qs}
        for s in range(3)
    }
    return runs, machine, human


def _per_query(qrels, run, measure="nDCG@5") -> dict[str, float]:
    r = tierank.evaluate(qrels, run, measure)
    return dict(zip(r.qids, r.stats[r.measures[0]].expected.tolist()))


def _reference(y, yhat, yu, lam, level):
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=1 - level, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yu, lam=lam)
    return float(np.squeeze(point)), float(np.squeeze(lo)), float(np.squeeze(hi))


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_systems_and_pairs_equal_ppi_python(level):
    runs, machine, human = _data(labelled=15)
    cmp = tierank.compare(runs, machine, "nDCG@5", ppi=human, level=level)
    lab = sorted(human)
    unl = sorted(set(machine) - set(human))
    m = {name: _per_query(machine, run) for name, run in runs.items()}
    h = {name: _per_query(human, run) for name, run in runs.items()}
    assert cmp.inference["ppi"]["labeled"] == 15 and cmp.inference["ppi"]["unlabeled"] == 25

    def check(got, y, yhat, yu, point):
        for lam, prefix in ((1.0, "ppi"), (None, "ppi_pp")):
            ref = _reference(y, yhat, yu, lam, level)
            mine = (
                getattr(got, f"{prefix}_{point}"),
                *(getattr(got, f"{prefix}_ci_{e}") for e in ("low", "high")),
            )
            np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-10)
        assert (got.ppi_n_labeled, got.ppi_n_unlabeled) == (len(y), len(yu))
        assert 0.0 <= got.ppi_pp_lambda <= 1.0

    for s in cmp.systems:
        y = np.array([h[s.name][q] for q in lab])
        check(
            s,
            y,
            np.array([m[s.name][q] for q in lab]),
            np.array([m[s.name][q] for q in unl]),
            "mean",
        )
        assert s.human_mean == pytest.approx(y.mean(), abs=1e-12)
    assert len(cmp.pairs) == 3
    for p in cmp.pairs:  # PPI on the per-query differences a - b
        y = np.array([h[p.a][q] - h[p.b][q] for q in lab])
        yhat = np.array([m[p.a][q] - m[p.b][q] for q in lab])
        yu = np.array([m[p.a][q] - m[p.b][q] for q in unl])
        check(p, y, yhat, yu, "diff")
        assert p.human_diff == pytest.approx(y.mean(), abs=1e-12)
    # the difference's estimate is not the difference of the systems' (PPI++ tunes lam per estimate)
    a, b = cmp.system(cmp.pairs[0].a), cmp.system(cmp.pairs[0].b)
    assert cmp.pairs[0].ppi_diff == pytest.approx(a.ppi_mean - b.ppi_mean, abs=1e-12)
    assert cmp.pairs[0].ppi_pp_diff != pytest.approx(a.ppi_pp_mean - b.ppi_pp_mean, abs=1e-6)


def test_too_few_human_queries_refused_few_noted_all_refused():
    runs, machine, human = _data(labelled=9)
    with pytest.raises(
        TierankInputError,
        match=r"only 9 queries have both human and machine labels; PPI's normal interval needs at least 10",
    ):
        tierank.compare(runs, machine, "nDCG@5", ppi=human)
    runs, machine, human = _data(labelled=12)
    cmp = tierank.compare(runs, machine, "nDCG@5", ppi=human)
    assert any("12 queries with human labels (fewer than 30)" in n for n in cmp.notes)
    runs, machine, human = _data(labelled=35)
    cmp = tierank.compare(runs, machine, "nDCG@5", ppi=human)
    assert not any("human labels" in n for n in cmp.notes)
    runs, machine, human = _data(labelled=QUERIES)
    with pytest.raises(TierankInputError, match="nothing for PPI to add"):
        tierank.compare(runs, machine, "nDCG@5", ppi=human)


def test_a_summary_that_is_not_a_mean_is_refused(tmp_path):
    runs, machine, human = _data(labelled=15)
    missing = {"a": tmp_path / "a.run", "b": tmp_path / "b.run"}  # refused before anything is read
    for measure in ("GMAP", "NumRet"):
        with pytest.raises(TierankInputError, match=f"--ppi: {measure} is summarised by a"):
            tierank.compare(missing, tmp_path / "q.qrels", measure, ppi=tmp_path / "h.qrels")
    with pytest.raises(
        TierankInputError, match=r"GMAP is summarised by a geometric mean, not a mean"
    ):
        tierank.compare(runs, machine, "GMAP", ppi=human)


def _files(tmp_path, labelled):
    runs, machine, human = _data(labelled=labelled)

    def qrels(path, q):
        path.write_text(
            "".join(f"{qid} 0 {d} {g}\n" for qid, docs in q.items() for d, g in docs.items())
        )
        return path

    paths = []
    for name, run in runs.items():
        p = tmp_path / f"{name}.run"
        p.write_text(
            "".join(
                f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in run.items() for d, s in docs.items()
            )
        )
        paths.append(p)
    return qrels(tmp_path / "machine.qrels", machine), qrels(tmp_path / "human.qrels", human), paths


def test_the_command_writes_the_ppi_fields_and_keeps_every_key(tmp_path):
    mq, hq, paths = _files(tmp_path, labelled=15)
    plain = json.loads(invoke("compare", mq, *paths, "-m", "nDCG@5", "-f", "json").stdout)
    doc = json.loads(
        invoke("compare", mq, *paths, "-m", "nDCG@5", "-f", "json", "--ppi", hq).stdout
    )
    lib = tierank.compare({p.name: p for p in paths}, mq, "nDCG@5", ppi=hq, correction="holm")
    assert doc == lib.to_dict()
    for key in ("systems", "pairs"):
        assert [set(r) for r in doc[key]] == [set(r) for r in plain[key]]  # the same keys
        assert all(r["ppi_n_labeled"] is None for r in plain[key])
        assert all(r["ppi_n_labeled"] == 15 and r["ppi_n_unlabeled"] == 25 for r in doc[key])
    for field in (
        "ppi_diff",
        "ppi_ci_low",
        "ppi_ci_high",
        "ppi_pp_diff",
        "ppi_pp_lambda",
        "human_diff",
    ):
        assert all(isinstance(r[field], float) for r in doc["pairs"])
    assert doc["inference"]["ppi"]["confidence"] == 0.95 and "ppi" not in plain["inference"]
    table = invoke(
        "compare", mq, *paths, "-m", "nDCG@5", "--ppi", hq, env={"COLUMNS": "200"}
    ).stdout
    assert "pairwise differences (a - b), prediction-powered" in table
    assert f"{lib.pairs[0].ppi_diff:.4f} [{lib.pairs[0].ppi_ci_low:.4f}" in table


def test_the_command_refuses_with_the_reason(tmp_path):
    mq, hq, paths = _files(tmp_path, labelled=5)
    p = invoke("compare", mq, *paths, "-m", "nDCG@5", "--ppi", hq, check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == [
        "tierank: error: compare --ppi: only 5 queries have both human and machine labels; "
        "PPI's normal interval needs at least 10"
    ]
    p = invoke("compare", mq, *paths, "--ppi", tmp_path / "missing.qrels", check=False)
    assert p.returncode == 2 and "--ppi" in p.stderr and "no such file" in p.stderr
    # with a manifest (which records the human qrels), the same reason and no manifest written
    p = invoke("compare", mq, *paths, "--ppi", hq, "--manifest", tmp_path / "m.yaml", check=False)
    assert p.returncode == 2 and "only 5 queries have both" in p.stderr
    assert not (tmp_path / "m.yaml").exists()
