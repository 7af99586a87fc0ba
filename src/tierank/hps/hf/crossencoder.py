"""Cross-encoder scoring under a precision regime (transformers sequence classification).

A cross-encoder reads the (query, document) pair and emits one logit (score
``sigmoid(z)``) or two logits (score ``softmax(z)[1]``).  The model runs in
its model dtype; the logits come back in that dtype and the scoring function
runs in the regime's scoring dtype ([`tierank.hps.regimes.sigmoid_scores`][tierank.hps.regimes.sigmoid_scores],
[`tierank.hps.regimes.softmax2_scores`][tierank.hps.regimes.softmax2_scores]), so ``bf16->fp32`` upcasts the
BF16 logits before the sigmoid / softmax (paper eq. 3).

Models load offline only, from a local directory (``HF_HUB_OFFLINE=1``), or
``smollm2``: SmolLM2 with its yes-no LM head difference as a one-logit
classifier ([`tierank.hps.checkpoints.smollm2_cross_dir`][tierank.hps.checkpoints.smollm2_cross_dir]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tierank.errors import TierankError
from tierank.hps.base import ModelOutputs, ScorerBase
from tierank.hps.checkpoints import OfflineLoading, model_folder
from tierank.hps.checks import resolve_device
from tierank.hps.encodings import bounded_pair_text
from tierank.hps.regimes import Regime, sigmoid_scores, softmax2_scores, torch_dtype
from tierank.hps.variants import Variant

__all__ = ["CrossEncoderScorer"]


class CrossEncoderScorer(ScorerBase):
    """Score (query, document) pairs with a sequence-classification model.

    Parameters
    ----------
    model:
        Local model directory, or a loaded ``(model, tokenizer)`` pair.
    model_dtype:
        ``"fp32"``, ``"fp16"`` or ``"bf16"``.
    batch_size:
        Pairs per forward pass (recorded; it changes low-precision results).
    max_length:
        Truncation of the pair in tokens.
    """

    family = "cross"

    def __init__(
        self,
        model: Any,
        model_dtype: str = "bf16",
        batch_size: int = 16,
        max_length: int = 512,
        device: str = "cpu",
    ):
        self.init_run(model_dtype, batch_size)
        self.max_length = int(max_length)
        self.device = resolve_device(device)
        self.model, self.tokenizer, self.model_name = self._load(model)
        labels = int(getattr(self.model.config, "num_labels", 1))
        if labels not in (1, 2):
            raise TierankError(
                f"a cross-encoder needs 1 or 2 output logits, {self.model_name} has {labels}"
            )
        self.num_labels = labels
        self.model.to(device=self.device, dtype=torch_dtype(model_dtype))
        self.model.eval()

    @classmethod
    def from_spec(
        cls, source: str, group: str, *, batch_size: int, device: str
    ) -> CrossEncoderScorer:
        """The scorer of one variant group (the model in dtype ``group``)."""
        return cls(source, model_dtype=group, batch_size=batch_size, device=device)

    def _load(self, model: Any):
        if isinstance(model, tuple):
            return model[0], model[1], type(model[0]).__name__
        needs = "CrossEncoderScorer needs torch and transformers: pip install 'tierank[models]'"
        # "smollm2": its yes-no head as a classifier (the folder built outside the loading's errors)
        name = str(model_folder(str(model), "cross"))
        with OfflineLoading(name, needs):
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

            tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
            lm = AutoModelForSequenceClassification.from_pretrained(
                name, local_files_only=True, dtype=torch.float32
            )
        return lm, tok, name

    def _bounded(self, text: str) -> str:
        """``text`` cut to a character bound that keeps every token the pair can hold (``max_length``)."""
        return bounded_pair_text(self.tokenizer, text, self.max_length)

    def logits(self, query: str, docs: Sequence[str]):
        """Logits ``(n, num_labels)`` in the model dtype."""
        import torch

        out = []
        with torch.inference_mode():
            for i in range(0, len(docs), self.batch_size):
                chunk = [self._bounded(d) for d in docs[i : i + self.batch_size]]
                enc = self.tokenizer(
                    [query] * len(chunk),
                    chunk,
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                out.append(self.model(**enc).logits)
        if not out:
            return torch.zeros((0, self.num_labels), dtype=torch_dtype(self.model_dtype))
        return torch.cat(out)

    def _score_logits(self, z, regime: Regime):
        if self.num_labels == 1:
            return sigmoid_scores(z, regime)
        return softmax2_scores(z, regime)

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """One forward pass: the pairs' logits in the model dtype."""
        return ModelOutputs(self.logits(query, docs))

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        return self._score_logits(values, variant.regime)

    def metadata(self) -> dict:
        return self.described(max_length=self.max_length, num_labels=self.num_labels)
