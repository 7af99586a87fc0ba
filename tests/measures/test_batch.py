"""A family's several cutoffs computed in one pass (``Measure.batch_key`` / ``stats_batch``) give the
statistics each measure gives computed alone, in all five columns, bit for bit.

The runs are small and heavily tied (``measures.strategies``): cutoffs inside tie groups, past the
list, per-query cutoffs (RprecMult, whose rank moves with N+), queries without a relevant document,
a depth limit that cuts tie groups, graded gains and condensed lists.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from tierank.measures import parse_measure
from tierank.measures.base import compute_all
from tierank.measures.prefixes import prefix_sums, segment_cumsum, starts_of
from tierank.settings import EvalSettings
from tierank.ties import prepare


def _depth(depth: float) -> int | None:
    """``EvalSettings.max_depth`` of a depth (None: no limit)."""
    return None if depth == float("inf") else int(depth)


FAMILIES = [
    "P",
    "R",
    "F1",
    "Hits",
    "Judged",
    "R_cap",
    "RelP",
    "nDCG",
    "nDCG(dcg='exp-log2',gains={1:2})",
    "RBP(p=0.6)",
    "RBP(p=0.9,gain='trec_eval')",
    "AP",
    "AP(rel=2)",
]
NEEDS_CUTOFF = {"P", "F1", "Judged", "R_cap", "RelP"}
COLUMNS = ("oblivious", "expected", "min", "max", "var")


def _measures(family: str, cutoffs: list[int]) -> list:
    ms = [parse_measure(f"{family}@{k}") for k in cutoffs]
    if family.split("(")[0] not in NEEDS_CUTOFF:
        ms.append(parse_measure(family))  # no cutoff: every rank
    return list(dict.fromkeys(ms))


def _check(prep, measures) -> None:
    together = compute_all(prep, measures)
    for m in measures:
        alone = m.compute(prep)
        for col in COLUMNS:
            np.testing.assert_array_equal(
                getattr(together[m], col), getattr(alone, col), err_msg=f"{m} {col}"
            )


@settings(max_examples=examples(100), deadline=None)
@given(
    collection(max_queries=4),
    st.sampled_from(FAMILIES),
    st.lists(st.integers(1, 9), min_size=2, max_size=5),
    st.sampled_from([float("inf"), 2, 4]),
    st.sampled_from(["trec_eval", "input"]),
)
def test_cutoffs_together_equal_each_alone(data, family, cutoffs, depth, policy):
    _, run, qrels = data
    if not qrels:
        return
    measures = _measures(family, cutoffs)
    prep = prepare(
        tierank.to_run(run),
        tierank.to_qrels(qrels),
        # complete: qrels queries the run lacks have no rows
        EvalSettings(tie_break=policy, max_depth=_depth(depth), complete=True),
        measures=measures,
    )
    assert len({m.batch_key() for m in measures}) == 1 and measures[0].batch_key() is not None
    _check(prep, measures)


@settings(max_examples=examples(100), deadline=None)
@given(
    collection(max_queries=4),
    st.lists(st.sampled_from([0.2, 0.5, 0.9, 1.0, 1.4, 2.0, 3.5]), min_size=2, max_size=5),
    st.sampled_from([1, 2]),
)
def test_per_query_cutoffs_together_equal_each_alone(data, mults, rel):
    """RprecMult: each query's cutoff floor(x N+ + 0.9) depends on its N+ (0 for a query without
    a relevant document), so the cutoffs are in a different order in different queries only
    through N+."""
    _, run, qrels = data
    if not qrels:
        return
    measures = list(dict.fromkeys(parse_measure(f"RprecMult(rel={rel})@{x}") for x in mults))
    prep = prepare(
        tierank.to_run(run), tierank.to_qrels(qrels), EvalSettings(complete=True), measures=measures
    )
    _check(prep, measures)


@settings(max_examples=examples(100), deadline=None)
@given(collection(max_queries=4), st.lists(st.integers(1, 9), min_size=2, max_size=4))
def test_judged_only_cutoffs_together_equal_each_alone(data, cutoffs):
    """nDCG on the condensed list (judged_only): the view is built once for the batch."""
    _, run, qrels = data
    if not qrels:
        return
    measures = _measures("nDCG(judged_only=True)", cutoffs)
    prep = prepare(tierank.to_run(run), tierank.to_qrels(qrels), EvalSettings(), measures=measures)
    _check(prep, measures)


@settings(max_examples=examples(100), deadline=None)
@given(
    collection(max_queries=4),
    st.lists(
        st.sampled_from(
            ["P@1", "P@3", "R@2", "R", "RelP@2", "RelP@8", "Hits@3", "R_cap@2", "Rprec"]
            + ["RprecMult@0.5", "RprecMult@2", "SetRelP"]
        ),
        min_size=2,
        max_size=6,
        unique=True,
    ),
    st.sampled_from([float("inf"), 3]),
)
def test_unit_weight_families_together_equal_each_alone(data, names, depth):
    """The families whose every rank weighs 1 sum the same counts: one batch across families,
    each measure divided by its own denominator."""
    _, run, qrels = data
    if not qrels:
        return
    measures = [parse_measure(n) for n in names]
    assert len({m.batch_key() for m in measures}) == 1
    prep = prepare(
        tierank.to_run(run),
        tierank.to_qrels(qrels),
        EvalSettings(max_depth=_depth(depth)),
        measures=measures,
    )
    _check(prep, measures)


def test_a_batch_shares_its_sums():
    """Measures are batched only where their sums are the same: one family with equal parameters
    but the cutoff, or the families with unit weights over the same document values; a family not
    known to weigh its ranks independently of the cutoff is computed alone."""
    p5, p10 = parse_measure("P@5"), parse_measure("P@10")
    assert p5.batch_key() == p10.batch_key() == parse_measure("R@3").batch_key() is not None
    assert parse_measure("P(rel=2)@5").batch_key() != p5.batch_key()
    assert parse_measure("Judged@5").batch_key() != p5.batch_key()  # judged, not relevant
    assert parse_measure("F1@5").batch_key() != p5.batch_key()  # weight 2
    assert (
        parse_measure("nDCG(dcg='exp-log2')@5").batch_key() != parse_measure("nDCG@5").batch_key()
    )
    assert parse_measure("RBP(p=0.5)").batch_key() != parse_measure("RBP(p=0.6)").batch_key()
    assert parse_measure("AP@5").batch_key() == parse_measure("AP").batch_key()
    assert parse_measure("RR@5").batch_key() is None  # computed alone (sharing cached ranks)


@pytest.mark.parametrize("shape", ["matrix", "chained"])
def test_prefix_sums_are_bincount_sums(shape):
    """`prefix_sums` gives per segment the float ``np.bincount`` gives over the same leading entries
    (sequential from 0.0, never -0.0), by running sums in a matrix, or chained by increasing counts
    where one long segment among many short ones would make the matrix too large; counts of 0,
    counts in a different order in different segments."""
    rng = np.random.default_rng(7)
    lens = np.array([1, 3, 0, 5, 2, 4])
    if shape == "chained":
        lens = np.concatenate((lens, [3000], np.ones(2000, np.int64)))
    start = np.concatenate(([0], np.cumsum(lens)))
    seg = np.repeat(np.arange(len(lens)), lens)
    x = rng.standard_normal(len(seg)) * 10.0 ** rng.integers(-8, 8, len(seg))
    x[::4] = -0.0
    counts = [np.minimum(lens, k) for k in (0, 1, 2, 4, 10**6)]
    counts.append(rng.integers(0, lens + 1))
    got = prefix_sums(x, seg, start, counts)
    pos = np.arange(len(x)) - start[seg]
    for k, s in zip(counts, got):
        take = pos < k[seg]
        np.testing.assert_array_equal(
            s, np.bincount(seg[take], weights=x[take], minlength=len(lens))
        )
        assert not (np.signbit(s) & (s == 0)).any()
    ints = np.round(np.clip(x, -1e6, 1e6))  # integers whose sums are exact: running sums
    for k, s in zip(counts, prefix_sums(ints, seg, start, counts)):
        take = pos < k[seg]
        np.testing.assert_array_equal(
            s, np.bincount(seg[take], weights=ints[take], minlength=len(lens))
        )
    flags = x > 0  # 0/1 values: integer running counts, given as float64
    for k, s in zip(counts, prefix_sums(flags, seg, start, counts)):
        take = pos < k[seg]
        assert s.dtype == np.float64
        np.testing.assert_array_equal(
            s, np.bincount(seg[take], weights=flags[take], minlength=len(lens))
        )


def test_segment_cumsum_is_each_segment_s_own_cumsum():
    """`segment_cumsum` equals ``np.cumsum`` over each segment alone, bit for bit, whatever the
    segments before it hold (magnitudes from 1e-8 to 1e20, empty segments, one long segment among
    many short ones); `starts_of` gives the bounds of runs of equal keys."""
    rng = np.random.default_rng(11)
    lens = np.concatenate(([0, 1, 3, 0, 5, 2, 4, 700], rng.integers(0, 9, 300), [0]))
    bounds = np.concatenate(([0], np.cumsum(lens)))
    x = rng.standard_normal(int(bounds[-1])) * 10.0 ** rng.integers(-8, 21, int(bounds[-1]))
    got = segment_cumsum(x, bounds)
    for a, b in zip(bounds[:-1], bounds[1:]):
        np.testing.assert_array_equal(got[a:b], np.cumsum(x[a:b]))
    keys = np.repeat(np.arange(len(lens)), lens)
    np.testing.assert_array_equal(
        starts_of(keys), np.unique(np.append(bounds[:-1][lens > 0], len(x)))
    )
    assert segment_cumsum(np.zeros(0), np.array([0, 0])).shape == (0,)
