"""Measure names declared on the families: the tables of measures.names and of the adapters are derived
from the registry (and equal the tables they replaced); additivity is declared (Measure.aggregator)."""

from __future__ import annotations

import pytest

from tierank.measures import REGISTRY, parse_measure
from tierank.measures.base import AGGREGATORS, FamilyNames, Measure, register
from tierank.measures.names import family_names, plan, trec_name
from tierank.measures.trec_naming import forms

#: the hand-written tables before they were derived (a regression reference)
OLD_PLAIN = {
    "AP": "map",
    "RR": "recip_rank",
    "nDCG": "ndcg",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "GMAP": "gm_map",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetAP": "set_map",
    "SetF": "set_F",
    "NumQ": "num_q",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "NumNonRelJudgedRet": "num_nonrel_judged_ret",
    "IPrecAvg": "11pt_avg",
}
OLD_CUT = {"P": "P", "R": "recall", "nDCG": "ndcg_cut", "AP": "map_cut", "Success": "success"}
OLD_SPECS = {
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "recall",
    "11pt_avg",
    "ndcg",
    "ndcg_cut",
    "map_cut",
    "success",
    "set_P",
    "set_recall",
    "set_map",
    "set_F",
    "rbp",
}
OLD_RANX = {
    "ndcg": "nDCG",
    "mrr": "RR",
    "map": "AP",
    "precision": "P",
    "recall": "R",
    "hit_rate": "Success",
    "hits": "Hits",
    "r-precision": "Rprec",
    "f1": "F1",
    "bpref": "Bpref",
}
OLD_MTEB = {
    "ndcg": "nDCG",
    "map": "AP",
    "recall": "R",
    "precision": "P",
    "mrr": "RR",
    "hit_rate": "Success",
}


def test_trec_eval_tables_are_the_old_ones():
    plain = {f: n for n, f in family_names("trec_eval").items()}
    # the old entries unchanged (families added since declare new names only)
    assert {f: n for f, n in plain.items() if f in OLD_PLAIN} == OLD_PLAIN  # RBP, IPrec: own rules
    assert {f: n for n, f in family_names("trec_eval_cut").items() if f in OLD_CUT} == OLD_CUT
    assert OLD_SPECS <= set(forms())
    assert [str(m) for m in plan(["success", "P", "recall.7"]).measures] == [
        "Success@1",
        "Success@5",
        "Success@10",
        "P@5",
        "P@10",
        "P@15",
        "P@20",
        "P@30",
        "P@100",
        "P@200",
        "P@500",
        "P@1000",
        "R@7",
    ]
    for fam, name in OLD_PLAIN.items():
        if not REGISTRY[fam].cutoff_required and fam not in ("SetF",):
            assert trec_name(parse_measure(fam)) == name


def test_adapter_tables_are_the_old_ones_in_the_same_order():
    ranx = family_names("ranx", tuple(OLD_RANX))
    assert {n: f for n, f in ranx.items() if n != "rbp"} == OLD_RANX
    assert list(family_names("ranx", tuple(OLD_RANX)))[: len(OLD_RANX)] == list(OLD_RANX)
    assert list(family_names("mteb", tuple(OLD_MTEB)).items()) == list(OLD_MTEB.items())
    st = family_names("sentence_transformers")
    assert st == {
        "precision": "P",
        "recall": "R",
        "ndcg": "nDCG",
        "map": "AP",
        "mrr": "RR",
        "accuracy": "Success",
    }
    irm = family_names("ir_measures")
    assert all(n == f for n, f in irm.items()) and "GMAP" not in irm and "nDCG" in irm


def test_every_family_declares_a_known_aggregator():
    for cls in set(REGISTRY.values()):
        assert cls.aggregator in AGGREGATORS
        assert isinstance(cls.names, FamilyNames)
        assert (cls.aggregator == "sum") == cls.is_count, (
            cls.family
        )  # counts sum; nothing else does
    assert (
        not parse_measure("GMAP").additive
        and parse_measure("NumRet").additive
        and parse_measure("AP").additive
    )


def test_a_name_declared_twice_is_refused():
    class Twin(Measure):
        family = "TwinForTest"
        names = FamilyNames(ranx="ndcg")

    register(Twin)
    try:
        with pytest.raises(ValueError, match="ranx name 'ndcg'"):
            family_names("ranx")
    finally:
        del REGISTRY["TwinForTest"]


def test_an_unknown_aggregator_is_refused():
    class Odd(Measure):
        family = "OddForTest"
        aggregator = "median"  # type: ignore[assignment]

    with pytest.raises(ValueError, match="aggregator 'median'"):
        register(Odd)
    assert "OddForTest" not in REGISTRY
