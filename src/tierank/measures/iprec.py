r"""Interpolated precision at recall levels: trec_eval's ``iprec_at_recall`` and ``11pt_avg``.

Definition (trec_eval 10, ``m_iprec_at_recall.c`` and ``m_11pt_avg.c``).  With `N_+`
relevant documents judged, `n` of them retrieved (ranks read only: ``prep.cut``,
trec_eval's ``-M``), at 1-based ranks `p_1 < \dots < p_n`, the recall level
`\rho` becomes the count `c = \mathrm{lround}(\rho N_+)` (C ``lround``: halves away
from zero, applied to the double product) and

.. math:: IPrec@\rho = \begin{cases} 0 & c > n \text{ or } n = 0,\\
          \max_{i \ge \max(c, 1)} i / p_i & \text{otherwise.} \end{cases}

trec_eval scans the ranks bottom-up keeping `\max_{j \ge x} prec(j)` over *every* rank
`j`, but the precision rises only at relevant ranks, so the maximum is attained at one
of them (and `c = 0` takes the value of `c = 1`).  Unretrieved relevant documents
count only through `N_+` (they make `c` larger than `n`, giving 0).
``11pt_avg`` is the mean of the 11 levels 0.0, 0.1, ..., 1.0, summed from the highest level
down as trec_eval does.

Statistics over tie orderings:

* **oblivious, min, max: exact.**  Every term `i/p_i` decreases when a relevant document
  moves down (its `p_i` grows), and one pushed past the ranks read drops a term of the
  maximum (or makes `c > n`); so the value is monotone, and the arrangement with every
  tie group's relevant documents last (first) gives the minimum (maximum): all the
  `p_i` are then simultaneously largest (smallest).  Checked against enumeration of
  every ordering in the tests.
* **expected, var: sampled** (`tierank.measures.sampling`; ``method="sampled"`` with the
  sample count, seed and standard error).  We know of no polynomial exact method: the
  expectation of a suffix maximum of ratios `i/p_i` couples all the tie groups below
  the level's rank.  Queries whose value no ordering changes are exact (variance 0).

The 11 standard levels and their average are computed together, once per run and relevance
level (cached on ``prep``).
"""

from __future__ import annotations

import numpy as np

from ..errors import TierankInputError, quote
from ..ties import Prepared
from .base import FamilyNames, Measure, Param, Stats, register
from .linear import REL
from .sampling import Draws, extremal_draws, labelled, sample_moments
from .trec_forms import LevelList, Levels

__all__ = ["IPrec", "IPrecAvg", "LEVELS", "iprec_values", "average_values", "queue_counts"]

#: trec_eval's default recall levels (``double_cutoff_array`` of m_iprec_at_recall.c, m_11pt_avg.c)
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

_REFUSAL = (
    "its recall levels are counts of the N+ relevant documents: an unjudged document assumed "
    "relevant would change N+, so neither assumption bounds it"
)


def _lround(x: np.ndarray) -> np.ndarray:
    """C ``lround`` of non-negative doubles: nearest integer, halves up (exact, no ``x + 0.5``)."""
    fl = np.floor(x)
    return fl + (x - fl >= 0.5)


def iprec_values(d: Draws, nrel: np.ndarray, levels, out: np.ndarray | None = None) -> np.ndarray:
    """Interpolated precision at each of ``levels`` for every ranking of ``d``: shape ``(L, d.nseg)``.

    ``nrel`` is N+ per query; ``out`` (optional) receives the result.  The precisions at the
    relevant ranks, their suffix maxima inside each ranking ([`Draws.suffix_max`][tierank.measures.iprec.Draws.suffix_max]), then
    one gather per level.

    >>> d = Draws.build(np.array([0]), np.array([0]), np.array([0, 0, 0]), np.array([1.0, 3.0, 6.0]))
    >>> iprec_values(d, np.array([4.0]), (0.0, 0.5, 0.75, 1.0)).round(4).tolist()
    [[1.0], [0.6667], [0.5], [0.0]]
    """
    levels = np.asarray(levels, dtype=np.float64)
    if out is None:
        out = np.empty((len(levels), d.nseg))
    if not d.nseg:
        return out
    best = np.append(d.suffix_max(d.count / d.rank), 0.0)  # padded: index len(entries) reads 0
    npos = np.asarray(nrel, dtype=np.float64)[d.queries]
    c = _lround(levels[:, None] * npos[None, :]).astype(np.int64)  # (L, queries drawn)
    found = d.found
    first = d.start[:-1] - 1
    for i in range(len(levels)):  # one level at a time: arrays of one row stay in cache
        ci = c[i][d.qidx]
        at = np.where((ci <= found) & (found > 0), first + np.maximum(ci, 1), len(best) - 1)
        np.take(best, at, out=out[i])
    return out


def queue_counts(c: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The relevant-document count each level of ``11pt_avg.LEVELS`` reads, per ranking, as trec_eval's
    ``m_11pt_avg.c`` walks them: ``c`` (levels x rankings) the counts ``lround(level N+)``, ``found``
    the relevant documents retrieved per ranking.  trec_eval takes the levels last to first: it
    skips those above ``found`` until one is not (they add 0: here ``found + 1``, read as 0), then
    matches each at the relevant document where its count is reached, from the bottom of the
    ranking up; a level whose count is below 1 or above the one matched before it is never reached,
    and it and every level after it get the last interpolated precision (that of count 1).  For
    ascending levels this is each level's own count (at least 1).

    >>> queue_counts(np.array([[1], [2], [3]]), np.array([2])).tolist()  # ascending: 3 skipped
    [[1], [2], [3]]
    >>> queue_counts(np.array([[2], [1], [3]]), np.array([3])).tolist()  # 2 after 1: never reached
    [[1], [1], [3]]
    """
    L = c.shape[0]
    out = np.empty_like(c)
    started = np.zeros(c.shape[1], dtype=bool)
    blocked = np.zeros(c.shape[1], dtype=bool)
    prev = found.astype(np.int64, copy=True)
    for i in range(L - 1, -1, -1):  # one level at a time, every ranking at once
        ci = c[i]
        skip = ~started & (ci > found)
        started |= ~skip
        match = ~skip & ~blocked & (ci >= 1) & (ci <= prev)
        blocked |= ~skip & ~match
        prev = np.where(match, ci, prev)
        out[i] = np.where(skip, found + 1, np.where(match, ci, 1))
    return out


def average_values(d: Draws, nrel: np.ndarray, levels, out: np.ndarray) -> np.ndarray:
    """trec_eval's ``11pt_avg`` with the recall ``levels`` in the order given, for every ranking of
    ``d``, into ``out`` (shape ``(d.nseg,)``): each level's interpolated precision at the count
    [`queue_counts`][tierank.measures.iprec.queue_counts] gives it, summed from the last level to the first (trec_eval's order), over
    the number of levels.

    >>> d = Draws.build(np.array([0]), np.array([0]), np.array([0, 0, 0]), np.array([1.0, 3.0, 6.0]))
    >>> float(average_values(d, np.array([4.0]), (0.25, 0.5, 0.75), np.empty(1))[0].round(4))
    0.7222
    """
    levels = np.asarray(levels, dtype=np.float64)
    out[:] = 0.0
    if not d.nseg:
        return out
    best = np.append(d.suffix_max(d.count / d.rank), 0.0)  # padded: index len(entries) reads 0
    npos = np.asarray(nrel, dtype=np.float64)[d.queries]
    found = d.found
    c = _lround(levels[:, None] * npos[None, :]).astype(np.int64)[:, d.qidx]
    eff = queue_counts(c, found)
    first = d.start[:-1] - 1
    for i in range(len(levels) - 1, -1, -1):
        ci = eff[i]
        at = np.where((ci <= found) & (found > 0), first + np.maximum(ci, 1), len(best) - 1)
        out += best[at]
    out /= float(len(levels))
    return out


def _average(rows: np.ndarray, out: np.ndarray) -> np.ndarray:
    """trec_eval's 11pt_avg of the 11 level rows into ``out``: summed from the highest level down, / 11."""
    out[:] = 0.0
    for row in rows[::-1]:
        out += row
    out /= float(len(rows))
    return out


def _bundle(
    prep: Prepared, levels: tuple, rel: int | None, average: tuple | None = None
) -> list[Stats]:
    """Stats of every level of ``levels`` (and, for the standard levels, of their average); with
    ``average`` (levels in the order given), only the trec_eval average of those levels."""
    resolved = prep.rel if rel is None else rel

    def compute():
        cut = prep.cut(float("inf"))
        nrel = prep.nrel(rel)
        with_avg = levels == LEVELS

        def values(d):
            if average is not None:
                out = np.empty((1, d.nseg))
                average_values(d, nrel, average, out[0])
                return out
            out = np.empty((len(levels) + with_avg, d.nseg))
            iprec_values(d, nrel, levels, out=out[: len(levels)])
            if with_avg:
                _average(out[: len(levels)], out[len(levels)])
            return out

        obl, lo, hi = (values(d) for d in extremal_draws(prep, rel, cut))
        vary = np.flatnonzero((lo < hi).any(axis=0))
        mu, var, exact = sample_moments(prep, vary, values, rel, cut)
        out = []
        for i in range(len(lo)):
            e, v = lo[i].copy(), np.zeros(prep.nq)
            own = lo[i][vary] < hi[i][vary]
            at = vary[own]
            e[at], v[at] = (
                np.clip(mu[i][own], lo[i][at], hi[i][at]),
                var[i][own],
            )  # no rounding past the bounds
            sampled = np.zeros(prep.nq, dtype=bool)
            sampled[at] = ~exact[own]
            out.append(labelled(obl[i], e, lo[i], hi[i], v, sampled, prep))
        return out

    return prep.cached(("iprec", levels, resolved, average), compute)


@register
class IPrec(Measure):
    """Interpolated precision at a recall level (trec_eval iprec_at_recall).

    >>> from tierank.measures import parse_measure
    >>> str(parse_measure("IPrec@0.1")), str(parse_measure("IPrec@1"))
    ('IPrec@0.1', 'IPrec@1')
    """

    family = "IPrec"
    pretty = "interpolated precision"
    definition = "highest precision at any rank whose recall reaches the given level"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.4."
    names = FamilyNames(
        trec_eval="iprec_at_recall",
        trec_eval_form=Levels("iprec_at_recall", tuple(i / 10 for i in range(11))),
    )
    description = (
        "interpolated precision at a recall level (trec_eval iprec_at_recall); "
        "min/max exact, expectation sampled"
    )
    schema = (REL,)
    cutoff_required = True
    cutoff_param = Param("recall", float, None, "recall level", low=0, high=1)
    bounds_refusal = _REFUSAL

    def tensor_refusal(self) -> str | None:
        return (
            "its expectation and variance over tie orderings have no known closed form "
            "(tierank.evaluate estimates them by sampling)"
        )

    def stats(self, prep: Prepared) -> Stats:
        r = float(self.required_cutoff)
        levels = LEVELS if r in LEVELS else (r,)
        return _bundle(prep, levels, self.rel)[levels.index(r)]


@register
class IPrecAvg(Measure):
    """trec_eval's 11pt_avg: mean interpolated precision at recall 0.0, 0.1, ..., 1.0."""

    family = "IPrecAvg"
    pretty = "11-point interpolated average precision"
    definition = "mean interpolated precision at the recall levels 0, 0.1, ..., 1"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.4."
    names = FamilyNames(
        trec_eval="11pt_avg", trec_eval_form=LevelList("11pt_avg"), ir_measures=None
    )
    description = (
        "mean interpolated precision at the 11 recall levels 0, 0.1, ..., 1 (trec_eval 11pt_avg; "
        "levels='0.25,0.5,0.75': trec_eval's 11pt_avg.0.25,0.5,0.75); min/max exact, expectation "
        "sampled"
    )
    schema = (
        REL,
        Param(
            "levels",
            str,
            None,
            "recall levels in [0, 1], comma separated, averaged as trec_eval averages them "
            "(default the 11 levels 0, 0.1, ..., 1)",
        ),
    )
    cutoff_allowed = False
    bounds_refusal = _REFUSAL

    def tensor_refusal(self) -> str | None:
        return (
            "its expectation and variance over tie orderings have no known closed form "
            "(tierank.evaluate estimates them by sampling)"
        )

    def validate(self, text: str) -> None:
        self.recall_levels()

    def recall_levels(self) -> tuple[float, ...] | None:
        """The ``levels`` parameter as numbers (None: the 11 standard levels)."""
        given = self.param("levels")
        if given is None:
            return None
        out = []
        for tok in given.split(","):
            try:
                x = float(tok)
            except ValueError:
                x = float("nan")
            if not 0.0 <= x <= 1.0:
                raise TierankInputError(
                    f"measure {quote(str(self))}: levels must be numbers in [0, 1] separated by "
                    f"commas, got {quote(tok)}"
                )
            out.append(x)
        return tuple(out)

    def stats(self, prep: Prepared) -> Stats:
        levels = self.recall_levels()
        if levels is None:
            return _bundle(prep, LEVELS, self.rel)[len(LEVELS)]
        return _bundle(prep, (), self.rel, average=levels)[0]
