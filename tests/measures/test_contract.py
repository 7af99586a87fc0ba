"""The measure contract: parameter schemas with ranges, the registry's duplicate guard, the hooks'
defaults, and a new family added as one class plus one registration."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tierank
from helpers import invoke
from tierank.measures import (
    MAX_CUTOFF,
    REGISTRY,
    Measure,
    Param,
    parse_measure,
    parse_measures,
    register,
)
from tierank.measures.linear import Linear


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "P@99999999999999999999",
            f"measure 'P@99999999999999999999': cutoff must be at most {MAX_CUTOFF}",
        ),
        (f"nDCG@{MAX_CUTOFF + 1}", f"cutoff must be at most {MAX_CUTOFF}"),
        ("P@-3", "cutoff must be a positive integer, got '-3'"),
        ("P@0", "cutoff must be a positive integer, got '0'"),
        ("P@2.5", "cutoff must be a positive integer, got '2.5'"),
        ("R@1e3", "cutoff must be a positive integer, got '1e3'"),
        ("RBP(p=0)", "p must lie in (0, 1), got 0.0"),
        ("RBP(p=1)", "p must lie in (0, 1), got 1.0"),
        ("RBP(p=-0.5)", "p must lie in (0, 1), got -0.5"),
        ("RBP(p=nan)", "p must lie in (0, 1), got nan"),
        ("RBP(p=1e400)", "p must lie in (0, 1), got inf"),
        ("P(rel=1.5)@3", "parameter rel='1.5' is not an int"),
        ("RBP(p=high)", "parameter p='high' is not a float"),
        (
            "RBP(p=0.5,p=0.6)",
            "measure 'RBP(p=0.5,p=0.6)': parameter p is given twice",
        ),  # kept the last one
        ("RBP(p=0.5, rel=2, p=0.5)", "parameter p is given twice"),
    ],
)
def test_out_of_range_measures_are_input_errors(text, message):
    with pytest.raises(tierank.TierankInputError) as err:
        tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, [text])
    assert message in str(err.value)


def test_huge_cutoff_on_the_command_line_is_one_located_line(tmp_path):
    """It used to end in a TypeError traceback from linear.py."""
    (tmp_path / "qrels").write_text("q 0 a 1\n")
    (tmp_path / "run").write_text("q Q0 a 1 1.0 t\n")
    p = invoke(
        "eval", tmp_path / "qrels", tmp_path / "run", "-m", "P@99999999999999999999", check=False
    )
    assert p.returncode == 2
    assert p.stderr == (
        f"tierank: error: measure 'P@99999999999999999999': cutoff must be at most {MAX_CUTOFF}\n"
    )


def test_largest_cutoff_is_accepted():
    res = tierank.evaluate(
        {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, [f"R@{MAX_CUTOFF}", f"RR@{MAX_CUTOFF}"]
    )
    assert res.aggregate()["expected"].tolist() == [1.0, 0.75]


def test_long_measure_strings_are_cut_in_messages():
    with pytest.raises(tierank.TierankInputError) as err:
        parse_measure("P@" + "9" * 100_000)
    assert len(str(err.value)) < 300


def test_param_schema_checks_and_describes_its_range():
    p = Param("p", float, 0.8, "persistence", low=0.0, high=1.0, open="both")
    assert (
        p.range_text() == "(0, 1)"
        and p.check(0.5) is None
        and p.check(1.0) == "p must lie in (0, 1), got 1.0"
    )
    closed = Param("x", int, 1, "x", low=1, high=5)
    assert (
        closed.range_text() == "[1, 5]" and closed.check(5) is None and closed.check(6) is not None
    )
    pick = Param("mode", str, "a", "mode", choices=("a", "b"))
    assert pick.check("b") is None and pick.check("c") == "mode must be one of {a, b}, got 'c'"
    assert Param("rel", int, None, "level").check(None) is None


def test_registry_refuses_a_name_taken_by_another_family():
    class Impostor(Measure):
        family = "P"

    with pytest.raises(
        ValueError,
        match="measure name 'P' of .*Impostor is already registered by tierank.measures.linear.P",
    ):
        register(Impostor)
    assert REGISTRY["P"].__module__ == "tierank.measures.linear"
    with pytest.raises(ValueError, match="already registered"):
        register(type("Alias", (Measure,), {"family": "Fresh"}), aliases=("AP",))
    assert "Fresh" not in REGISTRY
    assert register(REGISTRY["AP"]) is REGISTRY["AP"]  # the same class again is harmless


def test_hook_defaults():
    m = parse_measure("P@5")
    assert m.residual(None) is None
    assert m.depth(lambda level: None) == 5
    assert parse_measure("AP").depth(lambda level: None) == math.inf
    assert parse_measure("RBP(p=0.5)@3").residual is not Measure.residual


def test_a_new_family_is_one_class_and_one_registration():
    """A graded-gain sum at k, written against the documented contract only."""

    class GainSum(Linear):
        """Sum of the graded gains in the top k."""

        family = "GainSumTest"
        description = "sum of graded gains in the top k (test family)"
        schema = (Param("scale", float, 1.0, "multiplier", low=0.0, open="low"),)
        kind = "gain"
        cutoff_required = True

        def weights(self, prep, rows):
            return np.full(len(rows), self.param("scale"))

    register(GainSum)
    try:
        assert "GainSumTest" in tierank.supported()
        assert str(parse_measure("GainSumTest(scale=2.0)@3")) == "GainSumTest(scale=2)@3"
        with pytest.raises(tierank.TierankInputError, match=r"scale must lie in \(0, inf\]"):
            parse_measure("GainSumTest(scale=0)@3")
        # a, b, c tied (gains 3, 1, 0 unjudged) over ranks 1-3: the top 2 hold {3,1}, {3,0} or {1,0}
        run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}}
        qrels = {"q": {"a": 3, "b": 1, "d": 2}}
        row = tierank.evaluate(qrels, run, ["GainSumTest(scale=2)@2"]).per_query().iloc[0]
        assert (row["min"], row["max"]) == (2.0, 8.0)
        assert row["expected"] == pytest.approx(2 * 8 / 3, abs=1e-14)
        assert row["std"] == pytest.approx(2 * math.sqrt(14) / 3, abs=1e-14)
    finally:
        del REGISTRY["GainSumTest"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("P(rel=1_0)@3", "parameter rel='1_0' is not an int"),
        ("P(rel=\uff12)@3", "is not an int"),  # a full-width digit
        ("RBP(p=0_5)", "parameter p='0_5' is not a float"),
        ("P(rel=" + "9" * 5000 + ")@3", "rel must lie in [-9007199254740992, 9007199254740992]"),
    ],
)
def test_parameters_follow_one_ascii_number_grammar(text, message):
    with pytest.raises(tierank.TierankInputError) as err:
        parse_measure(text)
    assert message in str(err.value)


def test_parse_measures_reports_every_bad_name_and_drops_duplicates():
    """The one measure-list parser (it existed twice, in evaluate and in analysis.cutoff)."""
    assert [str(m) for m in parse_measures(["P@5", "RR", "P@5", "P(rel=2)@5"])] == [
        "P@5",
        "RR",
        "P(rel=2)@5",
    ]
    assert parse_measures([]) == []
    with pytest.raises(tierank.TierankInputError) as e:
        parse_measures(["P@0", "RR", "Nope", "RBP(p=1)"])
    assert [p.reason.split(":")[0] for p in e.value.problems] == [
        "measure 'P@0'",
        "unknown measure 'Nope' in 'Nope'; supported",
        "measure 'RBP(p=1)'",
    ]


@pytest.mark.parametrize("rel, p1", [(2**53, 0.0), (-(2**53), 1.0)])
def test_evaluate_accepts_rel_up_to_the_measures_bound(rel, p1):
    assert tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], rel=rel).aggregate()[
        "expected"
    ].tolist() == [p1]


@pytest.mark.parametrize("rel", [2**53 + 1, -(2**53) - 1, 10**20])
def test_evaluate_bounds_rel_as_a_measure_bounds_its_rel(rel):
    """`evaluate(rel=10**20)` was accepted while `P(rel=10**20)` is refused."""
    bound = r"rel must lie in \[-9007199254740992, 9007199254740992\]"
    with pytest.raises(tierank.TierankInputError, match=rf"^{bound}, got {rel}$"):
        tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], rel=rel)
    with pytest.raises(tierank.TierankInputError, match=bound):
        parse_measure(f"P(rel={rel})@1")
