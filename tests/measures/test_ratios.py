"""Ratios of counts are one division of exact counts (issue 10): a ratio that is 1 is exactly 1.0.

Judged@10 on the AskUbuntu run, where every retrieved document is judged, used to read
0.9999999999999999 (ten additions of 0.1), so the CLI's default table added a Judged@10 row
and "0.0% of the top 10 is unjudged".
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import tierank
from tierank.measures import parse_measure


def test_judged_at_10_is_exactly_one_on_askubuntu(real_data):
    d = real_data / "askubuntu"
    res = tierank.evaluate(
        str(d / "test.qrels"), str(d / "test.bm25.run"), ["nDCG@10", "Judged@10", "Judged@20"]
    )
    for m in ("Judged@10", "Judged@20"):
        s = res.stats[parse_measure(m)]
        for a in (s.oblivious, s.expected, s.min, s.max):
            assert (a == 1.0).all(), m
        assert (s.var == 0.0).all()
    agg = res.aggregate().set_index("measure")
    assert agg.loc["Judged@10", ["oblivious", "expected", "min", "max", "std"]].tolist() == [
        1.0,
        1.0,
        1.0,
        1.0,
        0.0,
    ]
    # the CLI's default table drops its added Judged@10 row when the smallest value reaches 1
    assert float(res.stats[parse_measure("Judged@10")].min.min()) == 1.0


@pytest.mark.parametrize("k", [3, 6, 7, 10, 49])
def test_count_ratios_are_single_divisions(k):
    """P@k, R@k, Judged@k, Rprec, F1@k over tie groups that cannot change them: the correctly
    rounded quotient of the counts, for every statistic."""
    top = [f"r{i}" for i in range(k)]  # one tie group of k relevant documents
    rest = [f"n{i}" for i in range(5)]  # then one tie group of judged non-relevant ones
    run = {"q": {d: 2.0 for d in top} | {d: 1.0 for d in rest}}
    qrels = {"q": {d: 1 for d in top} | {d: 0 for d in rest} | {"u1": 1}}
    res = tierank.evaluate(qrels, run, [f"P@{k}", f"R@{k}", f"Judged@{k}", "Rprec", f"F1@{k}"])
    pq = res.per_query().set_index("measure")
    n_plus = k + 1
    want = {
        f"P@{k}": Fraction(k, k),
        f"R@{k}": Fraction(k, n_plus),
        f"Judged@{k}": Fraction(1),
        "Rprec": Fraction(k, n_plus),
        f"F1@{k}": Fraction(2 * k, k + n_plus),
    }
    for m, v in want.items():
        got = pq.loc[m, ["oblivious", "expected", "min", "max"]].to_numpy(float)
        np.testing.assert_array_equal(got, float(v))  # float(v) is the correctly rounded quotient
        assert pq.loc[m, "std"] == 0.0
