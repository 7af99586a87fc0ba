"""Typed evaluation results.

Per (query, measure) the columns are the stable contract of the jsonl output:
``query, measure, oblivious, expected, min, max, range, bias, std``.  The
aggregate (``query == "all"``) is the mean over queries of each column; its
``std`` is the standard deviation of the *mean* over all tie orderings, which is
exact because orderings in different queries are independent:
``sqrt(sum_q Var_q) / n_q``.

The query id ``all`` (`AGGREGATE`) is reserved for the aggregate records: the
readers refuse it with file and line, and [`EvalResult`][tierank.results.EvalResult] refuses it for every
other input, so a record or ``to_dict()`` key ``"all"`` is always the aggregate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import TierankInputError
from .io.readers import RESERVED_QID
from .measures.base import Aggregate, Measure, Stats
from .ties import TieSummary

#: the ``query`` value of the aggregate records, reserved: no evaluated query may have this id
AGGREGATE = RESERVED_QID
COLUMNS = ("oblivious", "expected", "min", "max", "range", "bias", "std")
#: the columns computed from the others (`statistic`): ``range = max - min``, ``bias = oblivious - expected``
DERIVED = ("range", "bias")
#: the statistic columns but ``std`` (tables that show the spread over tie orderings as the range alone)
COLUMNS_BUT_STD = tuple(c for c in COLUMNS if c != "std")
EXTRA = ("lower", "upper", "residual")


def statistic(s: Any, column: str) -> Any:
    """Column ``column`` (one of `COLUMNS`) of per-query [`Stats`][tierank.measures.Stats] or a summary
    [`Aggregate`][tierank.measures.Aggregate] (anything with ``oblivious, expected, min, max`` and ``std``
    or ``var``): ``range = max - min``, ``bias = oblivious - expected``, ``std`` as it is or the
    square root of ``var``, the others as they are.

    >>> from tierank.measures import Aggregate
    >>> a = Aggregate(0.75, 0.5, 0.25, 1.0, 0.125, "exact")
    >>> [statistic(a, c) for c in COLUMNS]
    [0.75, 0.5, 0.25, 1.0, 0.75, 0.25, 0.125]
    """
    if column == "range":
        return s.max - s.min
    if column == "bias":
        return s.oblivious - s.expected
    if column == "std" and not hasattr(s, "std"):
        return np.sqrt(s.var)
    return getattr(s, column)


def jsonable(x: Any) -> Any:
    """NaN and infinities -> None, numpy scalars -> Python, recursively (the one conversion of numbers
    for JSON and for plain-Python records).

    Examples
    --------
    >>> jsonable({"a": [float("nan"), 1.5], "b": (float("inf"),)})
    {'a': [None, 1.5], 'b': [None]}
    """
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True)
class EvalResult:
    """Result of [`tierank.evaluate`][tierank.evaluate].

    Attributes
    ----------
    measures : list of Measure, in the order asked for
    qids : list of str, evaluated queries (sorted)
    stats : dict Measure -> Stats (per-query arrays)
    ties : TieSummary, tie statistics of the evaluated documents (a read-only mapping with the keys
        ``docs, queries, queries_with_ties, groups, tied_docs, largest, share``; a dict given with
        those keys is converted)
    settings : tie-break policy and query-set conventions used
    unevaluated : int, queries of the run that the qrels lack, left out as trec_eval leaves them out
        (``tierank eval`` says how many on stderr)
    """

    measures: list[Measure]
    qids: list[str]
    stats: dict[Measure, Stats]
    ties: TieSummary
    settings: dict[str, Any] = field(default_factory=dict)
    bounds: dict[Measure, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )  # unjudged="bounds"
    residual: dict[Measure, np.ndarray] = field(
        default_factory=dict
    )  # RBP residual, with unjudged="bounds"
    #: queries of the run that the qrels lack: not evaluated (as trec_eval leaves them out)
    unevaluated: int = 0
    #: the `tierank.EvalSettings` the result was computed under (for its `manifest`)
    evaluated_under: Any = field(default=None, repr=False, compare=False)
    #: the narrowest float format that holds every score exactly, where the evaluation was asked for it
    score_format: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.ties, TieSummary):
            ties: Mapping[str, Any] = self.ties
            object.__setattr__(
                self, "ties", TieSummary.from_mapping(ties) if ties else TieSummary()
            )
        if AGGREGATE in self.qids:
            raise TierankInputError(
                f"query id {AGGREGATE!r} is reserved for the aggregate records; rename "
                f"that query in {self.settings.get('run') or 'the run'} and "
                f"{self.settings.get('qrels') or 'the qrels'}"
            )

    @property
    def manifest(self):
        """The [`tierank.provenance.Manifest`][tierank.provenance.Manifest] of this result: its inputs'
        SHA-256 (where they were files), the versions, every setting that can change a number and
        the results; ``result.manifest.write(PATH)`` writes it, ``tierank verify PATH`` checks it."""
        from .provenance.build import of_result
        from .settings import EvalSettings

        settings = self.evaluated_under
        if settings is None:  # built by hand: the settings its record names
            known = {
                k: v for k, v in self.settings.items() if k in EvalSettings.__dataclass_fields__
            }
            settings = EvalSettings(**known)
        return of_result(self, settings, [str(m) for m in self.measures])

    def _table(self, m: Measure) -> dict[str, np.ndarray]:
        s = self.stats[m]
        out = {c: statistic(s, c) for c in COLUMNS}
        if self.bounds:
            out["lower"], out["upper"] = self.bounds[m]
            nan = np.full(len(self.qids), np.nan)
            out["residual"] = self.residual.get(m, nan)
        return out

    def table(self, m: Measure) -> dict[str, np.ndarray]:
        """Per-query arrays of every statistic column of measure ``m`` ([`columns`][tierank.results.EvalResult.columns]), in `qids` order."""
        return self._table(m)

    @property
    def columns(self) -> tuple[str, ...]:
        """Statistic columns: the stable seven, then ``lower, upper, residual`` with bounds."""
        return COLUMNS + (EXTRA if self.bounds else ())

    def per_query(self):
        """One row per (query, measure): query, measure, oblivious, expected, min, max, range, bias, std.

        Returns a pandas DataFrame (pandas is imported on first use).
        """
        import pandas as pd

        frames = []
        for m in self.measures:
            t = self._table(m)
            frames.append(pd.DataFrame({"query": self.qids, "measure": str(m), **t}))
        if not frames:
            return pd.DataFrame(columns=["query", "measure", *self.columns])
        return pd.concat(frames, ignore_index=True)

    def summary(self, m: Measure) -> Aggregate:
        """The [`tierank.measures.Aggregate`][tierank.measures.Aggregate] of measure ``m`` (its family's summary over queries)."""
        return m.aggregate(self.stats[m])

    def _aggregate_rows(self) -> list[dict[str, Any]]:
        """One row per measure: the family's summary ([`Measure.aggregate`][tierank.results.Measure.aggregate]; the mean, a sum for
        counts, trec_eval's geometric mean for gm_map) of each column."""
        rows = []
        n = len(self.qids)
        for m in self.measures:
            t = self._table(m)
            a = self.summary(m)
            row: dict[str, Any] = {"query": AGGREGATE, "measure": str(m)}
            agg = np.sum if m.aggregator == "sum" else np.mean
            for c in self.columns:
                row[c] = float(agg(t[c])) if n and a.linear else float("nan")
            # a linear summary's range and bias: the summaries of the per-query ones
            for c in COLUMNS:
                if not (a.linear and c in DERIVED):
                    row[c] = statistic(a, c)
            rows.append(row)
        return rows

    def _labels(self, m: Measure, i: int | None = None) -> dict[str, Any]:
        """``method`` for every record; with a sampled measure also ``samples``, ``seed`` and ``se``
        (per query, or of the summary when ``i`` is None)."""
        s = self.stats[m]
        if i is not None and s.method != "exact" and s.sampled is not None and not s.sampled[i]:
            return {
                "method": "exact"
            }  # this query's statistics are exact (enumerated, or cannot vary)
        out = m.sampling(s)
        if s.method != "exact":
            se = self.summary(m).se if i is None else (None if s.se is None else float(s.se[i]))
            out["se"] = se
        return out

    def aggregate(self):
        """One row per measure with the mean over queries (``query`` = ``"all"``), as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self._aggregate_rows(), columns=["query", "measure", *self.columns])

    def records(self, per_query: bool = True) -> list[dict[str, Any]]:
        """jsonl-ready records: per-query rows (if asked) then the aggregate rows; NaN -> None.

        The aggregate records, and only they, have ``query == "all"`` (`AGGREGATE`; no
        evaluated query may be called so).
        """
        out: list[dict[str, Any]] = []
        if per_query:
            for m in self.measures:
                cols = {c: v.tolist() for c, v in self._table(m).items()}
                name = str(m)
                for i, q in enumerate(self.qids):
                    out.append(
                        {
                            "query": q,
                            "measure": name,
                            **{c: jsonable(cols[c][i]) for c in self.columns},
                            **self._labels(m, i),
                        }
                    )
        for m, row in zip(self.measures, self._aggregate_rows()):
            out.append(
                {
                    **{k: (jsonable(v) if k in self.columns else v) for k, v in row.items()},
                    **self._labels(m),
                }
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """Nested plain-Python view: ``{"all": {measure: {stat: value}}, qid: {...}, ...}``.

        ``"all"`` holds the aggregate (mean over queries; std of the mean) and is never a query
        id (`AGGREGATE` is reserved); the other keys are the evaluated queries, sorted.

        Examples
        --------
        >>> import tierank
        >>> res = tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["P@1"])
        >>> res.to_dict()["all"]["P@1"]["expected"]
        0.5
        """
        recs = self.records(per_query=True)
        n_agg = len(self.measures)
        out: dict[str, Any] = {AGGREGATE: {}}
        for rec in recs[len(recs) - n_agg :]:
            out[AGGREGATE][rec["measure"]] = {c: rec[c] for c in self.columns}
        for rec in recs[: len(recs) - n_agg]:
            out.setdefault(rec["query"], {})[rec["measure"]] = {c: rec[c] for c in self.columns}
        return out

    def __repr__(self) -> str:
        return (
            f"EvalResult({len(self.qids)} queries, measures={[str(m) for m in self.measures]}, "
            f"tie_break={self.settings.get('tie_break')!r})"
        )


@dataclass(frozen=True)
class DiversityResult:
    """An [`EvalResult`][tierank.results.EvalResult] of intent-aware measures looked up by measure string, as
    [`tierank.evaluate.evaluate_diversity`][tierank.evaluate.evaluate_diversity] returns it: ``stats`` and the methods take
    ``"alpha_nDCG@10"`` or its Measure."""

    result: EvalResult

    @property
    def queries(self) -> list[str]:
        return self.result.qids

    @property
    def measures(self) -> list[Measure]:
        return self.result.measures

    @property
    def stats(self) -> dict[str, Stats]:
        """Per-query [`Stats`][tierank.measures.summary.Stats] of each measure, keyed by its string form."""
        return {str(m): s for m, s in self.result.stats.items()}

    def _measure(self, measure: str | Measure) -> Measure:
        from .measures.diversity import parse_diversity_measure

        return parse_diversity_measure(measure)

    def aggregate(self, measure: str | Measure) -> Aggregate:
        """The mean over queries (``std``: over tie orderings of the mean, queries independent)."""
        return self.result.summary(self._measure(measure))

    def per_query(self, measure: str | Measure) -> dict[str, dict[str, float]]:
        """``{qid: {"oblivious", "expected", "min", "max", "std"}}`` of one measure."""
        s = self.result.stats[self._measure(measure)]
        return {
            q: {
                "oblivious": float(s.oblivious[i]),
                "expected": float(s.expected[i]),
                "min": float(s.min[i]),
                "max": float(s.max[i]),
                "std": math.sqrt(float(s.var[i])),
            }
            for i, q in enumerate(self.queries)
        }
