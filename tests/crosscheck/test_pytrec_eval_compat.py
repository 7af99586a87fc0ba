"""``tierank.compat.pytrec_eval`` against pytrec_eval-terrier itself: the same dict (queries, keys,
values to 1e-12) for every measure pytrec_eval offers, on trec_eval's test pairs, AskUbuntu and
rag24, with ``relevance_level`` 1 and 2 and ``judged_docs_only_flag``.

Two documented differences are checked to be exactly what they are, cell by cell:

* ``iprec_at_recall`` and ``11pt_avg``: pytrec_eval-terrier is built on trec_eval 9, which turns a
  recall level p into ``(long)(p R + 0.9)`` relevant documents; trec_eval 10 (and tierank, checked
  against the trec_eval 10 binary) uses ``lround(p R)``.  A value may differ only for a query whose
  counts differ under the two rules at one of the key's levels.
* ``runid``: pytrec_eval's per-query value is uninitialised memory; tierank gives 0.0.
"""

from __future__ import annotations

import math

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

import tierank.compat.pytrec_eval as ours  # noqa: E402

PAIRS = [
    ("trec_eval/qrels.test", "trec_eval/results.test"),
    ("trec_eval/qrels.rel_level", "trec_eval/results.test"),
    ("trec_eval/qrels.comment.test", "trec_eval/results.comment.test"),
    ("trec_eval/qrels.test", "trec_eval/results.trunc"),
    ("askubuntu/test.qrels", "askubuntu/test.bm25.run"),
    ("rag24/qrels.txt", "rag24/candidates.run"),
]
OPTIONS = [{}, {"relevance_level": 2}, {"judged_docs_only_flag": True}]


def _level_differs(level: float, nrel: int) -> bool:
    """Whether trec_eval 9's and 10's counts of relevant documents for recall ``level`` differ."""
    v9 = int(level * nrel + 0.9)
    v10 = math.floor(level * nrel + 0.5)
    return v9 != v10


def _may_differ(key: str, nrel: int) -> bool:
    if key.startswith("iprec_at_recall_"):
        return _level_differs(float(key.rsplit("_", 1)[1]), nrel)
    if key == "11pt_avg":
        return any(_level_differs(i / 10, nrel) for i in range(11))
    return False


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (a != a and b != b)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("qrels, run", PAIRS, ids=[r for _, r in PAIRS])
def test_same_dicts_as_pytrec_eval(read_qrels_dict, read_run_dict, qrels, run, options):
    q, r = read_qrels_dict(qrels), read_run_dict(run)
    level = options.get("relevance_level", 1)
    nrel = {qid: sum(g >= level for g in docs.values()) for qid, docs in q.items()}
    exempt = cells = 0
    for measure in sorted(pytrec_eval.supported_measures):
        theirs = pytrec_eval.RelevanceEvaluator(q, {measure}, **options).evaluate(r)
        got = ours.RelevanceEvaluator(q, {measure}, **options).evaluate(r)
        assert got.keys() == theirs.keys(), measure
        for qid, values in theirs.items():
            assert got[qid].keys() == values.keys(), (measure, qid)
            for key, value in values.items():
                cells += 1
                if key == "runid":
                    assert got[qid][key] == 0.0
                elif not _same(got[qid][key], value):
                    assert _may_differ(key, nrel[qid]), (measure, qid, key, got[qid][key], value)
                    exempt += 1
    # every value of every other measure is pytrec_eval's; the exempt cells are few
    assert exempt < cells / 20


def test_all_measures_at_once(read_qrels_dict, read_run_dict):
    """pytrec_eval's usual call: every measure in one evaluator, one dict per query."""
    q, r = read_qrels_dict("askubuntu/test.qrels"), read_run_dict("askubuntu/test.bm25.run")
    theirs = pytrec_eval.RelevanceEvaluator(q, pytrec_eval.supported_measures).evaluate(r)
    got = ours.RelevanceEvaluator(q, pytrec_eval.supported_measures).evaluate(r)
    assert got.keys() == theirs.keys()
    for qid in theirs:
        assert got[qid].keys() == theirs[qid].keys()
        for key in ("map", "ndcg", "ndcg_cut_10", "P_5", "recip_rank", "bpref", "gm_map", "num_q"):
            assert _same(got[qid][key], theirs[qid][key]), (qid, key)
    for m in ("map", "gm_map", "num_rel_ret"):
        assert _same(
            ours.compute_aggregated_measure(m, [v[m] for v in got.values()]),
            pytrec_eval.compute_aggregated_measure(m, [v[m] for v in theirs.values()]),
        )


@pytest.mark.parametrize("seed", [0, 1])
def test_shuffled_dicts_and_whole_number_scores(read_qrels_dict, read_run_dict, seed):
    """A run dict as a script builds it: each query's documents in no order, the queries in no order,
    the scores whole numbers (ints, a bool among them) that tie often; the same dicts as pytrec_eval,
    whose ties fall as trec_eval's (score, then docid, descending)."""
    import random

    rng = random.Random(seed)
    q, r = read_qrels_dict("askubuntu/test.qrels"), read_run_dict("askubuntu/test.bm25.run")
    shuffled = {}
    for qid in rng.sample(list(r), len(r)):
        docs = list(r[qid].items())
        rng.shuffle(docs)
        shuffled[qid] = {d: int(s // 5) for d, s in docs}
    first = next(iter(shuffled.values()))
    first[next(iter(first))] = True  # pytrec_eval reads a bool as its number, and so does tierank
    assert any(len(set(d.values())) < len(d) for d in shuffled.values())  # ties to break
    measures = {"map", "ndcg_cut.10", "P.5", "recall.100", "recip_rank", "bpref"}
    theirs = pytrec_eval.RelevanceEvaluator(q, measures).evaluate(shuffled)
    got = ours.RelevanceEvaluator(q, measures).evaluate(shuffled)
    assert got.keys() == theirs.keys()
    for qid, values in theirs.items():
        assert got[qid].keys() == values.keys()
        for key, value in values.items():
            assert _same(got[qid][key], value), (qid, key, got[qid][key], value)
