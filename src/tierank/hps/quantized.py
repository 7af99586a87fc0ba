"""Quantized embeddings: int8 and binary (sign) scoring, with optional FP32 re-scoring.

Embeddings are L2-normalised in FP32 and quantized with
sentence-transformers' `quantize_embeddings`
(int8 with per-dimension ranges from calibration embeddings; packed sign
bits for binary).  Scores are exact integers, so their ties are real:

* int8: the integer dot product (int32 accumulation) of the int8 vectors;
* binary: the Hamming similarity ``dim - popcount(q XOR d)``.

``rescore=K`` re-scores in FP32 (cosine of the FP32 embeddings) every
document whose quantized score is at least the K-th largest - whole tie
groups, so the choice of what to re-score breaks no tie arbitrarily.  The
re-scored documents get ``3 + cos`` (>= 2) and the rest their quantized
similarity scaled into [-1, 1], so the run keeps one score order: the
re-scored head above the quantized tail (the summary's idea A).

>>> import numpy as np
>>> q = np.array([1.0, 0.0, 0.0, 0.0])  # sign bits 1000 (a zero counts as not positive)
>>> d = np.array([[1, -.1, 0, 0], [1, .1, 0, 0], [-1, .1, 0, 0], [2, -.3, 0, 0]])
>>> quantized_scores(q, d, "binary").tolist()   # equal sign bits: 4 of 4, 3, 2, and a tie at 4
[4.0, 3.0, 2.0, 4.0]
>>> s = quantized_scores(q, d, "binary", rescore=1); bool(s[0] > 2 and s[1] < 2)
True
"""

from __future__ import annotations

import numpy as np

from tierank.errors import Problem, TierankInputError

__all__ = ["quantize", "quantized_scores", "PRECISIONS"]

PRECISIONS = ("int8", "binary")


def _normalize(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n == 0, 1, n)


def quantize(emb: np.ndarray, precision: str, calibration: np.ndarray | None = None) -> np.ndarray:
    """Normalised embeddings quantized to int8 (``(n, dim)`` int8) or packed sign bits (``(n, dim/8)`` uint8)."""
    if precision not in PRECISIONS:
        raise TierankInputError(
            [
                Problem(
                    "", None, f"unknown embedding precision {precision!r}; accepted: int8, binary"
                )
            ]
        )
    from sentence_transformers.util.quantization import quantize_embeddings

    emb = _normalize(np.atleast_2d(emb))
    if precision == "binary":
        return np.asarray(quantize_embeddings(emb, precision="ubinary"))
    calib = emb if calibration is None else _normalize(np.atleast_2d(calibration))
    ranges = np.vstack([calib.min(axis=0), calib.max(axis=0)])  # per-dimension min and max
    return np.asarray(quantize_embeddings(emb, precision="int8", ranges=ranges))


def quantized_scores(
    q_emb: np.ndarray,
    d_emb: np.ndarray,
    precision: str,
    rescore: int | None = None,
    calibration: np.ndarray | None = None,
) -> np.ndarray:
    """Scores of documents ``d_emb (n, dim)`` for one query ``q_emb (dim,)`` (float64).

    ``calibration`` sets the int8 ranges (default: the query and the documents
    themselves, i.e. per-candidate-pool calibration).
    """
    if precision not in PRECISIONS:
        raise TierankInputError(
            [
                Problem(
                    "", None, f"unknown embedding precision {precision!r}; accepted: int8, binary"
                )
            ]
        )
    q = np.asarray(q_emb, dtype=np.float32).reshape(1, -1)
    d = np.asarray(d_emb, dtype=np.float32)
    if d.ndim != 2 or d.shape[1] != q.shape[1]:
        raise TierankInputError(
            [Problem("", None, f"embedding shapes do not match: query {q.shape}, docs {d.shape}")]
        )
    if rescore is not None and int(rescore) < 1:
        raise TierankInputError([Problem("", None, f"rescore needs K >= 1, got {rescore!r}")])
    dim = q.shape[1]
    if len(d) == 0:
        return np.zeros(0)
    if precision == "int8":
        calib = np.vstack([q, d]) if calibration is None else calibration
        qq = quantize(q, "int8", calib).astype(np.int32)
        dq = quantize(d, "int8", calib).astype(np.int32)
        raw = (dq @ qq[0]).astype(np.float64)
        tail = raw / (128.0 * 128.0 * dim)
    else:
        qb = quantize(q, "binary")
        db = quantize(d, "binary")
        ham = np.bitwise_count(np.bitwise_xor(db, qb[0])).sum(axis=1)
        raw = (dim - ham).astype(np.float64)
        tail = 2.0 * raw / dim - 1.0
    if rescore is None:
        return raw
    k = min(int(rescore), len(raw))
    threshold = np.sort(raw)[::-1][k - 1]
    head = raw >= threshold
    cos = (_normalize(d) @ _normalize(q)[0]).astype(np.float64)
    return np.where(head, 3.0 + cos, tail)
