"""Worked examples with hand-computed answers, and measure parsing."""

from __future__ import annotations

import math

import pytest

import tierank
from tierank import TierankInputError, parse_measure

# The shipped example: d1 (rel) 0.9 | d2 (non-rel), d3 (rel), d4 (rel) tied at 0.8 | d5 0.5; N+ = 3
QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "d4": 0.8, "d5": 0.5}}


def agg(measures, **kw):
    return tierank.evaluate(QRELS, RUN, measures, **kw).aggregate().set_index("measure")


def test_figure1_recall_at_3():
    r = agg(["R@3"]).loc["R@3"]
    # top 3 = d1 + two of {d2, d3, d4}: hits 2 w.p. 2/3 (d2 included), 3 w.p. 1/3
    assert math.isclose(r["expected"], (2 / 3 * 2 + 1 / 3 * 3) / 3)
    assert math.isclose(r["min"], 2 / 3) and r["max"] == 1.0
    assert r["oblivious"] == 1.0  # trec_eval: d4, d3 before d2 (docno descending)
    assert math.isclose(r["bias"], 1 - 7 / 9)
    # hits in top 3 = 2 + Bernoulli(1/3): std = sqrt(2/9) / 3
    assert math.isclose(r["std"], math.sqrt(2 / 9) / 3)


def test_figure1_policies():
    assert agg(["R@3"], tie_break="docno").loc["R@3", "oblivious"] == pytest.approx(
        2 / 3
    )  # d2, d3 first
    assert agg(["R@3"], tie_break="input").loc["R@3", "oblivious"] == pytest.approx(
        2 / 3
    )  # file order d2, d3


def test_figure1_ndcg_and_ap():
    r = agg(["nDCG@3", "AP"])
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    # positions 2 and 3 each hold a relevant doc w.p. 2/3
    e_dcg = 1 + (2 / 3) / math.log2(3) + (2 / 3) / math.log2(4)
    assert math.isclose(r.loc["nDCG@3", "expected"], e_dcg / idcg)
    # AP orderings of {d2, d3, d4}: N at offset 0, 1 or 2, each w.p. 1/3
    ap = [(1 + 2 / 3 + 3 / 4) / 3, (1 + 2 / 2 + 3 / 4) / 3, (1 + 1 + 1) / 3]
    assert math.isclose(r.loc["AP", "expected"], sum(ap) / 3)
    assert math.isclose(r.loc["AP", "min"], min(ap)) and math.isclose(r.loc["AP", "max"], max(ap))


def test_rr_when_first_relevant_is_tied():
    run = {"q": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}}
    qrels = {"q": {"c": 1}}
    r = tierank.evaluate(qrels, run, ["RR", "RR@2", "Success@2"]).aggregate().set_index("measure")
    # c is uniformly at rank 2..5
    assert math.isclose(r.loc["RR", "expected"], (1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4)
    assert math.isclose(r.loc["RR@2", "expected"], (1 / 2) / 4)
    assert math.isclose(r.loc["Success@2", "expected"], 1 / 4)
    assert math.isclose(r.loc["Success@2", "std"], math.sqrt(1 / 4 * 3 / 4))


def test_graded_ndcg_uses_linear_gains_and_qrels_ideal():
    run = {"q": {"a": 1.0, "b": 1.0}}
    qrels = {"q": {"a": 3, "b": 1, "z": 2}}  # z never retrieved, still in the ideal
    r = tierank.evaluate(qrels, run, ["nDCG"]).aggregate().set_index("measure").loc["nDCG"]
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    best, worst = 3 + 1 / math.log2(3), 1 + 3 / math.log2(3)
    assert math.isclose(r["max"], best / idcg) and math.isclose(r["min"], worst / idcg)
    assert math.isclose(r["expected"], (best + worst) / 2 / idcg)
    c = (
        tierank.evaluate(qrels, run, ["nDCG"], candidates_only=True)
        .aggregate()
        .set_index("measure")
        .loc["nDCG"]
    )
    assert math.isclose(c["max"], 1.0)  # ideal from the candidates only


def test_rbp():
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0}}
    qrels = {"q": {"b": 1}}
    r = (
        tierank.evaluate(qrels, run, ["RBP(p=0.5)", "RBP(p=0.5)@2"])
        .aggregate()
        .set_index("measure")
    )
    assert math.isclose(r.loc["RBP(p=0.5)", "expected"], 0.5 * (0.5 + 0.25) / 2)
    assert math.isclose(r.loc["RBP(p=0.5)@2", "expected"], 0.5 * 0.5 / 2)


@pytest.mark.parametrize(
    "text",
    [
        "nDCG@10",
        "P(rel=2)@5",
        "RBP(p=0.8)",
        "RBP(p=0.5)@10",
        "AP",
        "RR@10",
        "Rprec",
        "Success@1",
        "Hits@3",
        "F1@7",
        "R@100",
        "AP(rel=2)@3",
    ],
)
def test_canonical_round_trip(text):
    m = parse_measure(text)
    assert str(m) == text and parse_measure(str(m)) == m


@pytest.mark.parametrize(
    "text, msg",
    [
        ("nDCG@0", "cutoff must be a positive integer"),
        ("P@-3", "cutoff must be a positive integer"),
        ("P@x", "cutoff must be a positive integer"),
        ("P", "needs a cutoff"),
        ("Rprec@5", "takes no cutoff"),
        ("MAP@3", "unknown measure 'MAP'"),
        ("RBP(p=2)", "p must lie in (0, 1)"),
        ("P(q=1)@3", "unknown parameter 'q'"),
        ("RBP(p=high)", "is not a float"),
        ("nDCG@@3", "cutoff must be a positive integer"),
        ("nDCG(@3", "not of the form"),
    ],
)
def test_bad_measures(text, msg):
    with pytest.raises(TierankInputError) as e:
        parse_measure(text)
    assert msg in str(e.value)


def test_all_measure_errors_reported_together():
    with pytest.raises(TierankInputError) as e:
        tierank.evaluate(QRELS, RUN, ["P@0", "nope", "nDCG@3"])
    assert len(e.value.problems) == 2


def test_unknown_policy():
    with pytest.raises(TierankInputError, match="unknown tie-break policy 'alphabetical'"):
        tierank.evaluate(QRELS, RUN, ["P@1"], tie_break="alphabetical")
