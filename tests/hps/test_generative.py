"""What the scorers of every backend share: loading from the protocol's options
(tierank.hps.generative), Rank1's reasoning cut (tierank.hps.prompts), the runners' loading errors
(tierank.hps.checkpoints.OfflineLoading) and a pool's texts (tierank.io.beir.pool_texts)."""

from __future__ import annotations

import inspect
import json

import pytest

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.checkpoints import OfflineLoading
from tierank.hps.generative import GenerativeScorer
from tierank.hps.hf.generative import Rank1Scorer, YesNoScorer
from tierank.hps.prompts import Rank1Prompts
from tierank.hps.registry import model_kind
from tierank.hps.vllm.generative import VllmRank1Scorer, VllmYesNoScorer
from tierank.io.beir import pool_texts


class Made(GenerativeScorer):
    """Records what `from_spec` hands its constructor."""

    spec_options = ("max_doc_tokens", "budget")

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def test_from_spec_passes_the_group_and_only_the_scorers_options():
    s = Made.from_spec(
        "src", "bf16", batch_size=4, device="cpu", max_doc_tokens=9, budget=3, padding_side="right"
    )
    assert s.args == ("src",)
    assert s.kwargs == {
        "model_dtype": "bf16",
        "batch_size": 4,
        "device": "cpu",
        "max_doc_tokens": 9,
        "budget": 3,
    }
    # an option not given is left to the constructor's default
    assert "budget" not in Made.from_spec("src", "fp32", batch_size=1, device="cpu").kwargs


@pytest.mark.parametrize(
    "cls, family",
    [
        (YesNoScorer, "yesno"),
        (Rank1Scorer, "rank1"),
        (VllmYesNoScorer, "yesno"),
        (VllmRank1Scorer, "rank1"),
    ],
)
def test_every_generative_scorer_takes_its_kinds_options(cls, family):
    """`from_spec` hands on every option the model kind declares, each one the constructor takes."""
    params = inspect.signature(cls.__init__).parameters
    assert set(cls.spec_options) <= set(params)
    assert set(model_kind(family).options) <= set(cls.spec_options)


class Reasoner(Rank1Prompts):
    budget = 8

    def __init__(self, texts):
        self.texts = texts

    def continuations(self, prompts):
        assert len(prompts) == len(self.texts)
        return self.texts


def test_reason_cuts_every_backends_continuation_at_think():
    r = Reasoner(["  a cat.\n</think> yes", "no close tag  ", "</think>"])
    assert r.reason(["p1", "p2", "p3"]) == ["a cat.", "no close tag", ""]
    r.budget = 0  # nothing is generated
    r.texts = None
    assert r.reason(["p1", "p2"]) == ["", ""]


def test_offline_loading_names_the_model_or_the_missing_library():
    with pytest.raises(TierankError, match=r"^needs x: pip install x \(missing: y\)$"):
        with OfflineLoading("m", "needs x: pip install x"):
            raise ModuleNotFoundError("No module named 'y'", name="y")
    located = TierankInputError([Problem("cfg.json", 3, "bad dtype")])
    with pytest.raises(TierankInputError) as err:  # a located line goes through as it is
        with OfflineLoading("m", "needs x"):
            raise located
    assert err.value is located
    with pytest.raises(TierankError, match=r"cannot load model '/models/cross'.*\[OSError: gone\]"):
        with OfflineLoading("m", "needs x") as loading:
            loading.name = "/models/cross"  # the folder, once resolved
            raise OSError("gone")
    with pytest.raises(TierankError, match=r"cannot load model 'm'.*\[ValueError: bad\]"):
        with OfflineLoading("m", "needs x"):
            raise ValueError("bad")
    with pytest.raises(RuntimeError, match="other"):  # anything else is not a loading error
        with OfflineLoading("m", "needs x"):
            raise RuntimeError("other")


def test_pool_texts_names_each_missing_text_then_counts_the_rest(tmp_path):
    q, c = tmp_path / "queries.jsonl", tmp_path / "corpus.jsonl"
    q.write_text(json.dumps({"_id": "q1", "text": "cats"}) + "\n")
    c.write_text(json.dumps({"_id": "d0", "title": "Cat", "text": "a cat"}) + "\n")
    assert pool_texts(q, c, {"q1": ["d0"]}) == ({"q1": "cats"}, {"d0": "Cat a cat"})
    pool = {"q1": ["d0"] + [f"m{i:02d}" for i in range(25)], "q2": []}
    with pytest.raises(TierankInputError) as err:
        pool_texts(q, c, pool, "is in the pool but has no text here", "is missing")
    lines = [str(p) for p in err.value.problems]
    assert lines[0] == f"{q}: query 'q2' is in the pool but has no text here"
    assert lines[1] == f"{c}: document 'm00' is missing"
    assert lines[19] == f"{c}: document 'm18' is missing"
    assert lines[20:] == ["... and 6 more problems"]  # 26 missing, the first 20 named
