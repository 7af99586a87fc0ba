"""Evaluation over label uncertainty jointly with ties (tierank.analysis.labels) against brute force
over every grade assignment and every ordering of the tie groups."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierank import evaluate
from tierank.analysis.labels import evaluate_labels, exact_family
from tierank.measures.base import parse_measure

EXACT = ["P@1", "P@3", "Hits@2", "RBP(p=0.5)", "Judged@2", "P@10", "P(rel=2)@2"]


def brute(dist: dict, scores: dict, measure: str):
    """Per query (expected, var_tie, var_label) by enumeration: every grade assignment (product of the
    pairs' distributions) x every ordering of the tie groups, each ordering evaluated by the engine as
    a run without ties (one engine call, query ``q#i`` per combination)."""
    out = {}
    for q, docs in scores.items():
        pairs = list(dist.get(q, {}))
        probs = [np.asarray(dist[q][d]) for d in pairs]
        by_score: dict[float, list[str]] = {}
        for d, s in docs.items():
            by_score.setdefault(s, []).append(d)
        groups = [by_score[s] for s in sorted(by_score, reverse=True)]
        orders = [
            [d for g in perm for d in g]
            for perm in itertools.product(*(itertools.permutations(g) for g in groups))
        ]
        assignments = list(itertools.product(*(range(len(p)) for p in probs)))
        qrels, run, weight = {}, {}, []
        i = 0
        for a in assignments:
            pa_ = float(np.prod([p[k] for p, k in zip(probs, a, strict=True)]))
            for o in orders:
                name = f"{q}#{i}"
                qrels[name] = {d: k for d, k in zip(pairs, a, strict=True)}
                run[name] = {d: float(len(o) - r) for r, d in enumerate(o)}
                weight.append(pa_)
                i += 1
        res = evaluate(qrels, run, [measure])
        (m,) = res.measures
        v = dict(zip(res.qids, res.stats[m].expected, strict=True))
        vals = np.array([v[f"{q}#{j}"] for j in range(i)]).reshape(len(assignments), len(orders))
        pa_ = np.array(weight).reshape(len(assignments), len(orders))[:, 0]
        tie_mean, tie_var = vals.mean(1), vals.var(1)
        e = float(pa_ @ tie_mean)
        out[q] = (e, float(pa_ @ tie_var), float(pa_ @ (tie_mean - e) ** 2))
    return out


@st.composite
def cases(draw):
    nq = draw(st.integers(1, 2))
    k = draw(st.integers(1, 2))
    dist, scores = {}, {}
    for qi in range(nq):
        q = f"q{qi}"
        n = draw(st.integers(1, 4))
        docs = [f"d{j}" for j in range(n)]
        scores[q] = {d: float(draw(st.integers(0, 2))) for d in docs}
        judged = [d for d in docs if draw(st.booleans())] or docs[:1]
        dist[q] = {}
        for d in judged:
            raw = draw(st.lists(st.integers(0, 4), min_size=k + 1, max_size=k + 1))
            raw = raw if sum(raw) else [1] + raw[1:]
            dist[q][d] = [r / sum(raw) for r in raw]
    return dist, scores


@pytest.mark.parametrize("measure", EXACT)
def test_exact_families_are_declared_exact(measure):
    assert exact_family(parse_measure(measure))


@pytest.mark.parametrize("measure", ["nDCG@2", "AP", "RR", "R@2", "Rprec", "Success@2"])
def test_other_families_are_not_exact(measure):
    assert not exact_family(parse_measure(measure))


@settings(max_examples=25)
@given(cases(), st.sampled_from(EXACT))
def test_exact_matches_brute_force(case, measure):
    dist, scores = case
    res = evaluate_labels(dist, scores, [measure])
    s = res[measure]
    assert s.method == "exact"
    want = brute(dist, scores, measure)
    for i, q in enumerate(res.qids):
        e, vt, vl = want[q]
        assert s.expected[i] == pytest.approx(e, abs=1e-12)
        assert s.var_tie[i] == pytest.approx(vt, abs=1e-12)
        assert s.var_label[i] == pytest.approx(vl, abs=1e-12)
    nq = len(res.qids)
    assert s.aggregate["var_tie"] == pytest.approx(sum(w[1] for w in want.values()) / nq**2)
    assert s.aggregate["var_label"] == pytest.approx(sum(w[2] for w in want.values()) / nq**2)


@settings(max_examples=8)
@given(cases(), st.sampled_from(["nDCG@2", "AP", "RR"]))
def test_sampled_within_four_standard_errors(case, measure):
    dist, scores = case
    samples = 400
    res = evaluate_labels(dist, scores, [measure], samples=samples, seed=3)
    s = res[measure]
    assert s.method == "sampled" and s.samples == samples and s.seed == 3
    want = brute(dist, scores, measure)
    # each draw's value is exact over ties, so the estimate's true standard error is
    # sqrt(var_label / samples), known here from brute force: the estimate lies within 5 of them
    # (the reported se, estimated from the same draws, is not the yardstick: a lucky draw shrinks it)
    for i, q in enumerate(res.qids):
        e, vt, vl = want[q]
        true_se = np.sqrt(vl / samples)
        assert abs(s.expected[i] - e) <= 5 * true_se + 1e-12
        assert s.se[i] == pytest.approx(true_se, rel=0.5, abs=1e-12)
        # the tie variance of each draw is exact: its mean is within reach of its own spread
        assert s.var_tie[i] == pytest.approx(vt, abs=0.05)
    # the aggregate: the mean of the per-query expectations, the queries' draws independent
    mean = np.mean([want[q][0] for q in res.qids])
    agg_se = np.sqrt(sum(want[q][2] for q in res.qids) / samples) / len(res.qids)
    assert abs(s.aggregate["expected"] - mean) <= 5 * agg_se + 1e-12


def test_linear_plugin_equals_expected_and_nonlinear_differs():
    dist = {"q": {"a": [0.5, 0.0, 0.5], "b": [0.0, 1.0, 0.0], "c": [1.0, 0.0, 0.0]}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    res = evaluate_labels(dist, run, ["nDCG@2", "Hits@2"], samples=4000, seed=1)
    # the ideal ranking moves with the grades: E[nDCG] differs from nDCG on the expected grades
    n = res["nDCG@2"]
    assert n.plugin[0] == pytest.approx(1.0)
    assert n.expected[0] < 1.0 - 4 * n.se[0]
    # Hits@2 counts grades >= 1: exact, no tie, only the label part
    h = res["Hits@2"]
    assert (h.expected[0], h.var_tie[0], h.var_label[0]) == (1.5, 0.0, 0.25)


def test_panel_is_the_mean_over_judges():
    judges = {
        "a": {"q": {"x": 1, "y": 0}, "r": {"x": 1}},
        "b": {"q": {"x": 0, "y": 1}, "r": {"x": 0}},
        "c": {"q": {"x": 1, "y": 1}, "r": {"x": 1}},
    }
    run = {"q": {"x": 1.0, "y": 1.0}, "r": {"x": 2.0, "z": 1.0}}
    res = evaluate_labels(judges, run, ["P@1"])
    s = res["P@1"]
    # per judge, E over ties of P@1 for q: a 0.5, b 0.5, c 1; for r: 1, 0, 1
    assert s.expected.tolist() == pytest.approx([2 / 3, 2 / 3])
    assert s.var_label.tolist() == pytest.approx([np.var([0.5, 0.5, 1]), np.var([1, 0, 1])])
    assert s.var_tie.tolist() == pytest.approx([(0.25 + 0.25 + 0) / 3, 0.0])
    # one judge grades every query: the aggregate's label variance is that of the judges' means
    assert s.aggregate["var_label"] == pytest.approx(np.var([0.75, 0.25, 1.0]))
    # the plug-in reads the mean grade 2/3 of x as a grade: below rel 1, not relevant
    assert s.plugin.tolist() == [0.0, 0.0]
    assert (s.method, s.samples, s.se.tolist()) == ("exact", 3, [0.0, 0.0])


@st.composite
def panels(draw):
    """2 or 3 judges of the same queries (each judge grades at least one pair of every query, grades
    0..2), and a run with ties."""
    nq = draw(st.integers(1, 2))
    nj = draw(st.integers(2, 3))
    judges: dict[str, dict] = {f"j{i}": {} for i in range(nj)}
    scores = {}
    for qi in range(nq):
        q = f"q{qi}"
        docs = [f"d{j}" for j in range(draw(st.integers(1, 4)))]
        scores[q] = {d: float(draw(st.integers(0, 2))) for d in docs}
        for qrels in judges.values():
            graded = [d for d in docs if draw(st.booleans())] or docs[:1]
            qrels[q] = {d: draw(st.integers(0, 2)) for d in graded}
    return judges, scores


@settings(max_examples=20)
@given(panels(), st.sampled_from(["P@1", "RBP(p=0.5)", "nDCG@2", "AP", "RR"]))
def test_panel_matches_brute_force_over_judges_and_orderings(case, measure):
    """Every judge x every ordering of the tie groups, enumerated (a judge as the distribution that
    puts all mass on its grades), each judge equally likely; the aggregate over the queries that one
    judge grades at once."""
    judges, scores = case
    res = evaluate_labels(judges, scores, [measure])
    s = res[measure]
    per_judge = []
    for qrels in judges.values():
        certain = {
            q: {d: [float(g == k) for k in range(3)] for d, g in docs.items()}
            for q, docs in qrels.items()
        }
        per_judge.append(brute(certain, scores, measure))
    e = np.array([[w[q][0] for q in res.qids] for w in per_judge])  # (judges, queries)
    vt = np.array([[w[q][1] for q in res.qids] for w in per_judge])
    assert all(w[q][2] == pytest.approx(0.0, abs=1e-12) for w in per_judge for q in w)
    assert s.expected.tolist() == pytest.approx(e.mean(0).tolist(), abs=1e-12)
    assert s.var_tie.tolist() == pytest.approx(vt.mean(0).tolist(), abs=1e-12)
    assert s.var_label.tolist() == pytest.approx(e.var(0).tolist(), abs=1e-12)
    assert s.std.tolist() == pytest.approx(np.sqrt(vt.mean(0) + e.var(0)).tolist(), abs=1e-12)
    nq = len(res.qids)
    agg = s.aggregate
    assert agg["expected"] == pytest.approx(e.mean(), abs=1e-12)
    assert agg["var_tie"] == pytest.approx(vt.sum(1).mean() / nq**2, abs=1e-12)
    assert agg["var_label"] == pytest.approx(e.mean(1).var(), abs=1e-12)
    assert (s.method, s.samples, agg["se"]) == ("exact", len(judges), 0.0)


@settings(max_examples=20)
@given(cases(), st.sampled_from(EXACT + ["nDCG@2"]), st.sampled_from([None, 2]))
def test_certain_grades_give_the_engine_and_no_label_variance(case, measure, depth):
    """Distributions that put all mass on one grade: the engine's tie statistics, var_label 0."""
    from tierank.settings import EvalSettings

    dist, scores = case
    rng = np.random.default_rng(len(str(case)))
    certain, qrels = {}, {}
    for q, docs in dist.items():
        certain[q], qrels[q] = {}, {}
        for d, p in docs.items():
            k = int(rng.integers(len(p)))
            certain[q][d] = [float(i == k) for i in range(len(p))]
            qrels[q][d] = k
    s = EvalSettings(max_depth=depth)
    res = evaluate_labels(certain, scores, [measure], samples=3, settings=s)
    want = evaluate(qrels, scores, [measure], s)
    (m,) = want.measures
    got = res[measure]
    assert res.qids == want.qids
    assert got.expected.tolist() == pytest.approx(want.stats[m].expected.tolist(), abs=1e-12)
    assert got.var_tie.tolist() == pytest.approx(want.stats[m].var.tolist(), abs=1e-12)
    assert got.var_label.tolist() == [0.0] * len(res.qids)
    assert got.plugin.tolist() == pytest.approx(want.stats[m].expected.tolist(), abs=1e-12)


def test_refuses_settings_it_does_not_model():
    from tierank.errors import TierankInputError
    from tierank.settings import EvalSettings

    with pytest.raises(TierankInputError, match="unjudged documents as nonrelevant"):
        evaluate_labels(
            {"q": {"a": [0.5, 0.5]}},
            {"q": {"a": 1.0}},
            ["P@1"],
            settings=EvalSettings(judged_only=True),
        )
    with pytest.raises(TierankInputError, match="aggregated otherwise"):
        evaluate_labels({"q": {"a": [0.5, 0.5]}}, {"q": {"a": 1.0}}, ["GMAP"])
