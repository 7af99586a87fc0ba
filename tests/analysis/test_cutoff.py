"""tierank.analysis.cutoff: the numbers behind the cutoff figure, and one evaluation for table and curves."""

from __future__ import annotations

import numpy as np
import pytest

import tierank
from tierank.analysis import cutoff as cutoff_mod
from tierank.analysis.cutoff import (
    CutoffCurves,
    cutoff_curves,
    cutoff_measures,
    evaluate_with_curves,
    select,
)

QRELS = {"q1": {"a": 1, "b": 0, "c": 1, "d": 2}, "q2": {"x": 1, "y": 1}, "q3": {"m": 1}}
TIED = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.8, "e": 0.5},
    "q2": {"x": 0.3, "y": 0.7, "z": 0.7, "w": 0.7},
    "q3": {"m": 0.1, "n": 0.1, "o": 0.2},
}
EXACT = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5},
    "q2": {"x": 0.3, "y": 0.7, "z": 0.6, "w": 0.5},
    "q3": {"m": 0.1, "n": 0.05, "o": 0.2},
}
RUNS = {"exact": EXACT, "tied": TIED}
STATS = ("expected", "oblivious", "min", "max", "std")


def _counting(monkeypatch) -> list:
    calls = []
    real = cutoff_mod.evaluate

    def counting(*a, **kw):
        calls.append([str(m) for m in a[2]])
        return real(*a, **kw)

    monkeypatch.setattr(cutoff_mod, "evaluate", counting)
    return calls


def test_cutoff_curves_equal_evaluate_means_and_one_call_per_run(monkeypatch):
    calls = _counting(monkeypatch)
    curves = cutoff_curves(QRELS, RUNS, "nDCG", kmax=5)
    assert len(calls) == 2 and all(len(m) == 5 for m in calls)
    assert curves.ks.tolist() == [1, 2, 3, 4, 5]
    assert list(curves.series) == ["exact", "tied"]
    for name, run in RUNS.items():
        agg = tierank.evaluate(QRELS, run, [f"nDCG@{k}" for k in range(1, 6)]).aggregate()
        s = curves.series[name]
        for col in STATS:
            np.testing.assert_allclose(getattr(s, col), agg[col].to_numpy(), rtol=0, atol=1e-12)
    assert curves.series["exact"].ties["groups"] == 0
    assert curves.series["tied"].ties["groups"] == 3
    # the tied run really spreads: otherwise the figure tests would test nothing
    assert (curves.series["tied"].max - curves.series["tied"].min).max() > 0.1
    recs = curves.records()
    assert len(recs) == 10 and recs[0]["measure"] == "nDCG@1" and recs[0]["run"] == "exact"
    assert curves.settings == {"tie_break": "trec_eval", "qrels": "qrels"}


def test_worked_example_p_at_k():
    # one relevant document tied with one other at the top: P@1 is 1/2 expected, 0 oblivious
    # (trec_eval's tie-break puts "b" first: docno descending), P@2 is 1/2 whatever the order
    c = cutoff_curves({"q": {"a": 1}}, {"t": {"q": {"a": 1.0, "b": 1.0}}}, "P", kmax=2)
    s = c.series["t"]
    assert (s.expected.tolist(), s.oblivious.tolist(), s.min.tolist(), s.max.tolist()) == (
        [0.5, 0.5],
        [0.0, 0.5],
        [0.0, 0.5],
        [1.0, 0.5],
    )
    assert s.std.tolist() == [0.5, 0.0]
    assert [(r["k"], r["range"], r["bias"]) for r in c.records()] == [(1, 1.0, -0.5), (2, 0.0, 0.0)]


def test_evaluate_with_curves_is_one_evaluation_equal_to_two(monkeypatch):
    calls = _counting(monkeypatch)
    table = ["nDCG@3", "P@2", "RR", "nDCG@2"]  # nDCG@2 is also on the curve
    res, curves = evaluate_with_curves(QRELS, TIED, table, "nDCG", 4, name="tied")
    assert len(calls) == 1 and calls[0] == ["nDCG@3", "P@2", "RR", "nDCG@2", "nDCG@1", "nDCG@4"]
    monkeypatch.undo()
    alone = tierank.evaluate(QRELS, TIED, table)
    assert [str(m) for m in res.measures] == table
    assert (
        res.records() == alone.records()
        and res.ties == alone.ties
        and res.settings == alone.settings
    )
    ref = cutoff_curves(QRELS, {"tied": TIED}, "nDCG", 4)
    assert isinstance(curves, CutoffCurves) and curves.records() == ref.records()
    assert curves.settings == ref.settings and curves.series["tied"].ties == ref.series["tied"].ties


def test_evaluate_with_curves_without_family_and_default_name():
    res, curves = evaluate_with_curves(QRELS, TIED, ["RR"], "")
    assert curves is None and [str(m) for m in res.measures] == ["RR"]
    _, curves = evaluate_with_curves(QRELS, tierank.to_run(TIED), "RR", "P", 2)
    assert list(curves.series) == ["run"]  # the run's source


def test_evaluate_with_curves_input_errors():
    with pytest.raises(tierank.TierankInputError, match="kmax must be between 1 and 1000, got 0"):
        evaluate_with_curves(QRELS, TIED, ["RR"], "nDCG", 0)
    with pytest.raises(tierank.TierankInputError, match="no measure given"):
        evaluate_with_curves(QRELS, TIED, [], "nDCG", 3)
    with pytest.raises(tierank.TierankInputError) as e:
        evaluate_with_curves(QRELS, TIED, ["Nope@3"], "AlsoNope", 3)
    assert "Nope@3" in str(e.value) and "AlsoNope" not in str(e.value)  # the table's errors first
    with pytest.raises(tierank.TierankInputError, match="AlsoNope"):
        evaluate_with_curves(QRELS, TIED, ["RR"], "AlsoNope", 3)
    with pytest.raises(tierank.TierankInputError, match="kmax must be between 1 and 1000, got 0"):
        cutoff_curves(QRELS, RUNS, "nDCG", 0)
    with pytest.raises(tierank.TierankInputError, match="non-empty mapping"):
        cutoff_curves(QRELS, {}, "nDCG", 3)
    assert cutoff_measures("R", 2) == ["R@1", "R@2"]


def test_select_keeps_the_numbers_of_the_measures_alone():
    both = tierank.evaluate(QRELS, TIED, ["P@1", "RR", "nDCG@3"])
    part = select(both, ["nDCG@3", "P@1"])
    assert part.records() == tierank.evaluate(QRELS, TIED, ["nDCG@3", "P@1"]).records()


@pytest.mark.parametrize(
    "table", [["nDCG@10", "RR@10", "AP", "P@10", "R@100"], ["nDCG@10"], ["RR@3", "P@5"]]
)
@pytest.mark.parametrize("fmt", ["fp32", "bf16"])
def test_askubuntu_one_evaluation_is_bit_identical(real_data, table, fmt):
    # the curve measures reach deeper than a table of nDCG@10 alone: the numbers must not move by one bit
    from tierank.analysis.precision import requantize_run

    qrels = tierank.read_qrels(real_data / "askubuntu" / "test.qrels")
    run = requantize_run(tierank.read_run(real_data / "askubuntu" / "test.bm25.run"), fmt)
    res, curves = evaluate_with_curves(qrels, run, table, "nDCG", 20, name="r")
    assert res.records() == tierank.evaluate(qrels, run, table).records()
    ref = cutoff_curves(qrels, {"r": run}, "nDCG", 20).series["r"]
    for col in STATS:
        np.testing.assert_array_equal(getattr(curves.series["r"], col), getattr(ref, col))


@pytest.mark.parametrize("kmax", [1001, 10**8, 2.0, True])
def test_kmax_is_an_integer_of_at_most_1000(kmax):
    """kmax = 10**8 built 10**8 measure names (MemoryError); 99999999999 never finished."""
    with pytest.raises(
        tierank.TierankInputError, match=f"kmax must be between 1 and 1000, got {kmax!r}$"
    ):
        cutoff_curves(QRELS, RUNS, "nDCG", kmax)
    with pytest.raises(tierank.TierankInputError, match="kmax must be between 1 and 1000"):
        evaluate_with_curves(QRELS, TIED, ["RR"], "nDCG", kmax)


def test_kmax_of_1000_is_accepted():
    assert cutoff_curves(QRELS, RUNS, "P", 1000).ks[-1] == 1000
