"""Paired tests of pairs of systems on their per-query values
([`paired_tests`][tierank.analysis.inference.paired_tests]): the registered test of each pair (`tierank.analysis.paired`),
the exact randomization test where it cannot decide, the floor of every p, and each pair's mean
difference and Cohen's d_z with their intervals."""

from __future__ import annotations

import warnings
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np

from ...errors import TierankInputError
from ..paired import REGISTRY as PAIRED_TESTS
from ..paired.base import REL_TOL as _REL_TOL
from ..paired.base import Outcome, Pairs, interval_supported, nonzero, sign_flip_floor
from ..paired.randomization import randomization as _randomization
from .intervals import bootstrap_interval, dz_interval, t_interval
from .resampling import bootstrap_means
from .results import PairTest
from .settings import PairedSettings, matrix


def paired_tests(
    values,
    names=None,
    *,
    pairs=None,
    boot: np.ndarray | None = None,
    settings: PairedSettings | None = None,
    **keywords: Any,
) -> tuple[PairTest, ...]:
    """Paired two-sided tests of pairs of columns of ``values`` (queries x systems), ``a`` minus ``b``.

    Parameters
    ----------
    values, names
        As [`mean_cis`][tierank.analysis.inference.mean_cis].
    pairs
        ``(a, b)`` name pairs; default every pair ``i < j`` in the order of ``names``.
    boot
        Optional precomputed [`bootstrap_means`][tierank.analysis.inference.bootstrap_means] of ``values`` (same resamples and seed).
    settings
        The test, the intervals' level and method, the resamples, sign flips and seed: a
        [`PairedSettings`][tierank.analysis.inference.PairedSettings] (default: its defaults).
    keywords
        Any field of [`PairedSettings`][tierank.analysis.inference.PairedSettings] by name (``test``,
        ``level``, ``ci``, ``resamples``, ``samples``, ``seed``), applied over ``settings``.

    Examples
    --------
    >>> X = [[0.9, 0.1], [0.8, 0.3], [0.7, 0.6], [0.6, 0.2]]
    >>> [(p.test, round(p.p_test, 4), p.p) for t in ("t", "wilcoxon", "randomization") for p in paired_tests(X, ["A", "B"], test=t)]
    [('t', 0.0526, 0.125), ('wilcoxon', 0.125, 0.125), ('randomization', 0.125, 0.125)]

    4 nonzero differences: no p below ``2 / 2^4`` (`PairTest`'s ``p_floor``), whatever the test.
    """
    X, names = matrix(values, names)
    s = PairedSettings.of(settings, keywords)
    ij = _pair_columns(names, pairs)
    ctx = _t_statistics(X, ij, _pairs_of(X, ij, s, boot))
    return _pair_tests(
        names, ij, ctx, _decided(PAIRED_TESTS[s.test].implementation(), ctx, s.test), s
    )


def _pairs_of(X: np.ndarray, ij: np.ndarray, s: PairedSettings, boot: np.ndarray | None) -> Pairs:
    """What every test receives about the pairs ``ij`` of columns of ``X``: their differences, which
    are all zero, and their bootstrap means where ``s`` needs them (``boot``, or drawn here); the t
    statistics not yet (`_t_statistics`)."""
    D = X[:, ij[:, 0]] - X[:, ij[:, 1]]  # n x P
    tol = _REL_TOL * np.maximum(1.0, np.abs(X).max(initial=0.0))
    boot_d = None
    if s.bootstrap:
        if boot is None:
            boot = bootstrap_means(X, s.resamples, s.seed)
        boot_d = boot[:, ij[:, 0]] - boot[:, ij[:, 1]]
    return Pairs(
        D=D,
        zero=np.all(np.abs(D) <= tol, axis=0),
        tol=tol,
        mean_d=D.mean(axis=0),
        t=np.zeros(0),
        t_p=np.zeros(0),
        samples=s.samples,
        resamples=s.resamples,
        seed=s.seed,
        boot_d=boot_d,
    )


def _pair_tests(
    names: tuple[str, ...],
    ij: np.ndarray,
    ctx: Pairs,
    decided: tuple[Outcome, list[str], list[str | None]],
    s: PairedSettings,
) -> tuple[PairTest, ...]:
    """One [`PairTest`][tierank.analysis.inference.PairTest] per pair from its test's outcome (`_decided`)
    and its intervals; where every difference is zero, ``p = 1`` and the statistic 0 (no evidence at
    all: the tests are undefined there)."""
    out, used, fallback = decided
    raw = np.where(ctx.zero, 1.0, out.p)
    m = nonzero(ctx.D, ctx.tol)
    floor = sign_flip_floor(m)
    p = np.maximum(raw, floor)  # the floor of every test (NaN stays NaN)
    stat = np.where(ctx.zero, 0.0, out.statistic)
    dlo, dhi, dz, elo, ehi = _difference_intervals(ctx, s.ci, s.level)
    refused = np.array([not interval_supported(int(mk), s.level) for mk in m], dtype=bool)
    for arr in (dlo, dhi, elo, ehi):
        arr[refused] = np.nan
    return tuple(
        PairTest(
            a=names[i],
            b=names[j],
            test=s.test,
            statistic=float(stat[k]),
            p=float(p[k]),
            method=out.method[k],
            samples=out.samples[k],
            seed=out.seed[k],
            se=out.se[k],
            mean_diff=float(ctx.mean_d[k]),
            diff_ci_low=float(dlo[k]),
            diff_ci_high=float(dhi[k]),
            diff_ci_method=s.ci,
            effect_size=float(dz[k]),
            effect_ci_low=float(elo[k]),
            effect_ci_high=float(ehi[k]),
            level=s.level,
            test_used=used[k],
            fallback=fallback[k],
            t=float(ctx.t[k]),
            p_test=float(raw[k]),
            p_floor=float(floor[k]),
        )
        for k, (i, j) in enumerate(ij)
    )


def _pair_columns(names: tuple[str, ...], pairs) -> np.ndarray:
    """The column indices ``(P, 2)`` of the ``pairs`` of names (every pair ``i < j`` by default)."""
    index = {nm: i for i, nm in enumerate(names)}
    if pairs is None:
        pairs = list(combinations(names, 2))
    try:
        return np.array([(index[a], index[b]) for a, b in pairs], dtype=np.int64).reshape(-1, 2)
    except KeyError as e:
        raise TierankInputError(f"inference: unknown system {e.args[0]!r}") from None


def _t_statistics(X: np.ndarray, ij: np.ndarray, ctx: Pairs) -> Pairs:
    """``ctx`` with every pair's paired t statistic and p-value, whatever the test (computed once): 0.0
    where every difference is zero, NaN where t is undefined (the t-test's ``undecidable``)."""
    from scipy.stats import ttest_rel

    P = ctx.D.shape[1]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = ttest_rel(X[:, ij[:, 0]], X[:, ij[:, 1]], axis=0)
    t_stat = np.where(ctx.zero, 0.0, np.asarray(res.statistic, dtype=np.float64).reshape(P))
    ctx = replace(ctx, t=t_stat, t_p=np.asarray(res.pvalue, np.float64).reshape(P))
    t_undefined = [r is not None for r in PAIRED_TESTS["t"].implementation().undecidable(ctx)]
    t_stat[t_undefined] = np.nan
    return replace(ctx, t=t_stat)


def _decided(impl, ctx: Pairs, test: str) -> tuple[Outcome, list[str], list[str | None]]:
    """The outcome of the test ``impl`` on every pair; where it cannot decide (its statistic undefined,
    or its null distribution biased at this size), the exact randomization test's instead, and says
    so: the test used per pair and why it fell back (None where it did not)."""
    out = impl.run(ctx)
    P = ctx.D.shape[1]
    used = [test] * P
    fallback = impl.undecidable(ctx) if hasattr(impl, "undecidable") else [None] * P
    redo = [k for k in range(P) if fallback[k] is not None]
    if redo:
        r = _randomization(ctx.D[:, redo], ctx.tol, ctx.samples, ctx.seed)
        for pos, col in enumerate(redo):
            out.statistic[col], out.p[col], out.method[col] = (
                ctx.mean_d[col],
                r.p[pos],
                r.method[pos],
            )
            out.samples[col], out.seed[col], out.se[col] = r.samples[pos], r.seed[pos], r.se[pos]
            used[col] = "randomization"
    return out, used, fallback


def _difference_intervals(ctx: Pairs, ci: str, level: float):
    """Per pair: the mean difference's CI (``ci``), Cohen's d_z and its CI (noncentral t)."""
    D = ctx.D
    n, P = D.shape
    if ci == "t":
        dlo, dhi, _ = t_interval(D, level)
    else:
        assert ctx.boot_d is not None  # ci != "t" needs the bootstrap
        dlo, dhi = bootstrap_interval(D, ctx.boot_d, ci, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = D.std(axis=0, ddof=1) if n > 1 else np.full(P, np.nan)
        dz = np.where(sd > 0, ctx.mean_d / sd, np.nan)
    elo, ehi = dz_interval(dz, n, level)
    return dlo, dhi, dz, elo, ehi
