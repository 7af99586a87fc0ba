"""The pairs of a comparison: every unordered pair of systems, the higher-ranked first, with its paired
tests ([`paired_tests`][tierank.analysis.inference.paired_tests]) on the inference's scale, its flags, the
odds that ties leave it either way, and the multiple-comparison correction across all pairs."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...measures.base import Measure
from .. import inference
from ..significance import ZERO_TOL, adjust_pvalues, diff_moments, prob_above
from .results import PairComparison, SystemSummary
from .scales import Evaluated, back
from .settings import CompareSettings


def _sign(x: float) -> int:
    return 0 if abs(x) <= ZERO_TOL else (1 if x > 0 else -1)


def compare_pairs(
    m: Measure,
    ranked: list[str],
    main: Evaluated,
    banded: Evaluated | None,
    o: CompareSettings,
    infer: dict,
) -> list[PairComparison]:
    """Every unordered pair of ``ranked``, the higher-ranked first: its tests (on the expected values,
    the oblivious values and, with a band, the banded expected values) and flags, corrected."""
    pair_names = [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]
    paired = o.paired()  # the oblivious and the banded values: no interval asked of them
    tests = inference.paired_tests(
        main.matrix(ranked, "expected"),
        ranked,
        pairs=pair_names,
        boot=infer["boot"],
        settings=replace(paired, ci=o.ci),
    )
    obl = inference.paired_tests(
        main.matrix(ranked, "oblivious"), ranked, pairs=pair_names, settings=paired
    )
    band = (
        None
        if banded is None
        else inference.paired_tests(
            banded.matrix(ranked, "expected"), ranked, pairs=pair_names, settings=paired
        )
    )
    n = len(next(iter(main.raw.values()))["expected"])
    pairs = [
        _pair(
            m,
            n,
            pair,
            main,
            (tests[k], obl[k], None if band is None else band[k]),
            o,
            infer["hsd"],
            banded,
        )
        for k, pair in enumerate(pair_names)
    ]
    return _corrected(pairs, o)


def _corrected(pairs: list[PairComparison], o: CompareSettings) -> list[PairComparison]:
    """The pairs with their p-values adjusted by ``o.correction`` (the banded ones a family of their
    own), ``significant`` reading the adjusted value."""
    if o.correction is None or not pairs:
        return pairs
    adjusted = adjust_pvalues([pc.p for pc in pairs], o.correction)
    pairs = [
        replace(pc, p_adjusted=float(v), significant=bool(v < o.alpha))
        for pc, v in zip(pairs, adjusted)
    ]
    if o.band is not None:
        adjusted = adjust_pvalues([pc.p_banded for pc in pairs], o.correction)
        pairs = [
            replace(pc, p_banded_adjusted=float(v), significant_banded=bool(v < o.alpha))
            for pc, v in zip(pairs, adjusted)
        ]
    return pairs


def _pair(
    m: Measure,
    n: int,
    names: tuple[str, str],
    main: Evaluated,
    tests: tuple[inference.PairTest, inference.PairTest, inference.PairTest | None],
    o: CompareSettings,
    hsd: inference.TukeyHSD | None,
    banded: Evaluated | None,
) -> PairComparison:
    """One pair's comparison from its tests on the inference scale (`SCALES`) and the systems'
    summaries on the measure's own."""
    a, b = names
    pt, pt_obl, pt_band = tests
    sa, sb = main.summaries[a], main.summaries[b]
    extra = _test_fields(m.aggregator, n, pt, sa, sb, main.bounds)
    if pt_band is not None and banded is not None:
        extra.update(
            p_banded=pt_band.p,
            diff_banded=banded.summaries[a].expected - banded.summaries[b].expected,
            significant_banded=bool(pt_band.p < o.alpha),
        )
    if hsd is not None:
        extra["p_tukey"] = hsd.pvalue(a, b)
    std_diff, above, above_bound = _tie_odds(m.aggregator, n, sa, sb, main.raw[a], main.raw[b])
    d_exp, d_obl = sa.expected - sb.expected, sa.oblivious - sb.oblivious
    se, so = _sign(d_exp), _sign(d_obl)
    return PairComparison(
        a=a,
        b=b,
        diff_expected=d_exp,
        diff_oblivious=d_obl,
        t=pt.t,
        p=pt.p,
        p_oblivious=pt_obl.p,
        order_flip=bool(se != 0 and so != 0 and se != so),
        undecidable=bool(sa.min <= sb.max + ZERO_TOL and sb.min <= sa.max + ZERO_TOL),
        significant=bool(pt.p < o.alpha),
        std_diff=std_diff,
        p_a_above=above,
        p_a_above_bound=above_bound,
        **extra,
    )


def _test_fields(
    agg: str,
    n: int,
    pt: inference.PairTest,
    sa: SystemSummary,
    sb: SystemSummary,
    bounds: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """A pair's fields from its test: the statistic and the intervals on the measure's scale (a ratio
    of geometric means for a geometric-mean measure, its log within ``+-(hi - lo)`` of the values'
    ``bounds``)."""
    spread = None if bounds is None else (bounds[0] - bounds[1], bounds[1] - bounds[0])
    location = inference.PAIRED_TESTS[pt.test_used].statistic is None  # a mean difference
    out: dict[str, Any] = dict(
        test=pt.test,
        test_used=pt.test_used,
        fallback=pt.fallback,
        statistic=pt.statistic * n if agg == "sum" and location else pt.statistic,
        method=pt.method,
        samples=pt.samples,
        seed=pt.seed,
        se=pt.se,
        effect_size=pt.effect_size,
        effect_ci_low=pt.effect_ci_low,
        effect_ci_high=pt.effect_ci_high,
        p_test=pt.p_test,
        p_floor=pt.p_floor,
    )
    if agg == "geometric_mean":  # a difference of log values is a ratio of geometric means
        out.update(
            diff_ci_low=float("nan"),
            diff_ci_high=float("nan"),
            ratio=sa.expected / sb.expected if sb.expected > 0 else float("nan"),
            ratio_ci_low=float(back(agg, n, pt.diff_ci_low, spread)),
            ratio_ci_high=float(back(agg, n, pt.diff_ci_high, spread)),
        )
    else:
        out.update(
            diff_ci_low=float(back(agg, n, pt.diff_ci_low)),
            diff_ci_high=float(back(agg, n, pt.diff_ci_high)),
        )
    return out


def _tie_odds(
    agg: str,
    n: int,
    sa: SystemSummary,
    sb: SystemSummary,
    ra: dict[str, np.ndarray],
    rb: dict[str, np.ndarray],
) -> tuple[float, float, float]:
    """``std_diff``, ``p_a_above`` and ``p_a_above_bound`` of a pair: the moments of the difference of
    the summaries over both runs' independent tie orderings, and the probabilities from them."""
    if agg == "geometric_mean":  # the summaries' own moments over tie orderings
        mean_d, var_d = sa.expected - sb.expected, sa.std**2 + sb.std**2
        if not math.isfinite(var_d):
            var_d = 0.0 if sa.min == sa.max and sb.min == sb.max else float("nan")
        lo, hi, scale = sa.min - sb.max, sa.max - sb.min, 1.0
    else:  # the means' moments; a sum's probability is its mean's, its spread n times
        mean_d, var_d = diff_moments(ra["expected"], ra["var"], rb["expected"], rb["var"])
        lo = float(np.mean(ra["min"]) - np.mean(rb["max"]))
        hi = float(np.mean(ra["max"]) - np.mean(rb["min"]))
        scale = float(n) if agg == "sum" else 1.0
    if math.isfinite(var_d):
        above, above_bound = prob_above(mean_d, var_d, lo=lo, hi=hi)
    else:
        above = above_bound = float("nan")
    return scale * math.sqrt(var_d), above, above_bound
