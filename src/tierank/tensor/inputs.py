"""The checks of what [`tierank.tensor.evaluate`][tierank.tensor.evaluate] is given, before any arithmetic.

Each refusal is one line (a [`TierankInputError`][tierank.errors.TierankInputError]) naming the
argument and the reason; what a user would expect to work is accepted:

* Python lists and tuples are arrays (NumPy);
* NumPy arrays (or lists) beside arrays of another library (``labels`` as NumPy with torch ``scores``)
  are moved into the library and onto the device of ``scores``; two other libraries are refused;
* NumPy arrays of the ``ml_dtypes`` floating types (``bfloat16``, ``float8_*``) are read as float32,
  which holds each of their values exactly, so their ties are kept;
* ``dtype`` is ``"float32"``, ``"float64"`` or that floating dtype of the scores' library;
* labels and ``n_relevant`` are finite; ``nDCG(negative='keep')`` is refused when a label is
  negative (the tensor kernels give negative labels gain 0); ``n_relevant`` holds whole numbers;
* nDCG's largest gain (the grade, or ``2^g - 1`` under ``dcg='exp-log2'``) is one whose square,
  summed over a row (the variance), stays finite in the compute dtype.

[`check_finite`][tierank.tensor.inputs.check_finite] is the last check: a statistic that comes out
NaN or infinite for a query is refused, naming the measure, instead of being returned.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..measures.base import Measure

__all__ = ["prepare", "check_finite", "gain_limit_log2"]

_FLOAT_NAMES = ("float32", "float64")


def _as_numpy(name: str, x):
    """Lists, tuples and ``ml_dtypes`` arrays as plain NumPy arrays (anything else as it is)."""
    if isinstance(x, (list, tuple)) or np.isscalar(x):
        try:
            x = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise TierankInputError(f"{name}: not an array ({e})") from None
        if x.dtype == object or x.dtype.kind in "USV":
            raise TierankInputError(f"{name}: not an array of numbers (dtype {x.dtype})")
    if isinstance(x, np.ndarray) and x.dtype.kind == "V":  # ml_dtypes' bfloat16, float8_*, ...
        try:
            x = x.astype(np.float32)
        except (TypeError, ValueError):
            raise TierankInputError(f"{name}: unsupported NumPy dtype {x.dtype}") from None
    return x


def _library(x) -> str:
    mod = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax"}.get(mod, mod)


def _into(name: str, x, xp, like, lib: str):
    """``x`` in the library and on the device of ``like`` (NumPy input is moved; another library is
    refused)."""
    if x is None:
        return None
    x = _as_numpy(name, x)
    xlib = _library(x)
    if xlib == lib:
        return x
    if isinstance(x, np.ndarray):
        from array_api_compat import device

        try:
            return xp.asarray(x, device=device(like))
        except Exception as e:  # the library's own refusal, in one line
            raise TierankInputError(f"{name}: cannot be moved into {lib} ({e})") from None
    raise TierankInputError(
        f"{name} is a {type(x).__module__}.{type(x).__name__} but scores are "
        f"{type(like).__module__}.{type(like).__name__}: give both in one array library (or {name} "
        "as a NumPy array)"
    )


def gain_limit_log2(dtype_bits: int, candidates: int) -> float:
    """log2 of the largest gain whose sum over ``candidates``, squared (nDCG's variance), stays finite
    in a float of that many bits (32 or 64), with a factor 2 to spare; under ``dcg='exp-log2'`` it is
    the largest grade."""
    max_exp = 128 if dtype_bits == 32 else 1024
    return max_exp / 2 - 1 - math.log2(max(candidates, 1))


def prepare(scores, labels, mask, indexes, n_relevant, dtype, measures: list[Measure]):
    """The arguments of `evaluate`, checked and in one array library: returns ``(xp, scores,
    labels, mask, indexes, n_relevant, dtype)`` (``dtype`` None, or a floating dtype of ``xp``).
    Raises `TierankInputError` (one line) for what cannot be evaluated."""
    from array_api_compat import array_namespace

    scores = _as_numpy("scores", scores)
    try:
        xp = array_namespace(scores)
    except TypeError:
        raise TierankInputError(
            f"scores: not an array of a supported library (got {type(scores).__name__})"
        ) from None
    lib = _library(scores)
    labels = _into("labels", labels, xp, scores, lib)
    mask = _into("mask", mask, xp, scores, lib)
    indexes = _into("indexes", indexes, xp, scores, lib)
    if n_relevant is not None:
        n_relevant = _into("n_relevant", n_relevant, xp, scores, lib)
        if not (
            xp.isdtype(n_relevant.dtype, "numeric")
            and not xp.isdtype(n_relevant.dtype, "complex floating")
        ):
            raise TierankInputError(f"n_relevant must be numbers, got {n_relevant.dtype}")
        if xp.isdtype(n_relevant.dtype, "real floating"):
            if not bool(xp.all(xp.isfinite(n_relevant))):
                raise TierankInputError("n_relevant: not a finite number (NaN or inf)")
            if not bool(xp.all(n_relevant == xp.round(n_relevant))):
                raise TierankInputError("n_relevant must hold whole numbers")
        if bool(xp.any(n_relevant < 0)):
            raise TierankInputError("n_relevant must not be negative")
    if dtype is not None:
        if isinstance(dtype, str):
            if dtype not in _FLOAT_NAMES:
                raise TierankInputError(f"dtype must be float32 or float64, got {dtype!r}")
            dtype = getattr(xp, dtype)
        else:
            match = [getattr(xp, n) for n in _FLOAT_NAMES if _same_dtype(dtype, getattr(xp, n))]
            if not match:
                raise TierankInputError(
                    f"dtype must be float32 or float64 (a name or the {lib} dtype), got {dtype!r}"
                )
            dtype = match[0]
    if labels is not None and hasattr(labels, "dtype") and hasattr(labels, "shape"):
        if xp.isdtype(labels.dtype, "real floating"):
            valid = xp.isinf(labels)
            if (
                mask is not None
                and tuple(mask.shape) == tuple(labels.shape)
                and mask.dtype == xp.bool
            ):
                valid = valid & mask
            if bool(xp.any(valid)):
                raise TierankInputError(
                    "labels: inf for a valid candidate (labels are finite grades)"
                )
        _check_negative_keep(xp, labels, mask, measures)
        _check_gain_range(xp, scores, labels, mask, dtype, measures)
    return xp, scores, labels, mask, indexes, n_relevant, dtype


def _same_dtype(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _check_negative_keep(xp, labels, mask, measures: list[Measure]) -> None:
    """The tensor kernels give a negative label gain 0: ``negative='keep'`` (a negative gain) is
    refused where a valid label is negative, rather than evaluated as ``'zero'``."""
    keep = [m for m in measures if m.family == "nDCG" and dict(m.params).get("negative") == "keep"]
    if not keep or not xp.isdtype(labels.dtype, "numeric") or int(math.prod(labels.shape)) == 0:
        return
    neg = labels < 0
    if mask is not None and tuple(mask.shape) == tuple(labels.shape) and mask.dtype == xp.bool:
        neg = neg & mask
    if bool(xp.any(neg)):
        raise TierankInputError(
            f"measure {str(keep[0])!r}: negative labels keep a negative gain in tierank.evaluate; "
            "tierank.tensor gives them 0 (negative='zero')"
        )


def _check_gain_range(xp, scores, labels, mask, dtype, measures: list[Measure]) -> None:
    """nDCG's gains and their squares (the variance sums them over a row) must stay finite in the
    compute dtype: a grade beyond that is refused (the kernels would overflow to inf / NaN, or to
    a silent std of 0)."""
    ndcg = [m for m in measures if m.family == "nDCG"]
    if not ndcg or len(labels.shape) == 0 or int(math.prod(labels.shape)) == 0:
        return
    if not xp.isdtype(labels.dtype, "numeric"):
        return
    if mask is not None and tuple(mask.shape) == tuple(labels.shape) and mask.dtype == xp.bool:
        top = float(xp.max(xp.where(mask, labels, xp.zeros_like(labels))))
    else:
        top = float(xp.max(labels))
    if dtype is not None:
        bits = 64 if dtype == xp.float64 else 32
    else:
        floating = xp.isdtype(scores.dtype, "real floating")
        bits = 64 if scores.dtype == xp.float64 or not floating else 32
    cands = int(labels.shape[-1]) if len(labels.shape) == 2 else int(math.prod(labels.shape))
    for m in ndcg:
        exp = dict(m.params).get("dcg") == "exp-log2"
        top_m = max([top] + [float(v) for _, v in dict(m.params).get("gains") or ()])
        log2_gain = top_m if exp else (math.log2(top_m) if top_m > 0 else -math.inf)
        if log2_gain <= gain_limit_log2(bits, cands):
            continue
        if exp:
            limit = math.floor(gain_limit_log2(bits, cands))
            hint = (
                ""
                if bits == 64
                else f"; dtype='float64' allows {math.floor(gain_limit_log2(64, cands))}"
            )
            what = f"the gain 2^{top_m:g} - 1"
        else:
            limit = 2.0 ** gain_limit_log2(bits, cands)
            hint = (
                ""
                if bits == 64
                else f"; dtype='float64' allows {2.0 ** gain_limit_log2(64, cands):.3g}"
            )
            what = "its square"
        raise TierankInputError(
            f"labels: grade {top_m:g} under {str(m)!r}: {what} overflows float{bits} "
            f"({cands} candidates); the largest grade is {limit:.4g}{hint}"
        )


def check_finite(xp, name: str, stats: tuple[Any, ...]) -> None:
    """Refuse a measure whose statistics came out NaN or infinite (an overflow in the compute dtype)."""
    for v in stats:
        if int(v.shape[0]) and not bool(xp.all(xp.isfinite(v))):
            raise TierankInputError(
                f"measure {name!r}: a statistic overflows the compute dtype (labels too large); "
                "use dtype='float64' or smaller labels"
            )
