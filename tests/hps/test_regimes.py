"""The precision regimes and the pure scoring functions of tierank.hps, on synthetic tensors. Skipped without torch."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tierank.errors import TierankInputError  # noqa: E402
from tierank.hps import (  # noqa: E402
    REGIMES,
    Regime,
    head_fp32_yes_no,
    pairwise_scores,
    sigmoid_scores,
    softmax2_scores,
    yes_no_scores,
)


def _has(mod: str) -> bool:
    return importlib.util.find_spec(mod) is not None


# --------------------------------------------------------------------- regimes


@pytest.mark.parametrize(
    "text, model, scoring",
    [
        ("fp32", "fp32", "fp32"),
        ("fp16", "fp16", "fp16"),
        ("bf16", "bf16", "bf16"),
        ("fp16->fp32", "fp16", "fp32"),
        ("bf16->fp32", "bf16", "fp32"),
        (" BF16 -> FP32 ", "bf16", "fp32"),
    ],
)
def test_regime_parse(text, model, scoring):
    r = Regime.parse(text)
    assert (r.model_dtype, r.scoring_dtype) == (model, scoring)
    assert r.hps == (model != scoring)
    assert Regime.parse(str(r)) == r


@pytest.mark.parametrize("bad", ["int8", "fp32->bf16", "fp64", "bf16->fp16", "", "bf16->", "fp8"])
def test_regime_parse_rejects(bad):
    with pytest.raises(TierankInputError, match="regime"):
        Regime.parse(bad)


def test_regime_direct_construction_validates():
    with pytest.raises(TierankInputError):
        Regime("fp32", "bf16")
    assert [str(Regime.parse(r)) for r in REGIMES] == list(REGIMES)


# ------------------------------------------------------- synthetic scoring


def _logits(n=2000, seed=0, loc=3.0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g, dtype=torch.float64) * scale + loc


def test_sigmoid_bf16_ties_removed_by_hps():
    z = _logits()
    low = sigmoid_scores(z, "bf16")
    hps = sigmoid_scores(z, "bf16->fp32")
    assert low.dtype == np.float64 and hps.dtype == np.float64
    # bf16 logits have <= 256 values per binade, bf16 sigmoid near 1 even fewer
    assert len(np.unique(low)) < 100
    assert len(np.unique(hps)) > 3 * len(np.unique(low))
    # HPS cannot split inputs that are already tied in bf16: distinct HPS scores == distinct bf16 logits
    z_bf16 = z.to(torch.bfloat16).to(torch.float64).numpy()
    assert len(np.unique(hps)) == len(np.unique(z_bf16))


def test_softmax2_fp16_ties_removed_by_hps():
    g = torch.Generator().manual_seed(1)
    z = torch.randn(2000, 2, generator=g, dtype=torch.float64) * 2
    z[:, 1] += 4
    low = softmax2_scores(z, "fp16")
    hps = softmax2_scores(z, "fp16->fp32")
    assert len(np.unique(hps)) > 2 * len(np.unique(low))


def test_fp32_regime_matches_float64_reference():
    z = _logits(scale=3.0, loc=0.0)
    ref = 1.0 / (1.0 + np.exp(-z.numpy()))
    np.testing.assert_allclose(sigmoid_scores(z, "fp32"), ref, atol=1e-6, rtol=0)
    g = torch.Generator().manual_seed(2)
    z2 = torch.randn(500, 2, generator=g, dtype=torch.float64) * 3
    zn = z2.numpy()
    ref2 = np.exp(zn[:, 1]) / np.exp(zn).sum(axis=1)
    np.testing.assert_allclose(softmax2_scores(z2, "fp32"), ref2, atol=1e-6, rtol=0)
    q = torch.randn(8, 64, generator=g, dtype=torch.float64)
    d = torch.randn(50, 64, generator=g, dtype=torch.float64)
    qn, dn = q.numpy(), d.numpy()
    ref3 = (qn / np.linalg.norm(qn, axis=1, keepdims=True)) @ (
        dn / np.linalg.norm(dn, axis=1, keepdims=True)
    ).T
    np.testing.assert_allclose(pairwise_scores(q, d, "fp32"), ref3, atol=1e-6, rtol=0)
    np.testing.assert_allclose(
        pairwise_scores(q, d, "fp32", normalize=False), qn @ dn.T, atol=1e-4, rtol=1e-6
    )


def test_pairwise_hps_equals_fp32_on_bf16_rounded_embeddings():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 384, generator=g)
    d = q[:, None, :].repeat(1, 50, 1).reshape(200, 384) + 0.8 * torch.randn(200, 384, generator=g)
    hps = pairwise_scores(q, d, "bf16->fp32")
    qb, db = q.to(torch.bfloat16).float(), d.to(torch.bfloat16).float()
    ref = (
        (torch.nn.functional.normalize(qb, dim=-1) @ torch.nn.functional.normalize(db, dim=-1).T)
        .double()
        .numpy()
    )
    np.testing.assert_array_equal(hps, ref)
    low = pairwise_scores(q, d, "bf16")
    for row_low, row_hps in zip(low, hps):  # ties matter within a query's candidates
        assert len(np.unique(row_low)) < len(np.unique(row_hps)) == len(row_hps)
    # one query vector -> one row of scores (summation order may differ: last fp32 bits)
    np.testing.assert_allclose(pairwise_scores(q[0], d, "bf16->fp32"), hps[0], atol=1e-6, rtol=0)
    with pytest.raises(TierankInputError):
        pairwise_scores(q, d[:, :10], "fp32")


def test_yes_no_scores_use_two_columns():
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(300, 50, generator=g) * 4
    yes, no = 7, 11
    got = yes_no_scores(logits, yes, no, "fp32")
    ref = torch.softmax(logits[:, [no, yes]].double(), dim=-1)[:, 1].numpy()
    np.testing.assert_allclose(got, ref, atol=1e-6)
    low = yes_no_scores(logits, yes, no, "bf16")
    hps = yes_no_scores(logits, yes, no, "bf16->fp32")
    assert len(np.unique(low)) < len(np.unique(hps))


def test_head_fp32_yes_no_equals_fp32_logit_difference():
    g = torch.Generator().manual_seed(5)
    h = torch.randn(64, 32, generator=g)
    w = torch.randn(100, 32, generator=g)
    yes, no = 3, 42
    logits = h @ w.T
    ref = (logits[:, yes] - logits[:, no]).double().numpy()
    got = head_fp32_yes_no(h, w, yes, no)
    np.testing.assert_allclose(got, ref, atol=1e-5, rtol=1e-6)
    # bf16 hidden states: the head level still separates what bf16 logits tie
    hb = h.to(torch.bfloat16)
    lb = hb @ w.to(torch.bfloat16).T
    tied_low = len(np.unique(yes_no_scores(lb, yes, no, "bf16->fp32")))
    assert tied_low < len(np.unique(head_fp32_yes_no(hb, w, yes, no))) == len(h)


def test_scores_are_exact_in_scoring_dtype():
    z = _logits(n=100)
    low = sigmoid_scores(z, "bf16")
    # every bf16 score is a bf16 number: round-tripping changes nothing
    assert np.array_equal(torch.tensor(low).to(torch.bfloat16).double().numpy(), low)
    hps = sigmoid_scores(z, "bf16->fp32")
    assert np.array_equal(hps.astype(np.float32).astype(np.float64), hps)


# ------------------------------------------------------- quantized embeddings


@pytest.fixture(scope="module")
def quantization():
    if not _has("sentence_transformers"):
        pytest.skip("sentence-transformers not installed")
    from tierank.hps import quantized

    return quantized


def test_binary_scores_are_hamming_similarity(quantization):
    rng = np.random.default_rng(1)
    q = rng.normal(size=64)
    d = rng.normal(size=(30, 64))
    s = quantization.quantized_scores(q, d, "binary")
    brute = np.array([(np.sign(q) == np.sign(row)).sum() for row in d], dtype=float)
    np.testing.assert_array_equal(s, brute)
    # Hamming similarity takes at most dim + 1 values: ties are real
    assert (
        len(np.unique(quantization.quantized_scores(q, rng.normal(size=(500, 64)), "binary"))) <= 65
    )


def test_int8_scores_are_integer_dot_products(quantization):
    rng = np.random.default_rng(2)
    q = rng.normal(size=16)
    d = rng.normal(size=(12, 16))
    emb = np.vstack([q, d])
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)
    lo, hi = emb.min(axis=0), emb.max(axis=0)
    steps = (hi - lo) / 255
    # sentence-transformers' int8 scheme: 256 buckets per dimension between the calibration min and max
    quant = (np.clip(np.floor((emb - lo) / steps), 0, 255) - 128).astype(np.int64)
    np.testing.assert_array_equal(
        quantization.quantized_scores(q, d, "int8"), (quant[1:] @ quant[0]).astype(float)
    )


def test_rescore_top_k_whole_tie_groups(quantization):
    rng = np.random.default_rng(3)
    q = rng.normal(size=8)
    d = rng.normal(size=(40, 8))
    raw = quantization.quantized_scores(q, d, "binary")
    for k in (1, 3, 10, 40, 100):
        s = quantization.quantized_scores(q, d, "binary", rescore=k)
        head = s >= 2
        kth = np.sort(raw)[::-1][min(k, len(raw)) - 1]
        np.testing.assert_array_equal(head, raw >= kth)  # whole tie groups, at least k documents
        cos = (d / np.linalg.norm(d, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
        np.testing.assert_allclose(s[head] - 3, cos[head], atol=1e-6)
        # the tail keeps the quantized order, below the head
        assert np.all(
            np.argsort(-s[~head], kind="stable") == np.argsort(-raw[~head], kind="stable")
        )
        assert s[~head].max(initial=-np.inf) < s[head].min()
    with pytest.raises(TierankInputError):
        quantization.quantized_scores(q, d, "binary", rescore=0)
    with pytest.raises(TierankInputError):
        quantization.quantized_scores(q, d, "int4")
