"""IPrec (trec_eval iprec_at_recall), IPrecAvg (11pt_avg) and GMAP (gm_map): the families whose
expectation is sampled.

The reference ports trec_eval's C loops literally (m_iprec_at_recall.c, m_11pt_avg.c,
m_gm_map.c, meas_avg.c) and enumerates every ordering of every tie group.  Exact statistics
(oblivious, min, max) must match to rounding; sampled ones within 5 standard errors, where
the standard error is the *true* one, from the enumerated distribution (so an estimate that
happens to see no variation is still judged fairly).

Queries with at most ``sampling.ENUMERATE`` orderings are enumerated instead (exact): the tests of the
sampler itself lower that threshold to 0 (:func:`sampler_only`); :func:`_check` holds an enumerated
query's expectation and variance to the enumerated distribution, to rounding.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection, judged_info
from reference import ordered, orderings
from tierank.measures import gmap, iprec, sampling  # noqa: F401  (registration until measures/__init__ imports them)
from tierank.measures.iprec import LEVELS

IPREC = [
    f"IPrec@{x}" for x in ("0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1")
]
#: trec_eval's 11pt_avg.LEVELS: levels in the order given, ascending or not (m_11pt_avg.c walks them)
AVG_LEVELS = ["IPrecAvg(levels='0.25,0.5,0.75')", "IPrecAvg(levels='0.5,0.2,0.9,0,0.5')"]
MEASURES = IPREC + ["IPrec@0.25", "IPrecAvg", "GMAP", *AVG_LEVELS]
TOL = 1e-12
S = 1000
SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@contextlib.contextmanager
def sampler_only():
    """Every query that can vary sampled (no enumeration): for the tests of the sampler itself."""
    old = sampling.ENUMERATE
    sampling.ENUMERATE = 0
    try:
        yield
    finally:
        sampling.ENUMERATE = old


# -- reference: trec_eval's loops, ported literally --------------------------------------------
def _lround(x: float) -> int:
    f = math.floor(x)
    return f + 1 if x - f >= 0.5 else f


def te_iprec(rels: list[bool], nrel: int, percents) -> list[float]:
    """m_iprec_at_recall.c for one ranked list (``rels``: relevant per rank, ranks read only)."""
    values = [0.0] * len(percents)
    cutoffs = [_lround(p * nrel) for p in percents]
    num_ret, num_rel_ret = len(rels), sum(rels)
    cur = len(percents) - 1
    while cur >= 0 and cutoffs[cur] > num_rel_ret:
        cur -= 1
    int_precis = num_rel_ret / num_ret
    rel_so_far = num_rel_ret
    i = num_ret
    while i > 0 and rel_so_far > 0:
        int_precis = max(int_precis, rel_so_far / i)
        if rels[i - 1]:
            while cur >= 0 and rel_so_far == cutoffs[cur]:
                values[cur] = int_precis
                cur -= 1
            rel_so_far -= 1
        i -= 1
    while cur >= 0:
        values[cur] = int_precis
        cur -= 1
    return values


def te_11pt(rels, nrel) -> float:
    v = te_iprec(rels, nrel, LEVELS)
    total = 0.0
    for x in reversed(v):  # trec_eval adds from the highest level down
        total += x
    return total / 11.0


def te_11pt_levels(rels: list[bool], nrel: int, percents) -> float:
    """m_11pt_avg.c for one ranked list, with its parameters ``percents`` in the order given."""
    cutoffs = [_lround(p * nrel) for p in percents]
    num_ret, num_rel_ret = len(rels), sum(rels)
    cur = len(percents) - 1
    while cur >= 0 and cutoffs[cur] > num_rel_ret:
        cur -= 1
    int_precis = num_rel_ret / num_ret if num_ret else 0.0  # trec_eval: 0/0, -nan
    rel_so_far, total = num_rel_ret, 0.0
    i = num_ret
    while i > 0 and rel_so_far > 0:
        int_precis = max(int_precis, rel_so_far / i)
        if rels[i - 1]:
            while cur >= 0 and rel_so_far == cutoffs[cur]:
                total += int_precis
                cur -= 1
            rel_so_far -= 1
        i -= 1
    while cur >= 0:
        total += int_precis
        cur -= 1
    return total / len(percents)


def te_ap(rels, nrel) -> float:
    found, total = 0, 0.0
    for i, r in enumerate(rels):
        if r:
            found += 1
            total += found / (i + 1)
    return total / nrel if found else 0.0


def ref_value(measure: str, rels: list[bool], nrel: int) -> float:
    if measure == "IPrecAvg":
        return te_11pt(rels, nrel)
    if measure.startswith("IPrecAvg(levels="):
        levels = [float(x) for x in measure.split("'")[1].split(",")]
        return te_11pt_levels(rels, nrel, levels)
    if measure == "GMAP":
        return max(te_ap(rels, nrel), 1e-5)
    return te_iprec(rels, nrel, (float(measure.split("@")[1]),))[0]


def distribution(measure, docs, nrel, level=1, depth=None):
    """Every ordering's value (a list) of one query."""
    out = []
    for o in orderings(docs):
        rels = [g is not None and g >= level for _, _, g in o][:depth]
        out.append(ref_value(measure, rels, nrel))
    return out


def oblivious(measure, docs, nrel, level=1, depth=None):
    rels = [g is not None and g >= level for _, _, g in ordered(docs, "trec_eval")][:depth]
    return ref_value(measure, rels, nrel)


def close_in_law(got_mean, got_var, vals, samples=S):
    """The sampled mean within 5 true standard errors, the sampled variance within 5 standard
    errors of a sample variance (from the true fourth central moment)."""
    mu = statistics.fmean(vals)
    var = statistics.fmean([(v - mu) ** 2 for v in vals])
    m4 = statistics.fmean([(v - mu) ** 4 for v in vals])
    ok_mean = abs(got_mean - mu) <= 5 * math.sqrt(var / samples) + 1e-12
    # first-order standard error of a sample variance, plus its second-order term (the squared
    # error of the sample mean, up to 25 var / S at 5 standard errors: the whole error of a
    # symmetric two-point law, whose first-order term is 0)
    ok_var = (
        abs(got_var - var)
        <= 5 * math.sqrt(max(m4 - var * var, 0.0) / samples) + 30 * var / samples + 1e-12
    )
    return ok_mean and ok_var, (got_mean, mu, got_var, var)


def _check(res, qs, qrels, measures, level=1, depth=None):
    pq = res.per_query().set_index(["query", "measure"])
    method = {(r["query"], r["measure"]): r["method"] for r in res.records()}
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        nrel, _ = judged_info(docs, extra, level)
        for m in measures:
            vals = distribution(m, docs, nrel, level, depth)
            row = pq.loc[(q, m)]
            assert math.isclose(row["min"], min(vals), abs_tol=TOL), (
                q,
                m,
                row["min"],
                min(vals),
                docs,
                extra,
            )
            assert math.isclose(row["max"], max(vals), abs_tol=TOL), (
                q,
                m,
                row["max"],
                max(vals),
                docs,
                extra,
            )
            want = oblivious(m, docs, nrel, level, depth)
            assert math.isclose(row["oblivious"], want, abs_tol=TOL), (
                q,
                m,
                row["oblivious"],
                want,
                docs,
            )
            if min(vals) == max(vals):
                # no ordering changes it: exact, bit for bit
                assert row["std"] == 0.0 and row["expected"] == row["min"] == row["max"], (
                    q,
                    m,
                    row,
                )
            elif method[(q, m)] == "exact":  # every ordering enumerated
                mu = statistics.fmean(vals)
                var = statistics.fmean([(v - mu) ** 2 for v in vals])
                assert math.isclose(row["expected"], mu, rel_tol=1e-12, abs_tol=TOL), (
                    q,
                    m,
                    row["expected"],
                    mu,
                )
                assert math.isclose(row["std"] ** 2, var, rel_tol=1e-9, abs_tol=TOL), (
                    q,
                    m,
                    row["std"] ** 2,
                    var,
                )
            else:
                ok, info = close_in_law(row["expected"], row["std"] ** 2, vals)
                assert ok, (q, m, info, docs, extra)


@SETTINGS
@given(collection())
def test_iprec_and_gmap_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, MEASURES, samples=S, seed=0)
    _check(res, qs, qrels, MEASURES)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collection(), st.sampled_from([1, 2, 3, 5]), st.sampled_from([0, 2]))
def test_max_depth_and_relevance_level(data, depth, level):
    """trec_eval -M (ranks past the depth are not retrieved) and -l."""
    qs, run, qrels = data
    assume(qrels)
    ms = ["IPrec@0", "IPrec@0.5", "IPrec@1", "IPrecAvg", "GMAP", *AVG_LEVELS]
    res = tierank.evaluate(qrels, run, ms, samples=S, seed=3, max_depth=depth, rel=level)
    _check(res, qs, qrels, ms, level=level, depth=depth)


def _gm_reference(qs, qrels, level=1):
    """E[G], Var[G] and the per-query factor moments of trec_eval's gm_map, from enumeration."""
    factors = []
    for i, (docs, extra) in enumerate(qs):
        if f"q{i}" not in qrels:
            continue
        nrel, _ = judged_info(docs, extra, level)
        factors.append(distribution("GMAP", docs, nrel, level))
    n = len(factors)
    a = [statistics.fmean([x ** (1 / n) for x in f]) for f in factors]
    b = [statistics.fmean([x ** (2 / n) for x in f]) for f in factors]
    e = math.prod(a)
    return e, max(math.prod(b) - e * e, 0.0), a, [bb - aa * aa for aa, bb in zip(a, b)], factors


@SETTINGS
@given(collection())
def test_gmap_summary_matches_brute_force(data):
    with sampler_only():
        qs, run, qrels = data
        assume(qrels)
        res = tierank.evaluate(qrels, run, ["GMAP"], samples=S, seed=1)
        agg = res.aggregate().set_index("measure").loc["GMAP"]
        e, var, a, v, factors = _gm_reference(qs, qrels)
        n = len(factors)
        lo = math.exp(sum(math.log(min(f)) for f in factors) / n)
        hi = math.exp(sum(math.log(max(f)) for f in factors) / n)
        assert math.isclose(agg["min"], lo, rel_tol=1e-12) and math.isclose(
            agg["max"], hi, rel_tol=1e-12
        )
        if lo == hi:
            assert agg["std"] == 0.0 and agg["expected"] == agg["min"], agg
            return
        se = e * math.sqrt(
            sum(vq / (S * aq * aq) for aq, vq in zip(a, v))
        )  # delta method, true moments
        assert abs(agg["expected"] - e) <= 5 * se + 1e-12, (agg["expected"], e, se)
        assert math.isclose(agg["std"], math.sqrt(var), rel_tol=0.25, abs_tol=1e-9), (
            agg["std"],
            math.sqrt(var),
        )
        summary = res.summary(tierank.measures.parse_measure("GMAP"))
        assert (
            summary.method == "sampled" and not summary.linear and 0 < summary.se <= 2 * se + 1e-12
        )


def _joint_gm(qs, qrels):
    """E[G] and Var[G] by enumerating the joint orderings of all queries (small cases only)."""
    factors = []
    for i, (docs, extra) in enumerate(qs):
        if f"q{i}" in qrels:
            nrel, _ = judged_info(docs, extra)
            factors.append(distribution("GMAP", docs, nrel))
    n = len(factors)
    gs = [math.exp(sum(math.log(x) for x in combo) / n) for combo in itertools.product(*factors)]
    return statistics.fmean(gs), statistics.pvariance(gs)


def test_gmap_factorisation_against_joint_enumeration():
    """E[G] = prod E[X^(1/n)] and the Var formula, checked against the joint distribution."""
    with sampler_only():
        qs = [
            ([("a", 1.0, 1.0), ("b", 1.0, None), ("c", 1.0, 0.0), ("d", 0.5, 1.0)], {"u0": 1.0}),
            ([("a", 2.0, None), ("b", 1.0, 1.0), ("c", 1.0, 0.0), ("d", 1.0, 2.0)], {}),
        ]
        run = {f"q{i}": {d: s for d, s, _ in docs} for i, (docs, _) in enumerate(qs)}
        qrels = {
            f"q{i}": {**{d: g for d, _, g in docs if g is not None}, **extra}
            for i, (docs, extra) in enumerate(qs)
        }
        e_joint, var_joint = _joint_gm(qs, qrels)
        e, var, *_ = _gm_reference(qs, qrels)
        assert math.isclose(e, e_joint, rel_tol=1e-12) and math.isclose(
            var, var_joint, rel_tol=1e-9
        )
        agg = tierank.evaluate(qrels, run, ["GMAP"], samples=20000, seed=5).summary(
            tierank.measures.parse_measure("GMAP")
        )
        assert abs(agg.expected - e_joint) <= 5 * agg.se and agg.se > 0
        assert math.isclose(agg.std, math.sqrt(var_joint), rel_tol=0.05)


# -- worked examples, determinism, batch invariance ---------------------------------------------
def test_worked_example():
    """Ranks: a (rel) | b, c, d tied (one relevant) | e (rel); N+ = 3, all retrieved.

    IPrec@1 (c = 3): max over i >= 3 of i/p_i = 3/5.  IPrec@0.5 (c = lround(1.5) = 2): max(2/p_2, 3/5)
    with p_2 uniform on {2, 3, 4}: values 1, 2/3, 3/5 -> E = (1 + 2/3 + 3/5) / 3.
    """
    with sampler_only():
        run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0}}
        qrels = {"q": {"a": 1, "c": 1, "e": 1}}
        res = tierank.evaluate(qrels, run, ["IPrec@1", "IPrec@0.5"], samples=4000, seed=0)
        pq = res.per_query().set_index("measure")
        one, half = pq.loc["IPrec@1"], pq.loc["IPrec@0.5"]
        assert one["expected"] == one["min"] == one["max"] == 0.6 and one["std"] == 0.0
        assert half["min"] == 0.6 and half["max"] == 1.0
        want = (1 + 2 / 3 + 3 / 5) / 3
        sd = math.sqrt(statistics.pvariance([1, 2 / 3, 3 / 5]))
        assert abs(half["expected"] - want) <= 5 * sd / math.sqrt(4000)
        recs = {r["measure"]: r for r in res.records() if r["query"] == "q"}
        lab = recs["IPrec@0.5"]
        assert (
            lab["method"] == "sampled"
            and lab["samples"] == 4000
            and lab["seed"] == 0
            and lab["se"] > 0
        )
        assert recs["IPrec@1"]["method"] == "exact" and "se" not in recs["IPrec@1"]


def _tied_run(nq=6, seed=0):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(nq):
        docs = [f"d{i}" for i in range(12)]
        run[f"q{q}"] = {d: float(rng.integers(0, 3)) for d in docs}
        qrels[f"q{q}"] = {d: int(rng.random() < 0.4) for d in docs}
    return run, qrels


def test_same_seed_same_numbers_other_seed_other_numbers():
    with sampler_only():
        run, qrels = _tied_run()
        a = tierank.evaluate(qrels, run, MEASURES, samples=200, seed=7).per_query()
        b = tierank.evaluate(qrels, run, MEASURES, samples=200, seed=7).per_query()
        c = tierank.evaluate(qrels, run, MEASURES, samples=200, seed=8).per_query()
        assert (
            a["expected"].tolist() == b["expected"].tolist()
            and a["std"].tolist() == b["std"].tolist()
        )
        vary = (a["max"] > a["min"]).to_numpy()
        assert vary.any()
        assert (a["expected"].to_numpy()[vary] != c["expected"].to_numpy()[vary]).any()
        # exact columns do not depend on the seed
        assert a[["oblivious", "min", "max"]].equals(c[["oblivious", "min", "max"]])


def test_a_query_draws_do_not_depend_on_the_other_queries(monkeypatch):
    """Evaluating half of the queries, or in many small chunks, gives the shared queries the same bits."""
    run, qrels = _tied_run(8, seed=2)
    ms = ["IPrec@0.3", "IPrecAvg", "GMAP"]
    whole = (
        tierank.evaluate(qrels, run, ms, samples=300, seed=4)
        .per_query()
        .set_index(["query", "measure"])
    )
    half = {q: run[q] for q in list(run)[::2]}
    part = (
        tierank.evaluate(qrels, half, ms, samples=300, seed=4)
        .per_query()
        .set_index(["query", "measure"])
    )
    monkeypatch.setattr(sampling, "MAX_ENTRIES", 50)  # one query per chunk, orderings split
    small = (
        tierank.evaluate(qrels, run, ms, samples=300, seed=4)
        .per_query()
        .set_index(["query", "measure"])
    )
    for (q, m), row in part.iterrows():
        assert (
            row["expected"] == whole.loc[(q, m), "expected"]
            and row["std"] == whole.loc[(q, m), "std"]
        ), (q, m)
    assert small["expected"].equals(whole["expected"]) and small["std"].equals(whole["std"])
    assert (whole["max"] > whole["min"]).any()


def test_query_that_cannot_vary_is_exact():
    run = {
        "q1": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 0.0},  # tie of two non-relevant documents
        "q2": {"a": 1.0, "b": 1.0, "c": 1.0},
    }  # all relevant, tied
    qrels = {"q1": {"a": 1, "d": 1, "x": 1}, "q2": {"a": 1, "b": 1, "c": 1}}
    res = tierank.evaluate(qrels, run, MEASURES)
    pq = res.per_query()
    assert (pq["std"] == 0.0).all()
    assert (pq["expected"] == pq["oblivious"]).all() and (pq["min"] == pq["max"]).all()
    assert all(r["method"] == "exact" for r in res.records())
    agg = res.summary(tierank.measures.parse_measure("GMAP"))
    assert (
        agg.method == "exact"
        and agg.std == 0.0
        and agg.expected == agg.oblivious == agg.min == agg.max
    )


def test_large_tie_group_is_sampled_fast_and_within_bounds():
    """One query of 20,000 documents all tied, 300 relevant: Floyd draws min(r, m - r) offsets."""
    n, r = 20000, 300
    run = {"q": {f"d{i}": 1.0 for i in range(n)}}
    qrels = {"q": {f"d{i}": 1 for i in range(r)}}
    res = tierank.evaluate(qrels, run, ["IPrec@0.5", "GMAP", "AP"], samples=200)
    pq = res.per_query().set_index("measure")
    # the AP of a random ordering concentrates near r / n; its exact expectation is known
    ap = pq.loc["AP"]
    gm = pq.loc["GMAP"]
    assert abs(gm["expected"] - ap["expected"]) <= 5 * math.sqrt(ap["std"] ** 2 / 200) + 1e-12
    assert (
        pq.loc["IPrec@0.5", "min"] <= pq.loc["IPrec@0.5", "expected"] <= pq.loc["IPrec@0.5", "max"]
    )


def test_parse_and_refusals():
    from tierank.errors import TierankInputError
    from tierank.measures import parse_measure

    assert (
        str(parse_measure("IPrec@0.10")) == "IPrec@0.1" and parse_measure("IPrec@0.1").cutoff == 0.1
    )
    for bad in ("IPrec@1.5", "IPrec", "IPrecAvg@3", "GMAP@10"):
        with pytest.raises(TierankInputError):
            parse_measure(bad)
    assert parse_measure("GMAP").summary_only
    with pytest.raises(TierankInputError, match="no valid bound"):
        tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["GMAP"], unjudged="bounds")


# -- trec_eval's own outputs ----------------------------------------------------------------------
def _te_rows(path):
    out = {}
    for line in open(path):
        if line.strip():
            name, qid, value = (x.strip() for x in line.rstrip("\n").split("\t"))
            out.setdefault(qid, {})[name] = value
    return out


@pytest.mark.parametrize("case", ["out.test.a", "out.test.aq", "out.test"])
def test_oblivious_equals_trec_eval(real_data, case):
    te = real_data / "trec_eval"
    rows = _te_rows(te / case)
    names = {f"iprec_at_recall_{x:.2f}": f"IPrec@{m.split('@')[1]}" for x, m in zip(LEVELS, IPREC)}
    names.update({"11pt_avg": "IPrecAvg", "gm_map": "GMAP"})
    res = tierank.evaluate(
        te / "qrels.test", te / "results.test", list(names.values()), tie_break="trec_eval"
    )
    pq = res.per_query().set_index(["query", "measure"])
    compared = 0
    for qid, vals in rows.items():
        for te_name, ours in names.items():
            if te_name not in vals:
                continue
            if qid == "all":
                got = res.summary(tierank.measures.parse_measure(ours)).oblivious
            else:
                got = pq.loc[(qid, ours), "oblivious"]
            assert abs(got - float(vals[te_name])) <= 5e-5 + 1e-9, (
                case,
                qid,
                te_name,
                got,
                vals[te_name],
            )
            compared += 1
    assert (
        compared >= 13 * (4 if case == "out.test.aq" else 1) - 3
    )  # gm_map is printed in `all` only


def test_sampler_against_the_exact_ap_expectation_and_variance():
    """The generic sampler (sampling.sampled_stats) on AP, whose expectation and variance are exact
    closed forms: the estimates lie within 5 standard errors (S = 4000, many queries, large ties)."""
    with sampler_only():
        from tierank.measures import parse_measure
        from tierank.measures.gmap import ap_values
        from tierank.measures.sampling import fixed_draws, sampled_stats
        from tierank.settings import EvalSettings
        from tierank.ties import prepare

        rng = np.random.default_rng(11)
        run, qrels = {}, {}
        for q in range(40):
            n = int(rng.integers(5, 60))
            run[f"q{q}"] = {f"d{i}": float(rng.integers(0, 4)) for i in range(n)}
            qrels[f"q{q}"] = {f"d{i}": int(rng.random() < 0.3) for i in range(n)} | {"unret": 1}
        ap = parse_measure("AP")
        prep = prepare(
            tierank.to_run(run),
            tierank.to_qrels(qrels),
            EvalSettings(samples=4000, seed=2),
            measures=(ap,),
        )
        exact = ap.compute(prep)
        nrel = prep.nrel()
        lo, hi = (
            ap_values(fixed_draws(prep, prep.arrangement(w, "rel"), np.inf), nrel)
            for w in ("pessimistic", "optimistic")
        )
        np.testing.assert_allclose(lo, exact.min, rtol=0, atol=1e-12)
        np.testing.assert_allclose(hi, exact.max, rtol=0, atol=1e-12)
        got = sampled_stats(
            prep, exact.oblivious, lo, hi, lambda d: ap_values(d, nrel), None, np.inf
        )
        assert got.method == "sampled" and got.samples == 4000 and got.seed == 2
        vary = lo < hi
        assert vary.sum() > 30
        true_se = np.sqrt(exact.var / 4000)
        assert (np.abs(got.expected - exact.expected) <= 5 * true_se + 1e-12).all()
        np.testing.assert_allclose(got.var[vary], exact.var[vary], rtol=0.2)
        np.testing.assert_allclose(got.se[vary], true_se[vary], rtol=0.1)
        assert (got.var[~vary] == 0).all() and (got.expected[~vary] == exact.expected[~vary]).all()


def test_complete_counts_missing_queries_at_the_floor():
    """-c: a qrels query absent from the run has AP 0, so X = 1e-5 (trec_eval's log(MIN_GEO_MEAN) patch)."""
    with sampler_only():
        run = {"q1": {"a": 1.0, "b": 1.0}}
        qrels = {"q1": {"a": 1}, "q2": {"x": 1}}
        res = tierank.evaluate(qrels, run, ["GMAP", "IPrec@0.5"], complete=True, samples=500)
        pq = res.per_query().set_index(["query", "measure"])
        assert pq.loc[("q2", "GMAP"), "max"] == 1e-5 and pq.loc[("q2", "IPrec@0.5"), "max"] == 0.0
        agg = res.summary(tierank.measures.parse_measure("GMAP"))
        assert math.isclose(agg.min, math.sqrt(0.5 * 1e-5)) and math.isclose(
            agg.max, math.sqrt(1e-5)
        )
        assert math.isclose(
            agg.expected, math.sqrt(1e-5) * (1 + math.sqrt(0.5)) / 2, rel_tol=0, abs_tol=5 * agg.se
        )


@pytest.mark.parametrize("flags", [(), ("-M", "10"), ("-l", "2"), ("-c",)])
def test_oblivious_equals_trec_eval_binary_on_tied_scores(
    real_data, trec_eval_bin, tmp_path, flags
):
    """results.test with scores rounded to 2 significant digits (heavy ties), trec_eval 10 itself."""
    import subprocess

    te = real_data / "trec_eval"
    qrels = te / ("qrels.rel_level" if "-l" in flags else "qrels.test")
    lines = []
    for line in (te / "results.test").read_text().splitlines():
        f = line.split()
        f[4] = f"{float(f'{float(f[4]):.2g}'):.17g}"
        lines.append(" ".join(f))
    run = tmp_path / "run"
    run.write_text("\n".join(lines) + "\n")
    out = subprocess.run(
        [
            str(trec_eval_bin),
            "-q",
            *flags,
            "-m",
            "iprec_at_recall",
            "-m",
            "11pt_avg",
            "-m",
            "gm_map",
            str(qrels),
            str(run),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {f"iprec_at_recall_{x:.2f}": m for x, m in zip(LEVELS, IPREC)} | {
        "11pt_avg": "IPrecAvg",
        "gm_map": "GMAP",
    }
    kw = (
        {"max_depth": 10}
        if "-M" in flags
        else {"rel": 2}
        if "-l" in flags
        else {"complete": "-c" in flags}
    )
    res = tierank.evaluate(
        qrels, run, list(names.values()), tie_break="trec_eval", samples=20, **kw
    )
    pq = res.per_query().set_index(["query", "measure"])
    n = 0
    for line in out.splitlines():
        name, qid, value = (x.strip() for x in line.split("\t"))
        if name not in names:
            continue
        m = names[name]
        if qid == "all":
            got = res.summary(tierank.measures.parse_measure(m)).oblivious
        else:
            got = pq.loc[(qid, m), "oblivious"]
        assert abs(got - float(value)) <= 5e-5 + 1e-9, (flags, name, qid, value, got)
        n += 1
    assert n == 13 + 12 * len(res.qids)
    assert (pq["max"] > pq["min"]).any()  # the rounding made ties that matter


def test_gmap_summary_of_other_query_set_is_nan_not_wrong():
    """Per-query factors E[X^(1/n)] belong to the n they were drawn for: stats cut to a subset of
    queries give NaN for the sampled summary (exact bounds kept)."""
    with sampler_only():
        from dataclasses import replace

        run, qrels = _tied_run(4, seed=9)
        m = tierank.measures.parse_measure("GMAP")
        st_all = tierank.evaluate(qrels, run, [m], samples=100).stats[m]
        assert st_all.method == "sampled"
        cut = replace(
            st_all,
            oblivious=st_all.oblivious[:3],
            expected=st_all.expected[:3],
            min=st_all.min[:3],
            max=st_all.max[:3],
            var=st_all.var[:3],
            se=st_all.se[:3],
        )
        agg = m.aggregate(cut)
        assert math.isnan(agg.expected) and math.isnan(agg.std) and agg.method == "sampled"
        assert math.isclose(agg.min, math.exp(np.sum(np.log(st_all.min[:3])) / 3), rel_tol=1e-14)


def _brute_moments(measure, docs, nrel):
    vals = distribution(measure, docs, nrel)
    mu = statistics.fmean(vals)
    return mu, statistics.fmean([(v - mu) ** 2 for v in vals])


def test_few_orderings_enumerated_many_sampled_none_exact(monkeypatch):
    """In one evaluation: a query with C(4,2) * C(3,1) = 18 distinct orderings of its relevant documents
    is enumerated (exact expectation and variance, labelled exact, whatever the chunking); one with
    more than ``ENUMERATE`` is sampled (labelled, standard error > 0); one without ties is exact."""
    few = [
        ("a", 3.0, 1),
        ("b", 3.0, 0),
        ("c", 3.0, 1),
        ("d", 3.0, 0),
        ("e", 2.0, 0),
        ("f", 1.0, 1),
        ("g", 1.0, 0),
        ("h", 1.0, 0),
    ]
    many = [(f"m{i}", 1.0, int(i % 3 == 0)) for i in range(12)]  # C(12, 4) = 495 orderings
    none = [("x", 2.0, 1), ("y", 1.0, 0)]
    run = {
        q: {d: s for d, s, _ in docs} for q, docs in (("few", few), ("many", many), ("none", none))
    }
    qrels = {
        q: {d: g for d, _, g in docs} for q, docs in (("few", few), ("many", many), ("none", none))
    }
    qrels["few"]["z"] = 1  # a relevant document not retrieved
    ms = ["IPrec@0.5", "IPrecAvg", "GMAP"]
    monkeypatch.setattr(sampling, "ENUMERATE", 100)
    res = tierank.evaluate(qrels, run, ms, samples=S, seed=0)
    monkeypatch.setattr(sampling, "MAX_ENTRIES", 7)  # enumerated orderings split over chunks
    chunked = tierank.evaluate(qrels, run, ms, samples=S, seed=0)
    recs = {(r["query"], r["measure"]): r for r in res.records() if r["query"] != "all"}
    for m in ms:
        r = recs[("few", m)]
        mu, var = _brute_moments(m, few, 4)
        assert r["method"] == "exact" and "se" not in r, r
        assert math.isclose(r["expected"], mu, rel_tol=1e-12) and math.isclose(
            r["std"] ** 2, var, rel_tol=1e-9
        ), (m, r, mu, var)
        assert recs[("many", m)]["method"] == "sampled" and recs[("many", m)]["se"] > 0
        assert recs[("none", m)]["method"] == "exact" and recs[("none", m)]["std"] == 0.0
    assert [r["expected"] for r in chunked.records()] == [r["expected"] for r in res.records()]
    monkeypatch.setattr(sampling, "ENUMERATE", 17)  # one below: the query is sampled
    recs = {
        (r["query"], r["measure"]): r
        for r in tierank.evaluate(qrels, run, ms, samples=S, seed=0).records()
    }
    assert recs[("few", "IPrecAvg")]["method"] == "sampled"


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=4).filter(lambda c: sum(c) <= 8))
def test_class_arrangements_are_every_distinct_ordering_once(counts):
    """sampling.class_arrangements: the distinct orderings of a multiset of classes, each once, as many as
    sampling.arrangement_count says (itertools.permutations, deduplicated, as the reference)."""
    items = [c for c, k in enumerate(counts) for _ in range(k)]
    want = set(itertools.permutations(items))
    assert sampling.arrangement_count(counts) == len(want)
    rows = sampling.class_arrangements(counts)
    assert rows.shape == (len(want), len(items))
    got = [tuple(r) for r in rows.tolist()]
    assert len(set(got)) == len(got) and set(got) == want


def test_arrangement_count_is_capped_and_too_many_are_refused():
    assert sampling.arrangement_count((7, 7)) == 3432  # C(14, 7)
    assert sampling.arrangement_count((10, 10)) == sampling.ENUMERATE + 1  # C(20, 10) = 184,756
    with pytest.raises(ValueError, match="too many"):
        sampling.class_arrangements((10, 10))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collection())
def test_orderings_counts_the_distinct_relevance_patterns(data):
    """sampling.orderings: per query, the number of distinct relevant-rank patterns over every ordering."""
    from tierank.settings import EvalSettings  # noqa: PLC0415
    from tierank.ties import prepare  # noqa: PLC0415

    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, ["AP"])
    prep = prepare(tierank.to_run(run), tierank.to_qrels(qrels), EvalSettings())
    got = dict(zip(prep.qids, sampling.orderings(prep, None, np.inf).tolist()))
    for i, (docs, _extra) in enumerate(qs):
        q = f"q{i}"
        if q not in res.qids:
            continue
        patterns = {tuple(g is not None and g >= 1 for _, _, g in o) for o in orderings(docs)}
        assert got[q] == min(len(patterns), sampling.ENUMERATE + 1), (
            q,
            got[q],
            len(patterns),
            docs,
        )
