"""tierank.analysis.similarity: RBO (Webber et al. 2010) with Corsi and Urbano's tie treatments (SIGIR 2024),
E/min/max over the tie orderings, Kendall's tau-b, tau-AP and the overlap at k; and `tierank similarity`."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers import examples, invoke
from tierank.analysis.similarity import (
    kendall_tau_b,
    overlaps,
    ranking_from_groups,
    rbo,
    rbo_orderings,
    similarity,
    tau_ap,
)

# --- independent implementations, written from the papers' definitions (loops over depths, sets) --------------


def webber_ext(S: list, L: list, p: float) -> float:
    """RBO_ext of two tie-free lists, Webber et al. (2010) eq. 32 (uneven lengths), term by term."""
    if len(S) > len(L):
        S, L = L, S
    s, l = len(S), len(L)

    def X(d):
        return len(set(S[:d]) & set(L[:d]))

    total = sum(X(d) / d * p**d for d in range(1, l + 1))
    total += sum(X(s) * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    return (1 - p) / p * total + ((X(l) - X(s)) / l + X(s) / s) * p**l


def _flat(r: list) -> list[tuple[str, int, int]]:
    """(item, top, bottom), 1-based ranks of the item's tie group."""
    out, pos = [], 0
    for g in r:
        members = sorted(g) if isinstance(g, (set, frozenset)) else [g]
        for m in members:
            out.append((m, pos + 1, pos + len(members)))
        pos += len(members)
    return out


def corsi_urbano(x: list, y: list, p: float, ties: str) -> dict:
    """Corsi and Urbano's RBO^w / RBO^a / RBO^b (SIGIR 2024, sections 3-4): item contributions per depth, the
    agreement of each variant, the section beyond the short ranking, and the tails of ext/min/max."""
    fx, fy = _flat(x), _flat(y)
    S, L = (fx, fy) if len(fx) <= len(fy) else (fy, fx)
    s, l = len(S), len(L)

    def c(entry, d):
        _, t, b = entry
        if ties == "w":
            return 1.0 if d >= t else 0.0
        return min(1.0, max(0.0, (d - t + 1) / (b - t + 1)))

    cs = {e[0]: e for e in S}
    cl = {e[0]: e for e in L}
    unseen = [e for e in L if e[0] not in cs]  # L's items S lacks, in L's order

    def X(d):
        return sum(c(cs[i], d) * c(cl[i], d) for i in cs if i in cl)

    def agree(x_d, d):
        sum_l = sum(c(e, d) for e in L)
        sq_l = math.sqrt(sum(c(e, d) ** 2 for e in L))
        if d <= s:
            sum_s = sum(c(e, d) for e in S)
            sq_s = math.sqrt(sum(c(e, d) ** 2 for e in S))
        else:
            sum_s, sq_s = d, math.sqrt(d)
        if ties == "w":
            return 2 * x_d / (sum_s + sum_l)
        if ties == "a":
            return x_d / d
        return x_d / sq_s / sq_l

    a_s = agree(X(s), s)
    A_min, A_max, A_ext = [], [], []
    for d in range(1, l + 1):
        x_d = X(d)
        A_min.append(agree(x_d, d))
        if d <= s:
            A_max.append(A_min[-1])
            A_ext.append(A_min[-1])
            continue
        A_max.append(agree(x_d + sum(c(u, d) for u in unseen[: d - s]), d))
        nz = [c(u, d) for u in unseen if c(u, d) > 0]
        A_ext.append(agree(x_d + (d - s) * a_s * (sum(nz) / len(nz) if nz else 0.0), d))
    xl = X(l)
    k = (1 - p) / p
    lo = k * (
        sum(a * p**d for d, a in enumerate(A_min, 1))
        + xl * (math.log(1 / (1 - p)) - sum(p**d / d for d in range(1, l + 1)))
    )
    f = l + s - xl
    tail_max, d = 0.0, l + 1
    while d < f + 1:
        tail_max += (2 * d - l - s + xl) / d * p**d
        d += 1
    hi = k * (sum(a * p**d for d, a in enumerate(A_max, 1)) + tail_max + p ** (f + 1) / (1 - p))
    ext = k * (
        sum(a * p**d for d, a in enumerate(A_ext, 1))
        + (xl + (l - s) * a_s) / l * p ** (l + 1) / (1 - p)
    )
    return {"ext": ext, "min": lo, "max": hi, "res": hi - lo}


def orderings(r: list):
    """Every tie-free list a ranking with ties can be laid out as."""
    groups = [sorted(g) if isinstance(g, (set, frozenset)) else [g] for g in r]
    for perm in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for g in perm for i in g]


def n_orderings(r: list) -> int:
    return math.prod(math.factorial(len(g)) if isinstance(g, (set, frozenset)) else 1 for g in r)


@st.composite
def tied_ranking(draw, alphabet="abcdefgh", max_len=6, min_len=1):
    """A ranking of distinct items with random tie groups (scores from a small set)."""
    items = draw(
        st.lists(st.sampled_from(alphabet), min_size=min_len, max_size=max_len, unique=True)
    )
    scores = draw(st.lists(st.integers(0, 3), min_size=len(items), max_size=len(items)))
    by = {}
    for i, s in zip(items, scores):
        by.setdefault(s, []).append(i)
    return [set(by[s]) if len(by[s]) > 1 else by[s][0] for s in sorted(by, reverse=True)]


# --- tie-free RBO -------------------------------------------------------------------------------------------


def test_tie_free_equals_the_rbo_package_and_the_transcription():
    rbo_pkg = pytest.importorskip("rbo", reason="pip install rbo==0.1.3")
    rng = np.random.default_rng(0)
    for _ in range(40):
        S = list(rng.permutation(30)[: rng.integers(1, 15)].astype(str))
        L = list(rng.permutation(30)[: rng.integers(1, 20)].astype(str))
        for p in (0.5, 0.9, 0.98):
            ours = rbo(S, L, p=p)["ext"]
            assert ours == pytest.approx(rbo_pkg.RankingSimilarity(S, L).rbo_ext(p=p), abs=1e-12)
            assert ours == pytest.approx(webber_ext(S, L, p), abs=1e-12)


@given(
    st.lists(st.integers(0, 15), min_size=1, max_size=12, unique=True),
    st.lists(st.integers(0, 15), min_size=1, max_size=12, unique=True),
    st.sampled_from([0.5, 0.8, 0.9]),
)
@settings(max_examples=examples(80), deadline=None)
def test_tie_free_ext_equals_webber_eq32(S, L, p):
    S, L = [str(i) for i in S], [str(i) for i in L]
    r = rbo(S, L, p=p)
    assert r["ext"] == pytest.approx(webber_ext(S, L, p), abs=1e-12)
    assert r["min"] - 1e-12 <= r["ext"] <= r["max"] + 1e-12
    for v in ("w", "b"):  # on tie-free rankings the three variants are Webber et al.'s RBO
        assert rbo(S, L, p=p, ties=v) == pytest.approx(r, abs=1e-12)


@pytest.mark.parametrize(
    ("x", "y", "average_overlap"),
    [
        ("abcdefg", "zcavwxy", 0.312),  # Webber et al. 2010, Figure 5
        ("abcde", "bacde", 0.8),  # the examples of the rbo package's tests (average overlap, p = 1)
        ("abcde", "abced", 0.95),
    ],
)
def test_published_overlaps(x, y, average_overlap):
    X = overlaps(list(x), list(y))
    assert round(float(np.mean(X / np.arange(1, len(X) + 1))), 3) == average_overlap
    # and RBO_min, which only counts the seen prefix and a tail that never overlaps, is its definition
    p = 0.9
    d = np.arange(1, len(X) + 1)
    want = (1 - p) / p * (np.sum(X / d * p**d) + X[-1] * (math.log(1 / (1 - p)) - np.sum(p**d / d)))
    assert rbo(list(x), list(y), p=p)["min"] == pytest.approx(want)


def test_identical_and_disjoint():
    x = list("abcdef")
    r = rbo(x, x, p=0.9)
    assert r["ext"] == pytest.approx(1.0) and r["max"] == pytest.approx(1.0)
    # RBO_min: the unseen tails never overlap (Webber et al. eq. 11)
    want = (
        (1 - 0.9)
        / 0.9
        * (
            sum(0.9**d for d in range(1, 7))
            + 6 * (math.log(10) - sum(0.9**d / d for d in range(1, 7)))
        )
    )
    assert r["min"] == pytest.approx(want) and r["res"] == pytest.approx(1 - want)
    r = rbo(x, list("uvwxyz"), p=0.9)
    assert r["ext"] == 0.0 and r["min"] == 0.0


# --- Corsi and Urbano's variants --------------------------------------------------------------------------


def test_hand_worked_variants():
    """x = a (b c), y = b a c, p = 0.5, worked by hand from the definitions.

    w: overlaps 0, 2, 3 with prefix sizes (1,1), (3,2), (3,3): A = 0, 4/5, 1; ext = .8*.25 + .125 + .125.
    a: b and c are each in the top 2 of x with probability 1/2: X = 0, 1.5, 3: A = 0, .75, 1.
    b: as a, over the norms: A_2 = 1.5 / sqrt(1.5) / sqrt(2).
    """
    x, y = ["a", {"b", "c"}], ["b", "a", "c"]
    assert rbo(x, y, p=0.5, ties="w")["ext"] == pytest.approx(0.45)
    a = rbo(x, y, p=0.5, ties="a")
    assert a["ext"] == pytest.approx(0.4375)
    assert a["min"] == pytest.approx(0.3125 + 3 * (math.log(2) - (0.5 + 0.125 + 0.125 / 3)))
    assert a["max"] == pytest.approx(0.4375)
    assert rbo(x, y, p=0.5, ties="b")["ext"] == pytest.approx(1.5 / math.sqrt(3) * 0.25 + 0.25)
    # the two orderings of x give 0.5 and 0.375: E = 0.4375 (= RBO^a for rankings of one length)
    o = rbo_orderings(x, y, p=0.5)
    assert (o["expected"], o["min"], o["max"]) == pytest.approx((0.4375, 0.375, 0.5))


@given(
    tied_ranking(), tied_ranking(), st.sampled_from([0.5, 0.9]), st.sampled_from(["w", "a", "b"])
)
@settings(max_examples=examples(120), deadline=None)
def test_variants_equal_the_transcription(x, y, p, ties):
    assert rbo(x, y, p=p, ties=ties) == pytest.approx(corsi_urbano(x, y, p, ties), abs=1e-12)


# --- the bounds for a small persistence -------------------------------------------------------------------


def exact_rbo(S: list, L: list, p: float) -> float:
    """``(1 - p) sum_d |S[:d] & L[:d]| / d p^(d-1)`` over the depths term by term (positive terms: no
    cancellation), to where the weight falls below 1e-17: RBO of two lists taken as infinite (they are
    extended as far as that)."""
    seen_s: set = set()
    seen_l: set = set()
    terms, weight, d = [], 1 - p, 1
    while weight > 1e-17:
        seen_s.add(S[d - 1])
        seen_l.add(L[d - 1])
        terms.append(len(seen_s & seen_l) / d * weight)
        weight *= p
        d += 1
    return math.fsum(terms)


def extended(S: list, L: list, fill: int = 400) -> tuple[list, list, list, list]:
    """Webber et al.'s RBO_min and RBO_max as lists: the pair each bound is the RBO of.  Min: both go on
    with items the other never holds; max: each takes the other's unseen items, in the other's order, as
    early as it can, then the same new items in the same order (``S`` is the shorter)."""
    fresh = [f"n{i}" for i in range(fill)]
    low = (S + [f"s{i}" for i in range(fill)], L + [f"l{i}" for i in range(fill)])
    high = (S + [i for i in L if i not in S] + fresh, L + [i for i in S if i not in L] + fresh)
    return *low, *high


@given(
    st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True),
    st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True),
    st.sampled_from([1e-15, 1e-12, 1e-8, 1e-4, 0.1, 0.5, 0.6, 0.9]),
)
@settings(max_examples=examples(200), deadline=None)
def test_bounds_equal_brute_force_for_any_persistence(x, y, p):
    """RBO_min and RBO_max are the RBO of the extensions that agree least and most, summed in exact
    rationals; ext lies between them and the residual is never negative, down to p = 1e-15 (where the
    bounds once cancelled to -19 and 0.9468 > ext)."""
    S, L = (x, y) if len(x) <= len(y) else (y, x)
    lo_s, lo_l, hi_s, hi_l = extended(S, L)
    for ties in ("w", "a", "b"):
        r = rbo(x, y, p=p, ties=ties)
        assert r["min"] == pytest.approx(exact_rbo(lo_s, lo_l, p), abs=1e-12)
        assert r["max"] == pytest.approx(exact_rbo(hi_s, hi_l, p), abs=1e-12)
        assert r["min"] - 1e-12 <= r["ext"] <= r["max"] + 1e-12 and r["res"] >= 0


@given(
    tied_ranking(),
    tied_ranking(),
    st.sampled_from([1e-15, 1e-12, 1e-8, 1e-3]),
    st.sampled_from(["w", "a", "b"]),
)
@settings(max_examples=examples(120), deadline=None)
def test_tied_bounds_hold_for_a_small_persistence(x, y, p, ties):
    r = rbo(x, y, p=p, ties=ties)
    assert all(math.isfinite(v) for v in r.values())
    assert r["min"] - 1e-12 <= r["ext"] <= r["max"] + 1e-12 and r["res"] >= 0
    assert 0 <= r["min"] and r["max"] <= 1 + 1e-12


def test_similarity_bounds_for_a_tiny_persistence():
    a = {"q": {"d1": 3.0, "d2": 2.0, "d3": 2.0, "d4": 1.0}}
    b = {"q": {"d2": 3.0, "d1": 2.5, "d5": 2.0, "d4": 2.0}}
    for p in (1e-17, 1e-15, 1e-12, 1e-8):
        row = similarity(a, b, p=p).per_query[0]
        assert row["rbo_min"] - 1e-12 <= row["rbo"] <= row["rbo_max"] + 1e-12, (p, row)
        assert 0 <= row["rbo_res"] <= 1


# --- over the tie orderings: brute force ------------------------------------------------------------------


@given(
    tied_ranking(max_len=5),
    tied_ranking(max_len=5),
    st.sampled_from([0.5, 0.9]),
    st.one_of(st.none(), st.integers(1, 5)),
)
@settings(max_examples=examples(80), deadline=None)
def test_expected_min_max_equal_brute_force(x, y, p, depth):
    assume(n_orderings(x) * n_orderings(y) <= 1500)
    vals = []
    for ox in orderings(x):
        for oy in orderings(y):
            a, b = (ox, oy) if depth is None else (ox[:depth], oy[:depth])
            vals.append(webber_ext(a, b, p))
    o = rbo_orderings(x, y, p=p, depth=depth)
    assert o["expected"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert o["min"] == pytest.approx(min(vals), abs=1e-12)
    assert o["max"] == pytest.approx(max(vals), abs=1e-12)
    if depth is None and len(_flat(x)) == len(_flat(y)):
        assert o["expected"] == pytest.approx(rbo(x, y, p=p, ties="a")["ext"], abs=1e-12)


def _scores(r: list) -> dict:
    """A ranking with ties as a run's scores for one query."""
    return {
        i: float(len(r) - g)
        for g, e in enumerate(r)
        for i in (sorted(e) if isinstance(e, set) else [e])
    }


@given(tied_ranking(max_len=5), tied_ranking(max_len=5), st.integers(1, 5))
@settings(max_examples=examples(60), deadline=None)
def test_overlap_at_k_equals_brute_force(x, y, k):
    assume(n_orderings(x) * n_orderings(y) <= 1500)
    vals = [len(set(ox[:k]) & set(oy[:k])) / k for ox in orderings(x) for oy in orderings(y)]
    r = similarity({"q": _scores(x)}, {"q": _scores(y)}, k=k).per_query[0]
    assert r["overlap_expected"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert r["overlap_lo"] == pytest.approx(min(vals), abs=1e-12)
    assert r["overlap_hi"] == pytest.approx(max(vals), abs=1e-12)
    assert r["overlap_lo"] <= r["overlap"] <= r["overlap_hi"]
    assert r["rbo_lo"] - 1e-12 <= r["rbo"] <= r["rbo_hi"] + 1e-12


# --- rank correlations ----------------------------------------------------------------------------------


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40))
@settings(max_examples=examples(100), deadline=None)
def test_tau_b_equals_scipy(pairs):
    from scipy.stats import kendalltau

    a, b = np.array(pairs, dtype=float).T
    want = kendalltau(a, b).statistic
    got = kendall_tau_b(a, b)
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-12)


def test_tau_b_of_runs_uses_the_shared_documents():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(3)
    a = {f"d{i}": float(v) for i, v in enumerate(rng.integers(0, 6, 50))}
    b = {f"d{i}": float(v) for i, v in enumerate(rng.integers(0, 6, 60)) if i % 7}
    shared = sorted(set(a) & set(b))
    r = similarity({"q": a}, {"q": b}).per_query[0]
    assert r["shared"] == len(shared)
    assert r["tau_b"] == pytest.approx(
        kendalltau([a[d] for d in shared], [b[d] for d in shared]).statistic
    )


def tau_ap_loops(ref: list, other: list) -> float:
    """Yilmaz, Aslam and Robertson (2008), eq. 3: ``other`` compared to ``ref`` (the same items)."""
    n = len(other)
    pos = {d: i for i, d in enumerate(ref)}
    total = 0.0
    for i in range(1, n):
        total += sum(pos[other[j]] < pos[other[i]] for j in range(i)) / i
    return 2 / (n - 1) * total - 1


def test_tau_ap_equals_the_definition():
    rng = np.random.default_rng(1)
    for n in (2, 3, 10, 40):
        ref = [f"d{i}" for i in range(n)]
        other = list(rng.permutation(ref))
        pos = {d: i for i, d in enumerate(ref)}
        assert tau_ap([pos[d] for d in other]) == pytest.approx(tau_ap_loops(ref, other))
    assert tau_ap(list(range(5))) == 1.0 and tau_ap(list(range(5))[::-1]) == -1.0
    # in runs: RUN_A is the reference, on the oblivious orders of the shared documents
    a = {"q": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
    b = {"q": {"d2": 4.0, "d1": 3.0, "d4": 2.0, "d3": 1.0, "x": 0.5}}
    assert similarity(a, b).per_query[0]["tau_ap"] == pytest.approx(
        tau_ap_loops(["d1", "d2", "d3", "d4"], ["d2", "d1", "d4", "d3"])
    )


# two rankings of 4 to 6 of 6 items share at least 2 (few draws filtered out)
@given(
    tied_ranking(alphabet="abcdef", min_len=4, max_len=6),
    tied_ranking(alphabet="abcdef", min_len=4, max_len=6),
)
@settings(max_examples=examples(120), deadline=None)
def test_tau_ap_expected_min_max_equal_brute_force(x, y):
    """tau-AP of y against the reference x over every pair of tie orderings, on the shared items, by the
    definition's loops (tau_ap_loops), against tau_ap_orderings."""
    from tierank.analysis.similarity import tau_ap_orderings

    assume(n_orderings(x) * n_orderings(y) <= 1500)
    shared = {t[0] for t in _flat(x)} & {t[0] for t in _flat(y)}
    assume(len(shared) >= 2)
    vals = []
    for ox in orderings(x):
        for oy in orderings(y):
            vals.append(
                tau_ap_loops([d for d in ox if d in shared], [d for d in oy if d in shared])
            )
    o = tau_ap_orderings(x, y)
    assert o["method"] == "exact"
    assert o["expected"] == pytest.approx(np.mean(vals), abs=1e-12)
    assert o["min"] == pytest.approx(min(vals), abs=1e-12)
    assert o["max"] == pytest.approx(max(vals), abs=1e-12)
    lay_x = [d for g in x for d in (sorted(g) if isinstance(g, set) else [g]) if d in shared]
    lay_y = [d for g in y for d in (sorted(g) if isinstance(g, set) else [g]) if d in shared]
    assert o["oblivious"] == pytest.approx(tau_ap_loops(lay_x, lay_y), abs=1e-12)


def test_tau_ap_past_the_enumeration_is_sampled_and_inside_the_range(monkeypatch):
    import tierank.analysis.similarity as sim

    x = ["a", {"b", "c", "d"}, "e", {"f", "g"}]
    y = [{"c", "a"}, "b", {"e", "g", "d"}, "f"]
    exact = sim.tau_ap_orderings(x, y)
    assert exact["method"] == "exact"
    monkeypatch.setattr(sim, "TAU_AP_ENUMERATION", 1)
    sampled = sim.tau_ap_orderings(x, y, samples=30, seed=3)
    assert (sampled["method"], sampled["samples"], sampled["seed"]) == ("sampled", 30, 3)
    assert sampled["expected"] == pytest.approx(
        exact["expected"], abs=1e-12
    )  # the expectation stays exact
    assert exact["min"] <= sampled["min"] <= sampled["max"] <= exact["max"]
    # the two most and least concordant orderings are among the candidates: here they attain the range
    assert (sampled["min"], sampled["max"]) == pytest.approx((exact["min"], exact["max"]))


def test_tau_ap_without_ties_is_the_oblivious_value_bit_for_bit():
    from tierank.analysis.similarity import tau_ap_orderings

    o = tau_ap_orderings(["a", "b", "c", "d"], ["b", "a", "d", "c", "x"])
    assert (
        o["expected"]
        == o["min"]
        == o["max"]
        == o["oblivious"]
        == tau_ap_loops(list("abcd"), list("badc"))
    )


def test_similarity_reports_tau_ap_over_tie_orderings():
    a = {"q": {"d1": 4.0, "d2": 3.0, "d3": 3.0, "d4": 1.0}}
    b = {"q": {"d2": 4.0, "d1": 4.0, "d4": 2.0, "d3": 1.0}}
    sim = similarity(a, b)
    r = sim.per_query[0]
    assert r["tau_ap_lo"] <= r["tau_ap_expected"] <= r["tau_ap_hi"]
    assert r["tau_ap_lo"] <= r["tau_ap"] <= r["tau_ap_hi"]
    assert sim.mean["tau_ap_expected"] == r["tau_ap_expected"] and "tau_ap_method" not in r
    assert sim.settings["tau_ap_extremes"]["sampled_queries"] == 0


# --- runs ---------------------------------------------------------------------------------------------------


def test_queries_in_one_run_only_are_left_out():
    a = {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {"d1": 1.0}}
    b = {"q1": {"d2": 1.0, "d1": 0.5}, "q3": {"d1": 1.0}}
    sim = similarity(a, b)
    assert [r["qid"] for r in sim.per_query] == ["q1"]
    assert sim.only_a == ["q2"] and sim.only_b == ["q3"]
    assert sim.mean["rbo"] == sim.per_query[0]["rbo"]


def test_bad_parameters():
    from tierank.errors import TierankInputError

    for p in (0, 1, 1.5, "x"):
        with pytest.raises(TierankInputError, match="persistence"):
            rbo(["a"], ["a"], p=p)
    with pytest.raises(TierankInputError, match="depth"):
        similarity({"q": {"a": 1.0}}, {"q": {"a": 1.0}}, depth=0)
    with pytest.raises(TierankInputError, match="tie treatment"):
        rbo(["a"], ["a"], ties="x")
    with pytest.raises(TierankInputError, match="more than once"):
        ranking_from_groups(["a", {"a", "b"}])


def test_cli_formats_and_errors(tmp_path):
    a = tmp_path / "a.run"
    b = tmp_path / "b.run"
    a.write_text("q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 2.0 A\nq2 Q0 d1 1 1.0 A\n")
    b.write_text("q1 Q0 d1 1 3.0 B\nq1 Q0 d3 2 2.5 B\nq1 Q0 d2 3 2.0 B\nq3 Q0 d1 1 1.0 B\n")
    doc = json.loads(invoke("similarity", a, b, "-q", "--format", "json").stdout)
    assert [r["qid"] for r in doc["queries"]] == ["q1"] and doc["only_a"] == ["q2"]
    assert doc["mean"]["rbo"] == pytest.approx(similarity(str(a), str(b)).mean["rbo"])
    lines = invoke("similarity", a, b, "-q", "--format", "jsonl").stdout.splitlines()
    assert [json.loads(x)["qid"] for x in lines] == ["q1", "mean"]
    tsv = invoke("similarity", a, b, "--format", "tsv", "--p", "0.8", "-k", "2").stdout.splitlines()
    assert tsv[0].split("\t")[0] == "qid" and tsv[1].startswith("mean\t") and len(tsv) == 2
    table = invoke("similarity", a, b, "-q")
    assert "q1" in table.stdout and "left out" in table.stderr
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 x A\n")
    p = invoke("similarity", a, bad, check=False)
    assert p.returncode == 2 and "bad.run" in p.stderr and "Traceback" not in p.stderr
    p = invoke("similarity", a, b, "--p", "1", check=False)
    assert p.returncode == 2 and "persistence" in p.stderr
    other = tmp_path / "other.run"
    other.write_text("q9 Q0 d1 1 1.0 C\n")
    p = invoke("similarity", a, other, check=False)
    assert p.returncode == 2 and "share no query" in p.stderr


@given(tied_ranking(max_len=5), tied_ranking(max_len=5), st.sampled_from([6, 50, 10**12, 10**30]))
@settings(max_examples=examples(60), deadline=None)
def test_overlap_past_the_rankings_is_the_whole_overlap_over_k(x, y, big):
    """Past both rankings the overlap stops growing: at any k (10^12 once asked for 7 TiB) it is the
    overlap at the longer ranking's length times that length over k."""
    assume(n_orderings(x) * n_orderings(y) <= 1500)
    at = similarity({"q": _scores(x)}, {"q": _scores(y)}, k=big).per_query[0]
    n = max(len(_flat(x)), len(_flat(y)))
    full = similarity({"q": _scores(x)}, {"q": _scores(y)}, k=n).per_query[0]
    for f in ("overlap", "overlap_expected", "overlap_lo", "overlap_hi"):
        assert at[f] == pytest.approx(full[f] * n / big, rel=1e-12, abs=1e-300)
    vals = [len(set(ox) & set(oy)) / big for ox in orderings(x) for oy in orderings(y)]
    assert at["overlap_hi"] == pytest.approx(max(vals), rel=1e-12)
