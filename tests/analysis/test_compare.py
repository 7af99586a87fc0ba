"""tierank.analysis.compare: tie-aware pairwise system comparison, flips, bands."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from rich.console import Console

import tierank
from tierank.analysis.compare import Comparison, compare, records
from tierank.report.terminal import compare_tables


def _h(k: int) -> float:
    return sum(1.0 / i for i in range(1, k + 1))


# --- (1) a tie flip ------------------------------------------------------------------------------

# Relevant document "z" in every query.  System A ties z with k-1 others at the top: trec_eval
# breaks ties by docno descending, so z comes first and A's oblivious RR is 1 everywhere, while its
# expected RR is H_k / k.  System B has no ties and puts z at rank 2, 2, 1, 3.
KS = (4, 5, 6, 5)
B_RANKS = (2, 2, 1, 3)
FLIP_QRELS = {f"q{i}": {"z": 1, "a": 0} for i in range(len(KS))}
FLIP_RUNS = {
    "A": {f"q{i}": {"z": 1.0, **{f"d{j}": 1.0 for j in range(k - 1)}} for i, k in enumerate(KS)},
    "B": {
        f"q{i}": {**{f"d{j}": 10.0 - j for j in range(r - 1)}, "z": 10.0 - r + 1, "e": 0.5}
        for i, r in enumerate(B_RANKS)
    },
}


def test_tie_flip_oblivious_says_a_expected_says_b():
    cmp = compare(FLIP_RUNS, FLIP_QRELS, "RR")
    assert isinstance(cmp, Comparison)
    assert [s.name for s in cmp.systems] == ["B", "A"]  # sorted by expected
    a, b = cmp.system("A"), cmp.system("B")
    assert a.oblivious == pytest.approx(1.0)
    assert a.expected == pytest.approx(np.mean([_h(k) / k for k in KS]))
    assert (a.min, a.max) == pytest.approx((np.mean([1 / k for k in KS]), 1.0))
    assert (
        b.oblivious
        == b.expected
        == b.min
        == b.max
        == pytest.approx(np.mean([1 / r for r in B_RANKS]))
    )
    assert a.oblivious > b.oblivious and b.expected > a.expected

    (pair,) = cmp.pairs
    assert (pair.a, pair.b) == ("B", "A")
    assert pair.diff_expected == pytest.approx(b.expected - a.expected) and pair.diff_expected > 0
    assert pair.diff_oblivious < 0
    assert pair.order_flip and pair.undecidable
    assert pair.flags[:2] == ["FLIP", "undecidable"]
    assert cmp.kendall_tau == pytest.approx(-1.0)
    assert cmp.pair("A", "B") is pair

    # the summaries are tierank.evaluate's aggregates
    agg = tierank.evaluate(FLIP_QRELS, FLIP_RUNS["A"], ["RR"]).aggregate().iloc[0]
    for col in ("oblivious", "expected", "min", "max", "range", "bias", "std"):
        assert getattr(a, col) == pytest.approx(agg[col])


def test_flip_depends_on_the_tie_break():
    # docno ascending puts z last in its tie: A's oblivious value is its minimum, no flip
    cmp = compare(FLIP_RUNS, FLIP_QRELS, "RR", tie_break="docno")
    (pair,) = cmp.pairs
    assert not pair.order_flip and pair.undecidable
    assert pair.diff_oblivious > 0
    assert cmp.kendall_tau == pytest.approx(1.0)
    assert cmp.settings["tie_break"] == "docno"


# --- (2) clearly separated systems ---------------------------------------------------------------


def test_separated_systems_significant_no_flip():
    rng = np.random.default_rng(3)
    qrels, good, bad = {}, {}, {}
    for i in range(12):
        q = f"q{i:02d}"
        qrels[q] = {"rel": 1}
        docs = [f"d{j}" for j in range(9)]
        good[q] = {"rel": 20.0, **{d: float(10 - j) for j, d in enumerate(docs)}}
        r = int(rng.integers(3, 8))  # "rel" at rank 3..7
        bad[q] = {
            **{d: float(20 - j) for j, d in enumerate(docs[: r - 1])},
            "rel": 5.0,
            **{d: float(4 - j) / 10 for j, d in enumerate(docs[r - 1 :])},
        }
    cmp = compare({"bad": bad, "good": good}, qrels, "RR@10")
    assert [s.name for s in cmp.systems] == ["good", "bad"]
    (pair,) = cmp.pairs
    assert pair.significant and pair.p_test < 1e-6 and pair.t > 0
    assert pair.p == pair.p_floor == 2.0**-11  # 12 nonzero differences: exact sign flips' least p
    assert pair.p_oblivious == pytest.approx(pair.p)  # no ties: the same values
    assert not pair.order_flip and not pair.undecidable
    assert pair.flags == ["significant"]
    assert cmp.kendall_tau == pytest.approx(1.0)
    assert pair.p_banded is None and cmp.band_summary is None and cmp.banded_systems is None
    for s in cmp.systems:
        assert s.range == 0.0 and s.bias == 0.0 and s.std == 0.0


def test_identical_systems_undefined_test_and_constant_differences():
    run = FLIP_RUNS["A"]
    cmp = compare({"x": run, "y": tierank.to_run(run)}, FLIP_QRELS, "RR")
    (pair,) = cmp.pairs
    assert (pair.t, pair.p, pair.p_oblivious) == (0.0, 1.0, 1.0)
    assert pair.diff_expected == 0.0 and not pair.order_flip and not pair.significant
    assert pair.undecidable  # identical intervals overlap
    assert [s.name for s in cmp.systems] == ["x", "y"]  # equal expectations keep the input order

    # one system better by exactly 0.5 in every query: the differences have no variance, t is
    # undefined (scipy: inf, p = 0); the exact randomization test answers: 2 of the 2^3 sign flips
    qrels = {f"q{i}": {"r": 1} for i in range(3)}
    first = {q: {"r": 2.0, "s": 1.0} for q in qrels}
    second = {q: {"s": 2.0, "r": 1.0} for q in qrels}
    cmp = compare({"first": first, "second": second}, qrels, "RR")
    (pair,) = cmp.pairs
    assert math.isnan(pair.t) and pair.p == 2 / 2**3 and not pair.significant
    assert (pair.test, pair.test_used, pair.method, pair.samples) == (
        "t",
        "randomization",
        "exact",
        8,
    )
    assert "no variance" in pair.fallback and any("no variance" in n for n in cmp.notes)
    rec = records(cmp)
    assert rec["pairs"][0]["t"] is None and rec["pairs"][0]["p"] == 0.25
    json.dumps(rec, allow_nan=False)


def test_common_queries_and_complete():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    runs = {
        "full": {q: {"a": 1.0, "b": 0.5} for q in ("q1", "q2", "q3")},
        "part": {q: {"b": 1.0, "a": 0.5} for q in ("q1", "q2")},
    }
    cmp = compare(runs, qrels, "RR")
    assert cmp.queries == ("q1", "q2") and cmp.dropped_queries == 1
    assert cmp.system("full").expected == 1.0 and cmp.system("part").expected == 0.5
    cmp = compare(runs, qrels, "RR", complete=True)
    assert cmp.queries == ("q1", "q2", "q3") and cmp.dropped_queries == 0
    assert cmp.system("part").expected == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(runs={"only": FLIP_RUNS["A"]}), "at least two systems"),
        (dict(runs={}), "at least two systems"),
        (dict(runs=[FLIP_RUNS["A"], FLIP_RUNS["B"]]), "mapping"),
        (dict(measure="NoSuchMeasure@10"), "NoSuchMeasure"),
        (dict(measure=["RR", "P@5"]), "exactly one measure"),
        (dict(alpha=1.5), "alpha"),
        (dict(band=1.0), "rho must be a finite number > 1, got 1.0"),
        (dict(band=float("inf")), "rho must be a finite number > 1, got inf"),
        (dict(runs={"A": FLIP_RUNS["A"], "other": {"zz": {"z": 1.0}}}), "no query"),
    ],
)
def test_input_errors(kwargs, message):
    args = dict(runs=FLIP_RUNS, qrels=FLIP_QRELS, measure="RR")
    args.update(kwargs)
    with pytest.raises(tierank.TierankInputError, match=message):
        compare(args.pop("runs"), args.pop("qrels"), args.pop("measure"), **args)


def test_records_and_tables():
    cmp = compare(FLIP_RUNS, FLIP_QRELS, "RR", band=1.4)
    rec = records(cmp)
    assert set(rec) >= {"systems", "pairs", "kendall_tau", "band_summary"}
    assert [s["name"] for s in rec["systems"]] == ["B", "A"]
    assert rec["pairs"][0]["order_flip"] is True and rec["band_summary"]["pairs"] == 1
    json.dumps(rec, allow_nan=False)

    console = Console(width=200, record=True, file=io.StringIO())
    tables = compare_tables(cmp)
    assert len(tables) == 3  # systems, pairs, band summary
    for t in tables:
        console.print(t)
    text = console.export_text()
    for word in ("FLIP", "undecidable", "[min, max]", "p band1.4", "false pos."):
        assert word in text


# --- (3) rank bands ------------------------------------------------------------------------------


def _synthetic(n_sys=6, n_q=30, n_docs=20, decimals=None, seed=7):
    """Systems of increasing quality: score = quality * relevance + noise (optionally rounded: ties)."""
    rng = np.random.default_rng(seed)
    qrels = {}
    rels = {}
    for i in range(n_q):
        q = f"q{i:02d}"
        rel = (rng.random(n_docs) < 0.2).astype(int)
        rel[rng.integers(n_docs)] = 1
        rels[q] = rel
        qrels[q] = {f"d{j:02d}": int(r) for j, r in enumerate(rel)}
    runs = {}
    for s in range(n_sys):
        quality = 0.25 * s
        run = {}
        for q, rel in rels.items():
            score = quality * rel + rng.normal(0.0, 0.6, n_docs)
            if decimals is not None:
                score = np.round(score, decimals)
            docs = [f"d{j:02d}" for j in rng.permutation(n_docs)]  # a shuffled file order
            run[q] = {d: float(score[int(d[1:])]) for d in docs}
        runs[f"S{s}"] = run
    return runs, qrels


def _check_band_summary(cmp: Comparison):
    b = cmp.band_summary
    n = len(cmp.systems)
    assert b["pairs"] == len(cmp.pairs) == n * (n - 1) // 2
    assert (
        b["significant_original"]
        == sum(p.significant for p in cmp.pairs)
        == sum(p.p < cmp.alpha for p in cmp.pairs)
    )
    assert b["significant_banded"] == sum(p.significant_banded for p in cmp.pairs)
    assert b["significant_original"] == b["kept"] + b["false_negatives"]
    assert b["significant_banded"] == b["kept"] + b["false_positives"]
    assert b["kept"] + b["false_positives"] + b["false_negatives"] + b["neither"] == b["pairs"]
    assert b["false_positives"] == sum(
        (not p.significant) and p.significant_banded for p in cmp.pairs
    )
    assert b["false_negatives"] == sum(
        p.significant and not p.significant_banded for p in cmp.pairs
    )
    pct = [b[k] for k in ("pct_kept", "pct_false_positives", "pct_false_negatives", "pct_neither")]
    assert sum(pct) == pytest.approx(100.0)
    assert b["pct_kept"] == pytest.approx(100.0 * b["kept"] / b["pairs"])
    assert all(0.0 <= p.p_banded <= 1.0 for p in cmp.pairs)
    assert [s.name for s in cmp.banded_systems] == [s.name for s in cmp.systems]
    for p in cmp.pairs:  # the flags in words say the same
        assert ("false positive" in p.flags) == ((not p.significant) and p.significant_banded)
        assert ("false negative" in p.flags) == (p.significant and not p.significant_banded)
        assert ("significant" in p.flags) == p.significant and ("FLIP" in p.flags) == p.order_flip


def test_band_summary_counts_consistent():
    runs, qrels = _synthetic(decimals=1)  # rounded scores: ties
    off_diagonal = 0
    for measure in ("nDCG@10", "AP", "RR"):
        cmp = compare(runs, qrels, measure, band=1.4)
        _check_band_summary(cmp)
        b = cmp.band_summary
        assert cmp.band == 1.4 and b["rho"] == 1.4
        assert 0 < b["significant_original"] < b["pairs"]  # not vacuous
        assert (
            cmp.systems[0].name == "S5" and cmp.systems[-1].name == "S0"
        )  # quality recovered at the ends
        off_diagonal += b["false_positives"] + b["false_negatives"]
    assert off_diagonal > 0  # the cross-tabulation is exercised off its diagonal too


def test_tiny_rho_keeps_top_ranks():
    # rho = 1.05: bands are singletons up to rank 20, so lists of 20 documents keep their exact order
    runs, qrels = _synthetic()  # continuous scores, no ties
    cmp = compare(runs, qrels, "RR@3", band=1.05)
    _check_band_summary(cmp)
    for p in cmp.pairs:
        assert p.p_banded == pytest.approx(p.p, abs=1e-12)
        assert p.diff_banded == pytest.approx(p.diff_expected, abs=1e-12)
    for s, sb in zip(cmp.systems, cmp.banded_systems):
        assert sb.expected == pytest.approx(s.expected, abs=1e-12)
    b = cmp.band_summary
    assert b["false_positives"] == b["false_negatives"] == 0
    assert b["kept"] == b["significant_original"] > 0


def test_tiny_rho_on_tied_runs_reads_file_order():
    # with ties, a band run ranks tied documents in file order: at rho = 1.05 its expected RR@3
    # is the original run's oblivious RR@3 under tie_break="input"
    runs, qrels = _synthetic(decimals=1)
    cmp = compare(runs, qrels, "RR@3", band=1.05, tie_break="input")
    _check_band_summary(cmp)
    for s, sb in zip(cmp.systems, cmp.banded_systems):
        assert sb.expected == pytest.approx(s.oblivious, abs=1e-12)
        assert sb.range == 0.0
    for p in cmp.pairs:
        assert p.p_banded == pytest.approx(p.p_oblivious, abs=1e-12)


# --- (4) real data: AskUbuntu BM25 vs the same scores in bfloat16 ---------------------------------


def test_askubuntu_bm25_vs_bf16(real_data):
    from tierank.analysis.precision import requantize_run

    run = tierank.read_run(real_data / "askubuntu" / "test.bm25.run")
    bf16 = requantize_run(run, "bf16")
    cmp = compare(
        {"bm25": run, "bm25-bf16": bf16},
        real_data / "askubuntu" / "test.qrels",
        "nDCG@10",
        band=1.4,
    )
    assert len(cmp.queries) == 200 and cmp.dropped_queries == 0
    fp32, low = cmp.system("bm25"), cmp.system("bm25-bf16")
    for s in (fp32, low):
        assert s.min <= s.expected <= s.max and 0.0 < s.min and s.max < 1.0
    assert low.range > fp32.range > 0.0  # bf16 creates ties: a wider interval
    assert low.range > 5 * fp32.range
    (pair,) = cmp.pairs
    assert pair.undecidable  # the bf16 interval contains the bm25 one
    assert 0.0 <= pair.p <= 1.0 and 0.0 <= pair.p_oblivious <= 1.0
    _check_band_summary(cmp)
    json.dumps(records(cmp), allow_nan=False)


# --- (5) tie-aware significance: P(A above B) under random tie breaking, multiple comparisons ------

from reference import orderings, value  # noqa: E402
from tierank.analysis.compare import adjust_pvalues, prob_above  # noqa: E402


def _query_values(run_q: dict, qrels_q: dict, measure: str) -> list[float]:
    """The measure over every tie ordering of one query (each ordering equally likely)."""
    docs = [(d, s, qrels_q.get(d)) for d, s in run_q.items()]
    nrel = sum(1 for g in qrels_q.values() if g >= 1)
    ideal = sorted(qrels_q.values(), reverse=True)
    return [value(measure, [g for _, _, g in o], nrel, ideal) for o in orderings(docs)]


def _mean_distribution(run: dict, qrels: dict, measure: str) -> dict[float, float]:
    """Exact distribution {mean over queries: probability}, orderings independent across queries."""
    dist = {0.0: 1.0}
    n = len(qrels)
    for q in sorted(qrels):
        vals = _query_values(run[q], qrels[q], measure)
        nxt: dict[float, float] = {}
        for m, p in dist.items():
            for v in vals:
                key = round(m + v / n, 12)
                nxt[key] = nxt.get(key, 0.0) + p / len(vals)
        dist = nxt
    return dist


SIG_QRELS = {"q1": {"a": 1, "c": 1}, "q2": {"b": 1}, "q3": {"e": 1, "a": 0}}
SIG_RUNS = {
    "A": {
        "q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5},
        "q2": {"a": 0.9, "b": 0.9, "c": 0.9},
        "q3": {"e": 0.4, "a": 0.4, "b": 0.4, "c": 0.4},
    },
    "B": {
        "q1": {"b": 2.0, "a": 1.0, "c": 1.0, "d": 1.0},
        "q2": {"b": 0.5, "c": 0.5, "d": 0.1},
        "q3": {"a": 3.0, "e": 2.0, "b": 2.0, "c": 1.0},
    },
}


@pytest.mark.parametrize("measure", ["RR", "AP", "P@2", "nDCG@3"])
def test_prob_above_against_enumerating_every_tie_ordering_of_both_runs(measure):
    cmp = compare(SIG_RUNS, SIG_QRELS, measure)
    (pair,) = cmp.pairs
    da = _mean_distribution(SIG_RUNS[pair.a], SIG_QRELS, measure)
    db = _mean_distribution(SIG_RUNS[pair.b], SIG_QRELS, measure)
    diffs = [(x - y, p * r) for x, p in da.items() for y, r in db.items()]
    mean = sum(d * w for d, w in diffs)
    std = math.sqrt(sum((d - mean) ** 2 * w for d, w in diffs))
    exact_above = sum(w for d, w in diffs if d > 1e-12)
    assert pair.diff_expected == pytest.approx(mean, abs=1e-12)
    assert pair.std_diff == pytest.approx(std, abs=1e-12)
    assert std > 0.01  # real ties in both runs
    assert pair.p_a_above_bound <= exact_above + 1e-12  # Cantelli: a guaranteed lower bound
    assert abs(pair.p_a_above - exact_above) < 0.25  # the normal approximation, 3 queries
    assert 0.0 <= pair.p_a_above_bound <= pair.p_a_above <= 1.0


def test_prob_above_exact_without_variation():
    qrels = {"q1": {"x": 1}, "q2": {"x": 1}}
    runs = {
        "hi": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 2.0, "y": 1.0}},
        "lo": {"q1": {"y": 2.0, "x": 1.0}, "q2": {"y": 2.0, "x": 1.0}},
    }
    (pair,) = compare(runs, qrels, "RR").pairs
    assert (pair.a, pair.std_diff, pair.p_a_above, pair.p_a_above_bound) == ("hi", 0.0, 1.0, 1.0)
    (same,) = compare({"u": runs["hi"], "v": runs["hi"]}, qrels, "RR").pairs
    assert (same.p_a_above, same.p_a_above_bound) == (0.0, 0.0)  # level: neither is above
    assert prob_above(-0.2, 0.04)[0] == pytest.approx(0.158655, abs=1e-6)
    assert prob_above(-0.2, 0.04)[1] == 0.0


def test_adjust_pvalues_against_statsmodels():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(11)
    p = np.concatenate([rng.uniform(0, 0.05, 6), rng.uniform(0, 1, 14), [0.02, 0.02]])
    for ours, theirs in (("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")):
        assert adjust_pvalues(p, ours) == pytest.approx(
            multipletests(p, method=theirs)[1], abs=1e-12
        ), ours


def test_adjust_pvalues_by_hand_and_nan():
    # Holm: sorted 0.01, 0.02, 0.04 times 3, 2, 1, running max; BH: times 3/1, 3/2, 3/3, running min from the top
    assert adjust_pvalues([0.04, 0.01, 0.02], "holm").tolist() == pytest.approx([0.04, 0.03, 0.04])
    assert adjust_pvalues([0.04, 0.01, 0.02], "bh").tolist() == pytest.approx([0.04, 0.03, 0.03])
    out = adjust_pvalues([0.01, float("nan"), 0.03], "bonferroni")
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.06)
    with pytest.raises(tierank.TierankInputError, match="correction"):
        adjust_pvalues([0.1], "sidak")
    with pytest.raises(tierank.TierankInputError, match=r"\[0, 1\]"):
        adjust_pvalues([1.5], "holm")


def test_compare_correction_adjusts_every_pair():
    runs, qrels = _synthetic(n_sys=4, n_q=20)
    plain = compare(runs, qrels, "nDCG@10")
    holm = compare(runs, qrels, "nDCG@10", correction="holm")
    raw = [p.p for p in plain.pairs]
    assert [p.p_adjusted for p in holm.pairs] == pytest.approx(adjust_pvalues(raw, "holm").tolist())
    assert all(p.p_adjusted is None for p in plain.pairs)
    assert [p.significant for p in holm.pairs] == [
        bool(v < 0.05) for v in adjust_pvalues(raw, "holm")
    ]
    assert sum(p.significant for p in holm.pairs) <= sum(p.significant for p in plain.pairs)
    assert holm.settings["correction"] == "holm" and "correction" not in plain.settings
    assert json.dumps(records(holm)["pairs"][0]["p_adjusted"]) != "null"
    with pytest.raises(tierank.TierankInputError, match="correction"):
        compare(runs, qrels, "nDCG@10", correction="fdr")


# --- (6) P(A above B) on random tiny runs, against every joint tie ordering (hypothesis) ---------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers import examples  # noqa: E402
from tierank.analysis import significance  # noqa: E402

_DOCS = ["a", "b", "c", "d", "e"]


@st.composite
def _two_tied_runs(draw):
    """(qrels, run A, run B) over 1-3 queries, each run 1-5 documents with scores from 3 values."""
    nq = draw(st.integers(1, 3))
    qrels, runs = {}, ({}, {})
    for i in range(nq):
        q = f"q{i}"
        grades = draw(st.lists(st.sampled_from([0, 1, 1, 2]), min_size=5, max_size=5))
        if not any(grades):
            grades[draw(st.integers(0, 4))] = 1
        qrels[q] = dict(zip(_DOCS, grades))
        for run in runs:
            n = draw(st.integers(1, 5))
            docs = draw(st.permutations(_DOCS))[:n]
            run[q] = {d: draw(st.sampled_from([0.0, 0.5, 1.0])) for d in docs}
    return qrels, runs[0], runs[1]


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_two_tied_runs(), measure=st.sampled_from(["RR", "AP", "P@2", "nDCG@3"]))
def test_prob_above_property_against_joint_enumeration(data, measure):
    qrels, run_a, run_b = data
    cmp = compare({"A": run_a, "B": run_b}, qrels, measure)
    (pair,) = cmp.pairs
    runs = {"A": run_a, "B": run_b}
    da = _mean_distribution(runs[pair.a], qrels, measure)
    db = _mean_distribution(runs[pair.b], qrels, measure)
    diffs = [(x - y, p * r) for x, p in da.items() for y, r in db.items()]
    mean = sum(d * w for d, w in diffs)
    var = sum((d - mean) ** 2 * w for d, w in diffs)
    exact_above = sum(w for d, w in diffs if d > 1e-9)
    # the two moments are exact
    assert pair.diff_expected == pytest.approx(mean, abs=1e-9)
    assert pair.std_diff**2 == pytest.approx(var, abs=1e-9)
    # Cantelli is a true lower bound of the exact probability
    assert pair.p_a_above_bound <= exact_above + 1e-9
    assert 0.0 <= pair.p_a_above_bound <= pair.p_a_above <= 1.0 or pair.diff_expected <= 1e-12
    if not pair.undecidable:  # every ordering ranks a above b: exactly 1, not approximated
        assert exact_above == pytest.approx(1.0, abs=1e-9)
        assert pair.p_a_above == pair.p_a_above_bound == 1.0
    elif var <= 1e-15:  # no ordering moves the difference: exact, not approximated
        assert pair.std_diff == 0.0
        assert pair.p_a_above == pair.p_a_above_bound == round(exact_above)
        assert exact_above == pytest.approx(round(exact_above), abs=1e-9)
    else:  # the normal approximation sits on the right side of 1/2
        assert (pair.p_a_above >= 0.5) == (pair.diff_expected >= 0.0)


def test_diff_moments_and_prob_above_refuse_bad_input():
    with pytest.raises(tierank.TierankInputError, match="one length"):
        significance.diff_moments(np.zeros(2), np.zeros(2), np.zeros(3), np.zeros(2))
    with pytest.raises(tierank.TierankInputError, match="variance >= 0"):
        prob_above(0.1, -1.0)
    with pytest.raises(tierank.TierankInputError, match="finite"):
        prob_above(float("nan"), 0.1)


def test_prob_above_worked_example_by_hand():
    # A: one query, the relevant document tied with one other at the top: RR 1 or 1/2, each w.p. 1/2.
    # B: RR 0.7 fixed is impossible; B has RR 1/2 fixed.  D = 1/2 or 0: mean 1/4, var 1/16.
    qrels = {"q": {"r": 1}}
    cmp = compare({"A": {"q": {"r": 1.0, "x": 1.0}}, "B": {"q": {"x": 2.0, "r": 1.0}}}, qrels, "RR")
    (pair,) = cmp.pairs
    assert (pair.a, pair.diff_expected, pair.std_diff) == ("A", 0.25, 0.25)
    assert pair.p_a_above == pytest.approx(0.841344746, abs=1e-9)  # Phi(1); the exact value is 1/2
    assert pair.p_a_above_bound == pytest.approx(0.5)  # Cantelli: 1/16 / (1/16 + 1/16)


def test_compare_banded_correction_is_a_family_of_its_own():
    runs, qrels = _synthetic(n_sys=4, n_q=20, decimals=1)
    plain = compare(runs, qrels, "nDCG@10", band=1.4)
    bh = compare(runs, qrels, "nDCG@10", band=1.4, correction="bh")
    raw = [p.p_banded for p in plain.pairs]
    assert [p.p_banded_adjusted for p in bh.pairs] == pytest.approx(
        adjust_pvalues(raw, "bh").tolist()
    )
    assert [p.significant_banded for p in bh.pairs] == [
        bool(v < 0.05) for v in adjust_pvalues(raw, "bh")
    ]
    assert all(p.p_banded_adjusted is None for p in plain.pairs)
    _check_band_summary_adjusted(bh)


def _check_band_summary_adjusted(cmp):
    b = cmp.band_summary
    assert b["significant_original"] == sum(p.p_adjusted < cmp.alpha for p in cmp.pairs)
    assert b["significant_banded"] == sum(p.p_banded_adjusted < cmp.alpha for p in cmp.pairs)


# --- (7) `tierank compare`: P(A>B) and --correction in the table and the JSON --------------------


def _write_runs(tmp_path):
    """Three systems on two queries (relevant document "r"), as TREC files, with hand-computable values.

    tied: q1 ties r with 3 others at the top (RR 1, 1/2, 1/3, 1/4 uniformly: E = 25/48), q2 puts r first;
    its mean RR lies in [5/8, 1].  mid: r at rank 2 in q1 and 1 in q2 (mean 3/4, no ties): the intervals
    overlap.  low: r at rank 4 in both (RR 1/4, no ties), below tied's whole interval.
    """
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{q} 0 r 1\n" for q in ("q1", "q2")))
    lines = {
        "tied": [("q1", d, 1.0) for d in ("r", "a", "b", "c")]
        + [("q2", "r", 2.0), ("q2", "a", 1.0)],
        "mid": [
            ("q1", "a", 3.0),
            ("q1", "r", 2.0),
            ("q1", "b", 1.0),
            ("q2", "r", 3.0),
            ("q2", "a", 2.0),
        ],
        "low": [
            (q, d, s)
            for q in ("q1", "q2")
            for d, s in (("a", 4.0), ("b", 3.0), ("c", 2.0), ("r", 1.0))
        ],
    }
    paths = []
    for name, rows in lines.items():
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{q} Q0 {d} {i} {s} {name}\n" for i, (q, d, s) in enumerate(rows)))
        paths.append(p)
    return qrels, paths


def _pair(doc, a, b):
    (p,) = [p for p in doc["pairs"] if {p["a"], p["b"]} == {a + ".run", b + ".run"}]
    return p


def _cli(*args, code=0):
    from typer.testing import CliRunner

    from tierank.cli import app

    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == code, res.output
    return res


def test_cli_compare_reports_p_a_above_and_holm_by_default(tmp_path, monkeypatch):
    from scipy.stats import norm

    monkeypatch.chdir(tmp_path)  # system names are the file names
    qrels, paths = _write_runs(tmp_path)
    paths = [p.name for p in paths]
    doc = json.loads(_cli("compare", *paths, "--qrels", qrels, "-m", "RR", "-f", "json").stdout)
    assert doc["settings"]["correction"] == "holm"  # three pairs: Holm by default
    # tied vs mid: D = (RR_q1 + 1) / 2 - (1/2 + 1) / 2, so E[D] = 25/96 - 1/4, Var[D] = Var(RR_q1) / 4
    e1 = 25 / 48
    v1 = (1 + 1 / 4 + 1 / 9 + 1 / 16) / 4 - e1**2
    tm = _pair(doc, "tied", "mid")
    assert (tm["a"], tm["b"]) == ("tied.run", "mid.run")
    mean, sd = e1 / 2 - 0.25, math.sqrt(v1) / 2
    assert (
        tm["undecidable"] and 0 < mean < sd
    )  # a real question: the normal approximation answers it
    assert tm["diff_expected"] == pytest.approx(mean, abs=1e-12)
    assert tm["std_diff"] == pytest.approx(sd, abs=1e-12)
    assert tm["p_a_above"] == pytest.approx(norm.cdf(mean / sd), abs=1e-12)
    assert tm["p_a_above_bound"] == pytest.approx(mean**2 / (mean**2 + sd**2), abs=1e-12)
    # mid vs low: no ties on either side, so exactly 1
    ml = _pair(doc, "mid", "low")
    assert (ml["p_a_above"], ml["p_a_above_bound"], ml["std_diff"]) == (1.0, 1.0, 0.0)
    # tied vs low: tied's ties vary the difference (std > 0) but its worst ordering still beats low: exactly 1
    tl = _pair(doc, "tied", "low")
    assert tl["std_diff"] > 0.1 and not tl["undecidable"]
    assert (tl["p_a_above"], tl["p_a_above_bound"]) == (1.0, 1.0)
    # the Holm-adjusted p-values are those of the raw ones; the existing keys are all still there
    raw = [p["p"] for p in doc["pairs"]]
    assert [p["p_adjusted"] for p in doc["pairs"]] == pytest.approx(
        adjust_pvalues(raw, "holm").tolist()
    )
    assert {
        "a",
        "b",
        "diff_expected",
        "diff_oblivious",
        "t",
        "p",
        "p_oblivious",
        "order_flip",
        "undecidable",
        "significant",
    } <= set(tm)

    none = json.loads(
        _cli(
            "compare", *paths, "--qrels", qrels, "-m", "RR", "-f", "json", "--correction", "none"
        ).stdout
    )
    assert "correction" not in none["settings"] and all(
        p["p_adjusted"] is None for p in none["pairs"]
    )
    assert _pair(none, "tied", "mid")["p_a_above"] == tm["p_a_above"]
    bonf = json.loads(
        _cli(
            "compare",
            *paths,
            "--qrels",
            qrels,
            "-m",
            "RR",
            "-f",
            "json",
            "--correction",
            "bonferroni",
        ).stdout
    )
    assert [p["p_adjusted"] for p in bonf["pairs"]] == pytest.approx([min(1.0, 3 * p) for p in raw])

    # two systems, one pair: no correction unless asked
    two = json.loads(_cli("compare", *paths[:2], "--qrels", qrels, "-m", "RR", "-f", "json").stdout)
    assert "correction" not in two["settings"] and two["pairs"][0]["p_adjusted"] is None

    table = _cli("compare", *paths, "--qrels", qrels, "-m", "RR", "-o", "-").stdout
    assert "P(A>B)" in table and "p adj" in table and "normal approximation" in table
    assert "Cantelli" in table and "Holm" in table
    row = next(line for line in table.splitlines() if "tied.run" in line and "mid.run" in line)
    assert f"{tm['p_a_above']:.4f}" in row and f"{tm['p_a_above_bound']:.4f}" in row

    bad = _cli("compare", *paths, "--qrels", qrels, "--correction", "sidak", code=2)
    assert "sidak" in bad.output and "Traceback" not in bad.output


def test_adjust_across_measures_is_one_family():
    from tierank.analysis.significance import adjust_across

    runs, qrels = _synthetic(n_sys=3, n_q=15, decimals=1)
    measures = ("nDCG@10", "RR", "AP")
    plain = [compare(runs, qrels, m, band=1.4) for m in measures]
    both = adjust_across(plain, "holm")
    raw = [p.p for c in plain for p in c.pairs]
    assert len(raw) == 9
    want = adjust_pvalues(raw, "holm")
    assert [p.p_adjusted for c in both for p in c.pairs] == pytest.approx(want.tolist())
    # one family of 9 is stricter than three families of 3
    per_measure = [v for c in plain for v in adjust_pvalues([p.p for p in c.pairs], "holm")]
    assert all(a >= b - 1e-15 for a, b in zip(want, per_measure)) and any(
        a > b for a, b in zip(want, per_measure)
    )
    raw_b = [p.p_banded for c in plain for p in c.pairs]
    assert [p.p_banded_adjusted for c in both for p in c.pairs] == pytest.approx(
        adjust_pvalues(raw_b, "holm").tolist()
    )
    for c in both:
        assert c.settings["correction"] == "holm" and c.settings["family"] == 9
        assert [p.significant for p in c.pairs] == [bool(p.p_adjusted < c.alpha) for p in c.pairs]
        _check_band_summary_adjusted(c)
    # the raw values and the inputs are untouched
    assert [p.p for c in both for p in c.pairs] == raw
    assert all(p.p_adjusted is None for c in plain for p in c.pairs)
