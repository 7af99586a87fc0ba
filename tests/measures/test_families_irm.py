"""ir_measures' families SDCG, INSQ, INST, NERR8-11 (cwl_eval), Accuracy and Compat, against brute force.

The references are written from the definitions and share no code with tierank:

* the C/W/L families from cwl_eval (Azzopardi, Thomas & Moffat, SIGIR 2019), as ir_measures 0.4's
  ``providers/cwl_eval.py`` calls it: ``cwl/ruler/measures/cwl_metrics.py`` (the W vector: prefix
  products of the C vector, normalised), ``ranking.py`` (gains padded / truncated to max_n = 1000,
  unjudged 0), ``cwl_dcg.py`` (SDCG), ``cwl_insq.py``, ``cwl_inst.py``, ``cwl_nerr.py`` (eqs. 8-11 of
  Azzopardi, Mackenzie & Moffat, ICTIR 2021); gains clipped to [min_rel, max_rel] and scaled;
* Accuracy from ir_measures' ``providers/accuracy_provider.py`` (its running count of non-relevant
  documents above each relevant one), with tierank's values where ir_measures reports nothing (no
  relevant document: 0) or fails (no other document: 1);
* Compat from ir_measures' ``providers/compat_provider.py`` (RBO of the ranking against the ideal,
  Clarke, Vtyurina & Smucker, TOIS 2021).

Each is evaluated on every ordering of every tie group (reference.orderings).  Exact statistics must
match to rounding; sampled expectations within 5 standard errors (the true one, from the enumerated
distribution); min / max exact where tierank derives them (NERR), else attained values inside
the true range (INST; Accuracy with a mixed tie group across its cutoff).  The tie-free values are
also compared with ir_measures' own providers where installed (Accuracy, Compat here; the C/W/L families
with cwl_eval in tests/crosscheck/test_cwl_eval.py).
"""

from __future__ import annotations

import functools
import math
import statistics
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings

import tierank
from helpers import examples
from measures.strategies import collection
from reference import ordered, orderings
from tierank.measures import parse_measure

TOL = 1e-9
S = 1000
SETTINGS = settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)  # shrinking these is too slow

EXACT = [
    "SDCG(max_rel=3)@1",
    "SDCG(max_rel=3)@3",
    "SDCG(min_rel=1,max_rel=2)@10",
    "INSQ(max_rel=3)",
    "INSQ(T=2.5,max_rel=2)",
    "Accuracy",
    "Accuracy(rel=2)",
    "Compat",
    "Compat(p=0.5,normalize=False)",
    "Compat(p=0.8)",
]
SAMPLED = [
    "NERR8(max_rel=3)@3",
    "NERR9(max_rel=3)@4",
    "NERR10(max_rel=3)",
    "NERR10(p=0.5,max_rel=2)",
    "NERR11(max_rel=3)",
    "NERR11(T=2,min_rel=1,max_rel=3)",
    "INST(max_rel=3)",
    "INST(T=3,max_rel=2)",
    "Accuracy@2",
]
MEASURES = EXACT + SAMPLED
EXTREMES_SEEN = ("INST", "Accuracy")  # min / max: attained values, not proven extremes


# -- references ----------------------------------------------------------------------------------
def cwl_gains(grades, min_rel, max_rel, n=1000):
    out = []
    for g in grades:
        if g is None:
            out.append(0.0)
            continue
        g = min(max(max(g, 0.0), min_rel), max_rel)
        out.append((g - min_rel) / (max_rel - min_rel))
    out = out[:n]
    return out + [0.0] * (n - len(out))


def cwl_c(m, gains):
    fam, k = m.family, m.cutoff
    c = []
    cum = 0.0
    for i, g in enumerate(gains):
        rank = i + 1
        cum += g
        if fam == "SDCG":
            c.append(math.log(rank + 1, 2) / math.log(rank + 2, 2) if rank < k else 0.0)
        elif fam == "INSQ":
            T = m.param("T")
            c.append(((rank + 2 * T - 1) / (rank + 2 * T)) ** 2)
        elif fam == "INST":
            T = m.param("T")
            Ti = T - cum
            c.append(((rank + T + Ti - 1) / (rank + T + Ti)) ** 2)
        elif fam == "NERR8":
            c.append(1 - g if i < k - 1 else 0.0)
        elif fam == "NERR9":
            c.append(rank / (rank + 1) * (1 - g) if i < k - 1 else 0.0)
        elif fam == "NERR10":
            c.append(m.param("p") * (1 - g))
        elif fam == "NERR11":
            T = m.param("T")
            c.append(((rank + 2 * T - 1) / (rank + 2 * T)) ** 2 * (1 - g))
    return c


@functools.lru_cache(maxsize=100_000)
def _ref_cwl(measure, grades):
    return ref_cwl(parse_measure(measure), list(grades))


def ref_cwl(m, grades):
    gains = cwl_gains(grades, m.param("min_rel"), m.param("max_rel"))
    c = cwl_c(m, gains)
    w, prod = [], 1.0
    for i in range(len(c)):
        w.append(prod)
        prod *= c[i]
    total = sum(w)
    return sum(wi / total * g for wi, g in zip(w, gains))


def ref_accuracy(grades, k, rel):
    top = grades[:k] if k else grades
    nonrels = [0]
    for g in top:
        if g is not None and g >= rel:
            nonrels.append(nonrels[-1])
        else:
            nonrels[-1] += 1
    if len(nonrels) < 2:
        return 0.0
    if nonrels[-1] == 0:
        return 1.0
    return 1.0 - sum(nonrels[:-1]) / (float(nonrels[-1]) * (len(nonrels) - 1))


def rbo(ranking, ideal, p, depth):
    a, b, score, norm, w = set(), set(), 0.0, 0.0, 1.0
    for i in range(depth):
        if i < len(ranking):
            a.add(ranking[i])
        if i < len(ideal):
            b.add(ideal[i])
        score += w * len(a & b) / (i + 1)
        norm += w
        w *= p
    return score / norm


def ref_compat(m, docids, ideal, p=None):
    p = m.param("p")
    depth = max(len(docids), len(ideal))
    score = rbo(docids, ideal, p, depth)
    if m.param("normalize"):
        best = rbo(ideal, ideal, p, depth)
        if best > 0:
            score /= best
    return score


def ideal_of(docs, extra):
    """Judged documents with grade > 0, grade descending; equal grades: retrieved first in trec_eval's
    tie-oblivious order, then the unretrieved (any fixed order gives the same statistics)."""
    pol = [d for d, _, _ in ordered(docs, "trec_eval")]
    graded = [(d, g) for d, _, g in docs if g is not None and g > 0] + [
        (d, g) for d, g in extra.items() if g > 0
    ]
    graded.sort(key=lambda x: pol.index(x[0]) if x[0] in pol else len(pol))
    graded.sort(key=lambda x: -x[1])
    return [d for d, _ in graded]


def reference(measure, o, ideal):
    m = parse_measure(measure)
    grades = [g for _, _, g in o]
    if m.family == "Accuracy":
        return ref_accuracy(grades, m.cutoff, m.param("rel") or 1)
    if m.family == "Compat":
        return ref_compat(m, [d for d, _, _ in o], ideal)
    return _ref_cwl(measure, tuple(grades))


def close_in_law(got, vals, samples=S):
    mu, var = statistics.fmean(vals), statistics.pvariance(vals)
    return abs(got - mu) <= 5 * math.sqrt(var / samples) + 1e-12


def check(res, qs, qrels, measures):
    pq = res.per_query().set_index(["query", "measure"])
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        ideal = ideal_of(docs, extra)
        for meas in measures:
            row = pq.loc[(q, str(parse_measure(meas)))]
            vals = [reference(meas, o, ideal) for o in orderings(docs)]
            lo, hi = min(vals), max(vals)
            obl = reference(meas, ordered(docs, "trec_eval"), ideal)
            assert math.isclose(row["oblivious"], obl, abs_tol=TOL), (
                q,
                meas,
                row["oblivious"],
                obl,
                docs,
                extra,
            )
            fam = parse_measure(meas).family
            if meas in EXACT:
                assert math.isclose(row["expected"], statistics.fmean(vals), abs_tol=TOL), (
                    q,
                    meas,
                    row,
                    vals,
                    docs,
                )
                assert math.isclose(row["std"], statistics.pstdev(vals), abs_tol=TOL), (
                    q,
                    meas,
                    row,
                    vals,
                    docs,
                )
            else:
                assert close_in_law(row["expected"], vals), (
                    q,
                    meas,
                    row["expected"],
                    statistics.fmean(vals),
                    docs,
                )
            if fam in EXTREMES_SEEN and meas not in EXACT:
                assert lo - TOL <= row["min"] <= row["max"] <= hi + TOL, (
                    q,
                    meas,
                    row["min"],
                    row["max"],
                    lo,
                    hi,
                )
            else:
                assert math.isclose(row["min"], lo, abs_tol=TOL), (
                    q,
                    meas,
                    row["min"],
                    lo,
                    docs,
                    extra,
                )
                assert math.isclose(row["max"], hi, abs_tol=TOL), (
                    q,
                    meas,
                    row["max"],
                    hi,
                    docs,
                    extra,
                )
            if lo == hi:
                assert row["std"] == 0.0 and row["expected"] == row["min"] == row["max"], (
                    q,
                    meas,
                    row,
                )


@SETTINGS
@given(collection())
def test_irm_families_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    assume(all(sum(1 for _ in orderings(docs)) <= 720 for docs, _ in qs))
    check(tierank.evaluate(qrels, run, MEASURES, samples=S, seed=0), qs, qrels, MEASURES)


def test_sampled_families_are_labelled():
    qrels = {"q": {"a": 3, "b": 1, "c": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}}
    res = tierank.evaluate(
        qrels, run, ["INST(max_rel=3)", "NERR10(max_rel=3)", "SDCG(max_rel=3)@3"]
    )
    method = {str(m): s.method for m, s in res.stats.items()}
    assert method == {
        "INST(max_rel=3)": "sampled",
        "NERR10(max_rel=3)": "sampled",
        "SDCG(max_rel=3)@3": "exact",
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("INST", "needs max_rel"),
        ("SDCG@5", "needs max_rel"),
        ("NERR8(max_rel=2,min_rel=2)@5", "less than"),
        ("SDCG(max_rel=2)", "needs a cutoff"),
        ("INSQ(max_rel=2)@5", "takes no cutoff"),
        ("NERR10(p=1.5,max_rel=2)", "p must lie"),
        ("Compat(p=1)", "p must lie"),
    ],
)
def test_bad_parameters_are_clear_input_errors(text, message):
    with pytest.raises(tierank.TierankInputError, match=message):
        parse_measure(text)


def test_strings_round_trip():
    for text in MEASURES:
        assert str(parse_measure(str(parse_measure(text)))) == str(parse_measure(text))


# -- ir_measures' own providers on tie-free runs ---------------------------------------------------
def _tie_free(seed, nq=5, nd=25):
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(-1, 4)) for j in rng.choice(40, 15, replace=False)}
        for i in range(nq)
    }
    run = {q: {f"d{j}": float(v) + 1.0 for j, v in enumerate(rng.permutation(nd))} for q in qrels}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_and_compat_equal_ir_measures_without_ties(seed):
    irm = pytest.importorskip("ir_measures")
    from ir_measures import Accuracy, Compat

    qrels, run = _tie_free(seed)
    ms = [Accuracy, Accuracy @ 10, Accuracy(rel=2), Compat, Compat(p=0.8, normalize=False)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stock = {}
        for m in ms:
            try:  # ir_measures divides by zero for a top k with no non-relevant document
                stock.update(
                    {(x.query_id, str(m)): x.value for x in irm.iter_calc([m], qrels, run)}
                )
            except ZeroDivisionError:
                continue
    pq = (
        tierank.evaluate(qrels, run, [str(m) for m in ms])
        .per_query()
        .set_index(["query", "measure"])
    )
    assert len(stock) > 20
    for (q, name), v in stock.items():
        assert pq.loc[(q, name), "oblivious"] == pytest.approx(v, abs=1e-12), (q, name)
        assert pq.loc[(q, name), "expected"] == pytest.approx(v, abs=1e-12), (q, name)
