"""Meta-analysis of one difference measured on several test collections (Soboroff, CIKM 2018,
"Meta-analysis for retrieval experiments involving multiple test collections").

A plain mean of per-collection scores weights every collection alike and ignores that each is a
sample of topics.  Here each collection ``i`` gives an effect ``y_i`` (a mean difference of two
systems, or its standardised form d_z) with a sampling variance ``v_i``; then

* **fixed effect** (one true effect shared by every collection): weights ``w_i = 1 / v_i``, pooled
  effect ``sum w_i y_i / sum w_i``, variance ``1 / sum w_i``;
* **heterogeneity**: Cochran's ``Q = sum w_i (y_i - fixed)^2`` with ``k - 1`` degrees of freedom,
  ``I^2 = max(0, (Q - (k - 1)) / Q)`` (the share of the variation of the effects that is not
  sampling error) and the between-collection variance ``tau^2``;
* **random effects** (each collection has its own true effect, drawn around an overall mean with
  variance ``tau^2``): weights ``1 / (v_i + tau^2)``; ``tau^2`` by DerSimonian-Laird's moment
  estimator (``"dl"``: ``max(0, (Q - (k - 1)) / (sum w - sum w^2 / sum w))``) or Paule-Mandel's
  (``"pm"``: the ``tau^2 >= 0`` at which the generalised ``Q(tau^2) = sum (y_i - mu)^2 /
  (v_i + tau^2)`` equals ``k - 1``, solved to machine precision by bracketing; 0 where
  ``Q(0) <= k - 1``).

Confidence intervals are normal (``effect +- z * se``), as in statsmodels'
``combine_effects(use_t=False)``, which gives the same numbers (``method_re="chi2"`` for DL,
``"iterated"`` for PM, that one iterating to its tolerance) except that statsmodels leaves a
negative DerSimonian-Laird ``tau^2`` and ``I^2`` untruncated where ``Q < k - 1``: here they are 0 (the
variance cannot be negative) and the random-effects result is then the fixed-effect one.

Examples
--------
>>> r = combine_effects([0.30, 0.10, 0.25, -0.05], [0.01, 0.02, 0.015, 0.03])
>>> round(r.fixed.effect, 4), round(r.random.effect, 4), round(r.tau2, 4), round(r.i2, 4)
(0.2, 0.1907, 0.0042, 0.2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TierankInputError

#: the random-effects estimators of tau^2
METHODS = {"dl": "DerSimonian-Laird", "pm": "Paule-Mandel"}


@dataclass(frozen=True)
class Pooled:
    """One pooled effect: ``effect``, its standard error ``se``, the normal confidence interval
    ``[ci_low, ci_high]`` at ``level``, the z statistic and its two-sided ``p``, and the
    collections' relative ``weights`` (summing to 1)."""

    model: str
    effect: float
    se: float
    ci_low: float
    ci_high: float
    z: float
    p: float
    level: float
    weights: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """``model, effect, se, ci_low, ci_high, z, p, level, weights``."""
        return {
            "model": self.model,
            "effect": self.effect,
            "se": self.se,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "z": _finite(self.z),
            "p": self.p,
            "level": self.level,
            "weights": list(self.weights),
        }


@dataclass(frozen=True)
class MetaResult:
    """A fixed- and a random-effects meta-analysis of ``k`` effects.

    ``effect``, ``se``, ``ci_low`` and ``ci_high`` are the random-effects model's (``random``, with
    ``tau2`` from ``method``); ``fixed`` is the fixed-effect model.  ``q`` is Cochran's Q with
    ``df = k - 1`` and ``q_p`` its chi-square p-value, ``i2`` and ``h2 = Q / df`` the heterogeneity
    ratios, ``tau2`` the between-collection variance."""

    effects: tuple[float, ...]
    variances: tuple[float, ...]
    method: str
    fixed: Pooled
    random: Pooled
    q: float
    df: int
    q_p: float
    i2: float
    h2: float
    tau2: float

    @property
    def effect(self) -> float:
        return self.random.effect

    @property
    def se(self) -> float:
        return self.random.se

    @property
    def ci_low(self) -> float:
        return self.random.ci_low

    @property
    def ci_high(self) -> float:
        return self.random.ci_high

    @property
    def k(self) -> int:
        return len(self.effects)

    def to_dict(self) -> dict[str, Any]:
        """``k, method, method_name, effects, variances, fixed, random`` (each a `Pooled` record),
        ``q, df, q_p, i2, h2, tau2, tau``."""
        return {
            "k": self.k,
            "method": self.method,
            "method_name": METHODS[self.method],
            "effects": list(self.effects),
            "variances": list(self.variances),
            "fixed": self.fixed.to_dict(),
            "random": self.random.to_dict(),
            "q": self.q,
            "df": self.df,
            "q_p": self.q_p,
            "i2": self.i2,
            "h2": _finite(self.h2),
            "tau2": self.tau2,
            "tau": math.sqrt(self.tau2),
        }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _pooled(model: str, y: np.ndarray, w: np.ndarray, level: float) -> Pooled:
    from scipy.stats import norm

    total = float(w.sum())
    effect = float(w @ y / total)
    se = math.sqrt(1.0 / total)
    crit = float(norm.isf((1.0 - level) / 2.0))
    z = effect / se if se > 0 else (math.copysign(math.inf, effect) if effect else 0.0)
    return Pooled(
        model=model,
        effect=effect,
        se=se,
        ci_low=effect - crit * se,
        ci_high=effect + crit * se,
        z=z,
        p=float(2.0 * norm.sf(abs(z))),
        level=float(level),
        weights=tuple(float(x) for x in w / total),
    )


def _generalised_q(y: np.ndarray, v: np.ndarray, tau2: float) -> float:
    w = 1.0 / (v + tau2)
    mu = w @ y / w.sum()
    return float(w @ (y - mu) ** 2)


def paule_mandel(effects, variances) -> float:
    """Paule-Mandel's ``tau^2``: the root of ``Q(tau^2) = k - 1`` (``Q`` decreasing in ``tau^2``),
    found by ``scipy.optimize.brentq`` to machine precision; 0 where ``Q(0) <= k - 1``.

    >>> round(paule_mandel([0.3, 0.1, 0.25, -0.05], [0.01, 0.02, 0.015, 0.03]), 6)
    0.004651
    """
    from scipy.optimize import brentq

    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    df = len(y) - 1
    if _generalised_q(y, v, 0.0) <= df:
        return 0.0
    hi = max(float(np.var(y, ddof=1)), float(v.max()), 1e-300)
    while _generalised_q(y, v, hi) > df:  # Q(tau2) -> sum((y - mean)^2) / tau2 -> 0: found soon
        hi *= 2.0
    return float(
        brentq(lambda t: _generalised_q(y, v, t) - df, 0.0, hi, xtol=1e-300, rtol=4 * 2.0**-52)
    )


def _checked(effects, variances) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(effects, dtype=np.float64).ravel()
    v = np.asarray(variances, dtype=np.float64).ravel()
    if y.shape != v.shape:
        raise TierankInputError(
            f"combine_effects: {len(y)} effects but {len(v)} variances: give one variance per effect"
        )
    if len(y) < 2:
        raise TierankInputError(
            f"combine_effects: need effects from at least two collections, got {len(y)}: "
            "a meta-analysis of one collection is that collection's own result"
        )
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v))):
        raise TierankInputError("combine_effects: effects and variances must be finite numbers")
    bad = np.flatnonzero(v <= 0)
    if len(bad):
        raise TierankInputError(
            f"combine_effects: variance of effect {int(bad[0])} is {v[bad[0]]!r}; every variance "
            "must be > 0 (an effect measured without error cannot be weighted)"
        )
    return y, v


def combine_effects(effects, variances, method: str = "dl", *, level: float = 0.95) -> MetaResult:
    """Fixed- and random-effects meta-analysis of per-collection ``effects`` with sampling
    ``variances`` (see the module docstring for the formulas).

    Parameters
    ----------
    effects, variances
        One effect and its (> 0) variance per collection, at least two collections.
    method
        ``"dl"`` (DerSimonian-Laird) or ``"pm"`` (Paule-Mandel): the estimator of ``tau^2``.
    level
        Confidence level of the intervals (normal).

    Returns
    -------
    MetaResult
        ``effect, ci_low, ci_high, se`` (random effects), ``fixed`` and ``random`` (`Pooled`),
        ``q, df, q_p, i2, h2, tau2``.

    Raises
    ------
    TierankInputError
        Fewer than two effects, a variance that is not > 0, a non-finite value, an unknown method.
    """
    from scipy.stats import chi2

    if method not in METHODS:
        raise TierankInputError(
            f"combine_effects: method must be one of {', '.join(METHODS)}, got {method!r}"
        )
    if not (isinstance(level, (int, float)) and 0.0 < level < 1.0):
        raise TierankInputError(f"combine_effects: level must be in (0, 1), got {level!r}")
    y, v = _checked(effects, variances)
    k = len(y)
    df = k - 1
    w = 1.0 / v
    fixed = _pooled("fixed", y, w, level)
    q = float(w @ (y - fixed.effect) ** 2)
    if method == "dl":
        c = float(w.sum() - (w**2).sum() / w.sum())
        tau2 = max(0.0, (q - df) / c)
    else:
        tau2 = paule_mandel(y, v)
    random = _pooled("random", y, 1.0 / (v + tau2), level)
    return MetaResult(
        effects=tuple(float(x) for x in y),
        variances=tuple(float(x) for x in v),
        method=method,
        fixed=fixed,
        random=random,
        q=q,
        df=df,
        q_p=float(chi2.sf(q, df)),
        i2=max(0.0, (q - df) / q) if q > 0 else 0.0,
        h2=q / df,
        tau2=tau2,
    )


# --- per-collection effects of a pair of systems --------------------------------------------------


@dataclass(frozen=True)
class PairEffect:
    """The effect of ``a`` over ``b`` on one collection of ``n`` topics.

    ``diff`` is the mean of the per-topic differences of expected values, ``var_diff`` its variance
    (``var_sampling + var_tie``: the squared standard error over the topic sample, ``s_d^2 / n``,
    plus the tie variance of the mean, ``sum_q (v_a,q + v_b,q) / n^2``, the two runs' tie orderings
    being independent); ``dz`` is ``diff / s_d`` (Cohen's d_z) and ``var_dz`` its large-sample
    variance ``1 / n + d_z^2 / (2 n)``, with the tie part ``var_tie / s_d^2`` added."""

    collection: str
    a: str
    b: str
    n: int
    diff: float
    var_sampling: float
    var_tie: float
    sd: float
    dz: float
    var_dz: float

    @property
    def var_diff(self) -> float:
        return self.var_sampling + self.var_tie

    def to_dict(self) -> dict[str, Any]:
        """``collection, a, b, n, diff, var_diff, var_sampling, var_tie, sd, dz, var_dz``."""
        return {
            "collection": self.collection,
            "a": self.a,
            "b": self.b,
            "n": self.n,
            "diff": self.diff,
            "var_diff": self.var_diff,
            "var_sampling": self.var_sampling,
            "var_tie": self.var_tie,
            "sd": self.sd,
            "dz": _finite(self.dz),
            "var_dz": _finite(self.var_dz),
        }


def pair_effect(
    collection: str, a: str, b: str, expected_a, expected_b, var_a=None, var_b=None
) -> PairEffect:
    """The effect of ``a`` over ``b`` from their per-topic expected values (paired, one entry per
    topic) and per-topic tie variances (None: no ties).

    >>> e = pair_effect("c", "A", "B", [0.5, 0.7, 0.2, 0.9], [0.4, 0.6, 0.3, 0.5], [0.01, 0, 0, 0])
    >>> round(e.diff, 4), round(e.var_sampling, 6), round(e.var_tie, 6), round(e.dz, 4)
    (0.125, 0.010625, 0.000625, 0.6063)
    """
    ea = np.asarray(expected_a, dtype=np.float64)
    eb = np.asarray(expected_b, dtype=np.float64)
    n = len(ea)
    if n < 2:
        raise TierankInputError(
            f"meta-analysis: collection {collection} has {n} topic(s) common to {a} and {b}: a "
            "variance over topics needs at least two"
        )
    d = ea - eb
    sd = float(np.std(d, ddof=1))
    vt = 0.0
    for v in (var_a, var_b):
        if v is not None:
            vt += float(np.sum(np.asarray(v, dtype=np.float64)))
    vt /= n * n
    diff = float(d.mean())
    dz = diff / sd if sd > 0 else (math.nan if diff else 0.0)
    var_dz = (1.0 / n + dz * dz / (2.0 * n) + vt / sd**2) if sd > 0 else math.nan
    return PairEffect(
        collection=collection,
        a=a,
        b=b,
        n=n,
        diff=diff,
        var_sampling=sd * sd / n,
        var_tie=vt,
        sd=sd,
        dz=dz,
        var_dz=var_dz,
    )


__all__ = [
    "METHODS",
    "MetaResult",
    "PairEffect",
    "Pooled",
    "combine_effects",
    "pair_effect",
    "paule_mandel",
]
