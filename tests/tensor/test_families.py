"""The families on tensors come from the registry: every family that declares a tensor kernel
(`Measure.tensor_kernel`) agrees with `tierank.evaluate` on random tied data, a family registered
with one is evaluated on tensors with no other change, and the summary over queries is the
measures' own rule.  Rows are wider than a sort's small-row threshold, so the input order inside
ties is checked where an unstable sort would lose it."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank import tensor
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, parse_measure, register
from tierank.measures.linear import REL, Linear

from . import test_tensor as tt

NO_TORCH = 'torch is not installed: pip install -e ".[torchmetrics]"'


def family_measures() -> list[str]:
    """One or two measures of every family with a tensor kernel: at a cutoff where one is
    allowed, and without one where none is required (the family's ``example`` where it declares
    one: a required parameter)."""
    out = []
    for fam in tensor.families():
        cls = REGISTRY[fam]
        example = getattr(cls, "example", None)  # a family with a required parameter shows one
        if example:
            out.append(example)
            continue
        if cls.cutoff_allowed:
            out.append(f"{fam}@3")
        if not cls.cutoff_required:
            out.append(fam)
    return out


FAMILY_MEASURES = family_measures()


def test_every_family_with_a_tensor_kernel_is_listed():
    assert tensor.FAMILIES == tensor.families()
    for fam in ("nDCG", "P", "R", "R_cap", "F1", "Hits", "Rprec", "RBP", "RR", "Success", "AP"):
        assert fam in tensor.FAMILIES
    assert "Judged" in tensor.FAMILIES  # every candidate of a tensor has a label
    assert "Bpref" in tensor.FAMILIES  # the labels are the judgments
    assert "infAP" not in tensor.FAMILIES  # no kernel: refused in one line
    with pytest.raises(TierankInputError, match="no tensor kernel for infAP"):
        tensor.evaluate(np.zeros((1, 2)), np.zeros((1, 2)), ["infAP"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tt.batches(max_q=6, max_c=40),
    st.sampled_from(["input", "reverse"]),
    st.sampled_from([1, 2]),
)
def test_every_family_agrees_with_evaluate_on_wide_tied_rows(b, tie_break, rel):
    scores, labels, mask, _ = b
    res = tensor.evaluate(scores, labels, FAMILY_MEASURES, mask=mask, rel=rel, tie_break=tie_break)
    tt.check(res, scores, labels, mask, FAMILY_MEASURES, 1e-12, rel=rel, tie_break=tie_break)


@pytest.mark.parametrize("tie_break", ["input", "reverse"])
def test_input_order_inside_ties_on_long_rows(tie_break):
    """200 candidates, three score values: the oblivious value keeps the input order (or its
    reverse) inside every tie, in NumPy and PyTorch, with and without padding."""
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 3, (40, 200)) * 0.5
    labels = rng.integers(0, 3, (40, 200))
    mask = rng.random((40, 200)) < 0.9
    ms = ["AP", "RR", "nDCG@20", "P@50", "Rprec", "Success@2"]
    for m in (mask, np.ones_like(mask)):
        res = tensor.evaluate(scores, labels, ms, mask=m, tie_break=tie_break)
        assert tt.check(res, scores, labels, m, ms, 1e-12, tie_break=tie_break) > 0
        res_t = tensor.evaluate(
            torch.tensor(scores),
            torch.tensor(labels),
            ms,
            mask=torch.tensor(m),
            tie_break=tie_break,
        )
        for name in ms:
            for s in tt.STATS:
                np.testing.assert_allclose(
                    getattr(res_t[name], s).numpy(), getattr(res[name], s), rtol=0, atol=1e-13
                )


class _Harmonic(Linear):
    """A test family: relevant documents weighted 1/rank, over N+."""

    family = "HarmonicForTest"
    schema = (REL,)
    tensor_kernel: ClassVar[str | None] = "linear"
    uses_n_plus: ClassVar[bool] = True

    def position_weights(self, xp, pos):
        return 1.0 / (pos + 1.0)

    def normalizer(self, xp, nrel, retrieved):
        return nrel


def test_a_family_registered_with_a_tensor_kernel_is_on_tensors():
    """One class and one registration: the family is listed, parsed and evaluated on tensors with
    the numbers of tierank.evaluate (the same formulas)."""
    assert "HarmonicForTest" not in tensor.families()
    register(_Harmonic)
    try:
        assert "HarmonicForTest" in tensor.families()
        scores, labels, mask, _ = tt.big_batch(11, q=80, c=30)
        ms = ["HarmonicForTest", "HarmonicForTest@4", "HarmonicForTest(rel=2)@10"]
        res = tensor.evaluate(scores, labels, ms, mask=mask)
        assert tt.check(res, scores, labels, mask, ms, 1e-12) > 0
        assert float(np.max(res["HarmonicForTest"].std)) > 0  # the ties do move it
        # N+ given at rel=1 does not serve a measure at rel=2: refused, as for R and AP
        with pytest.raises(TierankInputError, match="n_relevant counts relevant documents"):
            tensor.evaluate(scores, labels, ["HarmonicForTest(rel=2)"], n_relevant=np.full(80, 9))
    finally:
        del REGISTRY["HarmonicForTest"]
    assert "HarmonicForTest" not in tensor.families()


def test_a_parameter_a_family_refuses_on_tensors_is_one_line():
    for m, why in (
        ("nDCG(judged_only=True)@5", "judged_only does not apply"),
        ("nDCG(gains={1:-1},negative='keep')@5", "negative='zero' has a kernel"),
    ):
        with pytest.raises(TierankInputError, match=why):
            tensor.evaluate(np.zeros((1, 2)), np.zeros((1, 2)), [m])


def test_the_summary_is_the_measures_own_rule():
    """TensorStats.summary and Measure.aggregate (tierank.evaluate) apply one rule: the means, and
    std = sqrt(sum of the per-query variances) / queries."""
    scores, labels, mask, _ = tt.big_batch(12, q=120, c=12)
    mask[:] = True
    ms = ["AP", "nDCG@5", "RR@3", "Hits@4"]
    res = tensor.evaluate(scores, labels, ms)
    run, qrels = tt.as_run(scores, labels, mask)
    agg = tierank.evaluate(qrels, run, ms, tie_break="input").aggregate().set_index("measure")
    for m in ms:
        s = res[m].summary()
        for key in ("oblivious", "expected", "min", "max", "std"):
            assert abs(s[key] - float(agg.loc[m, key])) <= 1e-12, (m, key)
        var = np.asarray(res[m].var)
        assert s["std"] == pytest.approx(np.sqrt(var.sum()) / len(var), rel=1e-15, abs=0)
    assert parse_measure("Hits@4").aggregator == "mean"


@pytest.mark.parametrize("rel", [1, 2])
def test_bpref_reads_the_labels_as_judgments(rel):
    """bpref on tensors: a negative label is unjudged (skipped, as trec_eval skips a negative
    grade), ``0 <= label < rel`` judged non-relevant; the numbers of tierank.evaluate on the same
    labels written as qrels, tie orderings moving it."""
    rng = np.random.default_rng(rel)
    scores = rng.integers(0, 4, (60, 30)) * 0.5
    labels = rng.integers(-1, 3, (60, 30))
    mask = rng.random((60, 30)) < 0.9
    for tie_break in ("input", "reverse"):
        res = tensor.evaluate(scores, labels, ["Bpref"], mask=mask, rel=rel, tie_break=tie_break)
        assert tt.check(res, scores, labels, mask, ["Bpref"], 1e-12, rel=rel, tie_break=tie_break)
        assert float(np.max(res["Bpref"].std)) > 0
        assert np.all(res["Bpref"].min <= res["Bpref"].expected + 1e-15)


def test_err_on_wide_rows_of_large_tie_groups():
    """ERR's tie groups of up to ~30 candidates with grades 0..4 (pair laws of many order
    statistics): the numbers of tierank.evaluate, in NumPy float64 and PyTorch, at and without a
    cutoff; a grade above max_grade is one line."""
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 3, (40, 60)) * 0.5
    labels = rng.integers(0, 5, (40, 60))
    mask = rng.random((40, 60)) < 0.9
    ms = ["ERR", "ERR@20", "ERR(max_grade=5)@7"]
    for tie_break in ("input", "reverse"):
        res = tensor.evaluate(scores, labels, ms, mask=mask, tie_break=tie_break)
        assert tt.check(res, scores, labels, mask, ms, 1e-12, tie_break=tie_break) > 0
        assert float(np.max(res["ERR"].std)) > 0
    with pytest.raises(TierankInputError, match="grade 5, above the largest grade 4"):
        tensor.evaluate(scores, labels + 1, ["ERR"])
    torch = pytest.importorskip("torch", reason=NO_TORCH)
    res = tensor.evaluate(scores, labels, ms, mask=mask)
    res_t = tensor.evaluate(torch.tensor(scores), torch.tensor(labels), ms, mask=torch.tensor(mask))
    for name in ms:
        for s in tt.STATS:
            np.testing.assert_allclose(
                getattr(res_t[name], s).numpy(), getattr(res[name], s), rtol=0, atol=1e-13
            )


def test_err_and_bpref_under_the_strict_array_api():
    """ERR's and bpref's kernels use the array API standard only (array_api_strict refuses the rest)."""
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(6)
    scores = rng.integers(0, 3, (20, 30)) * 0.5
    labels = rng.integers(-1, 5, (20, 30))
    mask = rng.random((20, 30)) < 0.9
    ms = ["ERR", "ERR@7", "Bpref", "Bpref(rel=2)"]
    ref = tensor.evaluate(scores, labels, ms, mask=mask)
    assert tt.check(ref, scores, labels, mask, ms, 1e-12) > 0
    got = tensor.evaluate(xps.asarray(scores), xps.asarray(labels), ms, mask=xps.asarray(mask))
    for name in ms:
        for s in tt.STATS:
            np.testing.assert_allclose(
                np.asarray(getattr(got[name], s)), getattr(ref[name], s), rtol=0, atol=1e-13
            )


def test_rbp_residual_reads_a_negative_label_as_unjudged():
    """RBP_resid and Unj on tensors (trec_eval's rbp_resid and unj: a negative grade is unjudged): the numbers of
    tierank.evaluate on the labels written as qrels, 0 for a query with every candidate judged, and
    RBP's own weights moved by the ties."""
    rng = np.random.default_rng(8)
    scores = rng.integers(0, 3, (40, 20)) * 0.5
    labels = rng.integers(-1, 3, (40, 20))
    labels[::5] = np.abs(labels[::5])  # every candidate judged
    mask = rng.random((40, 20)) < 0.9
    ms = ["RBP_resid(p=0.8)", "RBP_resid(p=0.5)", "RBP(p=0.5)", "Unj@5", "Unj@30"]
    ms += ["RBP(p=0.8,gain='trec_eval')", "RBP(p=0.5,gain='trec_eval')@5"]
    for tie_break in ("input", "reverse"):
        res = tensor.evaluate(scores, labels, ms, mask=mask, tie_break=tie_break)
        assert tt.check(res, scores, labels, mask, ms, 1e-12, tie_break=tie_break) > 0
        resid = res["RBP_resid(p=0.8)"]
        assert np.all(resid.expected[::5] == 0) and np.all(resid.std[::5] == 0)
        assert float(np.max(resid.std)) > 0
        assert float(np.max(res["Unj@5"].std)) > 0 and np.all(res["Unj@5"].max[::5] == 0)


@pytest.mark.parametrize(
    "m, why",
    [
        ("GMAP", "its geometric mean over queries has no closed-form expectation"),
        ("alpha_nDCG@5", "it reads subtopic judgments"),
        ("RelString@10", "a string of grades has no expectation"),
    ],
)
def test_a_family_without_a_dense_closed_form_says_why(m, why):
    with pytest.raises(TierankInputError, match=f"no tensor kernel for .*: {why}") as e:
        tensor.evaluate(np.zeros((1, 2)), np.zeros((1, 2)), [m])
    assert "\n" not in str(e.value)


def test_the_set_measures_and_relative_precision_on_tensors():
    """SetP, SetR, SetRelP, NumRelRet, NumNonRelJudgedRet and RelP: Linear's hooks, so on tensors with the numbers of
    tierank.evaluate, N+ counted or given (n_relevant); the set measures read every candidate
    whatever the ordering (std exactly 0), RelP@3 moves with the ties."""
    scores, labels, mask, extra = tt.big_batch(3)
    ms = ["SetP", "SetR", "SetRelP", "RelP@3", "NumRelRet", "NumNonRelJudgedRet"]
    present = ((labels >= 1) & mask).sum(axis=1)
    res = tensor.evaluate(scores, labels, ms, mask=mask, n_relevant=present + extra)
    assert tt.check(res, scores, labels, mask, ms, 1e-12, extra=extra) > 0
    res = tensor.evaluate(scores, labels, ms, mask=mask, rel=2)
    assert tt.check(res, scores, labels, mask, ms, 1e-12, rel=2) > 0
    assert all(float(np.max(res[m].std)) == 0.0 for m in ms if m != "RelP@3")
    assert float(np.max(res["RelP@3"].std)) > 0
    assert res["NumRelRet"].summary()["expected"] == float(((labels >= 2) & mask).sum())
    judged_non = (labels >= 0) & (labels < 2) & mask
    assert res["NumNonRelJudgedRet"].summary()["expected"] == float(judged_non.sum())


def test_the_cwl_weighted_sums_on_tensors():
    """SDCG and INSQ (cwl_eval's scaled gains, weights that do not read the gains): on tensors with
    the numbers of tierank.evaluate; the families whose continuation reads the gains (NERR, INST)
    have no closed form and say so."""
    rng = np.random.default_rng(9)
    scores = rng.integers(0, 3, (40, 30)) * 0.5
    labels = rng.integers(-1, 4, (40, 30))
    mask = rng.random((40, 30)) < 0.9
    ms = ["SDCG(max_rel=3)@10", "SDCG(min_rel=1,max_rel=2)@5", "INSQ(T=2.5,max_rel=3)"]
    res = tensor.evaluate(scores, labels, ms, mask=mask)
    assert tt.check(res, scores, labels, mask, ms, 1e-12) > 0
    assert all(float(np.max(res[m].std)) > 0 for m in ms)
    for m in ("NERR10(max_rel=3)", "INST(max_rel=3)", "IPrec@0.5"):
        with pytest.raises(TierankInputError, match="no known closed form"):
            tensor.evaluate(scores, labels, [m], mask=mask)
