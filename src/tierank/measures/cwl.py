r"""ir_measures' C/W/L families (its ``cwl_eval`` provider): SDCG, INSQ, INST, NERR8, NERR9, NERR10, NERR11.

Definitions follow ir_measures 0.4 (``ir_measures/measures/{sdcg,inst,nerr}.py`` and
``providers/cwl_eval.py``) and the cwl_eval library it calls (Azzopardi, Thomas & Moffat, SIGIR
2019; ``cwl/ruler/measures/cwl_*.py``, ``cwl_metrics.py``, ``ranking.py``):

* gains: a grade ``g`` (negative and unjudged: 0) is clipped to ``[min_rel, max_rel]`` and scaled
  to ``(g - min_rel) / (max_rel - min_rel)`` in [0, 1]; ``max_rel`` is required, as in ir_measures;
* the ranking is read to depth `MAX_N` = 1000 (cwl_eval's ``max_n``), padded with gain 0;
* a C/W/L measure gives a continuation probability `c_i` per rank (0-based `i`); with
  `C_0 = 1`, `C_i = \prod_{j<i} c_j`, its value is the expected rate of gain
  `\sum_i C_i g_i / \sum_i C_i` over the `\min(k, 1000)` ranks read.

The families:

* ``SDCG@k`` (scaled DCG; cwl's ``NDCGCWLMetric``): `c_i = \log_2(i+2)/\log_2(i+3)` for
  `i+1 < k`, so `C_i = 1/\log_2(i+2)`: DCG@k over the DCG of k fully relevant documents;
* ``INSQ(T)`` (Moffat, Scholer & Thomas, ADCS 2012): `c_i = ((i+2T)/(i+1+2T))^2`;
* ``INST(T)`` (Moffat, Bailey, Scholer & Thomas, ADCS 2015): `c_i = ((i+T+T_i)/(i+1+T+T_i))^2`
  with `T_i = T - \sum_{j \le i} g_j`;
* ``NERR8@k``, ``NERR9@k``, ``NERR10(p)``, ``NERR11(T)`` (Azzopardi, Mackenzie & Moffat, ICTIR 2021,
  eqs. 8-11): `c_i = (1-g_i)` times 1 (for `i+1 < k`), `(i+1)/(i+2)` (for
  `i+1 < k`), `p`, `((i+2T)/(i+1+2T))^2`.

Tie orderings.  SDCG and INSQ do not read the gains in `c`, so they are weighted sums over
ranks (`tierank.measures.linear.Linear`): every statistic exact.  The NERR family is
`N/D` with `C_i = \delta_i \prod_{j<i}(1-g_j)` and `\delta` non-increasing in
rank.  Swapping adjacent documents at ranks `t, t+1` with gains `x > y` so that
`x` comes first changes `N` by `P_t (x-y)(\delta_t-\delta_{t+1}) \ge 0` and
`D` by `\delta_{t+1} P_t (y-x) \le 0` (nothing else moves), so `N/D` cannot fall:
each tie group sorted by gain descending / ascending gives the exact max / min.  Their expectation
and variance (and INST's, whose `c` reads the running total) have no known closed form: they
are estimated from ``prep.samples`` uniformly random tie orderings and labelled sampled
(``Stats(method="sampled")``, as IPrec and GMAP).  INST's min / max are the smallest / largest value
seen among the sorted arrangements, the policy's and the drawn orderings (attained values; no
extremal arrangement is proven for it).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..errors import TierankInputError
from ..ties import Prepared, Which
from .base import FamilyNames, Measure, Param, Stats, register
from .linear import Linear
from .sampling import query_keys

__all__ = [
    "MAX_N",
    "orderings_of",
    "SDCG",
    "INSQ",
    "INST",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "scaled_gains",
]

#: ranks cwl_eval reads (its ``max_n``, which ir_measures' provider keeps)
MAX_N = 1000
#: bound on the entries of one matrix of sampled rankings (orderings x ranks)
_CHUNK_ENTRIES = 1 << 21

#: the references every C/W/L family cites (the framework and cwl_eval)
_CWL_EVAL = "Moffat, A., Bailey, P., Scholer, F. and Thomas, P. (2017). Incorporating user expectations and behavior into the measurement of search effectiveness. ACM TOIS 35(3); Azzopardi, L., Thomas, P. and Moffat, A. (2019). cwl_eval: An evaluation tool for information retrieval. SIGIR 2019."

MIN_REL = Param(
    "min_rel",
    int,
    0,
    "grade scaled to gain 0 (lower grades are clipped to it)",
    low=-(2**53),
    high=2**53,
)
MAX_REL = Param(
    "max_rel",
    int,
    None,
    "grade scaled to gain 1 (required; higher grades are clipped to it)",
    low=-(2**53),
    high=2**53,
)
T_PARAM = Param("T", float, 1.0, "total desired gain (normalized)", low=0.0, high=2**53, open="low")


def scaled_gains(grade: Any, min_rel: int, max_rel: int, xp: Any = np) -> Any:
    """cwl_eval's gains as ir_measures feeds them: unjudged (NaN) and negative grades 0, then
    clipped to ``[min_rel, max_rel]`` and scaled to [0, 1] (a floating array of the namespace
    ``xp``: the one formula of runs and tensors).

    >>> scaled_gains(np.array([np.nan, -1.0, 0.0, 1.0, 2.0, 5.0]), 0, 2).tolist()
    [0.0, 0.0, 0.0, 0.5, 1.0, 1.0]
    """
    unjudged = xp.isnan(grade)
    zero = xp.zeros_like(grade)
    g = xp.where(unjudged, zero, xp.clip(grade, 0.0, None))
    g = xp.clip(g, float(min_rel), float(max_rel))
    g = (g - min_rel) / float(max_rel - min_rel)
    # an unjudged document has gain 0 whatever min_rel (cwl_eval's worst case), not the clipped value
    return xp.where(unjudged, zero, g)


class _Cwl:
    """The shared parameters of the cwl_eval families (mixin): ``min_rel`` and the required ``max_rel``."""

    def validate(self, text: str) -> None:
        lo, hi = self.param("min_rel"), self.param("max_rel")  # type: ignore[attr-defined]
        if hi is None:
            fam = type(self).family  # type: ignore[attr-defined]
            raise TierankInputError(
                f"measure {text!r}: {fam} needs max_rel (the largest grade), "
                f"e.g. {fam}(max_rel=3), as in ir_measures"
            )
        if not lo < hi:
            raise TierankInputError(
                f"measure {text!r}: min_rel must be less than max_rel, got {lo} and {hi}"
            )

    def gains(self, prep: Prepared) -> np.ndarray:
        return scaled_gains(prep.grade, self.param("min_rel"), self.param("max_rel"))  # type: ignore[attr-defined]


class _CwlLinear(_Cwl, Linear):
    """A C/W/L family whose continuation does not read the gains: a weighted sum over ranks."""

    bounds_refusal = "an unjudged document's gain is unknown"
    kind = "gain"

    def depth(self, nrel):
        return min(self.k, float(MAX_N))

    def cutoff_per_query(self, prep: Prepared):
        return min(self.k, float(MAX_N))

    def values(self, prep: Prepared):
        return self.gains(prep)

    #: on tensors: the labels' scaled gains, the same weights and divisor
    tensor_kernel = "linear"

    def rank_cutoff(self, nrel: Any) -> Any:
        return min(self.k, float(MAX_N))

    def label_values(self, xp: Any, label: Any, valid: Any, rel: int) -> Any:
        g = scaled_gains(label, self.param("min_rel"), self.param("max_rel"), xp)
        return xp.where(valid, g, xp.zeros_like(g))

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        """The sum of `C_i` over the ranks read (a number)."""
        ranks = np.arange(int(min(self.k, MAX_N)), dtype=np.float64)
        return float(self.position_weights(np, ranks).sum())


@register
class SDCG(_CwlLinear):
    """Scaled DCG at k (ir_measures / cwl_eval): DCG@k of the scaled gains over the DCG of k fully
    relevant documents, sum_{i<=k} g_i / log2(i+1) / sum_{i<=k} 1 / log2(i+1)."""

    family = "SDCG"
    pretty = "scaled DCG"
    definition = "DCG at k scaled by the DCG of k documents of the top grade (C/W/L framework)"
    citation = _CWL_EVAL
    example = "SDCG(max_rel=3)@10"  # max_rel is required
    names = FamilyNames(ir_measures="SDCG")
    description = (
        "scaled DCG at k (cwl_eval): DCG of gains (grade - min_rel) / (max_rel - min_rel) over "
        "the DCG of k fully relevant documents"
    )
    schema = (Param("dcg", str, "log2", "DCG formulation", choices=("log2",)), MIN_REL, MAX_REL)
    cutoff_required = True

    def position_weights(self, xp: Any, pos: Any) -> Any:
        return 1.0 / xp.log2(pos + 2.0)


@register
class INSQ(_CwlLinear):
    """INSQ (Moffat, Scholer & Thomas 2012): C/W/L with continuation ((i+2T-1)/(i+2T))^2 at rank i."""

    family = "INSQ"
    pretty = "INSQ"
    definition = "C/W/L measure whose user expects T relevant documents (Moffat et al. 2012's INSQ)"
    citation = (
        "Moffat, A., Scholer, F. and Thomas, P. (2012). Models and metrics: IR evaluation as a user process. ADCS 2012; "
        + _CWL_EVAL
    )
    example = "INSQ(max_rel=3)"  # max_rel is required
    names = FamilyNames(ir_measures="INSQ")
    description = (
        "INSQ (cwl_eval): expected rate of gain, continuation ((i+2T-1)/(i+2T))^2 at rank i, "
        "to rank 1000"
    )
    schema = (T_PARAM, MIN_REL, MAX_REL)
    cutoff_allowed = False

    def position_weights(self, xp: Any, pos: Any) -> Any:
        t2 = 2.0 * self.param("T")
        return (t2 / (pos + t2)) ** 2


# -- the families whose continuation reads the gains: sampled expectation ---------------------------


def orderings_of(prep: Prepared, queries: np.ndarray, rows: np.ndarray, a: np.ndarray, width: int):
    """For each query of ``queries``: ``(q, its rows among rows, chunks)``, where the chunks (an
    iterator) are matrices (orderings x ``width``) of the values ``a`` of the query's rows under
    ``prep.samples`` uniformly random orderings of every tie group, padded with 0 past the list and
    cut at ``width`` (``rows`` must hold whole tie groups).

    The orderings of a query depend on ``prep.seed`` and the query id only
    ([`tierank.measures.sampling.query_keys`][tierank.measures.sampling.query_keys]): a numpy generator seeded with that key draws one
    uniform key per row, and rows are sorted by (tie group, key)."""
    S = int(prep.samples)
    keys = query_keys(prep) if len(queries) else None
    for q in queries:
        sel = rows[prep.qi[rows] == q]
        vals, local = a[sel], (prep.gid[sel] - prep.gid[sel[0]]).astype(np.float64)
        rng = np.random.default_rng(int(keys[q]))  # type: ignore[index]
        per = max(1, _CHUNK_ENTRIES // max(width, len(sel), 1))

        def chunks(sel=sel, vals=vals, local=local, rng=rng, per=per):
            for s0 in range(0, S, per):
                s = min(per, S - s0)
                perm = np.argsort(local[None, :] + rng.random((s, len(sel))), axis=1)
                A = np.zeros((s, max(width, int(prep.pos[sel].max()) + 1)))
                A[:, prep.pos[sel]] = vals[perm]
                yield A[:, :width]

        yield q, sel, chunks()


def _rate(C: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Expected rate of gain of each row: sum C g / sum C (C_0 = 1, so the denominator is >= 1)."""
    return (C * G).sum(axis=1) / C.sum(axis=1)


def _prefix(c: np.ndarray) -> np.ndarray:
    """C_i = prod_{j<i} c_j per row."""
    C = np.ones_like(c)
    if c.shape[1] > 1:
        C[:, 1:] = np.cumprod(c[:, :-1], axis=1)
    return C


class _CwlSampled(_Cwl, Measure):
    """A C/W/L family whose continuation reads the gains (module docstring)."""

    bounds_refusal = "an unjudged document's gain is unknown"
    sorted_extremes: ClassVar[bool] = True  # the sorted arrangements are the exact min / max

    def tensor_refusal(self) -> str | None:
        return (
            "its continuation reads the gains: its expectation and variance over tie orderings "
            "have no known closed form (tierank.evaluate estimates them by sampling)"
        )

    @property
    def width(self) -> int:
        """Ranks read: min(k, 1000)."""
        return int(min(self.k, float(MAX_N)))

    def depth(self, nrel):
        return float(self.width)

    def continuation(self, G: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """c_i for every row of the (rankings x width) gain matrix ``G``."""
        raise NotImplementedError

    def rates(self, G: np.ndarray) -> np.ndarray:
        return _rate(_prefix(self.continuation(G)), G)

    def _matrix(self, prep: Prepared, g: np.ndarray, rows: np.ndarray) -> np.ndarray:
        G = np.zeros((prep.nq, self.width))
        G[prep.qi[rows], prep.pos[rows]] = g[rows]
        return G

    def stats(self, prep: Prepared) -> Stats:
        W = self.width
        g = self.gains(prep)
        rows = np.flatnonzero(prep.pos < min(prep.cut(float(W)), W))

        def value(which: Which) -> np.ndarray:
            return self.rates(self._matrix(prep, prep.sorted_in_groups(g, which), rows))

        obl, lo, hi = value("policy"), value("pessimistic"), value("optimistic")
        if not self.sorted_extremes:
            lo, hi = np.minimum(np.minimum(lo, hi), obl), np.maximum(np.maximum(lo, hi), obl)
        expected, var, se = obl.copy(), np.zeros(prep.nq), np.zeros(prep.nq)
        # queries with a tie group (inside the ranks read) whose gains differ
        # (every row of a group reaching into the ranks read: a group across the cutoff is drawn whole)
        reach = (
            np.flatnonzero(prep.gpos0[prep.gid] < min(prep.cut(float(W)), W)) if prep.n else rows
        )
        gr = prep.gid[reach]
        ng = len(prep.gsize)
        gmax = np.full(ng, -np.inf)
        gmin = np.full(ng, np.inf)
        np.maximum.at(gmax, gr, g[reach])
        np.minimum.at(gmin, gr, g[reach])
        mixed = np.flatnonzero(gmax > gmin)
        todo = np.unique(prep.gq[mixed]) if len(mixed) else np.zeros(0, np.int64)
        if self.sorted_extremes:  # exact extremes: a query they pin needs no draws
            todo = todo[lo[todo] != hi[todo]]
        S = int(prep.samples)
        read = int(
            min(prep.cut(float(W)), W)
        )  # trec_eval -M: ranks below the depth limit have gain 0

        def limited(A: np.ndarray) -> np.ndarray:
            A[:, read:] = 0.0
            return A

        for q, _sel, chunks in orderings_of(prep, todo, reach, g, W):
            v = np.concatenate([self.rates(limited(A)) for A in chunks])
            expected[q] = v.mean()
            var[q] = v.var(ddof=1) if S > 1 else 0.0
            se[q] = np.sqrt(var[q] / S)
            if not self.sorted_extremes:
                lo[q], hi[q] = min(lo[q], v.min()), max(hi[q], v.max())
        return Stats(
            obl, expected, lo, hi, var, method="sampled", samples=S, seed=int(prep.seed), se=se
        )


class _NERR(_CwlSampled):
    """NERR, equation ``eq`` of Azzopardi, Mackenzie & Moffat (2021): c_i = delta-factor(i) (1 - g_i).
    Its name, ir_measures name, example and citation follow from ``eq``."""

    eq: ClassVar[int] = 0
    citation = "Azzopardi, L., Mackenzie, J. and Moffat, A. (2021). ERR is not C/W/L: Exploring the relationship between expected reciprocal rank and other metrics. ICTIR 2021."
    schema: ClassVar[tuple[Param, ...]] = (MIN_REL, MAX_REL)
    example: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.family = cls.pretty = f"NERR{cls.eq}"
        cls.names = FamilyNames(ir_measures=cls.family)
        cls.example = (
            f"{cls.family}(max_rel=3)" + "@10" * cls.cutoff_required
        )  # max_rel is required

    def discount(self, i: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def continuation(self, G):
        i = np.arange(G.shape[1], dtype=np.float64)
        return self.discount(i)[None, :] * (1.0 - G)


@register
class NERR8(_NERR):
    """NERR, eq. 8: c_i = 1 - g_i, truncated at k."""

    eq = 8
    cutoff_required = True
    definition = "normalised ERR, C/W/L form 8 of Azzopardi et al. (2021)"
    description = "not (but nearly) ERR, eq. 8 (cwl_eval): continuation 1 - g, truncated at k; expectation sampled"

    def discount(self, i):
        return np.ones_like(i)


@register
class NERR9(_NERR):
    """NERR, eq. 9: c_i = (rank / (rank + 1)) (1 - g_i), truncated at k."""

    eq = 9
    cutoff_required = True
    definition = "normalised ERR, C/W/L form 9 of Azzopardi et al. (2021)"
    description = "not (but nearly) ERR, eq. 9 (cwl_eval): continuation rank/(rank+1) (1 - g), truncated at k; expectation sampled"

    def discount(self, i):
        return (i + 1.0) / (i + 2.0)


@register
class NERR10(_NERR):
    """NERR, eq. 10: c_i = p (1 - g_i)."""

    eq = 10
    cutoff_allowed = False
    definition = "normalised ERR, C/W/L form 10 of Azzopardi et al. (2021), with persistence p"
    description = "not (but nearly) ERR, eq. 10 (cwl_eval): continuation p (1 - g), to rank 1000; expectation sampled"
    schema = (Param("p", float, 0.9, "persistence", low=0.0, high=1.0), MIN_REL, MAX_REL)

    def discount(self, i):
        return np.full_like(i, self.param("p"))


@register
class NERR11(_NERR):
    """NERR, eq. 11: c_i = ((rank + 2T - 1) / (rank + 2T))^2 (1 - g_i)."""

    eq = 11
    cutoff_allowed = False
    definition = "normalised ERR, C/W/L form 11 of Azzopardi et al. (2021), with goal T"
    description = "not (but nearly) ERR, eq. 11 (cwl_eval): continuation ((i+2T-1)/(i+2T))^2 (1 - g), to rank 1000; expectation sampled"
    schema = (T_PARAM, MIN_REL, MAX_REL)

    def discount(self, i):
        t2 = 2.0 * self.param("T")
        return ((i + t2) / (i + 1.0 + t2)) ** 2


@register
class INST(_CwlSampled):
    """INST (Moffat, Bailey, Scholer & Thomas 2015): c_i = ((i+T+T_i-1)/(i+T+T_i))^2 at rank i,
    T_i = T - (gain up to and including rank i)."""

    family = "INST"
    pretty = "INST"
    definition = "adaptive C/W/L measure whose user stops after finding T relevant documents"
    citation = (
        "Moffat, A., Bailey, P., Scholer, F. and Thomas, P. (2015). INST: An adaptive metric for information retrieval evaluation. ADCS 2015; "
        + _CWL_EVAL
    )
    example = "INST(max_rel=3)"  # max_rel is required
    names = FamilyNames(ir_measures="INST")
    description = (
        "INST (cwl_eval): expected rate of gain, continuation ((i+T+T_i-1)/(i+T+T_i))^2, "
        "T_i = T - gain so far, to rank 1000; expectation sampled"
    )
    schema = (T_PARAM, MIN_REL, MAX_REL)
    cutoff_allowed = False
    sorted_extremes = False
    extremes_exact = False  # min / max: attained values seen, not proven extremes

    def continuation(self, G):
        T = self.param("T")
        i = np.arange(G.shape[1], dtype=np.float64)[None, :]
        Ti = T - np.cumsum(G, axis=1)
        return ((i + T + Ti) / (i + 1.0 + T + Ti)) ** 2
