"""The measure contract in one import: every public name of the modules that hold it.

[`tierank.measures.protocol`][tierank.measures.protocol] (the [`Measure`][tierank.measures.protocol.Measure] class and the engine's
[`compute_all`][tierank.measures.protocol.compute_all]), [`tierank.measures.params`][tierank.measures.params] (a family's [`Param`][tierank.measures.params.Param] schema),
[`tierank.measures.summary`][tierank.measures.summary] (per-query [`Stats`][tierank.measures.summary.Stats] and their summary over queries),
[`tierank.measures.family`][tierank.measures.family] (a family's names and metadata) and
[`tierank.measures.registry`][tierank.measures.registry] (the registry and the parsers of measure strings).
``from tierank.measures.base import Measure, Param, Stats, register`` keeps working.
"""

from __future__ import annotations

from .family import FamilyInfo, FamilyNames
from .params import MAX_CUTOFF, Param
from .protocol import Measure, compute_all
from .registry import *  # noqa: F403  (re-exported: every name of its __all__)
from .registry import __all__ as _registry_names
from .summary import ADDITIVE, AGGREGATORS, Aggregate, Aggregator, Stats, summarize

__all__ = [
    "MAX_CUTOFF",
    "Aggregator",
    "AGGREGATORS",
    "ADDITIVE",
    "FamilyNames",
    "FamilyInfo",
    "Param",
    "Stats",
    "Aggregate",
    "summarize",
    "Measure",
    "compute_all",
    *_registry_names,
]
