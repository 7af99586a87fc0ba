"""Tie-oblivious values against pytrec_eval (trec_eval 9 as a library) and ir_measures.

pytrec_eval keeps run scores as C ``float`` (float32) and, like trec_eval, breaks
ties by docno descending.  float32 can merge distinct float64 scores into one
tie group (see :func:`test_pytrec_eval_scores_are_float32`), so tierank is fed
the same run with its scores cast to float32: both then see the same tie groups,
and ``tie_break="trec_eval"`` must reproduce pytrec_eval exactly (1e-9) per
query and on average, for every shared measure.  On the real runs here the cast
happens to merge no scores; it is kept so that the comparison stays valid for
any run added to the list.

The dicts fed to pytrec_eval and ir_measures are read by the naive readers of
conftest.py; tierank gets the same dicts.
"""

from __future__ import annotations

import numpy as np
import pytest

import tierank

pytrec_eval = pytest.importorskip("pytrec_eval")

from realdata import DATA  # noqa: E402  (the real data, from files in the repository)

CUTS = (
    1,
    3,
    5,
    10,
    20,
    30,
    100,
)  # 30 and 100 exceed the 20-candidate askubuntu lists: P@k still divides by k
SUCCESS_CUTS = (1, 3, 5, 10)
_c = ",".join(map(str, CUTS))
PYTREC_MEASURES = {
    "map",
    f"map_cut.{_c}",
    f"P.{_c}",
    f"recall.{_c}",
    "ndcg",
    f"ndcg_cut.{_c}",
    "recip_rank",
    "Rprec",
    f"success.{','.join(map(str, SUCCESS_CUTS))}",
    "num_rel_ret",
}

# pytrec_eval output key -> tierank measure
NAMES = {"map": "AP", "ndcg": "nDCG", "recip_rank": "RR", "Rprec": "Rprec", "num_rel_ret": "Hits"}
for _k in CUTS:
    NAMES.update(
        {
            f"map_cut_{_k}": f"AP@{_k}",
            f"P_{_k}": f"P@{_k}",
            f"recall_{_k}": f"R@{_k}",
            f"ndcg_cut_{_k}": f"nDCG@{_k}",
        }
    )
for _k in SUCCESS_CUTS:
    NAMES[f"success_{_k}"] = f"Success@{_k}"

PAIRS = {  # id: (run, qrels)
    "askubuntu-dev": ("askubuntu/dev.bm25.run", "askubuntu/dev.qrels"),
    "askubuntu-test": ("askubuntu/test.bm25.run", "askubuntu/test.qrels"),
    "rag24-comment": ("trec_eval/results.comment.test", "trec_eval/qrels.comment.test"),
    "trec-302": ("trec_eval/results-302.test", "trec_eval/qrels-302.test"),
    "rag24-candidates": ("rag24/candidates.run", "rag24/qrels.txt"),
    "trec-test": ("trec_eval/results.test", "trec_eval/qrels.test"),
}
GRADED = ["rag24-comment", "rag24-candidates"]  # grades 0-3


def as_float32(run: dict) -> dict:
    """Scores rounded to float32 (and back to Python floats), as pytrec_eval stores them."""
    return {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}


def pytrec(qrels: dict, run: dict, rel: int = 1) -> dict:
    return pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=rel).evaluate(run)


def ours(qrels: dict, run: dict, rel: int = 1, tie_break: str = "trec_eval") -> tuple[dict, dict]:
    res = tierank.evaluate(qrels, run, sorted(set(NAMES.values())), tie_break=tie_break, rel=rel)
    pq = res.per_query()
    per = {(q, m): float(v) for q, m, v in zip(pq["query"], pq["measure"], pq["oblivious"])}
    ag = res.aggregate()
    return per, dict(zip(ag["measure"], ag["oblivious"].astype(float)))


def mismatches(theirs: dict, per: dict, tol: float = 1e-9) -> list:
    return [
        (q, m, v, per[(q, NAMES[m])])
        for q, row in theirs.items()
        for m, v in row.items()
        if abs(per[(q, NAMES[m])] - v) > tol
    ]


@pytest.mark.parametrize("pair", list(PAIRS))
def test_per_query_and_mean_equal_pytrec_eval(pair, read_run_dict, read_qrels_dict):
    run_path, qrels_path = PAIRS[pair]
    run = as_float32(read_run_dict(run_path))
    qrels = read_qrels_dict(qrels_path)
    theirs = pytrec(qrels, run)
    per, agg = ours(qrels, run)
    # same query set: the queries of the run that are judged
    assert sorted(theirs) == sorted({q for q, _ in per})
    assert set(next(iter(theirs.values()))) == set(NAMES), (
        "pytrec_eval did not compute every measure"
    )
    bad = mismatches(theirs, per)
    assert not bad, (
        f"(query, pytrec_eval measure, pytrec_eval, tierank): {bad[:10]} ({len(bad)} in all)"
    )
    for m, name in NAMES.items():
        mean = float(np.mean([row[m] for row in theirs.values()]))
        assert agg[name] == pytest.approx(mean, abs=1e-9), (m, mean, agg[name])


@pytest.mark.parametrize("rel", [2, 3])
@pytest.mark.parametrize("pair", GRADED)
def test_relevance_level_equals_pytrec_eval(pair, rel, read_run_dict, read_qrels_dict):
    """``rel`` is trec_eval's -l: binary measures count grade >= rel; nDCG keeps graded gains."""
    run_path, qrels_path = PAIRS[pair]
    run = as_float32(read_run_dict(run_path))
    qrels = read_qrels_dict(qrels_path)
    bad = mismatches(pytrec(qrels, run, rel=rel), ours(qrels, run, rel=rel)[0])
    assert not bad, bad[:10]


def with_rel(name: str, rel: int) -> str:
    """``P@5`` -> ``P(rel=2)@5``, ``AP`` -> ``AP(rel=2)``."""
    fam, _, cut = name.partition("@")
    return f"{fam}(rel={rel})" + (f"@{cut}" if cut else "")


@pytest.mark.parametrize("rel", [2, 3])
@pytest.mark.parametrize("pair", GRADED)
def test_per_measure_rel_equals_pytrec_eval(pair, rel, read_run_dict, read_qrels_dict):
    """Per-measure thresholds (``P(rel=2)@5``) mixed with default ones in one evaluation.

    Each binary measure with ``rel=R`` equals pytrec_eval at relevance_level R, and
    the same measure without the parameter still equals relevance_level 1.
    nDCG takes no threshold (graded gains), so it is left out.
    """
    run_path, qrels_path = PAIRS[pair]
    run = as_float32(read_run_dict(run_path))
    qrels = read_qrels_dict(qrels_path)
    binary = {m: n for m, n in NAMES.items() if not n.startswith("nDCG")}
    names = sorted(binary.values()) + [with_rel(n, rel) for n in sorted(binary.values())]
    res = tierank.evaluate(qrels, run, names, tie_break="trec_eval")
    pq = res.per_query()
    per = {(q, m): float(v) for q, m, v in zip(pq["query"], pq["measure"], pq["oblivious"])}
    bad = []
    for level, name_of in ((1, lambda n: n), (rel, lambda n: with_rel(n, rel))):
        for q, row in pytrec(qrels, run, rel=level).items():
            for m, name in binary.items():
                if abs(per[(q, name_of(name))] - row[m]) > 1e-9:
                    bad.append((q, name_of(name), row[m], per[(q, name_of(name))]))
    assert not bad, bad[:10]


def test_comparison_discriminates_tie_breaks(read_run_dict, read_qrels_dict):
    """askubuntu's BM25 ties are real and matter: docno ascending disagrees with pytrec_eval."""
    run = as_float32(read_run_dict("askubuntu/dev.bm25.run"))
    qrels = read_qrels_dict("askubuntu/dev.qrels")
    assert len(mismatches(pytrec(qrels, run), ours(qrels, run, tie_break="docno")[0])) > 10


def test_complete_matches_trec_eval_c_on_truncated_run(read_run_dict, read_qrels_dict):
    """results.trunc lacks query 302 (trec_eval's own ``-c`` test case).

    pytrec_eval evaluates only run queries; ``complete=True`` (trec_eval -c) also
    averages in 302 with every measure 0, so its mean is pytrec_eval's sum / 3.
    """
    run = as_float32(read_run_dict("trec_eval/results.trunc"))
    qrels = read_qrels_dict("trec_eval/qrels.test")
    theirs = pytrec(qrels, run)
    assert sorted(theirs) == ["301", "303"]
    per, _ = ours(qrels, run)
    assert not mismatches(theirs, per)
    res = tierank.evaluate(qrels, run, sorted(set(NAMES.values())), complete=True)
    assert res.qids == ["301", "302", "303"]
    agg = dict(zip(res.aggregate()["measure"], res.aggregate()["oblivious"]))
    for m, name in NAMES.items():
        assert agg[name] == pytest.approx(sum(row[m] for row in theirs.values()) / 3, abs=1e-9), m
    # tierank's own reader takes the tab-separated lines with trailing junk as trec_eval does
    te = DATA / "trec_eval"
    from_files = tierank.evaluate(
        te / "qrels.test", te / "results.trunc", sorted(set(NAMES.values())), complete=True
    ).aggregate()
    np.testing.assert_allclose(
        from_files["oblivious"], res.aggregate()["oblivious"], rtol=0, atol=1e-12
    )


def test_pytrec_eval_scores_are_float32():
    """Why the run is cast: 1 + 1e-12 and 1 are distinct doubles but one float32.

    pytrec_eval then sees a tie and puts docno "b" before "a" (docno descending),
    so the relevant "a" lands at rank 2.  tierank in float64 sees no tie; fed the
    float32-cast scores it sees the tie and agrees with pytrec_eval.
    """
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-12, "b": 1.0}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "P.1"}).evaluate(run)["q"]
    assert theirs == {"recip_rank": 0.5, "P_1": 0.0}
    f64 = tierank.evaluate(qrels, run, ["RR", "P@1"]).to_dict()["q"]
    assert (f64["RR"]["oblivious"], f64["P@1"]["oblivious"]) == (1.0, 1.0)
    f32 = tierank.evaluate(qrels, as_float32(run), ["RR", "P@1"]).to_dict()["q"]
    assert (f32["RR"]["oblivious"], f32["P@1"]["oblivious"]) == (0.5, 0.0)
    assert (f32["RR"]["expected"], f32["P@1"]["expected"]) == (0.75, 0.5)


# ----------------------------------------------------------------------------- ir_measures

# measures ir_measures computes with its pytrec_eval provider (docno-descending ties)
IRM_TREC = ["AP", "AP@10", "nDCG", "nDCG@10", "P@5", "P@20", "R@10", "RR", "Rprec", "Success@1"]
# RR@k is served by its msmarco provider, which sorts ties by docid ascending: tierank "docno"
IRM_DOCNO = ["RR@5", "RR@10"]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_ir_measures_askubuntu(split, data_dir):
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path = data_dir / "askubuntu" / f"{split}.qrels"
    run_path = data_dir / "askubuntu" / f"{split}.bm25.run"
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    for names, policy in ((IRM_TREC, "trec_eval"), (IRM_DOCNO, "docno")):
        measures = [ir_measures.parse_measure(n) for n in names]
        res = tierank.evaluate(qrels_path, run_path, names, tie_break=policy)
        agg = dict(zip(res.aggregate()["measure"], res.aggregate()["oblivious"]))
        theirs = ir_measures.calc_aggregate(measures, qrels, run)
        for m in measures:
            assert agg[str(m)] == pytest.approx(theirs[m], abs=1e-9), (policy, str(m))
        pq = res.per_query()
        per = {(q, m): v for q, m, v in zip(pq["query"], pq["measure"], pq["oblivious"])}
        bad = [
            (r.query_id, str(r.measure), r.value, per[(r.query_id, str(r.measure))])
            for r in ir_measures.iter_calc(measures, qrels, run)
            if abs(r.value - per[(r.query_id, str(r.measure))]) > 1e-9
        ]
        assert not bad, (policy, bad[:10])


def test_ir_measures_rel_parameter(data_dir):
    """ir_measures' ``rel`` measure parameter on graded qrels (RAG 2024, grades 0-3)."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path = data_dir / "trec_eval" / "qrels.comment.test"
    run_path = data_dir / "trec_eval" / "results.comment.test"
    names = [
        "P(rel=2)@5",
        "AP(rel=2)",
        "R(rel=3)@20",
        "RR(rel=3)",
        "Rprec(rel=2)",
        "Success(rel=3)@1",
        "nDCG@10",
    ]
    measures = [ir_measures.parse_measure(n) for n in names]
    theirs = ir_measures.calc_aggregate(
        measures,
        list(ir_measures.read_trec_qrels(str(qrels_path))),
        list(ir_measures.read_trec_run(str(run_path))),
    )
    ag = tierank.evaluate(qrels_path, run_path, names).aggregate()
    agg = dict(zip(ag["measure"], ag["oblivious"]))
    for n, m in zip(names, measures):
        assert agg[n] == pytest.approx(theirs[m], abs=1e-9), n
