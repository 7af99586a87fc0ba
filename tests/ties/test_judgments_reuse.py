"""An evaluator's judgments (`Evaluator.judgments`, `Judgments.of`) built once and joined with
every run it reads: the same numbers as a fresh evaluator's, and a copy of it with other qrels
(`Evaluator.judging`) joins its own."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tierank.evaluate import Evaluator
from tierank.io.convert import to_qrels
from tierank.ties.judgments import Judgments

QRELS = {
    "q1": {"a": 1, "b": 0, "c": 2},
    "q2": {"a": 0, "x": 1},
    "q3": {"y": 1},
}
RUNS = [
    {"q1": {"a": 0.5, "b": 0.5, "c": 0.1, "z": 0.9}, "q2": {"x": 0.2, "a": 0.2}},
    {"q2": {"a": 0.9, "y": 0.1}, "q3": {"y": 0.3, "a": 0.3}},
]
MEASURES = ["AP", "nDCG@2", "P@1", "RR"]


def _values(result):
    return {
        (str(m), q): (float(s.oblivious[i]), float(s.expected[i]), float(s.min[i]), float(s.max[i]))
        for m, s in result.stats.items()
        for i, q in enumerate(result.qids)
    }


def test_one_evaluator_many_runs_equals_fresh_ones():
    ev = Evaluator(QRELS, MEASURES)
    for run in RUNS:
        assert _values(ev.evaluate(run)) == _values(Evaluator(QRELS, MEASURES).evaluate(run))
    assert ev.judgments is ev.judgments  # built once


def test_judging_copy_joins_its_own_qrels():
    ev = Evaluator(QRELS, MEASURES)
    ev.judgments  # noqa: B018 - built for the whole qrels first
    only_q2 = ev.judging(pa.array(["q2"]))
    fresh = Evaluator({"q2": QRELS["q2"]}, MEASURES)
    assert _values(only_q2.evaluate(RUNS[1])) == _values(fresh.evaluate(RUNS[1]))
    assert only_q2.judgments.qids.to_pylist() == ["q2"]


def test_judgments_of_codes_queries_sorted():
    j = Judgments.of(to_qrels(QRELS))
    assert j.qids.to_pylist() == ["q1", "q2", "q3"]
    got = j.grades(np.array([0, 1, 2, 2, 0]), pa.array(["c", "x", "y", "a", "zz"]))
    assert np.array_equal(got, [2.0, 1.0, 1.0, np.nan, np.nan], equal_nan=True)


def test_judgments_ordered_by_grade_give_the_same_numbers():
    """`Judgments.ready` orders the judgments by query and grade once, so that the ideal rankings need
    no sort: the same floats, and the same ideal gains, as judgments read in file order."""
    qrels = {"q2": {"a": 0, "b": 2, "c": 1, "d": 2}, "q1": {"x": 1, "y": 3, "z": 0}, "q3": {"w": 1}}
    run = {"q1": {"x": 0.5, "y": 0.5, "v": 0.4}, "q2": {"a": 0.9, "c": 0.9, "d": 0.1, "b": 0.0}}
    measures = ["nDCG", "nDCG@2", "AP", "Rprec", "P@2"]
    plain, ordered = Evaluator(qrels, measures), Evaluator(qrels, measures)
    assert plain.judgments.by_grade is None
    ordered.judgments.ready()
    q, g = ordered.judgments.by_grade
    assert q.tolist() == [0, 0, 0, 1, 1, 1, 1, 2] and g.tolist() == [3, 1, 0, 2, 2, 1, 0, 1]
    assert _values(ordered.evaluate(run)) == _values(plain.evaluate(run))
    a, b = plain.prepared(run).ideal, ordered.prepared(run).ideal
    assert [x.tolist() for x in a] == [x.tolist() for x in b] == [[3, 1, 2, 2, 1], [0, 2, 5]]


def test_a_grade_of_minus_zero_gains_plus_zero():
    """A qrels grade of -0.0 is a gain of 0.0: the sums, the batched cutoffs' differences of running
    sums among them, give +0.0, never -0.0 (which trec_eval's layout would print as -0.0000)."""
    result = Evaluator({"q1": {"d1": -0.0, "d0": 3.0}}, ["nDCG", "nDCG@3", "nDCG@5"]).evaluate(
        {"q1": {"d1": 0.4}}
    )
    for m, s in result.stats.items():
        for k in ("oblivious", "expected", "min", "max"):
            v = float(getattr(s, k)[0])
            assert v == 0.0 and np.copysign(1.0, v) == 1.0, (str(m), k, v)
