"""Fakes of vLLM's objects (engine outputs of the right shapes), importable by Ray workers.

``tests/hps/test_vllm.py`` scores with them in one process; ``tests/hps/test_ray.py``
sends :func:`vllm_scorer_factory` to Ray workers (``tests/`` is on their path), where
it replaces ``require_vllm`` in that process too.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest


class FakeTokenizer:
    """Word-level tokenizer: one id per distinct whitespace-separated word; no chat template."""

    chat_template = None
    pad_token = eos_token = "<eos>"

    def __init__(self, words=()):
        self.vocab: dict[str, int] = {
            w: 10 + i for i, w in enumerate(dict.fromkeys(words))
        }  # ids < 64: LM head rows

    def _id(self, w):
        # the same id in every process, whatever it saw before (Ray workers see different queries)
        return self.vocab.setdefault(w, 64 + zlib.crc32(w.encode()) % 1_000_003)

    def encode(self, text, add_special_tokens=False):
        return [self._id(w) for w in text.split()]

    def decode(self, ids):
        inv = {v: k for k, v in self.vocab.items()}
        return " ".join(inv[i] for i in ids)

    def __call__(self, a, b="", truncation=None, max_length=None, add_special_tokens=True):
        return {"input_ids": (self.encode(a) + self.encode(b))[:max_length]}


def bf16(x):
    torch = pytest.importorskip("torch")
    return torch.as_tensor(np.asarray(x, dtype=np.float32)).bfloat16().double().numpy()


def _key(ids) -> int:
    """Pairs whose prompt mentions 'twin' share their answer logits (a BF16 tie), not their hidden state."""
    return zlib.crc32(json.dumps(ids[-12:]).encode())


class FakeLLM:
    """Returns vLLM-shaped outputs: logit dicts (``logprobs_mode="raw_logits"``), text, embeddings."""

    hidden = 6

    def __init__(self, tok, **options):
        self.tok, self.options, self.calls = tok, options, []

    def _z(self, ids):
        twin = self.tok.vocab.get("twin") in ids
        h = 0 if twin else _key(ids)
        return bf16([(h % 97) / 32 - 1.0, (h % 89) / 32])  # [z_no, z_yes] on the BF16 grid

    def _zs(self, ids, token_ids):
        """The raw logits of ``token_ids``: ``[z_no, z_yes]`` for two, else one per token (grade tokens),
        from the prompt and the token id, on the BF16 grid ('twin' prompts share theirs)."""
        if len(token_ids) == 2:
            return self._z(ids)
        twin = self.tok.vocab.get("twin") in ids
        h = 0 if twin else _key(ids)
        return bf16([((h + 37 * t) % 113) / 16 - 3.5 for t in token_ids])

    def generate(self, prompts, params, use_tqdm=False):
        self.calls.append(("generate", params))
        out = []
        for p in prompts:
            ids = p["prompt_token_ids"]
            if params.max_tokens > 1:  # Rank1's reasoning
                out.append(
                    NS(outputs=[NS(text=f"thought {len(ids)} </think> ignored", logprobs=None)])
                )
                continue
            asked = params.logprob_token_ids
            lp = {t: NS(logprob=float(v)) for t, v in zip(asked, self._zs(ids, asked), strict=True)}
            out.append(NS(outputs=[NS(text="x", logprobs=[lp])]))
        return out

    def embed(self, prompts, pooling_params=None, use_tqdm=False):
        self.calls.append(("embed", pooling_params))
        rng = [
            np.random.default_rng(_key(p["prompt_token_ids"]) + len(p["prompt_token_ids"]))
            for p in prompts
        ]
        return [NS(outputs=NS(embedding=bf16(r.normal(size=self.hidden)).tolist())) for r in rng]

    def classify(self, prompts, pooling_params=None, use_tqdm=False):
        self.calls.append(("classify", pooling_params))
        return [NS(outputs=NS(probs=[float(len(p["prompt_token_ids"])) / 8])) for p in prompts]


def fake_vllm_module():
    return NS(
        SamplingParams=lambda **kw: NS(**kw),
        PoolingParams=lambda **kw: NS(**kw),
        PoolerConfig=lambda **kw: NS(**kw),
        __version__="fake",
    )


class _Core:
    """Stands for ``llm.llm_engine.engine_core``: ``shutdown()`` leaves a marker file (one per engine)."""

    def __init__(self, marker: Path | None):
        self.marker = marker

    def shutdown(self):
        if self.marker is not None:
            self.marker.with_suffix(".closed").touch()


def vllm_scorer_factory(model_dir: str, marker_dir: str, spec, group: str):
    """A :class:`tierank.hps.vllm.VllmYesNoScorer` over :class:`FakeLLM` (``functools.partial`` it with the two
    folders to get a protocol ``scorer_factory``).  Every engine it builds writes ``marker_dir/PID-N.started``
    and, when shut down, ``.closed``: a test counts both."""
    from tierank.hps.vllm import generative as vg
    from tierank.hps.vllm import settings as vs

    vs.require_vllm = lambda module="vllm": fake_vllm_module()  # in this (worker) process
    tok = FakeTokenizer((vg.VllmYesNoScorer.yes_word, vg.VllmYesNoScorer.no_word))
    count = [0]

    def engine(**options):
        count[0] += 1
        marker = Path(marker_dir) / f"{os.getpid()}-{group}-{count[0]}"
        marker.with_suffix(".started").touch()
        llm = FakeLLM(tok, **options)
        llm.llm_engine = NS(engine_core=_Core(marker))
        return llm

    return vg.VllmYesNoScorer(
        Path(model_dir),
        model_dtype=group,
        batch_size=4,
        device="cpu",
        engine_factory=engine,
        tokenizer=tok,
    )


def write_fake_checkpoint(folder: Path) -> Path:
    """A safetensors file with an ``embed_tokens`` matrix (the ``:head`` level's FP32 rows) and a config."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    w = torch.as_tensor(
        np.random.default_rng(1).normal(size=(64, FakeLLM.hidden)), dtype=torch.float32
    )
    save_file({"model.embed_tokens.weight": w}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    return folder
