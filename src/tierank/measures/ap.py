r"""Average precision, trec_eval's ``map`` / ``map_cut`` (normalised by all N+ relevant).

:math:`AP@k = \frac{1}{N_+}\sum_{i \le k} rel_i \cdot \frac{\sum_{j \le i} rel_j}{i}`.

Expectation over tie orderings (Yang et al. 2026, App. C, eqs. 23-25): for the
position :math:`i = c_{n-1} + t + 1` inside group :math:`G_n` (size :math:`m_n`,
:math:`r_n` relevant, :math:`R_{n-1}` relevant documents in earlier groups),
:math:`E[rel_i \sum_{j\le i} rel_j] = p_n\,(R_{n-1} + 1 + t\,\frac{r_n-1}{m_n-1})`
with :math:`p_n = r_n/m_n`, because the other :math:`t` positions of the group
ahead of :math:`i` hold, given :math:`rel_i = 1`, a sample without replacement
from the remaining :math:`m_n-1` documents of which :math:`r_n-1` are relevant.

The variance of AP needs fourth-order joint inclusion probabilities and has no
closed form implemented here: its ``std`` is reported as empty (NaN / null),
except where min == max, when it is exactly 0.
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
    has_variance = False

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
        r = mean * m
        csum = np.concatenate(([0.0], np.cumsum(prep.relevant(self.level))))
        before = csum[prep.gstart[:-1]] - csum[prep.qstart[prep.gq]]
        g = prep.gid[rows]
        t = prep.pos[rows] - prep.gpos0[g]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(m[g] > 1, (r[g] - 1.0) / (m[g] - 1.0), 0.0)
        term = mean[g] * (before[g] + 1.0 + t * frac) / pos1
        expected = np.bincount(qi, weights=term, minlength=prep.nq) * norm
        lo, hi = value("pessimistic"), value("optimistic")
        var = np.where(hi == lo, 0.0, np.nan)  # no spread: exactly 0; otherwise not derived
        return Stats(value("policy"), expected, lo, hi, var)
