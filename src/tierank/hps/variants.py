"""Scoring variants: one precision regime plus, where a scorer has them, its options.

A variant is what one column of the paper's Table 1 compares.  Its string
form is what ``tierank rerank --regimes`` accepts:

``fp32``, ``fp16``, ``bf16``
    model and scoring step in that dtype (paper eq. 1);
``fp16->fp32``, ``bf16->fp32``
    model in low precision, scoring step in FP32 (HPS, eq. 3);
``fp16->fp32:head``, ``bf16->fp32:head``
    generative rerankers only: the yes-minus-no (or true-minus-false) logit
    difference from the upcast last hidden state and the two FP32 lm_head rows;
``emb-int8``, ``emb-binary``, optionally ``+rescore@K``
    bi-encoders only: FP32 embeddings quantized to int8 (per-dimension
    ranges) or to sign bits, scored by integer dot product / Hamming
    similarity; ``+rescore@K`` re-scores the top K (whole tie groups) in FP32;
``onnx-int8``
    bi-encoders with an int8 ONNX twin (``minilm``): the int8 model itself.

>>> v = parse_variant("bf16->fp32:head")
>>> v.model_dtype, v.level, v.kind
('bf16', 'head', 'head')
>>> parse_variant("emb-binary+rescore@5").rescore
5
>>> str(parse_variant(" BF16 -> FP32 "))
'bf16->fp32'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tierank.errors import Problem, TierankInputError
from tierank.hps.regimes import REGIMES, Regime

__all__ = ["Variant", "parse_variant", "parse_variants", "VARIANT_HELP", "VARIANT_KINDS"]

VARIANT_HELP = (
    "fp32, fp16, bf16, fp16->fp32, bf16->fp32; generative: fp16->fp32:head, bf16->fp32:head; "
    "bi-encoders: emb-int8, emb-binary (+rescore@K), onnx-int8 (minilm)"
)

_EMB = re.compile(r"^emb-(int8|binary)(?:\+rescore@(\d+))?$")
#: What a model kind may declare it supports (`Variant.kind`).
VARIANT_KINDS = ("precision", "head", "quant", "onnx")


@dataclass(frozen=True)
class Variant:
    """One scoring variant (see the module docstring for the spellings)."""

    name: str
    model_dtype: str  # fp32 | fp16 | bf16 | int8 (the ONNX model)
    scoring_dtype: str  # fp32 | fp16 | bf16 | int8 | binary
    level: str = "none"  # none | softmax | head (generative); none/softmax elsewhere
    quant: str | None = None  # emb-int8 / emb-binary
    rescore: int | None = None
    onnx: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def regime(self) -> Regime:
        return Regime(self.model_dtype, self.scoring_dtype)

    @property
    def hps(self) -> bool:
        """Scoring step in a higher precision than the model (regimes ``X->fp32`` and ``:head``)."""
        return self.level in ("softmax", "head")

    @property
    def low_twin(self) -> str | None:
        """The non-HPS variant with the same model dtype (``bf16`` for ``bf16->fp32``)."""
        return self.model_dtype if self.hps else None

    @property
    def group(self) -> str:
        """Variants of one group share one model (one load, one forward pass per query)."""
        return "onnx-int8" if self.onnx else self.model_dtype

    @property
    def kind(self) -> str:
        """``precision`` (a regime), ``head`` (FP32 head of a generative model), ``quant`` or ``onnx``."""
        return (
            "onnx"
            if self.onnx
            else "quant"
            if self.quant
            else "head"
            if self.level == "head"
            else "precision"
        )

    def unsupported(self, family: str) -> TierankInputError:
        """The error for a model kind ``family`` that does not support this variant."""
        return TierankInputError(
            [Problem("", None, f"regime {self.name!r} does not apply to a {family} scorer")]
        )

    def check_dtype(self, model_dtype: str) -> None:
        """Refuse a model running in another dtype than this variant's."""
        if self.model_dtype != model_dtype:
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        f"regime {self.name} needs a {self.model_dtype} model; this scorer runs in {model_dtype}",
                    )
                ]
            )


def parse_variant(text: Any) -> Variant:
    """Parse one variant string; unknown strings raise [`TierankInputError`][tierank.hps.variants.TierankInputError].

    >>> parse_variant("int4")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown regime 'int4'; accepted: fp32, fp16, bf16, fp16->fp32, bf16->fp32; generative: fp16->fp32:head, bf16->fp32:head; bi-encoders: emb-int8, emb-binary (+rescore@K), onnx-int8 (minilm)
    """
    if isinstance(text, Variant):
        return text
    if isinstance(text, Regime):
        text = text.name
    norm = "".join(str(text).split()).lower()
    bad = TierankInputError(
        [Problem("", None, f"unknown regime {text!r}; accepted: {VARIANT_HELP}")]
    )
    if norm in REGIMES:
        r = Regime.parse(norm)
        return Variant(norm, r.model_dtype, r.scoring_dtype, "softmax" if r.hps else "none")
    if norm.endswith(":head"):
        base = norm[: -len(":head")]
        if base in ("fp16->fp32", "bf16->fp32"):
            return Variant(norm, base.split("->")[0], "fp32", "head")
        raise bad
    m = _EMB.match(norm)
    if m:
        k = None if m.group(2) is None else int(m.group(2))
        if k is not None and k < 1:
            raise TierankInputError([Problem("", None, f"rescore@K needs K >= 1, got {text!r}")])
        return Variant(norm, "fp32", m.group(1), "none", quant=m.group(1), rescore=k)
    if norm == "onnx-int8":
        return Variant(norm, "int8", "fp32", "none", onnx=True)
    raise bad


def parse_variants(texts) -> list[Variant]:
    """Parse a list, or comma-separated strings, of variants; duplicates are dropped."""
    out: list[Variant] = []
    for t in texts if not isinstance(texts, str) else [texts]:
        parts = (
            [t] if isinstance(t, (Variant, Regime)) else [p for p in str(t).split(",") if p.strip()]
        )
        for p in parts:
            v = parse_variant(p)
            if v not in out:
                out.append(v)
    if not out:
        raise TierankInputError([Problem("", None, "no precision regime given")])
    return out
