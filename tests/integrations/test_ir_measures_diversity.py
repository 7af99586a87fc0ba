"""tierank's ir_measures provider answers the intent-aware family tie-aware (issue 25).

ir_measures hands these measures qrels whose ``iteration`` field is the subtopic (as its pyndeval
provider reads them); tierank's provider must give :func:`tierank.measures.diversity.evaluate_diversity`'s
statistics for them, and on a tie-free run the value of ir_measures' own pyndeval provider (ndeval).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

ir_measures = pytest.importorskip(
    "ir_measures", reason="ir_measures not installed: pip install 'tierank[irm]'"
)

from ir_measures import (  # noqa: E402
    AP_IA,
    ERR_IA,
    NRBP,
    P_IA,
    Qrel,
    StRecall,
    alpha_nDCG,
    nDCG,
    nERR_IA,
    nNRBP,
)

from tierank.evaluate import evaluate_diversity  # noqa: E402
from tierank.integrations.ir_measures import (  # noqa: E402
    TierankProvider,
    diversity_measure,
    provider,
    subtopic_qrels,
    tie_aware,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "diversity"
MEASURES = [
    alpha_nDCG @ 5,
    alpha_nDCG @ 10,
    alpha_nDCG(alpha=0.7) @ 20,
    ERR_IA @ 10,
    nERR_IA @ 20,
    NRBP,
    nNRBP(beta=0.8),
    AP_IA,
    P_IA @ 5,
    P_IA @ 10,
    StRecall @ 5,
    StRecall @ 10,
    alpha_nDCG(rel=2) @ 10,
]


def _qrels_df() -> pd.DataFrame:
    rows = [line.split() for line in (DATA / "qrels.txt").read_text().splitlines() if line.strip()]
    return pd.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "iteration": [r[1] for r in rows],
            "doc_id": [r[2] for r in rows],
            "relevance": [int(r[3]) for r in rows],
        }
    )


def _run(name: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in (DATA / name).read_text().splitlines():
        f = line.split()
        if f:
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


def test_the_family_is_supported():
    for m in MEASURES:
        assert provider.supports(m), m
        assert str(diversity_measure(m)) == str(m)
    assert diversity_measure(nDCG @ 10) is None


@pytest.mark.parametrize("stat", ["expected", "min", "max", "std", "oblivious"])
def test_values_equal_evaluate_diversity_for_every_qrels_form(stat):
    run = _run("run-ties.txt")
    df = _qrels_df()
    ref = evaluate_diversity(DATA / "qrels.txt", DATA / "run-ties.txt", [str(m) for m in MEASURES])
    tuples = [Qrel(r.query_id, r.doc_id, r.relevance, r.iteration) for r in df.itertuples()]
    forms = [lambda: df, lambda: tuples, lambda: iter(tuples), lambda: str(DATA / "qrels.txt")]
    for form in forms:
        p = TierankProvider(stat)
        qrels = form()
        got = {(m.measure, m.query_id): m.value for m in p.iter_calc(MEASURES, qrels, run)}
        assert len(got) == len(MEASURES) * 2
        for m in MEASURES:
            per = ref.per_query(str(m))
            for q in ("101", "102"):
                assert got[m, q] == pytest.approx(per[q][stat], abs=1e-12), (type(qrels), m, q)
        agg = p.calc_aggregate(MEASURES, form(), run)
        for m in MEASURES:
            a = ref.aggregate(str(m))
            want = a.std if stat == "std" else getattr(a, stat)
            assert agg[m] == pytest.approx(want, abs=1e-12), m


def test_ties_matter_and_the_pipeline_reports_tie_aware_values():
    df, run = _qrels_df(), _run("run-ties.txt")
    ref = evaluate_diversity(DATA / "qrels.txt", DATA / "run-ties.txt", ["alpha_nDCG@5"]).aggregate(
        "alpha_nDCG@5"
    )
    assert ref.min < ref.max
    with tie_aware():
        got = ir_measures.calc_aggregate([alpha_nDCG @ 5], df, run)[alpha_nDCG @ 5]
    assert got == pytest.approx(ref.expected, abs=1e-12)


def test_plain_and_intent_aware_measures_together_and_defaults():
    """Plain qrels (no subtopic): one subtopic ``"0"``, as ir_measures' pyndeval provider reads them;
    a judged query absent from the run gets the default 0."""
    qrels = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": 1}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 2.0}}
    got = provider.calc_aggregate([nDCG @ 10, StRecall @ 1, P_IA @ 2], qrels, run)
    assert got[StRecall @ 1] == pytest.approx(0.5)  # query 1: 1 of 1 subtopic; query 2: 0
    assert got[P_IA @ 2] == pytest.approx((1.5 / 2) / 2)  # rank 2: b or c, each half the time
    assert not math.isnan(got[nDCG @ 10])
    assert subtopic_qrels(qrels).judgments["1"]["c"] == {"0": 2}
    assert provider.calc_aggregate([alpha_nDCG @ 10], qrels, {})[alpha_nDCG @ 10] == 0


def test_tie_free_values_equal_ir_measures_pyndeval_provider():
    pytest.importorskip(
        "pyndeval",
        reason="pyndeval is not importable (pip install pyndeval==0.0.8, in the 'test' extra)",
    )
    df, run = _qrels_df(), _run("run.txt")
    assert all(len(set(d.values())) == len(d) for d in run.values())
    measures = [
        alpha_nDCG @ 5,
        alpha_nDCG @ 10,
        alpha_nDCG(alpha=0.7) @ 20,
        ERR_IA @ 10,
        nERR_IA @ 20,
        NRBP,
        nNRBP(beta=0.8),
        AP_IA,
        P_IA @ 5,
        P_IA @ 10,
        StRecall @ 5,
        StRecall @ 10,
        alpha_nDCG(rel=2) @ 10,
    ]
    # one measure a call: ir_measures 0.4.3's pyndeval provider reads the run once (a generator) for
    # all its ndeval invocations, so measures of a second (alpha, beta, rel) group get the default 0
    theirs = {
        (m.measure, m.query_id): m.value
        for one in measures
        for m in ir_measures.pyndeval.iter_calc([one], df, run)
    }
    for stat in ("oblivious", "expected"):
        ours = {
            (m.measure, m.query_id): m.value
            for m in TierankProvider(stat).iter_calc(measures, df, run)
        }
        assert ours.keys() == theirs.keys()
        for key, v in theirs.items():
            assert ours[key] == pytest.approx(v, rel=1e-9, abs=1e-12), key
