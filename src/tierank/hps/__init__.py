"""High-Precision Scoring (HPS): run the model in low precision, score in FP32.

Only [`tierank.hps.regimes`][tierank.hps.regimes] is imported here; it needs torch only when a
scoring function is called.  The rooms:

* [`regimes`][tierank.hps.regimes] (precision regimes, pure scoring functions) and
  [`variants`][tierank.hps.variants] (what ``--regimes`` accepts);
* [`checks`][tierank.hps.checks] (the options' checks), [`base`][tierank.hps.base] (the
  [`Scorer`][tierank.hps.base.Scorer] protocol and [`ScorerBase`][tierank.hps.base.ScorerBase], whose
  ``score_query`` is the one timed forward-then-score loop);
* backend-neutral inputs: [`prompts`][tierank.hps.prompts] (the generative prompts),
  [`encodings`][tierank.hps.encodings] (bounded texts, pair encodings), [`checkpoints`][tierank.hps.checkpoints]
  (models on disk: named sources, offline loading, made folders, FP32 rows);
* the runners per engine: [`tierank.hps.hf`][tierank.hps.hf] (transformers and sentence-transformers:
  ``hf.biencoder``, ``hf.crossencoder``, ``hf.generative``), [`onnx`][tierank.hps.onnx] (onnxruntime)
  and `tierank.hps.vllm` (``vllm.settings``, the engines' settings apart from the scorers
  ``vllm.generative`` and ``vllm.crossencoder``); they need torch, transformers, ...;
* [`registry`][tierank.hps.registry]: the model kinds (``--model``), the one place a kind is added;
* the protocol's helpers: `cache` (score cache), `table` (Table 1), `variance` (run-to-run
  variance), [`machine`][tierank.hps.machine] (where scores were computed); the BEIR reader is
  `tierank.io.beir`;
* the protocol's stages, one room each: [`plan`][tierank.hps.plan] (every check, once:
  [`RerankConfig`][tierank.hps.plan.RerankConfig] to an immutable [`RerankPlan`][tierank.hps.plan.RerankPlan]),
  [`score`][tierank.hps.score], [`record`][tierank.hps.record] and [`output`][tierank.hps.output]
  (OUT/ written under its lock); [`protocol`][tierank.hps.protocol] runs them in a row
  ([`rerank`][tierank.hps.protocol.rerank]);
* [`command`][tierank.hps.command]: ``tierank rerank`` as a function, its options as one checked
  value ([`RerankOptions`][tierank.hps.command.RerankOptions], [`run_rerank`][tierank.hps.command.run_rerank]).

Layers, lowest first (no module imports a later one): ``regimes``, ``quantized``, ``checks``,
``variants``; ``registry`` (and ``vllm.settings``); ``base``; ``encodings``, ``prompts``,
``checkpoints``; the runners; ``cache``, ``table``, ``variance``, ``machine``; ``plan``; ``score``;
``record``; ``output``; ``protocol``; ``command``.
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
