"""Cutoff curves: a measure family at every cutoff k = 1..kmax, tie-aware, per run.

The numbers behind the cutoff figure (`tierank.report.plots.plot_cutoff`), as
Figure 2 of Yang et al., "Reliable Evaluation Protocol for Low-Precision Retrieval":
for each run the mean over queries of ``family@k``, its expected value, oblivious
value, [min, max] and std over tie orderings.  Nothing here draws.

* [`cutoff_curves`][tierank.analysis.cutoff.cutoff_curves]: one evaluation per run, on all ``kmax`` measures together;
* [`evaluate_with_curves`][tierank.analysis.cutoff.evaluate_with_curves]: one evaluation of one run that gives both an
  [`EvalResult`][tierank.EvalResult] for the measures asked for and the run's curves
  (``tierank report eval``);
* [`curve_series`][tierank.analysis.cutoff.curve_series]: the curve of one run read from any evaluation that includes
  ``family@1..kmax``.

Examples
--------
>>> res, curves = evaluate_with_curves({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["RR"], "P", 2, name="tied")
>>> [str(m) for m in res.measures], curves.series["tied"].expected.tolist()
(['RR'], [0.5, 0.5])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import TierankInputError
from ..evaluate import evaluate
from ..io.convert import to_qrels, to_run
from ..measures import parse_measure, parse_measures
from ..results import COLUMNS, DERIVED, statistic

#: the columns of a curve (the others derived from them: `tierank.results.DERIVED`)
STATS = tuple(c for c in COLUMNS if c not in DERIVED)


@dataclass(frozen=True)
class CurveSeries:
    """One run's means over queries of ``family@k`` for every cutoff k.

    Attributes
    ----------
    name : str
    expected, oblivious, min, max, std : np.ndarray
        Aligned with `CutoffCurves.ks` (float64; NaN where undefined).
    ties : dict
        The run's tie statistics (`tierank.EvalResult.ties`).
    """

    name: str
    expected: np.ndarray
    oblivious: np.ndarray
    min: np.ndarray
    max: np.ndarray
    std: np.ndarray
    ties: dict


@dataclass(frozen=True)
class CutoffCurves:
    """Result of [`cutoff_curves`][tierank.analysis.cutoff.cutoff_curves].

    Attributes
    ----------
    family : str
        The measure family, e.g. ``"nDCG"``.
    ks : np.ndarray
        The cutoffs, ``1..kmax``.
    series : dict of str -> CurveSeries
        One per run, in the order given.
    settings : dict
        Evaluation settings (tie_break and the extra evaluate arguments).
    """

    family: str
    ks: np.ndarray
    series: dict[str, CurveSeries]
    settings: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.series)

    def records(self) -> list[dict]:
        """Flat rows ``run, k, measure, oblivious, expected, min, max, range, bias, std`` (NaN -> None)."""
        out = []
        for name, s in self.series.items():
            cols = {c: statistic(s, c) for c in COLUMNS}
            for i, k in enumerate(self.ks.tolist()):
                vals = {c: float(cols[c][i]) for c in COLUMNS}
                out.append(
                    {
                        "run": name,
                        "k": int(k),
                        "measure": f"{self.family}@{k}",
                        **{c: (None if np.isnan(v) else v) for c, v in vals.items()},
                    }
                )
        return out


#: largest cutoff of a curve: all ``kmax`` measures are evaluated together, so this bounds memory and time
#: (a figure or page of more than 1000 cutoffs has nothing more to show)
MAX_KMAX = 1000


def check_kmax(kmax) -> int:
    """``kmax`` as an int if it is a curve's largest cutoff (1 .. `MAX_KMAX`), else [`TierankInputError`][tierank.analysis.cutoff.TierankInputError].

    >>> check_kmax(20)
    20
    >>> check_kmax(10 ** 8)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: kmax must be between 1 and 1000, got 100000000
    """
    ok = isinstance(kmax, (int, np.integer)) and not isinstance(kmax, bool)
    if not (ok and 1 <= kmax <= MAX_KMAX):
        raise TierankInputError(f"kmax must be between 1 and {MAX_KMAX}, got {kmax!r}")
    return int(kmax)


def cutoff_measures(family: str, kmax: int) -> list[str]:
    """The measure names ``family@1 .. family@kmax`` (kmax checked with [`check_kmax`][tierank.analysis.cutoff.check_kmax]).

    >>> cutoff_measures("P", 3)
    ['P@1', 'P@2', 'P@3']
    >>> cutoff_measures("nDCG@10", 3)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: nDCG@10: the curves take a measure family without a cutoff (e.g. nDCG); they run k = 1..kmax
    """
    kmax = check_kmax(kmax)
    check_curve_family(family)
    return [f"{family}@{k}" for k in range(1, kmax + 1)]


def check_curve_family(family: str) -> None:
    """Refuse, in one line, a family that cannot be drawn against the cutoff k: one written with its own
    cutoff (``nDCG@10``), unknown, or one whose cutoff is not an integer rank."""
    from ..measures import REGISTRY

    name = str(family)
    if "@" in name:
        raise TierankInputError(
            f"{name}: the curves take a measure family without a cutoff "
            f"(e.g. {name.split('@')[0] or 'nDCG'}); they run k = 1..kmax"
        )
    base = name.split("(")[0]
    cls = REGISTRY.get(base)
    if cls is None or not cls.cutoff_allowed or cls.cutoff_param is not None:
        fams = sorted(f for f, c in REGISTRY.items() if c.cutoff_allowed and c.cutoff_param is None)
        raise TierankInputError(
            f"{name}: not a measure family with a rank cutoff @k; the curves take one of "
            f"{', '.join(fams)}"
        )


def select(result, measures: Sequence):
    """The part of an [`EvalResult`][tierank.EvalResult] for ``measures`` (names or parsed measures, all in it):
    the same numbers as an evaluation of those measures alone, in that order."""
    ms = [m if not isinstance(m, str) else parse_measure(m) for m in measures]
    ms = list(dict.fromkeys(ms))
    return replace(
        result,
        measures=ms,
        stats={m: result.stats[m] for m in ms},
        bounds={m: result.bounds[m] for m in ms if m in result.bounds},
        residual={m: result.residual[m] for m in ms if m in result.residual},
    )


def curve_series(result, family: str, kmax: int, name: str) -> CurveSeries:
    """The curve of one run from an evaluation that includes ``family@1 .. family@kmax``."""
    ms = parse_measures(cutoff_measures(family, kmax))
    if len(ms) != int(kmax):
        raise TierankInputError(
            f"cutoff_curves: {family}@1..{kmax} did not give {kmax} distinct measures"
        )
    rows = select(result, ms).records(per_query=False)
    col = {
        c: np.array([np.nan if r[c] is None else r[c] for r in rows], dtype=np.float64)
        for c in STATS
    }
    return CurveSeries(name=str(name), ties=dict(result.ties), **col)


def cutoff_curves(
    qrels,
    runs: Mapping,
    family: str = "nDCG",
    kmax: int = 20,
    *,
    tie_break: str = "trec_eval",
    **evaluate_kwargs,
) -> CutoffCurves:
    """Mean ``family@k`` for k = 1..kmax of every run, tie-aware.

    Each run is evaluated once, on all ``kmax`` measures together.

    Parameters
    ----------
    qrels
        Anything [`tierank.evaluate`][tierank.evaluate] accepts.
    runs : mapping of str -> run-like
        Named runs (paths, DataFrames, dicts or [`tierank.Run`][tierank.Run]); typically one
        run in several precision regimes, e.g.
        ``{"fp32": run, "bf16": requantize_run(run, "bf16")}``.
    family : str
        A measure family that takes a cutoff: ``nDCG``, ``P``, ``R``, ``RR``, ``AP``, ...
    kmax : int
        Largest cutoff.
    tie_break, **evaluate_kwargs
        Passed to [`tierank.evaluate`][tierank.evaluate] (``rel``, ``complete``, ``candidates_only``, ...).

    Returns
    -------
    CutoffCurves

    Examples
    --------
    >>> c = cutoff_curves({"q": {"a": 1}}, {"tied": {"q": {"a": 1.0, "b": 1.0}}}, "P", kmax=2)
    >>> c.ks.tolist(), c.series["tied"].expected.tolist(), c.series["tied"].oblivious.tolist()
    ([1, 2], [0.5, 0.5], [0.0, 0.5])
    """
    if not isinstance(runs, Mapping) or not runs:
        raise TierankInputError("cutoff_curves: give the runs as a non-empty mapping name -> run")
    measures = cutoff_measures(family, kmax)
    q = to_qrels(qrels)
    series = {}
    for name, run in runs.items():
        res = evaluate(q, run, measures, tie_break=tie_break, **evaluate_kwargs)
        series[str(name)] = curve_series(res, family, kmax, name)
    return CutoffCurves(
        family=family,
        ks=np.arange(1, int(kmax) + 1),
        series=series,
        settings={"tie_break": tie_break, "qrels": q.source, **evaluate_kwargs},
    )


def evaluate_with_curves(
    qrels,
    run,
    measures: Sequence[str] | str,
    family: str | None = "nDCG",
    kmax: int = 20,
    *,
    name: str | None = None,
    tie_break: str = "trec_eval",
    **evaluate_kwargs,
):
    """One evaluation of ``run`` that gives both ``measures`` and the cutoff curves of ``family``.

    Parameters
    ----------
    qrels, run
        Anything [`tierank.evaluate`][tierank.evaluate] accepts.
    measures : sequence of str
        The measures of the returned result.
    family : str or None
        Measure family of the curves (``None`` or ``""``: no curves).
    kmax : int
    name : str, optional
        The run's name in the curves (default: its source).
    tie_break, **evaluate_kwargs
        Passed to [`tierank.evaluate`][tierank.evaluate].

    Returns
    -------
    (EvalResult, CutoffCurves or None)
        The result holds ``measures`` only, with the numbers an evaluation of them alone
        gives; the curves are those [`cutoff_curves`][tierank.analysis.cutoff.cutoff_curves] gives for ``{name: run}``.
    """
    if isinstance(measures, str):
        measures = [measures]
    table = parse_measures(
        measures
    )  # the measures' own errors first, as two evaluations reported them
    if not table:
        raise TierankInputError("no measure given")
    q, r = to_qrels(qrels), to_run(run)
    if not family:
        return evaluate(q, r, measures, tie_break=tie_break, **evaluate_kwargs), None
    curve = parse_measures(cutoff_measures(family, kmax))
    wanted: list[Any] = list(dict.fromkeys([*table, *curve]))  # Measure objects
    res = evaluate(q, r, wanted, tie_break=tie_break, **evaluate_kwargs)
    series = curve_series(res, family, kmax, r.source if name is None else name)
    curves = CutoffCurves(
        family=family,
        ks=np.arange(1, int(kmax) + 1),
        series={series.name: series},
        settings={"tie_break": tie_break, "qrels": q.source, **evaluate_kwargs},
    )
    return select(res, table), curves


__all__ = [
    "MAX_KMAX",
    "CurveSeries",
    "CutoffCurves",
    "check_kmax",
    "cutoff_curves",
    "cutoff_measures",
    "curve_series",
    "evaluate_with_curves",
    "select",
]
