"""trec_eval's measure names (``tierank.measures.names``): translation, nicknames, reverse names,
suggestions, errors.  The names, defaults and print order are trec_eval 10's (measures.c, m_*.c,
meas_init.c); they are also checked against trec_eval's own outputs
(``out.test``: the official set, ``out.test.a``: all_trec).  Families still missing from the registry
are skipped with their name (they arrive with the measure modules)."""

from __future__ import annotations

import warnings

import pytest

import tierank
from realdata import DATA
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, parse_measure
from tierank.measures.names import (
    NICKNAMES,
    TREC_ORDER,
    is_trec,
    plan,
    resolve,
    suggest,
    trec_name,
    trec_order,
)

OUT = DATA / "trec_eval"

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
IPREC = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")

# trec_eval text -> [(printed name, tierank measure string)], hand-written from trec_eval's sources
CASES = {
    "map": [("map", "AP")],
    "P": [(f"P_{k}", f"P@{k}") for k in CUTS],
    "P.5,10,20": [("P_5", "P@5"), ("P_10", "P@10"), ("P_20", "P@20")],
    "P.20,5": [("P_5", "P@5"), ("P_20", "P@20")],
    "recall.100": [("recall_100", "R@100")],
    "recall": [(f"recall_{k}", f"R@{k}") for k in CUTS],
    "ndcg": [("ndcg", "nDCG")],
    "ndcg_cut.10": [("ndcg_cut_10", "nDCG@10")],
    "map_cut.100": [("map_cut_100", "AP@100")],
    "recip_rank": [("recip_rank", "RR")],
    "Rprec": [("Rprec", "Rprec")],
    "success": [
        ("success_1", "Success@1"),
        ("success_5", "Success@5"),
        ("success_10", "Success@10"),
    ],
    "success.1,5": [("success_1", "Success@1"), ("success_5", "Success@5")],
    "rbp": [("rbp", "RBP(p=0.9,gain='trec_eval')")],
    "rbp.p=0.8": [("rbp_p=0.8", "RBP(p=0.8,gain='trec_eval')")],
    "bpref": [("bpref", "Bpref")],
    "gm_map": [("gm_map", "GMAP")],
    "iprec_at_recall": [(f"iprec_at_recall_{x}", f"IPrec@{float(x)!r}") for x in IPREC],
    "iprec_at_recall.0.5,0.25": [
        ("iprec_at_recall_0.25", "IPrec@0.25"),
        ("iprec_at_recall_0.50", "IPrec@0.5"),
    ],
    "11pt_avg": [("11pt_avg", "IPrecAvg")],
    "set_P": [("set_P", "SetP")],
    "set_recall": [("set_recall", "SetR")],
    "set_map": [("set_map", "SetAP")],
    "set_F": [("set_F", "SetF")],
    "set_F.0.5": [("set_F_0.5", "SetF(beta=0.5)")],
    "num_ret": [("num_ret", "NumRet")],
    "num_rel": [("num_rel", "NumRel")],
    "num_rel_ret": [("num_rel_ret", "NumRelRet")],
    "num_nonrel_judged_ret": [("num_nonrel_judged_ret", "NumNonRelJudgedRet")],
    "ndcg.1=3.5,2=9": [("ndcg_1=3.5,2=9", "nDCG(gains={1:3.5,2:9})")],
}


def _need(text: str):
    """Skip when the tierank measure ``text`` cannot be parsed yet (its family not registered)."""
    try:
        return parse_measure(text)
    except TierankInputError as e:
        pytest.skip(f"{text}: not available in this tierank yet ({e})")


@pytest.mark.parametrize("text", list(CASES))
def test_translation(text):
    expected = [(name, _need(m)) for name, m in CASES[text]]
    p = plan([text])
    assert [(e.name, e.measure) for e in p.entries] == expected
    assert resolve(text) == [m for _, m in expected]
    for name, m in expected:
        assert trec_name(m) == name  # the reverse: the name trec_eval prints


def test_num_q_prints_without_a_family():
    (e,) = plan(["num_q"]).entries
    assert e.name == "num_q"
    assert e.measure is None or e.measure.family == "NumQ"


def _available_names(nick: str) -> list[str]:
    return [e.name for e in plan([nick]).printed]


def test_official_is_trec_evals_default_set():
    p = plan(["official"])
    assert p.runid
    left = set(p.left_out)
    # every official measure is printed or declared left out, never silently dropped
    assert {n for n in NICKNAMES["official"] if n != "runid"} <= {
        trec_order_base(e.name) for e in p.entries
    } | left
    names = _available_names("official")
    full = (
        [
            "num_q",
            "num_ret",
            "num_rel",
            "num_rel_ret",
            "map",
            "gm_map",
            "Rprec",
            "bpref",
            "recip_rank",
        ]
        + [f"iprec_at_recall_{x}" for x in IPREC]
        + [f"P_{k}" for k in CUTS]
    )
    assert names == [n for n in full if trec_order_base(n) not in left]


def trec_order_base(printed: str) -> str:
    for b in sorted(TREC_ORDER, key=len, reverse=True):
        if printed == b or printed.startswith(b + "_"):
            return b
    return printed


@pytest.mark.parametrize("nick, out", [("official", "out.test"), ("all_trec", "out.test.a")])
def test_nickname_order_matches_trec_eval_output(nick, out):
    """The printed names, in order, are trec_eval's own (its expected outputs), less the left-out."""
    theirs = [
        line.split("\t")[0].rstrip()
        for line in (OUT / out).read_text().splitlines()
        if line.strip()
    ]
    p = plan([nick])
    left = set(p.left_out)
    # relstring is printed per query only: not in these summary outputs
    ours = ["runid"] + [e.name for e in p.printed if not getattr(e.measure, "string_valued", False)]
    assert ours == [n for n in theirs if trec_order_base(n) not in left]
    # what is left out is named in the note
    if left:
        assert any(all(x in n for x in left) for n in p.notes)


def test_all_trec_leaves_nothing_out():
    p = plan(["all_trec"])
    assert not p.left_out  # every measure of all_trec is implemented (the stderr note is gone)
    assert {"infAP", "utility", "relstring", "unj", "G"} <= {
        e.name.split("_")[0] for e in p.entries
    } | {e.name for e in p.entries}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["all_trec"])


def test_first_parameters_win_like_trec_eval():
    p = plan(["P.5", "P.10"])
    assert [e.name for e in p.entries] == ["P_5"]
    assert any("P.10" in n and "first" in n for n in p.notes)
    assert [e.name for e in plan(["P", "P.10"]).entries] == ["P_10"]  # parameters beat the defaults


def test_mixed_names_order_and_dedup():
    p = plan(["nDCG@10", "P.10,5", "ndcg_cut.10", "map", "RR@10"])
    assert [str(m) for m in p.measures] == ["nDCG@10", "P@5", "P@10", "AP", "RR@10"]
    assert [e.name for e in p.printed] == ["map", "P_5", "P_10", "ndcg_cut_10", "RR@10"]


def test_trec_order_and_reverse_names():
    assert (
        trec_order(parse_measure("P@5"))
        < trec_order(parse_measure("P@10"))
        < trec_order(parse_measure("nDCG"))
    )
    assert trec_name(parse_measure("RBP(p=0.8,gain='trec_eval')")) == "rbp_p=0.8"
    for text in (
        "F1@5",
        "Hits@3",
        "Judged@10",
        "RR@10",
        "R",
        "P(rel=2)@5",
        "AP(rel=2)",
        "RBP(p=0.9,rel=2)",
        "RBP(p=0.8)",
    ):  # binary RBP is not trec_eval's rbp on graded qrels (issue 22)
        assert trec_name(parse_measure(text)) is None, text


@pytest.mark.parametrize(
    "wrong, hint",
    [
        ("ndcg@10", "nDCG@10"),
        ("MRR@10", "RR@10"),
        ("mAP", "AP"),
        ("mAP", "map"),
        ("NDCG@10", "nDCG@10"),
        ("recall@100", "R@100"),
        ("P_10", "P.10"),
        ("P_10", "P@10"),
        ("ndcg_cut_10", "ndcg_cut.10"),
        ("offical", "official"),
        ("Precision@5", "P@5"),
        ("MRR", "RR"),
        ("all_treC", "all_trec"),
    ],
)
def test_did_you_mean(wrong, hint):
    assert hint in suggest(wrong)
    with pytest.raises(TierankInputError, match="did you mean") as e:
        resolve([wrong])
    assert repr(hint) in str(e.value)


def test_all_problems_reported_together():
    with pytest.raises(TierankInputError) as e:
        resolve(
            [
                "P.0",
                "P@0",
                "ndcg@10",
                "yaap",
                "map_cut.5,5",
                "recall.x",
                "success.",
                "nope_at_all_xyz",
            ]
        )
    text = "\n".join(map(str, e.value.problems))
    assert len(e.value.problems) == 8, text
    for part in (
        "positive",
        "cutoff must be a positive integer",
        "did you mean 'nDCG@10'",
        "yaap",
        "not implemented",
        "duplicate",
        "'x'",
        "empty parameter",
        "unknown measure 'nope_at_all_xyz'",
    ):
        assert part in text


def test_is_trec():
    assert [
        is_trec(t) for t in ("P.10", "P@10", "official", "ndcg_cut.5", "nDCG", "11pt_avg", "RR")
    ] == [True, False, True, True, False, True, False]


def test_evaluate_accepts_trec_names():
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "d4": 0.8, "d5": 0.5}}
    a = tierank.evaluate(qrels, run, ["P.2", "map", "ndcg_cut.3", "recip_rank"])
    b = tierank.evaluate(qrels, run, ["P@2", "AP", "nDCG@3", "RR"])
    assert a.measures == b.measures
    assert a.aggregate().equals(b.aggregate())
    assert a.aggregate().set_index("measure").loc["P@2", "expected"] == pytest.approx(5 / 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tierank.evaluate(qrels, run, ["P.2"])  # nothing left out: no warning


def test_registered_families_have_a_trec_name_where_trec_eval_has_one():
    """Every family the mapping names that is registered round-trips through trec_name."""
    for text, rows in CASES.items():
        for name, m in rows:
            try:
                meas = parse_measure(m)
            except TierankInputError:
                continue
            assert meas.family in REGISTRY
            assert trec_name(meas) == name, (text, m)
