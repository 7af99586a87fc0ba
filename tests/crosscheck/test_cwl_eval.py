"""Tie-free C/W/L values against cwl_eval, called the way ir_measures' ``cwl_eval`` provider calls it.

cwl_eval (``pip install cwl-eval==1.0.12``, in the ``test`` extra; Azzopardi, Thomas & Moffat, SIGIR
2019) is what ir_measures 0.4 answers SDCG, INSQ, INST and NERR8-11 with: its provider
(``ir_measures/providers/cwl_eval.py``) clips negative grades to 0, clips to ``[min_rel, max_rel]``
and scales to [0, 1], reads the ranking to ``max_n=1000`` and calls ``cwl.ruler``'s
``NDCGCWLMetric`` (SDCG), ``INSQCWLMetric``, ``INSTCWLMetric`` and ``NERReq8``-``11CWLMetric``.
This tier asks that provider itself (``ir_measures.cwl_eval.iter_calc``) and compares every value
with the oblivious value of :mod:`tierank.measures.cwl`, at 1e-9:

* on hypothesis-generated tie-free runs (grades -1..4, unjudged documents retrieved, relevant
  documents never retrieved, queries without a relevant document, queries of the run without
  judgments, every parameter: ``min_rel``, ``max_rel``, cutoffs, ``T``, ``p``);
* on a run deeper than cwl_eval's 1000 ranks, with cutoffs beyond it (both read 1000 ranks);
* on the shipped TREC RAG 2024 pair (``trec_eval/qrels.comment.test``, grades 0-3, and
  ``results.comment.test``, 31 judged queries).  That run has ties: ir_measures orders tied documents its own
  way, tierank's oblivious order is trec_eval's (score descending, docid descending), so cwl_eval
  reads the run with its ties broken in tierank's order (scores replaced by ranks), and tierank's
  oblivious value of the run *with* ties must equal it.

No deliberate difference remains on tie-free runs: every value agrees.
"""

from __future__ import annotations

import logging
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank.measures import parse_measure

pytest.importorskip(
    "cwl",
    reason="cwl_eval is not importable (pip install cwl-eval==1.0.12, in the 'test' "
    "extra): the cwl_eval cross-check is skipped",
)
ir_measures = pytest.importorskip(
    "ir_measures",
    reason="ir_measures is not importable: the cwl_eval "
    "cross-check calls cwl_eval through its provider",
)

TOL = 1e-9


def measures(
    min_rel: int = 0, max_rel: int = 3, k: int = 10, T: float = 1.0, p: float = 0.8
) -> list[str]:
    """Every C/W/L family under one grade range (tierank's string forms, which ir_measures parses too)."""
    rng = f"min_rel={min_rel},max_rel={max_rel}" if min_rel else f"max_rel={max_rel}"
    return [
        f"SDCG({rng})@{k}",
        f"INSQ({rng})",
        f"INSQ(T={T},{rng})",
        f"INST({rng})",
        f"INST(T={T},{rng})",
        f"NERR8({rng})@{k}",
        f"NERR9({rng})@{k}",
        f"NERR10({rng})",
        f"NERR10(p={p},{rng})",
        f"NERR11({rng})",
        f"NERR11(T={T},{rng})",
    ]


def cwl_eval(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], names: list[str]
) -> dict[tuple[str, str], float]:
    """``{(query, tierank's measure string): value}`` from ir_measures' cwl_eval provider."""
    ms = {ir_measures.parse_measure(n): str(parse_measure(n)) for n in names}
    # the provider logs each grade outside [min_rel, max_rel] (expected here) as a warning
    logger = logging.getLogger("ir_measures.cwl_eval")
    level, logger.level = logger.level, logging.ERROR
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {
                (m.query_id, ms[m.measure]): m.value
                for m in ir_measures.cwl_eval.iter_calc(list(ms), qrels, run)
            }
    finally:
        logger.setLevel(level)


def compare(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    names: list[str],
    ordered: dict[str, dict[str, float]] | None = None,
) -> int:
    """Assert tierank's oblivious values on ``run`` equal cwl_eval's on ``ordered`` (default ``run``,
    which must then be tie-free); return how many values were compared."""
    if ordered is None:
        for docs in run.values():
            assert len(set(docs.values())) == len(docs), "the run must be tie-free"
        ordered = run
    theirs = cwl_eval(qrels, ordered, names)
    pq = (
        tierank.evaluate(qrels, run, names).per_query().set_index(["query", "measure"])["oblivious"]
    )
    # cwl_eval answers the judged queries the run retrieves for (ir_measures' base adds no others here)
    assert {q for q, _ in theirs} == {q for q in run if q in qrels and run[q]}
    for (q, name), ref in theirs.items():
        mine = float(pq.loc[(q, name)])
        assert abs(mine - ref) <= TOL, (q, name, mine, ref, qrels[q], ordered[q])
    return len(theirs)


@st.composite
def tie_free_case(draw):
    """Up to 3 judged queries (grades -1..4, some documents judged but not retrieved, some retrieved
    unjudged) and maybe one unjudged query; a tie-free run up to depth 40."""
    nq = draw(st.integers(1, 3))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(nq + draw(st.integers(0, 1))):
        qid = f"q{qi}"
        ndocs = draw(st.integers(1, 40))
        extra = draw(st.integers(0, 4))
        docs = [f"d{qi}-{i}" for i in range(ndocs + extra)]
        judged_share = draw(st.sampled_from([0.3, 0.7, 1.0]))
        grades = st.sampled_from([-1, 0, 0, 1, 2, 3, 4])
        if qi < nq:
            qrels[qid] = {d: draw(grades) for d in docs if draw(st.floats(0, 1)) < judged_share}
            qrels[qid].setdefault(docs[-1], 0)
        scores = draw(st.permutations(range(3 * ndocs)))[:ndocs]
        run[qid] = {docs[i]: scores[i] / 7.0 + 0.5 for i in range(ndocs)}
    return qrels, run


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tie_free_case(),
    st.sampled_from([0, 0, 1, 2]),
    st.sampled_from([1, 2, 3]),
    st.sampled_from([1, 2, 5, 10, 50]),
    st.sampled_from([0.5, 1.0, 2.0, 3.5]),
    st.sampled_from([0.1, 0.5, 0.95]),
)
def test_tie_free_cases(case, min_rel, span, k, T, p):
    qrels, run = case
    compare(qrels, run, measures(min_rel, min_rel + span, k, T, p))


def test_deeper_than_cwl_evals_1000_ranks():
    """Both read 1000 ranks: a relevant document at rank 1001+ counts for nothing, even at ``@1200``."""
    qrels = {"q": {f"d{i}": (2 if i % 97 == 0 or i > 1000 else i % 2) for i in range(1100)}}
    run = {"q": {f"d{i}": 2000.0 - i for i in range(1100)}}
    names = measures(0, 2, 1200, 2.0) + [
        "SDCG(max_rel=2)@1000",
        "NERR8(max_rel=2)@999",
        "NERR9(max_rel=2)@1001",
    ]
    assert compare(qrels, run, names) == len(names)


def trec_eval_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run with its ties broken as tierank's oblivious order does (score descending, docid
    descending), scores replaced by ranks."""
    out = {}
    for q, docs in run.items():
        ranking = sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])
        out[q] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    return out


def test_shipped_rag24_run(read_qrels_dict, read_run_dict):
    qrels = read_qrels_dict("trec_eval/qrels.comment.test")
    run = read_run_dict("trec_eval/results.comment.test")
    assert any(len(set(d.values())) < len(d) for d in run.values()), (
        "results.comment.test has no tie any more"
    )
    ordered = trec_eval_order(run)
    n = compare(
        qrels,
        run,
        measures(0, 3, 10, 2.0, 0.5) + ["SDCG(max_rel=3)@5", "NERR8(min_rel=1,max_rel=3)@20"],
        ordered,
    )
    assert n > 300  # the 31 judged topics, 13 measures
    compare(qrels, ordered, measures(1, 2, 5))
