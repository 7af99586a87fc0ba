"""What tierank.tensor.evaluate is given: refused in one line where it cannot be evaluated, accepted
(and the same numbers) where a user would expect it to work."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tierank import tensor
from tierank.errors import TierankInputError
from tierank.tensor.inputs import gain_limit_log2

SCORES = np.array([[0.9, 0.5, 0.5, 0.1], [0.7, 0.7, 0.2, 0.0]])
LABELS = np.array([[0, 1, 0, 2], [1, 0, 0, 1]])
MS = ["nDCG@3", "RR@10", "AP", "R@2"]


def same(res, ref, tol=1e-12):
    for name in MS:
        for key in ("oblivious", "expected", "min", "max", "std"):
            got = np.asarray(getattr(res[name], key), dtype=np.float64)
            np.testing.assert_allclose(got, getattr(ref[name], key), rtol=0, atol=tol)


def one_line(call, message):
    with pytest.raises(TierankInputError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_python_lists_are_arrays():
    ref = tensor.evaluate(SCORES, LABELS, MS)
    same(tensor.evaluate(SCORES.tolist(), LABELS.tolist(), MS), ref)
    flat = tensor.evaluate(
        SCORES.reshape(-1).tolist(), LABELS.reshape(-1).tolist(), MS, indexes=[0] * 4 + [1] * 4
    )
    same(flat, ref)
    one_line(lambda: tensor.evaluate([["a", "b"]], [[0, 1]], MS), "scores: not an array of numbers")


def test_ml_dtypes_bfloat16_numpy_keeps_its_ties():
    """NumPy bf16 (ml_dtypes) is read as float32, which holds each bf16 value exactly: the ties and
    the numbers are those of the same values in float64."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(5)
    fine = 0.99 + 0.01 * rng.random((50, 12))
    labels = rng.integers(0, 3, (50, 12))
    half = fine.astype(ml_dtypes.bfloat16)
    res = tensor.evaluate(half, labels, MS, dtype="float64")
    ref = tensor.evaluate(half.astype(np.float64), labels, MS)
    assert float(res.tied_share.mean()) > 0.5  # the bf16 grid ties what float64 keeps apart
    np.testing.assert_array_equal(res.tied_share, ref.tied_share)
    same(res, ref)
    assert tensor.evaluate(half, labels, MS)["AP"].expected.dtype == np.float32


def test_numpy_labels_beside_torch_scores_move_to_the_scores():
    torch = pytest.importorskip(
        "torch", reason='torch is not installed: pip install -e ".[torchmetrics]"'
    )
    ref = tensor.evaluate(SCORES, LABELS, MS)
    res = tensor.evaluate(
        torch.tensor(SCORES), LABELS, MS, mask=np.ones(SCORES.shape, bool), n_relevant=[2, 3]
    )
    assert isinstance(res["AP"].expected, torch.Tensor)
    same(tensor.evaluate(torch.tensor(SCORES), LABELS, MS), ref)
    one_line(
        lambda: tensor.evaluate(SCORES, torch.tensor(LABELS), MS),
        "labels is a torch.Tensor but scores are numpy.ndarray",
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dtype": np.int64}, "dtype must be float32 or float64"),
        ({"dtype": "int64"}, "dtype must be float32 or float64"),
        ({"n_relevant": [np.inf, 3]}, "n_relevant: not a finite number"),
        ({"n_relevant": [np.nan, 3]}, "n_relevant: not a finite number"),
        ({"n_relevant": [2.5, 3]}, "n_relevant must hold whole numbers"),
        ({"n_relevant": [-1, 3]}, "n_relevant must not be negative"),
        ({"labels": np.where(LABELS == 2, np.inf, LABELS)}, "labels: inf for a valid candidate"),
        ({"labels": np.where(LABELS == 2, -np.inf, LABELS)}, "labels: inf for a valid candidate"),
        (
            {"labels": LABELS * 1000, "measures": ["nDCG(dcg='exp-log2')@10"]},
            "labels: grade 2000 under \"nDCG(dcg='exp-log2')@10\": the gain 2^2000 - 1 overflows",
        ),
        (
            {"labels": LABELS * 100, "measures": ["nDCG(dcg='exp-log2')"], "dtype": "float32"},
            "overflows float32 (4 candidates); the largest grade is 61; dtype='float64' allows 509",
        ),
        ({"labels": LABELS * 1e300, "measures": ["nDCG"]}, "overflows float64"),
        (
            {"labels": LABELS - 1, "measures": ["nDCG(negative='keep')"]},
            "negative labels keep a negative gain in tierank.evaluate",
        ),
    ],
)
def test_bad_input_is_one_line(kwargs, message):
    args = {"scores": SCORES, "labels": LABELS, "measures": MS}
    args.update(kwargs)
    if "n_relevant" in kwargs:
        args["measures"] = ["R@2", "AP"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any arithmetic: no NumPy warning either
        one_line(
            lambda: tensor.evaluate(
                args.pop("scores"), args.pop("labels"), args.pop("measures"), **args
            ),
            message,
        )


def test_inf_label_on_padding_is_padding():
    labels = np.where(LABELS == 2, np.inf, LABELS)
    mask = labels != np.inf
    res = tensor.evaluate(SCORES, np.where(mask, labels, 0), MS, mask=mask)
    same(tensor.evaluate(SCORES, labels, MS, mask=mask), res)


def test_float64_dtype_objects_are_accepted():
    ref = tensor.evaluate(SCORES.astype(np.float32), LABELS, MS, dtype="float64")
    same(tensor.evaluate(SCORES.astype(np.float32), LABELS, MS, dtype=np.float64), ref)
    torch = pytest.importorskip(
        "torch", reason='torch is not installed: pip install -e ".[torchmetrics]"'
    )
    res = tensor.evaluate(
        torch.tensor(SCORES, dtype=torch.float32), LABELS, MS, dtype=torch.float64
    )
    assert res["AP"].expected.dtype == torch.float64
    same(res, ref)
    one_line(
        lambda: tensor.evaluate(SCORES, LABELS, MS, dtype=torch.float64),
        "dtype must be float32 or float64 (a name or the numpy dtype)",
    )


@pytest.mark.parametrize("c", [5, 300])
@pytest.mark.parametrize("bits, dtype", [(32, np.float32), (64, np.float64)])
def test_the_largest_exp_grade_is_evaluated_finite(bits, dtype, c):
    """The largest grade the limit lets through gives finite statistics (and a non-zero std where
    tied candidates differ), without a warning, even when every candidate has it."""
    g = int(gain_limit_log2(bits, c))
    scores = np.zeros((1, c), dtype=dtype)
    scores[0, c // 2 :] = -np.arange(c - c // 2)
    labels = np.full((1, c), g, dtype=dtype)
    labels[0, 1::2] = g - 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = tensor.evaluate(scores, labels, ["nDCG(dcg='exp-log2')"])
    st = res["nDCG(dcg='exp-log2')"]
    for key in ("expected", "min", "max", "std"):
        assert np.all(np.isfinite(getattr(st, key)))
    assert float(st.max[0]) > float(st.min[0]) and float(st.std[0]) > 0
    with pytest.raises(TierankInputError):
        tensor.evaluate(scores, labels + 1, ["nDCG(dcg='exp-log2')"])
