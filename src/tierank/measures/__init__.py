"""Measure families, one module per family; all register into one registry.

``linear``: P, R, R_cap, F1, Hits, Judged, Rprec, nDCG, RBP (positional sums);
``rank``: RR, Success (first relevant document); ``ap``: AP; ``bpref``: Bpref; ``err``: ERR;
``counts``: NumQ, NumRet, NumRel, NumRelRet, NumNonRelJudgedRet, SetP, SetR, SetF, SetAP;
``iprec``: IPrec, IPrecAvg; ``gmap``: GMAP (with ``sampling``, the labelled sampled estimates);
``cwl``: ir_measures' C/W/L families SDCG, INSQ, INST, NERR8-11; ``pairs``: Accuracy, Compat.  The contract a
family implements is :class:`tierank.measures.base.Measure`; shared numeric
helpers are in :mod:`tierank.measures.kernels`.
"""

from . import ap, bpref, counts, cwl, err, gmap, iprec, linear, names, pairs, rank, sampling  # noqa: F401  (registration; names: trec_eval's names for parse_measure)
from .base import (
                   MAX_CUTOFF,
                   REGISTRY,
                   Aggregate,
                   Measure,
                   Param,
                   Stats,
                   describe,
                   parse_measure,
                   parse_measures,
                   register,
                   supported,
)

__all__ = ["Measure", "Param", "Stats", "Aggregate", "REGISTRY", "MAX_CUTOFF", "parse_measure", "parse_measures", "register",
           "supported", "describe"]
