"""`compare` reports every system's summary as `eval` does: the measure's own aggregate (a mean, a
sum for counts, trec_eval's floored geometric mean for GMAP), for every family in the registry."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tierank
from helpers import invoke
from tierank.analysis.compare import compare, records
from tierank.analysis.inference import mean_cis, paired_tests
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, parse_measure

QRELS = {f"q{i}": {"a": 2, "b": 1, "c": 0, "d": 1 if i % 2 else 0, "e": 0} for i in range(6)}
QRELS["q6"] = {"a": 1, "z": 1}  # a query one run does not answer: dropped from the comparison


def _runs():
    rng = np.random.default_rng(3)
    docs = ["a", "b", "c", "d", "e", "f", "g"]
    out = {}
    for name, levels in (("coarse", 2), ("fine", 50), ("mid", 4)):
        out[name] = {
            q: {d: float(rng.integers(0, levels)) for d in docs} for q in QRELS if q != "q6"
        }
    out["fine"]["q6"] = {"a": 1.0, "x": 2.0}
    return out


def _subtopics(qrels: dict) -> dict:
    """Subtopic qrels of plain ones (for the families that read them): subtopic 1 at the grade,
    subtopic 2 one grade lower."""
    return {
        q: {d: {"1": g, "2": max(g - 1, 0)} for d, g in docs.items()} for q, docs in qrels.items()
    }


def _one_measure_per_family() -> list[str]:
    """One measure string of every registered family (from the brute-force parametrisations, which
    list every family: a family added later is checked here too)."""
    from measures.test_bruteforce_registry import BRUTE_FORCE

    first: dict[str, str] = {}
    for measures in BRUTE_FORCE.values():
        for text in measures:
            first.setdefault(parse_measure(text).family, text)
    families = {cls.family for cls in REGISTRY.values()}
    assert families <= set(first), sorted(families - set(first))
    return [first[f] for f in sorted(families, key=str.lower)]


@pytest.mark.parametrize("measure", _one_measure_per_family())
def test_compare_system_values_are_eval_aggregates(measure):
    runs = _runs()
    m = parse_measure(measure)
    judged = _subtopics(QRELS) if m.needs_subtopics else QRELS
    if getattr(m, "string_valued", False):
        with pytest.raises(
            TierankInputError, match=f"{m}.*string.*system coarse.*cannot be compared"
        ):
            compare(runs, judged, measure)
        return
    cmp = compare(runs, judged, measure)
    common = set(cmp.queries)
    assert cmp.dropped_queries == 1 and "q6" not in common
    qrels = {q: j for q, j in judged.items() if q in common}
    for s in cmp.systems:
        res = tierank.evaluate(
            qrels, {q: d for q, d in runs[s.name].items() if q in common}, [measure]
        )
        agg = res.summary(res.measures[0])
        for k in ("oblivious", "expected", "min", "max", "std"):
            want, got = getattr(agg, k), getattr(s, k)
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True), (
                measure,
                s.name,
                k,
            )
    assert cmp.inference["aggregator"] == m.aggregator


@pytest.mark.parametrize("measure", ["GMAP", "NumRet", "AP"])
def test_inference_is_on_the_aggregators_scale(measure):
    """Geometric: the t CI of the mean log value mapped back with exp (and holding the summary); sums:
    the mean's interval times n; the tests the same as on the per-query (log) values."""
    runs = _runs()
    cmp = compare(runs, QRELS, measure)
    n = len(cmp.queries)
    qrels = {q: j for q, j in QRELS.items() if q in cmp.queries}
    m = parse_measure(measure)
    cols = {}
    for name in runs:
        res = tierank.evaluate(
            qrels, {q: d for q, d in runs[name].items() if q in qrels}, [measure]
        )
        st = res.stats[res.measures[0]]
        x = (
            n * np.log(st.root_mean)
            if m.aggregator == "geometric_mean"
            else np.asarray(st.expected)
        )
        cols[name] = x
        (ci,) = mean_cis(x, [name], method="t")
        s = cmp.system(name)
        back = (
            np.exp
            if m.aggregator == "geometric_mean"
            else (lambda v: v * n if m.aggregator == "sum" else v)
        )
        assert s.ci_low == pytest.approx(back(ci.ci_low), rel=1e-9)
        assert s.ci_high == pytest.approx(back(ci.ci_high), rel=1e-9)
        if m.aggregator == "geometric_mean":  # exp(mean log) is the aggregate itself
            assert math.exp(float(np.mean(x))) == pytest.approx(s.expected, rel=1e-9)
            assert s.ci_low <= s.expected <= s.ci_high
    for pc in cmp.pairs:
        (ref,) = paired_tests(np.column_stack([cols[pc.a], cols[pc.b]]), [pc.a, pc.b], test="t")
        assert pc.p == pytest.approx(ref.p, rel=1e-12)
        if m.aggregator == "geometric_mean":
            assert pc.diff_ci_low is None or math.isnan(pc.diff_ci_low)
            assert pc.ratio == pytest.approx(cmp.system(pc.a).expected / cmp.system(pc.b).expected)
            assert pc.ratio_ci_low == pytest.approx(
                math.exp(ref.diff_ci_low), rel=1e-9, nan_ok=True
            )
        else:
            scale = n if m.aggregator == "sum" else 1
            # NaN in both where the pair has too few nonzero differences for an interval
            assert pc.diff_ci_low == pytest.approx(
                scale * ref.diff_ci_low, rel=1e-9, abs=1e-12, nan_ok=True
            )
    assert records(cmp)["inference"]["scale"] == (
        "log" if m.aggregator == "geometric_mean" else "linear"
    )


def test_one_query_leaves_every_interval_null_with_the_reason():
    qrels = {"q": {"a": 1, "b": 0}}
    runs = {
        "A": {"q": {"a": 2.0, "b": 1.0}},
        "B": {"q": {"b": 2.0, "a": 1.0}},
        "C": {"q": {"a": 1.0, "b": 1.0}},
    }
    for ci in ("t", "percentile", "bca"):
        rec = records(
            compare(runs, qrels, "RR", ci=ci, leaderboard=True, resamples=200, permutations=200)
        )
        for s in rec["systems"]:
            assert (s["ci_low"], s["ci_high"], s["rank_low"], s["rank_high"], s["group"]) == (
                None,
            ) * 5
        assert rec["best"] is None and all(p["p_tukey"] is None for p in rec["pairs"])
        assert all(p["diff_ci_low"] is None and p["diff_ci_high"] is None for p in rec["pairs"])
        assert any("1 query" in n for n in rec["notes"])


def test_tukey_p_of_every_pair_in_json():
    runs = _runs()
    doc = records(compare(runs, QRELS, "AP", leaderboard=True, permutations=300, resamples=100))
    from tierank.analysis.inference import tukey_hsd

    cmp = compare(runs, QRELS, "AP")
    assert len(doc["pairs"]) == 3
    for p in doc["pairs"]:
        assert 0 < p["p_tukey"] <= 1
    # the same figures as tukey_hsd on the per-query expected values
    qrels = {q: j for q, j in QRELS.items() if q in cmp.queries}
    cols = [
        np.asarray(
            tierank.evaluate(qrels, {q: d for q, d in runs[s.name].items() if q in qrels}, ["AP"])
            .stats[parse_measure("AP")]
            .expected
        )
        for s in cmp.systems
    ]
    X = np.column_stack(cols)
    h = tukey_hsd(X, [s.name for s in cmp.systems], permutations=300)
    for p in doc["pairs"]:
        assert p["p_tukey"] == pytest.approx(h.pvalue(p["a"], p["b"]))


def test_a_string_measure_is_refused_in_one_line_naming_measure_and_system(tmp_path):
    q = tmp_path / "q.qrels"
    q.write_text("q1 0 a 1\nq1 0 b 0\n")
    for name in ("A", "B"):
        (tmp_path / f"{name}.run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    p = invoke(
        "compare",
        str(q),
        str(tmp_path / "A.run"),
        str(tmp_path / "B.run"),
        "-m",
        "RelString@10",
        check=False,
    )
    assert p.returncode == 2
    err = p.stderr.strip()
    assert (
        len(err.splitlines()) == 1
        and "RelString@10" in err
        and "A.run" in err
        and "cannot be compared" in err
    )
    assert "Traceback" not in p.stderr


def test_help_of_alpha_and_correction_names_no_single_test():
    out = invoke("compare", "--help").stdout
    assert "t-tests' p-values" not in out and "whichever --test" in " ".join(out.split())
