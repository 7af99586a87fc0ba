"""The engine's entry points: [`Evaluator`][tierank.evaluate.Evaluator] (qrels, measures and settings, built once, for any number
of runs) and [`evaluate`][tierank.evaluate.evaluate] (one run)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

from .errors import NoJudgedDocuments, NothingToEvaluate, Problem, TierankInputError

if TYPE_CHECKING:
    import numpy as np

    from .io.model import Qrels, Run
    from .measures.base import Aggregate, Measure, Stats
    from .measures.names import Plan
    from .results import DiversityResult, EvalResult
    from .settings import UNJUDGED, EvalSettings
    from .ties import Prepared
    from .ties.judgments import Judgments

    Measures: TypeAlias = Iterable[str | Measure | list[Measure]] | str | Measure | Plan

# The engine (numpy, pyarrow, the measures) is imported by the functions below on their first call, so
# that ``import tierank`` (and with it ``tierank --help`` and ``--version``) imports none of it.

__all__ = ["Evaluator", "evaluate", "evaluate_diversity", "condense", "EvalSettings", "UNJUDGED"]


def __getattr__(name: str):
    """The names this module re-exports from the engine, imported on first use."""
    if name in ("EvalSettings", "UNJUDGED"):
        from . import settings

        return getattr(settings, name)
    if name == "Measures":  # the measures argument's type
        from .measures.base import Measure
        from .measures.names import Plan

        return Iterable[str | Measure | list[Measure]] | str | Measure | Plan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def condense(run: Run, qrels: Qrels, negative_unjudged: bool = False) -> Run:
    """The run without its unjudged documents (Sakai's condensed lists), ranks closed up.

    With ``negative_unjudged`` a document whose qrels grade is negative counts as unjudged too
    (trec_eval's convention for ``-J``: "in the pool but unjudged", ``form_res_rels.c``).

    Examples
    --------
    >>> from tierank import to_qrels, to_run
    >>> r = condense(to_run({"q": {"a": 3.0, "x": 2.0, "b": 1.0}}), to_qrels({"q": {"a": 0, "b": 1}}))
    >>> r.docid.to_pylist()
    ['a', 'b']
    """
    import numpy as np

    from . import compute as ac
    from .io.model import Run
    from .ties.judgments import Judgments

    rq = ac.decoded(run.qid)
    qid, docid = qrels.qid, qrels.docid
    if negative_unjudged:
        judged_rows = ac.array(np.asarray(qrels.grade) >= 0)
        qid, docid = ac.filter(qid, judged_rows), ac.filter(docid, judged_rows)
    # the rows whose (query, document) pair is judged, looked up as prepare looks judgments up (no Arrow join:
    # pyarrow.acero and pyarrow.compute stay unimported)
    judged_qids = ac.unique(qid)
    judgments = Judgments(ac.numpy(ac.index_in(qid, judged_qids)), docid, np.zeros(len(qid)))
    q = ac.numpy(ac.fill_null(ac.index_in(rq, judged_qids), -1))
    rows = np.flatnonzero(q >= 0)
    keep = rows[judgments.lookup(q[rows], run.docid, rows) >= 0]
    if len(keep) == 0:
        raise NoJudgedDocuments(
            f"--condensed: no document of {run.source} is judged in {qrels.source}"
        )
    take = ac.array(keep)
    return Run(
        qid=ac.take(rq, take),
        docid=ac.take(run.docid, take),
        score=run.score[keep],
        rank=None if run.rank is None else run.rank[keep],
        source=run.source,
    )


class Evaluator:
    """Qrels, measures and settings, checked and read once, for any number of runs (in the manner of
    ir_measures' ``evaluator(measures, qrels)``).

    Parameters
    ----------
    qrels
        Any input [`tierank.io.convert.to_qrels`][tierank.io.convert.to_qrels] takes (a path, a DataFrame, a dict of dicts, ...).
    measures
        Measure strings as ir_measures writes them (``"nDCG@10"``, ``"RR"``, ...), or as
        trec_eval names them (``"map"``, ``"P.5,10"``, ``"ndcg_cut.10"``, the nicknames
        ``"official"`` and ``"all_trec"``; see [`tierank.measures.names`][tierank.measures.names]), or a resolved
        [`tierank.measures.names.Plan`][tierank.measures.names.Plan].  trec_eval measures tierank lacks are left out of a
        nickname with a `UserWarning`.  Parsed [`tierank.measures.Measure`][tierank.measures.Measure] objects are
        accepted too, alone or among the strings: ``[nDCG@10, AP, P@[5, 10]]`` (a list of cutoffs gives
        a list of measures, flattened here).
    settings
        The [`EvalSettings`][tierank.evaluate.EvalSettings] (default: trec_eval's conventions).

    The measures are checked against the settings here (``unjudged="bounds"`` refuses the measures no
    assumption bounds), before any run is read.

    Examples
    --------
    >>> ev = Evaluator({"q1": {"d1": 1, "d3": 1}}, ["P@2", "RR"])
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8}}
    >>> {str(m): round(a.expected, 4) for m, a in ev.calc_aggregate(run).items()}
    {'P@2': 0.75, 'RR': 1.0}
    >>> [(r["query"], r["measure"], r["expected"]) for r in ev.iter_calc(run)]
    [('q1', 'P@2', 0.75), ('q1', 'RR', 1.0)]
    """

    def __init__(
        self,
        qrels: Any,
        measures: Measures,
        settings: EvalSettings | None = None,
        *,
        stacklevel: int = 2,
    ) -> None:
        from .io.convert import to_qrels
        from .measures.base import Measure
        from .measures.names import Plan
        from .measures.names import plan as measure_plan
        from .settings import EvalSettings

        self.settings = EvalSettings() if settings is None else settings
        if isinstance(measures, Plan):
            plan = measures
        else:
            plan = measure_plan([measures] if isinstance(measures, (str, Measure)) else measures)
            for note in plan.notes:
                warnings.warn(note, stacklevel=stacklevel)
        self.plan = plan
        self.measures: list[Measure] = plan.measures
        if not self.measures:
            raise TierankInputError(
                'no measure given: name one or more (e.g. ["nDCG@10", "RR"]; tierank.supported() lists them)'
            )
        if self.settings.unjudged == "bounds":
            refused = [m for m in self.measures if m.bounds_refusal]
            if refused:
                raise TierankInputError(
                    [
                        Problem(
                            "",
                            None,
                            f"--unjudged bounds: no valid bound for {m}: {m.bounds_refusal}",
                        )
                        for m in refused
                    ]
                )
        self.subtopics = None
        diverse = [m for m in self.measures if m.needs_subtopics]
        if diverse:
            self._check_subtopic_settings(diverse)
            from .io.sources import read

            self.subtopics = read(qrels, "subtopic-qrels")
            self.qrels: Qrels = self.subtopics.plain()
        else:
            self.qrels = to_qrels(qrels)

    def _check_subtopic_settings(self, diverse: list[Measure]) -> None:
        """Refuse the settings the intent-aware measures do not follow (named with the measures)."""
        s = self.settings
        names = ", ".join(map(str, diverse))
        refused = [
            text
            for text, on in (
                ("max_depth (-M)", s.max_depth is not None),
                ("candidates_only", s.candidates_only),
            )
            if on
        ]
        if refused:
            raise TierankInputError(
                f"{' and '.join(refused)}: not supported by the intent-aware measures ({names})"
            )

    @property
    def judgments(self) -> Judgments:
        """The qrels' judgments as every run is joined with them
        (``tierank.ties.judgments.Judgments.of``): built at the first call and kept for
        every later run."""
        from .ties.judgments import Judgments

        held = self.__dict__.get("_judgments")
        if held is None or held[0] is not self.qrels:  # (an evaluator copied with other qrels)
            held = (self.qrels, Judgments.of(self.qrels))
            self.__dict__["_judgments"] = held
        return held[1]

    def judging(self, qids: Any) -> Evaluator:
        """This evaluator with the judgments of the queries ``qids`` (an Arrow array of strings) only."""
        import numpy as np

        from . import compute as ac
        from .io.model import Qrels

        q = self.qrels
        keep = ac.is_in(q.qid, qids)
        out = object.__new__(Evaluator)
        out.__dict__.update(self.__dict__)
        out.qrels = Qrels(
            qid=ac.filter(q.qid, keep),
            docid=ac.filter(q.docid, keep),
            grade=np.asarray(q.grade)[ac.numpy(keep)],
            source=q.source,
        )
        return out

    def under(self, **options: Any) -> Evaluator:
        """This evaluator with some settings changed (the measures are not checked again)."""
        from .settings import EvalSettings

        out = object.__new__(Evaluator)
        out.__dict__.update(self.__dict__)
        out.settings = EvalSettings.of(self.settings, **options)
        return out

    def evaluate(
        self,
        run: Any,
        progress: Callable[[str, int, int], None] | None = None,
        *,
        score_format: bool = False,
        moments: bool = True,
        extremes: bool = True,
    ) -> EvalResult:
        """Tie-aware evaluation of ``run`` (any input [`tierank.io.convert.to_run`][tierank.io.convert.to_run] takes).

        ``progress(step, done, total)``, when given, is called as each step begins: ``"reading"``,
        ``"ties"`` (the tie groups of every query), then each measure by name, with the measures done
        so far and their number. ``score_format``: also find the narrowest float format that holds
        every score exactly (the result's ``score_format``, for its manifest). ``moments=False``: the
        oblivious value, min and max only; the families that can skip their expectation leave
        ``expected`` and ``var`` NaN where ties move the value ([`tierank.ties.Prepared`][tierank.ties.Prepared]'s ``moments``);
        with ``extremes=False`` too, the oblivious value alone (those that can skip them leave
        ``min`` and ``max`` NaN as well: `Prepared`'s ``extremes``).

        >>> steps = []
        >>> _ = Evaluator({"q": {"a": 1}}, ["P@1", "RR"]).evaluate(
        ...     {"q": {"a": 1.0}}, progress=lambda *a: steps.append(a))
        >>> steps
        [('reading', 0, 2), ('ties', 0, 2), ('P@1', 0, 2), ('RR', 1, 2)]
        """
        from .measures.base import compute_all
        from .results import EvalResult

        s = self.settings
        parsed = self.measures
        step = progress or (lambda what, done, total: None)
        prep, r = self._prepared(run, step, moments, extremes)
        # one family's several cutoffs share one pass over the run (Measure.batch_key)
        stats: dict[Measure, Stats] = compute_all(prep, parsed, step)
        bounds: dict[Measure, tuple[np.ndarray, np.ndarray]] = {}
        residual: dict[Measure, np.ndarray] = {}
        if s.unjudged == "bounds":
            bounds = {m: m.unjudged_bounds(prep, stats[m]) for m in parsed}
            residual = {
                m: res for m, res in ((m, m.residual(prep)) for m in parsed) if res is not None
            }
        return EvalResult(
            measures=list(parsed),
            qids=prep.qids,
            stats=stats,
            ties=prep.summary,
            settings=s.record(r.source, self.qrels.source),
            unevaluated=prep.unevaluated,
            bounds=bounds,
            residual=residual,
            evaluated_under=s,
            score_format=_score_format(r.score) if score_format else None,
        )

    __call__ = evaluate

    def prepared(self, run: Any, *, moments: bool = True) -> Prepared:
        """``run`` read and laid out for the measures (the [`tierank.ties.Prepared`][tierank.ties.Prepared] that
        [`evaluate`][tierank.evaluate.Evaluator.evaluate] computes them on), under these settings."""
        return self._prepared(run, lambda what, done, total: None, moments)[0]

    def _prepared(
        self,
        run: Any,
        step: Callable[[str, int, int], None],
        moments: bool,
        extremes: bool = True,
    ) -> tuple[Prepared, Run]:
        """The [`Prepared`][tierank.ties.Prepared] of ``run`` and the run as read (condensed where the
        settings condense), ``step`` told as reading and the tie groups begin."""
        from dataclasses import replace

        import numpy as np

        from . import compute as ac
        from .io.convert import to_run
        from .io.model import Run
        from .ties import prepare

        s, q = self.settings, self.qrels
        parsed = self.measures
        step("reading", 0, len(parsed))
        r = to_run(run)
        eval_q, eval_complete = q, s.complete
        if s.unjudged == "condensed":
            if s.judged_only and not s.complete:
                # trec_eval -J keeps a query whose documents were all unjudged: evaluate every qrels
                # query of the uncondensed run, as -c does for the whole qrels
                eval_q = self.judging(ac.unique(ac.decoded(r.qid))).qrels
                eval_complete = True
            try:
                r = condense(r, q, negative_unjudged=s.judged_only)
            except NoJudgedDocuments:
                if not s.judged_only:
                    raise
                # trec_eval -J: no document of the run is judged, and every query is evaluated as one
                # that retrieved nothing (map 0.0), not refused
                none = ac.array(np.zeros(0, dtype=np.int64))
                r = Run(
                    qid=ac.take(r.qid, none),
                    docid=ac.take(r.docid, none),
                    score=np.zeros(0),
                    rank=None,
                    source=r.source,
                )
        step("ties", 0, len(parsed))
        prep = prepare(
            r,
            eval_q,
            s if eval_complete == s.complete else replace(s, complete=eval_complete),
            measures=tuple(parsed),
            subtopics=None if self.subtopics is None else self.subtopics.judgments,
            moments=moments,
            extremes=extremes,
            judgments=self.judgments if eval_q is q else None,
        )
        if prep.nq == 0:
            raise NothingToEvaluate(
                f"no query of {r.source} is judged in {q.source}: nothing to evaluate "
                "(query ids must match exactly)"
            )
        return prep, r

    def iter_calc(self, run: Any) -> Iterator[dict[str, Any]]:
        """The per-query records of ``run`` ([`tierank.results.EvalResult.records`][tierank.results.EvalResult.records]), one at a time."""
        yield from self.evaluate(run).records(per_query=True)[: -len(self.measures)]

    def calc_aggregate(self, run: Any) -> dict[Measure, Aggregate]:
        """Each measure's summary over the queries of ``run``, through its own aggregator."""
        res = self.evaluate(run)
        return {m: res.summary(m) for m in self.measures}

    def __repr__(self) -> str:
        return f"Evaluator({self.qrels.source or 'qrels'}, {[str(m) for m in self.measures]}, {self.settings})"


def _score_format(scores: Any) -> str:
    from .provenance.build import score_format

    return score_format(scores)


def evaluate(
    qrels: Any, run: Any, measures: Measures, settings: EvalSettings | None = None, **options: Any
) -> EvalResult:
    """Tie-aware evaluation of ``run`` against ``qrels``.

    For every (query, measure): the tie-oblivious value under the tie-break policy, and
    over all orderings inside tie groups the exact expectation, min, max and
    standard deviation.  ``Evaluator(qrels, measures, settings).evaluate(run)``.

    Parameters
    ----------
    qrels, run
        A path to a TREC file (plain or gzip; BEIR qrels TSV too), a pandas or
        polars DataFrame, or a dict of dicts ``{qid: {docid: value}}``.
    measures
        As [`Evaluator`][tierank.evaluate.Evaluator] takes them: ``"nDCG@10"``, trec_eval's ``"ndcg_cut.10"``,
        ``"official"``, or [`tierank.measures.Measure`][tierank.measures.Measure] values.
    settings, options
        An [`EvalSettings`][tierank.evaluate.EvalSettings], and/or its fields by name: ``tie_break`` (``"trec_eval"``,
        ``"input"``, ``"docno"``, ``"random:SEED"``), ``rel``, ``complete``, ``candidates_only``,
        ``unjudged`` (``"nonrelevant"``, ``"bounds"``, ``"condensed"``), ``judged_only``,
        ``max_depth``, ``samples``, ``seed`` (see [`EvalSettings`][tierank.evaluate.EvalSettings]).

    Returns
    -------
    EvalResult
        with ``.per_query()``, ``.aggregate()`` (pandas DataFrames) and ``.to_dict()``.

    Raises
    ------
    TierankInputError
        One line naming the input, for an empty run (``{}``, a file without result lines), empty
        qrels, no measure, or a run none of whose queries is judged (`NothingToEvaluate`).  By design:
        a mean over no query, or a result without a measure, would be a number or a table that says
        nothing.  pytrec_eval's ``evaluate({})`` returns ``{}`` and ir_measures scores empty inputs
        with ``[]`` and NaN; the surfaces that stand in for them
        ([`tierank.integrations.ir_measures`][tierank.integrations.ir_measures]) return what they
        return, and the command line refuses with one line (exit 2).

    Examples
    --------
    The tie of the paper's Figure 1: d2, d3, d4 share a score, d3 and d4 are relevant.

    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8, "d4": 0.8, "d5": 0.5}}
    >>> res = evaluate(qrels, run, ["R@3", "P@2"])
    >>> res.aggregate().round(4)[["measure", "oblivious", "expected", "min", "max", "bias", "std"]]
      measure  oblivious  expected     min  max    bias     std
    0     R@3        1.0    0.7778  0.6667  1.0  0.2222  0.1571
    1     P@2        1.0    0.8333  0.5000  1.0  0.1667  0.2357

    The same measures as Python values:

    >>> from tierank.measures import P, R
    >>> evaluate(qrels, run, [R@3, P@[1, 2]]).aggregate().round(4)[["measure", "expected"]]
      measure  expected
    0     R@3    0.7778
    1     P@1    1.0000
    2     P@2    0.8333
    """
    from .settings import EvalSettings

    return Evaluator(qrels, measures, EvalSettings.of(settings, **options), stacklevel=3).evaluate(
        run
    )


def evaluate_diversity(
    qrels: Any,
    run: Any,
    measures: Iterable[str | Measure] | str,
    *,
    samples: int = 1000,
    seed: int = 0,
    limit: int = 10000,
) -> DiversityResult:
    """Intent-aware measures of ``run`` on subtopic ``qrels`` ([`tierank.measures.diversity`][tierank.measures.diversity]):
    [`evaluate`][tierank.evaluate.evaluate] with ``samples``, ``seed`` and ``exact_limit=limit``, its result looked up by
    measure string.  ``qrels``: a ``qid subtopic docid grade`` file, a
    [`tierank.io.subtopics.SubtopicQrels`][tierank.io.subtopics.SubtopicQrels] or ``{qid: {docid: {subtopic: grade}}}``.

    >>> qrels = {"q": {"a": {"1": 1}, "b": {"1": 1, "2": 1}, "c": {"2": 0}}}
    >>> res = evaluate_diversity(qrels, {"q": {"a": 2.0, "b": 1.0, "c": 1.0}}, ["P_IA@2", "alpha_nDCG@2"])
    >>> [round(res.aggregate(m).expected, 4) for m in ["P_IA@2", "alpha_nDCG@2"]]
    [0.5, 0.6362]
    """
    from .measures.diversity import parse_diversity_measure
    from .results import DiversityResult
    from .settings import EvalSettings

    texts = [measures] if isinstance(measures, str) else measures
    parsed = [parse_diversity_measure(m) for m in texts]
    settings = EvalSettings(samples=samples, seed=seed, exact_limit=limit)
    ev = Evaluator(qrels, parsed, settings, stacklevel=3)  # the qrels read as subtopic qrels
    return DiversityResult(ev.evaluate(run))
