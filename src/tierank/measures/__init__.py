"""Measure families, one module per family; all register into one registry.

``linear``: P, R, R_cap, F1, Hits, Judged, Rprec, nDCG, RBP (positional sums);
``rank``: RR, Success (first relevant document); ``ap``: AP; ``bpref``: Bpref; ``err``: ERR;
``counts``: NumQ, NumRet, NumRel, NumRelRet, NumNonRelJudgedRet, SetP, SetR, SetF, SetAP;
``iprec``: IPrec, IPrecAvg; ``gmap``: GMAP; ``gmbpref``: GMBpref (with ``sampling``, the labelled sampled
estimates); ``trec_extra``: RelP, SetRelP, RprecMult, Utility; ``infap``: infAP;
``trec_gain``: G, BinG, nDCG_rel, RnDCG; ``unjudged``: Unj, RBP_resid;
``relstring``: RelString (trec_eval's measures of the same names); ``cwl``: ir_measures' C/W/L
families SDCG, INSQ, INST, NERR8-11; ``pairs``: Accuracy, Compat; ``diversity``: the intent-aware
families on subtopic qrels, alpha_nDCG, alpha_DCG, ERR_IA, nERR_IA, NRBP, nNRBP, P_IA, AP_IA, StRecall.  The contract a
family implements is [`tierank.measures.base.Measure`][tierank.measures.protocol.Measure]; shared numeric
helpers are in [`tierank.measures.kernels`][tierank.measures.kernels].

The family modules are imported as their names are asked for (`tierank.measures.lazy`; a new
family's module is found without being listed in its ``MODULES``).  Every registered family is also a Python value of
this module, as ir_measures users write them (derived from `REGISTRY`)::

    from tierank.measures import nDCG, AP, P
    tierank.evaluate(qrels, run, [nDCG@10, AP, P@[5, 10], nDCG(dcg='exp-log2')@10])

>>> from tierank.measures import nDCG, P
>>> str(nDCG@10), parse_measure(str(nDCG@10)) == nDCG@10, P@[5, 10]
('nDCG@10', True, [Measure('P@5'), Measure('P@10')])
"""

from . import names  # noqa: F401  (trec_eval's names for parse_measure)
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

__all__ = [
    "Measure",
    "Param",
    "Stats",
    "Aggregate",
    "REGISTRY",
    "MAX_CUTOFF",
    "parse_measure",
    "parse_measures",
    "register",
    "supported",
    "describe",
    "families",
]


def __getattr__(name: str) -> Measure:
    """``tierank.measures.nDCG`` and every other registered family name: the family's
    [`Measure`][tierank.measures.Measure] with its default parameters ([`Measure.default`][tierank.measures.Measure.default]), from `REGISTRY`."""
    cls = REGISTRY.get(name)
    if cls is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return cls.default()


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(REGISTRY))


def families() -> dict[str, Measure]:
    """Every registered name and its Python value (``{"AP": AP, "nDCG": nDCG, ...}``), from `REGISTRY`."""
    return {name: cls.default() for name, cls in sorted(REGISTRY.items())}
