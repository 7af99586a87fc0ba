r"""Geometric mean of bpref over queries, trec_eval's ``gm_bpref`` (trec_eval 10, ``m_gm_bpref.c``).

Definition: per query `X_q = \max(bpref_q, 10^{-5})` (``MIN_GEO_MEAN``), `bpref_q` as
trec_eval's ``bpref`` ([`tierank.measures.bpref.Bpref`][tierank.measures.bpref.Bpref]), and over the `n` evaluated
queries `G = \exp(\frac1n \sum_q \log X_q)` (``te_calc_avg_meas_s_gm``); printed in the summary
only.  The summary is that of [`tierank.measures.gmap.GeometricMean`][tierank.measures.gmap.GeometricMean] (as ``gm_map``'s):

* **oblivious, min, max: exact**: bpref's own (exact, attained at the extremal arrangements of every
  tie group at once), floored; `G` is increasing in every `X_q`;
* **expected, std: exact for few orderings, else sampled**: `E[X_q^{1/n}]` and `Var[X_q^{1/n}]`
  per query over its tie orderings.  Only the groups holding a relevant and another document vary,
  and in a group wholly above the depth limit only the order of its relevant and judged
  non-relevant documents (bpref skips the others).  A query with at most
  ``tierank.measures.sampling.ENUMERATE`` such orderings in all is enumerated, every one once
  (exact, ``ddof=0``); the others draw ``prep.samples`` uniform orderings of those documents,
  each group's rows shuffled in place by a generator keyed by the seed, the query and the group's
  rank ([`tierank.measures.sampling.query_keys`][tierank.measures.sampling.query_keys]) (sampled, ``ddof=1``,
  labelled per query); a query whose bpref cannot vary is exact.
"""

from __future__ import annotations

import numpy as np

from ..ties import Prepared
from . import sampling
from .base import FamilyNames, register
from .bpref import Bpref
from .gmap import GeometricMean, GMStats
from .kernels import ratio, segment_firsts
from .linear import REL
from .sampling import (
    arrangement_count,
    class_arrangements,
    enumerable,
    query_keys,
    shuffled_rows,
)

__all__ = ["GMBpref"]


@register
class GMBpref(GeometricMean):
    """Geometric mean of bpref over queries, each floored at 1e-5 (trec_eval gm_bpref)."""

    family = "GMBpref"
    pretty = "geometric mean of bpref"
    definition = "geometric mean over queries of bpref (floored at 1e-5)"
    citation = "Buckley, C. and Voorhees, E. M. (2004). Retrieval evaluation with incomplete information. SIGIR 2004; Robertson, S. (2006). On GMAP. CIKM 2006."
    names = FamilyNames(trec_eval="gm_bpref", ir_measures=None)
    description = (
        "geometric mean over queries of max(bpref, 1e-5) (trec_eval gm_bpref); "
        "min/max exact, expectation exact for few orderings, else sampled"
    )
    schema = (REL,)
    bounds_refusal = "bpref skips unjudged documents by definition (it is already their bound)"

    def stats(self, prep: Prepared) -> GMStats:
        n = prep.nq
        root = 1.0 / n if n else 1.0
        b = Bpref(params=(("rel", self.rel),)).compute(prep)
        obl, lo, hi = (np.maximum(x, self.floor) for x in (b.oblivious, b.min, b.max))
        vary = np.flatnonzero(lo < hi)
        e, v, se = lo.copy(), np.zeros(n), np.zeros(n)
        rmean, rvar = lo**root, np.zeros(n)
        if not len(vary):
            return GMStats(obl, e, lo, hi, v, root_mean=rmean, root_var=rvar, root_n=n)
        if not prep.moments:  # the oblivious value and the extremes only
            e[vary] = v[vary] = np.nan
            return GMStats(obl, e, lo, hi, v)
        S = int(prep.samples)
        sampled = np.zeros(n, dtype=bool)
        parts = self._parts(prep, vary)
        done = self._single_groups(prep, parts, root, lo, hi, e, v, rmean, rvar)
        left = np.zeros(n, dtype=bool)
        left[vary] = True
        left[done] = False
        rest = np.flatnonzero(left)
        for q, (total, exact) in zip(rest.tolist(), self._sums(prep, parts, rest, S)):
            x = np.maximum(total, self.floor)
            xr = x**root
            ddof = 0 if exact else 1
            e[q], v[q] = min(max(x.mean(), lo[q]), hi[q]), x.var(ddof=ddof)
            rmean[q], rvar[q] = xr.mean(), xr.var(ddof=ddof)
            sampled[q] = not exact
            se[q] = 0.0 if exact else np.sqrt(v[q] / S)
        if not sampled.any():
            return GMStats(obl, e, lo, hi, v, root_mean=rmean, root_var=rvar, root_n=n)
        return GMStats(
            obl,
            e,
            lo,
            hi,
            v,
            method="sampled",
            samples=S,
            seed=int(prep.seed),
            se=se,
            sampled=sampled,
            root_mean=rmean,
            root_var=rvar,
            root_n=n,
        )

    def _parts(self, prep: Prepared, queries: np.ndarray) -> dict:
        """The tie groups of ``queries`` whose order moves bpref (a relevant and another document, above
        the depth limit), sorted by query and rank, and the fixed part of every query's sum.

        Keys: ``groups``, ``q`` (query of each), ``B`` (judged non-relevant documents above it), ``r``,
        ``s``, ``u`` (relevant, judged non-relevant, other documents), ``read`` (its ranks read),
        ``fixed`` (per query: the terms of the other groups, summed in rank order), ``R``, ``D``."""
        bp = Bpref(params=(("rel", self.rel),))
        rel, _, R, D = bp._classes(prep)
        c_rel, c_non = bp._counts(prep)
        cut = prep.cut(float("inf"))
        gs, qs = prep.gstart, prep.qstart
        want = np.zeros(prep.nq, dtype=bool)
        want[queries] = True
        # the groups of the queries asked for that hold a relevant document, and the terms of the
        # relevant rows read summed per group in rank order
        rows = np.flatnonzero(rel)
        rows = rows[want[prep.qi[rows]]]
        first = segment_firsts(prep.gid[rows])  # (rows ascending: their groups too)
        gr = prep.gid[rows][first]
        at = np.repeat(np.arange(len(gr)), np.diff(np.append(first, len(rows))))
        read_now = prep.pos[rows] < cut
        rows, at = rows[read_now], at[read_now]
        qr = prep.qi[rows]
        before = c_non[rows] - c_non[qs[qr]]
        g_obl = np.bincount(at, weights=bp._f(before, R[qr], D[qr]), minlength=len(gr))
        m = prep.gsize[gr].astype(np.int64)
        r = c_rel[gs[gr + 1]] - c_rel[gs[gr]]
        above = prep.gpos0[gr] < cut  # groups starting past the depth limit add nothing
        drawn = above & (r < m)
        fixed = np.bincount(
            prep.gq[gr[above & ~drawn]], weights=g_obl[above & ~drawn], minlength=prep.nq
        ).astype(np.float64, copy=False)  # (float even where nothing is summed)
        g = gr[drawn]
        m, r = m[drawn], r[drawn]
        s = c_non[gs[g + 1]] - c_non[gs[g]]
        pos0 = prep.gpos0[g]
        read = np.minimum(m, cut - pos0).astype(np.int64) if np.isfinite(cut) else m
        q = prep.gq[g]
        return {
            "groups": g,
            "q": q,
            "B": c_non[gs[g]] - c_non[qs[q]],
            "pos0": pos0,
            "r": r,
            "s": s,
            "u": m - r - s,
            "read": read,
            "m": m,
            "fixed": fixed,
            "R": R,
            "D": D,
        }

    def _single_groups(self, prep, parts, root, lo, hi, e, v, rmean, rvar) -> np.ndarray:
        """Every ordering of the queries whose orderings are those of one group (few enough to
        enumerate), done together per group composition; fills their moments and returns them."""
        q = parts["q"]
        one = np.flatnonzero(np.bincount(q, minlength=prep.nq)[q] == 1)
        m, read = parts["m"][one], parts["read"][one]
        r, s, u = parts["r"][one], parts["s"][one], parts["u"][one]
        cut = read < m  # the depth limit cuts the group: the other documents matter too
        key = np.stack((r, s, np.where(cut, u, -1), np.minimum(read, r + s + np.where(cut, u, 0))))
        # the distinct compositions, and which one each group has
        order = np.lexsort(key[::-1])
        new = np.ones(len(order), dtype=bool)
        new[1:] = (key[:, order[1:]] != key[:, order[:-1]]).any(axis=0)
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.cumsum(new) - 1
        shapes = key[:, order[new]]
        codes = np.array([1 << 32, 1, 0], dtype=np.int64)
        done = []
        R, D, fixed = parts["R"], parts["D"], parts["fixed"]
        for j in range(shapes.shape[1]):
            rr, ss, uu, nread = (int(x) for x in shapes[:, j])
            comp = (rr, ss) if uu < 0 else (rr, ss, uu)
            if not enumerable(comp):
                continue
            sel = one[inverse == j]
            qq = q[sel]
            seq = codes[class_arrangements(comp)[:, :nread]]
            row, col = np.nonzero(seq == 1 << 32)
            cnt = np.cumsum(seq, axis=1)[row, col] & 0xFFFFFFFF
            nb = parts["B"][sel][:, None] + cnt[None, :]
            Rq, Dq = R[qq][:, None], D[qq][:, None]
            fv = 1.0 - ratio(np.minimum(nb, Rq), np.broadcast_to(Dq, nb.shape))
            C = len(seq)
            bins = (np.arange(len(sel))[:, None] * C + row[None, :]).reshape(-1)
            vals = np.bincount(bins, weights=fv.reshape(-1), minlength=len(sel) * C)
            total = fixed[qq][:, None] + vals.reshape(len(sel), C)
            x = np.maximum(ratio(total, np.broadcast_to(Rq, total.shape)), self.floor)
            xr = x**root
            e[qq] = np.minimum(np.maximum(x.mean(axis=1), lo[qq]), hi[qq])
            v[qq] = x.var(axis=1)
            rmean[qq], rvar[qq] = xr.mean(axis=1), xr.var(axis=1)
            done.append(qq)
        return np.concatenate(done) if done else np.zeros(0, np.int64)

    def _sums(
        self, prep: Prepared, parts: dict, queries: np.ndarray, S: int
    ) -> list[tuple[np.ndarray, bool]]:
        """Per query of ``queries``: bpref over its tie orderings and whether that is every distinct
        ordering once (True: at most `ENUMERATE` of them) or ``S`` uniform ones (False).  Only the
        groups of `_parts` vary; in a group wholly above the depth limit only the order of its
        judged documents matters (the others are left out of the draws)."""
        R, D, fixed = parts["R"], parts["D"], parts["fixed"]
        qkeys = None
        starts = np.searchsorted(parts["q"], np.asarray(queries))
        ends = np.searchsorted(parts["q"], np.asarray(queries), side="right")
        # codes: a judged non-relevant document 1, a relevant one 2^32 (never counted: fewer than 2^32
        # documents), any other 0; the running sum counts the judged non-relevant documents above
        codes = np.array([1 << 32, 1, 0], dtype=np.int64)
        out = []
        for q, a, z in zip(queries, starts, ends):
            groups = []  # per group: (judged non-relevant before it, rank of its first, counts, positions read)
            count = 1
            for i in range(a, z):
                k, read = int(parts["m"][i]), int(parts["read"][i])
                comp: tuple[int, ...] = (int(parts["r"][i]), int(parts["s"][i]))
                if read < k:  # cut inside the group: which documents fall past it matters too
                    comp = (*comp, k - comp[0] - comp[1])
                groups.append(
                    (int(parts["B"][i]), int(parts["pos0"][i]), comp, min(read, sum(comp)))
                )
                count = min(count * arrangement_count(comp), sampling.ENUMERATE + 1)
                if not enumerable(comp):
                    count = sampling.ENUMERATE + 1
            exact = count <= sampling.ENUMERATE
            if exact:  # every distinct ordering of every group, their sums over the product
                total = np.full(1, fixed[q])
                for B, _, comp, read in groups:
                    seq = codes[class_arrangements(comp)[:, :read]]
                    total = np.add.outer(total, self._group(seq, B, R[q], D[q])).reshape(-1)
            else:
                total = np.full(S, fixed[q])
                for B, P0, comp, read in groups:
                    if sum(c > 0 for c in comp) == 1:  # one ordering (no judged non-relevant one)
                        one = np.repeat(codes[: len(comp)], comp)[None, :read]
                        total += self._group(one, B, R[q], D[q])
                        continue
                    if qkeys is None:
                        qkeys = query_keys(prep)
                    rng = np.random.default_rng([int(qkeys[q]), P0])
                    group = np.repeat(
                        codes[::-1], comp[::-1] if len(comp) == 3 else (0, *comp[::-1])
                    )
                    for s0, seq in shuffled_rows(rng, group.astype(np.int64), S):
                        total[s0 : s0 + len(seq)] += self._group(
                            seq[:, :read], B, R[q], D[q], whole=len(comp) == 2
                        )
            out.append((ratio(total, np.full(len(total), R[q])), exact))
        return out

    @staticmethod
    def _group(seq: np.ndarray, B: int, R: float, D: float, whole: bool = False) -> np.ndarray:
        """A group's sum of bpref terms in each row of ``seq`` (orderings x positions read, codes),
        with ``B`` judged non-relevant documents above the group; ``whole``: every row is an ordering
        of the same relevant and judged non-relevant documents (no other code)."""
        row, col = np.nonzero(seq == 1 << 32)
        r = len(row) // max(len(seq), 1)
        if r and (
            whole or (not (seq == 0).any() and (np.bincount(row, minlength=len(seq)) == r).all())
        ):
            # relevant and judged non-relevant documents only, r relevant ones in every row: the e-th
            # relevant one of a row has e judged non-relevant ones fewer above it than its column
            above = col - np.arange(len(col)) % r
        else:
            above = np.cumsum(seq, axis=1)[row, col] & 0xFFFFFFFF
        # f at every count of judged non-relevant documents above that can occur, then looked up
        top = int(above.max()) + 1 if len(above) else 0
        nb = B + np.arange(top)
        table = 1.0 - ratio(np.minimum(nb, R), np.full(nb.shape, D))
        return np.bincount(row, weights=table[above], minlength=len(seq))
