r"""Expected reciprocal rank, graded (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009), as gdeval computes it.

Definition (``gdeval.pl``, ir_measures' ``gdeval`` provider): with ``MAX_JUDGMENT = 4`` and the
gain grade `g` of each ranked document (grades <= 0 and unjudged documents count 0),
`R = (2^g - 1) / 2^{4}` and

.. math:: ERR@k = \sum_{i \le k} \frac{1}{i} R_i \prod_{j<i} (1 - R_j),

not normalised.  gdeval refuses grades above 4; so does tierank, unless ``max_grade`` says
otherwise (``ERR(max_grade=5)`` uses `2^5`).

Tie orderings (derived for tierank; checked against enumeration in the tests).  Write
`q = 1 - R`.  The product over the documents of the groups before a tie group `G`
does not depend on the ordering (`P_G`), and groups are independent, so
`ERR = \sum_G P_G X_G` with `X_G = \sum_t w_t R_{\pi(t)} \Pi_t` over the group's
positions `t` (`w_t = 1/\text{rank}`, 0 past the cutoff) and
`\Pi_t = \prod_{s<t} q_{\pi(s)}`.  Since `R_{\pi(t)}\Pi_t = \Pi_t - \Pi_{t+1}` and
documents with `R = 0` do not change `\Pi`, only the `n'` documents with
`R > 0` matter: they occupy a uniformly random `n'`-subset of the group's `m`
positions, in a uniformly random order independent of it.  With `p_j` the `j`-th of
those positions and `Y_j = \Pi'_j - \Pi'_{j+1}` (products over that order),

.. math:: E[X_G] = \sum_j E[w_{p_j}]\,E[Y_j], \qquad
          E[X_G^2] = \sum_{j,l} E[w_{p_j} w_{p_l}]\,E[Y_j Y_l],

where `E[\Pi'_a \Pi'_b]` (`a \le b`) is the bivariate elementary symmetric *mean*
`f_{a,b-a}` of `(q^2, q)`: the mean over ordered disjoint subsets `A, B` of sizes
`a, b-a` of `\prod_A q^2 \prod_B q`.  It is computed by the recurrence over the
documents, each step a convex combination (so every value stays in [0, 1]; no overflow):
`f^{(n+1)}_{a,b} = [(n+1-a-b) f^{(n)}_{a,b} + a q^2 f^{(n)}_{a-1,b} + b q f^{(n)}_{a,b-1}]/(n+1)`.
The order statistics of a random subset give `P(p_j = p) = \binom{p}{j}\binom{m-1-p}{n'-1-j}/\binom{m}{n'}`
and the joint law of two of them likewise.  `Var[ERR] = \sum_G P_G^2 (E[X_G^2] - E[X_G]^2)`,
over the groups whose values differ (the others add exactly 0).  Cost per such group
`O(n' J^2 + J^2 T)`, `T` its positions inside the cutoff, `J = \min(n', T)`: the
pair law of two order statistics is summed by repeated prefix sums (hockey-stick identity), every
term positive and rescaled as it goes, so nothing overflows.

Min / max: swapping adjacent documents with values `x` (first) and `y` changes the
sum by `(w_t - w_{t+1})(x - y)` and nothing after them, and `w` is non-increasing, so
sorting each group by grade ascending / descending gives the exact min / max (`P_G \ge 0`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..ties import Prepared, Which
from .base import Measure, Param, Stats, register
from .kernels import log_factorials, segment_cumsum

__all__ = ["ERR", "group_moments"]

#: bound on the work arrays of the variance ((groups, J, J, T) entries at once)
_CHUNK_ENTRIES = 1 << 22


@register
class ERR(Measure):
    """Expected reciprocal rank (graded, gdeval): sum_i R_i / i prod_{j<i} (1 - R_j), R = (2^g - 1)/2^4."""

    family = "ERR"
    pretty = "expected reciprocal rank"
    definition = (
        "expected value of 1/rank at which a cascade user, stopping at "
        "a document with probability (2^grade - 1) / 2^max_grade, stops"
    )
    citation = (
        "Chapelle, O., Metzler, D., Zhang, Y. and Grinspan, P. (2009). Expected reciprocal rank "
        "for graded relevance. CIKM 2009."
    )
    description = (
        "expected reciprocal rank (gdeval): R = (2^grade - 1) / 2^max_grade, cascade model"
    )
    schema = (Param("max_grade", int, 4, "largest grade (gdeval's MAX_JUDGMENT)", low=1, high=60),)
    bounds_refusal = (
        "an unjudged document's grade is unknown, and ERR has no bound short of the largest grade"
    )
    tensor_kernel = "err"

    def _r(self, prep: Prepared, gain: np.ndarray) -> np.ndarray:
        gmax = self.param("max_grade")
        return (np.exp2(gain) - 1.0) / 2.0**gmax

    def stats(self, prep: Prepared) -> Stats:
        gmax = self.param("max_grade")
        k = prep.cut(self.k)
        rows = np.flatnonzero(prep.pos < k) if np.isfinite(k) else np.arange(prep.n)
        gain = prep.gain
        if len(rows) and gain[rows].max() > gmax:
            raise TierankInputError(
                f"{self}: a retrieved document has grade {gain[rows].max():g}, above the largest "
                f"grade {gmax} (gdeval's MAX_JUDGMENT); use ERR(max_grade=...)"
            )
        qi = prep.qi[rows]
        w = 1.0 / (prep.pos[rows] + 1.0)

        def value(which: Which) -> np.ndarray:
            r = self._r(prep, prep.arrangement(which, "gain")[rows])
            lq = np.log1p(-r)
            decay = np.exp(segment_cumsum(lq, qi) - lq) if len(rows) else lq
            return np.bincount(qi, weights=w * r * decay, minlength=prep.nq).astype(np.float64)

        obl, lo, hi = value("policy"), value("pessimistic"), value("optimistic")
        # expectation: fixed groups as under the policy, mixed groups (values differ) by their law
        r = self._r(prep, gain[rows])
        g = prep.gid[rows]
        lq = np.log1p(-r)
        decay = np.exp(segment_cumsum(lq, qi) - lq) if len(rows) else lq
        ng = len(prep.gsize)
        if len(rows):
            first = prep.gstart[:-1]
            mixed = np.zeros(ng, dtype=bool)
            inc = np.unique(g)
            gmin = np.minimum.reduceat(gain, first)
            gmx = np.maximum.reduceat(gain, first)
            mixed[inc] = gmin[inc] != gmx[inc]
        else:
            mixed = np.zeros(ng, dtype=bool)
        fixed_rows = ~mixed[g]
        expected = np.bincount(
            qi[fixed_rows], weights=(w * r * decay)[fixed_rows], minlength=prep.nq
        ).astype(np.float64)
        var = np.zeros(prep.nq)
        mg = np.flatnonzero(mixed)
        if len(mg):
            # P_G: product of q over the documents before the group (order-free), from the first row
            start_rows = np.searchsorted(rows, prep.gstart[mg])
            p_before = decay[start_rows]
            m = prep.gsize[mg].astype(np.int64)
            c = prep.gpos0[mg].astype(np.int64)
            T = np.minimum(m, (np.minimum(k, np.iinfo(np.int64).max // 4) - c)).astype(np.int64)
            r_all = self._r(prep, gain)
            ex, ex2 = _group_moments(prep, mg, m, c, T, r_all)
            q = prep.gq[mg]
            expected += np.bincount(q, weights=p_before * ex, minlength=prep.nq)
            var += np.bincount(
                q, weights=p_before**2 * np.maximum(ex2 - ex * ex, 0.0), minlength=prep.nq
            )
        return Stats(obl, expected, lo, hi, var)


def _group_moments(prep: Prepared, mg, m, c, T, r_all) -> tuple[np.ndarray, np.ndarray]:
    """E[X_G] and E[X_G^2] of each mixed group ``mg`` (module docstring)."""
    ex = np.zeros(len(mg))
    ex2 = np.zeros(len(mg))
    # the documents with R > 0 of each group, padded into a matrix
    row_g = np.repeat(np.arange(len(mg)), m)
    rows = np.repeat(prep.gstart[mg], m) + (
        np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)
    )
    rv = r_all[rows]
    pos_nz = rv > 0
    nz = np.bincount(row_g[pos_nz], minlength=len(mg)).astype(np.int64)
    J = np.minimum(nz, T)
    lf = log_factorials(int(m.max()) + 1)
    keys = J * (int(T.max()) + 1) + T
    for key in np.unique(keys):
        sel = np.flatnonzero(keys == key)
        Jb, Tb = int(J[sel[0]]), int(T[sel[0]])
        if Tb <= 0 or Jb <= 0:
            continue
        per = max(1, _CHUNK_ENTRIES // ((Jb + 1) ** 2 * (Tb + 1) + int(nz[sel].max())))
        for lo in range(0, len(sel), per):
            part = sel[lo : lo + per]
            e, e2 = _batch(part, Jb, Tb, nz, m, c, row_g, rv, pos_nz, lf)
            ex[part], ex2[part] = e, e2
    return ex, ex2


def _batch(part, J, T, nz, m, c, row_g, rv, pos_nz, lf):
    """[`group_moments`][tierank.measures.err.group_moments] of the groups ``part``: their q values
    gathered into a padded matrix."""
    G = len(part)
    n_p = nz[part]
    nmax = int(n_p.max())
    Q = np.ones((G, nmax))
    inb = np.zeros(len(nz), dtype=np.int64) - 1
    inb[part] = np.arange(G)
    pick = pos_nz & (inb[row_g] >= 0)
    gi = inb[row_g[pick]]
    order = np.argsort(gi, kind="stable")
    gi = gi[order]
    vals = 1.0 - rv[pick][order]
    slot = np.arange(len(gi)) - np.searchsorted(gi, gi)
    Q[gi, slot] = vals

    def lfac(x):
        return lf[np.asarray(x).astype(np.int64)]

    f64 = np.float64
    with np.errstate(divide="ignore", invalid="ignore"):
        return group_moments(
            np, lfac, Q, n_p.astype(f64), m[part].astype(f64), c[part].astype(f64), J, T
        )


def device(x: Any) -> Any:
    """The device of an array (``array_api_compat``, imported when an array of another library than
    NumPy needs it)."""
    if isinstance(x, np.ndarray):
        return "cpu"
    from array_api_compat import device as of

    return of(x)


def _lcomb(xp: Any, lfac, n, k):
    """log C(n, k), -inf where k < 0 or k > n (integral float arrays of ``xp``; broadcasts)."""
    ok = (k >= 0) & (k <= n) & (n >= 0)
    zero = xp.zeros_like(n + k)
    nn, kk = xp.where(ok, n + zero, zero), xp.where(ok, k + zero, zero)
    return xp.where(ok, lfac(nn) - lfac(kk) - lfac(nn - kk), xp.full_like(zero, -math.inf))


def _symmetric_means(xp: Any, Q, n_p, J: int):
    """The bivariate elementary symmetric means ``f[a, b]`` (``a + b <= J``) of ``(q^2, q)`` over each
    group's documents (module docstring), by the recurrence over the documents: ``[G, J+1, J+1]``."""
    G, nmax = (int(d) for d in Q.shape)
    dev = device(Q)
    ar = xp.astype(xp.arange(J + 1, device=dev), Q.dtype)
    a = xp.reshape(ar, (1, J + 1, 1))
    b = xp.reshape(ar, (1, 1, J + 1))
    zero = xp.zeros((1, 1, 1), dtype=Q.dtype, device=dev)
    f = xp.broadcast_to(xp.where((a == 0) & (b == 0), zero + 1.0, zero), (G, J + 1, J + 1))
    za = xp.zeros((G, 1, J + 1), dtype=Q.dtype, device=dev)
    zb = xp.zeros((G, J + 1, 1), dtype=Q.dtype, device=dev)
    for i in range(nmax):
        active = xp.reshape(i < n_p, (G, 1, 1))
        q = xp.reshape(Q[:, i], (G, 1, 1))
        new = (i + 1.0 - a - b) * f
        new = new + a * (q * q) * xp.concat([za, f[:, :-1, :]], axis=1)
        new = new + b * q * xp.concat([zb, f[:, :, :-1]], axis=2)
        new = new / (i + 1.0)
        new = xp.where(a + b <= i + 1, new, zero)
        f = xp.where(active, new, f)
    return f


def _pair_weights(xp: Any, lfac, w, mm, nn, J: int, T: int):
    """``E[w_{p_j} w_{p_l}]`` for ``j < l`` (``[G, J, J]``, 0 elsewhere): the middle binomial summed by
    repeated prefix sums (hockey stick: ``C(x, d-1) = sum_{y<x} C(y, d-2)``), every term positive,
    each step rescaled by its maximum (log scale kept)."""
    G = int(w.shape[0])
    dev = device(w)
    dt = w.dtype
    p = xp.reshape(xp.astype(xp.arange(T, device=dev), dt), (1, T))
    jx = xp.reshape(xp.astype(xp.arange(J, device=dev), dt), (1, J, 1))
    base = _lcomb(xp, lfac, mm, nn)[:, 0]
    lw = xp.log(w)  # (G, T)
    lb = xp.reshape(lw, (G, 1, T)) + _lcomb(
        xp, lfac, xp.reshape(mm - 1.0 - p, (G, 1, T)), xp.reshape(nn - 1.0, (G, 1, 1)) - jx
    )
    bmax = xp.max(lb, axis=2, keepdims=True)
    bmax = xp.where(xp.isfinite(bmax), bmax, xp.zeros_like(bmax))
    beta = xp.exp(lb - bmax)
    zg = xp.zeros((G,), dtype=dt, device=dev)
    z1 = xp.zeros((G, 1), dtype=dt, device=dev)
    rows = []
    for jv in range(J):
        row = [zg] * (jv + 1)
        if jv < J - 1:
            la = lw + _lcomb(xp, lfac, p, xp.full_like(p, float(jv)))
            amax = xp.max(la, axis=1, keepdims=True)
            amax = xp.where(xp.isfinite(amax), amax, xp.zeros_like(amax))
            acc = xp.exp(la - amax)
            logsc = amax[:, 0]
            for lv in range(jv + 1, J):
                acc = xp.concat([z1, xp.cumulative_sum(acc[:, :-1], axis=1)], axis=1)
                mx = xp.max(acc, axis=1)
                ok = mx > 0
                safe = xp.where(ok, mx, xp.ones_like(mx))
                acc = xp.where(ok[:, None], acc / safe[:, None], acc)
                logsc = logsc + xp.where(ok, xp.log(safe), zg)
                tot = xp.sum(acc * beta[:, lv, :], axis=1)
                val = xp.exp(logsc + bmax[:, lv, 0] - base) * tot
                row.append(xp.where(tot > 0, val, zg))
        rows.append(xp.stack(row, axis=1))
    return xp.stack(rows, axis=1)


def group_moments(xp: Any, lfac, Q, n_p, m, c, J: int, T: int) -> tuple[Any, Any]:
    """``E[X_G]`` and ``E[X_G^2]`` of a batch of mixed tie groups (module docstring), arrays of the
    namespace ``xp``: ``Q`` ``[G, nmax]`` the ``q = 1 - R`` of each group's documents with ``R > 0``
    (any value past ``n_p[g]``), ``n_p``, ``m`` and ``c`` per group (their number, the group's size
    and the documents ranked above it, integral floats), ``J = min(n', T)`` and ``T`` (the group's
    positions inside the cutoff) equal over the batch; ``lfac(x) = log(x!)``.  The one formula of
    runs and tensors."""
    G = int(Q.shape[0])
    dev = device(Q)
    dt = Q.dtype
    f = _symmetric_means(xp, Q, n_p, J)
    f0 = f[:, 0, :]
    ey = f0[:, :J] - f0[:, 1 : J + 1]  # (G, J)
    # E[Pi_x Pi_y] = f[min(x, y), |x - y|], read from the flattened table
    jj, ll = np.meshgrid(np.arange(J), np.arange(J), indexing="ij")
    flat = xp.reshape(f, (G, (J + 1) * (J + 1)))

    def g2(x, y):
        idx = xp.asarray(np.minimum(x, y) * (J + 1) + np.abs(x - y), device=dev)
        return xp.reshape(xp.take(flat, xp.reshape(idx, (-1,)), axis=1), (G, J, J))

    eyy = g2(jj, ll) - g2(jj, ll + 1) - g2(jj + 1, ll) + g2(jj + 1, ll + 1)  # (G, J, J)
    # order statistics of the positions of the n' documents with R > 0 among the group's m
    mm, nn, cc = (xp.reshape(x, (G, 1)) for x in (m, n_p, c))
    p = xp.reshape(xp.astype(xp.arange(T, device=dev), dt), (1, T))
    w = 1.0 / (cc + p + 1.0)  # (G, T)
    jx = xp.reshape(xp.astype(xp.arange(J, device=dev), dt), (1, J, 1))
    lp = (
        _lcomb(xp, lfac, xp.reshape(p, (1, 1, T)), jx)
        + _lcomb(
            xp, lfac, xp.reshape(mm - 1.0 - p, (G, 1, T)), xp.reshape(nn - 1.0, (G, 1, 1)) - jx
        )
        - xp.reshape(_lcomb(xp, lfac, mm, nn), (G, 1, 1))
    )
    pj = xp.exp(lp)  # (G, J, T): P(p_j = p)
    A = xp.sum(pj * xp.reshape(w, (G, 1, T)), axis=2)
    upper = _pair_weights(xp, lfac, w, mm, nn, J, T)
    diag = xp.sum(pj * xp.reshape(w * w, (G, 1, T)), axis=2)  # E[w_{p_j}^2]
    eye = xp.asarray(np.eye(J, dtype=bool), device=dev)
    M = upper + xp.permute_dims(upper, (0, 2, 1))
    M = xp.where(eye, xp.reshape(diag, (G, 1, J)), M)
    return xp.sum(A * ey, axis=1), xp.sum(M * eyy, axis=(1, 2))
