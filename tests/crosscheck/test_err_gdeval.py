"""Tie-oblivious ERR@k and nDCG's ir_measures parameters against ir_measures' own providers.

* ``ERR@k`` and ``nDCG(dcg='exp-log2')@k`` against the ``gdeval`` provider (gdeval.pl, run with
  perl; it prints 5 decimals);
* ``nDCG(gains=...)`` and ``nDCG(judged_only=True)`` against the ``pytrec_eval`` provider.

Inputs: synthetic runs with distinct scores (numeric query ids and grades 0..4, as gdeval requires,
with unjudged documents and relevant documents never retrieved), and trec_eval's own test run
(``tests/realdata.py``).  gdeval and trec_eval break ties the same way (docno
descending), which ``tie_break="trec_eval"`` reproduces.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import tierank

ir_measures = pytest.importorskip("ir_measures")

pytestmark = pytest.mark.skipif(
    shutil.which("perl") is None, reason="perl is not installed (gdeval.pl needs it)"
)


def _synthetic(seed: int, nq: int = 12, ndocs: int = 40):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(nq):
        qid = str(101 + q)
        scores = rng.permutation(ndocs * 3)[:ndocs] / 7.0  # distinct: no ties
        run[qid] = {f"D{q}-{i}": float(s) for i, s in enumerate(scores)}
        judged = rng.random(ndocs) < 0.7
        qrels[qid] = {
            f"D{q}-{i}": int(rng.choice([0, 0, 1, 2, 3, 4])) for i in range(ndocs) if judged[i]
        }
        for j in range(int(rng.integers(0, 4))):  # relevant, never retrieved
            qrels[qid][f"X{q}-{j}"] = int(rng.integers(1, 5))
    return run, qrels


def _theirs(provider, measures, qrels, run):
    """One provider call per measure: ir_measures 0.4.3's pytrec_eval provider groups nDCG measures
    into invocations in a way that can apply one measure's judged_only to another of the same call."""
    out = {}
    for x in measures:
        for m in provider.iter_calc([ir_measures.parse_measure(x)], qrels, run):
            out[(str(m.measure), m.query_id)] = m.value
    return out


def _ours(measures, qrels, run):
    pq = tierank.evaluate(qrels, run, measures).per_query()
    return {(m, q): v for m, q, v in zip(pq["measure"], pq["query"], pq["oblivious"])}


def _compare(theirs, ours, measures, tol):
    seen = 0
    for (m, q), v in theirs.items():
        key = (str(tierank.measures.parse_measure(m)), q)
        assert key in ours, key
        assert abs(ours[key] - v) <= tol, (m, q, ours[key], v)
        seen += 1
    assert seen >= len(measures), "nothing compared"
    return seen


GDEVAL = ["ERR@5", "ERR@10", "ERR@20", "nDCG(dcg='exp-log2')@10"]
PYTREC = [
    "nDCG(gains={0:0,1:1,2:3,3:7,4:15})@10",
    "nDCG(gains={1:0,2:1})",
    "nDCG(judged_only=True)@10",
    "nDCG(judged_only=True)",
    "nDCG(gains={0:1,3:1},judged_only=True)@5",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_err_and_exp_ndcg_match_gdeval(seed):
    run, qrels = _synthetic(seed)
    theirs = _theirs(ir_measures.gdeval, GDEVAL, qrels, run)
    _compare(theirs, _ours(GDEVAL, qrels, run), GDEVAL, tol=5.01e-6)  # gdeval prints %.5f


@pytest.mark.parametrize("seed", [0, 1])
def test_ndcg_gains_and_judged_only_match_pytrec_eval(seed):
    pytest.importorskip("pytrec_eval")
    run, qrels = _synthetic(seed)
    theirs = _theirs(ir_measures.pytrec_eval, PYTREC, qrels, run)
    _compare(theirs, _ours(PYTREC, qrels, run), PYTREC, tol=1e-9)


def test_err_matches_gdeval_on_trec_eval_test_run(data_dir, read_run_dict, read_qrels_dict):
    run = read_run_dict(data_dir / "trec_eval" / "results.test")
    qrels = read_qrels_dict(data_dir / "trec_eval" / "qrels.test")
    ms = ["ERR@10", "ERR@100", "nDCG(dcg='exp-log2')@20"]
    theirs = _theirs(ir_measures.gdeval, ms, qrels, run)
    assert _compare(theirs, _ours(ms, qrels, run), ms, tol=5.01e-6) >= 3 * len(ms)
