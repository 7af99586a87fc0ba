r"""Measures that are weighted sums over ranked positions: P, R, R_cap, F1, Hits, Judged, Rprec, nDCG, RBP.

Each is `M = \sum_i w_i\, a_{\pi(i)} / Z` with position weights `w_i`
(zero past the cutoff), a per-query normaliser `Z` and document values `a`
(binary relevance or graded gain).  Inside a tie group `G` of size
`m` the documents are uniformly permuted over the group's positions, so

* expectation (McSherry & Najork 2008; Yang et al. 2026, App. C, eqs. 10-17):
  `E[M] = \sum_G \bar a_G \sum_{i \in G} w_i`;
* variance, exact, groups being independent (the variance of a linear
  permutation statistic, Hoeffding 1951):
  `Var[M] = \sum_{G, m>1} \frac{1}{m-1}\sum_{d\in G}(a_d-\bar a_G)^2 \sum_{i\in G}(w_i-\bar w_G)^2`,
  both sums of squared deviations computed about the group's own values
  ([`tierank.measures.kernels`][tierank.measures.kernels]), so a group of equal values or equal weights
  adds exactly 0;
* max / min: the optimistic / pessimistic arrangement (weights are non-increasing
  in rank, so the rearrangement inequality makes them extremal).

A family gives position weights [`Linear.weights`][tierank.measures.linear.Linear.weights] and, for a ratio, the per-query
[`Linear.denominator`][tierank.measures.linear.Linear.denominator] `Z`: sums are divided once at the end, so ratios of counts
(P, R, F1, Rprec, Judged) are one division of exact integer counts.  The families of this module
write both once, over any array namespace ([`Linear.position_weights`][tierank.measures.linear.Linear.position_weights],
[`Linear.normalizer`][tierank.measures.linear.Linear.normalizer]): the run layout here and the score tensors of
`tierank.tensor` call the same formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import TierankInputError
from ..ties import DocKind, Prepared, Which
from .base import FamilyNames, Measure, Param, Stats, register
from .kernels import (
    centered,
    group_moments,
    ratio,
    segment_firsts,
    select_segments,
)
from .prefixes import Prefixes, row_counts
from .trec_forms import GainMap, Persistence

REL = Param(
    "rel",
    int,
    None,
    "minimum grade counted relevant (default: the evaluation's rel, 1)",
    low=-(2**53),
    high=2**53,
)


def without_moments(prep: Prepared, value: Callable[[Which], np.ndarray]) -> Stats:
    """[`Stats`][tierank.measures.base.Stats] when ``prep`` asks for no moments: ``value("policy")``,
    and ``value("pessimistic")`` / ``value("optimistic")`` as min / max when it asks for the
    extremes (NaN otherwise); expected and var NaN."""
    nan = np.full(prep.nq, np.nan)
    if not prep.extremes:  # the oblivious value alone
        return Stats(value("policy"), nan, nan.copy(), nan.copy(), nan.copy())
    return Stats(value("policy"), nan, value("pessimistic"), value("optimistic"), nan.copy())


def without_moments_batch(
    prep: Prepared, value: Callable[[Which], Sequence[np.ndarray]]
) -> list[Stats]:
    """`without_moments` for several measures at once: ``value(which)`` gives one array per measure."""
    nan = np.full(prep.nq, np.nan)
    if not prep.extremes:  # the oblivious value alone
        return [Stats(o, nan, nan.copy(), nan.copy(), nan.copy()) for o in value("policy")]
    return [
        Stats(o, nan.copy(), lo, hi, nan.copy())
        for o, lo, hi in zip(value("policy"), value("pessimistic"), value("optimistic"))
    ]


class Linear(Measure):
    """Base of the positional-sum measures: ``sum_i weights_i * value_i / denominator``."""

    kind: ClassVar[DocKind] = "rel"  # document value: binary "rel", "judged", or graded "gain"
    #: the position weights, the document values and the `view` do not depend on the cutoff (it
    #: only truncates the sum): the family's measures that differ in their cutoff alone are
    #: computed in one pass (`batch_key`, `stats_batch`)
    batch_cutoffs: ClassVar[bool] = False
    #: every position weighs 1 (`weights` gives ones): the sums are counts of the document values
    #: (`kind` at `rel`), the same for every family that declares it, so their measures share one
    #: pass too (with `batch_cutoffs`)
    unit_weights: ClassVar[bool] = False

    def cutoff_per_query(self, prep: Prepared) -> np.ndarray | float:
        return self.k

    def position_weights(self, xp: Any, pos: Any) -> Any:
        """The weight of each 0-based rank ``pos`` (a floating array of the array namespace ``xp``;
        elementwise: a rank's weight depends on that rank alone), the cutoff not applied: the one
        formula of the family's weights, for runs and tensors
        (ones with `unit_weights`; every other family writes its own)."""
        if self.unit_weights:
            return xp.ones_like(pos)
        raise NotImplementedError  # pragma: no cover - abstract

    def normalizer(self, xp: Any, nrel: Any, retrieved: Any) -> Any:
        """The divisor ``Z`` from the per-query N+ at the family's ``rel`` and the number of
        retrieved documents (arrays of ``xp``): a number, an array, or None for none (the
        default).  The one formula of [`denominator`][tierank.measures.linear.Linear.denominator]."""
        return None

    def label_values(self, xp: Any, label: Any, valid: Any, rel: int) -> Any:
        """The document values on tensors from the labels (arrays of ``xp``; 0 where not
        ``valid``; ``rel`` the measure's relevance level) when the family reads its own (e.g. the
        unjudged candidates), else None (the default: the binary relevance at ``rel``, or
        ``valid`` for ``kind='judged'``)."""
        return None

    def rank_cutoff(self, nrel: Any) -> Any:
        """The cutoff in ranks given N+ per query (default: the measure's own ``k``)."""
        return self.k

    def weights(self, prep: Prepared, rows: np.ndarray) -> np.ndarray:
        """Weight of each position in ``rows`` (positions inside the cutoff): `position_weights`,
        computed once per rank and read for each row where the rows outnumber the ranks."""
        pos = prep.pos[rows]
        ranks = int(pos.max()) + 1 if len(pos) else 0
        if 4 * ranks < len(pos):
            return self.position_weights(np, np.arange(ranks, dtype=np.float64))[pos]
        return self.position_weights(np, pos.astype(np.float64))

    def denominator(self, prep: Prepared) -> np.ndarray | float | None:
        """Per-query divisor applied once to the weighted sums (0 or less: the value is 0);
        None for none: `normalizer` of ``prep``'s N+ and retrieved counts."""
        return self.normalizer(np, prep.nrel(self.rel), prep.qret)

    def values(self, prep: Prepared) -> np.ndarray | None:
        """Per-row document values (policy order) when the family computes its own (e.g. mapped
        gains); None (default): ``prep.doc_values(self.kind, self.rel)``."""
        return None

    def view(self, prep: Prepared):
        """The [`tierank.ties.Prepared`][tierank.ties.Prepared] the sums run over (default: ``prep`` itself; a
        condensed list for ``judged_only``)."""
        return prep

    def rows(self, prep: Prepared) -> np.ndarray:
        k = self.cutoff_per_query(prep)
        if isinstance(k, np.ndarray):
            kq = np.minimum(k, prep.max_depth)
            return np.flatnonzero(prep.pos < kq[prep.qi])
        kc = prep.cut(k)
        return np.flatnonzero(prep.pos < kc) if np.isfinite(kc) else np.arange(prep.n)

    def stats(self, prep: Prepared) -> Stats:
        prep = self.view(prep)
        rows = self.rows(prep)
        w = self.weights(prep, rows)
        qi = prep.qi[rows]
        den = self.denominator(prep)
        own = self.values(prep)

        def scale(x, power=1):
            return x if den is None else ratio(x, np.broadcast_to(den, x.shape) ** power)

        base = prep.doc_values(self.kind, self.rel) if own is None else own
        policy = np.bincount(qi, weights=w * base[rows], minlength=prep.nq)
        if not prep.moments and not prep.extremes:  # the oblivious value alone
            return without_moments(prep, lambda which: scale(policy))
        g = prep.gid[rows]
        m = prep.gsize_float
        # an extremal arrangement reorders only the tie groups whose values differ: it is summed
        # over the queries holding one (rows inside the cutoff), the others' sums are the policy's
        changed = np.zeros(prep.nq, dtype=bool)
        changed[qi[groups_differ(prep, base)[g]]] = True
        moved = np.flatnonzero(changed[qi])

        def value(which: Which) -> np.ndarray:
            if which == "policy":
                return scale(policy)
            a = (
                prep.arrangement(which, self.kind, self.rel)
                if own is None
                else arranged(prep, own, which)
            )[rows[moved]]
            sums = np.bincount(qi[moved], weights=w[moved] * a, minlength=prep.nq)
            return scale(np.where(changed, sums, policy))

        if not prep.moments:  # the oblivious value and the extremes only
            return without_moments(prep, value)
        s1, ss_a = (
            group_moments(prep, self.kind, self.rel) if own is None else value_moments(prep, own)
        )
        # only the groups holding rows inside the cutoff have weight: the others would add exact zeros
        # (rows are whole query prefixes, so ``g`` is sorted)
        if len(g) < prep.n:
            gfirst = segment_firsts(g)
            gu = g[gfirst]
            gl = np.repeat(np.arange(len(gu)), np.diff(np.append(gfirst, len(g))))
            m, s1, ss_a, gq = m[gu], s1[gu], ss_a[gu], prep.gq[gu]
        else:  # every row: every group
            gl, gq = g, prep.gq
        sw = np.bincount(gl, weights=w, minlength=len(m))
        # E: per group (sum of values) x (sum of weights) / m, exact counts stay exact
        expected = scale(np.bincount(gq, weights=s1 * sw / m, minlength=prep.nq))
        # Var: only groups whose values differ (ss_a > 0, so m > 1) can add to it
        idx, local, vg_ids = select_segments(gl, ss_a > 0)
        _, ss_w = centered(w[idx], local, len(vg_ids), m[vg_ids])
        vg = ss_a[vg_ids] * ss_w / (m[vg_ids] - 1.0)
        var = scale(np.bincount(gq[vg_ids], weights=vg, minlength=prep.nq), power=2)
        return Stats(value("policy"), expected, value("pessimistic"), value("optimistic"), var)

    def batch_key(self):
        """Measures of a family with `batch_cutoffs` that differ in their cutoff alone share one
        pass ([`stats_batch`][tierank.measures.linear.Linear.stats_batch]); with `unit_weights` too, every such family's measures reading
        the same document values do (P, R, RelP, Rprec, ... at any cutoffs: their sums are the
        same counts, divided by their own denominators).  A subclass with its own `stats`,
        `compute` or `stats_batch` is computed alone."""
        cls = type(self)
        if (
            not cls.batch_cutoffs
            or cls.stats is not Linear.stats
            or cls.compute is not Measure.compute
            or cls.stats_batch.__func__ is not Linear.stats_batch.__func__  # type: ignore[attr-defined]
        ):
            return None
        if cls.unit_weights and cls.values is Linear.values and cls.view is Linear.view:
            return ("unit weights", self.kind, self.rel)
        return (cls, self.params)

    @classmethod
    def stats_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """The `stats` of several cutoffs of one family in one pass ([`tierank.measures.prefixes`][tierank.measures.prefixes]):
        the per-query sums of `stats`, each read at its cutoff from cumulative sums over the rows
        up to the largest one (the same floats as `stats` computes for each alone)."""
        batch = [m for m in measures if isinstance(m, Linear)]
        if len(batch) != len(measures):
            raise TypeError("Linear.stats_batch computes Linear measures only")
        first = batch[0]
        prep = first.view(prep)
        px = Prefixes(prep, [row_counts(prep, m.cutoff_per_query(prep)) for m in batch])
        rows = px.rows
        own = first.values(prep)
        divisors = _divisors(prep, batch)

        def scale(xs, power=1):
            return _scaled(xs, divisors, power)

        def arrangement(which: Which) -> np.ndarray:
            return (
                prep.arrangement(which, first.kind, first.rel)
                if own is None
                else arranged(prep, own, which)
            )

        if first.unit_weights:  # (the sums are counts of the values: no product to take)
            policy = px.at_rows(arrangement("policy")[rows])
        else:
            policy = px.at_rows(first.weights(prep, rows) * arrangement("policy")[rows])
        if not prep.moments and not prep.extremes:  # the oblivious value alone
            nan = np.full(prep.nq, np.nan)
            return [Stats(o, nan, nan.copy(), nan.copy(), nan.copy()) for o in scale(policy)]
        w = first.weights(prep, rows)
        # the extremal arrangements move only the tie groups whose values differ: the other
        # queries' sums are the policy's
        differ = groups_differ(prep, prep.doc_values(first.kind, first.rel) if own is None else own)
        changed = px.changed(differ[px.groups])

        def value(which: Which) -> list[np.ndarray]:
            if which == "policy":
                return scale(policy)
            a = arrangement(which)
            return scale(px.at_rows_in(changed, lambda idx: w[idx] * a[rows[idx]], policy))

        if not prep.moments:  # the extremes only (the oblivious value alone returned above)
            return without_moments_batch(prep, value)
        s1, ss_a = (
            group_moments(prep, first.kind, first.rel) if own is None else value_moments(prep, own)
        )
        expected, var_sums = _prefix_moments(prep, px, w, s1, ss_a)
        var = scale(var_sums, power=2)
        return [
            Stats(*x)
            for x in zip(
                value("policy"),
                scale(expected),
                value("pessimistic"),
                value("optimistic"),
                var,
            )
        ]


def _divisors(prep: Prepared, batch: Sequence[Linear]) -> list[tuple[np.ndarray, ...] | None]:
    """Per measure, its divisor as `ratio` takes it (where > 0; else the value is 0), and squared:
    ``(ok, d, ok2, d2)``, or None for a measure without a denominator."""
    divisors: list[tuple[np.ndarray, ...] | None] = []
    for measure in batch:
        den = measure.denominator(prep)
        if den is None:
            divisors.append(None)
            continue
        d = np.broadcast_to(np.asarray(den, dtype=np.float64), (prep.nq,))
        ok = d > 0
        d2 = d**2
        divisors.append((ok, np.where(ok, d, 1.0), d2 > 0, np.where(d2 > 0, d2, 1.0)))
    return divisors


def _scaled(
    xs: Sequence[np.ndarray], divisors: Sequence[tuple[np.ndarray, ...] | None], power: int = 1
) -> list[np.ndarray]:
    """Each ``xs[i]`` divided by measure i's divisor to ``power`` (`ratio`, its division once per column)."""
    out = []
    for x, div in zip(xs, divisors):
        if div is not None:
            ok, d = div[2 * (power - 1)], div[2 * (power - 1) + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                x = np.where(ok, x / d, 0.0)
        out.append(x)
    return out


def _prefix_moments(
    prep: Prepared, px: Prefixes, w: np.ndarray, s1: np.ndarray, ss_a: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per measure of ``px``, the per-query sums (before division) of the expectation and the
    variance over tie orderings of ``sum_i w_i a_i``, from each tie group's value sum ``s1`` and
    sum of squared deviations ``ss_a``."""
    gu = px.groups
    m, s1, ss_a = prep.gsize_float[gu], s1[gu], ss_a[gu]
    # E: per group (sum of values) x (sum of its weights inside the cutoff) / m
    sw = np.bincount(px.gl, weights=w, minlength=len(m))

    def part_e(idx, seg, js):
        return s1[js] * np.bincount(seg, weights=w[idx], minlength=len(js)) / m[js]

    expected = px.at_groups(s1 * sw / m, np.ones(len(m), dtype=bool), part_e)
    # Var: the groups whose values differ, whole or cut by the cutoff
    vary = ss_a > 0
    idx, local, ids = select_segments(px.gl, vary & px.whole)
    _, ss_w = centered(w[idx], local, len(ids), m[ids])
    vg = np.zeros(len(m))
    vg[ids] = ss_a[ids] * ss_w / (m[ids] - 1.0)

    def part_v(idx, seg, js):
        ss_w = centered(w[idx], seg, len(js), m[js])[1]
        return ss_a[js] * ss_w / (m[js] - 1.0)

    return expected, px.at_groups(vg, vary, part_v)


def arranged(prep: Prepared, a: np.ndarray, which: Which) -> np.ndarray:
    """Per-row values ``a`` (policy order) under ``policy``, ``optimistic`` (each tie group's
    values sorted descending) or ``pessimistic`` (ascending): [`tierank.ties.Prepared.sorted_in_groups`][tierank.ties.Prepared.sorted_in_groups]."""
    return prep.sorted_in_groups(a, which)


def groups_differ(prep: Prepared, a: np.ndarray) -> np.ndarray:
    """Per tie group, whether its values ``a`` (per row, policy order) are not all equal (exactly):
    the groups an extremal arrangement reorders ([`tierank.ties.Prepared.sorted_in_groups`][tierank.ties.Prepared.sorted_in_groups])."""
    out = np.zeros(len(prep.gsize), dtype=bool)
    if prep.n > 1:
        d = (a[1:] != a[:-1]) & (prep.gid[1:] == prep.gid[:-1])
        out[prep.gid[1:][d]] = True
    return out


def value_moments(prep: Prepared, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tie group: the sum of the values ``a`` and their sum of squared deviations (two
    passes about each group's first value: exactly 0 for a group of equal values)."""
    m = prep.gsize_float
    s1 = np.bincount(prep.gid, weights=a, minlength=len(m))
    return s1, centered(a, prep.gid, len(m), m)[1] if prep.n else np.zeros(len(m))


def _filled_counts(
    prep: Prepared, k: float, rel, priority: tuple[str, str, str]
) -> tuple[np.ndarray, np.ndarray]:
    """Judged-relevant and unjudged documents in the top k per query when every tie group
    fills its ranks inside the cutoff in the given priority of classes ``rel``, ``unj``, ``non``."""
    m = prep.gsize
    r = (
        np.rint(prep.group_sum(prep.relevant(rel) & prep.judged)).astype(np.int64)
        if prep.n
        else m * 0
    )
    j = (
        np.rint(prep.group_sum((~prep.judged).astype(np.float64))).astype(np.int64)
        if prep.n
        else m * 0
    )
    avail = {"rel": r, "unj": j, "non": m - r - j}
    slots = np.clip(np.minimum(k, np.iinfo(np.int64).max // 4) - prep.gpos0, 0, m).astype(np.int64)
    taken = {}
    for cls in priority:
        taken[cls] = np.minimum(avail[cls], slots)
        slots = slots - taken[cls]
    h = np.bincount(prep.gq, weights=taken["rel"], minlength=prep.nq)
    u = np.bincount(prep.gq, weights=taken["unj"], minlength=prep.nq)
    return h, u


def _hits_ratio_bounds(
    prep: Prepared, k: float, rel, scale: float, offset: float
) -> tuple[np.ndarray, np.ndarray]:
    """Attained (lower, upper) per query of ``scale * h / (offset + N+)``, h the relevant documents in
    the top k (R: scale 1, offset 0; F1: scale 2, offset k), over tie orderings and every relevance of
    the unjudged documents, which join N+ when assumed relevant.  Upper: unjudged in the top k
    relevant, the others not, groups filling relevant > unjudged > non-relevant.  Lower: unjudged in
    the top k non-relevant, those below relevant (they only raise N+), groups filling non-relevant >
    unjudged > relevant.  Counts are exact integers in float64, so the order of the sums is immaterial."""
    n_plus, big_u = prep.nrel(rel), prep.qlen - prep.qjudged  # unjudged anywhere in the run
    h, u = _filled_counts(prep, k, rel, ("rel", "unj", "non"))
    upper = ratio(scale * (h + u), offset + (n_plus + u))
    h, u = _filled_counts(prep, k, rel, ("non", "unj", "rel"))
    return ratio(scale * h, offset + (n_plus + big_u - u)), upper


@register
class P(Linear):
    """Precision at k: relevant documents in the top k, divided by k (also when fewer are retrieved)."""

    family = "P"
    batch_cutoffs = True
    unit_weights = True
    pretty = "precision at k"
    definition = "fraction of the top k that is relevant"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.3."
    names = FamilyNames(
        trec_eval_cut="P", ranx="precision", mteb="precision", sentence_transformers="precision"
    )
    description = "precision at k: |relevant in top k| / k"
    schema = (REL,)
    cutoff_required = True
    tensor_kernel = "linear"

    def normalizer(self, xp, nrel, retrieved):
        return float(self.required_cutoff)


@register
class R(Linear):
    """Recall at k: relevant documents in the top k over all relevant documents N+."""

    family = "R"
    batch_cutoffs = True
    unit_weights = True
    pretty = "recall at k"
    definition = "fraction of the relevant documents that are in the top k"
    citation = "Manning, C. D., Raghavan, P. and Schütze, H. (2008). Introduction to Information Retrieval, ch. 8.3."
    names = FamilyNames(
        trec_eval_cut="recall", ranx="recall", mteb="recall", sentence_transformers="recall"
    )
    description = "recall at k: |relevant in top k| / N+ (0 when N+ = 0)"
    schema = (REL,)
    uses_n_plus = True
    tensor_kernel = "linear"

    def normalizer(self, xp, nrel, retrieved):
        return nrel

    def unjudged_bounds(self, prep: Prepared, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """R = h / N+ (`_hits_ratio_bounds`)."""
        return _hits_ratio_bounds(prep, prep.cut(self.k), self.rel, scale=1.0, offset=0.0)


@register
class F1(Linear):
    """F1 at k, harmonic mean of P@k and R@k: 2 |rel in top k| / (k + N+)."""

    family = "F1"
    batch_cutoffs = True
    pretty = "F1 at k"
    definition = "harmonic mean of precision and recall at k"
    citation = (
        "van Rijsbergen, C. J. (1979). Information Retrieval, 2nd ed. Butterworths (the F measure)."
    )
    names = FamilyNames(ir_measures=None, ranx="f1")
    description = "F1 at k: 2 |relevant in top k| / (k + N+)"
    schema = (REL,)
    cutoff_required = True

    uses_n_plus = True
    tensor_kernel = "linear"

    def position_weights(self, xp, pos):
        return xp.full_like(pos, 2.0)

    def normalizer(self, xp, nrel, retrieved):
        return self.required_cutoff + nrel

    def unjudged_bounds(self, prep: Prepared, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """F1 = 2h / (k + N+) (`_hits_ratio_bounds`)."""
        return _hits_ratio_bounds(
            prep,
            prep.cut(self.required_cutoff),
            self.rel,
            scale=2.0,
            offset=float(self.required_cutoff),
        )


@register
class Hits(Linear):
    """Number of relevant documents in the top k (a count, not a rate)."""

    family = "Hits"
    batch_cutoffs = True
    unit_weights = True
    citation = "ir_measures' Hits (MacAvaney, Macdonald and Ounis (2022). Streamlining evaluation with ir-measures. ECIR 2022)."
    pretty = "hits at k"
    definition = "number of relevant documents in the top k"
    names = FamilyNames(ir_measures=None, ranx="hits")
    description = "count of relevant documents in the top k"
    schema = (REL,)
    tensor_kernel = "linear"


@register
class Judged(Linear):
    """Share of the top k retrieved documents that have a judgment (any grade), as ir_measures."""

    family = "Judged"
    batch_cutoffs = True
    unit_weights = True
    pretty = "judged at k"
    definition = "fraction of the top k that is judged (judgment coverage)"
    citation = "Sakai, T. (2007). Alternatives to Bpref. SIGIR 2007."
    description = "judged documents in the top k / min(k, retrieved) (judgment coverage)"
    kind = "judged"
    cutoff_required = True
    tensor_kernel = "linear"  # on tensors every candidate has a label: judged

    def normalizer(self, xp, nrel, retrieved):
        return xp.minimum(xp.full_like(retrieved, self.required_cutoff), retrieved)


@register
class Rprec(Linear):
    """R-precision: precision at rank N+ (trec_eval Rprec)."""

    family = "Rprec"
    batch_cutoffs = True
    unit_weights = True
    pretty = "R-precision"
    definition = "precision at rank N+, the number of relevant documents"
    citation = "Buckley, C. and Voorhees, E. M. (2000). Evaluating evaluation measure stability. SIGIR 2000."
    names = FamilyNames(trec_eval="Rprec", ranx="r-precision")
    description = "precision at rank N+ (R-precision)"
    schema = (REL,)
    cutoff_allowed = False
    bounds_refusal = "its cutoff N+ moves with the relevance of unjudged documents"

    uses_n_plus = True
    tensor_kernel = "linear"

    def cutoff_per_query(self, prep: Prepared):
        return self.rank_cutoff(prep.nrel(self.rel))

    def rank_cutoff(self, nrel):
        return nrel

    def depth(self, nrel):
        return nrel(self.rel)

    def normalizer(self, xp, nrel, retrieved):
        return nrel


@register
class RBP(Linear):
    """Rank-biased precision (Moffat & Zobel 2008): (1-p) sum_i p^(i-1) a_i.

    ``gain='binary'`` (default): a_i = rel_i, relevance at ``rel``.  ``gain='trec_eval'``: trec_eval
    10's ``rbp`` (``m_rbp.c``), a_i = g_i / max(1, G_q) with g_i the document's grade (0 when
    unjudged or negative) and G_q the largest grade of the query's judgments: trec_eval takes the
    grades 0..G_q as gains and, when one lies outside [0, 1], rescales them by (g - min) / (max - min)
    (min = 0, the gain of grade 0; ``min`` and ``max`` start unset in C and are read as 0 by the
    released binary).  Equal on binary qrels; ``rel`` is not used (trec_eval's rbp ignores ``-l``).

    >>> from tierank.measures import parse_measure
    >>> str(parse_measure("RBP(p=0.9,gain='trec_eval')"))
    "RBP(p=0.9,gain='trec_eval')"
    """

    family = "RBP"
    batch_cutoffs = True
    pretty = "rank-biased precision"
    definition = (
        "(1 - p) sum over ranks i of p^(i-1) rel_i: the expected r"
        "ate of relevance for a user who goes on with probability p"
    )
    citation = (
        "Moffat, A. and Zobel, J. (2008). Rank-biased precision for measurement of retrieval "
        "effectiveness. ACM TOIS 27(1)."
    )
    names = FamilyNames(
        trec_eval="rbp",
        trec_eval_form=Persistence("rbp", fixed=(("gain", "trec_eval"),)),
        ranx="rbp",
    )
    description = (
        "rank-biased precision (1-p) sum_i p^(i-1) rel_i, binary relevance; gain='trec_eval': "
        "trec_eval's rbp, grades as gains over the query's top grade (trec_eval -m rbp)"
    )
    schema = (
        Param("p", float, 0.8, "persistence", always_shown=True, low=0.0, high=1.0, open="both"),
        REL,
        Param(
            "gain",
            str,
            "binary",
            "document value: 'binary' (grade >= rel) or 'trec_eval' (the grade "
            "over the query's top grade when that exceeds 1: trec_eval 10's rbp, m_rbp.c)",
            choices=("binary", "trec_eval"),
        ),
    )

    tensor_kernel = "linear"

    def tensor_reads_every_judgment(self) -> bool:
        return self.param("gain") == "trec_eval"  # the query's top judged grade

    def label_values(self, xp: Any, label: Any, valid: Any, rel: int) -> Any:
        """``gain='trec_eval'``: each label over max(1, the row's top label), as `values`; else None."""
        if self.param("gain") != "trec_eval":
            return None
        grade = xp.where(valid, xp.clip(label, 0.0, None), xp.zeros_like(label))
        top = xp.clip(xp.max(grade, axis=1, keepdims=True), 1.0, None)
        return grade / top

    @property
    def bounds_refusal(self) -> str | None:  # type: ignore[override]  # per instance: it depends on the gain
        if self.param("gain") == "trec_eval":
            return "an unjudged document's grade is unknown, and with it the query's rescaling of gains"
        return None

    def values(self, prep: Prepared):
        """trec_eval's gains (``gain='trec_eval'``): grade / max(1, the query's top grade), else None."""
        if self.param("gain") != "trec_eval":
            return None
        q, g = prep.judged_grades
        top = np.ones(prep.nq)
        keep = g >= 0
        np.maximum.at(
            top, np.asarray(q[keep], dtype=np.int64), np.asarray(g[keep], dtype=np.float64)
        )
        grade = np.where(np.isnan(prep.grade), 0.0, np.maximum(np.nan_to_num(prep.grade), 0.0))
        return grade / top[prep.qi]

    def position_weights(self, xp, pos):
        p = self.param("p")
        return (1.0 - p) * (p**pos)

    def tail(self, prep: Prepared) -> np.ndarray:
        """Weight of the ranks past the list (unretrieved) up to the cutoff: p^len - p^k."""
        p = self.param("p")
        beyond = p**self.cutoff if self.cutoff is not None else 0.0
        return np.maximum(np.power(p, prep.qret.astype(np.float64)) - beyond, 0.0)

    def unjudged_bounds(self, prep: Prepared, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """Upper bound also counts the unretrieved ranks as relevant (Moffat & Zobel)."""
        lower, upper = super().unjudged_bounds(prep, stats)
        return lower, upper + self.tail(prep)

    def residual(self, prep: Prepared) -> np.ndarray:
        """Moffat & Zobel's residual for the tie-oblivious ranking: weight of its unjudged
        ranks and of the unretrieved ranks past the list."""
        rows = self.rows(prep)
        unj = ~prep.arrangement("policy", "judged")[rows]
        w = self.weights(prep, rows)
        return np.bincount(prep.qi[rows], weights=w * unj, minlength=prep.nq) + self.tail(prep)


def dcg_weights(xp: Any, pos: Any) -> Any:
    """DCG's discount of each 0-based rank ``pos`` (an array of ``xp``): ``1 / log2(pos + 2)``."""
    return 1.0 / xp.log2(pos + 2.0)


def ideal_dcg_terms(xp: Any, ideal: Any, pos: Any, k: float) -> Any:
    """The terms of the ideal DCG at ``k``: the ideal gains ``ideal`` (each query's sorted descending)
    at their 0-based ideal ranks ``pos`` (arrays of ``xp``), discounted
    ([`dcg_weights`][tierank.measures.linear.dcg_weights]), 0 from rank ``k`` on.  The one formula
    of runs and tensors; each layout sorts the gains and sums the terms per query."""
    w = dcg_weights(xp, pos)
    return xp.where(pos < k, ideal * w, xp.zeros_like(w))


def idcg(prep: Prepared, k: float) -> np.ndarray:
    """Ideal DCG at k per query, from the ideal gains sorted descending
    ([`ideal_dcg_terms`][tierank.measures.linear.ideal_dcg_terms])."""

    def compute():
        gains, start = prep.ideal
        counts = np.diff(start)
        ipos = (np.arange(len(gains)) - np.repeat(start[:-1], counts)).astype(np.float64)
        iq = np.repeat(np.arange(prep.nq), counts)
        return iq, ipos, np.asarray(gains, dtype=np.float64)

    # the ideal gains and their ranks, shared by the cutoffs
    iq, ipos, gains = prep.cached(("idcg_gains",), compute)
    return np.bincount(iq, weights=ideal_dcg_terms(np, gains, ipos, k), minlength=prep.nq)


@register
class R_cap(Linear):
    """Capped recall (BEIR / MTEB): relevant documents in the top k over min(k, N+)."""

    family = "R_cap"
    batch_cutoffs = True
    unit_weights = True
    pretty = "capped recall at k"
    definition = "relevant documents in the top k / min(k, N+)"
    citation = (
        "Thakur, N. et al. (2021). BEIR: A heterogeneous benchmark for zero-shot evaluation of "
        "information retrieval models. NeurIPS 2021 Datasets and Benchmarks."
    )
    names = FamilyNames(ir_measures=None)
    description = "capped recall at k: |relevant in top k| / min(k, N+) (BEIR, MTEB)"
    schema = (REL,)
    cutoff_required = True
    bounds_refusal = "an unjudged document assumed relevant raises N+ and can lower it"
    uses_n_plus = True
    tensor_kernel = "linear"

    def normalizer(self, xp, nrel, retrieved):
        return xp.minimum(xp.full_like(nrel, float(self.required_cutoff)), nrel)


def _mapped(grade: np.ndarray, gains) -> np.ndarray:
    """Grades through a gains map (sorted (grade, value) pairs); unmapped grades keep their grade,
    unjudged (NaN) stay NaN (ir_measures: ``gains.get(grade, grade)``)."""
    if not gains:
        return grade
    out = np.array(grade, dtype=np.float64, copy=True)
    for k, v in gains:
        out[grade == k] = v
    return out


def _gain_of(mapped: np.ndarray, dcg: str, grade: np.ndarray | None = None) -> np.ndarray:
    """Gain of each (mapped) grade: the grade (``log2``) or ``2^g - 1`` (``exp-log2``, Burges et al.
    2005, gdeval); mapped grades <= 0 and unjudged documents give 0 (gdeval, ir_measures).  With the
    original ``grade`` (trec_eval's own gain map, ``negative='keep'``), a judgment of grade >= 0 keeps
    its mapped gain even when negative, and only unjudged documents and negative grades give 0."""
    if grade is not None:
        return np.where(np.nan_to_num(grade, nan=-1.0) >= 0, np.nan_to_num(mapped), 0.0)
    g = np.where(np.isnan(mapped), 0.0, np.maximum(np.nan_to_num(mapped), 0.0))
    return np.exp2(g) - 1.0 if dcg == "exp-log2" else g


@register
class nDCG(Linear):
    """Normalised DCG with log2(rank+1) discount (trec_eval ndcg / ndcg_cut), and ir_measures' parameters.

    ``dcg='log2'`` (default): gain = grade; ``dcg='exp-log2'``: gain = 2^grade - 1 (Burges et al. 2005);
    ``gains={0:0,1:1,2:3}``: grades mapped first (unmapped grades keep their grade, as ir_measures
    does); ``judged_only=True``: unjudged documents (and negative grades, trec_eval's "unjudged in the
    pool") removed before ranking, ranks closing up (trec_eval -J, pytrec_eval's judged_docs_only).
    The ideal DCG uses the same gains.  Every variant is a position sum, so the closed forms of
    `Linear` apply; with ``judged_only`` they run over the condensed list, whose tie groups
    are the judged members of the original ones (still uniformly permuted).

    >>> from tierank.measures import parse_measure
    >>> str(parse_measure("nDCG(gains={0:0,1:1,2:3},dcg='exp-log2',judged_only=True)@10"))
    "nDCG(dcg='exp-log2',gains={2:3},judged_only=True)@10"
    """

    family = "nDCG"
    batch_cutoffs = True
    pretty = "normalised discounted cumulative gain"
    definition = (
        "DCG at k (gain / log2(rank + 1) summed over ranks) d"
        "ivided by the DCG of the ideal ordering of the qrels"
    )
    citation = (
        "Järvelin, K. and Kekäläinen, J. (2002). Cumulated gain-based evaluation of IR techniques. "
        "ACM TOIS 20(4)."
    )
    names = FamilyNames(
        trec_eval="ndcg",
        trec_eval_form=GainMap("ndcg", negative=True),
        trec_eval_cut="ndcg_cut",
        ranx="ndcg",
        mteb="ndcg",
        sentence_transformers="ndcg",
    )
    description = (
        "normalised DCG, gain = grade (<= 0 counts 0), discount 1/log2(rank+1), ideal from qrels"
    )
    kind = "gain"
    schema = (
        Param(
            "dcg",
            str,
            "log2",
            "gain: 'log2' (the grade) or 'exp-log2' (2^grade - 1)",
            choices=("log2", "exp-log2"),
        ),
        Param(
            "gains",
            dict,
            None,
            "grade -> gain map, e.g. {0:0,1:1,2:3} (unmapped grades keep their grade)",
        ),
        Param(
            "judged_only",
            bool,
            False,
            "drop unjudged documents and negative (mapped) grades before ranking, ranks closing up "
            "(as trec_eval -J and ir_measures)",
        ),
        Param(
            "negative",
            str,
            "zero",
            "a mapped gain below 0: 'zero' (counts 0, as ir_measures and gdeval) or 'keep' (counts "
            "as mapped, as trec_eval's own gain map ndcg.1=-1; the ideal DCG keeps the positive gains)",
            choices=("zero", "keep"),
        ),
    )
    bounds_refusal = (
        "its ideal DCG grows with every unjudged document assumed relevant, so neither "
        "assumption bounds it (Yang, Moffat & Turpin, sec. 2)"
    )

    @property
    def _plain(self) -> bool:
        return self.param("dcg") == "log2" and self.param("gains") is None

    @property
    def _keeps_negative(self) -> bool:
        return self.param("negative") == "keep" and self.param("dcg") == "log2"

    def depth(self, nrel):
        return float("inf") if self.param("judged_only") else self.k

    def view(self, prep: Prepared):
        if not self.param("judged_only"):
            return prep
        cut = prep.cut(float("inf"))
        if np.isfinite(cut) and prep.n:
            end = prep.gpos0 + prep.gsize
            if ((prep.gpos0 < cut) & (end > cut) & (prep.gsize > 1)).any():
                raise TierankInputError(
                    f"{self}: judged_only with a depth limit (-M) that cuts through a tie "
                    "group is not supported"
                )
        # trec_eval -J keeps every judgment of grade >= 0, whatever gain its map gives it
        grade = prep.grade if self._keeps_negative else _mapped(prep.grade, self.param("gains"))
        return prep.condensed((grade >= 0) & (prep.pos < cut))

    def values(self, prep: Prepared):
        if self._plain:
            return None
        return _gain_of(
            _mapped(prep.grade, self.param("gains")),
            self.param("dcg"),
            prep.grade if self._keeps_negative else None,
        )

    tensor_kernel = "linear"

    def tensor_refusal(self) -> str | None:
        if self.param("judged_only"):
            return "judged_only does not apply: every candidate has a label"
        if self._keeps_negative and any(v < 0 for _, v in self.param("gains") or ()):
            return "negative='keep' keeps mapped gains below 0, which tensors clip (negative='zero' has a kernel)"
        return None

    def label_gain(self, xp: Any, grade: Any) -> Any:
        """The gain of each (judged, non-NaN) grade, an array of ``xp``: ``gains`` mapped first
        (unmapped grades keep theirs), then the grade (``dcg='log2'``) or ``2^g - 1``
        (``'exp-log2'``); mapped grades <= 0 give 0.  The one gain formula of runs and tensors."""
        g = grade
        for k, v in self.param("gains") or ():
            g = xp.where(grade == k, xp.full_like(grade, float(v)), g)
        g = xp.clip(g, 0.0, None)
        if self.param("dcg") != "exp-log2":
            return g
        return (xp.exp2(g) if hasattr(xp, "exp2") else xp.pow(2.0, g)) - 1.0

    def position_weights(self, xp, pos):
        return dcg_weights(xp, pos)

    def denominator(self, prep: Prepared):
        if self._plain:
            return idcg(prep, self.k)
        q, g = prep.judged_grades
        gain = self.label_gain(np, np.asarray(g, dtype=np.float64))
        keep = gain > 0
        iq, ig = q[keep], gain[keep]
        o = np.lexsort((-ig, iq))
        iq, ig = iq[o], ig[o]
        start = np.searchsorted(iq, np.arange(prep.nq + 1))
        ipos = (np.arange(len(ig)) - np.repeat(start[:-1], np.diff(start))).astype(np.float64)
        terms = ideal_dcg_terms(np, ig, ipos, self.k)
        return np.bincount(iq.astype(np.int64), weights=terms, minlength=prep.nq)
