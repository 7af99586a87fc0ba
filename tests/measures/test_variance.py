"""Standard deviations without cancellation (issue 10): exactly 0 when no tie ordering can change
the value, within 1e-12 of the truth otherwise.

Three references, none sharing code with tierank: brute-force enumeration of every ordering
(``reference.py``), an exact rational dynamic programme over the positions of large tie groups,
and enumeration of the arrangements of one group for the central-moment kernel.
"""

from __future__ import annotations

import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection, judged_info
from reference import orderings, value

MEASURES = [
    "P@1",
    "P@3",
    "P@10",
    "R@2",
    "R@5",
    "R@100",
    "F1@4",
    "F1@10",
    "Hits@3",
    "Success@1",
    "Success@3",
    "RR",
    "RR@3",
    "AP",
    "AP@2",
    "AP@5",
    "nDCG",
    "nDCG@3",
    "Rprec",
    "RBP(p=0.8)",
    "RBP(p=0.5)@3",
    "R",
    "Judged@3",
    "Judged@10",
]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collection())
def test_std_is_exactly_zero_where_no_ordering_changes_the_value(data):
    qs, run, qrels = data
    assume(qrels)
    pq = tierank.evaluate(qrels, run, MEASURES).per_query().set_index(["query", "measure"])
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        nrel, judged = judged_info(docs, extra)
        for m in MEASURES:
            vals = [value(m, [g for _, _, g in o], nrel, judged) for o in orderings(docs)]
            row = pq.loc[(q, m)]
            if max(vals) - min(vals) <= 1e-12:  # equal up to the reference's own float sums
                assert row["std"] == 0.0, (q, m, row["std"], docs, extra)
                assert row["min"] == row["max"] == row["expected"] == row["oblivious"], (
                    q,
                    m,
                    row,
                    docs,
                )
            else:
                assert abs(row["std"] - statistics.pstdev(vals)) <= 1e-12, (
                    q,
                    m,
                    row["std"],
                    docs,
                    extra,
                )


# worked cases from the review: every ordering gives the same value, std used to be ~1e-9
CONSTANT = [
    # P@10 with the whole tie group inside the cutoff
    (
        "P@10",
        [("d0", 0.5, None), ("d1", 0.5, 2.0), ("d2", 0.5, 1.0), ("d3", 0.5, 1.0), ("d4", 0.5, 2.0)],
        0.4,
    ),
    # AP: every tie group all relevant or all non-relevant
    (
        "AP",
        [
            ("d0", 0.5, 2.0),
            ("d1", 0.0, 2.0),
            ("d2", 1.0, 2.0),
            ("d3", 0.5, 1.0),
            ("d4", 0.0, 2.0),
            ("d5", 0.5, 1.0),
        ],
        1.0,
    ),
    (
        "Rprec",
        [
            ("d0", 1.0, 1.0),
            ("d1", 1.0, 1.0),
            ("d2", 0.5, 1.0),
            ("d3", 1.0, 3.0),
            ("d4", 1.0, 1.0),
            ("d5", 0.0, 1.0),
            ("d6", 1.0, None),
        ],
        5 / 6,
    ),
    ("R", [("d0", 0.0, 2.0), ("d1", 0.0, None), ("d2", 1.0, 1.0), ("d3", 1.0, 3.0)], 1.0),
]


@pytest.mark.parametrize("measure, docs, expected", CONSTANT)
def test_worked_cases_that_cannot_vary(measure, docs, expected):
    run = {"q": {d: s for d, s, _ in docs}}
    qrels = {"q": {d: g for d, _, g in docs if g is not None}}
    row = tierank.evaluate(qrels, run, [measure]).per_query().iloc[0]
    assert row["std"] == 0.0
    assert (
        row["expected"]
        == row["min"]
        == row["max"]
        == row["oblivious"]
        == pytest.approx(expected, abs=1e-15)
    )


def test_recall_with_a_group_of_sixty_inside_the_cutoff():
    """R@100: a tie group of 60 (20 relevant) wholly inside the top 100: R@100 = 21/21 for every
    ordering; it used to read std 5.6e-09, expected 0.9999999999999984 and max 1.0000000000000004."""
    run = {"q": {f"g{i}": 5.0 for i in range(60)} | {f"o{i}": 1.0 - i / 1000 for i in range(300)}}
    qrels = {"q": {f"g{i}": 1 for i in range(0, 60, 3)} | {"o5": 1}}
    r = (
        tierank.evaluate(qrels, run, ["R@100", "P@100", "Judged@60"])
        .per_query()
        .set_index("measure")
    )
    assert r.loc["R@100", ["expected", "min", "max", "std"]].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert r.loc["P@100", ["expected", "min", "max", "std"]].tolist() == [0.21, 0.21, 0.21, 0.0]
    assert r.loc["Judged@60", ["expected", "min", "max", "std"]].tolist() == [
        1 / 3,
        1 / 3,
        1 / 3,
        0.0,
    ]


# -- large tie groups: an exact rational dynamic programme ------------------------------------


def exact_additive(groups, gain):
    """Exact (E, Var) of sum_i rel_i * gain(rank_i, relevant up to and including i) over uniform
    orderings inside tie groups ``[(m, r), ...]`` (in rank order), by a dynamic programme over
    positions whose state is the number of relevant documents already placed in the group."""
    p_tot, m1_tot, m2_tot = Fraction(1), Fraction(0), Fraction(0)
    rank, before = 0, 0
    for m, r in groups:
        states = {0: (p_tot, m1_tot, m2_tot)}
        for t in range(m):
            rank += 1
            nxt = {}
            for j, (p, m1, m2) in states.items():
                left = m - t
                for rel, prob in ((1, Fraction(r - j, left)), (0, Fraction(left - (r - j), left))):
                    if prob == 0:
                        continue
                    add = gain(rank, before + j + 1) if rel else Fraction(0)
                    q, a1, a2 = nxt.get(j + rel, (Fraction(0), Fraction(0), Fraction(0)))
                    nxt[j + rel] = (
                        q + prob * p,
                        a1 + prob * (m1 + add * p),
                        a2 + prob * (m2 + 2 * add * m1 + add * add * p),
                    )
            states = nxt
        p_tot = sum(s[0] for s in states.values())
        m1_tot = sum(s[1] for s in states.values())
        m2_tot = sum(s[2] for s in states.values())
        before += r
    return m1_tot, m2_tot - m1_tot * m1_tot


def _run_of(groups, n_unretrieved):
    run, qrels, score = {}, {}, 1000.0
    for gi, (m, r) in enumerate(groups):
        for j in range(m):
            d = f"g{gi}_{j}"
            run[d] = score
            if j < r:
                qrels[d] = 1
            elif j % 3 == 0:
                qrels[d] = 0
        score -= 1.0
    qrels.update({f"u{i}": 1 for i in range(n_unretrieved)})
    return {"q": run}, {"q": qrels}


GAINS = {
    "AP@70": lambda n_plus: (
        lambda rank, cnt: Fraction(cnt, rank * n_plus) if rank <= 70 else Fraction(0)
    ),
    "AP": lambda n_plus: lambda rank, cnt: Fraction(cnt, rank * n_plus),
    "P@50": lambda n_plus: lambda rank, cnt: Fraction(1, 50) if rank <= 50 else Fraction(0),
    "R@45": lambda n_plus: lambda rank, cnt: Fraction(1, n_plus) if rank <= 45 else Fraction(0),
    "RBP(p=0.5)": lambda n_plus: lambda rank, cnt: Fraction(1, 2) ** rank,
}


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(1, 40), st.floats(0, 1)), min_size=1, max_size=4),
    st.integers(0, 5),
    st.sampled_from(sorted(GAINS)),
)
def test_large_tie_groups_match_an_exact_rational_programme(shape, n_unretrieved, measure):
    groups = [(m, round(f * m)) for m, f in shape]
    n_plus = sum(r for _, r in groups) + n_unretrieved
    assume(n_plus > 0)
    run, qrels = _run_of(groups, n_unretrieved)
    row = tierank.evaluate(qrels, run, [measure]).per_query().iloc[0]
    e, var = exact_additive(groups, GAINS[measure](n_plus))
    assert abs(row["expected"] - float(e)) <= 1e-12
    if var == 0:
        assert row["std"] == 0.0 and row["min"] == row["max"] == row["expected"]
    else:
        assert abs(row["std"] - math.sqrt(var)) <= 1e-12, (row["std"], math.sqrt(var))


def test_all_relevant_groups_of_hundreds_have_exactly_zero_std():
    groups = [(300, 300), (120, 0), (7, 7), (400, 400)]
    run, qrels = _run_of(groups, 3)
    r = tierank.evaluate(
        qrels, run, ["AP", "AP@500", "RR", "nDCG@400", "R@500", "P@350", "RBP(p=0.9)"]
    )
    pq = r.per_query()
    assert (pq["std"] == 0.0).all(), pq
    assert (pq["range"] == 0.0).all() and (pq["bias"] == 0.0).all()


# -- the central-moment kernel against enumeration ----------------------------------------------


@pytest.mark.parametrize("m", range(1, 8))
def test_central_moments_match_enumeration(m):
    from tierank.measures.kernels import central_moments

    for r in range(m + 1):
        p = Fraction(r, m)
        arrangements = [
            [1 if i in ones else 0 for i in range(m)]
            for ones in itertools.combinations(range(m), r)
        ]

        def moment(f, p=p, arrangements=arrangements):
            return sum(f([x - p for x in a]) for a in arrangements) / len(arrangements)

        k2 = moment(lambda y: y[0] * y[1]) if m >= 2 else 0
        want = {"k2": k2}
        if m >= 3:
            want["c3"] = moment(lambda y: y[0] ** 2 * y[1]) - moment(lambda y: y[0] * y[1] * y[2])
            want["c211"] = moment(lambda y: y[0] ** 2 * y[1] * y[2]) - k2 * k2
        if m >= 2:
            want["c22"] = moment(lambda y: y[0] ** 2 * y[1] ** 2) - k2 * k2
        if m >= 4:
            want["c1111"] = moment(lambda y: y[0] * y[1] * y[2] * y[3]) - k2 * k2
        got = central_moments(np.array([float(r)]), np.array([float(m)]))
        for name, v in want.items():
            assert math.isclose(got[name][0], float(v), rel_tol=1e-13, abs_tol=1e-15), (m, r, name)
            if r in (0, m):
                assert got[name][0] == 0.0


def test_a_value_that_varies_only_with_vanishing_probability_keeps_its_expectation():
    """2,000 tied candidates, the 1,000 relevant ones last in trec_eval's docno order: Success@1000
    is 0 for the tie-break but 1 with probability 1 - 1/C(2000, 1000); its variance underflows to
    0, yet the expectation must stay 1, not become the oblivious 0."""
    run = {"q": {f"d{i:04d}": 1.0 for i in range(2000)}}
    qrels = {"q": {f"d{i:04d}": 1 for i in range(1000)}}
    row = tierank.evaluate(qrels, run, ["Success@1000"]).per_query().iloc[0]
    assert (row["oblivious"], row["expected"], row["min"], row["max"]) == (0.0, 1.0, 0.0, 1.0)
