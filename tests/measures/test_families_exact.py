"""The new families with exact statistics: Bpref, ERR, R_cap, nDCG's ir_measures parameters (dcg, gains,
judged_only), trec_eval's counts and set measures (NumQ ... SetAP), and the parameter syntax.

The references below are written from the definitions (trec_eval 10's C loops for bpref and the
set measures, gdeval.pl for ERR, ir_measures / pytrec_eval for nDCG's parameters), share no code
with tierank, and are evaluated on every ordering of every tie group (reference.orderings), with
and without a depth limit (trec_eval -M) that cuts through tie groups.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from reference import check_per_query
from tierank.measures import parse_measure

TOL = 1e-9
SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# -- references ----------------------------------------------------------------------------------
def ref_bpref(grades, qgrades, level=1):
    """trec_eval 10 m_bpref.c, literally (grades: ranked list, None = not in the qrels)."""
    num_rel = sum(1 for g in qgrades if g >= level)
    num_nonrel = sum(1 for g in qgrades if 0 <= g < level)
    nonrel_so_far, bpref = 0, 0.0
    for g in grades:
        if g is None or g < 0:
            continue
        if g < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            bpref += 1.0 - min(nonrel_so_far, num_rel) / min(num_nonrel, num_rel)
        else:
            bpref += 1.0
    return bpref / num_rel if num_rel else 0.0


def ref_err(grades, k=None, gmax=4):
    """gdeval.pl's err()."""
    score, decay = 0.0, 1.0
    for i, g in enumerate(grades[:k] if k else grades):
        j = g if g is not None and g > 0 else 0
        r = (2**j - 1) / 2**gmax
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def ref_ndcg(grades, qgrades, k=None, dcg="log2", gains=None, judged_only=False, negative="zero"):
    """pytrec_eval / ir_measures: grades mapped by ``gains`` (unmapped keep theirs), gain = grade or
    2^grade - 1, negative and unjudged 0; judged_only drops documents whose (mapped) grade is missing
    or negative before ranking.  ``negative='keep'`` (trec_eval's m_ndcg.c with a gain map): a
    judgment of grade >= 0 scores its mapped gain even when negative (get_gain), the ideal DCG only
    the positive ones."""
    gains = gains or {}

    def mp(g):
        return None if g is None else gains.get(g, g)

    def gain(g):
        g = 0 if g is None or g <= 0 else g
        return 2**g - 1 if dcg == "exp-log2" else g

    def scored(g):  # the gain of a ranked document with original grade g
        if negative == "keep":
            return 0.0 if g is None or g < 0 else mp(g)
        return gain(mp(g))

    ranked = list(grades)
    if judged_only:
        kept = (lambda g: g is not None and g >= 0) if negative == "keep" else None
        ranked = [g for g in ranked if (kept or (lambda g: mp(g) is not None and mp(g) >= 0))(g)]
    top = ranked[:k] if k else ranked
    d = sum(scored(g) / math.log2(i + 2) for i, g in enumerate(top))
    ideal = sorted((gain(mp(g)) for g in qgrades if gain(mp(g)) > 0), reverse=True)
    ideal = ideal[:k] if k else ideal
    z = sum(x / math.log2(i + 2) for i, x in enumerate(ideal))
    return d / z if z > 0 else 0.0


def ref_counts(name, grades, qgrades, level=1, beta=1.0):
    """trec_eval's num_* and set_* (m_num_*.c, m_set_*.c) on the (depth-limited) ranked list."""
    num_ret = len(grades)
    num_rel = sum(1 for g in qgrades if g >= level)
    rel_ret = sum(1 for g in grades if g is not None and g >= level)
    if name == "NumRet":
        return float(num_ret)
    if name == "NumRel":
        return float(num_rel)
    if name == "NumRelRet":
        return float(rel_ret)
    if name == "NumQ":
        return 1.0
    if name == "NumNonRelJudgedRet":
        return float(sum(1 for g in grades if g is not None and 0 <= g < level))
    if name == "SetP":
        return rel_ret / num_ret if num_ret else 0.0
    if name == "SetR":
        return rel_ret / num_rel if num_rel else 0.0
    if name == "SetF":
        if not rel_ret:
            return 0.0
        p, r = rel_ret / num_ret, rel_ret / num_rel
        return (beta + 1) * p * r / (beta * p + r)
    if name == "SetAP":
        return rel_ret * rel_ret / (num_ret * num_rel) if num_ret and num_rel else 0.0
    raise ValueError(name)


def ref_rcap(grades, qgrades, k, level=1):
    n_plus = sum(1 for g in qgrades if g >= level)
    hits = sum(1 for g in grades[:k] if g is not None and g >= level)
    return hits / min(k, n_plus) if n_plus else 0.0


def reference(measure: str, grades, qgrades, depth=None):
    """One ranked list (``grades``, before the depth limit) -> the value of ``measure``."""
    m = parse_measure(measure)
    grades = grades[:depth] if depth else grades
    fam, k = m.family, (m.cutoff if m.cutoff is not None else None)
    if fam == "Bpref":
        return ref_bpref(grades, qgrades)
    if fam == "ERR":
        return ref_err(grades, k, m.param("max_grade"))
    if fam == "nDCG":
        return ref_ndcg(
            grades,
            qgrades,
            k,
            m.param("dcg"),
            dict(m.param("gains") or ()),
            m.param("judged_only"),
            m.param("negative"),
        )
    if fam == "R_cap":
        return ref_rcap(grades, qgrades, k)
    if fam == "SetF":
        return ref_counts(fam, grades, qgrades, beta=m.param("beta"))
    return ref_counts(fam, grades, qgrades)


def check(res, qs, qrels, measures, depth=None):
    check_per_query(res, qs, qrels, measures, reference, depth, tol=TOL)


EXACT = [
    "Bpref",
    "ERR",
    "ERR@1",
    "ERR@3",
    "ERR(max_grade=5)@2",
    "R_cap@1",
    "R_cap@3",
    "R_cap@10",
    "nDCG(dcg='exp-log2')@3",
    "nDCG(dcg='exp-log2')",
    "nDCG(gains={0:1,1:1,2:5,3:0})@4",
    "nDCG(gains={-1:2,2:1})",
    "nDCG(gains={1:-1,2:4},negative='keep')@3",
    "nDCG(gains={0:-0.5,2:-3},negative='keep')",
    "nDCG(gains={1:-1,2:4})",
    "nDCG(gains={1:-2},negative='keep',judged_only=True)@2",
    "nDCG(judged_only=True)@3",
    "nDCG(judged_only=True)",
    "nDCG(dcg='exp-log2',gains={1:3},judged_only=True)@2",
]
COUNTS = [
    "NumQ",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "NumNonRelJudgedRet",
    "SetP",
    "SetR",
    "SetF",
    "SetF(beta=0.5)",
    "SetAP",
]


@SETTINGS
@given(collection())
def test_new_families_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    ms = EXACT + COUNTS
    check(tierank.evaluate(qrels, run, ms), qs, qrels, ms)


@SETTINGS
@given(collection(), st.integers(1, 6))
def test_depth_limit_through_tie_groups_matches_brute_force(data, depth):
    """trec_eval -M: a tie group cut by the depth limit makes the counts, set measures, Bpref and ERR vary."""
    qs, run, qrels = data
    assume(qrels)
    ms = [m for m in EXACT if "judged_only" not in m] + COUNTS
    check(tierank.evaluate(qrels, run, ms, max_depth=depth), qs, qrels, ms, depth)


def test_bpref_pair_law_in_a_group():
    """Two relevant documents in a group with s judged non-relevant ones: P(X_i=a, X_j=b) is
    1/((s+1)(s+2)) off the diagonal and 2/((s+1)(s+2)) on it (enumerated)."""
    import itertools
    from collections import Counter

    for s in range(0, 4):
        for u in range(0, 2):
            items = ["r1", "r2"] + [f"n{i}" for i in range(s)] + [f"u{i}" for i in range(u)]
            counts, total = Counter(), 0
            for perm in itertools.permutations(items):
                above = {
                    d: sum(1 for x in perm[: perm.index(d)] if x.startswith("n"))
                    for d in ("r1", "r2")
                }
                counts[(above["r1"], above["r2"])] += 1
                total += 1
            for a in range(s + 1):
                for b in range(s + 1):
                    want = (2 if a == b else 1) / ((s + 1) * (s + 2))
                    assert math.isclose(counts[(a, b)] / total, want), (s, u, a, b)


def test_bpref_worked_example():
    """Ranking a(rel) [b(non) c(rel) d(unjudged)] tied, e(non) below: R = 2, N- = 3, D = 2.
    Orderings of the tie group of three: c above b in half of them: c scores 1 - 1/2 = 0.5 or 1.
    a scores 1.  E = (1 + 0.75) / 2 = 0.875, min (1 + 0.5)/2 = 0.75, max 1, std 0.125."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "e": 0, "f": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0}}
    row = tierank.evaluate(qrels, run, ["Bpref"]).per_query().iloc[0]
    assert (row["expected"], row["min"], row["max"]) == (0.875, 0.75, 1.0)
    assert math.isclose(row["std"], 0.125, rel_tol=1e-12)
    # trec_eval tie-break: docno descending inside ties -> d, c, b: c above b, bpref 1
    assert row["oblivious"] == 1.0


def test_err_worked_example():
    """Grades 3 and 0 tied at ranks 1-2: R(3) = 7/16.  Either 7/16 (3 first) or 7/32 (second)."""
    row = (
        tierank.evaluate({"q": {"a": 3, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}, ["ERR@2"])
        .per_query()
        .iloc[0]
    )
    assert math.isclose(row["expected"], (7 / 16 + 7 / 32) / 2, rel_tol=1e-14)
    assert (row["min"], row["max"]) == (7 / 32, 7 / 16)
    assert math.isclose(row["std"], (7 / 16 - 7 / 32) / 2, rel_tol=1e-12)


def test_err_large_group_against_sampling():
    """A group of 60 documents (grades 0-4) straddling ERR@10: the closed form against a Monte Carlo
    estimate of 20000 random orderings (within 5 standard errors, mean and std)."""
    rng = np.random.default_rng(3)
    grades = rng.choice([0, 0, 0, 1, 2, 3, 4], size=60)
    run = {
        "q": {f"d{i}": (5.0 - i if i < 4 else 1.0) for i in range(64)}
    }  # 4 distinct, then one tie
    qrels = {"q": {f"d{i}": int(g) for i, g in zip(range(4, 64), grades)} | {"d0": 2, "d1": 0}}
    row = tierank.evaluate(qrels, run, ["ERR@10"]).per_query().iloc[0]
    head = [2, 0, None, None]  # d0, d1 judged; d2, d3 unjudged
    sims = []
    for _ in range(20000):
        sims.append(ref_err(head + list(rng.permutation(grades)), 10))
    mean, sd = float(np.mean(sims)), float(np.std(sims))
    assert abs(row["expected"] - mean) < 5 * sd / math.sqrt(len(sims))
    assert abs(row["std"] - sd) < 0.05 * sd


def test_err_refuses_grades_above_its_maximum():
    with pytest.raises(tierank.TierankInputError, match="above the largest grade 4"):
        tierank.evaluate({"q": {"a": 5}}, {"q": {"a": 1.0}}, ["ERR@5"])
    assert (
        tierank.evaluate({"q": {"a": 5}}, {"q": {"a": 1.0}}, ["ERR(max_grade=5)@5"]).aggregate()[
            "expected"
        ][0]
        == 31 / 32
    )


def test_judged_only_with_a_depth_limit_through_a_tie_is_refused():
    with pytest.raises(tierank.TierankInputError, match="judged_only with a depth limit"):
        tierank.evaluate(
            {"q": {"a": 1}},
            {"q": {"a": 1.0, "b": 1.0, "c": 1.0}},
            ["nDCG(judged_only=True)"],
            max_depth=2,
        )


def test_counts_sum_and_are_invariant_without_a_depth_limit():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"x": 2, "y": 1, "z": 0}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"x": 0.5, "y": 0.5, "w": 0.2}}
    agg = tierank.evaluate(qrels, run, COUNTS).aggregate().set_index("measure")
    assert agg.loc["NumQ", "expected"] == 2 and agg.loc["NumRet", "expected"] == 6
    assert agg.loc["NumRel", "expected"] == 3 and agg.loc["NumRelRet", "expected"] == 3
    assert agg.loc["NumNonRelJudgedRet", "expected"] == 1
    assert (agg["std"] == 0).all() and (agg["min"] == agg["max"]).all()
    assert agg.loc["SetAP", "expected"] == pytest.approx(
        (1 / (3 * 1) + 2 * 2 / (3 * 2)) / 2, rel=1e-15
    )


# -- parameter syntax ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, canonical",
    [
        ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
        ('nDCG(dcg="exp-log2")@10', "nDCG(dcg='exp-log2')@10"),
        ("nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={2:3})@10"),
        ("nDCG(gains={ 2 : 3 , 1:0.5 })", "nDCG(gains={1:0.5,2:3})"),
        ("nDCG(gains={0:0,1:1})@5", "nDCG@5"),
        ("nDCG(judged_only=True)@10", "nDCG(judged_only=True)@10"),
        ("nDCG(judged_only=False)@10", "nDCG@10"),
        (
            "nDCG(judged_only=True, gains={1:2,3:1}, dcg='exp-log2')",
            "nDCG(dcg='exp-log2',gains={1:2,3:1},judged_only=True)",
        ),
        ("SetF(beta=0.5)", "SetF(beta=0.5)"),
        ("ERR(max_grade=4)@20", "ERR@20"),
    ],
)
def test_parameter_syntax_round_trips(text, canonical):
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m and hash(parse_measure(str(m))) == hash(m)


@pytest.mark.parametrize(
    "text, message",
    [
        ("nDCG(dcg='exp')@10", "dcg must be one of {log2, exp-log2}, got 'exp'"),
        ("nDCG(dcg='exp-log2)@10", "unclosed quote"),
        ("nDCG(judged_only=yes)", "judged_only='yes' is not True or False"),
        ("nDCG(gains={0:0,1:1)@10", "unclosed {"),
        ("nDCG(gains=0:0)@10", "is not a map like {0:0,1:1,2:3}"),
        ("nDCG(gains={a:1})", "entry 'a:1' is not grade:number"),
        ("nDCG(gains={1:x})", "entry '1:x' is not grade:number"),
        ("nDCG(gains={1:2,1:3})", "grade 1 is mapped twice"),
        ("nDCG(gains={1:inf})", "the number must be finite"),
        ("nDCG(gains={1:2}})", "unbalanced '}'"),
        ("nDCG(dcg=log2 x)", "is not a quoted string"),
        ("Bpref@10", "Bpref takes no cutoff"),
        ("R_cap", "R_cap needs a cutoff"),
        ("SetF(beta=-1)", "beta must lie in [0, 1e+150], got -1.0"),
    ],
)
def test_bad_parameter_syntax_is_a_clear_input_error(text, message):
    with pytest.raises(tierank.TierankInputError) as err:
        parse_measure(text)
    assert message in str(err.value)
