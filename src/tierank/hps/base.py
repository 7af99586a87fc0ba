"""What every scorer shares: the [`Scorer`][tierank.hps.base.Scorer] protocol, its result type and the timed scoring loop.

A scorer scores one query's candidate documents under several variants at
once ([`Scorer.score_query`][tierank.hps.base.Scorer.score_query]), sharing one forward pass, and describes
itself ([`Scorer.metadata`][tierank.hps.base.Scorer.metadata], stored with the cached scores).  Which
variants a scorer supports is declared by its model kind in
[`tierank.hps.registry`][tierank.hps.registry].

[`ScorerBase`][tierank.hps.base.ScorerBase] holds the one timed forward-then-score loop
([`ScorerBase.score_query`][tierank.hps.base.ScorerBase.score_query]): a scorer says how to run its model on a
query ([`model_outputs`][tierank.hps.base.ScorerBase.model_outputs]) and how one variant scores those
outputs ([`variant_scores`][tierank.hps.base.ScorerBase.variant_scores]); the loop times the two apart
(``model_s`` and ``scoring_s``, the numbers HPS's overhead is made of).

Nothing here imports torch (only a CUDA scorer's [`synchronize`][tierank.hps.base.ScorerBase.synchronize] does).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tierank.hps.checks import check_batch_size, check_dtype
from tierank.hps.registry import supports
from tierank.hps.variants import Variant

__all__ = ["Scorer", "ScorerBase", "QueryScores", "ModelOutputs"]


@dataclass
class QueryScores:
    """What a scorer returns for one query: scores per variant and where the time went.

    ``model_s`` is the shared forward pass (encoding, or generation plus the
    final forward pass); ``scoring_s[v]`` is the scoring step of variant ``v``
    alone; ``reasoning`` holds generated text per document (Rank1-style).
    """

    model_s: float = 0.0
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    scoring_s: dict[str, float] = field(default_factory=dict)
    reasoning: list[str] | None = None

    def add(self, variant: Variant | str, scores: Any, seconds: float) -> None:
        self.scores[str(variant)] = np.asarray(scores, dtype=np.float64)
        self.scoring_s[str(variant)] = float(seconds)


@dataclass
class ModelOutputs:
    """What one forward pass over a query's documents gave: the model's outputs (logits, embeddings, ...;
    ``None`` when there was nothing to score) and, for Rank1-style scorers, the reasoning per document."""

    values: Any = None
    reasoning: list[str] | None = None


@runtime_checkable
class Scorer(Protocol):
    """The interface [`tierank.hps.registry`][tierank.hps.registry] and [`tierank.hps.protocol.rerank`][tierank.hps.protocol.rerank] drive.

    A model kind registered in [`tierank.hps.registry`][tierank.hps.registry] names a class with
    these members.  The registry calls [`check_spec`][tierank.hps.base.Scorer.check_spec] before anything is
    loaded (refuse what the source cannot score) and [`from_spec`][tierank.hps.base.Scorer.from_spec] to
    load one variant group; the protocol calls [`score_query`][tierank.hps.base.Scorer.score_query] per query,
    stores [`metadata`][tierank.hps.base.Scorer.metadata] with the cached scores and calls [`close`][tierank.hps.base.Scorer.close]
    when the group is done (also on an error).  ``family`` names the
    scorer's model kind (which declares the variants it supports);
    ``model_dtype`` is the dtype the model runs in; ``device`` where it runs
    (``cpu``, ``cuda[:N]``); ``padding_sides`` the padding sides it offers,
    its default first (empty: none to vary; the protocol sets
    ``padding_side`` on a scorer that offers some).  [`ScorerBase`][tierank.hps.base.ScorerBase]
    provides all but [`from_spec`][tierank.hps.base.Scorer.from_spec] and the model itself.
    """

    family: str
    model_dtype: str
    device: str
    padding_sides: tuple[str, ...]

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """Refuse, before any model library is imported, what ``source`` cannot score (a TierankInputError)."""

    @classmethod
    def from_spec(
        cls, source: str, group: str, *, batch_size: int, device: str, **options: Any
    ) -> Scorer:
        """Load the scorer of one variant group (a model dtype, or ``onnx-int8``) from ``source``.

        ``options`` are the protocol options the model kind declares (``budget``, ``max_doc_tokens``).
        """

    def score_query(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> QueryScores:
        """Scores of ``docs`` for ``query`` under every variant, from one forward pass."""

    def metadata(self) -> dict:
        """JSON-able description (model, dtype, batch size, options, device): stored with the cached scores."""

    def close(self) -> None:
        """Free the model (an engine's processes and memory); the scorer is not used afterwards."""


class ScorerBase:
    """Shared behaviour of the built-in scorers: the family and dtype checks of [`Scorer`][tierank.hps.base.Scorer] and the
    timed forward-then-score loop [`score_query`][tierank.hps.base.ScorerBase.score_query] (a scorer implements [`model_outputs`][tierank.hps.base.ScorerBase.model_outputs] and
    [`variant_scores`][tierank.hps.base.ScorerBase.variant_scores])."""

    family: str = ""
    model_dtype: str = "fp32"
    device: str = "cpu"
    batch_size: int
    model_name: str
    #: The padding sides the scorer offers, its default first (none: nothing to vary).
    padding_sides: ClassVar[tuple[str, ...]] = ()

    def init_run(self, model_dtype: str, batch_size: Any) -> None:
        """Check and record the dtype the model runs in and the batch size (both change low-precision
        results, so every scorer records them)."""
        check_dtype(model_dtype)
        self.model_dtype = model_dtype
        self.batch_size = check_batch_size(batch_size)

    @classmethod
    def supports(cls, variant: Variant) -> bool:
        """Whether this scorer's model kind scores ``variant`` (declared in the registry)."""
        return supports(cls.family, variant)

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """Refuse, before loading, the variants this scorer does not support ([`supports`][tierank.hps.base.ScorerBase.supports])."""
        for v in variants:
            if not cls.supports(v):
                raise v.unsupported(cls.family)

    def check_variants(self, variants: Sequence[Variant], dtype: bool = True) -> None:
        """Refuse the variants this scorer does not support ([`supports`][tierank.hps.base.ScorerBase.supports]), or (``dtype``) of another model dtype."""
        for v in variants:
            if not self.supports(v):
                raise v.unsupported(self.family)
            if dtype:
                v.check_dtype(self.model_dtype)

    # ------------------------------------------------------------------ the timed loop

    def score_query(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> QueryScores:
        """One forward pass for the query's documents (timed as ``model_s``), then each variant's
        scoring step on its outputs (timed apart, ``scoring_s``).  Variants are checked first and the
        model (an engine) is started before the clock: loading is not the forward pass."""
        self.check_query_variants(variants)
        self.prepare(docs, variants)
        t0 = time.perf_counter()
        out = self.model_outputs(query, docs, variants)
        self.synchronize()
        result = QueryScores(model_s=time.perf_counter() - t0, reasoning=out.reasoning)
        for v in variants:
            t0 = time.perf_counter()
            s = [] if out.values is None else self.variant_scores(out.values, v)
            result.add(v, s, time.perf_counter() - t0)
        return result

    def check_query_variants(self, variants: Sequence[Variant]) -> None:
        """Refuse, before the forward pass, a variant this scorer cannot score (default: [`check_variants`][tierank.hps.base.ScorerBase.check_variants])."""
        self.check_variants(variants)

    def prepare(self, docs: Sequence[str], variants: Sequence[Variant]) -> None:
        """Load what the forward pass needs (an engine), untimed; nothing by default."""

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """The forward pass over ``docs`` for ``query`` (``values`` None: nothing to score)."""
        raise NotImplementedError

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        """The scoring step of one variant on the forward pass's ``values``."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait for the device (CUDA kernels run asynchronously), so ``model_s`` holds the whole pass."""
        if str(self.device).startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    def metadata(self) -> dict:
        """JSON-able description of the scorer (its subclasses say more)."""
        return {"scorer": self.family, "model_dtype": self.model_dtype, "device": str(self.device)}

    def described(self, **settings: Any) -> dict:
        """The metadata of a loaded model: scorer, model, dtype, batch size, then the scorer's own
        ``settings``, then the device."""
        return {
            "scorer": self.family,
            "model": self.model_name,
            "model_dtype": self.model_dtype,
            "batch_size": self.batch_size,
            **settings,
            "device": str(self.device),
        }

    def close(self) -> None:
        """Free the model; nothing to do for an in-process model (garbage collection frees it)."""
