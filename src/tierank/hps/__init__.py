"""High-Precision Scoring (HPS): run the model in low precision, score in FP32.

Only :mod:`tierank.hps.regimes` is imported here; it needs torch only when a
scoring function is called.  The rooms:

* :mod:`~tierank.hps.regimes` (precision regimes, pure scoring functions) and
  :mod:`~tierank.hps.variants` (what ``--regimes`` accepts);
* :mod:`~tierank.hps.checks` (the options' checks), :mod:`~tierank.hps.base` (the
  :class:`~tierank.hps.base.Scorer` protocol and :class:`~tierank.hps.base.ScorerBase`, whose
  ``score_query`` is the one timed forward-then-score loop);
* backend-neutral inputs: :mod:`~tierank.hps.prompts` (the generative prompts),
  :mod:`~tierank.hps.encodings` (bounded texts, pair encodings), :mod:`~tierank.hps.checkpoints`
  (models on disk: named sources, offline loading, made folders, FP32 rows);
* the runners per engine: :mod:`tierank.hps.hf` (transformers and sentence-transformers:
  ``hf.biencoder``, ``hf.crossencoder``, ``hf.generative``), :mod:`~tierank.hps.onnx` (onnxruntime)
  and :mod:`tierank.hps.vllm` (``vllm.settings``, the engines' settings apart from the scorers
  ``vllm.generative`` and ``vllm.crossencoder``); they need torch, transformers, ...;
* :mod:`~tierank.hps.registry`: the model kinds (``--model``), the one place a kind is added;
* the protocol's stages: :mod:`~tierank.hps.protocol` (:class:`~tierank.hps.protocol.RerankConfig`
  and the stage functions), :mod:`~tierank.hps.cache` (score cache), :mod:`~tierank.hps.table`
  (Table 1), :mod:`~tierank.hps.output` (OUT/: checks, lock, table files),
  :mod:`~tierank.hps.variance` (run-to-run variance), :mod:`~tierank.hps.machine` (where scores
  were computed); the BEIR reader is :mod:`tierank.io.beir`.

Layers, lowest first (no module imports a later one): ``regimes``, ``quantized``, ``checks``,
``variants``; ``registry`` (and ``vllm.settings``); ``base``; ``encodings``, ``prompts``,
``checkpoints``; the runners; ``cache``, ``output``, ``table``, ``variance``, ``machine``; ``protocol``.
"""

from tierank.hps.regimes import (
    REGIMES,
    Regime,
    as_regime,
    head_fp32_yes_no,
    pairwise_scores,
    sigmoid_scores,
    softmax2_scores,
    yes_no_scores,
)

__all__ = [
    "REGIMES",
    "Regime",
    "as_regime",
    "head_fp32_yes_no",
    "pairwise_scores",
    "sigmoid_scores",
    "softmax2_scores",
    "yes_no_scores",
]
