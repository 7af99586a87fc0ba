r"""trec_eval's relative precision and utility measures: relative_P, set_relative_P, Rprec_mult, utility
(trec_eval 10, ``m_rel_P.c``, ``m_set_rel_P.c``, ``m_Rprec_mult.c``, ``m_utility.c``).

With `h_k` the relevant documents in the top `k`, `h` those retrieved, `n` the
documents retrieved (``num_ret``, after ``-M``) and `N_+` the relevant documents:

* ``relative_P`` at `k` ([`RelP`][tierank.measures.trec_extra.RelP]) `= h_k / \min(k, N_+)` (0 when `N_+ = 0`):
  precision up to rank `N_+`, recall after it;
* ``set_relative_P`` ([`SetRelP`][tierank.measures.trec_extra.SetRelP]) `= h / \min(n, N_+)` (0 when either is 0);
* ``Rprec_mult`` at the multiple `x` ([`RprecMult`][tierank.measures.trec_extra.RprecMult]): precision at rank
  `c = \lfloor x N_+ + 0.9 \rfloor` (trec_eval's ``(long) (x * num_rel + 0.9)``), i.e.
  `h_c / c` (0 when `c = 0`), also when fewer than `c` documents are retrieved;
* ``utility`` ([`Utility`][tierank.measures.trec_extra.Utility]) `= p_1 a + p_2 b + p_3 c + p_4 d` over the contingency table
  `a = h`, `b = n - h`, `c = N_+ - h`, `d = N - n - N_+ + h` (`N` the
  documents in the collection, ``trec_eval -N``, parameter ``ndocs``), averaged over queries as
  trec_eval does.

All four are weighted sums over ranked positions (weight 1 up to a cutoff, the cutoff per query for
Rprec_mult), divided by a per-query constant, so `tierank.measures.linear.Linear` gives their
exact expectation, variance, min and max.  Utility is `(p_1 - p_2 - p_3 + p_4) h` plus a constant
per query: its statistics are those of `h`, scaled, with min and max swapped when the
coefficient is negative.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Param, Stats, register
from .counts import NumRelRet, _Set
from .linear import REL, Linear
from .trec_forms import Levels, Weights

__all__ = ["RelP", "SetRelP", "RprecMult", "Utility"]

_N_PLUS = "an unjudged document assumed relevant raises N+ and can lower it"


@register
class RelP(Linear):
    """Relative precision at k (trec_eval relative_P): relevant in the top k / min(k, N+)."""

    family = "RelP"
    batch_cutoffs = True
    unit_weights = True
    pretty = "relative precision at k"
    definition = "precision at k divided by the best precision possible at k"
    citation = "trec_eval 10.0, m_relative_P.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval_cut="relative_P", ir_measures=None)
    description = (
        "relative precision at k: |relevant in top k| / min(k, N+), the best possible being 1 "
        "(trec_eval relative_P)"
    )
    schema = (REL,)
    cutoff_required = True
    bounds_refusal = _N_PLUS

    uses_n_plus = True
    tensor_kernel = "linear"

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        return xp.minimum(xp.full_like(nrel, float(self.required_cutoff)), nrel)


@register
class SetRelP(_Set):
    """Relative set precision (trec_eval set_relative_P): relevant retrieved / min(retrieved, N+)."""

    family = "SetRelP"
    batch_cutoffs = True
    unit_weights = True
    pretty = "relative set precision"
    definition = "set precision divided by the best precision possible for the set's size"
    citation = "trec_eval 10.0, m_set_relative_P.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="set_relative_P")
    description = (
        "relative set precision: relevant retrieved / min(retrieved, N+), the best possible "
        "being 1 (trec_eval set_relative_P)"
    )
    bounds_refusal = _N_PLUS

    uses_n_plus = True
    tensor_kernel = "linear"

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        return xp.minimum(xp.astype(retrieved, nrel.dtype), nrel)

    # Linear's own statistics (not the set measures' one count): relative set precision shares the
    # sums of the other families with unit weights where the engine computes them together
    stats = Linear.stats


@register
class RprecMult(Linear):
    """Precision at a multiple x of N+ (trec_eval Rprec_mult): precision at rank floor(x N+ + 0.9).

    >>> from tierank.measures import parse_measure
    >>> str(parse_measure("RprecMult@0.2")), parse_measure("RprecMult@2").cutoff
    ('RprecMult@0.2', 2.0)
    """

    family = "RprecMult"
    batch_cutoffs = True
    unit_weights = True
    pretty = "precision at multiples of R"
    definition = "precision at rank x times the number of relevant documents"
    citation = "trec_eval 10.0, m_Rprec_mult.c (usnistgov/trec_eval)."
    names = FamilyNames(
        trec_eval="Rprec_mult",
        trec_eval_form=Levels("Rprec_mult", tuple(i / 5 for i in range(1, 11))),
        ir_measures=None,
    )
    description = (
        "precision at rank floor(x N+ + 0.9), x a multiple of N+ (trec_eval Rprec_mult; "
        "RprecMult@1 is Rprec)"
    )
    schema = (REL,)
    cutoff_required = True
    cutoff_param = Param("mult", float, None, "multiple of N+", low=0, high=2**20, open="low")
    bounds_refusal = "its cutoff moves with N+, and so with the relevance of unjudged documents"

    def ranks(self, nrel: np.ndarray) -> np.ndarray:
        """trec_eval's cutoff per query: ``(long) (x * num_rel + 0.9)``."""
        return np.floor(float(self.required_cutoff) * np.asarray(nrel, dtype=np.float64) + 0.9)

    def cutoff_per_query(self, prep: Prepared):
        return self.ranks(prep.nrel(self.rel))

    def depth(self, nrel):
        return self.ranks(nrel(self.rel))

    def weights(self, prep: Prepared, rows: np.ndarray):
        return np.ones(len(rows))

    def denominator(self, prep: Prepared):
        return self.ranks(prep.nrel(self.rel))


#: the largest worth |p1|..|p4| of a document in `Utility`: four worths times counts up to 2^53 stay
#: far inside float64 (larger ones made the utility overflow to inf)
WORTH = 1e15


@register
class Utility(Linear):
    """Set utility (trec_eval utility): p1 a + p2 b + p3 c + p4 d over the retrieved/relevant table."""

    family = "Utility"
    pretty = "set utility"
    definition = "p1 relevant retrieved + p2 non-relevant retrieved + p3 relevant missed + p4 non-relevant missed, scaled"
    citation = "Hull, D. A. and Robertson, S. (2000). The TREC-8 Filtering Track Final Report. TREC-8; trec_eval 10.0, m_utility.c."
    names = FamilyNames(
        trec_eval="utility",
        trec_eval_form=Weights("utility", ("p1", "p2", "p3", "p4"), (1.0, -1.0, 0.0, 0.0)),
        ir_measures=None,
    )
    description = (
        "set utility p1 a + p2 b + p3 c + p4 d: a relevant retrieved, b non-relevant retrieved, "
        "c relevant not retrieved, d non-relevant not retrieved (of ndocs; trec_eval utility, -N)"
    )
    schema = (
        Param("p1", float, 1.0, "worth of a relevant retrieved document", low=-WORTH, high=WORTH),
        Param(
            "p2", float, -1.0, "worth of a non-relevant retrieved document", low=-WORTH, high=WORTH
        ),
        Param(
            "p3", float, 0.0, "worth of a relevant document not retrieved", low=-WORTH, high=WORTH
        ),
        Param(
            "p4",
            float,
            0.0,
            "worth of a non-relevant document not retrieved",
            low=-WORTH,
            high=WORTH,
        ),
        Param("ndocs", int, 0, "documents in the collection (trec_eval -N)", low=0, high=2**53),
        REL,
    )
    cutoff_allowed = False
    bounds_refusal = (
        "an unjudged document assumed relevant raises N+ (the relevant documents not retrieved)"
    )

    def stats(self, prep: Prepared) -> Stats:
        """The statistics of h ([`tierank.measures.counts.NumRelRet`][tierank.measures.counts.NumRelRet]), mapped through trec_eval's
        expression (m_utility.c, in doubles, so single orderings print trec_eval's digits)."""
        h = NumRelRet(params=(("rel", self.rel),)).stats(prep)
        p1, p2, p3, p4 = (float(self.param(p)) for p in ("p1", "p2", "p3", "p4"))
        n = prep.qret.astype(np.float64)
        nrel = prep.nrel(self.rel).astype(np.float64)
        ndocs = float(self.param("ndocs"))

        def te(a):
            return p1 * a + p2 * (n - a) + p3 * (nrel - a) + p4 * (ndocs + a - n - nrel)

        c = p1 - p2 - p3 + p4
        lo, hi = te(h.min), te(h.max)
        return Stats(
            te(h.oblivious), te(h.expected), np.minimum(lo, hi), np.maximum(lo, hi), c * c * h.var
        )


def with_docs_in_collection(measures: list, ndocs: int) -> list:
    """``measures`` with every [`Utility`][tierank.measures.trec_extra.Utility] reading ``ndocs`` documents in the collection (trec_eval
    ``-N``); the others unchanged.

    >>> from tierank.measures import parse_measure
    >>> [str(m) for m in with_docs_in_collection([parse_measure("Utility"), parse_measure("P@5")], 100)]
    ['Utility(ndocs=100)', 'P@5']
    """
    out = []
    for m in measures:
        if isinstance(m, Utility):
            params = dict(m.params)
            params["ndocs"] = int(ndocs)
            m = replace(m, params=tuple(sorted(params.items())))
        out.append(m)
    return out
