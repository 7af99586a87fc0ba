"""Systems compared over several test collections: per collection, each pair's effect and its
variance (tie variance included), pooled by a fixed- and two random-effects meta-analyses
([`tierank.analysis.meta`][tierank.analysis.meta]); and the per-topic values of one collection
that [`planning`][tierank.analysis.planning] and [`discrimination`][tierank.analysis.discrimination]
start from.

Per collection ``c`` and pair ``(a, b)``: the topics evaluated for every system of ``c`` (as
[`tierank.analysis.compare.compare`][tierank.analysis.compare.compare] pairs them), the per-topic
differences of expected values ``d_q = e_a,q - e_b,q``, and
[`pair_effect`][tierank.analysis.meta.pair_effect]: the mean difference with variance
``s_d^2 / n + sum_q (v_a,q + v_b,q) / n^2`` (topic sampling plus the tie variance of the mean
difference, both runs' tie orderings independent: what a reported tie-broken difference varies by)
and Cohen's d_z with variance ``1 / n + d_z^2 / (2 n) + var_tie / s_d^2``.  Both scales are pooled by
the fixed-effect model and by the random-effects model with DerSimonian-Laird's and Paule-Mandel's
``tau^2``.  A pair with a zero-variance effect on some collection (identical per-topic values, no
ties) gets no meta-analysis, with the reason.

Examples
--------
>>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"a": 1}}
>>> good = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 2.0, "a": 1.0}, "q3": {"a": 1.0, "b": 1.0}}
>>> bad = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"a": 2.0, "b": 1.0}, "q3": {"b": 2.0, "a": 1.0}}
>>> mc = compare_collections({"c1": (qrels, {"good": good, "bad": bad}),
...                           "c2": (qrels, {"good": good, "bad": bad})}, "RR")
>>> p = mc.pairs[0]
>>> p.a, p.b, [round(e.diff, 4) for e in p.effects], round(p.effects[0].var_tie, 4)
('bad', 'good', [-0.4167, -0.4167], 0.0069)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..settings import EvalSettings
from .meta import MetaResult, PairEffect, combine_effects, pair_effect

#: the effect scales pooled: the mean difference and Cohen's d_z
SCALES = ("diff", "dz")
#: the pooled models reported per scale
MODELS = ("fixed", "dl", "pm")


@dataclass(frozen=True)
class PerTopic:
    """One collection's per-topic values of one measure: ``expected``, ``oblivious`` and the tie
    variance ``var`` (``topics x systems``), for the topics every system is evaluated on."""

    measure: str
    systems: tuple[str, ...]
    queries: tuple[str, ...]
    expected: np.ndarray
    oblivious: np.ndarray
    var: np.ndarray
    dropped_queries: int


def per_topic(
    runs: Mapping, qrels: Any, measure: str, settings: EvalSettings | None = None
) -> PerTopic:
    """Every run of ``runs`` (``{name: run}``, two or more) evaluated on ``measure`` against
    ``qrels``, on the topics evaluated for every run (as `tierank.analysis.compare.compare` does).
    A measure summarised by a geometric mean (GMAP) is refused: the analyses here are of means of
    per-topic values."""
    from .comparison.align import aligned, checked_runs, common_queries, evaluator

    converted = checked_runs(runs)
    ev, results, common, dropped = common_queries(
        evaluator(qrels, measure, settings or EvalSettings()), converted
    )
    m = ev.measures[0]
    if m.aggregator == "geometric_mean":
        raise TierankInputError(
            f"{m} summarises a collection by a geometric mean: its effects, variances and power are "
            "not those of a mean of per-topic values; use the arithmetic measure (AP for GMAP)"
        )
    rows = {name: aligned(res, common) for name, res in results.items()}
    names = tuple(converted)
    col = lambda k: np.column_stack([rows[n][k] for n in names])  # noqa: E731
    return PerTopic(
        measure=str(ev.measures[0]),
        systems=names,
        queries=tuple(common),
        expected=col("expected"),
        oblivious=col("oblivious"),
        var=np.maximum(col("var"), 0.0),
        dropped_queries=dropped,
    )


@dataclass(frozen=True)
class PairMeta:
    """One pair over the collections: its per-collection `PairEffect`s, the plain mean of the
    differences (what a table of per-collection means gives, every collection weighted alike), and per
    scale (``"diff"``, ``"dz"``) the meta-analyses by DerSimonian-Laird (``meta[scale]["dl"]``) and
    Paule-Mandel (``["pm"]``), each carrying the fixed-effect model too; ``reason`` where there is
    none."""

    a: str
    b: str
    effects: tuple[PairEffect, ...]
    plain_mean: float
    meta: dict[str, dict[str, MetaResult]] = field(default_factory=dict)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``a, b, plain_mean, effects`` (`PairEffect.to_dict` each), ``meta`` (``{scale: {method:
        MetaResult.to_dict()}}``) and ``reason``."""
        return {
            "a": self.a,
            "b": self.b,
            "plain_mean": self.plain_mean,
            "effects": [e.to_dict() for e in self.effects],
            "meta": {s: {m: r.to_dict() for m, r in by.items()} for s, by in self.meta.items()},
            "reason": self.reason,
        }


@dataclass(frozen=True)
class MultiComparison:
    """Systems compared over collections: ``systems`` (those present in every collection),
    ``collections`` with their topic counts, one `PairMeta` per pair, ``level`` of the CIs and the
    ``notes`` (systems left out, dropped topics)."""

    measure: str
    systems: tuple[str, ...]
    collections: tuple[str, ...]
    topics: tuple[int, ...]
    pairs: tuple[PairMeta, ...]
    level: float
    notes: tuple[str, ...]

    def pair(self, a: str, b: str) -> PairMeta:
        for p in self.pairs:
            if (p.a, p.b) == (a, b):
                return p
            if (p.b, p.a) == (a, b):
                raise TierankInputError(f"the pair is listed as {p.a} vs {p.b}")
        raise TierankInputError(f"no pair {a} vs {b}: systems are {', '.join(self.systems)}")

    def to_dict(self) -> dict[str, Any]:
        """``measure, systems, collections`` (``name, topics``), ``level``, ``tie_variance`` (how the
        tie variance enters), ``pairs`` (`PairMeta.to_dict` each), ``notes``."""
        return {
            "measure": self.measure,
            "systems": list(self.systems),
            "collections": [
                {"name": c, "topics": n} for c, n in zip(self.collections, self.topics)
            ],
            "level": self.level,
            "tie_variance": "var_diff = s_d^2 / n + sum_q (v_a,q + v_b,q) / n^2; "
            "var_dz = 1 / n + d_z^2 / (2 n) + var_tie / s_d^2",
            "pairs": [p.to_dict() for p in self.pairs],
            "notes": list(self.notes),
        }


def _pair_meta(a: str, b: str, effects: list[PairEffect], level: float) -> PairMeta:
    plain = float(np.mean([e.diff for e in effects]))
    for e in effects:
        if not e.var_diff > 0 or not (math.isfinite(e.var_dz) and e.var_dz > 0):
            return PairMeta(
                a,
                b,
                tuple(effects),
                plain,
                reason=f"{a} and {b} score the same on every topic of {e.collection} with no tie "
                "left to chance: an effect of variance 0 cannot be weighted",
            )
    meta = {
        "diff": {
            m: combine_effects(
                [e.diff for e in effects], [e.var_diff for e in effects], m, level=level
            )
            for m in ("dl", "pm")
        },
        "dz": {
            m: combine_effects([e.dz for e in effects], [e.var_dz for e in effects], m, level=level)
            for m in ("dl", "pm")
        },
    }
    return PairMeta(a, b, tuple(effects), plain, meta)


def compare_collections(
    collections: Mapping[str, tuple[Any, Mapping]],
    measure: str,
    settings: EvalSettings | None = None,
    *,
    level: float = 0.95,
) -> MultiComparison:
    """Compare the systems present in every collection of ``collections`` (``{name: (qrels, {system:
    run})}``, systems matched by name, sorted by name; pairs ``a`` vs ``b`` with ``a`` first) on
    ``measure``: per collection each pair's effect, pooled by meta-analysis (module docstring).

    Raises
    ------
    TierankInputError
        Fewer than two collections, fewer than two systems common to all, a collection with fewer than
        two common topics, or input the evaluation rejects.
    """
    if not isinstance(collections, Mapping) or len(collections) < 2:
        n = len(collections) if isinstance(collections, Mapping) else 0
        raise TierankInputError(
            f"compare over collections: need at least two collections, got {n}: with one, use "
            "tierank compare QRELS RUN RUN..."
        )
    names = [str(c) for c in collections]
    sets = [set(map(str, runs)) for _, runs in collections.values()]
    common = sorted(set.intersection(*sets))  # by name: the same pairs whatever the input order
    notes = []
    for c, present in zip(names, sets):
        left = sorted(present - set(common))
        if left:
            notes.append(f"{c}: {', '.join(left)} left out (not in every collection)")
    if len(common) < 2:
        raise TierankInputError(
            f"compare over collections: {len(common)} system(s) in every collection "
            f"({', '.join(common) or 'none'}); systems are matched by name across collections "
            "and at least two must be in all"
        )
    tables = {}
    for c, (qrels, runs) in collections.items():
        pt = per_topic({s: runs[s] for s in common}, qrels, measure, settings)
        if len(pt.queries) < 2:
            raise TierankInputError(
                f"compare over collections: collection {c} has {len(pt.queries)} topic(s) evaluated "
                "for every system: an effect's variance over topics needs at least two"
            )
        if pt.dropped_queries:
            notes.append(
                f"{c}: {pt.dropped_queries} topic(s) not evaluated for every system left out"
            )
        tables[str(c)] = pt
    pairs = []
    for x in range(len(common)):
        for y in range(x + 1, len(common)):
            a, b = common[x], common[y]
            effects = [
                pair_effect(
                    c, a, b, pt.expected[:, x], pt.expected[:, y], pt.var[:, x], pt.var[:, y]
                )
                for c, pt in tables.items()
            ]
            pairs.append(_pair_meta(a, b, effects, level))
    first = next(iter(tables.values()))
    return MultiComparison(
        measure=first.measure,
        systems=tuple(common),
        collections=tuple(names),
        topics=tuple(len(pt.queries) for pt in tables.values()),
        pairs=tuple(pairs),
        level=float(level),
        notes=tuple(notes),
    )


__all__ = [
    "MODELS",
    "SCALES",
    "MultiComparison",
    "PairMeta",
    "PerTopic",
    "compare_collections",
    "per_topic",
]
