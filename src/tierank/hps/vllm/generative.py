"""The vLLM scorers of the generative model kinds: yes/no (``yesno``) and Rank1-style (``rank1``).

The prompts are [`tierank.hps.prompts`][tierank.hps.prompts]' (the HF backend builds the same texts); the forward pass is a
vLLM engine's, the scoring step the protocol's ([`tierank.hps.regimes`][tierank.hps.regimes]).  See `tierank.hps.vllm`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.base import ModelOutputs
from tierank.hps.checkpoints import checkpoint_rows
from tierank.hps.checks import check_budget, check_positive
from tierank.hps.generative import GenerativeScorer
from tierank.hps.prompts import (
    DEFAULT_INSTRUCTION,
    DEFAULT_SYSTEM,
    RANK1_PROMPT,
    Rank1Prompts,
    resolve_token,
)
from tierank.hps.regimes import head_fp32_yes_no, yes_no_scores
from tierank.hps.variants import Variant
from tierank.hps.vllm import settings
from tierank.hps.vllm.base import VllmScorerBase
from tierank.hps.vllm.outputs import answer_logits, head_logits, token_logits

__all__ = ["VllmYesNoScorer", "VllmRank1Scorer"]


class VllmYesNoScorer(GenerativeScorer, VllmScorerBase):
    """P(yes) (or the FP32 head's ``z_yes - z_no``) of a causal LM run by vLLM; see the module docstring.

    ``engine_factory(**options)`` builds the engines (default `make_engine`;
    tests pass a fake); ``head`` says whether the pooling engine of the
    ``:head`` level is needed (built lazily, on first use, otherwise).
    ``label_tokens``: the answer tokens of `label_distributions` (grade ``k``'s at ``k``).
    """

    family = "yesno"
    spec_options: ClassVar[tuple[str, ...]] = ("max_doc_tokens", "label_tokens")
    yes_word, no_word = "yes", "no"

    def __init__(
        self,
        model: Any = "smollm2",
        model_dtype: str = "bf16",
        batch_size: int = 8,
        max_doc_tokens: int = 256,
        device: str = "auto",
        engine_factory: Callable[..., Any] | None = None,
        tokenizer: Any = None,
        system: str | None = None,
        instruction: str | None = None,
        head_method: str = "hidden",
        label_tokens: Sequence[str] = (),
    ):
        self.init_run(model_dtype, batch_size)
        self.max_doc_tokens = check_positive(max_doc_tokens, "max doc tokens")
        self.system = DEFAULT_SYSTEM if system is None else system
        self.instruction = DEFAULT_INSTRUCTION if instruction is None else instruction
        self.init_source(model, "causal", device, engine_factory, tokenizer)
        self.yes_id = resolve_token(self.tokenizer, self.yes_word)
        self.no_id = resolve_token(self.tokenizer, self.no_word)
        self.label_ids = [resolve_token(self.tokenizer, t) for t in label_tokens]
        self.max_len = max(512, self.max_doc_tokens + self._extra_tokens() + 256)
        self.head_method = head_method
        if head_method not in ("hidden", "classify"):
            raise TierankInputError(
                [
                    Problem(
                        "", None, f"head_method must be 'hidden' or 'classify', got {head_method!r}"
                    )
                ]
            )
        self._llm: Any = None
        self._pool: Any = None
        self._rows: Any = None
        self._label_rows: Any = None

    def _extra_tokens(self) -> int:
        return 0

    def close(self) -> None:
        """Shut the engines down (their processes and memory); the protocol calls it after each variant group."""
        settings.close_engine(self._llm)
        settings.close_engine(self._pool)
        self._llm = self._pool = None

    # ---------------------------------------------------------------- engines

    @property
    def llm(self):
        """The generating engine (logits of the answer tokens; Rank1's reasoning)."""
        if self._llm is None:
            self._llm = self._factory(
                **self.engine_options(self.max_len, logprobs_mode="raw_logits")
            )
        return self._llm

    @property
    def pool(self):
        """The pooling engine of the ``:head`` level (built on first use)."""
        if self._pool is None:
            if self.head_method == "classify":
                overrides = {
                    "architectures": [self._seq_cls_arch()],
                    "classifier_from_token": [self.no_word, self.yes_word],
                    "method": "no_post_processing",
                    "head_dtype": "float32",
                }
                opts = dict(runner="pooling", convert="classify", hf_overrides=overrides)
            else:
                pooler = settings.require_vllm("vllm.config").PoolerConfig(
                    seq_pooling_type="LAST", use_activation=False
                )
                opts = dict(
                    runner="pooling",
                    convert="embed",
                    hf_overrides={"head_dtype": "float32"},
                    pooler_config=pooler,
                )
            opts = self.engine_options(
                self.max_len, **opts
            )  # its own refusals (settings) are not the pooling runner's failure
            try:
                self._pool = self._factory(**opts)
            except TierankError as exc:
                raise settings.VllmUnsupported(
                    f"the :head level needs vLLM's pooling runner ({opts.get('convert')}, head_dtype "
                    f"float32); it failed here: {exc}"
                ) from exc
        return self._pool

    def _seq_cls_arch(self) -> str:
        import json

        archs = json.loads((self.model_dir / "config.json").read_text()).get("architectures") or [
            "LlamaForCausalLM"
        ]
        return archs[0].replace("ForCausalLM", "ForSequenceClassification")

    @property
    def head_rows(self):
        """The FP32 ``[yes, no]`` rows of the LM head, read from the checkpoint (before any cast), as HF does."""
        if self._rows is None:
            self._rows = checkpoint_rows(self.model_dir, [self.yes_id, self.no_id])
        return self._rows

    @property
    def label_rows(self):
        """The FP32 rows of the grade tokens (``label_tokens``) of the LM head, read from the checkpoint."""
        if self._label_rows is None:
            self._label_rows = checkpoint_rows(self.model_dir, self.label_ids)
        return self._label_rows

    def _sampling(self, **kw):
        return settings.require_vllm().SamplingParams(**kw)

    def answer_logits(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, 2)`` ``[z_no, z_yes]``: the model dtype's last-position logits, as FP32 numbers."""
        params = self._sampling(
            max_tokens=1, temperature=0.0, logprob_token_ids=[self.no_id, self.yes_id]
        )
        outs = self.llm.generate(self.token_ids(texts), params, use_tqdm=False)
        return answer_logits(outs, self.yes_id, self.no_id)

    def grade_logits(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, K + 1)`` raw logits of the grade tokens ``label_tokens`` (grade ``k``'s at ``k``) at the
        answer slot: the model dtype's values, as FP32 numbers (`answer_logits` for any tokens)."""
        params = self._sampling(
            max_tokens=1, temperature=0.0, logprob_token_ids=list(self.label_ids)
        )
        outs = self.llm.generate(self.token_ids(texts), params, use_tqdm=False)
        return token_logits(outs, self.label_ids)

    def last_hidden(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, hidden)`` the LM head's input at the last position, from the pooling engine (``LAST``, no
        activation)."""
        params = settings.require_vllm().PoolingParams(use_activation=False)
        return head_logits(
            self.pool.embed(self.token_ids(texts), pooling_params=params, use_tqdm=False)
        )

    def head_difference(self, texts: Sequence[str]) -> np.ndarray:
        """``z_yes - z_no`` in FP32: the engine's FP32 last hidden state times the FP32 checkpoint rows
        ([`tierank.hps.regimes.head_fp32_yes_no`][tierank.hps.regimes.head_fp32_yes_no]), or (``head_method="classify"``) vLLM's own
        classifier built from the two LM head rows (rows rounded to the model dtype at load)."""
        params = settings.require_vllm().PoolingParams(use_activation=False)
        if self.head_method == "classify":
            z = head_logits(
                self.pool.classify(self.token_ids(texts), pooling_params=params, use_tqdm=False)
            )
            if z.shape[1:] != (2,):
                raise settings.VllmUnsupported(
                    f"the pooling engine returned {z.shape[1:]} logits per pair, not the 2 rows "
                    f"[no, yes]; this vLLM did not build the head from classifier_from_token"
                )
            import torch

            t = torch.as_tensor(z, dtype=torch.float32)
            return (t[:, 1] - t[:, 0]).double().numpy()
        return head_fp32_yes_no(self.last_hidden(texts).astype(np.float32), self.head_rows, 0, 1)

    def grade_slot_logits(self, texts: Sequence[str]) -> tuple[np.ndarray, Sequence[int]]:
        """The grade tokens' raw logits at the answer slot (`grade_logits`: the engine asked for those
        tokens alone, so grade ``k``'s column is ``k``)."""
        return self.grade_logits(texts), range(len(self.label_ids))

    def grade_head_inputs(self, texts: Sequence[str]) -> tuple[np.ndarray, Any]:
        """The pooling engine's FP32 last hidden state and the grade tokens' FP32 checkpoint rows
        (``head_method="hidden"``: the classify head holds the no/yes rows only)."""
        if self.head_method != "hidden":
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        "label distributions at the :head level need head_method='hidden' "
                        "(the classify head holds the no/yes rows only)",
                    )
                ]
            )
        return self.last_hidden(texts).astype(np.float32), self.label_rows

    # ---------------------------------------------------------------- scoring

    def prepare(self, docs: Sequence[str], variants: Sequence[Variant]) -> None:
        """Start the engines the variants need before the clock: loading is not the forward pass."""
        if docs:
            plain = [v for v in variants if v.level != "head"]
            _ = self.llm if plain or self.generates else None
            _ = self.pool if len(plain) < len(variants) else None

    #: Whether the texts need the generating engine whatever the variants (Rank1's reasoning).
    generates = False

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """One engine pass for the query's documents (and one pooling pass for ``:head``)."""
        texts, reasoning = self.pair_texts(query, docs)
        if not texts:
            return ModelOutputs(None, reasoning)
        plain = [v for v in variants if v.level != "head"]
        logits = self.answer_logits(texts) if plain else None
        heads = self.head_difference(texts) if len(plain) < len(variants) else None
        return ModelOutputs((logits, heads), reasoning)

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        logits, heads = values
        if variant.level == "head":
            return heads
        return yes_no_scores(logits, 1, 0, variant.regime)

    def metadata(self) -> dict:
        return {
            "scorer": self.family,
            "backend": "vllm",
            "vllm": settings.vllm_version(),
            **super().metadata(),
            **({"label_ids": list(self.label_ids)} if self.label_ids else {}),
            "logprobs_mode": "raw_logits",
            "head": (
                "pooling embed (LAST, head_dtype float32) x FP32 checkpoint rows"
                if self.head_method == "hidden"
                else "pooling classify, classifier_from_token, head_dtype float32"
            ),
        }


class VllmRank1Scorer(Rank1Prompts, VllmYesNoScorer):
    """Rank1-style on vLLM: greedy reasoning up to ``budget`` tokens (stop at ``</think>``), then true/false."""

    family = "rank1"
    spec_options: ClassVar[tuple[str, ...]] = ("max_doc_tokens", "budget")
    yes_word, no_word = "true", "false"
    generates = True

    def __init__(
        self,
        model: Any = "smollm2",
        model_dtype: str = "bf16",
        batch_size: int = 8,
        budget: int = 64,
        max_doc_tokens: int = 256,
        device: str = "auto",
        engine_factory: Callable[..., Any] | None = None,
        tokenizer: Any = None,
        head_method: str = "hidden",
    ):
        self.budget = check_budget(budget)
        self.template = RANK1_PROMPT
        super().__init__(
            model,
            model_dtype=model_dtype,
            batch_size=batch_size,
            max_doc_tokens=max_doc_tokens,
            device=device,
            engine_factory=engine_factory,
            tokenizer=tokenizer,
            head_method=head_method,
        )

    def _extra_tokens(self) -> int:
        return self.budget

    def continuations(self, prompts: Sequence[str]) -> list[str]:
        """Greedy continuations of at most ``budget`` tokens, stopped at ``</think>``."""
        params = self._sampling(
            max_tokens=self.budget, temperature=0.0, stop=["</think>"], skip_special_tokens=True
        )
        outs = self.llm.generate(self.token_ids(prompts), params, use_tqdm=False)
        return [o.outputs[0].text for o in outs]
