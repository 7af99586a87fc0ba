"""High-Precision Scoring (HPS): run the model in low precision, score in FP32.

Only :mod:`tierank.hps.regimes` is imported here; it needs torch only when a
scoring function is called.  The rooms:

* :mod:`~tierank.hps.regimes` (precision regimes, pure scoring functions) and
  :mod:`~tierank.hps.variants` (what ``--regimes`` accepts);
* :mod:`~tierank.hps.base` (the :class:`~tierank.hps.base.Scorer` protocol and
  helpers shared by scorers) and the scorers: :mod:`~tierank.hps.biencoder`,
  :mod:`~tierank.hps.crossencoder`, :mod:`~tierank.hps.generative`,
  :mod:`~tierank.hps.onnx`, :mod:`~tierank.hps.quantized` (they need torch,
  transformers, sentence-transformers);
* :mod:`~tierank.hps.registry`: the model kinds (``--model``);
* the protocol's stages: :mod:`~tierank.hps.protocol` (the driver),
  :mod:`~tierank.hps.cache` (score cache), :mod:`~tierank.hps.table`
  (Table 1), :mod:`~tierank.hps.output` (OUT/: checks, lock, table files);
  the BEIR reader is :mod:`tierank.io.beir`.
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
