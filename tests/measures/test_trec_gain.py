"""trec_eval's G, binG, ndcg_rel, Rndcg (measures/trec_gain.py), unj, rbp_resid (measures/unjudged.py) and
relstring (measures/relstring.py) against brute force over every tie ordering.

The reference ports trec_eval 10's C loops literally (m_G.c, m_binG.c, m_ndcg_rel.c, m_Rndcg.c,
m_unjudged.c, m_rbp_resid.c, with gain_init.c's default gains): one ranked list of qrels values
(-1 for a document not in the qrels, trec_eval's RELVALUE_NONPOOL) -> the value.  Every statistic
is compared on the small hypothesis collections, where G and ndcg_rel are enumerated (exact);
a large tie group checks their sampled path within 5 standard errors.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from reference import check_per_query, ordered, orderings
from tierank.measures import parse_measure

TOL = 1e-9
SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
MEASURES = [
    "G",
    "BinG",
    "BinG(rel=2)",
    "nDCG_rel",
    "RnDCG",
    "RnDCG(rel=2)",
    "Unj@1",
    "Unj@3",
    "Unj@10",
    "RBP_resid(p=0.9)",
    "RBP_resid(p=0.5)",
    # trec_eval's gain maps (G.1=2,2=5, ...): integer gains, so its integer comparator sorts them
    "G(gains={1:2,2:5})",
    "G(gains={0:2,1:-1})",
    "nDCG_rel(gains={0:1,2:0})",
    "nDCG_rel(gains={1:4,3:1})",
    "RnDCG(gains={2:3})",
    "RnDCG(gains={0:1,1:3,2:-1})",
]
STRINGS = ["RelString@10", "RelString@3"]


# -- reference: trec_eval's loops ----------------------------------------------------------------
def _ideal_levels(qgrades, gmap):
    """gain_init.c's setup_gains: (gain, count) of the levels of the gain map ``gmap`` (count 0 unless
    judged) then of the levels 0..max not in it (gain = level), sorted by gain."""
    top = int(max([g for g in qgrades if g >= 0], default=-1))
    levels = [(float(v), sum(1 for g in qgrades if g == k)) for k, v in gmap.items()]
    levels += [
        (float(i), sum(1 for g in qgrades if g == i)) for i in range(top + 1) if i not in gmap
    ]
    return sorted(levels, key=lambda lv: lv[0])


class _Ideal:
    """The ideal-gain walk shared by m_G.c, m_ndcg_rel.c and m_Rndcg.c."""

    def __init__(self, qgrades, gmap=None):
        self.levels = _ideal_levels(qgrades, gmap or {})
        self.cur = len(self.levels) - 1
        self.gain = self.levels[self.cur][0] if self.cur >= 0 else 0.0
        self.num = 0

    def step(self):
        self.num += 1
        while self.cur >= 0 and self.num > self.levels[self.cur][1]:
            self.num = 1
            self.cur -= 1
            self.gain = self.levels[self.cur][0] if self.cur >= 0 else 0.0
        return self.gain


def _gain(rel, gmap=None):
    """get_gain: the level's gain (mapped, else the level); -1 / -2 (not in the qrels, negative) 0."""
    return float((gmap or {}).get(rel, rel)) if rel >= 0 else 0.0


def te_G(rels, qgrades, gmap=None):
    ideal = _Ideal(qgrades, gmap)
    results_g = sum_results = sum_ideal = sum_cost = 0.0
    i = 0
    n = len(rels)
    while i < n and ideal.gain > 0.0:
        g = _gain(rels[i], gmap)
        sum_results += g
        ig = ideal.step()
        if ig > 0.0:
            sum_ideal += ig
        sum_cost += ig if ig >= 1.0 else 1.0
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < n:
        g = _gain(rels[i], gmap)
        sum_results += g
        sum_cost += 1.0
        if g != 0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while ideal.gain > 0.0:
        ig = ideal.step()
        if ig > 0.0:
            sum_ideal += ig
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


def te_binG(rels, nrel, level=1):
    found, total = 0, 0.0
    for i, r in enumerate(rels):
        if r >= level:
            found += 1
            total += 1.0 / math.log2(3 + i - found)
    return total / nrel if found else 0.0


def te_ndcg_rel(rels, qgrades, gmap=None):
    ideal = _Ideal(qgrades, gmap)
    dcg = idcg = total = 0.0
    nrr = nrel = 0
    i, n = 0, len(rels)
    while i < n and ideal.gain > 0.0:
        g = _gain(rels[i], gmap)
        if g != 0:
            dcg += g / math.log2(i + 2)
        ig = ideal.step()
        if ig > 0.0:
            nrel += 1
            idcg += ig / math.log2(i + 2)
        if g > 0:
            total += dcg / idcg
            nrr += 1
        i += 1
    while i < n:
        g = _gain(rels[i], gmap)
        if g != 0:
            dcg += g / math.log2(i + 2)
        if g > 0:
            total += dcg / idcg
            nrr += 1
        i += 1
    while ideal.gain > 0.0:
        ig = ideal.step()
        if ig > 0.0:
            nrel += 1
            idcg += ig / math.log2(i + 2)
        i += 1
    if nrel == nrr:
        pass
    else:
        total += (nrel - nrr) * dcg / idcg
    return total / nrel if total > 0.0 else 0.0


def te_Rndcg(rels, qgrades, nrel, gmap=None):
    if nrel == 0:
        return 0.0
    ideal = _Ideal(qgrades, gmap)
    dcg = idcg = total = 0.0
    old = ideal.gain
    changes = 0
    i, n = 0, len(rels)
    while i < n and ideal.gain > 0.0:
        g = _gain(rels[i], gmap)
        ig = ideal.step()
        if old != ig:
            if idcg > 0.0:
                total += dcg / idcg
                changes += 1
            old = ig
        if g != 0:
            dcg += g / math.log2(i + 2)
        if ig > 0.0:
            idcg += ig / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            g = _gain(rels[i], gmap)
            if g != 0:
                dcg += g / math.log2(i + 2)
            i += 1
        if idcg > 0.0:
            total += dcg / idcg
            changes += 1
    while ideal.gain > 0.0:
        ig = ideal.step()
        if old != ig:
            if idcg > 0.0:
                total += dcg / idcg
                changes += 1
            old = ig
        if ig > 0.0:
            idcg += ig / math.log2(i + 2)
        i += 1
    return total / changes if changes else 0.0


def te_unj(rels, k):
    return sum(1 for r in rels[:k] if r in (-1, -2)) / k


def te_rbp_resid(rels, p):
    unj, total, cur = 0, 0.0, 1.0
    for r in rels:
        if r < 0:
            unj += 1
            total += cur
        cur *= p
    return cur + (1 - p) * total if unj else 0.0


def reference(measure: str, grades, qgrades, depth=None):
    """One ranked list (``grades``: qrels grade or None per rank) -> trec_eval's value."""
    m = parse_measure(measure)
    rels = [-1 if g is None else -2 if g < 0 else int(g) for g in grades][:depth]  # form_res_rels.c
    level = (
        m.param("rel")
        if any(p.name == "rel" for p in m.schema) and m.param("rel") is not None
        else 1
    )
    nrel = sum(1 for g in qgrades if g >= level)
    fam = m.family
    gmap = dict(m.param("gains") or ()) if any(p.name == "gains" for p in m.schema) else {}
    if fam == "G":
        return te_G(rels, qgrades, gmap)
    if fam == "BinG":
        return te_binG(rels, nrel, level)
    if fam == "nDCG_rel":
        return te_ndcg_rel(rels, qgrades, gmap)
    if fam == "RnDCG":
        return te_Rndcg(rels, qgrades, nrel, gmap)
    if fam == "Unj":
        return te_unj(rels, m.cutoff)
    if fam == "RBP_resid":
        return te_rbp_resid(rels, m.param("p"))
    raise ValueError(measure)


def check(res, qs, qrels, measures, depth=None):
    check_per_query(res, qs, qrels, measures, reference, depth, tol=TOL)


@SETTINGS
@given(collection())
def test_match_brute_force(data):
    qs, run, qrels = data
    assume(qrels)
    check(tierank.evaluate(qrels, run, MEASURES), qs, qrels, MEASURES)


@SETTINGS
@given(collection(), st.integers(1, 6))
def test_depth_limit_through_tie_groups_matches_brute_force(data, depth):
    """trec_eval -M: a tie group cut by the depth limit (binG enumerates such a query; rbp_resid's
    indicator of an unjudged document becomes random)."""
    qs, run, qrels = data
    assume(qrels)
    check(tierank.evaluate(qrels, run, MEASURES, max_depth=depth), qs, qrels, MEASURES, depth)


def test_large_tie_group_is_sampled_within_five_standard_errors():
    """One group of 12 documents (grades 3, 2, 2, 1, 1, 1, 0 ...): 12!/(1!2!3!6!) = 55440
    orderings, more than ENUMERATE: G and ndcg_rel are sampled, binG and Rndcg stay exact."""
    grades = [3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    run = {"q": {f"d{i}": 1.0 for i in range(len(grades))}}
    rng = np.random.default_rng(7)
    sims = {m: [] for m in ("G", "nDCG_rel")}
    for _ in range(20000):
        perm = [grades[j] for j in rng.permutation(len(grades))]
        sims["G"].append(te_G(perm, grades))
        sims["nDCG_rel"].append(te_ndcg_rel(perm, grades))
    res = tierank.evaluate(qrels, run, ["G", "nDCG_rel", "BinG", "RnDCG"], samples=2000, seed=5)
    pq = res.per_query().set_index("measure")
    for m, vals in sims.items():
        row = pq.loc[m]
        mu, sd = statistics.fmean(vals), statistics.pstdev(vals)
        assert abs(row["expected"] - mu) <= 5 * sd / math.sqrt(2000) + 5 * sd / math.sqrt(20000), (
            m,
            row,
            mu,
        )
        assert math.isclose(row["std"], sd, rel_tol=0.1), (m, row["std"], sd)
        assert min(vals) - 1e-12 <= row["max"] and row["min"] <= max(vals) + 1e-12
    summary = res.summary(parse_measure("G"))
    assert summary.method == "sampled"
    assert res.summary(parse_measure("BinG")).method == "exact"
    assert res.summary(parse_measure("RnDCG")).method == "exact"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("G", ["G"]),
        ("binG", ["BinG"]),
        ("ndcg_rel", ["nDCG_rel"]),
        ("Rndcg", ["RnDCG"]),
        ("unj", ["Unj@5", "Unj@10", "Unj@20"]),
        ("unj.3", ["Unj@3"]),
        ("rbp_resid", ["RBP_resid(p=0.9)"]),
        ("rbp_resid.p=0.5", ["RBP_resid(p=0.5)"]),
    ],
)
def test_trec_eval_names(text, expected):
    from tierank.measures.names import plan, trec_name

    p = plan([text])
    assert [str(m) for m in p.measures] == expected
    assert [trec_name(m) for m in p.measures] == [e.name for e in p.entries]


@pytest.mark.parametrize(
    "text, expected, printed",
    [
        ("G.1=2,2=5", "G(gains={1:2,2:5})", "G_1=2,2=5"),
        ("ndcg_rel.0=1,2=0", "nDCG_rel(gains={0:1,2:0})", "ndcg_rel_0=1,2=0"),
        ("Rndcg.2=3", "RnDCG(gains={2:3})", "Rndcg_2=3"),
        ("Rndcg.1=0.5", "RnDCG(gains={1:0.5})", "Rndcg_1=0.5"),
    ],
)
def test_gain_maps_name_the_gains_parameter(text, expected, printed):
    """trec_eval's gain map ``G.L=G,...`` is the ``gains`` parameter, printed back as trec_eval prints it."""
    from tierank.measures.names import plan, trec_name

    p = plan([text])
    assert [str(m) for m in p.measures] == [expected]
    assert [e.name for e in p.entries] == [printed] == [trec_name(m) for m in p.measures]


def test_gain_maps_of_negative_grades_are_refused():
    """trec_eval would give such a gain to the documents it reads as unjudged: refused, naming it."""
    from tierank.errors import TierankInputError
    from tierank.measures.names import plan

    with pytest.raises(TierankInputError, match=r"negative grades \(-1\)"):
        plan(["G.-1=3"])
    with pytest.raises(TierankInputError, match="negative grades"):
        parse_measure("RnDCG(gains={-2:1})")


def te_relstring(rels, k):
    """m_relstring.c: one character per rank of the top k (-1: not in the qrels; -2: negative grade)."""
    out = []
    for r in rels[:k]:
        out.append(
            ">" if r > 9 else str(r) if r >= 0 else "-" if r == -1 else "." if r == -2 else "<"
        )
    return "".join(out)


@SETTINGS
@given(collection(), st.sampled_from([None, 2]))
def test_relstring_against_every_ordering(data, depth):
    """The oblivious string is trec_eval's on the tie-broken ranking; the min / max strings (the
    pessimistic / optimistic arrangements) are strings of actual orderings."""
    qs, run, qrels = data
    assume(qrels)
    res = tierank.evaluate(qrels, run, STRINGS, max_depth=depth)
    for meas in STRINGS:
        m = parse_measure(meas)
        st_ = res.stats[m]
        for i, (docs, _extra) in enumerate(qs):
            q = f"q{i}"
            if q not in res.qids:
                continue
            at = res.qids.index(q)

            def rels(o):
                return [-1 if g is None else -2 if g < 0 else int(g) for _, _, g in o][:depth]

            every = {te_relstring(rels(o), m.cutoff) for o in orderings(docs)}
            assert st_.texts["policy"][at] == te_relstring(
                rels(ordered(docs, "trec_eval")), m.cutoff
            )
            assert st_.texts["pessimistic"][at] in every and st_.texts["optimistic"][at] in every


def test_relstring_prints_in_trec_eval_layout_only():
    from tierank.report.formats.trec_eval import render_trec_eval

    res = tierank.evaluate(
        {"q": {"a": 2, "b": 0, "c": -2}},
        {"q": {"a": 1.0, "b": 1.0, "c": 0.5, "x": 0.1}},
        ["relstring", "binG"],
    )
    out = render_trec_eval(res, per_query=True)
    assert out.splitlines()[0] == "relstring             \tq\t'02.-'"
    assert not any(ln.startswith("relstring") and "\tall\t" in ln for ln in out.splitlines())
    assert render_trec_eval(res, per_query=True, stat="min").splitlines()[0].endswith("'02.-'")
    assert render_trec_eval(res, per_query=True, stat="max").splitlines()[0].endswith("'20.-'")
    assert "relstring" not in render_trec_eval(res, per_query=True, stat="expected")


def test_relstring_is_left_out_of_the_other_formats_with_a_note(tmp_path):
    from typer.testing import CliRunner

    from tierank.cli import app

    (tmp_path / "qrels").write_text("q 0 a 2\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 a 1 1.0 t\nq Q0 b 2 1.0 t\nq Q0 x 3 0.5 t\n")
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 keeps stderr apart already
        runner = CliRunner()
    args = ["eval", "-m", "relstring", "-m", "binG", str(tmp_path / "qrels"), str(tmp_path / "run")]
    res = runner.invoke(app, [*args, "-f", "tsv"])
    assert res.exit_code == 0 and "RelString" not in res.stdout and "BinG" in res.stdout
    assert "relstring: a string per query, printed by --format trec_eval only" in res.stderr
    res = runner.invoke(app, [*args, "-f", "trec_eval", "-q"])
    assert res.exit_code == 0 and "relstring             \tq\t'02-'" in res.stdout


@SETTINGS
@given(collection(), st.sampled_from([None, 0, 2]), st.sampled_from([None, "{1:0}", "{0:1}"]))
def test_rndcg_undefined_nan_is_trec_eval_s_zero_over_zero(data, level, gains):
    """``RnDCG(undefined='nan')``: NaN in every statistic exactly where the query has relevant documents
    (at its level) but no judgment of positive gain (m_Rndcg.c divides 0 by 0); elsewhere the
    default's statistics, bit for bit."""
    qs, run, qrels = data
    assume(qrels)
    params = [] if gains is None else [f"gains={gains}"]
    if level is not None:
        params.append(f"rel={level}")
    base = f"RnDCG({','.join(params)})" if params else "RnDCG"
    nan = parse_measure(base)(undefined="nan")
    res = tierank.evaluate(qrels, run, [base, nan])
    gmap = {
        int(k): float(v)
        for k, v in (kv.split(":") for kv in (gains or "{}")[1:-1].split(",") if kv)
    }
    for i, q in enumerate(res.qids):
        graded = [g for g in qrels.get(q, {}).values()]
        nrel = sum(1 for g in graded if g >= (1 if level is None else level))
        positive = any(gmap.get(int(g), g) > 0 for g in graded if g >= 0)
        a, b = res.stats[parse_measure(base)], res.stats[nan]
        for k in ("oblivious", "expected", "min", "max", "var"):
            x, y = getattr(a, k)[i], getattr(b, k)[i]
            if nrel > 0 and not positive:
                assert math.isnan(y), (q, k)
            else:
                assert x == y, (q, k, x, y)
