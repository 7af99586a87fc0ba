"""trec_eval's relative_P, set_relative_P, Rprec_mult, utility (exact), infAP and gm_bpref (min/max
exact, expectation sampled) against brute force over every tie ordering.

The references port trec_eval 10's C loops literally (``m_rel_P.c``, ``m_set_rel_P.c``,
``m_Rprec_mult.c``, ``m_utility.c``, ``m_infap.c``, ``m_gm_bpref.c``; grades: ranked list, None = not in the qrels, a
negative grade = in the pool but unjudged), share no code with tierank, and are evaluated on every
ordering of every tie group (reference.orderings), with and without a depth limit (trec_eval -M)
that cuts through tie groups.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from measures.test_families_exact import ref_bpref
from measures.test_families_sampled import close_in_law, sampler_only
from reference import check_per_query
from tierank.measures import parse_measure
from tierank.measures.infap import expected_sums, group_moments

TOL = 1e-9
S = 1000
SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

EXACT = [
    "RelP@1",
    "RelP@2",
    "RelP@5",
    "RelP@20",
    "SetRelP",
    "RprecMult@0.2",
    "RprecMult@0.5",
    "RprecMult@1",
    "RprecMult@2",
    "RprecMult@0.01",
    "Utility",
    "Utility(p1=-2,p2=1,p3=0.5,p4=0.25,ndocs=30)",
    "Utility(p1=3,p2=-0.5,p3=-1,p4=0.1,ndocs=12)",
]
SAMPLED = ["infAP", "GMBpref"]
MEASURES = EXACT + SAMPLED


# -- references: trec_eval 10's loops -----------------------------------------------------------------
def te_rel_p(grades, num_rel, k, level=1):
    """m_rel_P.c for one cutoff."""
    if num_rel == 0:
        return 0.0
    rel_so_far = 0
    for i, g in enumerate(grades):
        if i == k:
            return rel_so_far / min(i, num_rel)
        if g is not None and g >= level:
            rel_so_far += 1
    return rel_so_far / min(k, num_rel)


def te_set_rel_p(grades, num_rel, level=1):
    rel_ret = sum(1 for g in grades if g is not None and g >= level)
    return rel_ret / min(len(grades), num_rel) if grades and num_rel else 0.0


def te_rprec_mult(grades, num_rel, x, level=1):
    """m_Rprec_mult.c for one multiple."""
    cutoff = int(x * num_rel + 0.9)
    num_ret = len(grades)
    rel_ret = sum(1 for g in grades if g is not None and g >= level)
    if cutoff > num_ret:
        return rel_ret / cutoff
    value = 0.0
    rel_so_far = rel_ret
    i = num_ret
    while i > 0 and rel_so_far > 0:
        if i == cutoff:
            value = rel_so_far / i
        g = grades[i - 1]
        if g is not None and g >= level:
            rel_so_far -= 1
        i -= 1
    return value


def te_utility(grades, num_rel, p, ndocs, level=1):
    a = sum(1 for g in grades if g is not None and g >= level)
    n = len(grades)
    return p[0] * a + p[1] * (n - a) + p[2] * (num_rel - a) + p[3] * (ndocs + a - n - num_rel)


def te_infap(grades, num_rel, level=1):
    """m_infap.c."""
    eps = 0.00001
    nonrel = rel = unj = 0
    total = 0.0
    for j, g in enumerate(grades):
        if g is None:
            continue
        if g < 0:
            unj += 1
            continue
        if g < level:
            nonrel += 1
            continue
        rel += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj) * (
                (rel - 1 + eps) / (rel - 1 + nonrel + 2 * eps)
            )
    return total / num_rel if num_rel else total


def reference(measure: str, grades, qgrades, depth=None) -> float:
    m = parse_measure(measure)
    grades = grades[:depth] if depth else grades
    num_rel = sum(1 for g in qgrades if g >= 1)
    if m.family == "RelP":
        return te_rel_p(grades, num_rel, m.cutoff)
    if m.family == "SetRelP":
        return te_set_rel_p(grades, num_rel)
    if m.family == "RprecMult":
        return te_rprec_mult(grades, num_rel, m.cutoff)
    if m.family == "Utility":
        return te_utility(
            grades, num_rel, [m.param(f"p{i}") for i in range(1, 5)], m.param("ndocs")
        )
    if m.family == "infAP":
        return te_infap(grades, num_rel)
    if m.family == "GMBpref":  # per query: bpref floored at MIN_GEO_MEAN (m_gm_bpref.c)
        return max(ref_bpref(grades, qgrades), 0.00001)
    raise ValueError(measure)


def check(res, qs, qrels, measures, depth=None, enumerated=True):
    """Every query against brute force: a query labelled exact (infAP's and gm_bpref's few orderings
    enumerated) to TOL, a sampled one within 5 standard errors of the exact mean.  ``enumerated``: the
    cases have at most 7 documents, so at most ``ENUMERATE`` orderings: none may be sampled."""
    method = {(r["query"], r["measure"]): r["method"] for r in res.records()}
    if enumerated:
        assert {method[k] for k in method if k[1] in SAMPLED and k[0] != "all"} <= {"exact"}

    def in_law(meas, row, vals):
        if meas not in SAMPLED or method[row.name] == "exact":
            return None  # checked as exact
        ok, _ = close_in_law(row["expected"], row["std"] ** 2, vals, S)
        return ok

    check_per_query(res, qs, qrels, measures, reference, depth, tol=TOL, sampled=in_law)


@SETTINGS
@given(collection())
def test_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    check(tierank.evaluate(qrels, run, MEASURES, samples=S, seed=0), qs, qrels, MEASURES)


@SETTINGS
@given(collection(), st.integers(1, 6))
def test_depth_limit_through_tie_groups_matches_brute_force(data, depth):
    qs, run, qrels = data
    assume(qrels)
    check(
        tierank.evaluate(qrels, run, MEASURES, max_depth=depth, samples=S, seed=0),
        qs,
        qrels,
        MEASURES,
        depth,
    )


@SETTINGS
@given(collection(), st.one_of(st.none(), st.integers(1, 6)), st.booleans())
def test_sampler_matches_brute_force_in_law(data, depth, mean_too):
    """infAP's and gm_bpref's sampled path (nothing enumerated, infAP's exact tables turned off: its
    std sampled, and its mean too with ``mean_too``): within 5 standard errors of the exact mean and
    variance over every ordering, labelled sampled wherever the value can vary."""
    from tierank.measures import infap

    qs, run, qrels = data
    assume(qrels)
    tables = infap.MOMENT_CELLS, infap.EXACT_CELLS
    infap.MOMENT_CELLS, infap.EXACT_CELLS = 0, 0 if mean_too else tables[1]
    try:
        with sampler_only():
            res = tierank.evaluate(qrels, run, SAMPLED, max_depth=depth, samples=S, seed=0)
    finally:
        infap.MOMENT_CELLS, infap.EXACT_CELLS = tables
    check(res, qs, qrels, SAMPLED, depth, enumerated=False)


def test_gm_bpref_summary_is_the_geometric_mean():
    """m_gm_bpref.c stores log(max(bpref, 1e-5)) per query; meas_avg.c prints exp(mean)."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"x": 1, "y": 0}, "q3": {"z": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 0.5}, "q2": {"y": 2.0, "x": 1.0}, "q3": {"w": 1.0}}
    res = tierank.evaluate(qrels, run, ["GMBpref", "Bpref"], samples=400, seed=1)
    pq = res.per_query().set_index(["query", "measure"])
    b = [pq.loc[(q, "Bpref"), "oblivious"] for q in ("q1", "q2", "q3")]
    want = math.exp(sum(math.log(max(x, 1e-5)) for x in b) / 3)
    agg = res.aggregate().set_index("measure").loc["GMBpref"]
    assert math.isclose(agg["oblivious"], want, rel_tol=1e-12)
    assert agg["min"] <= agg["oblivious"] <= agg["max"] and agg["min"] < agg["max"]


def test_infap_is_labelled_sampled_and_reproducible():
    qrels = {"q": {"a": 1, "b": -1, "c": 0, "d": 1, "e": -1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.5, "x": 1.0}}
    one = tierank.evaluate(qrels, run, ["infAP"], samples=200, seed=3).per_query()
    two = tierank.evaluate(qrels, run, ["infAP"], samples=200, seed=3).per_query()
    assert one["expected"].tolist() == two["expected"].tolist()
    rec = tierank.evaluate(qrels, run, ["infAP"], samples=200, seed=3)
    assert rec.per_query()["min"].iloc[0] < rec.per_query()["max"].iloc[0]


@pytest.mark.parametrize(
    "text, want",
    [
        ("RprecMult@0.2", "RprecMult@0.2"),
        ("RelP@10", "RelP@10"),
        ("Utility(p2=-2)", "Utility(p2=-2)"),
        ("utility.1,-2,0,0", "Utility(p2=-2)"),
        ("relative_P.10", "RelP@10"),
        ("Rprec_mult.1", "RprecMult@1"),
        ("set_relative_P", "SetRelP"),
        ("infAP", "infAP"),
        ("gm_bpref", "GMBpref"),
    ],
)
def test_names(text, want):
    from tierank.measures.names import resolve

    assert [str(m) for m in resolve([text])] == [want]


def test_trec_eval_tables_name_the_new_families():
    from tierank.measures.names import family_names
    from tierank.measures.trec_naming import forms

    plain = {f: n for n, f in family_names("trec_eval").items()}
    assert {f: plain[f] for f in ("infAP", "GMBpref", "SetRelP", "Utility")} == {
        "infAP": "infAP",
        "GMBpref": "gm_bpref",
        "SetRelP": "set_relative_P",
        "Utility": "utility",
    }
    assert family_names("trec_eval_cut")["relative_P"] == "RelP"
    assert {"infAP", "gm_bpref", "Rprec_mult", "utility", "relative_P", "set_relative_P"} <= set(
        forms()
    )


def test_utility_needs_four_coefficients():
    from tierank.errors import TierankInputError
    from tierank.measures.names import resolve

    with pytest.raises(TierankInputError, match="utility"):
        resolve(["utility.1,2"])


def test_docs_in_collection_reaches_utility():
    from tierank.measures.names import plan

    p = plan(["utility", "map"]).with_docs_in_collection(1000)
    assert [str(m) for m in p.measures] == ["Utility(ndocs=1000)", "AP"]
    assert [e.name for e in p.printed] == ["map", "utility"]


@pytest.mark.parametrize(
    "text",
    [
        "Utility(p1=inf)",
        "Utility(p2=-inf)",
        "Utility(p3=nan)",
        "Utility(p1=1e308,p2=1e308)",
        "Utility(p4=1.0000001e15)",
        "SetF(beta=inf)",
        "SetF(beta=1e151)",
        "RBP(p=nan)",
    ],
)
def test_parameters_are_finite_and_bounded(text):
    """A non-finite parameter is refused, as is one so large that the value overflows (Utility(p1=inf)
    once crashed the JSON writer; Utility(p1=1e308,p2=1e308) printed inf)."""
    with pytest.raises(tierank.TierankInputError, match="must lie in"):
        parse_measure(text)


@given(st.sampled_from([-1e15, -3.5, 0.0, 1e15]), st.sampled_from([-1e15, 0.0, 1e15]))
@settings(max_examples=examples(40), deadline=None)
def test_utility_at_its_largest_worths_is_finite(p1, p2):
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 0.5, "b": 0.5, "d": 0.1}}
    m = f"Utility(p1={p1!r},p2={p2!r},p3=1e15,p4=-1e15,ndocs=9007199254740992)"
    agg = tierank.evaluate(qrels, run, [m]).aggregate()
    assert all(math.isfinite(float(agg[k][0])) for k in ("oblivious", "expected", "min", "max"))


def test_sampled_label_per_query():
    """infAP and gm_bpref: a query no ordering changes, or with few orderings (enumerated), is labelled
    exact in its record (no ``se``); a query whose value varies over more than ``ENUMERATE`` orderings
    is labelled sampled, with a standard error."""
    run = {
        "fixed": {"a": 3.0, "b": 2.0, "c": 1.0},
        "few": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0},
        "tied": {f"d{i}": 1.0 for i in range(40)},
    }
    qrels = {
        "fixed": {"a": 1, "b": 0, "c": -1},
        "few": {"a": 1, "b": 0, "c": -1},  # 4! classes orders (d not pooled), 2 of the judged ones
        # 7 relevant, 13 judged non-relevant, 1 unsampled, 19 not pooled: C(20, 7) = 77,520 orderings
        # of the judged ones (gm_bpref), far more of all four classes (infAP)
        "tied": {f"d{i}": int(i % 3 == 0) for i in range(0, 40, 2)},
    }
    qrels["tied"]["d1"] = -1
    res = tierank.evaluate(qrels, run, ["infAP", "GMBpref"], samples=200, seed=0)
    recs = {(r["query"], r["measure"]): r for r in res.records() if r["query"] != "all"}
    for m in ("infAP", "GMBpref"):
        for q in ("fixed", "few"):
            assert recs[(q, m)]["method"] == "exact" and "se" not in recs[(q, m)], recs[(q, m)]
        assert recs[("few", m)]["std"] > 0, recs[("few", m)]
    # gm_bpref's expectation is sampled (a standard error); infAP's mean and variance are exact
    # (`group_moments`: no sampling at all, whatever the number of orderings)
    assert recs[("tied", "GMBpref")]["method"] == "sampled" and recs[("tied", "GMBpref")]["se"] > 0
    assert recs[("tied", "infAP")]["method"] == "exact" and "se" not in recs[("tied", "infAP")]
    assert recs[("tied", "infAP")]["std"] > 0


def test_infap_past_its_exact_tables_is_sampled_and_labelled(monkeypatch):
    """A group too large for the variance's state table: its std is sampled (labelled, standard error
    0, the mean exact and the same for every seed); too large for the mean's table too: the mean is
    sampled, with a standard error."""
    from tierank.measures import infap

    run = {"tied": {f"d{i}": 1.0 for i in range(40)}}
    qrels = {"tied": {f"d{i}": int(i % 3 == 0) for i in range(0, 40, 2)}}
    qrels["tied"]["d1"] = -1
    exact = tierank.evaluate(qrels, run, ["infAP"]).records()[0]
    monkeypatch.setattr(infap, "MOMENT_CELLS", 0)
    one, two = (
        tierank.evaluate(qrels, run, ["infAP"], samples=200, seed=k).records()[0] for k in (0, 1)
    )
    assert one["method"] == "sampled" and one["se"] == 0.0 and one["std"] != two["std"]
    assert one["expected"] == pytest.approx(exact["expected"], abs=1e-14)
    assert two["expected"] == pytest.approx(exact["expected"], abs=1e-14)
    monkeypatch.setattr(infap, "EXACT_CELLS", 0)
    drawn = tierank.evaluate(qrels, run, ["infAP"], samples=200, seed=0).records()[0]
    assert drawn["method"] == "sampled" and drawn["se"] > 0
    assert abs(drawn["expected"] - exact["expected"]) <= 5 * drawn["se"]


@st.composite
def infap_group(draw):
    """A tie group (classes: 0 relevant, 1 judged non-relevant, 2 pooled-unjudged, 3 not pooled;
    at most 7 documents) below a fixed prefix of classes, and a depth limit."""
    group = draw(st.lists(st.integers(0, 3), min_size=1, max_size=7))
    prefix = draw(st.lists(st.integers(0, 3), max_size=5))
    cut = draw(st.one_of(st.none(), st.integers(0, len(prefix) + len(group))))
    return prefix, group, cut


@settings(max_examples=examples(300), deadline=None)
@given(infap_group())
def test_infap_expected_sums_match_every_ordering(case):
    """The closed-form expectation of a tie group's infAP terms (`expected_sums`), and the mean and
    variance of the state recursion (`group_moments`), equal those of trec_eval's loop (te_infap, a
    literal port) over every ordering of the group, to 1e-12."""
    prefix, group, cut = case
    grade = {0: 1, 1: 0, 2: -1, 3: None}

    def total(ranking):
        grades = [grade[c] for c in ranking][:cut]
        return te_infap(grades, 0)  # num_rel 0: the sum of the terms, undivided

    base = total(prefix)
    perms = list(itertools.permutations(group))
    sums = [total(prefix + list(p)) - base for p in perms]
    want = math.fsum(sums) / len(perms)
    want_var = math.fsum((x - want) ** 2 for x in sums) / len(perms)
    above = [prefix.count(c) for c in (0, 1, 2)]
    comp = [group.count(c) for c in range(4)]
    args = [[len(prefix)], *([a] for a in above), *([c] for c in comp)]
    limit = math.inf if cut is None else cut
    assert expected_sums(*args, limit)[0] == pytest.approx(want, abs=1e-12)
    mean, var = group_moments(*args, limit)
    assert mean[0] == pytest.approx(want, abs=1e-12) and var[0] == pytest.approx(
        want_var, abs=1e-12
    )


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(infap_group(), min_size=1, max_size=6))
def test_infap_group_moments_of_groups_stepped_together(cases):
    """Groups of different shapes and depth limits in one call: each one's moments as alone."""
    rows = []
    for prefix, group, _ in cases:
        above = [prefix.count(c) for c in (0, 1, 2)]
        rows.append([len(prefix), *above, *(group.count(c) for c in range(4))])
    cols = [list(c) for c in zip(*rows)]
    limit = min((c for _, _, c in cases if c is not None), default=math.inf)
    mean, var = group_moments(*cols, limit)
    for i, row in enumerate(rows):
        one_mean, one_var = group_moments(*([x] for x in row), limit)
        assert mean[i] == pytest.approx(one_mean[0], abs=1e-13)
        assert var[i] == pytest.approx(one_var[0], abs=1e-13)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(1, 3),
    st.integers(0, 2),
    st.lists(
        st.tuples(st.integers(8, 14), st.integers(31, 62), st.integers(0, 6)),
        min_size=2,
        max_size=6,
    ),
    st.one_of(st.none(), st.integers(0, 70)),
)
def test_infap_group_moments_of_one_shape_with_different_not_pooled_counts(r, u, rest, cut):
    """Groups stepped in one batch (same relevant and unjudged counts, judged non-relevant counts and
    sizes of one bit length each) whose not-pooled counts differ: the states each one can reach
    differ from step to step, and each one's moments are its own, as alone."""
    rows = [[P0, 0, 1, 0, r, s, u, m - r - s - u] for s, m, P0 in rest]
    limit = math.inf if cut is None else cut
    mean, var = group_moments(*(list(c) for c in zip(*rows)), limit)
    for i, row in enumerate(rows):
        one_mean, one_var = group_moments(*([x] for x in row), limit)
        assert mean[i] == pytest.approx(one_mean[0], rel=1e-13, abs=1e-15)
        assert var[i] == pytest.approx(one_var[0], rel=1e-13, abs=1e-15)
