"""tierank.ties.layout: query codes, score order, tie groups and the tie summary.

Worked examples, then properties against a brute-force layout written with plain Python sorts, then the
layout's consumers (evaluation, prevalence, rank bands, score formats, the tie-structure figure) read it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank.analysis.banding import band_run
from tierank.analysis.precision import requantize_run
from tierank.analysis.prevalence import analyze_run
from tierank.io.model import Run
from tierank.settings import EvalSettings
from tierank.ties import RunLayout, TieSummary, layout, prepare

# ----------------------------------------------------------------------------------------- worked examples


def test_worked_example_unsorted_run():
    # file order: q2 rows first, then q1; q2 has a tie of three at 1.0 and one at 3.0
    run = tierank.to_run(
        {"q2": {"a": 1.0, "b": 3.0, "c": 1.0, "d": 1.0}, "q1": {"x": 0.5, "y": 0.7}}
    )
    lay = layout(run)
    assert isinstance(lay, RunLayout)
    assert lay.qids == ["q1", "q2"]
    assert lay.codes.tolist() == [1, 1, 1, 1, 0, 0]
    assert lay.rows is None
    assert lay.order.tolist() == [5, 4, 1, 0, 2, 3]  # q1: y, x; q2: b, then a, c, d in file order
    assert lay.sorted_codes.tolist() == [0, 0, 1, 1, 1, 1]
    assert lay.group_first.tolist() == [True, True, True, True, False, False]
    assert lay.group_starts.tolist() == [0, 1, 2, 3]
    assert lay.group_sizes.tolist() == [1, 1, 1, 3]
    assert lay.query_starts.tolist() == [0, 2, 6]
    assert lay.tied_sizes().tolist() == [3]
    assert lay.ranks().tolist() == [2, 1, 3, 4, 2, 1]
    assert lay.summary == TieSummary(
        docs=6, queries=2, queries_with_ties=1, groups=1, tied_docs=3, largest=3, share=0.5
    )
    assert lay.summary.to_dict() == {
        "docs": 6,
        "queries": 2,
        "queries_with_ties": 1,
        "groups": 1,
        "tied_docs": 3,
        "largest": 3,
        "share": 0.5,
    }
    assert (
        lay.summary.tied_with_predecessor,
        lay.summary.mean_group,
        lay.summary.largest_tie_group,
    ) == (2, 3.0, 3)
    # inside the tie, by a key (file order among equal keys): a=2, c=1, d=1 -> c, d, a
    assert lay.within_ties(np.array([2, 0, 1, 1, 0, 0])).tolist() == [5, 4, 1, 2, 3, 0]


def test_worked_example_query_subset_and_empty_query():
    run = tierank.to_run({"q2": {"a": 1.0, "b": 1.0}, "q1": {"x": 0.5}, "q3": {"z": 2.0}})
    lay = layout(run, ["q0", "q2", "q3"])  # q1 left out, q0 has no rows
    assert lay.rows.tolist() == [0, 1, 3]
    assert lay.codes.tolist() == [1, 1, 2]
    assert lay.score.tolist() == [1.0, 1.0, 2.0]
    assert lay.query_starts.tolist() == [0, 0, 2, 3]
    assert lay.summary.to_dict() == {
        "docs": 3,
        "queries": 3,
        "queries_with_ties": 1,
        "groups": 1,
        "tied_docs": 2,
        "largest": 2,
        "share": 2 / 3,
    }


def test_no_ties_and_no_rows():
    s = layout(tierank.to_run({"q": {"a": 2.0, "b": 1.0}})).summary
    assert (s.groups, s.tied_docs, s.largest, s.largest_tie_group, s.mean_group, s.share) == (
        0,
        0,
        1,
        0,
        0.0,
        0.0,
    )
    empty = layout(tierank.to_run({"q": {"a": 1.0}}), ["other"])
    assert empty.n == 0 and empty.order.tolist() == [] and empty.query_starts.tolist() == [0, 0]
    assert empty.summary == TieSummary(docs=0, queries=1)


# ----------------------------------------------------------------------------------------- brute force

QIDS = ["q1", "q10", "q2", "b", "A", "é", "q 3"]
SCORES = [-1.0, 0.0, -0.0, 0.5, 1.0, 2.5, 1e-300, -1e-300, 7.0]


@st.composite
def runs(draw):
    n = draw(st.integers(0, 30))
    qid = draw(st.lists(st.sampled_from(QIDS), min_size=n, max_size=n))
    score = draw(
        st.lists(
            st.sampled_from(SCORES) | st.floats(-4, 4, allow_nan=False), min_size=n, max_size=n
        )
    )
    arr = pa.array(qid, pa.string())
    if draw(st.booleans()):
        arr = arr.dictionary_encode()
    return Run(
        qid=arr,
        docid=pa.array([f"d{i}" for i in range(n)]),
        score=np.array(score, dtype=np.float64),
    )


def brute(qid: list, score: list, qids: list | None = None) -> dict:
    """The layout by definition: rows of the chosen queries sorted by (query, -score, row), groups of equal
    (query, score) among consecutive rows."""
    if qids is None:
        qids = sorted(set(qid))
    code = {q: i for i, q in enumerate(qids)}
    kept = [i for i in range(len(qid)) if qid[i] in code]
    pos = {r: k for k, r in enumerate(kept)}
    order = sorted(kept, key=lambda i: (code[qid[i]], -score[i], i))
    groups = [list(g) for _, g in itertools.groupby(order, key=lambda i: (qid[i], score[i]))]
    sizes = [len(g) for g in groups]
    tied = [s for s in sizes if s > 1]
    per_query = {q: [i for i in order if qid[i] == q] for q in qids}
    rank = {i: per_query[qid[i]].index(i) + 1 for i in kept}
    return {
        "qids": qids,
        "codes": [code[qid[i]] for i in kept],
        "order": [pos[i] for i in order],
        "sizes": sizes,
        "tied": tied,
        "ranks": [rank[i] for i in kept],
        "query_starts": list(itertools.accumulate([len(per_query[q]) for q in qids], initial=0)),
        "summary": {
            "docs": len(kept),
            "queries": len(qids),
            "queries_with_ties": len({qid[g[0]] for g in groups if len(g) > 1}),
            "groups": len(tied),
            "tied_docs": sum(tied),
            "largest": max(sizes, default=0),
            "share": sum(tied) / len(kept) if kept else 0.0,
        },
    }


@st.composite
def grouped_runs(draw):
    """Each query's rows together, the queries in any order, the scores in any order inside each
    (a dict of dicts as a script builds it): sorted block by block, or by one lexsort where the
    blocks' lengths differ too much for one matrix (a long block among short ones); or each block's
    scores already non-increasing (the layout then reads the groups in file order)."""
    queries = draw(st.lists(st.sampled_from(QIDS), unique=True, max_size=len(QIDS)))
    lengths = [draw(st.integers(1, 6)) for _ in queries]
    if queries and draw(st.booleans()):
        lengths[0] = draw(st.integers(1, 60))
    qid = [q for q, k in zip(queries, lengths) for _ in range(k)]
    score = draw(
        st.lists(st.sampled_from(SCORES), min_size=len(qid), max_size=len(qid))  # ties, -0.0
    )
    if draw(st.booleans()):  # each block's scores non-increasing (the run in the score order)
        at = 0
        for k in lengths:
            score[at : at + k] = sorted(score[at : at + k], reverse=True)
            at += k
    return Run(
        qid=pa.array(qid, pa.string()),
        docid=pa.array([f"d{i}" for i in range(len(qid))]),
        score=np.array(score, dtype=np.float64),
    )


@settings(max_examples=examples(300), deadline=None)
@given(runs() | grouped_runs())
def test_layout_equals_brute_force(run):
    qid, score = run.qid.to_pylist(), run.score.tolist()
    want = brute(qid, score)
    lay = layout(run)
    assert lay.qids == want["qids"]
    assert lay.codes.tolist() == want["codes"]
    assert lay.order.tolist() == want["order"]
    assert lay.sorted_codes.tolist() == sorted(want["codes"])
    assert lay.group_sizes.tolist() == want["sizes"]
    assert lay.group_starts.tolist() == list(itertools.accumulate(want["sizes"], initial=0))[:-1]
    assert lay.tied_sizes().tolist() == want["tied"]
    assert lay.query_starts.tolist() == want["query_starts"]
    assert lay.ranks().tolist() == want["ranks"]
    assert lay.summary.to_dict() == want["summary"]


def test_a_grouped_run_is_sorted_block_by_block(monkeypatch):
    """Blocks of equal lengths, scores in no order: one matrix sort, no lexsort (taken away)."""
    run = tierank.to_run(
        {"q2": {"a": 1.0, "b": 3.0, "c": 1.0}, "q1": {"x": 0.5, "y": 0.7, "z": 0.5}}
    )
    monkeypatch.setattr(np, "lexsort", None)
    order = layout(run).order.tolist()
    assert order == [4, 3, 5, 1, 0, 2]  # q1: y, x, z (tie: file order); q2: b, a, c


@pytest.mark.parametrize("last", [False, True], ids=["NaN first", "NaN last in the run"])
def test_nan_scores_of_a_grouped_run_go_where_a_lexsort_puts_them(last):
    """A Run built directly is not checked for NaN scores (the readers refuse them): block by block,
    they still sort as the one lexsort does (last in their query), the padding after them."""
    qid = ["qa", "qa", "qb", "qb", "qb"]
    score = np.array([np.nan, 1.0, 0.5, 0.1, 0.9])
    if last:
        qid, score = qid[::-1], score[::-1].copy()
    run = Run(qid=pa.array(qid), docid=pa.array([f"d{i}" for i in range(5)]), score=score)
    lay = layout(run)
    codes = np.array([lay.qids.index(q) for q in qid])
    assert lay.order.tolist() == np.lexsort((-score, codes)).tolist()


@settings(max_examples=examples(150), deadline=None)
@given(runs(), st.data())
def test_query_subset_equals_brute_force(run, data):
    qid, score = run.qid.to_pylist(), run.score.tolist()
    qids = data.draw(st.lists(st.sampled_from(QIDS + ["absent"]), unique=True))
    want = brute(qid, score, qids)
    lay = layout(run, qids)
    assert lay.qids == qids
    assert lay.codes.tolist() == want["codes"]
    kept = [i for i in range(len(qid)) if qid[i] in qids]
    assert (lay.rows is None and kept == list(range(len(qid)))) or lay.rows.tolist() == kept
    assert lay.score.tolist() == [score[i] for i in kept]
    assert lay.order.tolist() == want["order"]
    assert lay.group_sizes.tolist() == want["sizes"]
    assert lay.query_starts.tolist() == want["query_starts"]
    assert lay.summary.to_dict() == want["summary"]


@settings(max_examples=examples(150), deadline=None)
@given(runs(), st.data())
def test_within_ties_sorts_each_group_by_the_key_stably(run, data):
    assume(len(run) > 0)
    key = np.array(data.draw(st.lists(st.integers(0, 2), min_size=len(run), max_size=len(run))))
    qid, score = run.qid.to_pylist(), run.score.tolist()
    qids = sorted(set(qid))
    want = sorted(range(len(run)), key=lambda i: (qids.index(qid[i]), -score[i], key[i], i))
    lay = layout(run)
    assert lay.within_ties(key).tolist() == want
    assert lay.order.tolist() == brute(qid, score)["order"]  # the layout's own order is left alone


# ----------------------------------------------------------------------------------------- consumers


@settings(max_examples=examples(60), deadline=None)
@given(runs())
def test_consumers_read_the_layout(run):
    assume(len(run) > 0)
    lay = layout(run)
    t = lay.summary
    # prevalence
    r = analyze_run(run, "x")
    assert (
        r.queries,
        r.docs,
        r.queries_with_ties,
        r.tie_groups,
        r.docs_in_ties,
        r.docs_tied_with_predecessor,
    ) == (t.queries, t.docs, t.queries_with_ties, t.groups, t.tied_docs, t.tied_with_predecessor)
    # rank bands: the rank is the layout's rank
    assert band_run(run, 2.0).rank.tolist() == lay.ranks().astype(float).tolist()
    # the figure's group sizes
    from tierank.report.plots import tie_group_sizes

    assert sorted(tie_group_sizes(run).tolist()) == sorted(lay.tied_sizes().tolist())
    # int8 is per query: the codes of the layout
    q8 = requantize_run(run, "int8").score
    for c in range(lay.nq):
        rows = lay.codes == c
        s = run.score[rows]
        if s.max() > s.min():
            assert q8[rows][np.argmax(s)] == 127.0 and q8[rows][np.argmin(s)] == -128.0


def test_evaluation_reports_the_layout_of_the_evaluated_queries():
    run = tierank.to_run(
        {
            "q1": {"a": 1.0, "b": 1.0, "c": 0.5},
            "q2": {"x": 2.0, "y": 2.0, "z": 2.0},
            "q3": {"m": 1.0},
        }
    )
    qrels = tierank.to_qrels({"q1": {"a": 1}, "q3": {"m": 1}, "q4": {"k": 1}})
    res = tierank.evaluate(qrels, run, ["P@1"])
    assert res.ties == layout(run, ["q1", "q3"]).summary.to_dict()
    assert res.ties == {
        "docs": 4,
        "queries": 2,
        "queries_with_ties": 1,
        "groups": 1,
        "tied_docs": 2,
        "largest": 2,
        "share": 0.5,
    }
    complete = tierank.evaluate(qrels, run, ["P@1"], complete=True)
    assert complete.ties == layout(run, ["q1", "q3", "q4"]).summary.to_dict()
    assert complete.ties["queries"] == 3


def test_extremal_gain_arrangements_sort_groups_whose_gains_differ_by_little():
    # a tie of grades 1.0 and 1.0000001: the optimal order puts b first (nDCG@1 = 1 exactly). A variance
    # test with a 1e-12 threshold took the group for constant, left it in policy order, and reported
    # max = 0.9999999 < expected.
    qrels, run = {"q": {"a": 1.0, "b": 1.0000001}}, {"q": {"a": 1.0, "b": 1.0}}
    (row,) = tierank.evaluate(qrels, run, ["nDCG@1"], tie_break="docno").records(per_query=False)
    assert row["max"] == 1.0 and row["min"] == 1.0 / 1.0000001
    assert row["min"] <= row["expected"] <= row["max"]
    prep = prepare(tierank.to_run(run), tierank.to_qrels(qrels), EvalSettings())
    assert prep.arrangement("optimistic", "gain").tolist() == [1.0000001, 1.0]
    assert prep.arrangement("pessimistic", "gain").tolist() == [1.0, 1.0000001]
    assert prep.arrangement("optimistic", "gain") is prep.arrangement(
        "optimistic", "gain"
    )  # cached


@pytest.mark.parametrize("name", ["test.bm25.run", "dev.bm25.run"])
def test_askubuntu_layout_and_prevalence(real_data, name):
    run = tierank.read_run(real_data / "askubuntu" / name)
    lay = layout(run)
    qid, score = run.qid.to_pylist(), run.score.tolist()
    want = brute(qid, score)
    assert lay.order.tolist() == want["order"] and lay.summary.to_dict() == want["summary"]
    assert lay.summary.groups > 0  # the BM25 scores have real ties
    r = analyze_run(run)
    assert (r.tie_groups, r.docs_in_ties) == (lay.summary.groups, lay.summary.tied_docs)
