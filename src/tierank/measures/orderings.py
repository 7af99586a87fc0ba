"""Statistics of a measure over the orderings of its tie groups, one ordering at a time: every
distinct ordering where they are few (`ENUMERATE`, exact), else a sample of them (labelled, seeded
per query); and the value of the one ranking of many queries at once (`one_ranking`).  What
trec_eval's gain measures (`tierank.measures.trec_gain`) fall back to where no closed form or
lattice serves."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np

from ..ties import Prepared
from .base import Stats
from .sampling import labelled, query_keys

__all__ = ["ENUMERATE", "mixed_groups", "one_ranking", "per_ordering_stats"]

#: queries with at most this many distinct tie orderings are enumerated (exact statistics)
ENUMERATE = 5040


def _distinct_perms(values: tuple) -> list[tuple]:
    """Every distinct ordering of the multiset ``values``.

    >>> _distinct_perms((1, 0, 0))
    [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    """
    counts = Counter(values)
    keys = sorted(counts)
    out: list[tuple] = []
    cur: list = []

    def rec(left: int) -> None:
        if not left:
            out.append(tuple(cur))
            return
        for k in keys:
            if counts[k]:
                counts[k] -= 1
                cur.append(k)
                rec(left - 1)
                cur.pop()
                counts[k] += 1

    rec(len(values))
    return out


def _multinomial(values: np.ndarray) -> int:
    """Distinct orderings of ``values``: m! / prod(c!) over the multiplicities c."""
    counts = Counter(values.tolist()).values()
    return math.factorial(len(values)) // math.prod(math.factorial(c) for c in counts)


def mixed_groups(prep: Prepared, values: np.ndarray) -> np.ndarray:
    """Per tie group, whether its ``values`` differ and it starts above the depth limit (the groups
    whose ordering can change a value)."""
    mixed = np.zeros(len(prep.gsize), dtype=bool)
    if prep.n > 1:
        differ = (values[1:] != values[:-1]) & (prep.gid[1:] == prep.gid[:-1])
        mixed[prep.gid[1:][differ]] = True
        mixed &= prep.gpos0 < prep.cut(float("inf"))
    return mixed


def one_ranking(
    prep: Prepared,
    values: np.ndarray,
    qs: np.ndarray,
    batch_fn: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Per query of ``qs``, the value of the one ranking ``values`` (per row, in rank order) by
    ``batch_fn(qs, A, width)``: the queries of similar lengths in padded rows of ``A`` (zero past
    ``width``, cut at the depth limit), at most 2^22 entries at once."""
    out = np.zeros(len(qs))
    if not len(qs) or not prep.n:
        return out
    cut = prep.cut(float("inf"))
    length = np.diff(prep.qstart)[qs]
    width = (
        np.minimum(length, cut).astype(np.int64) if np.isfinite(cut) else length.astype(np.int64)
    )
    order = np.argsort(width, kind="stable")
    qs_s, width = qs[order], width[order]
    i = 0
    while i < len(qs_s):  # batches of at most 2^22 entries (rows x widest row: the last one)
        size = np.arange(1, len(qs_s) - i + 1) * np.maximum(width[i:], 1)
        j = i + max(1, int(np.searchsorted(size, 1 << 22, side="right")))
        q, w = qs_s[i:j], width[i:j]
        n = int(w[-1])
        col = np.arange(n)
        inside = col[None, :] < w[:, None]
        A = np.where(
            inside,
            values[np.minimum(prep.qstart[q][:, None] + col[None, :], len(values) - 1)],
            0.0,
        )
        out[order[i:j]] = batch_fn(q, A, w)
        i = j
    return out


def _mixed_spans(prep: Prepared, v: np.ndarray, s: int, e: int, n: int) -> list[tuple[int, int]]:
    """The tie groups (start, end within the query's rows ``s..e``, values ``v``) that start
    among the ``n`` ranks read and hold values that differ."""
    spans = []
    if e > s:
        gs = prep.gstart[prep.gid[s] : prep.gid[e - 1] + 2] - s
        for a, b in zip(gs[:-1].tolist(), gs[1:].tolist()):
            if a < n and b - a > 1 and v[a:b].min() != v[a:b].max():
                spans.append((a, b))
    return spans


def _every_ordering(v: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Every distinct ordering of the groups ``spans`` of ``v``, one per row (the other ranks as
    they are)."""
    perms = [
        np.array(_distinct_perms(tuple(sorted(v[a:b].tolist()))), dtype=np.float64)
        for a, b in spans
    ]
    idx = np.indices([len(p) for p in perms]).reshape(len(perms), -1)
    A = np.tile(v, (idx.shape[1], 1))
    for (a, b), p, ix in zip(spans, perms, idx):
        A[:, a:b] = p[ix]
    return A


def _drawn_orderings(rng, S: int, v: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """``S`` uniformly random orderings of the groups ``spans`` of ``v``, one per row."""
    A = np.tile(v, (S, 1))
    for a, b in spans:  # each tie group shuffled in every row at once, in place (no sort)
        block = A[:, a:b]
        rng.permuted(block, axis=1, out=block)
    return A


def per_ordering_stats(
    prep: Prepared,
    values: np.ndarray,
    fn: Callable[[int, np.ndarray], np.ndarray],
    queries: np.ndarray | None = None,
    exact_extremes: bool = False,
    base: Stats | None = None,
    batch_fn: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Stats:
    """[`Stats`][tierank.measures.base.Stats] of a measure given by ``fn(q, A)``: the value of query ``q`` for every row of
    ``A`` (orderings x ranks read, the document ``values`` in rank order).  Queries with at most
    `ENUMERATE` distinct orderings are enumerated (exact); the others are sampled
    (``prep.samples`` orderings, seeded by query), their min/max the extremes seen unless
    ``exact_extremes`` (then the optimistic / pessimistic arrangements of ``values``, which the
    caller guarantees extremal).  ``queries``: only those (the others taken from ``base``).
    ``batch_fn(qs, A, width)``: the value of the one ranking of each query of ``qs`` at once (rows of
    ``A`` zero-padded past ``width``), for the queries no ordering changes.
    """
    nq = prep.nq
    if base is None:
        z = np.zeros(nq)
        base = Stats(z, z.copy(), z.copy(), z.copy(), z.copy())
    obl, ex, mn, mx, var = (
        np.array(a, dtype=np.float64, copy=True)
        for a in (base.oblivious, base.expected, base.min, base.max, base.var)
    )
    se = np.zeros(nq) if base.se is None else np.array(base.se, copy=True)
    sampled = False
    drawn = base.sampled_queries().copy()  # per query: estimated from random orderings
    cut = prep.cut(float("inf"))
    opt = prep.sorted_in_groups(values, "optimistic")
    pes = prep.sorted_in_groups(values, "pessimistic")
    keys = None
    todo = np.arange(nq) if queries is None else np.asarray(queries, dtype=np.int64)
    if batch_fn is not None and len(todo) and prep.n:
        # queries with no tie group of differing values above the cut: one value, computed in batches
        tied_q = np.bincount(prep.gq[mixed_groups(prep, values)], minlength=nq) > 0
        plain = todo[~tied_q[todo]]
        todo = todo[tied_q[todo]]
        v = one_ranking(prep, values, plain, batch_fn)
        obl[plain] = ex[plain] = mn[plain] = mx[plain] = v
        var[plain] = 0.0
    for q in todo.tolist():
        s, e = int(prep.qstart[q]), int(prep.qstart[q + 1])
        n = e - s if not np.isfinite(cut) else min(e - s, int(cut))
        v = values[s:e]
        fixed = np.stack([v, opt[s:e], pes[s:e]])[:, :n]
        fv = fn(q, fixed)
        obl[q] = fv[0]
        spans = _mixed_spans(prep, v, s, e, n)
        if not spans:
            ex[q] = mn[q] = mx[q] = fv[0]
            var[q] = 0.0
            continue
        total = 1
        for a, b in spans:
            total *= _multinomial(v[a:b])
            if total > ENUMERATE:
                break
        if total <= ENUMERATE:
            vals = fn(q, _every_ordering(v, spans)[:, :n])
            ex[q], mn[q], mx[q] = vals.mean(), vals.min(), vals.max()
            var[q] = float(np.mean((vals - ex[q]) ** 2))
            se[q] = 0.0
            continue
        sampled = True
        drawn[q] = True
        if keys is None:
            keys = query_keys(prep)
        rng = np.random.default_rng([int(prep.seed) % (1 << 63), int(keys[q])])
        S = int(prep.samples)
        vals = fn(q, _drawn_orderings(rng, S, v, spans)[:, :n])
        ex[q] = vals.mean()
        var[q] = float(vals.var(ddof=1)) if S > 1 else 0.0
        se[q] = math.sqrt(var[q] / S)
        if exact_extremes:
            mn[q], mx[q] = fv[2], fv[1]
        else:
            mn[q], mx[q] = min(vals.min(), fv.min()), max(vals.max(), fv.max())
        ex[q] = min(max(ex[q], mn[q]), mx[q])
    if sampled or base.method == "sampled":
        return labelled(obl, ex, mn, mx, var, drawn, prep, se=se)
    return Stats(obl, ex, mn, mx, var)
