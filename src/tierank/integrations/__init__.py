"""Tie-aware evaluation where users already evaluate: thin adapters over [`tierank.evaluate`][tierank.evaluate].

One module per framework; each imports its framework only when used, and a missing framework is
one line naming the extra to install:

* [`tierank.integrations.ir_measures`][tierank.integrations.ir_measures]: an ir_measures ``Provider`` (also reached by PyTerrier's
  ``pt.Experiment`` once registered);
* [`tierank.integrations.ranx`][tierank.integrations.ranx]: ``ranx.Qrels`` / ``ranx.Run`` in, tie-aware per-query values out
  to ranx's ``compare`` report;
* [`tierank.integrations.sentence_transformers`][tierank.integrations.sentence_transformers]: tie-aware drop-ins for ``InformationRetrievalEvaluator``
  and ``CrossEncoderRerankingEvaluator`` (expected values, ``_min``/``_max``, tied share; the whole tie
  group kept at the top-k cutoff);
* [`tierank.integrations.mteb`][tierank.integrations.mteb]: MTEB's saved predictions evaluated against a task's qrels, and
  tie-aware scores inside an MTEB run.

Every number these adapters return is computed by [`tierank.evaluate`][tierank.evaluate]; they only convert
inputs and outputs.
"""

from __future__ import annotations

from types import ModuleType

from ..extras import EXTRAS, MissingExtra
from ..extras import require as _require


def require(module: str) -> ModuleType:
    """Import a framework, or raise [`tierank.extras.MissingExtra`][tierank.extras.MissingExtra]: one line saying how to install it.

    Examples
    --------
    >>> require("json").__name__
    'json'
    >>> try:
    ...     require("ranx_not_a_module")
    ... except ImportError as e:
    ...     print(e)
    ranx_not_a_module is not installed: pip install 'tierank[ranx_not_a_module]'
    """
    return _require(module)


__all__ = ["EXTRAS", "MissingExtra", "require"]
