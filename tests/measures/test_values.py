"""Measures as Python values (issue 25): ``from tierank.measures import nDCG, AP, P``, ``nDCG@10``,
``P@[5, 10]``, ``nDCG(dcg='exp-log2')@10``, round-tripping with the string form."""

from __future__ import annotations

import pytest

import tierank
import tierank.measures as M
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, parse_measure


def _examples(value):
    example = getattr(type(value), "example", None)
    if (
        example
    ):  # a family with a required parameter (SDCG's max_rel): its example, set through the value
        m = parse_measure(example)
        return [
            value(**dict(m.params)) @ m.cutoff if m.cutoff is not None else value(**dict(m.params))
        ]
    if value.cutoff_param is not None:
        return [value @ 0.5] + ([] if value.cutoff_required else [value])
    if value.cutoff_required:
        return [value @ 3]
    return [value, value @ 7] if value.cutoff_allowed else [value]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_name_is_a_value_that_round_trips(name):
    value = getattr(M, name)
    assert type(value) is REGISTRY[name]
    assert name in dir(M)
    for m in _examples(value):
        assert parse_measure(str(m)) == m
        assert str(parse_measure(str(m))) == str(m)


def test_values_as_ir_measures_writes_them():
    from tierank.measures import AP, P, nDCG

    assert str(nDCG @ 10) == "nDCG@10" and nDCG @ 10 == parse_measure("nDCG@10")
    assert str(AP) == "AP"
    assert P @ [5, 10] == [parse_measure("P@5"), parse_measure("P@10")]
    assert nDCG(dcg="exp-log2") @ 10 == parse_measure("nDCG(dcg='exp-log2')@10")
    assert M.RBP(p=0.9) == parse_measure("RBP(p=0.9)")
    assert M.nDCG(gains={0: 0, 1: 1, 2: 3}) == parse_measure("nDCG(gains={0:0,1:1,2:3})")
    assert M.IPrec @ 0.5 == parse_measure("IPrec@0.5")
    assert nDCG @ 10 is not nDCG @ 10 and len({nDCG @ 10, parse_measure("nDCG@10")}) == 1


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: M.P @ 0, "cutoff must be a positive integer"),
        (lambda: M.P @ 2.5, "cutoff must be a positive integer"),
        (lambda: M.P @ True, "cutoff must be a positive integer"),
        (lambda: M.P @ (2**60), "cutoff must be at most"),
        (lambda: M.RBP(p=1.0), "p must lie in (0, 1)"),
        (lambda: M.P(rel="x"), "is not an int"),
        (lambda: M.nDCG(dcg="cubic"), "dcg must be one of"),
        (lambda: M.nDCG(nope=1), "unknown parameter 'nope'"),
        (lambda: M.IPrec @ 1.5, "must lie in"),
    ],
)
def test_bad_values_say_why(make, message):
    with pytest.raises(TierankInputError) as e:
        make()
    assert message in str(e.value)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        M.NoSuchMeasure  # noqa: B018


def test_evaluate_takes_values_and_flattens_lists():
    from tierank.measures import AP, P, nDCG

    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "d4": 0.8, "d5": 0.5}}
    by_value = tierank.evaluate(qrels, run, [nDCG @ 10, AP, P @ [5, 10]]).aggregate()
    by_text = tierank.evaluate(qrels, run, ["nDCG@10", "AP", "P@5", "P@10"]).aggregate()
    assert by_value.equals(by_text)
    assert list(by_value["measure"]) == ["nDCG@10", "AP", "P@5", "P@10"]
    one = tierank.evaluate(qrels, run, nDCG @ 10).aggregate()
    assert one.equals(by_text.iloc[:1])


def test_evaluate_refuses_a_family_without_its_required_cutoff():
    with pytest.raises(TierankInputError, match=r"P needs a cutoff, e.g. P@10"):
        tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [M.P, M.AP])


def test_family_metadata_is_data_with_defaults():
    from tierank.measures.base import FamilyNames, Measure, Stats

    class Bare(Measure):  # a family that declares none of the optional metadata
        family = "BareForTest"
        description = "a test family"

        def stats(self, prep):  # pragma: no cover - never evaluated here
            raise NotImplementedError

    info = Bare.about()
    assert (info.pretty, info.definition, info.citation, info.names) == (
        "BareForTest",
        "a test family",
        "",
        FamilyNames(),
    )
    assert info.ir_measures == "BareForTest" and info.trec_eval == []
    assert Stats  # the contract's other names stay importable
    for name, cls in REGISTRY.items():
        about = cls.about()
        assert about.pretty and about.definition, name
    ap = REGISTRY["AP"].about()
    assert ap.trec_eval == ["map", "map_cut"] and "Harman" in ap.citation


def test_parse_measures_opens_lists_and_refuses_missing_cutoffs():
    from tierank.measures import parse_measures

    assert parse_measures([M.nDCG @ 10, M.P @ [5, 10], "RR"]) == [
        M.nDCG @ 10,
        M.P @ 5,
        M.P @ 10,
        M.RR,
    ]
    with pytest.raises(TierankInputError) as e:
        parse_measures([M.P, "P@0"])
    assert [str(p) for p in e.value.problems][:1] == ["measure 'P': P needs a cutoff, e.g. P@10"]
    assert len(e.value.problems) == 2
