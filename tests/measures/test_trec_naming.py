"""trec_eval's names owned by the families and its one table: every declared name round-trips
through the parser, the table is trec_eval 10's ``measures.c`` (print order and nicknames), a
family registered with a trec_eval name takes its place in the order with no other file touched,
and the counts trec_eval's options need are the plan's entries (computed, not printed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, parse_measure
from tierank.measures.base import FamilyNames, Measure, Param, register
from tierank.measures.plans import plan
from tierank.measures.trec_forms import GainMap, Plain
from tierank.measures.trec_naming import (
    NICKNAMES,
    TREC_ORDER,
    TREC_TABLE,
    family_forms,
    forms,
    trec_name,
    trec_order,
)
from tierank.report.formats.trec_eval import render_trec_eval

MEASURES_C = Path(__file__).resolve().parents[1] / "vendor" / "trec_eval-10.0" / "measures.c"


def _c_array(text: str, name: str) -> list[str]:
    body = re.search(rf"{re.escape(name)}\[\] = \{{(.*?)\}};", text, re.S)
    assert body is not None, name
    return [a or b for a, b in re.findall(r'"([^"]+)"|&te_meas_(\w+)', body.group(1))]


def test_the_table_is_trec_evals_measures_c():
    text = MEASURES_C.read_text()
    assert list(TREC_ORDER) == _c_array(text, "TREC_MEAS *te_trec_measures")
    for nick, array in (
        ("official", "off_names"),
        ("set", "set_names"),
        ("all_trec", "trec_names"),
    ):
        # the nickname's names, in the print order (trec_eval marks them; the order is the table's)
        assert set(NICKNAMES[nick]) == set(_c_array(text, f"static char *{array}")), nick
        assert list(NICKNAMES[nick]) == [n for n in TREC_ORDER if n in NICKNAMES[nick]]
    assert len(TREC_TABLE) == len(set(TREC_ORDER))


@pytest.mark.parametrize("name", sorted(forms()))
def test_every_declared_name_round_trips(name):
    """The lines of ``-m NAME`` (trec_eval's defaults) print under the names the reverse gives,
    in the table's order, and their measure strings parse back to the same measures."""
    family, form = forms()[name]
    rows = form.rows(family, None)
    assert rows
    for printed, text, key in rows:
        m = parse_measure(text)
        assert m.family == family and parse_measure(str(m)) == m
        assert trec_name(m) == printed
        assert trec_order(m) == (TREC_ORDER.index(name), *key)
    assert [e.name for e in plan([name]).printed] == [r[0] for r in rows]


def test_a_form_declares_the_familys_trec_eval_name():
    for cls in dict.fromkeys(REGISTRY.values()):
        form = cls.names.trec_eval_form
        if form is not None:
            assert form.name == cls.names.trec_eval, cls.family
        assert all(f.name in TREC_ORDER for f in family_forms(cls)), cls.family


class _DcgForTest(Measure):
    """trec_eval's dcg (not implemented by tierank): a family declared in a test."""

    family = "DcgForTest"
    names = FamilyNames(trec_eval="dcg", trec_eval_form=GainMap("dcg"), ir_measures=None)
    description = "test family"
    schema = (Param("gains", dict, None, "trec_eval's gain map"),)
    cutoff_allowed = False

    def stats(self, prep):  # pragma: no cover - never evaluated here
        raise NotImplementedError


def test_a_family_registered_with_a_trec_name_takes_its_place_in_the_order():
    with pytest.raises(TierankInputError, match="'dcg' .* is not implemented"):
        plan(["dcg"])
    register(_DcgForTest)
    try:
        p = plan(["ndcg", "dcg.1=3", "G"])
        assert [e.name for e in p.printed] == ["G", "dcg_1=3", "ndcg"]  # measures.c's order
        assert str(p.entries[1].measure) == "DcgForTest(gains={1:3})"
        assert trec_name(parse_measure("DcgForTest")) == "dcg"
        # trec_eval's all_trec leaves dcg out (measures.c): so does the nickname
        assert "DcgForTest" not in {m.family for m in plan(["all_trec"]).measures}
    finally:
        del REGISTRY["DcgForTest"]
    with pytest.raises(TierankInputError):
        plan(["dcg"])


def test_a_nickname_takes_a_family_back_when_it_is_registered():
    cls = REGISTRY.pop("RBP_resid")
    try:
        gone = plan(["all_trec"])
        assert "rbp_resid" in gone.left_out
        assert all(e.measure.family != "RBP_resid" for e in gone.entries if e.measure)
    finally:
        register(cls)
    names = [e.name for e in plan(["all_trec"]).printed]
    assert names.index("rbp") + 1 == names.index("rbp_resid") < names.index("unj_5")


def test_a_name_declared_by_two_families_is_refused():
    class Twin(Measure):
        family = "MapTwinForTest"
        names = FamilyNames(trec_eval_form=Plain("map"), trec_eval="map")

    register(Twin)
    try:
        with pytest.raises(ValueError, match="trec_eval name 'map'"):
            forms()
    finally:
        del REGISTRY["MapTwinForTest"]


def test_the_counts_of_c_and_j_are_computed_not_printed():
    p = plan(["num_rel", "iprec_at_recall.0.5"]).with_trec_eval_counts(
        complete=True, rel=2, judged_only=True
    )
    hidden = [str(e.measure) for e in p.entries if not e.shown]
    assert hidden == ["NumRel(rel=1)", "NumRet", "NumRel(rel=2)"]
    assert [e.name for e in p.printed] == ["num_rel", "iprec_at_recall_0.50"]
    assert [str(m) for m in p.measures][-3:] == hidden
    # without -c, with -l 1, without interpolated precision: nothing added
    assert plan(["num_rel"]).with_trec_eval_counts(complete=True, rel=1).entries == (
        plan(["num_rel"]).entries
    )
    assert plan(["map"]).with_trec_eval_counts(judged_only=True, rel=2) == plan(["map"])


def test_the_c_summary_of_num_rel_reads_the_plans_count():
    """trec_eval -c -l2: num_rel's summary counts grade > 0 whatever -l says; the formatter reads
    it from the plan's entry, whatever the result's settings say."""
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 2, "d": 1, "e": 1}}
    run = {"q1": {"a": 0.5, "b": 0.4}, "q2": {"c": 0.3}}
    p = plan(["num_rel"]).with_trec_eval_counts(complete=True, rel=2)
    res = tierank.evaluate(qrels, run, p, rel=2, complete=True)
    assert render_trec_eval(res, plan=p, per_query=True).split("\n") == [
        "num_rel               \tq1\t1",
        "num_rel               \tq2\t1",
        "num_rel               \tall\t5",
        "",
    ]
    plain = plan(["num_rel"])
    assert render_trec_eval(res, plan=plain).endswith("\tall\t2\n")  # the plan decides
