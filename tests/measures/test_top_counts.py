"""The order-free counts of `tierank.measures.counts` (the flagged documents among the first k ranks,
the set measures' one count per query) against every ordering of every tie group."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from tierank.measures import parse_measure
from tierank.measures.counts import flag_cumsum, hits, row_cumsum, top_counts
from tierank.settings import EvalSettings
from tierank.ties import prepare


def _prepared(run, qrels, max_depth):
    depth = None if max_depth == float("inf") else max_depth
    return prepare(tierank.to_run(run), tierank.to_qrels(qrels), EvalSettings(max_depth=depth))


def _brute(prep, flags, k):
    """Per query: (policy count, mean, population variance, min, max) of the flagged rows among the
    first ceil(min(k, max_depth)) ranks, over every ordering of every tie group."""
    out = []
    for q in range(prep.nq):
        lo, hi = int(prep.qstart[q]), int(prep.qstart[q + 1])
        kq = min(float(np.broadcast_to(k, (prep.nq,))[q]), prep.max_depth)
        read = hi - lo if math.isinf(kq) else min(hi - lo, math.ceil(kq))
        groups = [
            list(flags[a:b])
            for a, b in zip(prep.gstart[:-1].tolist(), prep.gstart[1:].tolist())
            if lo <= a < hi
        ]
        counts = [
            sum(list(itertools.chain.from_iterable(combo))[:read])
            for combo in itertools.product(*(set(itertools.permutations(g)) for g in groups))
        ]
        policy = sum(flags[lo : lo + read])
        out.append(
            (
                policy,
                statistics.fmean(counts),
                statistics.pvariance(counts),
                min(counts),
                max(counts),
            )
        )
    return out


def _check(prep, flags, k):
    got = top_counts(prep, row_cumsum(prep, ("test", flags.tobytes()), lambda: flags), k)
    for q, (policy, mean, var, lo, hi) in enumerate(_brute(prep, flags.tolist(), k)):
        assert got[0][q] == policy
        assert math.isclose(got[1][q], mean, abs_tol=1e-12)
        assert math.isclose(got[4][q], var, abs_tol=1e-12)
        assert (got[2][q], got[3][q]) == (lo, hi)
        if lo == hi:
            assert got[4][q] == 0.0  # a count no ordering changes has variance exactly 0


@settings(max_examples=examples(300), deadline=None)
@given(
    collection(),
    st.sampled_from([0, 1, 2, 2.5, 3, 5, 100, float("inf")]),
    st.sampled_from([float("inf"), 1, 2, 4]),
)
def test_top_k_counts_match_every_ordering(data, k, depth):
    _, run, qrels = data
    if not qrels:
        return
    prep = _prepared(run, qrels, depth)
    if prep.nq == 0:
        return
    _check(prep, prep.relevant(), k)
    _check(prep, np.isnan(prep.grade), k)


@settings(max_examples=examples(200), deadline=None)
@given(collection(), st.data())
def test_per_query_cutoffs_match_every_ordering(data, draw):
    _, run, qrels = data
    if not qrels:
        return
    prep = _prepared(run, qrels, float("inf"))
    if prep.nq == 0:
        return
    k = np.array(draw.draw(st.lists(st.integers(0, 8), min_size=prep.nq, max_size=prep.nq)), float)
    _check(prep, prep.relevant(), k)


def test_cached_counts_are_per_level_and_read_only():
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0}}
    prep = _prepared(run, {"q": {"a": 1, "b": 2, "c": 0}}, float("inf"))
    c1, c2 = flag_cumsum(prep, "rel", 1), flag_cumsum(prep, "rel", 2)
    # trec_eval's order inside the tie: docid descending, so a, c, b
    assert c1.tolist() == [0, 1, 1, 2] and c2.tolist() == [0, 0, 0, 1]
    assert not c1.flags.writeable
    assert hits(prep, "rel", 1).tolist() == [2.0] and hits(prep, "judged").tolist() == [3.0]


def test_set_counts_never_hand_out_the_shared_cached_counts():
    """A result's counts are its own: writing into NumRelRet's values does not change what the other
    set measures read from the counts cached on the same `Prepared`."""
    from tierank.io.convert import to_qrels, to_run

    qrels = to_qrels({"q": {"a": 1, "b": 1, "c": 0}})
    run = to_run({"q": {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}})
    prep = prepare(run, qrels, EvalSettings())
    s = parse_measure("num_rel_ret").compute(prep)
    s.oblivious[0] = 99.0
    assert parse_measure("num_rel_ret").compute(prep).oblivious.tolist() == [2.0]
    assert parse_measure("set_P").compute(prep).oblivious.tolist() == [0.5]
