r"""Intent-aware (diversity) measures on subtopic qrels, tie-aware, registered like every family.

Families, with ir_measures' names and parameters (``rel``: a subtopic judgment counts as relevant
when its grade is >= ``rel``, default the evaluation's ``rel``, 1; ``judged_only`` = False: True
drops unjudged documents from the run first):

| name (aliases) | parameters | value of one ranking ``d_1, d_2, ...`` |
|---|---|---|
| alpha_nDCG | @k, alpha=0.5, rel, judged_only | ``alpha-DCG@k of the run / of the ideal ranking`` |
| alpha_DCG | @k, alpha=0.5, rel, judged_only | ``sum_{i<=k} g_i/log2(i+1) / sum_{i<=k} A(1-a)^{i-1}/log2(i+1)`` |
| ERR_IA | @k, rel, judged_only | ``sum_{i<=k} g_i/i / sum_{i<=k} A(1-a)^{i-1}/i, a = 0.5`` |
| nERR_IA | @k, rel, judged_only | ``sum_{i<=k} g_i/i of the run / of the ideal ranking`` |
| NRBP | alpha=0.5, beta=0.5, rel | ``(1-(1-a)b)/A sum_i g_i b^{i-1}`` |
| nNRBP | alpha=0.5, beta=0.5, rel | ``NRBP of the run / of the ideal ranking`` |
| P_IA | @k, rel, judged_only | ``sum_{i<=k} abs(S(d_i)) / (k A)`` |
| AP_IA (MAP_IA) | rel, judged_only | ``1/A sum_s AP of the run for subtopic s`` |
| StRecall | @k, rel | ``abs(union_{i<=k} S(d_i)) / A`` |

with ``S(d)`` the subtopics ``d`` is relevant to, ``A`` the number of subtopics with at least one
relevant document in the qrels (a query with ``A = 0`` scores 0), and the novelty-discounted gain
``g_i = sum_{s in S(d_i)} (1-a)^{c_s(i)}`` where ``c_s(i)`` counts the documents above rank ``i``
relevant to ``s``.  These are the definitions of ndeval 4.5 (TREC Web track; Clarke et al.,
SIGIR 2008 for alpha-nDCG; Chapelle et al., CIKM 2009 for ERR, made intent-aware as Agrawal et al.,
WSDM 2009; Clarke, Kolla and Vechtomova, ICTIR 2009 for NRBP), which ir_measures' pyndeval
provider computes: binary subtopic judgments, the "ideal ideal" normalisation of alpha-DCG and
ERR-IA (every document relevant to every subtopic), and the ideal ranking of the n-variants
built greedily (at each rank the judged document of largest gain, ties to the larger docid).
Without ``@k`` a cutoff measure reads the whole ranking (``k`` = documents retrieved).
Differences from ndeval: ndeval accepts cutoffs up to 20 only (NRBP and MAP-IA read the whole
ranking in both) and leaves ERR-IA@1 / alpha-DCG@1 unnormalised, here any ``k`` is normalised the
same way; ndeval's nNRBP of a query with ``A = 0`` is 0/0 (NaN), here 0.  Every other tie-free
value equals ndeval's (``tests/crosscheck/test_pyndeval.py``, through pyndeval 0.0.8).

How subtopic qrels reach the measures
-------------------------------------
The families are in `tierank.measures.REGISTRY` and parsed by
[`tierank.measures.parse_measure`][tierank.measures.parse_measure] like any other; each sets
``needs_subtopics``.  When one is asked for,
[`tierank.evaluate.Evaluator`][tierank.evaluate.Evaluator] reads its qrels in the ``subtopic-qrels`` role of the input
door ([`tierank.io.sources`][tierank.io.sources]: a ``qid subtopic docid grade`` file, a
[`SubtopicQrels`][tierank.io.subtopics.SubtopicQrels] or ``{qid: {docid: {subtopic: grade}}}``; plain qrels are refused
with the reason), evaluates the other measures on their plain form (each document's largest
grade), and hands the judgments to `tierank.ties.prepare`, which gives the measures the docid
of every row in policy order.  Queries evaluated: those of the run judged in the qrels (all of
the qrels' with ``complete``).  ``tierank eval QRELS RUN -m alpha_nDCG@10`` and its alias
``tierank diversity`` print them.

Tie-aware statistics
--------------------
Documents of equal score in a query form a tie group; every ordering of every tie group is
equally likely.  The oblivious value is that of the tie-break policy's order (trec_eval's by
default: score descending, then docid descending, as ndeval's ``-traditional``).  The gain of a
document depends on the documents above it, so there is no closed form for most families; per
query:

* **P_IA** is linear in the documents in the top ``k``: E, min, max and variance are exact
  (the tie group across rank ``k`` contributes a sample without replacement of its counts).
* **StRecall@k**: E and variance are exact (the probability that a subtopic, or a pair of
  subtopics, stays uncovered by the ``n`` places the group across rank ``k`` has in the top
  ``k`` is a ratio of binomials); min and max by enumerating which documents take those places
  (as multisets of relevance patterns), exact up to ``exact_limit`` such multisets.
* **every other family** is enumerated exactly over the distinct orderings (documents of the
  same relevance pattern are interchangeable, groups past rank ``k`` are left out) when there
  are at most ``exact_limit`` of them (an evaluation setting, default 10,000); otherwise
  ``samples`` uniformly random orderings are drawn (``numpy`` generator seeded by ``seed`` and
  the query id) and the result is labelled ``method="sampled"`` with ``samples``, ``seed`` and
  the standard error ``se`` of E, as `tierank.measures.sampling` labels IPrec and GMAP; min and
  max are then the extremes observed among the sampled orderings (inner bounds).
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..errors import TierankInputError, UnknownMeasure, quote
from .base import REGISTRY, Measure, Param, Stats, parse_measure, register
from .linear import REL

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..ties import Prepared

__all__ = [
    "IntentAware",
    "FAMILIES",
    "parse_diversity_measure",
    "diversity_value",
]

#: ERR-IA's stopping probability of a relevant document (ndeval's alpha for ERR-IA)
_ERR_ALPHA = 0.5

Pattern = tuple[int, ...]  # indices of the subtopics a document is relevant to

ALPHA = Param(
    "alpha",
    float,
    0.5,
    "novelty: a subtopic's gain shrinks by 1 - alpha each time it is seen again",
    low=0,
    high=1,
)
BETA = Param(
    "beta", float, 0.5, "persistence: the chance of reading on to the next rank", low=0, high=1
)
JUDGED_ONLY = Param(
    "judged_only", bool, False, "drop the documents the subtopic qrels do not judge first"
)


class IntentAware(Measure):
    """Base of the intent-aware families: per query, the subtopic patterns of the run's tie groups
    (from ``prep.subtopics`` and ``prep.docid``), then the statistics of the module's documentation.

    >>> m = parse_measure("alpha_nDCG(alpha=0.7)@10")
    >>> m.family, m.cutoff, m.alpha, str(m), m.needs_subtopics
    ('alpha_nDCG', 10, 0.7, 'alpha_nDCG(alpha=0.7)@10', True)
    >>> str(parse_measure("MAP_IA")), str(parse_measure("NRBP(beta=0.8, rel=2)"))
    ('AP_IA', 'NRBP(beta=0.8,rel=2)')
    """

    needs_subtopics: ClassVar[bool] = True
    #: min and max are exact where the orderings are enumerated, else the extremes of those drawn
    extremes_exact: ClassVar[bool | str] = "as E"
    bounds_refusal: ClassVar[str | None] = (
        "an unjudged document's subtopics are unknown, so no relevance it could have is defined"
    )
    citation: ClassVar[str] = (
        "Clarke et al., SIGIR 2008; Agrawal et al., WSDM 2009; Clarke, Kolla and Vechtomova, "
        "ICTIR 2009 (as ndeval 4.5 computes them)"
    )

    @property
    def alpha(self) -> float:
        return float(dict(self.params).get("alpha", 0.5))

    @property
    def beta(self) -> float:
        return float(dict(self.params).get("beta", 0.5))

    @property
    def rank_cutoff(self) -> int | None:
        """The ``@k`` (always a rank here), or None."""
        return None if self.cutoff is None else int(self.cutoff)

    @property
    def judged_only(self) -> bool:
        return bool(dict(self.params).get("judged_only", False))

    def depth(self, nrel: Callable[[int | None], np.ndarray]) -> float | np.ndarray:
        """The cutoff (a condensed list, ``judged_only``, reads the whole run)."""
        return float("inf") if self.judged_only else self.k

    def stats(self, prep: Prepared) -> Stats:
        if prep.subtopics is None or prep.docid is None:
            raise TierankInputError(
                f"measure {quote(str(self))} needs subtopic qrels (qid subtopic docid grade)"
            )
        rel = self.rel if self.rel is not None else prep.rel
        docs = prep.docid.to_pylist()
        ones = []
        for i, qid in enumerate(prep.qids):
            lo, hi = int(prep.qstart[i]), int(prep.qstart[i + 1])
            cuts = [0, *(np.flatnonzero(np.diff(prep.gid[lo:hi])) + 1).tolist(), hi - lo]
            ranked = [docs[lo + a : lo + b] for a, b in zip(cuts[:-1], cuts[1:])]
            groups, q = _layout(prep.subtopics.get(qid, {}), ranked, self, rel)
            ones.append(
                _query_stats(
                    self,
                    groups,
                    q,
                    limit=prep.exact_limit,
                    samples=prep.samples,
                    seed=prep.seed,
                    qid=qid,
                )
            )
        col = {
            f: np.array([getattr(o, f) for o in ones], dtype=np.float64)
            for f in ("oblivious", "expected", "min", "max", "var", "se")
        }
        s = Stats(col["oblivious"], col["expected"], col["min"], col["max"], col["var"])
        sampled = np.array([o.sampled for o in ones], dtype=bool)
        if sampled.any():
            s = replace(
                s,
                method="sampled",
                samples=prep.samples,
                seed=prep.seed,
                se=col["se"],
                sampled=sampled,
            )
        return s


@register
class AlphaNDCG(IntentAware):
    family = "alpha_nDCG"
    pretty = "alpha-nDCG"
    description = "novelty-discounted DCG (alpha-DCG@k) over that of the greedy ideal ranking"
    schema = (ALPHA, JUDGED_ONLY, REL)


@register
class AlphaDCG(IntentAware):
    family = "alpha_DCG"
    pretty = "alpha-DCG"
    description = "novelty-discounted DCG over that of every document relevant to every subtopic"
    schema = (ALPHA, JUDGED_ONLY, REL)


@register
class ERRIA(IntentAware):
    family = "ERR_IA"
    pretty = "intent-aware ERR"
    description = "ERR's cascade per subtopic, averaged (normalised by the ideal ideal ranking)"
    schema = (JUDGED_ONLY, REL)


@register
class NERRIA(IntentAware):
    family = "nERR_IA"
    pretty = "normalised intent-aware ERR"
    description = "intent-aware ERR over that of the greedy ideal ranking"
    schema = (JUDGED_ONLY, REL)


@register
class NRBP(IntentAware):
    family = "NRBP"
    pretty = "novelty- and rank-biased precision"
    description = "RBP with novelty-discounted gains, averaged over subtopics"
    schema = (ALPHA, BETA, REL)
    cutoff_allowed = False


@register
class NNRBP(IntentAware):
    family = "nNRBP"
    pretty = "normalised NRBP"
    description = "NRBP over that of the greedy ideal ranking"
    schema = (ALPHA, BETA, REL)
    cutoff_allowed = False


@register
class PIA(IntentAware):
    family = "P_IA"
    extremes_exact = True
    pretty = "intent-aware precision"
    description = "precision at k per subtopic, averaged over subtopics"
    schema = (JUDGED_ONLY, REL)


class APIA(IntentAware):
    family = "AP_IA"
    pretty = "intent-aware average precision"
    description = "average precision per subtopic, averaged over subtopics"
    schema = (JUDGED_ONLY, REL)
    cutoff_allowed = False


register(APIA, aliases=("MAP_IA",))


@register
class StRecall(IntentAware):
    family = "StRecall"
    pretty = "subtopic recall"
    description = "the share of the subtopics that the top k documents cover"
    schema = (REL,)


#: family -> (parameters it accepts besides rel, whether @k is accepted), derived from the registry
FAMILIES: dict[str, tuple[tuple[str, ...], bool]] = {
    cls.family: (tuple(p.name for p in cls.schema if p.name != "rel"), cls.cutoff_allowed)
    for cls in dict.fromkeys(REGISTRY.values())
    if cls.needs_subtopics
}


def parse_diversity_measure(text: str | Measure) -> IntentAware:
    """An intent-aware measure by [`tierank.measures.parse_measure`][tierank.measures.parse_measure] (``α_`` read as ``alpha_``);
    any other measure is refused.

    >>> str(parse_diversity_measure("α_nDCG@5"))
    'alpha_nDCG@5'
    >>> parse_diversity_measure("nDCG@5")
    Traceback (most recent call last):
    ...
    tierank.errors.UnknownMeasure: measure 'nDCG@5': unknown intent-aware measure (known: alpha_nDCG, alpha_DCG, ERR_IA, nERR_IA, NRBP, nNRBP, P_IA, AP_IA, StRecall)
    """
    if isinstance(text, str) and text.lstrip().startswith("α_"):
        text = text.replace("α_", "alpha_", 1)
    m = parse_measure(text)
    if not isinstance(m, IntentAware):
        raise UnknownMeasure(
            f"measure {quote(str(text))}: unknown intent-aware measure (known: {', '.join(FAMILIES)})"
        )
    return m


# ------------------------------------------------------------------ values of one ranking


def _gains(patterns: Sequence[Pattern], nsub: int, alpha: float) -> list[float]:
    """Novelty-discounted gain of every rank."""
    seen = [0] * nsub
    out = []
    for p in patterns:
        g = 0.0
        for s in p:
            g += (1.0 - alpha) ** seen[s]
            seen[s] += 1
        out.append(g)
    return out


def _dcg(gains: Sequence[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def _err(gains: Sequence[float], k: int) -> float:
    return sum(g / (i + 1) for i, g in enumerate(gains[:k]))


def _rbp(gains: Sequence[float], beta: float) -> float:
    return sum(g * beta**i for i, g in enumerate(gains))


@dataclass(frozen=True)
class _Query:
    """What a measure needs of one query: ``A``, per-subtopic relevant counts, the ideal ranking."""

    nsub: int
    nrel: tuple[int, ...]
    ideal: tuple[Pattern, ...]


def diversity_value(m: IntentAware, patterns: Sequence[Pattern], q: _Query) -> float:
    """The value of ``m`` for one ranking given as the subtopic patterns of its documents."""
    A = q.nsub
    if A == 0:
        return 0.0
    n = len(patterns)
    k = m.rank_cutoff if m.rank_cutoff is not None else n
    if k == 0:
        return 0.0  # an empty ranking read to its end
    f = m.family
    if f in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"):
        alpha = _ERR_ALPHA if f.endswith("ERR_IA") else m.alpha
        cum = _dcg if f.startswith("alpha") else _err
        run = cum(_gains(patterns[:k], A, alpha), k)
        if f in ("alpha_DCG", "ERR_IA"):
            return run / cum([A * (1.0 - alpha) ** i for i in range(k)], k)
        ideal = cum(_gains(q.ideal[:k], A, alpha), k)
        return run / ideal if run > 0 else 0.0
    if f in ("NRBP", "nNRBP"):
        run = _rbp(_gains(patterns, A, m.alpha), m.beta)
        if f == "NRBP":
            return run * (1 - (1 - m.alpha) * m.beta) / A
        ideal = _rbp(_gains(q.ideal, A, m.alpha), m.beta)
        return run / ideal if run > 0 else 0.0
    if f == "P_IA":
        return sum(len(p) for p in patterns[:k]) / (k * A) if k else 0.0
    if f == "StRecall":
        return len({s for p in patterns[:k] for s in p}) / A
    # AP_IA
    count = [0] * A
    total = [0.0] * A
    for i, p in enumerate(patterns):
        for s in p:
            count[s] += 1
            total[s] += count[s] / (i + 1)
    return sum(t / r for t, r in zip(total, q.nrel) if r) / A


# ------------------------------------------------------------------ tie statistics


@dataclass(frozen=True)
class _One:
    oblivious: float
    expected: float
    min: float
    max: float
    var: float
    sampled: bool = False
    se: float = 0.0


def _multiset_perms(items: Sequence[Pattern]) -> Iterator[tuple[Pattern, ...]]:
    """Distinct orderings of a multiset (each equally likely under a uniform permutation)."""
    counts = Counter(items)
    keys = sorted(counts)
    n = len(items)
    out: list[Pattern] = []

    def rec() -> Iterator[tuple[Pattern, ...]]:
        if len(out) == n:
            yield tuple(out)
            return
        for key in keys:
            if counts[key]:
                counts[key] -= 1
                out.append(key)
                yield from rec()
                out.pop()
                counts[key] += 1

    return rec()


def _orderings(groups: Sequence[Sequence[Pattern]]) -> int:
    total = 1
    for g in groups:
        c = Counter(g)
        total *= math.factorial(len(g)) // math.prod(math.factorial(v) for v in c.values())
    return total


def _depth_groups(groups: list[list[Pattern]], k: int | None) -> list[list[Pattern]]:
    """The tie groups that start above rank ``k`` (all without a cutoff)."""
    if k is None:
        return groups
    out, start = [], 0
    for g in groups:
        if start >= k:
            break
        out.append(g)
        start += len(g)
    return out


def _moments(values: Sequence[float]) -> tuple[float, float]:
    mean = math.fsum(values) / len(values)
    return mean, max(math.fsum((v - mean) ** 2 for v in values) / len(values), 0.0)


def _p_ia(m: IntentAware, groups: list[list[Pattern]], q: _Query, oblivious: float) -> _One:
    n = sum(len(g) for g in groups)
    k = m.rank_cutoff if m.rank_cutoff is not None else n
    if q.nsub == 0 or k == 0:
        return _One(oblivious, 0.0, 0.0, 0.0, 0.0)
    from fractions import Fraction  # imported where used: `tierank eval` imports every family

    fixed, start = 0, 0
    e = lo = hi = var = 0.0
    for g in groups:
        c = [len(p) for p in g]
        if start + len(g) <= k:
            fixed += sum(c)
        elif start < k:
            take, size = k - start, len(g)
            c.sort()
            mean = Fraction(sum(c), size)  # exact rationals: a variance that is 0 comes out 0
            e = float(take * mean)
            lo, hi = float(sum(c[:take])), float(sum(c[size - take :]))
            if size > 1:
                var = float(
                    take * sum((x - mean) ** 2 for x in c) / size * (size - take) / (size - 1)
                )
        start += len(g)
    scale = k * q.nsub
    return _One(
        oblivious, (fixed + e) / scale, (fixed + lo) / scale, (fixed + hi) / scale, var / scale**2
    )


def _st_recall(
    m: IntentAware, groups: list[list[Pattern]], q: _Query, oblivious: float, limit: int
) -> _One | None:
    n = sum(len(g) for g in groups)
    k = m.rank_cutoff if m.rank_cutoff is not None else n
    A = q.nsub
    if A == 0:
        return _One(oblivious, 0.0, 0.0, 0.0, 0.0)
    covered: set[int] = set()
    start = 0
    straddle: list[Pattern] = []
    take = 0
    for g in groups:
        if start + len(g) <= k:
            covered.update(s for p in g for s in p)
        elif start < k:
            straddle, take = list(g), k - start
        start += len(g)
    if not straddle:
        v = len(covered) / A
        return _One(oblivious, v, v, v, 0.0)
    from fractions import Fraction

    size = len(straddle)
    open_ = sorted({s for p in straddle for s in p} - covered)
    total = math.comb(size, take)
    without = {s: sum(1 for p in straddle if s not in p) for s in open_}
    # exact rationals: a variance that is 0 comes out 0
    p_cov = {s: 1 - Fraction(math.comb(without[s], take), total) for s in open_}
    e = len(covered) + sum(p_cov.values(), Fraction(0))
    var = sum((p * (1 - p) for p in p_cov.values()), Fraction(0))
    for a, b in itertools.combinations(open_, 2):
        neither = sum(1 for p in straddle if a not in p and b not in p)
        both_open = Fraction(math.comb(neither, take), total)
        cov = both_open - (1 - p_cov[a]) * (1 - p_cov[b])
        var += 2 * cov
    # min / max: which multiset of patterns takes the `take` places
    counts = sorted(Counter(straddle).items())
    if math.prod(c + 1 for _, c in counts) > limit:
        return None
    lo, hi = len(open_), 0
    opened = frozenset(open_)

    def rec(i: int, left: int, got: frozenset[int]) -> None:
        nonlocal lo, hi
        if i == len(counts):
            if left == 0:
                lo, hi = min(lo, len(got)), max(hi, len(got))
            return
        pattern, c = counts[i]
        rest = sum(cc for _, cc in counts[i + 1 :])
        for x in range(max(0, left - rest), min(c, left) + 1):
            rec(i + 1, left - x, got | (frozenset(pattern) & opened) if x else got)

    rec(0, take, frozenset())
    base = len(covered)
    if lo == hi:
        return _One(oblivious, (base + lo) / A, (base + lo) / A, (base + hi) / A, 0.0)
    return _One(oblivious, float(e / A), (base + lo) / A, (base + hi) / A, float(var / A**2))


def _query_stats(
    m: IntentAware,
    groups: list[list[Pattern]],
    q: _Query,
    *,
    limit: int,
    samples: int,
    seed: int,
    qid: str,
) -> _One:
    oblivious = diversity_value(m, [p for g in groups for p in g], q)
    if m.family == "P_IA":
        return _p_ia(m, groups, q, oblivious)
    if m.family == "StRecall":
        one = _st_recall(m, groups, q, oblivious, limit)
        if one is not None:
            return one
    if q.nsub == 0:
        return _One(oblivious, 0.0, 0.0, 0.0, 0.0)
    if m.rank_cutoff is None and m.cutoff_allowed:
        m = replace(m, cutoff=sum(len(g) for g in groups))  # the same value, now with k fixed
    use = _depth_groups(groups, m.rank_cutoff)
    while use and not any(use[-1]):
        use = use[:-1]  # documents below the last relevant one add nothing (k is fixed)
    kinds = sorted({p for g in use for p in g})
    code = {p: i for i, p in enumerate(kinds)}
    J = np.zeros((len(kinds), q.nsub))
    for p, i in code.items():
        J[i, list(p)] = 1.0
    coded = [np.array([code[p] for p in g], dtype=np.int64) for g in use]
    if _orderings(use) <= limit:
        rows = [
            [code[p] for part in combo for p in part]
            for combo in itertools.product(*(_multiset_perms(g) for g in use))
        ]
        arr = _batch_values(m, J, np.array(rows, dtype=np.int64).reshape(len(rows), -1), q)
        mean, var = _moments(arr.tolist())
        lo, hi = float(arr.min()), float(arr.max())
        if lo == hi:
            mean, var = lo, 0.0
        return _One(oblivious, mean, lo, hi, var)
    rng = np.random.default_rng([seed, zlib.crc32(qid.encode("utf-8"))])
    ids = np.concatenate(
        [g[np.argsort(rng.random((samples, len(g))), axis=1)] for g in coded], axis=1
    )
    arr = _batch_values(m, J, ids, q)
    var = float(arr.var(ddof=1))
    return _One(
        oblivious,
        float(arr.mean()),
        float(arr.min()),
        float(arr.max()),
        var,
        True,
        math.sqrt(var / samples),
    )


#: largest (orderings x ranks x subtopics) array evaluated at once
_CHUNK = 1 << 21


def _batch_values(m: IntentAware, J: np.ndarray, ids: np.ndarray, q: _Query) -> np.ndarray:
    """The value of ``m`` for every ranking (row) of ``ids``, codes of the rows of ``J`` (pattern x subtopic)."""
    B, n = ids.shape
    A = q.nsub
    step = max(1, _CHUNK // max(1, n * A))
    if B > step:
        return np.concatenate(
            [_batch_values(m, J, ids[i : i + step], q) for i in range(0, B, step)]
        )
    Jb = J[ids]  # (B, n, A)
    f = m.family
    k = m.rank_cutoff if m.rank_cutoff is not None else n
    if k == 0:
        return np.zeros(B)
    if f == "P_IA":
        return Jb[:, :k].sum(axis=(1, 2)) / (k * A)
    if f == "StRecall":
        return Jb[:, :k].any(axis=1).sum(axis=1) / A
    if f == "AP_IA":
        hits = np.cumsum(Jb, axis=1)
        per = (Jb * hits / np.arange(1, n + 1)[None, :, None]).sum(axis=1)  # (B, A)
        nrel = np.asarray(q.nrel, dtype=np.float64)
        return np.where(nrel > 0, per / np.where(nrel > 0, nrel, 1.0), 0.0).sum(axis=1) / A
    alpha = _ERR_ALPHA if f.endswith("ERR_IA") else m.alpha
    before = (np.cumsum(Jb, axis=1) - Jb).astype(np.int64)
    gain = (Jb * ((1.0 - alpha) ** np.arange(n + 1))[before]).sum(axis=2)  # (B, n)
    if f in ("NRBP", "nNRBP"):
        run = gain @ (m.beta ** np.arange(n))
        if f == "NRBP":
            return run * (1 - (1 - m.alpha) * m.beta) / A
        ideal = _rbp(_gains(q.ideal, A, m.alpha), m.beta)
    else:
        ranks = np.arange(1, min(k, n) + 1, dtype=np.float64)
        disc = 1.0 / (np.log2(ranks + 1) if f.startswith("alpha") else ranks)
        run = gain[:, :k] @ disc
        cum = _dcg if f.startswith("alpha") else _err
        if f in ("alpha_DCG", "ERR_IA"):
            return run / cum([A * (1.0 - alpha) ** i for i in range(k)], k)
        ideal = cum(_gains(q.ideal[:k], A, alpha), k)
    return np.where(run > 0, run / (ideal if ideal > 0 else 1.0), 0.0)


# ------------------------------------------------------------------ one query's layout


def _layout(
    judged: Mapping[str, Mapping[str, float]],
    ranked: Sequence[Sequence[str]],
    m: IntentAware,
    rel: float,
) -> tuple[list[list[Pattern]], _Query]:
    """The subtopic patterns of one query's tie groups (``ranked``: docids in policy order, group
    by group) and what the measure needs of the query (``A``, relevant counts, the ideal ranking)."""
    subs = sorted({s for grades in judged.values() for s, g in grades.items() if g >= rel})
    index = {s: i for i, s in enumerate(subs)}

    def pattern(doc: str) -> Pattern:
        grades = judged.get(doc)
        return tuple(sorted(index[s] for s, g in grades.items() if g >= rel)) if grades else ()

    nrel = [0] * len(subs)
    for doc in judged:
        for s in pattern(doc):
            nrel[s] += 1
    # the greedy ideal ranking over the judged documents (ties: larger docid first)
    alpha = _ERR_ALPHA if m.family.endswith("ERR_IA") else m.alpha
    weight = [1.0] * len(subs)
    pats = {d: pattern(d) for d in judged}
    # documents of no gain add nothing to the ideal: left out
    left = (
        sorted((d for d in judged if pats[d]), reverse=True)
        if m.family in ("alpha_nDCG", "nERR_IA", "nNRBP")
        else []
    )
    ideal: list[Pattern] = []
    while left:
        best = max(range(len(left)), key=lambda i: (sum(weight[s] for s in pats[left[i]]), -i))
        if not sum(weight[s] for s in pats[left[best]]):
            break
        d = left.pop(best)
        ideal.append(pats[d])
        for s in pats[d]:
            weight[s] *= 1.0 - alpha
    groups = [
        kept
        for kept in ([pattern(d) for d in g if not m.judged_only or d in judged] for g in ranked)
        if kept
    ]
    return groups, _Query(len(subs), tuple(nrel), tuple(ideal))
