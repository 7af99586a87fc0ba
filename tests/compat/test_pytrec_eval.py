"""``tierank.compat.pytrec_eval`` on hand-computed cases (pytrec_eval itself:
``tests/crosscheck/test_pytrec_eval_compat.py``)."""

from __future__ import annotations

import itertools
import math

import pytest

import tierank.compat.pytrec_eval as pytrec_eval

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}, "q3": {"z": 1}}
RUN = {"q1": {"a": 0.5, "b": 0.5, "c": 0.1, "d": 0.0}, "q2": {"y": 1.0, "x": 0.5}, "q9": {"a": 1.0}}


def test_keys_and_values_hand_computed():
    """q1 ranks b, a (tie: docid descending), c, d: AP = (1/2 + 2/3) / 2; q2: y, x: AP 1/2.
    q3 (not in the run) and q9 (not judged) are absent, as in pytrec_eval."""
    got = pytrec_eval.RelevanceEvaluator(
        QRELS, {"map", "P.1,2", "num_q", "runid", "gm_map"}
    ).evaluate(RUN)
    assert got.keys() == {"q1", "q2"}
    assert got["q1"] == pytest.approx(
        {
            "runid": 0.0,
            "num_q": 1.0,
            "map": 7 / 12,
            "gm_map": math.log(7 / 12),
            "P_1": 0.0,
            "P_2": 0.5,
        }
    )
    assert got["q2"]["map"] == 0.5


def test_names_as_pytrec_eval_takes_them():
    a = pytrec_eval.RelevanceEvaluator(QRELS, {"P_5", "ndcg_cut.10", "recall"}).evaluate(RUN)
    assert set(a["q1"]) == {"P_5", "ndcg_cut_10"} | {
        f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    }


def test_relevance_level_and_judged_only():
    rl = pytrec_eval.RelevanceEvaluator(QRELS, {"P.3"}, relevance_level=2).evaluate(RUN)
    assert rl["q1"]["P_3"] == pytest.approx(1 / 3)  # only c (grade 2) counts
    j = pytrec_eval.RelevanceEvaluator(QRELS, {"num_ret"}, judged_docs_only_flag=True).evaluate(RUN)
    assert j["q1"]["num_ret"] == 3 and j["q2"]["num_ret"] == 1  # d and y dropped


def test_evaluate_ties_is_brute_force_over_orderings():
    """q1's tie {a, b} at ranks 1-2: the two orderings give P_1 0 or 1 and map 7/12 or 5/6."""
    t = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "P.1"}).evaluate_ties(RUN)
    values = {"P_1": [], "map": []}
    for first, second in itertools.permutations(["a", "b"]):
        rels = [QRELS["q1"][first] >= 1, QRELS["q1"][second] >= 1, True, False]
        values["P_1"].append(float(rels[0]))
        hits = [sum(rels[: i + 1]) / (i + 1) for i, r in enumerate(rels) if r]
        values["map"].append(sum(hits) / 2)
    for name, vs in values.items():
        s = t["q1"][name]
        mean = sum(vs) / len(vs)
        assert s["expected"] == pytest.approx(mean)
        assert (s["min"], s["max"]) == pytest.approx((min(vs), max(vs)))
        assert s["std"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in vs) / len(vs)))
    assert t["q2"]["map"] == {"oblivious": 0.5, "expected": 0.5, "min": 0.5, "max": 0.5, "std": 0.0}


def test_bad_measure_is_a_value_error():
    with pytest.raises(ValueError, match="nosuch"):
        pytrec_eval.RelevanceEvaluator(QRELS, {"nosuch"})


def test_whole_numbers_and_bools_read_as_pytrec_eval_reads_them():
    """pytrec_eval takes any number as a score, a bool as 0 or 1: the same values as the floats."""
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"map", "P.1"})
    floats = {"q1": {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}, "q2": {"y": 2.0, "x": 1.0}}
    mixed = {"q1": {"a": True, "b": 1, "c": False, "d": 0.0}, "q2": {"y": 2, "x": 1}}
    assert ev.evaluate(mixed) == ev.evaluate(floats)
    # b before a and d before c (docid descending): AP (1/2 + 2/4) / 2
    assert ev.evaluate(floats)["q1"] == {"map": 0.5, "P_1": 0.0}


def test_a_score_that_is_not_a_number_is_refused_with_its_place():
    ev = pytrec_eval.RelevanceEvaluator(QRELS, {"map"})
    with pytest.raises(ValueError, match="query 'q1', document 'b'.*not a number"):
        ev.evaluate({"q1": {"a": 1.0, "b": "high"}})
    with pytest.raises(ValueError, match="NaN or infinite"):
        ev.evaluate({"q1": {"a": 1.0, "b": float("nan")}})


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled):
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        got = pytrec_eval.RelevanceEvaluator(QRELS, {"P.2"}).evaluate(RUN)
        assert gc.isenabled() is enabled
        assert got == {"q1": {"P_2": 0.5}, "q2": {"P_2": 0.5}}
    finally:
        (gc.enable if was else gc.disable)()


def test_measure_names_any_characters_become_keys_as_they_are():
    """Each query's dict display holds the names as string literals, never as program text."""
    got = pytrec_eval.RelevanceEvaluator(QRELS, {"iprec_at_recall.0.10", "P.1"}).evaluate(RUN)
    assert set(got["q1"]) == {"iprec_at_recall_0.10", "P_1"}
    assert list(got) == ["q1", "q2"]
    from tierank.compat.pytrec_eval import _by_query

    names = ['__import__("os").getcwd()', "}", "'\"", "\\", "é\n", "P_5"]
    columns = [[float(i), -float(i)] for i in range(len(names))]
    want = {q: {n: c[j] for n, c in zip(names, columns)} for j, q in enumerate(["a", "b"])}
    assert _by_query(["a", "b"], names, columns) == want
    assert _by_query(["a", "b"], [1, "x"], [[1.0, 2.0], [3.0, 4.0]]) == {
        "a": {1: 1.0, "x": 3.0},
        "b": {1: 2.0, "x": 4.0},
    }
    assert _by_query(["a"], [], []) == {"a": {}}
