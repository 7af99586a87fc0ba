"""Reading vLLM's outputs (engine results of the right shapes; no vllm needed): the answer tokens' values,
the FP32 scoring step over log-probabilities, and a pooling engine's vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tierank.errors import TierankError

__all__ = ["answer_logits", "token_logits", "logprob_scores", "head_logits"]


def _logprob_value(entry: Any) -> float:
    return float(entry.logprob if hasattr(entry, "logprob") else entry)


def answer_logits(outputs: Sequence[Any], yes_id: int, no_id: int) -> np.ndarray:
    """``(n, 2)`` float64 array ``[value(no), value(yes)]`` from vLLM ``RequestOutput`` objects
    (`token_logits` of ``[no_id, yes_id]``).

    ``value`` is what the engine put in the first generated position's
    logprobs dict (``outputs[i].outputs[0].logprobs[0]``, token id ->
    ``Logprob``): raw logits under ``logprobs_mode="raw_logits"``, FP32
    log-probabilities by default.  A missing answer token is an error (the
    engine was not asked for it), never a silent zero.

    >>> from types import SimpleNamespace as NS
    >>> out = NS(outputs=[NS(logprobs=[{7: NS(logprob=-1.5), 9: NS(logprob=2.25)}])])
    >>> answer_logits([out], yes_id=9, no_id=7)
    array([[-1.5 ,  2.25]])
    """
    return token_logits(outputs, [no_id, yes_id])


def token_logits(outputs: Sequence[Any], token_ids: Sequence[int]) -> np.ndarray:
    """``(n, len(token_ids))`` float64 array: per output the value of each of ``token_ids`` (in that
    order) at the first generated position, as `answer_logits` reads the two answer tokens; a token
    the engine did not return is an error.

    >>> from types import SimpleNamespace as NS
    >>> out = NS(outputs=[NS(logprobs=[{5: NS(logprob=0.5), 6: NS(logprob=-1.0), 8: 3.0}])])
    >>> token_logits([out], [8, 5, 6])
    array([[ 3. ,  0.5, -1. ]])
    """
    ids = [int(t) for t in token_ids]
    rows = []
    for i, out in enumerate(outputs):
        try:
            first = out.outputs[0].logprobs[0]
        except (AttributeError, IndexError, TypeError):
            raise TierankError(
                f"vLLM output {i} carries no logprobs (SamplingParams(logprobs=...) not set?)"
            ) from None
        missing = [t for t in ids if t not in first]
        if missing:
            raise TierankError(
                f"vLLM output {i}: no logprob for answer token(s) {missing}; got {sorted(first)[:8]}"
            )
        rows.append([_logprob_value(first[t]) for t in ids])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(ids))


def logprob_scores(logprobs_2: Any) -> np.ndarray:
    """P(yes) of the two-way softmax, in FP32, from FP32 log-probabilities ``[lp_no, lp_yes]``.

    ``lp = z - logsumexp(z)`` shifts both answers by the same number, so the
    two-way softmax of the log-probabilities is that of the logits: this is
    the HPS scoring step (FP32) over the model dtype's logits; equal logits
    give equal log-probabilities, so it removes no tie.

    >>> logprob_scores([[-2.6021, -2.1021], [-1.0, -1.0]]).round(6).tolist()
    [0.622459, 0.5]
    """
    from tierank.hps.regimes import softmax2_scores

    return softmax2_scores(np.asarray(logprobs_2, dtype=np.float32), "fp32")


def head_logits(outputs: Sequence[Any]) -> np.ndarray:
    """``(n, k)`` float64 array of a pooling engine's outputs: ``ClassificationRequestOutput`` (``probs``:
    logits with ``use_activation=False``) or ``EmbeddingRequestOutput`` (``embedding``).

    >>> from types import SimpleNamespace as NS
    >>> head_logits([NS(outputs=NS(probs=[0.25, 1.5]))])
    array([[0.25, 1.5 ]])
    """
    rows = []
    for out in outputs:
        o = out.outputs
        vals = getattr(o, "probs", None)
        if vals is None:
            vals = getattr(o, "embedding", None)
        if vals is None:
            vals = getattr(o, "data", o)
        if hasattr(vals, "detach"):
            vals = vals.detach().to("cpu").double().numpy()
        rows.append(np.asarray(vals, dtype=np.float64).reshape(-1))
    return np.vstack(rows) if rows else np.zeros((0, 0))
