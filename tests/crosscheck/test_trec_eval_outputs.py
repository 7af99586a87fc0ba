"""Conformance with trec_eval's own expected outputs (``tests/data/trec_eval``, see ``tests/realdata.py``).

The ``out.*`` files are the expected stdout of trec_eval's test suite.  The
commands that produce them (trec_eval's Makefile ``quicktest`` target and its
test table; confirmed here by ``num_q`` and the query sets)::

    out.test          trec_eval              qrels.test         results.test
    out.test.a        trec_eval -m all_trec  qrels.test         results.test
    out.test.aq       trec_eval -m all_trec -q qrels.test       results.test
    out.comment.test  trec_eval              qrels.comment.test results.comment.test

All use the default relevance level (``-l 1``) and no ``-c``.  ``-c`` would make no
difference to any of them: every qrels query (301-303; the 31 judged RAG 2024
topics) is in the run, so the evaluated query set is the same either way.
``out.test.aq`` holds the per-query rows (301, 302, 303) *and* the ``all`` rows.

With ``tie_break="trec_eval"`` tierank's tie-oblivious values must equal what
trec_eval printed, to the printed precision (``%.4f``), for every measure both
define.  trec_eval before v10 kept scores as C ``float``; casting these runs'
scores to float32 merges no scores and changes no value (checked below), so no
cast is needed for any measure or query here.
"""

from __future__ import annotations

import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tierank
from realdata import DATA

TE = DATA / "trec_eval"

TOL = 5e-5 + 1e-9  # half a unit of the 4th printed decimal, plus float noise

# out file -> (qrels, run, the trec_eval command line that produced it)
CASES = {
    "out.test": ("qrels.test", "results.test", "trec_eval qrels.test results.test"),
    "out.test.a": ("qrels.test", "results.test", "trec_eval -m all_trec qrels.test results.test"),
    "out.test.aq": (
        "qrels.test",
        "results.test",
        "trec_eval -m all_trec -q qrels.test results.test",
    ),
    "out.comment.test": (
        "qrels.comment.test",
        "results.comment.test",
        "trec_eval qrels.comment.test results.comment.test",
    ),
}

_SIMPLE = {"map": "AP", "Rprec": "Rprec", "recip_rank": "RR", "ndcg": "nDCG"}
_CUTOFF = {"map_cut_": "AP", "P_": "P", "recall_": "R", "ndcg_cut_": "nDCG", "success_": "Success"}


def tierank_name(te: str) -> str | None:
    """tierank (ir_measures) name of a trec_eval measure, or None if tierank has no counterpart."""
    if te in _SIMPLE:
        return _SIMPLE[te]
    for prefix, family in _CUTOFF.items():
        rest = te[len(prefix) :]
        if te.startswith(prefix) and re.fullmatch(r"\d+", rest):
            return f"{family}@{rest}"
    return None


def parse_output(path: Path) -> dict[str, dict[str, str]]:
    """trec_eval stdout (``measure<pad>\\tqid\\tvalue`` lines) -> ``{qid: {measure: value}}``."""
    out: dict[str, dict[str, str]] = {}
    with open(path) as fh:
        for line in fh:
            if not line.strip():
                continue
            name, qid, value = (x.strip() for x in line.rstrip("\n").split("\t"))
            out.setdefault(qid, {})[name] = value
    return out


@cache
def output(case: str) -> dict[str, dict[str, str]]:
    return parse_output(TE / case)


def comparable(case: str) -> list[str]:
    names = {m for rows in output(case).values() for m in rows}
    return sorted((m for m in names if tierank_name(m)), key=lambda m: (tierank_name(m), m))


@cache
def evaluated(case: str, complete: bool = False) -> tierank.EvalResult:
    qrels, run, _ = CASES[case]
    measures = [tierank_name(m) for m in comparable(case)] + [
        "Hits",
        "RBP(p=0.9)",
        "RBP(p=0.8)",
        "AP",
    ]
    return tierank.evaluate(
        TE / qrels, TE / run, measures, tie_break="trec_eval", complete=complete
    )


@cache
def _table(case: str) -> dict[str, dict[str, float]]:
    """``{measure: {qid or "all": oblivious}}`` of :func:`evaluated` (case)."""
    res = evaluated(case)
    out: dict[str, dict[str, float]] = {}
    pq = res.per_query()
    for q, m, v in zip(pq["query"], pq["measure"], pq["oblivious"]):
        out.setdefault(m, {})[q] = float(v)
    ag = res.aggregate()
    for m, v in zip(ag["measure"], ag["oblivious"]):
        out[m]["all"] = float(v)
    return out


def values(case: str, measure: str) -> dict[str, float]:
    """``{qid: oblivious}`` plus ``{"all": aggregate oblivious}`` for one measure."""
    return _table(case)[measure]


PAIRS = [(case, m) for case in CASES for m in comparable(case)]


def test_every_case_has_comparable_measures():
    # guards the mapping: a renamed measure must not silently drop out of the comparison
    counts = {case: len(comparable(case)) for case in CASES}
    # map, Rprec, recip_rank, P_k x9 (default set); all_trec adds ndcg, recall_k, ndcg_cut_k, map_cut_k x9, success_k x3
    assert counts == {
        "out.test": 12,
        "out.test.a": 43,
        "out.test.aq": 43,
        "out.comment.test": 12,
    }, counts


@pytest.mark.parametrize(("case", "te_measure"), PAIRS, ids=[f"{c}:{m}" for c, m in PAIRS])
def test_oblivious_equals_trec_eval(case, te_measure):
    """Per query (``-q`` rows) and over all queries, at trec_eval's printed precision."""
    ours = values(case, tierank_name(te_measure))
    rows = {qid: float(v[te_measure]) for qid, v in output(case).items() if te_measure in v}
    assert rows, f"{te_measure} not printed in {case}"
    bad = [
        (qid, want, round(ours[qid], 6))
        for qid, want in rows.items()
        if abs(ours[qid] - want) > TOL
    ]
    assert not bad, (
        f"{case} {te_measure} -> {tierank_name(te_measure)}: (query, trec_eval, tierank) {bad}"
    )


@pytest.mark.parametrize("case", list(CASES))
def test_query_set_and_num_q(case):
    """``num_q`` equals tierank's evaluated queries, with and without ``complete`` (-c)."""
    out = output(case)
    num_q = int(out["all"]["num_q"])
    assert len(evaluated(case).qids) == num_q
    assert len(evaluated(case, complete=True).qids) == num_q
    per_query = sorted(q for q in out if q != "all")
    if per_query:  # the -q output lists exactly the evaluated queries
        assert per_query == evaluated(case).qids


@pytest.mark.parametrize("case", list(CASES))
def test_num_rel_ret_is_hits_over_the_whole_list(case):
    """trec_eval's ``num_rel_ret`` = Hits without cutoff; its ``all`` row is a sum, not a mean."""
    res = evaluated(case)
    hits = values(case, "Hits")
    for qid, rows in output(case).items():
        want = int(rows["num_rel_ret"])
        got = hits["all"] * len(res.qids) if qid == "all" else hits[qid]
        assert got == pytest.approx(want, abs=1e-9), (qid, want, got)


def test_rbp_is_binary_rbp_with_p_0_9():
    """trec_eval's ``rbp`` (m_rbp.c) defaults to p = 0.9, not 0.8.

    It normalises gains to [0, 1] only when some gain lies outside; qrels.test
    grades are 0/1, so its rbp is binary RBP(p=0.9).  RBP(p=0.8) is shown not to
    match, which pins the parameter.
    """
    out = output("out.test.aq")
    p9 = values("out.test.aq", "RBP(p=0.9)")
    p8 = values("out.test.aq", "RBP(p=0.8)")
    rows = {qid: float(v["rbp"]) for qid, v in out.items()}
    assert set(rows) == {"301", "302", "303", "all"}
    for qid, want in rows.items():
        assert abs(p9[qid] - want) <= TOL, (qid, want, p9[qid])
    assert any(abs(p8[qid] - want) > TOL for qid, want in rows.items())


@pytest.mark.parametrize("case", ["out.test", "out.comment.test"])
def test_gm_map_from_per_query_ap(case):
    """gm_map = geometric mean of per-query AP floored at 1e-5 (trec_eval's MIN_GEO_MEAN)."""
    ap = np.array([v for q, v in values(case, "AP").items() if q != "all"])
    got = math.exp(np.mean(np.log(np.maximum(ap, 1e-5))))
    assert abs(got - float(output(case)["all"]["gm_map"])) <= TOL


def _run_frame(path: Path, float32: bool) -> pd.DataFrame:
    df = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        usecols=[0, 2, 4],
        names=["qid", "docno", "score"],
        dtype={"qid": str, "docno": str, "score": np.float64},
    )
    if float32:
        df["score"] = df["score"].astype(np.float32).astype(np.float64)
    return df


@pytest.mark.parametrize("case", ["out.test", "out.comment.test"])
def test_float32_scores_change_nothing_here(case):
    """trec_eval < 10 stores scores as float32, which can merge distinct float64
    scores into ties.  For these runs (6-decimal scores in results.test; 16-digit
    scores in results.comment.test) it merges none: the tie structure and every
    oblivious value are identical, so the comparisons above need no cast.
    """
    qrels, run, _ = CASES[case]
    measures = ["AP", "nDCG", "P@10", "RR", "Rprec", "nDCG@10", "AP@100", "R@100", "Success@1"]
    r64 = tierank.evaluate(TE / qrels, _run_frame(TE / run, False), measures)
    r32 = tierank.evaluate(TE / qrels, _run_frame(TE / run, True), measures)
    assert r64.ties == r32.ties
    assert r64.ties["tied_docs"] > 0  # the runs do contain real ties
    np.testing.assert_array_equal(r64.per_query()["oblivious"], r32.per_query()["oblivious"])
    # and the frame path reads the padded, tab-separated file exactly as the file reader does
    np.testing.assert_array_equal(
        r64.per_query()["oblivious"],
        tierank.evaluate(TE / qrels, TE / run, measures).per_query()["oblivious"],
    )
