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
    "B": {f"q{i}": {**{f"d{j}": 10.0 - j for j in range(r - 1)}, "z": 10.0 - r + 1, "e": 0.5}
          for i, r in enumerate(B_RANKS)},
}


def test_tie_flip_oblivious_says_a_expected_says_b():
    cmp = compare(FLIP_RUNS, FLIP_QRELS, "RR")
    assert isinstance(cmp, Comparison)
    assert [s.name for s in cmp.systems] == ["B", "A"]  # sorted by expected
    a, b = cmp.system("A"), cmp.system("B")
    assert a.oblivious == pytest.approx(1.0)
    assert a.expected == pytest.approx(np.mean([_h(k) / k for k in KS]))
    assert (a.min, a.max) == pytest.approx((np.mean([1 / k for k in KS]), 1.0))
    assert b.oblivious == b.expected == b.min == b.max == pytest.approx(np.mean([1 / r for r in B_RANKS]))
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
        bad[q] = {**{d: float(20 - j) for j, d in enumerate(docs[: r - 1])}, "rel": 5.0,
                  **{d: float(4 - j) / 10 for j, d in enumerate(docs[r - 1:])}}
    cmp = compare({"bad": bad, "good": good}, qrels, "RR@10")
    assert [s.name for s in cmp.systems] == ["good", "bad"]
    (pair,) = cmp.pairs
    assert pair.significant and pair.p < 1e-6 and pair.t > 0
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

    # one system better by exactly 0.5 in every query: t = inf, p = 0; JSON gets None for inf
    qrels = {f"q{i}": {"r": 1} for i in range(3)}
    first = {q: {"r": 2.0, "s": 1.0} for q in qrels}
    second = {q: {"s": 2.0, "r": 1.0} for q in qrels}
    cmp = compare({"first": first, "second": second}, qrels, "RR")
    (pair,) = cmp.pairs
    assert pair.p == 0.0 and math.isinf(pair.t) and pair.significant
    rec = records(cmp)
    assert rec["pairs"][0]["t"] is None and rec["pairs"][0]["p"] == 0.0
    json.dumps(rec, allow_nan=False)


def test_common_queries_and_complete():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    runs = {"full": {q: {"a": 1.0, "b": 0.5} for q in ("q1", "q2", "q3")},
            "part": {q: {"b": 1.0, "a": 0.5} for q in ("q1", "q2")}}
    cmp = compare(runs, qrels, "RR")
    assert cmp.queries == ("q1", "q2") and cmp.dropped_queries == 1
    assert cmp.system("full").expected == 1.0 and cmp.system("part").expected == 0.5
    cmp = compare(runs, qrels, "RR", complete=True)
    assert cmp.queries == ("q1", "q2", "q3") and cmp.dropped_queries == 0
    assert cmp.system("part").expected == pytest.approx(1 / 3)


@pytest.mark.parametrize("kwargs, message", [
    (dict(runs={"only": FLIP_RUNS["A"]}), "at least two systems"),
    (dict(runs={}), "at least two systems"),
    (dict(runs=[FLIP_RUNS["A"], FLIP_RUNS["B"]]), "mapping"),
    (dict(measure="NoSuchMeasure@10"), "NoSuchMeasure"),
    (dict(measure=["RR", "P@5"]), "exactly one measure"),
    (dict(alpha=1.5), "alpha"),
    (dict(band=1.0), "rho must be a finite number > 1, got 1.0"),
    (dict(band=float("inf")), "rho must be a finite number > 1, got inf"),
    (dict(runs={"A": FLIP_RUNS["A"], "other": {"zz": {"z": 1.0}}}), "no query"),
])
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
    assert b["significant_original"] == sum(p.significant for p in cmp.pairs) == sum(p.p < cmp.alpha for p in cmp.pairs)
    assert b["significant_banded"] == sum(p.significant_banded for p in cmp.pairs)
    assert b["significant_original"] == b["kept"] + b["false_negatives"]
    assert b["significant_banded"] == b["kept"] + b["false_positives"]
    assert b["kept"] + b["false_positives"] + b["false_negatives"] + b["neither"] == b["pairs"]
    assert b["false_positives"] == sum((not p.significant) and p.significant_banded for p in cmp.pairs)
    assert b["false_negatives"] == sum(p.significant and not p.significant_banded for p in cmp.pairs)
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
        assert cmp.systems[0].name == "S5" and cmp.systems[-1].name == "S0"  # quality recovered at the ends
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

def test_askubuntu_bm25_vs_bf16(shared_data):
    from tierank.analysis.precision import requantize_run

    run = tierank.read_run(shared_data / "askubuntu" / "test.bm25.run")
    bf16 = requantize_run(run, "bf16")
    cmp = compare({"bm25": run, "bm25-bf16": bf16}, shared_data / "askubuntu" / "test.qrels", "nDCG@10", band=1.4)
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

from tierank.analysis.compare import adjust_pvalues, prob_above  # noqa: E402
from reference import orderings, value  # noqa: E402


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
    "A": {"q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}, "q2": {"a": 0.9, "b": 0.9, "c": 0.9},
          "q3": {"e": 0.4, "a": 0.4, "b": 0.4, "c": 0.4}},
    "B": {"q1": {"b": 2.0, "a": 1.0, "c": 1.0, "d": 1.0}, "q2": {"b": 0.5, "c": 0.5, "d": 0.1},
          "q3": {"a": 3.0, "e": 2.0, "b": 2.0, "c": 1.0}},
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
    assert pair.p_a_above_bound <= exact_above + 1e-12        # Cantelli: a guaranteed lower bound
    assert abs(pair.p_a_above - exact_above) < 0.25            # the normal approximation, 3 queries
    assert 0.0 <= pair.p_a_above_bound <= pair.p_a_above <= 1.0


def test_prob_above_exact_without_variation():
    qrels = {"q1": {"x": 1}, "q2": {"x": 1}}
    runs = {"hi": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 2.0, "y": 1.0}},
            "lo": {"q1": {"y": 2.0, "x": 1.0}, "q2": {"y": 2.0, "x": 1.0}}}
    (pair,) = compare(runs, qrels, "RR").pairs
    assert (pair.a, pair.std_diff, pair.p_a_above, pair.p_a_above_bound) == ("hi", 0.0, 1.0, 1.0)
    (same,) = compare({"u": runs["hi"], "v": runs["hi"]}, qrels, "RR").pairs
    assert (same.p_a_above, same.p_a_above_bound) == (0.0, 0.0)   # level: neither is above
    assert prob_above(-0.2, 0.04)[0] == pytest.approx(0.158655, abs=1e-6)
    assert prob_above(-0.2, 0.04)[1] == 0.0


def test_adjust_pvalues_against_statsmodels():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(11)
    p = np.concatenate([rng.uniform(0, 0.05, 6), rng.uniform(0, 1, 14), [0.02, 0.02]])
    for ours, theirs in (("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")):
        assert adjust_pvalues(p, ours) == pytest.approx(multipletests(p, method=theirs)[1], abs=1e-12), ours


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
    assert [p.significant for p in holm.pairs] == [bool(v < 0.05) for v in adjust_pvalues(raw, "holm")]
    assert sum(p.significant for p in holm.pairs) <= sum(p.significant for p in plain.pairs)
    assert holm.settings["correction"] == "holm" and "correction" not in plain.settings
    assert json.dumps(records(holm)["pairs"][0]["p_adjusted"]) != "null"
    with pytest.raises(tierank.TierankInputError, match="correction"):
        compare(runs, qrels, "nDCG@10", correction="fdr")
