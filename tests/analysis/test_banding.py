"""Geometric rank bands and their worst-case bounds (Yang, Moffat & Turpin, Section 4, Table 2)."""

import math
from fractions import Fraction

import numpy as np
import pytest

import tierank
from tierank.analysis.banding import (
    PAPER_TABLE2,
    band_of_rank,
    band_run,
    band_starts,
    worst_case_rbp,
    worst_case_rr,
    worst_case_table,
)
from tierank.errors import TierankInputError


def _bands(rho, depth):
    s = band_starts(rho, depth).tolist()
    return [(b, min(n - 1, depth)) for b, n in zip(s[:-1], s[1:])]


# --------------------------------------------------------------------------- band definition


def test_band_starts_paper_examples():
    assert _bands(2.0, 7) == [(1, 1), (2, 3), (4, 7)]
    assert _bands(1.62, 11) == [(1, 1), (2, 3), (4, 6), (7, 11)]
    # rho = 1.62: widths are Fibonacci numbers
    widths = [e - b + 1 for b, e in _bands(1.62, 500)[:-1]]
    assert widths[:8] == [1, 2, 3, 5, 8, 13, 21, 34]


def test_band_of_rank_and_band_run():
    assert band_of_rank(np.arange(1, 12), 1.62).tolist() == [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4]
    run = tierank.to_run({"q": {f"d{i}": 10.0 - i for i in range(7)}, "a": {"x": 1.0, "y": 2.0}})
    banded = band_run(run, 2.0)
    got = dict(zip(zip(banded.qid.to_pylist(), banded.docid.to_pylist()), banded.score.tolist()))
    assert [got[("q", f"d{i}")] for i in range(7)] == [1, 1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 3, 1 / 3]
    assert got[("a", "y")] == 1.0 and got[("a", "x")] == 0.5


def test_paper_side_claims_on_bands():
    # "When rho <= 2 the first group always contains a single document."
    for rho in np.arange(1.01, 2.001, 0.01):
        assert _bands(round(float(rho), 2), 5)[0] == (1, 1)
    # "rho > 1.5, the first value for which ranks 2 and 3 are placed in the same group"
    assert band_of_rank(np.array([2, 3]), 1.5).tolist() == [2, 3]
    assert band_of_rank(np.array([2, 3]), 1.5001).tolist() == [2, 2]


# --------------------------------------------------------------------------- brute force

# (rho, n): n documents, all 2**n - 1 non-empty relevance vectors (the empty one changes nothing)
CASES = [(2.0, 12), (1.62, 12), (1.4, 12), (1.2, 12), (1.1, 13), (4.0, 11)]
MEASURES = ["RR", "RBP(p=0.5)", "RBP(p=0.85)"]


def _brute(rho, n):
    """Per measure, every (original value - expected value of the banded run), via tierank."""
    qrels, run = {}, {}
    docs = [f"d{i:02d}" for i in range(n)]
    for bits in range(1, 2**n):
        q = f"q{bits:05d}"
        qrels[q] = {d: (bits >> i) & 1 for i, d in enumerate(docs)}  # every doc judged, 0 or 1
        run[q] = {d: float(n - i) for i, d in enumerate(docs)}  # strictly decreasing
    run = tierank.to_run(run)
    orig = tierank.evaluate(qrels, run, MEASURES, tie_break="input").per_query()
    band = tierank.evaluate(qrels, band_run(run, rho), MEASURES, tie_break="input").per_query()
    assert len(orig) == len(band) == len(MEASURES) * (2**n - 1)
    assert (orig["oblivious"] == orig["expected"]).all()  # no ties in the original
    m = orig.merge(band, on=["query", "measure"], suffixes=("_o", "_b"))
    m["d"] = m["oblivious_o"] - m["expected_b"]
    return {meas: g["d"].to_numpy() for meas, g in m.groupby("measure")}


@pytest.fixture(scope="module", params=CASES, ids=[f"rho{r}-n{n}" for r, n in CASES])
def brute(request):
    rho, n = request.param
    return rho, n, _brute(rho, n)


def test_worst_case_rr_is_max_over_all_relevance_vectors(brute):
    rho, n, d = brute
    d = d["RR"]
    assert worst_case_rr(rho, n) == pytest.approx(d.max(), abs=1e-12)
    assert worst_case_rr(rho, n, kind="loss") == pytest.approx(d.max(), abs=1e-12)
    assert worst_case_rr(rho, n, kind="gain") == pytest.approx(-d.min(), abs=1e-12)
    assert worst_case_rr(rho, n, kind="abs") == pytest.approx(np.abs(d).max(), abs=1e-12)


@pytest.mark.parametrize("p", [0.5, 0.85])
def test_worst_case_rbp_is_max_over_all_relevance_vectors(brute, p):
    rho, n, d = brute
    d = d[f"RBP(p={p:g})"]
    for kind, want in [("loss", d.max()), ("gain", -d.min()), ("abs", np.abs(d).max())]:
        assert worst_case_rbp(rho, p, n, kind=kind) == pytest.approx(want, abs=1e-12), kind


def test_rr_gain_is_not_a_lone_document_at_the_band_end():
    # rho = 4: bands [1..3], [4..11]. Loss: rank 1 alone, 1 - (1 + 1/2 + 1/3)/3 = 7/18.
    # Gain: ranks 2 and 3 relevant (RR 1/2; banded 2/3 * 1 + 1/3 * 1/2 = 5/6), 1/3 > 11/18 - 1/3.
    assert worst_case_rr(4.0, 11) == pytest.approx(7 / 18)
    assert worst_case_rr(4.0, 11, kind="gain") == pytest.approx(1 / 3)
    assert worst_case_rr(4.0, 11, kind="abs") == worst_case_rr(4.0, 11)
    # bands of width 2 (the first multi-document band whenever rho <= 3): gain == loss
    for rho in (1.1, 1.2, 1.4, 1.7, 2.0, 3.0):
        assert worst_case_rr(rho, kind="gain") == pytest.approx(worst_case_rr(rho), abs=1e-15)


def test_rr_gain_of_one_band_can_exceed_its_loss():
    from tierank.analysis.banding import _rr_gain_of_band

    b, e = 9, 22
    loss = 1 / b - np.mean(1 / np.arange(b, e + 1))
    assert _rr_gain_of_band(b, e) > loss
    # ... yet over whole bandings "abs" equals "loss" (the first band dominates)
    for rho in (1.3, 2.5, 3.5, 5.0, 8.0):
        assert worst_case_rr(rho, 300, kind="abs") == worst_case_rr(rho, 300)


def test_rbp_optimum_is_a_short_prefix_of_each_band():
    # The relevant documents of the worst case are the first t_g of each band, with
    # 1 <= t_g <= floor(width / 2) for bands of two or more: they end before the band's
    # middle rank (b+e)/2, which is what the paper's "t_g <= (e_g + b_g)/2" should say.
    for rho in (1.1, 1.2, 1.4, 1.62, 1.7, 2.0, 3.0):
        for p in (0.5, 0.85, 0.95, 0.99):
            for b, e in _bands(rho, 400)[:-1]:
                w = (1 - p) * p ** (np.arange(b, e + 1) - 1.0)
                above = w > w.mean()
                t = int(above.sum())
                assert above[:t].all() and not above[t:].any()
                if e > b:
                    assert 1 <= t <= (e - b + 1) // 2


def test_invalid_arguments():
    with pytest.raises(TierankInputError):
        worst_case_rr(1.0)
    with pytest.raises(TierankInputError):
        worst_case_rr(2.0, kind="max")
    for bad in (0, -3, 2.5, "x", None, True):
        with pytest.raises(TierankInputError):
            worst_case_rr(2.0, depth=bad)
    with pytest.raises(TierankInputError):
        worst_case_rbp(2.0, 1.0)
    with pytest.raises(TierankInputError):
        worst_case_rbp(2.0, 0.5, kind="both")


# --------------------------------------------------------------------------- Table 2


def test_table2_reproduced_exactly():
    """All 15 printed cells of Table 2 are reproduced to 4 decimals, with b_{g+1} = ceil(rho * b_g)."""
    ours = worst_case_table()
    assert [r["rho"] for r in ours] == [r["rho"] for r in PAPER_TABLE2]
    for mine, paper in zip(ours, PAPER_TABLE2):
        for col in ("RR", "RBP(p=0.5)", "RBP(p=0.85)"):
            assert round(mine[col], 4) == paper[col], (paper["rho"], col, mine[col])
    # the unrounded values are not near a rounding boundary
    for mine in ours:
        for col in ("RR", "RBP(p=0.5)", "RBP(p=0.85)"):
            assert abs(mine[col] * 1e4 % 1 - 0.5) > 0.05
    # RR closed forms: first multi-document bands [11..12], [6..7], [3..4], [2..3], [2..3]
    assert [r["RR"] for r in ours] == pytest.approx([1 / 264, 1 / 84, 1 / 24, 1 / 12, 1 / 12])


def test_table2_at_other_depths():
    # depth only matters through the weights cut off: at depth 50 the RBP0.85 values drop
    assert worst_case_table(depth=50)[-1]["RR"] == pytest.approx(1 / 12)
    assert worst_case_table(depth=50)[-1]["RBP(p=0.85)"] < 0.0971


def _first_multi_band_start(rho):
    for b, e in _bands(rho, 10_000):
        if e > b:
            return b


def test_paper_v_formula_is_off_by_one_unless_integral():
    """The text's v = 1 + ceil(1/(rho-1)) disagrees with its own recursion (and with Table 2).

    The band starting at b is a singleton iff ceil(rho*b) = b + 1 iff b <= 1/(rho-1), and bands
    before the first multi-document one are singletons (b_g = g); so v = floor(1/(rho-1)) + 1.
    """
    for k in range(101, 300):
        rho = Fraction(k, 100)
        v = _first_multi_band_start(float(rho))
        assert v == math.floor(1 / (rho - 1)) + 1, float(rho)
        paper_v = 1 + math.ceil(1 / (rho - 1))
        assert paper_v == (v if (1 / (rho - 1)).denominator == 1 else v + 1), float(rho)
    # the cases of the paper: 1.4 -> [1], [2], [3..4] (text: v = 4); 1.62 and 1.7 -> [2..3] (text: 3)
    assert [_first_multi_band_start(r) for r in (1.1, 1.2, 1.4, 1.62, 1.7, 2.0)] == [
        11,
        6,
        3,
        2,
        2,
        2,
    ]
    # Table 2's RR for rho = 1.4 is that of band [3..4]; a lone relevant document at the text's v = 4
    # would be at the *end* of that band and gain, not lose.
    assert worst_case_rr(1.4) == pytest.approx(1 / 3 - (1 / 3 + 1 / 4) / 2)


def test_other_band_recursions_do_not_reproduce_table2():
    """floor / round variants of the recursion differ from Table 2 (except at rho = 2)."""

    def rr_loss(starts, depth=1000):
        best = 0.0
        for b, nxt in zip(starts[:-1], starts[1:]):
            e = min(nxt - 1, depth)
            best = max(best, 1 / b - np.mean(1 / np.arange(b, e + 1)))
        return best

    def starts(rho, step):
        s = [1]
        while s[-1] <= 1000:
            s.append(max(step(rho * s[-1]), s[-1] + 1))
        return s

    paper = [r["RR"] for r in PAPER_TABLE2]
    rhos = [r["rho"] for r in PAPER_TABLE2]
    for step in (math.floor, round):
        got = [round(rr_loss(starts(rho, step)), 4) for rho in rhos]
        assert got[-1] == paper[-1] and got[2] != paper[2]
    # b + ceil((rho - 1) b) is the same recursion as ceil(rho b) (b is an integer), exactly
    for rho in rhos:
        r, s = Fraction(str(rho)), [1]
        while s[-1] <= 1000:
            s.append(s[-1] + math.ceil((r - 1) * s[-1]))
        assert s == band_starts(rho, 1000).tolist()


@pytest.mark.parametrize("rho", [float("inf"), float("-inf"), float("nan"), 1.0, 0.5, "2"])
def test_band_starts_refuses_what_is_not_a_finite_number_above_1(rho):
    """`inf` and `nan` reached Fraction() and ended in a ValueError."""
    with pytest.raises(TierankInputError, match="rho must be a finite number > 1, got "):
        band_starts(rho, 10)


def test_huge_rho_puts_every_rank_in_band_1():
    """rho = 1e300 made the second band start overflow int64 (OverflowError)."""
    assert band_starts(1e300, 1000).tolist() == [1, np.iinfo(np.int64).max]
    assert band_of_rank(np.array([1, 2, 1000]), 1e300).tolist() == [1, 1, 1]
    assert worst_case_table([1e300], [0.5], depth=5)[0]["rho"] == 1e300
