"""trec_eval's G, binG, ndcg_rel, Rndcg (measures/trec_gain.py), unj, rbp_resid (measures/unjudged.py) and
relstring (measures/relstring.py) against brute force over every tie ordering.

The reference ports trec_eval 10's C loops literally (m_G.c, m_binG.c, m_ndcg_rel.c, m_Rndcg.c,
m_unjudged.c, m_rbp_resid.c, with gain_init.c's default gains): one ranked list of qrels values
(-1 for a document not in the qrels, trec_eval's RELVALUE_NONPOOL) -> the value.  Every statistic
is compared on the small hypothesis collections and on larger tie groups (G and ndcg_rel exact from the
lattice of prefix states); a group past the lattice limit checks their sampled path within 5 standard
errors.
"""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tierank
from helpers import distinct_orderings, examples
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


def _exact(grades, fn):
    vals = [fn(list(o), grades) for o in distinct_orderings(grades)]
    return statistics.fmean(vals), statistics.pstdev(vals), min(vals), max(vals)


@pytest.mark.parametrize(
    "grades",
    [
        [3, 2, 2, 1, 1, 0, 0, 0, 0],  # 3,780 orderings
        pytest.param([3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0], marks=pytest.mark.full),  # 55,440
    ],
)
def test_one_large_tie_group_is_exact(grades):
    """One tie group with more orderings than a sample would cover: G and ndcg_rel are exact (the
    lattice of prefix states), against every distinct ordering."""
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    run = {"q": {f"d{i}": 1.0 for i in range(len(grades))}}
    res = tierank.evaluate(qrels, run, ["G", "nDCG_rel", "BinG", "RnDCG"])
    pq = res.per_query().set_index("measure")
    for m, fn in (("G", te_G), ("nDCG_rel", te_ndcg_rel)):
        mu, sd, lo, hi = _exact(grades, fn)
        row = pq.loc[m]
        assert math.isclose(row["expected"], mu, abs_tol=TOL), (m, row["expected"], mu)
        assert math.isclose(row["std"], sd, abs_tol=TOL), (m, row["std"], sd)
        assert math.isclose(row["min"], lo, abs_tol=TOL) and math.isclose(
            row["max"], hi, abs_tol=TOL
        )
        assert res.summary(parse_measure(m)).method == "exact"


@st.composite
def _tied_query(draw):
    """One query of up to 3 tie groups of up to 9 documents (grades None, -1, 0..3) with at most
    3,000 distinct orderings in all, and judged documents not retrieved."""
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3))
    grade = st.sampled_from([None, None, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0])
    groups = [draw(st.lists(grade, min_size=m, max_size=m)) for m in sizes]
    total = 1
    for g in groups:
        total *= len(distinct_orderings([-9 if x is None else x for x in g]))
    assume(total <= 3000)
    extra = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0]), max_size=3))
    return groups, extra


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _tied_query(),
    st.sampled_from([None, 3, 7]),
    st.sampled_from(["G", "nDCG_rel", "G(gains={1:3,2:0.5})", "nDCG_rel(gains={0:1,3:7})"]),
)
def test_large_tie_groups_match_every_distinct_ordering(data, depth, measure):
    """Larger tie groups than the collections of `test_match_brute_force`: every statistic of G and
    ndcg_rel against every distinct ordering of the groups (a gain map with a gain below 1, a
    zero grade gaining 1; trec_eval -M through a group)."""
    import itertools

    groups, extra = data
    qrels, run, keys = {}, {}, []
    for gi, g in enumerate(groups):
        for di, grade in enumerate(g):
            d = f"g{gi}d{di}"
            run[d] = float(len(groups) - gi)
            if grade is not None:
                qrels[d] = grade
        keys.append([-9 if x is None else int(x) for x in g])
    for i, grade in enumerate(extra):
        qrels[f"u{i}"] = grade
    assume(qrels)
    qg = list(qrels.values())
    res = tierank.evaluate({"q": qrels}, {"q": run}, [measure], max_depth=depth)
    row = res.per_query().set_index("measure").loc[str(parse_measure(measure))]

    def rels(order):  # -9 (not in the qrels) -> None
        return [None if x == -9 else float(x) for x in order]

    vals = [
        reference(measure, rels([x for grp in combo for x in grp]), qg, depth)
        for combo in itertools.product(*(distinct_orderings(k) for k in keys))
    ]
    info = (groups, extra, depth, dict(row))
    assert math.isclose(row["min"], min(vals), abs_tol=TOL), info
    assert math.isclose(row["max"], max(vals), abs_tol=TOL), info
    assert math.isclose(row["expected"], statistics.fmean(vals), abs_tol=TOL), info
    assert math.isclose(row["std"], statistics.pstdev(vals), abs_tol=TOL), info
    if min(vals) == max(vals):
        assert row["std"] == 0.0 and row["expected"] == row["min"] == row["max"], info


def test_groups_past_the_lattice_limit_are_sampled_and_labelled(monkeypatch):
    """A group whose lattice is larger than the limit falls back to the sampled orderings (55,440 of
    them here), labelled per query: within 5 standard errors of the exact values (the lattice's,
    checked against every ordering above), its extremes inside the exact range."""
    from tierank.measures import lattice

    grades = [3, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades)}, "p": {"a": 1}}
    run = {"q": {f"d{i}": 1.0 for i in range(len(grades))}, "p": {"a": 1.0, "b": 1.0}}
    exact = tierank.evaluate(qrels, run, ["G", "nDCG_rel"])
    monkeypatch.setattr(lattice, "MAX_STATES", 4)
    res = tierank.evaluate(qrels, run, ["G", "nDCG_rel"], samples=2000, seed=5)
    at = res.qids.index("q")
    for m in ("G", "nDCG_rel"):
        s, e = res.stats[parse_measure(m)], exact.stats[parse_measure(m)]
        assert e.method == "exact" and s.method == "sampled" and s.samples == 2000
        assert s.sampled_queries()[at] and not s.sampled_queries()[res.qids.index("p")]
        sd = math.sqrt(e.var[at])
        assert abs(s.expected[at] - e.expected[at]) <= 5 * sd / math.sqrt(2000), m
        assert math.isclose(math.sqrt(s.var[at]), sd, rel_tol=0.1), m
        assert e.min[at] - 1e-12 <= s.min[at] <= s.max[at] <= e.max[at] + 1e-12, m


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


@SETTINGS
@given(collection(max_queries=3), st.sampled_from([None, "{1:1.3,2:2.7}"]))
def test_a_query_s_statistics_do_not_depend_on_the_other_queries(data, gains):
    """G's and ndcg_rel's exact statistics of a query are the same to the last bit evaluated alone
    and among other queries (as streaming in blocks evaluates it): the running sums restart at each
    query."""
    _, run, qrels = data
    assume(qrels)
    measures = [f"G(gains={gains})", f"nDCG_rel(gains={gains})"] if gains else ["G", "nDCG_rel"]
    together = tierank.evaluate(qrels, run, measures)
    for q in qrels:
        if q not in run:
            continue
        alone = tierank.evaluate({q: qrels[q]}, {q: run[q]}, measures)
        i = list(together.qids).index(q)
        for m in together.measures:
            a, b = together.stats[m], alone.stats[m]
            for col in ("oblivious", "expected", "min", "max", "var"):
                assert getattr(a, col)[i] == getattr(b, col)[0], (q, str(m), col)


# -- the one ranking's value and the running sums, bit for bit -------------------------------------
@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=12),
    st.data(),
)
def test_running_sums_are_segment_cumsum_bit_for_bit(lens, data):
    """`running_sums` gives `segment_cumsum`'s floats, sign of zero included, for whole numbers
    (one running sum over everything, differenced) and for fractions (per segment)."""
    import numpy as np

    from tierank.measures.gains import running_sums
    from tierank.measures.prefixes import segment_cumsum

    n = sum(lens)
    elements = data.draw(
        st.sampled_from(
            [
                st.integers(-3, 5).map(float),
                st.sampled_from([0.0, -0.0, 1.0, 2.0]),
                st.floats(-10, 10, allow_nan=False, width=64),
                st.sampled_from([0.1, 0.2, 0.7, 1e16, -1e16, 3.0]),
            ]
        )
    )
    x = np.array(data.draw(st.lists(elements, min_size=n, max_size=n)), dtype=np.float64)
    bounds = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    got, want = running_sums(x, bounds), segment_cumsum(x, bounds)
    assert got.tobytes() == want.tobytes(), (x.tolist(), lens, got.tolist(), want.tolist())


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    collection(max_queries=4),
    st.sampled_from(["G", "nDCG_rel"]),
    st.sampled_from([None, "{1:1.3,2:2.7}", "{0:2,1:-1}", "{1:0.1,2:0.7,3:0.35}"]),
    st.sampled_from([None, 1, 3]),
)
def test_the_one_ranking_s_value_is_ordering_values_bit_for_bit(data, family, gains, depth):
    """G's and ndcg_rel's value of one ranking per query (`ranking_values`: running sums over the
    rows read of every query at once) is the float `ordering_values` gives for that query's
    ranking alone, bit for bit, for the policy's and the extremal arrangements."""
    import numpy as np

    from tierank.measures.gains import RankedRows, doc_gains
    from tierank.settings import EvalSettings
    from tierank.ties import prepare

    _, run, qrels = data
    assume(qrels)
    m = parse_measure(f"{family}(gains={gains})" if gains else family)
    settings_ = EvalSettings(complete=True, max_depth=depth)
    prep = prepare(tierank.to_run(run), tierank.to_qrels(qrels), settings_, measures=[m])
    values = doc_gains(prep, m.param("gains"))
    cut = prep.cut(float("inf"))
    for which in ("policy", "optimistic", "pessimistic"):
        a = prep.sorted_in_groups(values, which)
        got = m.ranking_values(prep, a, RankedRows.every(prep))
        for q in range(prep.nq):
            s, e = int(prep.qstart[q]), int(prep.qstart[q + 1])
            n = int(min(e - s, cut))
            want = m.ordering_values(prep, q, a[s:e][None, :n])[0]
            assert np.float64(got[q]).tobytes() == np.float64(want).tobytes(), (q, which)
