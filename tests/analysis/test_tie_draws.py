"""The tie draws of ``compare(..., leaderboard=True, tie_samples=N)``: every ordering of every tie
group drawn with its probability under uniformly random tie breaking (against the exact distribution
from listing every ordering), independently across systems, by `tierank.measures.sampling`'s sampler."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from tests.helpers import examples
from tierank import evaluate
from tierank.analysis.comparison.align import checked_runs, common_queries, evaluator
from tierank.analysis.comparison.infer import tie_draws
from tierank.analysis.comparison.settings import CompareSettings
from tierank.measures.sampling import tie_orderings
from tierank.settings import EvalSettings


def _draws(runs, qrels, measure, samples, seed=0):
    s = EvalSettings()
    converted = checked_runs(runs)
    ev, _, common, _ = common_queries(evaluator(qrels, measure, s), converted)
    o = CompareSettings(leaderboard=True, tie_samples=samples, seed=seed)
    return tie_draws(ev, converted, list(converted), common, o), common


def _exact(run: dict, qrels: dict, measure: str) -> dict[str, Counter]:
    """Per query, the probability of each value of ``measure`` under a uniformly random ordering of
    every tie group: every ordering of the documents listed (groups by equal score), each one
    evaluated as a tie-free ranking (one query per ordering)."""
    tie_free, judged, owner = {}, {}, []
    for q, docs in run.items():
        groups = [
            [d for d in docs if docs[d] == score]
            for score in sorted(set(docs.values()), reverse=True)
        ]
        for k, perm in enumerate(itertools.product(*(itertools.permutations(g) for g in groups))):
            order = [d for g in perm for d in g]
            name = f"{q}|{k}"
            tie_free[name] = {d: float(len(order) - i) for i, d in enumerate(order)}
            judged[name] = qrels[q]
            owner.append((name, q))
    res = evaluate(judged, tie_free, measure)
    values = dict(zip(res.qids, res.stats[res.measures[0]].oblivious))
    out: dict[str, Counter] = {}
    for name, q in owner:
        out.setdefault(q, Counter())[round(float(values[name]), 12)] += 1
    return {
        q: Counter({v: c / sum(cnt.values()) for v, c in cnt.items()}) for q, cnt in out.items()
    }


def _agrees(draws: np.ndarray, exact: Counter) -> float:
    """The chi-square goodness-of-fit p of the drawn values against their exact distribution (1.0
    where only one value is possible and every draw has it; 0.0 for a value outside the support)."""
    got = Counter(round(float(v), 12) for v in draws)
    if set(got) - set(exact):
        return 0.0
    support = sorted(exact)
    if len(support) == 1:
        return 1.0
    observed = np.array([got.get(v, 0) for v in support], dtype=float)
    return float(chisquare(observed, len(draws) * np.array([exact[v] for v in support])).pvalue)


_SCORES = st.sampled_from([1.0, 0.5, 0.25])


@st.composite
def _cases(draw):
    runs, qrels = {"A": {}, "B": {}}, {}
    for q in range(draw(st.integers(1, 3))):
        n = draw(st.integers(2, 6))
        docs = [f"d{i}" for i in range(n)]
        qrels[f"q{q}"] = {d: draw(st.integers(0, 2)) for d in docs}
        qrels[f"q{q}"][docs[0]] = 1  # every query has a relevant document
        for name in runs:
            runs[name][f"q{q}"] = {d: draw(_SCORES) for d in docs}
    return runs, qrels, draw(st.sampled_from(["nDCG@3", "RR", "AP", "P@2"]))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_tie_draws_follow_the_exact_distribution_of_every_query(case):
    runs, qrels, measure = case
    S = 1200
    D, common = _draws(runs, qrels, measure, S, seed=5)
    assert D.shape == (S, len(common), 2)
    for j, name in enumerate(runs):
        exact = _exact(runs[name], qrels, measure)
        for i, q in enumerate(common):
            p = _agrees(D[:, i, j], exact[q])
            assert p > 1e-6, (name, q, Counter(D[:, i, j].round(12)), exact[q])


def test_every_ordering_of_a_graded_tie_equally_often():
    """Three tied documents of grades 0, 1, 2: nDCG@3 takes six values, one per ordering, each drawn
    with probability 1/6; a sampler that kept (or favoured) the policy's order fails."""
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    exact = _exact(run, qrels, "nDCG@3")["q"]
    assert len(exact) == 6 and all(abs(p - 1 / 6) < 1e-12 for p in exact.values())
    D, _ = _draws({"A": run, "B": run}, qrels, "nDCG@3", 6000, seed=1)
    for j in range(2):
        assert _agrees(D[:, 0, j], exact) > 1e-4
        counts = Counter(D[:, 0, j].round(12))
        assert min(counts.values()) > 850 and max(counts.values()) < 1150  # 1000 expected each
    # the two systems' orderings are independent draws (same run, same ties, other seeds)
    assert abs(np.corrcoef(D[:, 0, 0], D[:, 0, 1])[0, 1]) < 0.06
    # and the mean of the draws is the exact expectation within 5 standard errors
    e = evaluate(qrels, run, "nDCG@3")
    st_ = e.stats[e.measures[0]]
    assert abs(D[:, 0, 0].mean() - st_.expected[0]) < 5 * np.sqrt(st_.var[0] / 6000)


def test_orderings_do_not_depend_on_the_chunking():
    """Ordering ``k`` of a query is a function of the seed, the query and ``k``: drawn in one chunk
    or in several (a run larger than a chunk), the same rankings."""
    import tierank.measures.sampling as sampling
    from tierank.io.convert import to_qrels, to_run
    from tierank.settings import EvalSettings
    from tierank.ties import prepare

    run = {"q": {f"d{i}": float(i // 4) for i in range(12)}, "r": {"x": 1.0, "y": 1.0}}
    prep = prepare(to_run(run), to_qrels({"q": {"d1": 1}, "r": {"x": 1}}), EvalSettings())
    whole = np.concatenate([r.grade for _, r in tie_orderings(prep, 40, seed=9)])
    old = sampling.MAX_ENTRIES
    try:
        sampling.MAX_ENTRIES = 10  # 40 rows a chunk: 2 orderings at a time
        chunks = list(tie_orderings(prep, 40, seed=9))
    finally:
        sampling.MAX_ENTRIES = old
    assert len(chunks) == 20 and [f for f, _ in chunks] == list(range(0, 40, 2))
    assert np.array_equal(np.concatenate([r.grade for _, r in chunks]), whole, equal_nan=True)
    assert not np.array_equal(
        whole,
        np.concatenate([r.grade for _, r in tie_orderings(prep, 40, seed=10)]),
        equal_nan=True,
    )


@pytest.mark.parametrize("measure", ["GMAP", "NumRet"])
def test_tie_draws_on_the_inference_scale(measure):
    """A geometric mean's draws are the logs of the floored per-query values (its inference scale); a
    sum's are the per-query values."""
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 0.5, "d": 0.5, "e": 0.1}}
    qrels = {"q1": {"b": 1}, "q2": {"d": 1}}
    D, _ = _draws({"A": run, "B": run}, qrels, measure, 400, seed=2)
    if measure == "GMAP":  # AP of q1 is 1 or 1/2, of q2 1 or 1/2
        assert set(np.exp(D[:, :, 0]).round(12).ravel()) == {1.0, 0.5}
    else:
        assert np.all(D[:, :, 0] == [2.0, 3.0])
