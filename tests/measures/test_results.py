"""EvalResult's records: the query id ``all`` is reserved for the aggregate (issue 11, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

import tierank
from tierank.measures import Stats, parse_measure
from tierank.results import AGGREGATE, EvalResult


def test_a_query_named_all_is_refused_not_merged_with_the_aggregate():
    """It used to evaluate, and ``to_dict()["all"]`` silently held one of the two."""
    with pytest.raises(tierank.TierankInputError, match="'all' is reserved"):
        tierank.evaluate(
            {"all": {"a": 1}, "q": {"b": 1}},
            {"all": {"a": 1.0}, "q": {"b": 0.5, "c": 0.5}},
            ["P@1"],
        )


def test_result_objects_refuse_the_reserved_id_whatever_built_them():
    m = parse_measure("P@1")
    one = np.array([1.0])
    stats = {m: Stats(one, one, one, one, np.zeros(1))}
    with pytest.raises(tierank.TierankInputError, match=f"query id '{AGGREGATE}' is reserved"):
        EvalResult(measures=[m], qids=[AGGREGATE], stats=stats, ties={})


def test_aggregate_records_are_the_only_ones_named_all():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0, "x": 1.0}, "q2": {"b": 2.0, "y": 1.0}}
    res = tierank.evaluate(qrels, run, ["P@1", "RR"])
    recs = res.records(per_query=True)
    assert [r["query"] for r in recs] == ["q1", "q2", "q1", "q2", AGGREGATE, AGGREGATE]
    d = res.to_dict()
    assert list(d) == [AGGREGATE, "q1", "q2"]
    assert d[AGGREGATE]["P@1"]["expected"] == 0.75 and d["q1"]["P@1"]["expected"] == 0.5
    assert d[AGGREGATE]["RR"]["std"] == pytest.approx(np.sqrt(1 / 16) / 2)
