"""tierank.ties.TieSummary: the one vocabulary of tie counts (combine, mapping view, the views by name)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tierank
from tierank import to_run
from tierank.analysis.prevalence import analyze_run
from tierank.hps.table import tie_stats
from tierank.ties import TieSummary, layout

RUN = {
    "q1": {"a": 2.0, "b": 1.0, "c": 1.0},
    "q2": {"x": 0.5, "y": 0.5, "z": 0.5, "w": 0.1},
    "q3": {"u": 1.0},
}


def test_combine_of_disjoint_queries_is_the_summary_of_the_whole():
    run = to_run(RUN)
    whole = layout(run).summary
    parts = [layout(run, [q]).summary for q in ("q1", "q2", "q3")]
    assert TieSummary.combine(parts) == whole
    assert parts[0] + parts[1] + parts[2] == whole
    assert TieSummary.combine(p.to_dict() for p in parts) == whole  # mappings are accepted
    assert TieSummary.combine([]) == TieSummary() and TieSummary.combine([]).share == 0.0


def test_mapping_view_has_todays_keys():
    t = layout(to_run(RUN)).summary
    assert list(t) == [
        "docs",
        "queries",
        "queries_with_ties",
        "groups",
        "tied_docs",
        "largest",
        "share",
    ]
    assert (
        dict(t) == t.to_dict() and t == t.to_dict() and t["groups"] == 2 and t.get("nope") is None
    )
    with pytest.raises(KeyError):
        t["tie_groups"]
    assert hash(t) == hash(TieSummary.from_mapping(t.to_dict()))


def test_eval_result_holds_a_tie_summary():
    res = tierank.evaluate({"q1": {"a": 1}, "q2": {"x": 1}}, RUN, ["P@1"])
    assert isinstance(res.ties, TieSummary)
    assert json.loads(json.dumps(dict(res.ties))) == res.ties.to_dict()


def test_prevalence_and_table1_read_the_same_summary():
    run = to_run(RUN)
    t = layout(run).summary
    r = analyze_run(run, "demo")
    assert r.ties == t
    d = r.to_dict()
    assert list(d)[:7] == [
        "name",
        "queries",
        "docs",
        "queries_with_ties",
        "tie_groups",
        "docs_in_ties",
        "docs_tied_with_predecessor",
    ]
    assert (d["tie_groups"], d["docs_in_ties"], d["docs_tied_with_predecessor"]) == (2, 5, 3)
    assert tie_stats(run) == {
        "candidates": 8,
        "tied": 5,
        "tied_share": 5 / 8,
        "tie_groups": 2,
        "mean_group": 2.5,
        "max_group": 3,
    }
    assert np.isclose(t.share, 5 / 8)


def test_unknown_kinds_are_refused():
    from tierank import to_qrels
    from tierank.settings import EvalSettings
    from tierank.ties import prepare

    p = prepare(to_run(RUN), to_qrels({"q1": {"a": 1}, "q2": {"x": 1}}), EvalSettings())
    with pytest.raises(ValueError, match="unknown document value kind 'grades'"):
        p.doc_values("grades")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown arrangement 'best'"):
        p.arrangement("best", "rel")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown arrangement 'best'"):
        p.sorted_in_groups(p.gain, "best")  # type: ignore[arg-type]
    assert p.arrangement("optimistic", "rel").tolist() == [
        True,
        False,
        False,
        True,
        False,
        False,
        False,
    ]
