r"""Average precision, trec_eval's ``map`` / ``map_cut`` (normalised by all N+ relevant).

:math:`AP@k = \frac{1}{N_+}\sum_{i \le k} rel_i \cdot \frac{\sum_{j \le i} rel_j}{i}`.

Expectation over tie orderings (Yang et al. 2026, App. C, eqs. 23-25): for the
position :math:`i = c_{n-1} + t + 1` inside group :math:`G_n` (size :math:`m_n`,
:math:`r_n` relevant, :math:`R_{n-1}` relevant documents in earlier groups),
:math:`E[rel_i \sum_{j\le i} rel_j] = p_n\,(R_{n-1} + 1 + t\,\frac{r_n-1}{m_n-1})`
with :math:`p_n = r_n/m_n`, because the other :math:`t` positions of the group
ahead of :math:`i` hold, given :math:`rel_i = 1`, a sample without replacement
from the remaining :math:`m_n-1` documents of which :math:`r_n-1` are relevant.

Exact variance (derived for tierank; checked against brute force in the tests).
The number of relevant documents ranked before group :math:`G_n` is the fixed
:math:`R_{n-1}`, so :math:`N_+ \cdot AP = \sum_n X_n` with independent terms

.. math:: X_n = (R_{n-1}+1) A_n + B_n, \quad A_n = \sum_t w_t x_t, \quad
          B_n = \sum_{s<t} w_t x_s x_t,

over the group's positions :math:`t` (offsets, weight :math:`w_t = 1/\text{rank}`,
0 past the cutoff) and exchangeable indicators :math:`x_t` with joint inclusion
moments :math:`\mu_j = (r)_j/(m)_j`.  With :math:`W=\sum w_t`,
:math:`S_1=\sum t w_t`, :math:`S_2=\sum t w_t^2`, :math:`D_a = \sum_{t>a} w_t + a w_a`
(the weight of the pairs holding index :math:`a`) and :math:`Q = \sum_a D_a^2 - 2S_2`:

* :math:`E[A^2] = \mu_1 \sum w^2 + \mu_2 (W^2 - \sum w^2)`,
* :math:`E[AB] = \mu_3 W S_1 + (\mu_2-\mu_3) \sum_a w_a D_a`,
* :math:`E[B^2] = \mu_2 S_2 + \mu_3 Q + \mu_4 (S_1^2 - S_2 - Q)`,

and :math:`Var[AP] = \sum_n Var[X_n] / N_+^2`.
"""

from __future__ import annotations

import numpy as np

from .base import Measure, Stats, register
from .linear import REL, _group_moments, _safe_inv


@register
class AP(Measure):
    """Average precision (trec_eval map; with @k, map_cut_k)."""

    family = "AP"
    description = "average precision, normalised by N+ (trec_eval map / map_cut)"
    schema = (REL,)
    bounds_refusal = ("an unjudged document assumed relevant raises N+ and can lower AP, so neither "
                      "assumption bounds it (Yang, Moffat & Turpin, sec. 2)")

    def _rows(self, prep):
        return np.flatnonzero(prep.pos < self.k) if np.isfinite(self.k) else np.arange(prep.n)

    def compute(self, prep) -> Stats:
        rows = self._rows(prep)
        qi = prep.qi[rows]
        pos1 = prep.pos[rows] + 1.0
        norm = _safe_inv(prep.nrel(self.level))
        # rows are the first min(k, len) positions of each query: contiguous per query
        qfirst = np.flatnonzero(np.diff(qi, prepend=-1))
        qlen = np.diff(np.append(qfirst, len(rows)))

        def value(which: str) -> np.ndarray:
            a = prep.arrangement(which, "rel", self.level)[rows].astype(np.float64)
            cs = np.cumsum(a)
            base = np.repeat(cs[qfirst] - a[qfirst], qlen)
            return np.bincount(qi, weights=a * (cs - base) / pos1, minlength=prep.nq) * norm

        mean, _ = _group_moments(prep, "rel", self.level)
        m = prep.gsize.astype(np.float64)
        r = np.rint(mean * m)
        csum = np.concatenate(([0.0], np.cumsum(prep.relevant(self.level))))
        before = csum[prep.gstart[:-1]] - csum[prep.qstart[prep.gq]]
        g = prep.gid[rows]
        t = prep.pos[rows] - prep.gpos0[g]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(m[g] > 1, (r[g] - 1.0) / (m[g] - 1.0), 0.0)
        term = mean[g] * (before[g] + 1.0 + t * frac) / pos1
        expected = np.bincount(qi, weights=term, minlength=prep.nq) * norm
        var = self._variance(prep, rows, g, t, pos1, m, r, before) * norm * norm
        return Stats(value("policy"), expected, value("pessimistic"), value("optimistic"), var)

    @staticmethod
    def _variance(prep, rows, g, t, pos1, m, r, before) -> np.ndarray:
        """Exact Var[N+ AP] per query (module docstring)."""
        ng = len(m)
        w = 1.0 / pos1
        tf = t.astype(np.float64)

        def gsum(x):
            return np.bincount(g, weights=x, minlength=ng)

        W, Sw2, S1, S2 = gsum(w), gsum(w * w), gsum(tf * w), gsum(tf * w * w)
        # inclusive cumulative weight inside the group (rows hold each group's leading positions)
        cs = np.cumsum(w)
        first = np.flatnonzero(np.diff(g, prepend=-1))
        base = np.repeat(cs[first] - w[first], np.diff(np.append(first, len(g))))
        D = (W[g] - (cs - base)) + tf * w
        Q = gsum(D * D) - 2.0 * S2
        WD = gsum(w * D)

        def mu(j):  # (r)_j / (m)_j, 0 where m < j
            num = np.ones(ng)
            den = np.ones(ng)
            for i in range(j):
                num *= np.clip(r - i, 0, None)
                den *= m - i
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(m >= j, num / np.where(m >= j, den, 1.0), 0.0)

        mu1, mu2, mu3, mu4 = mu(1), mu(2), mu(3), mu(4)
        ea, eb = mu1 * W, mu2 * S1
        var_a = mu1 * Sw2 + mu2 * (W * W - Sw2) - ea * ea
        cov = mu3 * W * S1 + (mu2 - mu3) * WD - ea * eb
        var_b = mu2 * S2 + mu3 * Q + mu4 * (S1 * S1 - S2 - Q) - eb * eb
        c = before + 1.0
        vg = np.maximum(c * c * var_a + 2.0 * c * cov + var_b, 0.0)
        return np.bincount(prep.gq, weights=vg, minlength=prep.nq)
