"""The lattice of prefix states (measures/lattice.py) against every distinct ordering of tie groups.

A path sum whose term depends on the position, the value placed and the sum placed before it: its
mean, variance, largest and smallest value over the orderings of each group, from the forward and
max-plus passes of a batch of groups at once (split into several batches), against brute force.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import distinct_orderings, examples
from tierank.measures import lattice
from tierank.measures.lattice import Lattice, chunks, fits, levels


def _term(k, before, y):
    """An arbitrary step term of (position, sum placed before, value placed)."""
    return y * math.cos(0.7 * k + 0.3) + 0.25 * before * y * y - 0.1 * k * before


def _path(order: list, steps: int) -> float:
    total, before = 0.0, 0.0
    for k, y in enumerate(order[:steps]):
        if y:
            total += _term(k, before, y)
        before += y
    return total


group = st.lists(st.sampled_from([0, 0, 0, 1, 2, -1, 3]), min_size=1, max_size=7)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(group, min_size=1, max_size=4), st.data(), st.integers(1, 40))
def test_moments_and_extremes_match_every_ordering(groups, data, batch):
    steps = np.array([data.draw(st.integers(1, len(g))) for g in groups])
    size = np.array([len(g) for g in groups])
    values = np.array([float(y) for g in groups for y in g])
    first = np.cumsum(size) - size
    lv = levels(values, first, size)
    assert fits(lv, steps).all()
    mean, m2 = np.zeros(len(groups)), np.zeros(len(groups))
    hi, lo = np.zeros(len(groups)), np.zeros(len(groups))
    for ch in chunks(lv.states, steps, batch=batch):
        lat = Lattice.build(lv, size, steps, ch)

        def coef(src, k, g, lvl, lat=lat):
            y = lat.level[g, lvl]
            return (_term(k, lat.total[src], y),)

        def apply(M, c):
            t = c[0]
            return np.stack([M[0], M[1] + t * M[0], M[2] + t * (2 * M[1] + t * M[0])])

        M = np.zeros((3, lat.nstates))
        M[0, lat.off[:-1]] = 1.0
        ext = np.array([[-np.inf], [np.inf]]) * np.ones(lat.nstates)
        ext[:, lat.off[:-1]] = 0.0
        lat.forward(M, coef, apply, ext)
        p, s1, s2 = lat.group_sum(M)
        assert np.allclose(p, 1.0)
        mean[lat.order], m2[lat.order] = s1, s2
        hi[lat.order] = np.maximum.reduceat(ext[0], lat.off[:-1])
        lo[lat.order] = np.minimum.reduceat(ext[1], lat.off[:-1])
    for i, g in enumerate(groups):
        vals = [_path(o, int(steps[i])) for o in distinct_orderings(g)]
        mu = statistics.fmean(vals)
        assert math.isclose(mean[i], mu, abs_tol=1e-9), (g, steps[i])
        assert math.isclose(m2[i] - mean[i] ** 2, statistics.pvariance(vals), abs_tol=1e-9)
        assert math.isclose(hi[i], max(vals), abs_tol=1e-12) and math.isclose(
            lo[i], min(vals), abs_tol=1e-12
        )


def test_levels_count_the_nonzero_values_and_the_zeros():
    lv = levels(np.array([2.0, 0.0, 2.0, -1.0, 0.0, 0.0]), np.array([0, 4]), np.array([4, 2]))
    assert lv.level.tolist() == [[-1.0, 2.0], [0.0, 0.0]]
    assert lv.count.tolist() == [[1, 2], [0, 0]]
    assert lv.zeros.tolist() == [1, 2]
    assert lv.states.tolist() == [6.0, 1.0]


def test_too_large_lattices_do_not_fit(monkeypatch):
    lv = levels(np.arange(1.0, 7.0), np.array([0, 3]), np.array([3, 3]))
    assert fits(lv, np.array([3, 3])).all()  # 2^3 states each
    monkeypatch.setattr(lattice, "MAX_STATES", 7)
    assert not fits(lv, np.array([3, 3])).any()
    monkeypatch.setattr(lattice, "MAX_STATES", 8)
    monkeypatch.setattr(lattice, "MAX_CELLS", 16)
    assert fits(lv, np.array([2, 2])).all() and not fits(lv, np.array([3, 3])).any()
