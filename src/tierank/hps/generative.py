"""What the generative scorers (``yesno``, ``rank1``) of every backend share beyond their prompts.

[`GenerativeScorer`][tierank.hps.generative.GenerativeScorer] holds the backend-neutral part of a yes/no
scorer: loading one variant group from the protocol's options
([`from_spec`][tierank.hps.generative.GenerativeScorer.from_spec]), the judge's grade distributions
([`label_distributions`][tierank.hps.generative.GenerativeScorer.label_distributions]: the checks and the
scoring step of each precision level) and the metadata both backends write.  A backend
([`tierank.hps.hf.generative`][tierank.hps.hf.generative], [`tierank.hps.vllm.generative`][tierank.hps.vllm.generative])
provides the model and its forward pass: the answer slot's grade logits
([`grade_slot_logits`][tierank.hps.generative.GenerativeScorer.grade_slot_logits]) and the LM head's FP32
input with the grade tokens' FP32 rows ([`grade_head_inputs`][tierank.hps.generative.GenerativeScorer.grade_head_inputs]).
The prompts are [`tierank.hps.prompts`][tierank.hps.prompts]'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self

import numpy as np

from tierank.errors import TierankError
from tierank.hps.base import ScorerBase
from tierank.hps.prompts import YesNoPrompts
from tierank.hps.regimes import grade_probabilities, head_fp32_grades
from tierank.hps.variants import Variant

__all__ = ["GenerativeScorer"]


class GenerativeScorer(YesNoPrompts, ScorerBase):
    """A yes/no scorer on any backend: its prompts (`YesNoPrompts`), the protocol's loading, the grade
    distributions and the metadata; the backend's subclass loads the model and runs the forward pass."""

    #: The protocol options (those a model kind declares) `from_spec` hands to the constructor.
    spec_options: ClassVar[tuple[str, ...]] = ("max_doc_tokens",)
    model_name: str
    batch_size: int
    yes_id: int
    no_id: int
    #: the answer tokens of `label_distributions` (grade k's token at k), when asked for
    label_ids: list[int]

    @classmethod
    def from_spec(
        cls, source: str, group: str, *, batch_size: int, device: str, **options: Any
    ) -> Self:
        """The scorer of one variant group (the model in dtype ``group``); of ``options`` those named in
        `spec_options` are passed on (the constructor's defaults stand for the ones not given)."""
        make: Any = cls  # the backend's constructor takes the options
        return make(
            source,
            model_dtype=group,
            batch_size=batch_size,
            device=device,
            **{o: options[o] for o in cls.spec_options if o in options},
        )

    def grade_slot_logits(self, texts: Sequence[str]) -> tuple[Any, Sequence[int]]:
        """The answer slot's logits of prompt texts (the model dtype's values) and the columns of the grade
        tokens ``label_tokens`` in them (grade ``k``'s at ``k``); the backend's forward pass."""
        raise NotImplementedError

    def grade_head_inputs(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """The LM head's input at the answer slot of prompt texts ``(n, hidden)`` and the grade tokens' FP32
        LM-head rows ``(K + 1, hidden)`` (taken before any cast to the model dtype); the backend's."""
        raise NotImplementedError

    def label_distributions(self, texts: Sequence[str], variant: Variant) -> np.ndarray:
        """Per prompt text the probability of each grade: the next-token probabilities of the answer
        tokens ``label_tokens`` (grade ``k``'s at ``k``) at the answer slot, renormalised over them.

        ``variant`` names the model dtype and where the softmax runs: ``<dtype>`` in the model dtype,
        ``<dtype>->fp32`` the grade logits upcast to FP32, ``<dtype>->fp32:head`` the grade logits
        computed in FP32 from the LM head's input and the FP32 head rows (taken before the cast), as
        the ``:head`` level of the scores.  Returns ``(len(texts), len(label_tokens))`` FP64 rows that
        sum to 1 ([`grade_probabilities`][tierank.hps.regimes.grade_probabilities],
        [`head_fp32_grades`][tierank.hps.regimes.head_fp32_grades]).
        """
        if not self.label_ids:
            raise TierankError("label_distributions needs the scorer made with label_tokens")
        self.check_variants([variant])
        if not texts:
            return np.zeros((0, len(self.label_ids)))
        if variant.level == "head":
            return head_fp32_grades(*self.grade_head_inputs(texts))
        logits, columns = self.grade_slot_logits(texts)
        return grade_probabilities(logits, columns, variant.regime)

    def metadata(self) -> dict:
        """What both backends record: model, dtype, batch size, truncation, answer tokens, device."""
        return self.described(
            max_doc_tokens=self.max_doc_tokens, yes_id=self.yes_id, no_id=self.no_id
        )
