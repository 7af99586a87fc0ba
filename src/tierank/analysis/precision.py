"""Re-express a run's scores in lower precision: what would BF16 do to my evaluation?

Every format maps the scores of a [`Run`][tierank.io.model.Run] to new float64
scores that are exactly the values the format can hold, so the ties a format
creates are the ties tierank then sees:

* ``fp16``, ``bf16``, ``fp8_e4m3``, ``fp8_e5m2``: IEEE-style casts through
  ``ml_dtypes`` (round to nearest even; fp8 e4m3 saturates at +-448, e5m2 keeps infinities,
  which are clipped to the largest finite value so that they still rank);
* ``int8``: per-query affine quantization to 256 levels between the query's min and max
  score (``round((s - min) / (max - min) * 255)``), as int8 score caches do;
* ``sigN`` (e.g. ``sig3``): N significant decimal digits;
* ``bandRHO`` (e.g. ``band1.4``): Yang, Moffat & Turpin's geometric rank bands; the document
  at rank i (in the run's own order) gets the score 1/g of its band g (see [`banding`][tierank.analysis.banding]).

Examples
--------
>>> import numpy as np
>>> quantize(np.array([0.30078125, 0.30079, 0.9]), "bf16").tolist()
[0.30078125, 0.30078125, 0.8984375]
>>> quantize(np.array([1234.5678, 0.0012345678]), "sig3").tolist()
[1230.0, 0.00123]
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import TierankInputError
from ..io.model import Run
from ..ties import layout

FLOAT_FORMATS = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
DEFAULT_FORMATS = (
    "fp32",
    "fp16",
    "bf16",
    "fp8_e4m3",
    "fp8_e5m2",
    "int8",
    "sig3",
    "sig2",
    "band1.4",
    "band2",
)


def _dtype(name: str):
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes is a dependency
        raise TierankInputError(
            f"format {name!r} needs ml_dtypes (pip install ml_dtypes)"
        ) from None
    return {
        "fp16": np.float16,
        "bf16": ml_dtypes.bfloat16,
        "fp8_e4m3": ml_dtypes.float8_e4m3fn,
        "fp8_e5m2": ml_dtypes.float8_e5m2,
    }[name]


def quantize(scores: np.ndarray, fmt: str, qi: np.ndarray | None = None) -> np.ndarray:
    """Scores as the format ``fmt`` would hold them (float64 out).

    ``qi`` (query index per score) is needed by the per-query formats (``int8``).
    Rank bands need the ranking and are applied by [`requantize_run`][tierank.analysis.precision.requantize_run].
    """
    s = np.asarray(scores, dtype=np.float64)
    if fmt in ("fp64", "none"):
        return s.copy()
    if fmt == "fp32":
        return s.astype(np.float32).astype(np.float64)
    if fmt in FLOAT_FORMATS:
        dt = _dtype(fmt)
        with np.errstate(over="ignore", invalid="ignore"):
            out = s.astype(dt).astype(np.float64)
        import ml_dtypes

        big = float(ml_dtypes.finfo(dt).max)
        return np.clip(np.nan_to_num(out, nan=0.0, posinf=big, neginf=-big), -big, big)
    m = re.fullmatch(r"sig(\d+)", fmt)
    if m:
        digits = int(m.group(1))
        if digits < 1:
            raise TierankInputError(f"format {fmt!r}: at least 1 significant digit")
        with np.errstate(divide="ignore"):
            mag = np.floor(np.log10(np.abs(np.where(s == 0, 1.0, s))))
        scale = np.power(10.0, digits - 1 - mag)
        return np.round(s * scale) / scale
    if fmt == "int8":
        if qi is None:
            raise TierankInputError("format 'int8' is per query: pass query indices")
        n = int(qi.max()) + 1 if len(qi) else 0
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        np.minimum.at(lo, qi, s)
        np.maximum.at(hi, qi, s)
        span = (hi - lo)[qi]
        level = np.where(
            span > 0, np.round((s - lo[qi]) / np.where(span > 0, span, 1.0) * 255.0), 0.0
        )
        return level - 128.0  # the int8 code itself: order and ties are what matter
    raise TierankInputError(
        f"unknown score format {fmt!r}; accepted: fp32, {', '.join(FLOAT_FORMATS)}, "
        "int8, sigN (N significant digits), bandRHO (rank bands, e.g. band1.4)"
    )


def requantize_run(run: Run, fmt: str) -> Run:
    """A copy of ``run`` with its scores re-expressed in ``fmt`` (see the module docstring)."""
    if fmt.startswith("band"):
        from .banding import band_run

        try:
            rho = float(fmt[4:])
        except ValueError:
            raise TierankInputError(f"format {fmt!r}: expected bandRHO, e.g. band1.4") from None
        return band_run(run, rho)
    qi = (
        layout(run).codes.astype(np.int64) if fmt == "int8" else None
    )  # per query: the engine's query codes
    return Run(
        qid=run.qid,
        docid=run.docid,
        score=quantize(run.score, fmt, qi),
        rank=run.rank,
        source=f"{run.source} [{fmt}]",
    )
