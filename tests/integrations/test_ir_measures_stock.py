"""Registered, tierank's provider only adds tie-aware values: on inputs without ties, ir_measures
computes (and raises) what it computes without it, for empty inputs, measures a user defined, the
columns a pipeline asks for, and Accuracy's query set.

Each check computes a thing twice, once with ir_measures' own pipeline and once inside
``tie_aware()``, and compares the two.  ir_measures' own test suite, run with the provider registered,
is ``tests/crosscheck/test_ir_measures_suite.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

ir_measures = pytest.importorskip(
    "ir_measures", reason="ir_measures not installed: pip install 'tierank[ir_measures]'"
)
from ir_measures import AP, RR, Accuracy, Metric, P, nDCG  # noqa: E402

from tierank.integrations.ir_measures import TierankProvider, provider, tie_aware  # noqa: E402

QRELS = list(
    ir_measures.read_trec_qrels(
        "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 2\n"
    )
)
RUN = list(  # no tied scores: every provider orders it the same way
    ir_measures.read_trec_run(
        "0 0 D0 1 0.8 r\n0 0 D2 2 0.7 r\n0 0 D1 3 0.3 r\n0 0 D3 4 0.4 r\n0 0 D4 5 0.1 r\n"
        "1 0 D1 1 0.8 r\n1 0 D3 2 0.7 r\n1 0 D4 3 0.3 r\n1 0 D2 4 0.4 r\n"
    )
)
PARTIAL_QRELS = [q for q in QRELS if q.query_id == "0"]
PARTIAL_RUN = [r for r in RUN if r.query_id == "0"]
MEASURES = [P @ 5, RR, AP, nDCG @ 10]


def _both(fn):
    """``fn()`` with ir_measures' own pipeline, then with tierank's provider registered first."""
    stock = fn()
    with tie_aware():
        assert isinstance(ir_measures.DefaultPipeline.providers[0], type(provider))
        ours = fn()
    return stock, ours


@pytest.mark.parametrize(
    "qrels, run",
    [
        (QRELS, []),
        ([], RUN),
        ([], []),
        (QRELS, PARTIAL_RUN),
        (PARTIAL_QRELS, RUN),
        ({}, {}),
        ({"0": {}}, {"0": {}}),
        (pd.DataFrame(columns=["query_id", "doc_id", "relevance"]), RUN),
        (QRELS, pd.DataFrame(columns=["query_id", "doc_id", "score"])),
    ],
    ids=[
        "no-run",
        "no-qrels",
        "neither",
        "part-run",
        "part-qrels",
        "dicts",
        "empty-dicts",
        "df-q",
        "df-r",
    ],
)
def test_empty_and_partial_inputs_score_as_ir_measures(qrels, run):
    """Empty qrels: no metric and a NaN aggregate; an empty run: every qrels query at its default."""
    stock, ours = _both(lambda: set(ir_measures.iter_calc(MEASURES, qrels, run)))
    assert ours == stock
    stock, ours = _both(lambda: ir_measures.calc_aggregate(MEASURES, qrels, run))
    np.testing.assert_equal(ours, stock)  # NaN == NaN here


def test_the_provider_itself_scores_empty_qrels_as_ir_measures():
    assert list(provider.iter_calc([P @ 5], [], RUN)) == []
    assert np.isnan(provider.calc_aggregate([P @ 5], {}, RUN)[P @ 5])
    got = set(provider.iter_calc([P @ 5], QRELS, []))
    assert got == {Metric("0", P @ 5, 0.0), Metric("1", P @ 5, 0.0)}


def test_a_measure_a_user_defined_is_left_to_ir_measures():
    """``define_byquery`` over qrels without ``doc_id``: tierank neither claims it nor reads the qrels."""
    answer = ir_measures.define_byquery(lambda qrels, run: len(run.iloc[0]["answer"]))
    gold = pd.DataFrame([["q1", "the chemicals"]], columns=["query_id", "gold_answer"])
    res = pd.DataFrame([["q1", "the reactants!"]], columns=["query_id", "answer"])
    assert not provider.supports(answer)
    stock, ours = _both(lambda: list(ir_measures.iter_calc([answer], gold, res)))
    assert ours == stock == [Metric("q1", answer, 14)]
    assert type(ours[0].value) is int  # the user's value, untouched

    def share(qrels, run):
        run = run.merge(qrels, "left", on=["doc_id"])
        return (run["relevance"] > 0).sum() / len(run)

    mine = ir_measures.define_byquery(share, name="Mine") @ 3
    stock, ours = _both(lambda: ir_measures.calc_aggregate([mine, P @ 5], QRELS, RUN))
    assert ours == stock and ours[mine] == pytest.approx((2 / 3 + 1 / 3) / 2)


@pytest.mark.filterwarnings("ignore:tierank does not compute BPM")  # its once-per-process warning
def test_a_pipeline_asks_for_the_columns_it_asks_for_without_tierank():
    a = ir_measures.define(lambda q, r: 0, run_inputs=["query_id"], qrel_inputs=["query_id", "x"])
    for ms in ([a], [a, P @ 5], [P @ 5], [ir_measures.BPM(T=1.0, max_rel=1) @ 5]):
        for kind in ("run_inputs", "qrel_inputs"):
            stock, ours = _both(
                lambda ms=ms, kind=kind: set(getattr(ir_measures.DefaultPipeline, kind)(ms))
            )
            assert ours == stock, (ms, kind)


def test_accuracy_scores_the_queries_ir_measures_scores():
    """ir_measures' accuracy provider scores a query only when a relevant document is retrieved (in
    the top k): query 1 has none of grade 2 in its top 1, query 2 no relevant judgment at all."""
    qrels = list(
        ir_measures.read_trec_qrels(
            "0 0 A 2\n0 0 B 1\n0 0 C 0\n1 0 A 2\n1 0 B 1\n1 0 C 0\n2 0 X 0\n3 0 Z 1\n"
        )
    )
    run = list(
        ir_measures.read_trec_run(
            "0 0 C 1 0.9 r\n0 0 A 2 0.8 r\n0 0 X 3 0.7 r\n"
            "1 0 B 1 0.9 r\n1 0 C 2 0.8 r\n1 0 A 3 0.7 r\n1 0 Y 4 0.6 r\n"
            "2 0 X 1 0.9 r\n2 0 Y 2 0.8 r\n"
        )
    )
    measures = [Accuracy(rel=1), Accuracy(rel=2), Accuracy(rel=2) @ 1, Accuracy(rel=1) @ 2]
    stock, ours = _both(lambda: sorted(ir_measures.iter_calc(measures, qrels, run), key=repr))
    assert [(m.query_id, m.measure) for m in ours] == [(m.query_id, m.measure) for m in stock]
    assert [m.value for m in ours] == pytest.approx([m.value for m in stock], abs=1e-12)
    stock, ours = _both(lambda: ir_measures.calc_aggregate(measures, qrels, run))
    assert ours == pytest.approx(stock, abs=1e-12, nan_ok=True)


def test_accuracy_under_ties_keeps_a_query_some_ordering_scores():
    """A relevant document tied with a non-relevant one at the cutoff: some orderings retrieve it, so
    the query is scored (tierank's expected value), where every ordering lacks one it is not."""
    qrels = {"q": {"a": 1, "b": 0}, "r": {"a": 1}}
    run = {"q": {"b": 1.0, "a": 1.0, "c": 0.5}, "r": {"x": 1.0, "a": 0.5}}
    for stat, want in (
        ("min", 0.0),
        ("max", 1.0),
    ):  # (b, a): no relevant one in the top 1; (a, b): 1
        got = {
            m.query_id: m.value for m in TierankProvider(stat).iter_calc([Accuracy @ 1], qrels, run)
        }
        assert got == {"q": want}
