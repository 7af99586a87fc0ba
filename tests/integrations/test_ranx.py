"""tierank.integrations.ranx against the installed ranx."""

from __future__ import annotations

import numpy as np
import pytest

ranx = pytest.importorskip("ranx", reason="ranx not installed: pip install 'tierank[ranx]'")

import tierank  # noqa: E402
from tierank.analysis.compare import adjust_pvalues  # noqa: E402
from tierank.integrations.ranx import compare, evaluate, scores, tierank_measure  # noqa: E402

TIE_RUN = {"q1": {f"d{i}": 1.0 for i in range(1, 6)}}  # 1 relevant (d1) among 5 tied documents
TIE_QRELS = {"q1": {"d1": 1}}
METRICS = [
    "ndcg@10",
    "mrr",
    "map@100",
    "precision@5",
    "recall@10",
    "hit_rate@3",
    "r-precision",
    "hits@5",
    "f1@5",
    "map@100-l2",
    "precision@5-l2",
]


def _no_ties(seed=0, nq=5):
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(0, 30, 3)} for i in range(nq)
    }
    for q in qrels:
        qrels[q]["d0"] = 2  # every query has a relevant document at every level
    run = {q: {f"d{j}": float(v) + 0.5 for j, v in enumerate(rng.permutation(25))} for q in qrels}
    return qrels, run


def _tied(seed=0, nq=5):
    rng = np.random.default_rng(seed)
    qrels, _ = _no_ties(seed, nq)
    run = {q: {f"d{j}": float(rng.integers(0, 5)) for j in range(25)} for q in qrels}
    return qrels, run


def test_ranx_breaks_the_tie_by_input_type_tierank_does_not():
    by_run = ranx.evaluate(ranx.Qrels(TIE_QRELS), ranx.Run(TIE_RUN), "mrr")
    by_dict = ranx.evaluate(TIE_QRELS, TIE_RUN, "mrr")
    assert {float(by_run), float(by_dict)} == {1.0, 0.2}  # ranx: 1.0 for a Run, 0.2 for the dict
    for q_in, r_in in ((ranx.Qrels(TIE_QRELS), ranx.Run(TIE_RUN)), (TIE_QRELS, TIE_RUN)):
        row = evaluate(q_in, r_in, ["mrr"]).aggregate().iloc[0]
        assert row["expected"] == pytest.approx(137 / 300, abs=1e-15)
        assert (row["min"], row["max"]) == (pytest.approx(0.2), 1.0)


def test_metric_names_map_to_tierank_measures():
    assert [str(tierank_measure(m)) for m in METRICS] == [
        "nDCG@10",
        "RR",
        "AP@100",
        "P@5",
        "R@10",
        "Success@3",
        "Rprec",
        "Hits@5",
        "F1@5",
        "AP(rel=2)@100",
        "P(rel=2)@5",
    ]
    assert str(tierank_measure("rbp.95")) == str(tierank.parse_measure("RBP(p=0.95)"))
    with pytest.raises(tierank.TierankInputError, match="unknown metric"):
        tierank_measure("ndgc@10")


def test_per_query_scores_equal_ranx_without_ties():
    qrels, run = _no_ties()
    q, r = ranx.Qrels(qrels), ranx.Run(run)
    ours = scores(q, r, METRICS)
    theirs = ranx.evaluate(q, r, METRICS, return_mean=False)
    for m in METRICS:
        assert ours[m] == pytest.approx(np.asarray(theirs[m]), abs=1e-9), m


def test_per_query_scores_equal_tierank_evaluate_with_ties():
    qrels, run = _tied()
    qrels["q_absent"] = {"x": 1}
    q, r = ranx.Qrels(qrels), ranx.Run(run)
    ref = tierank.evaluate(qrels, run, [str(tierank_measure(m)) for m in METRICS[:5]]).per_query()
    assert (ref["max"] - ref["min"]).max() > 0.05  # real ties
    for stat in ("expected", "min", "max"):
        got = scores(q, r, METRICS[:5], stat=stat)
        order = list(q.keys())
        for m in METRICS[:5]:
            want = ref[ref.measure == str(tierank_measure(m))].set_index("query")[stat]
            expect = np.array([want.get(qid, 0.0) for qid in order])
            assert got[m] == pytest.approx(expect, abs=1e-12)
            assert got[m][order.index("q_absent")] == 0.0


def test_compare_gives_ranx_report_on_tie_aware_values():
    qrels, _ = _tied(1, nq=8)
    runs = []
    for i, seed in enumerate((2, 3, 4)):
        _, run = _tied(seed, nq=8)
        runs.append(ranx.Run(run, name=f"sys{i}"))
    q = ranx.Qrels(qrels)
    rep = compare(q, runs, ["ndcg@10", "mrr"], stat_test="student", max_p=0.05)
    assert isinstance(rep, ranx.data_structures.Report)
    stock = ranx.compare(q, runs, ["ndcg@10", "mrr"], stat_test="student", max_p=0.05)
    for run in runs:
        res = evaluate(q, run, ["ndcg@10", "mrr"], complete=True).aggregate().set_index("measure")
        assert rep.results[run.name]["ndcg@10"] == pytest.approx(
            res.loc["nDCG@10", "expected"], abs=1e-12
        )
        assert rep.results[run.name]["mrr"] == pytest.approx(res.loc["RR", "expected"], abs=1e-12)
    # ranx's own numbers break the ties one way: they differ from the expectations
    assert any(abs(rep.results[r.name]["mrr"] - stock.results[r.name]["mrr"]) > 1e-6 for r in runs)
    table = rep.to_table()
    assert "sys0" in table and "NDCG@10" in table
    holm = compare(q, runs, ["ndcg@10", "mrr"], stat_test="student", max_p=0.05, correction="holm")
    pairs = [frozenset(p) for p in (("sys0", "sys1"), ("sys0", "sys2"), ("sys1", "sys2"))]
    raw = [rep.comparisons[p]["mrr"]["p_value"] for p in pairs]
    assert [holm.comparisons[p]["mrr"]["p_value"] for p in pairs] == pytest.approx(
        adjust_pvalues(raw, "holm")
    )
    assert sum(raw) < sum(holm.comparisons[p]["mrr"]["p_value"] for p in pairs)
    assert rep.to_dict()["sys0"]["scores"]["mrr"] == pytest.approx(rep.results["sys0"]["mrr"])


def test_compare_matches_ranx_compare_without_ties():
    qrels, _ = _no_ties(5, nq=8)
    runs = [ranx.Run(_no_ties(s, nq=8)[1], name=f"s{s}") for s in (6, 7)]
    q = ranx.Qrels(qrels)
    # (ranx's Fisher test draws in numba's parallel threads: its p-values vary from call to call)
    ours = compare(q, runs, ["ndcg@10", "map@100"], stat_test="student")
    theirs = ranx.compare(q, runs, ["ndcg@10", "map@100"], stat_test="student")
    pair = frozenset(("s6", "s7"))
    for m in ("ndcg@10", "map@100"):
        assert ours.results["s6"][m] == pytest.approx(theirs.results["s6"][m], abs=1e-9)
        assert ours.comparisons[pair][m]["p_value"] == pytest.approx(
            theirs.comparisons[pair][m]["p_value"]
        )
    assert ours.win_tie_loss == theirs.win_tie_loss


def test_tierank_evaluate_accepts_ranx_objects():
    # needs the io/convert.py change requested in /tmp/coord/REQUESTS.md (H4)
    res = tierank.evaluate(ranx.Qrels(TIE_QRELS), ranx.Run(TIE_RUN), ["RR"])
    assert res.aggregate()["expected"][0] == pytest.approx(137 / 300, abs=1e-15)
