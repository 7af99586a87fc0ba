"""Measure families, one module per family; all register into one registry.

``linear``: P, R, F1, Hits, Rprec, nDCG, RBP (positional sums);
``rank``: RR, Success (first relevant document); ``ap``: AP.
"""

from . import ap, linear, rank  # noqa: F401  (registration)
from .base import REGISTRY, Measure, Param, Stats, describe, parse_measure, register, supported

__all__ = ["Measure", "Param", "Stats", "REGISTRY", "parse_measure", "register", "supported", "describe"]
