"""Intent-aware measures on subtopic qrels (tierank.measures.diversity, tierank.io.subtopics).

The tie-free values are checked against ndeval itself in tests/crosscheck/test_pyndeval.py (pyndeval,
in the ``test`` extra); here, against an independent implementation written from the papers'
definitions, as ndeval 4.5 (the TREC Web track's evaluation program, which ir_measures' pyndeval
provider wraps) normalises them:

* alpha-nDCG: Clarke et al., "Novelty and diversity in information retrieval evaluation", SIGIR 2008,
  eq. (5)-(7): gain G[k] = sum_s J(d_k, s) (1 - alpha)^{r_{s,k-1}}, discount log2(1 + k), the ideal
  ranking approximated greedily (ties: larger docno first, as ndeval);
* ERR-IA: Chapelle et al., CIKM 2009, the cascade model per intent (a relevant document satisfies the
  user with probability 1/2, ERR's (2^g - 1) / 2^gmax for binary g), averaged over intents
  (Agrawal et al., WSDM 2009), over ndeval's "ideal ideal" normaliser;
* NRBP: Clarke, Kolla and Vechtomova, ICTIR 2009, eq. (9): (1 - (1 - alpha) beta) / N sum_k beta^{k-1} G[k];
* P-IA, AP-IA: Agrawal et al. 2009, the mean over intents of P@k and AP; StRecall: Zhai, Cohen and
  Lafferty, SIGIR 2003, subtopic recall.

Written as matrices and per-intent sums (numpy), not as tierank's running gain.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.errors import TierankInputError
from tierank.evaluate import evaluate_diversity
from tierank.io.subtopics import read_subtopic_qrels
from tierank.measures.diversity import parse_diversity_measure

DATA = Path(__file__).resolve().parents[1] / "data" / "diversity"
MEASURES = [
    "alpha_nDCG@5",
    "alpha_nDCG(alpha=0.8)@3",
    "alpha_DCG@4",
    "ERR_IA@5",
    "nERR_IA@3",
    "NRBP",
    "nNRBP(alpha=0.3,beta=0.8)",
    "P_IA@3",
    "AP_IA",
    "StRecall@2",
    "StRecall@4",
    "alpha_nDCG",
    "P_IA",
    "AP_IA(rel=2)",
    "ERR_IA(judged_only=true)@4",
    "alpha_nDCG(alpha=1)@4",
    "alpha_nDCG(alpha=0)@3",
    "nNRBP(alpha=1,beta=0.9)",
    "nERR_IA(rel=2)@8",
    "StRecall",
    "alpha_DCG(judged_only=true)",
]


# -- the independent reference ----------------------------------------------------------------
def _matrix(docs, judged, rel):
    subs = sorted({s for g in judged.values() for s, x in g.items() if x >= rel})
    J = np.array(
        [[1.0 if judged.get(d, {}).get(s, -math.inf) >= rel else 0.0 for s in subs] for d in docs]
    )
    return J.reshape(len(docs), len(subs)), subs


def _novelty(J, alpha):
    """G[k] of Clarke et al.: J(d_k, s) (1 - alpha)^(number of earlier documents relevant to s)."""
    before = np.cumsum(J, axis=0) - J
    return (J * (1 - alpha) ** before).sum(axis=1)


def _greedy_ideal(judged, subs, rel, alpha):
    docs = sorted(judged, reverse=True)
    out = []
    counts = dict.fromkeys(subs, 0)
    while docs:

        def gain(d):
            return sum((1 - alpha) ** counts[s] for s in subs if judged[d].get(s, -math.inf) >= rel)

        best = max(gain(d) for d in docs)
        d = next(d for d in docs if gain(d) == best)  # docs descending: the larger docno wins a tie
        docs.remove(d)
        out.append(d)
        for s in subs:
            if judged[d].get(s, -math.inf) >= rel:
                counts[s] += 1
    return out


def reference(measure, docs, judged):
    """One query, one tie-free ranking ``docs``."""
    m = parse_diversity_measure(measure)
    rel = 1 if m.rel is None else m.rel  # the evaluation's rel: 1
    if m.judged_only:
        docs = [d for d in docs if d in judged]
    J, subs = _matrix(docs, judged, rel)
    A = len(subs)
    if A == 0:
        return 0.0
    n = len(docs)
    k = m.cutoff if m.cutoff is not None else n
    if k == 0:
        return 0.0  # judged_only left no document
    ranks = np.arange(1, n + 1)
    if m.family in ("alpha_nDCG", "alpha_DCG"):
        dcg = float((_novelty(J, m.alpha) / np.log2(ranks + 1))[:k].sum())
        if m.family == "alpha_DCG":
            return dcg / sum(A * (1 - m.alpha) ** i / math.log2(i + 2) for i in range(k))
        ideal_docs = _greedy_ideal(judged, subs, rel, m.alpha)
        Ji, _ = _matrix(ideal_docs, judged, rel)
        ideal = float(
            (_novelty(Ji, m.alpha) / np.log2(np.arange(1, len(ideal_docs) + 1) + 1))[:k].sum()
        )
        return dcg / ideal if dcg > 0 else 0.0
    if m.family in ("ERR_IA", "nERR_IA"):

        def err_sum(J):
            # cascade per intent: reach rank i with prob prod_{j<i} (1 - J/2), stop there with J/2
            total = 0.0
            for s in range(J.shape[1]):
                reach = 1.0
                for i in range(min(k, J.shape[0])):
                    total += reach * J[i, s] * 0.5 / (i + 1)
                    reach *= 1 - 0.5 * J[i, s]
            return total / 0.5

        run = err_sum(J)
        if m.family == "ERR_IA":
            return run / (A * sum(0.5**i / (i + 1) for i in range(k)))
        Ji, _ = _matrix(_greedy_ideal(judged, subs, rel, 0.5), judged, rel)
        return run / err_sum(Ji) if run > 0 else 0.0
    if m.family in ("NRBP", "nNRBP"):

        def rbp(J):
            return float((_novelty(J, m.alpha) * m.beta ** np.arange(J.shape[0])).sum())

        run = rbp(J)
        if m.family == "NRBP":
            return (1 - (1 - m.alpha) * m.beta) / A * run
        Ji, _ = _matrix(_greedy_ideal(judged, subs, rel, m.alpha), judged, rel)
        return run / rbp(Ji) if run > 0 else 0.0
    if m.family == "P_IA":
        return float(np.mean([J[:k, s].sum() / k for s in range(A)]))
    if m.family == "StRecall":
        return float((J[:k].sum(axis=0) > 0).mean())
    # AP_IA: mean over intents of AP with R_s relevant documents in the qrels
    aps = []
    for s, name in enumerate(subs):
        R = sum(1 for g in judged.values() if g.get(name, -math.inf) >= rel)
        hits = np.cumsum(J[:, s])
        aps.append(float((J[:, s] * hits / ranks).sum()) / R)
    return float(np.mean(aps))


def _trec_order(run):
    return [d for d, _ in sorted(sorted(run.items(), reverse=True), key=lambda x: -x[1])]


def _read_run(path):
    out = {}
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        out.setdefault(q, {})[d] = float(s)
    return out


# -- tie-free values on the shipped files -------------------------------------------------------
@pytest.mark.parametrize("run_file", ["run.txt", "run-ties.txt"])
def test_oblivious_values_equal_the_reference_on_the_shipped_files(run_file):
    qrels = read_subtopic_qrels(DATA / "qrels.txt")
    run = _read_run(DATA / run_file)
    res = evaluate_diversity(qrels, DATA / run_file, MEASURES)
    assert res.queries == ["101", "102"]
    for m in MEASURES:
        got = res.per_query(m)
        for q in res.queries:
            want = reference(m, _trec_order(run[q]), qrels.judgments[q])
            assert got[q]["oblivious"] == pytest.approx(want, abs=1e-12), (m, q)


def test_tie_free_run_has_no_spread():
    res = evaluate_diversity(DATA / "qrels.txt", DATA / "run.txt", MEASURES)
    for m in MEASURES:
        a = res.aggregate(m)
        assert a.method == "exact" and a.min == a.expected == a.max == a.oblivious and a.std == 0.0


def test_hand_worked_query():
    # q: a {1}, b {1, 2}; run a > b: G = [1, 0.5 + 1]; ideal b, a: G = [2, 0.5]
    qrels = {"q": {"a": {"1": 1}, "b": {"1": 1, "2": 1}}}
    res = evaluate_diversity(
        qrels, {"q": {"a": 2.0, "b": 1.0}}, ["alpha_nDCG@2", "P_IA@2", "StRecall@1", "NRBP"]
    )
    want = (1 + 1.5 / math.log2(3)) / (2 + 0.5 / math.log2(3))
    assert res.aggregate("alpha_nDCG@2").expected == pytest.approx(want)
    assert res.aggregate("P_IA@2").expected == pytest.approx(3 / 4)
    assert res.aggregate("StRecall@1").expected == pytest.approx(1 / 2)
    assert res.aggregate("NRBP").expected == pytest.approx((1 - 0.25) / 2 * (1 + 1.5 * 0.5))


# -- brute force over every ordering of the ties ------------------------------------------------
@st.composite
def query(draw):
    n = draw(st.integers(1, 6))
    nsub = draw(st.integers(1, 3))
    docs = [f"d{i}" for i in range(n)]
    judged = {}
    for d in docs + ["x0", "x1"]:  # x*: judged, never retrieved
        if draw(st.booleans()):
            judged[d] = {
                str(s): draw(st.integers(0, 2)) for s in range(nsub) if draw(st.booleans())
            }
    if not judged:
        judged["x0"] = {"0": 1}
    run = {d: float(draw(st.integers(0, 2))) for d in docs}
    return judged, run


def _all_orderings(run):
    groups = {}
    for d, s in run.items():
        groups.setdefault(s, []).append(d)
    ordered = [groups[s] for s in sorted(groups, reverse=True)]
    for combo in itertools.product(*(itertools.permutations(g) for g in ordered)):
        yield [d for g in combo for d in g]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query())
def test_exact_statistics_equal_brute_force(case):
    judged, run = case
    res = evaluate_diversity({"q": judged}, {"q": run}, MEASURES)
    for m in MEASURES:
        values = [reference(m, order, judged) for order in _all_orderings(run)]
        got = res.per_query(m)["q"]
        assert res.stats[str(parse_diversity_measure(m))].method == "exact"
        assert got["expected"] == pytest.approx(statistics.fmean(values), abs=1e-12), m
        assert got["min"] == pytest.approx(min(values), abs=1e-12), m
        assert got["max"] == pytest.approx(max(values), abs=1e-12), m
        assert got["std"] == pytest.approx(statistics.pstdev(values), abs=1e-9), m
        assert got["oblivious"] == pytest.approx(
            reference(m, _trec_order(run), judged), abs=1e-12
        ), m


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query())
def test_sampled_statistics_within_five_standard_errors(case):
    judged, run = case
    S = 400
    res = evaluate_diversity({"q": judged}, {"q": run}, MEASURES, limit=1, samples=S, seed=7)
    for m in MEASURES:
        values = [reference(m, order, judged) for order in _all_orderings(run)]
        s = res.stats[str(parse_diversity_measure(m))]
        got = res.per_query(m)["q"]
        true_se = statistics.pstdev(values) / math.sqrt(S)
        assert abs(got["expected"] - statistics.fmean(values)) <= 5 * true_se + 1e-12, m
        assert min(values) - 1e-12 <= got["min"] <= got["max"] <= max(values) + 1e-12, m
        if s.method == "sampled":
            assert s.samples == S and s.seed == 7 and s.se is not None
            assert s.se[0] == pytest.approx(
                got["std"] / math.sqrt(S), rel=1e-9
            )  # std: ddof=1 estimate


def test_sampling_is_reproducible_and_labelled():
    a = evaluate_diversity(
        DATA / "qrels.txt", DATA / "run-ties.txt", ["alpha_nDCG@5"], limit=1, samples=50, seed=3
    )
    b = evaluate_diversity(
        DATA / "qrels.txt", DATA / "run-ties.txt", ["alpha_nDCG@5"], limit=1, samples=50, seed=3
    )
    assert a.aggregate("alpha_nDCG@5") == b.aggregate("alpha_nDCG@5")
    agg = a.aggregate("alpha_nDCG@5")
    assert agg.method == "sampled" and agg.se is not None and agg.se > 0


# -- names and errors ---------------------------------------------------------------------------
def test_names_round_trip():
    for text in [
        "alpha_nDCG@10",
        "alpha_nDCG(alpha=0.7)@10",
        "ERR_IA@20",
        "nERR_IA",
        "NRBP(alpha=0.3,beta=0.8)",
        "P_IA@5",
        "AP_IA",
        "StRecall@10",
        "AP_IA(judged_only=True,rel=2)",
    ]:
        assert str(parse_diversity_measure(text)) == text
    assert str(parse_diversity_measure("α_nDCG@5")) == "alpha_nDCG@5"
    assert str(parse_diversity_measure("MAP_IA")) == "AP_IA"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("NRBP@5", "NRBP takes no cutoff"),
        ("P_IA@0", "cutoff must be a positive integer"),
        ("alpha_nDCG(alpha=2)@5", "alpha must lie in [0, 1], got 2.0"),
        ("StRecall(alpha=0.5)@5", "unknown parameter 'alpha'; accepted: rel"),
        ("nDCG@5", "unknown intent-aware measure"),
    ],
)
def test_bad_measure_names(text, reason):
    with pytest.raises(TierankInputError, match=re.escape(reason)):
        parse_diversity_measure(text)


@pytest.mark.parametrize(
    "content, line, reason",
    [
        ("1 1 d1 1\n1 d2 1\n", 2, "expected 4 columns (qid subtopic docid grade), found 3"),
        ("1 1 d1 1\n1 2 d2 high\n", 2, "relevance grade 'high' is not a finite number"),
        (
            "1 1 d1 1\n\n1 1 d1 0\n",
            3,
            "document 'd1' judged twice for query '1', subtopic '1' (first at line 1)",
        ),
    ],
)
def test_bad_subtopic_qrels_name_file_line_and_reason(tmp_path, content, line, reason):
    path = tmp_path / "div.qrels"
    path.write_text(content)
    with pytest.raises(TierankInputError) as e:
        read_subtopic_qrels(path)
    assert str(e.value) == f"{path}:{line}: {reason}"


def test_empty_qrels_and_nothing_to_evaluate(tmp_path):
    path = tmp_path / "empty.qrels"
    path.write_text("\n")
    with pytest.raises(TierankInputError, match="empty qrels"):
        read_subtopic_qrels(path)
    with pytest.raises(TierankInputError, match="nothing to evaluate"):
        evaluate_diversity({"q": {"a": {"1": 1}}}, {"other": {"a": 1.0}}, ["P_IA@1"])


# -- the registry path: tierank eval, the common input door and result ------------------------------
def _by_orderings(run):
    """Each query's rankings over every ordering of its tie groups (brute force)."""
    return {q: list(_all_orderings(docs)) for q, docs in run.items()}


@pytest.mark.parametrize("run_file", ["run.txt", "run-ties.txt"])
def test_tierank_eval_on_the_shipped_files_equals_brute_force_and_the_diversity_alias(run_file):
    import json

    from helpers import invoke

    qrels = read_subtopic_qrels(DATA / "qrels.txt")
    orderings = _by_orderings(_read_run(DATA / run_file))
    args = [str(DATA / "qrels.txt"), str(DATA / run_file)]
    asked = [x for m in MEASURES for x in ("-m", m)]
    out = invoke("eval", *args, *asked, "-q", "-f", "jsonl").stdout
    records = [json.loads(line) for line in out.splitlines()]
    per_query = {(r["measure"], r["query"]): r for r in records}
    alias = invoke("diversity", *args, *asked, "-q").stdout.splitlines()
    assert alias[0].split("\t") == [
        "measure",
        "query",
        "oblivious",
        "expected",
        "min",
        "max",
        "std",
        "method",
    ]
    for m in MEASURES:
        name = str(parse_diversity_measure(m))
        for q in ("101", "102"):
            values = [reference(m, order, qrels.judgments[q]) for order in orderings[q]]
            r = per_query[(name, q)]
            assert r["method"] == "exact"
            assert r["expected"] == pytest.approx(statistics.fmean(values), abs=1e-12), (m, q)
            assert r["min"] == pytest.approx(min(values), abs=1e-12), (m, q)
            assert r["max"] == pytest.approx(max(values), abs=1e-12), (m, q)
            assert r["std"] == pytest.approx(statistics.pstdev(values), abs=1e-9), (m, q)
            assert r["oblivious"] == pytest.approx(
                reference(m, _trec_order(_read_run(DATA / run_file)[q]), qrels.judgments[q]),
                abs=1e-12,
            )
    # the alias prints the same evaluation, rounded, every query and the mean
    rows = {tuple(line.split("\t")[:2]): line.split("\t")[2:] for line in alias[1:]}
    for (name, q), r in per_query.items():
        shown = rows[(name, q)]
        assert shown[:5] == [f"{r[c]:.4f}" for c in ("oblivious", "expected", "min", "max", "std")]
        assert shown[5] == r["method"]


def test_eval_of_intent_aware_measures_on_plain_qrels_is_one_line_exit_2(tmp_path):
    from helpers import invoke

    plain = tmp_path / "plain.qrels"
    plain.write_text("101 0 d1 1\n101 0 d2 0\n")
    three = tmp_path / "three.tsv"
    three.write_text("".join(f"101 d{i} 1\n" for i in range(30)))
    for qrels, reason in (
        (plain, "plain qrels (the second column is 0 on every line"),
        (three, "its first line has 3 fields; the intent-aware measures need subtopic qrels"),
        (DATA / "run.txt", "is given as the qrels but looks like a run"),
    ):
        res = invoke("eval", str(qrels), str(DATA / "run.txt"), "-m", "alpha_nDCG@5", check=False)
        assert res.returncode == 2
        assert reason in res.stderr and str(qrels) in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    # the same qrels serve the plain measures
    assert invoke("eval", str(plain), str(DATA / "run.txt"), "-m", "P@1").returncode == 0


def test_plain_qrels_given_in_python_are_refused_with_the_reason():
    import tierank

    for qrels, reason in (
        ({"101": {"d1": 1}}, "grade 1 is not a map of subtopics"),
        (tierank.to_qrels({"101": {"d1": 1}}), "plain qrels: one grade per document given"),
    ):
        with pytest.raises(TierankInputError, match=re.escape(reason)):
            tierank.evaluate(qrels, DATA / "run.txt", ["alpha_nDCG@5"])


def test_subtopic_qrels_are_a_source_role_of_the_input_door():
    from tierank.io.sources import kind_of, read
    from tierank.io.subtopics import SubtopicQrels

    path = DATA / "qrels.txt"
    from_file = read(path, "subtopic-qrels")
    assert isinstance(from_file, SubtopicQrels)
    assert read(from_file.judgments, "subtopic-qrels").judgments == from_file.judgments
    assert read(from_file, "subtopic-qrels") is from_file
    assert kind_of(from_file, "qrels").name == "subtopics"
    plain = read(from_file, "qrels")  # each document once, its largest subtopic grade
    grades = dict(zip(zip(plain.qid.to_pylist(), plain.docid.to_pylist()), plain.grade.tolist()))
    assert grades == {
        (q, d): max(g.values()) for q, docs in from_file.judgments.items() for d, g in docs.items()
    }


def test_plain_and_intent_aware_measures_in_one_evaluation():
    """The plain measures read the subtopic qrels' plain form: the same values as on those qrels."""
    import tierank
    from tierank.io.sources import read

    sq = read(DATA / "qrels.txt", "subtopic-qrels")
    run = DATA / "run-ties.txt"
    both = tierank.evaluate(sq, run, ["nDCG@5", "alpha_nDCG@5", "AP"])
    plain = tierank.evaluate(sq.plain(), run, ["nDCG@5", "AP"])
    for m in plain.measures:
        assert both.summary(m) == plain.summary(m)
    alone = tierank.evaluate(sq, run, ["alpha_nDCG@5"])
    m = tierank.parse_measure("alpha_nDCG@5")
    assert both.summary(m) == alone.summary(m)


def test_sampled_records_carry_method_samples_seed_and_se():
    import tierank

    res = tierank.evaluate(
        DATA / "qrels.txt", DATA / "run-ties.txt", ["nERR_IA@5"], exact_limit=1, samples=40, seed=5
    )
    rec = res.records(per_query=False)[-1]
    assert rec["method"] == "sampled" and rec["samples"] == 40 and rec["seed"] == 5
    assert rec["se"] > 0 and res.settings["exact_limit"] == 1
    exact = tierank.evaluate(DATA / "qrels.txt", DATA / "run-ties.txt", ["nERR_IA@5"])
    assert exact.records(per_query=False)[-1]["method"] == "exact"


def test_settings_the_intent_aware_measures_do_not_follow_are_refused():
    import tierank

    for options, reason in (
        ({"max_depth": 3}, "max_depth (-M): not supported"),
        ({"candidates_only": True}, "candidates_only: not supported"),
        ({"unjudged": "bounds"}, "no valid bound for alpha_nDCG@5"),
    ):
        with pytest.raises(TierankInputError, match=re.escape(reason)):
            tierank.evaluate(DATA / "qrels.txt", DATA / "run.txt", ["alpha_nDCG@5"], **options)


def test_streamed_in_blocks_equals_in_memory():
    """A run evaluated block by block (streaming) gives the records of the run read whole."""
    from helpers import invoke

    args = [str(DATA / "qrels.txt"), str(DATA / "run-ties.txt"), "-m", "alpha_nDCG@5", "-m", "P@3"]
    whole = invoke("eval", *args, "-q", "-f", "jsonl").stdout
    streamed = invoke("eval", *args, "-q", "-f", "jsonl", "-j", "1", "--block-bytes", "64").stdout
    assert streamed == whole and '"measure": "alpha_nDCG@5"' in whole


def test_the_evaluation_settings_reach_the_intent_aware_measures():
    """-J (judged_only) is the measures' own judged_only; -c evaluates a qrels query the run lacks
    as one that retrieved nothing (0)."""
    import tierank

    qrels, run = DATA / "qrels.txt", DATA / "run-ties.txt"
    own = tierank.evaluate(
        qrels, run, ["alpha_nDCG(judged_only=True)@5", "AP_IA(judged_only=True)"]
    )
    cut = tierank.evaluate(qrels, run, ["alpha_nDCG@5", "AP_IA"], judged_only=True)
    assert [own.summary(m) for m in own.measures] == [cut.summary(m) for m in cut.measures]
    assert own.summary(own.measures[0]) != tierank.evaluate(qrels, run, ["alpha_nDCG@5"]).summary(
        cut.measures[0]
    )
    sq = read_subtopic_qrels(qrels)
    extra = {**sq.judgments, "103": {"z1": {"1": 1.0}}}
    res = tierank.evaluate(extra, run, ["alpha_nDCG@5"], complete=True)
    m = res.measures[0]
    assert res.qids == ["101", "102", "103"] and res.stats[m].expected[2] == 0.0
    assert res.stats[m].expected[:2].tolist() == (
        tierank.evaluate(qrels, run, ["alpha_nDCG@5"]).stats[m].expected.tolist()
    )
