"""High-Precision Scoring (HPS): run the model in low precision, score in FP32.

Only :mod:`tierank.hps.regimes` is imported here; it needs torch only when a
scoring function is called.  The model wrappers
(:mod:`tierank.hps.biencoder`, :mod:`tierank.hps.generative`) need torch,
transformers and sentence-transformers.
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
