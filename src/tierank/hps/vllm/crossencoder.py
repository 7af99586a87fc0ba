"""The vLLM scorer of the ``cross`` model kind: a sequence-classification model in vLLM's pooling runner.

The pairs are encoded as the HF scorer encodes them ([`tierank.hps.encodings.pair_ids`][tierank.hps.encodings.pair_ids]); the
scoring step is the HF path's.  See `tierank.hps.vllm`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tierank.errors import TierankError
from tierank.hps.base import ModelOutputs
from tierank.hps.encodings import pair_ids
from tierank.hps.regimes import sigmoid_scores, softmax2_scores
from tierank.hps.variants import Variant
from tierank.hps.vllm import settings
from tierank.hps.vllm.base import VllmScorerBase
from tierank.hps.vllm.outputs import head_logits

__all__ = ["VllmCrossScorer"]


class VllmCrossScorer(VllmScorerBase):
    """A cross-encoder (sequence classification) in vLLM's pooling runner; head in the model dtype.

    The scoring step is the HF path's ([`tierank.hps.regimes.sigmoid_scores`][tierank.hps.regimes.sigmoid_scores]
    or [`softmax2_scores`][tierank.hps.regimes.softmax2_scores]) on the classifier's logits.
    """

    family = "cross"

    def __init__(
        self,
        model: Any,
        model_dtype: str = "bf16",
        batch_size: int = 16,
        max_length: int = 512,
        device: str = "auto",
        engine_factory: Callable[..., Any] | None = None,
        tokenizer: Any = None,
    ):
        self.init_run(model_dtype, batch_size)
        self.max_length = int(max_length)
        self.init_source(model, "cross", device, engine_factory, tokenizer)
        self._pool: Any = None

    def close(self) -> None:
        """Shut the engine down (its processes and memory)."""
        settings.close_engine(self._pool)
        self._pool = None

    @classmethod
    def from_spec(
        cls, source: str, group: str, *, batch_size: int, device: str, **_: Any
    ) -> VllmCrossScorer:
        return cls(source, model_dtype=group, batch_size=batch_size, device=device)

    @property
    def pool(self):
        if self._pool is None:
            self._pool = self._factory(
                **self.engine_options(
                    self.max_length,
                    runner="pooling",
                    convert="classify",
                    hf_overrides={"head_dtype": settings.vllm_dtype(self.model_dtype)},
                )
            )
        return self._pool

    def prepare(self, docs: Sequence[str], variants: Sequence[Variant]) -> None:
        if docs:
            _ = self.pool  # loading is not the forward pass

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """The classifier's logits of the pairs, encoded as the HF scorer encodes them (less its padding),
        segment ids included (BERT-style models)."""
        if not docs:
            return ModelOutputs(None)
        prompts = [pair_ids(self.tokenizer, query, d, self.max_length) for d in docs]
        params = settings.require_vllm().PoolingParams(use_activation=False)
        return ModelOutputs(
            head_logits(self.pool.classify(prompts, pooling_params=params, use_tqdm=False))
        )

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        z = values
        if z.shape[1] == 1:
            return sigmoid_scores(z[:, 0], variant.regime)
        if z.shape[1] == 2:
            return softmax2_scores(z, variant.regime)
        raise TierankError(f"the classifier returned {z.shape[1]} logits per pair; expected 1 or 2")

    def metadata(self) -> dict:
        return {
            "scorer": self.family,
            "backend": "vllm",
            **self.described(max_length=self.max_length),
        }
