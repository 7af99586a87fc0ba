"""The public entry point: :func:`evaluate`."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import compute as ac
from .errors import NoJudgedDocuments, NothingToEvaluate, Problem, TierankInputError
from .io.convert import to_qrels, to_run
from .io.model import Qrels, Run
from .measures.base import Measure, Stats
from .measures.linear import REL
from .measures.names import plan as measure_plan
from .results import EvalResult
from .ties import TieBreak, prepare
from .ties.prepare import Judgments

UNJUDGED = ("nonrelevant", "bounds", "condensed")


def condense(run: Run, qrels: Qrels, negative_unjudged: bool = False) -> Run:
    """The run without its unjudged documents (Sakai's condensed lists), ranks closed up.

    With ``negative_unjudged`` a document whose qrels grade is negative counts as unjudged too
    (trec_eval's convention for ``-J``: "in the pool but unjudged", ``form_res_rels.c``).

    Examples
    --------
    >>> r = condense(to_run({"q": {"a": 3.0, "x": 2.0, "b": 1.0}}), to_qrels({"q": {"a": 0, "b": 1}}))
    >>> r.docid.to_pylist()
    ['a', 'b']
    """
    rq = ac.decoded(run.qid)
    qid, docid = qrels.qid, qrels.docid
    if negative_unjudged:
        judged_rows = ac.array(np.asarray(qrels.grade) >= 0)
        qid, docid = ac.filter(qid, judged_rows), ac.filter(docid, judged_rows)
    # the rows whose (query, document) pair is judged, looked up as prepare looks judgments up (no Arrow join:
    # pyarrow.acero and pyarrow.compute stay unimported)
    judged_qids = ac.unique(qid)
    judgments = Judgments(ac.index_in(qid, judged_qids).to_numpy(zero_copy_only=False), docid, np.zeros(len(qid)))
    q = ac.fill_null(ac.index_in(rq, judged_qids), -1).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(q >= 0)
    keep = rows[judgments.lookup(q[rows], run.docid, rows) >= 0]
    if len(keep) == 0:
        raise NoJudgedDocuments(f"--condensed: no document of {run.source} is judged in {qrels.source}")
    take = ac.array(keep)
    return Run(qid=ac.take(rq, take), docid=ac.take(run.docid, take), score=run.score[keep],
               rank=None if run.rank is None else run.rank[keep], source=run.source)


def evaluate(qrels: Any, run: Any, measures: Iterable[str | Measure | list[Measure]] | str | Measure, *,
             tie_break: str | TieBreak = "trec_eval", rel: int = 1,
             complete: bool = False, candidates_only: bool = False, unjudged: str = "nonrelevant",
             max_depth: int | None = None, samples: int = 1000, seed: int = 0,
             judged_only: bool = False) -> EvalResult:
    """Tie-aware evaluation of ``run`` against ``qrels``.

    For every (query, measure): the tie-oblivious value under ``tie_break``, and
    over all orderings inside tie groups the exact expectation, min, max and
    standard deviation.

    Parameters
    ----------
    qrels, run
        A path to a TREC file (plain or gzip; BEIR qrels TSV too), a pandas or
        polars DataFrame, or a dict of dicts ``{qid: {docid: value}}``.
    measures
        Measure strings as ir_measures writes them (``"nDCG@10"``, ``"RR"``, ...), or as
        trec_eval names them (``"map"``, ``"P.5,10"``, ``"ndcg_cut.10"``, the nicknames
        ``"official"`` and ``"all_trec"``; see :mod:`tierank.measures.names`).  trec_eval
        measures tierank lacks are left out of a nickname with a :class:`UserWarning`.  Parsed
        :class:`tierank.measures.Measure` objects are accepted too, alone or among the strings, as
        ir_measures users write them: ``from tierank.measures import nDCG, AP, P`` then
        ``[nDCG@10, AP, P@[5, 10]]`` (a list of cutoffs gives a list of measures, flattened here).
    tie_break
        Order used for the tie-oblivious value: ``"trec_eval"`` (docno descending,
        trec_eval's own), ``"input"`` (file order), ``"docno"`` (ascending), or
        ``"random:SEED"``.
    rel
        Minimum grade counted relevant by binary measures (trec_eval ``-l``); an integer in
        [-2**53, 2**53], the range of a measure's own ``rel`` parameter.
    complete
        Average over every qrels query; queries absent from the run score 0 (``trec_eval -c``).
    candidates_only
        Count relevant documents and the ideal DCG only among judged documents
        present in the run (reranking convention of MTEB and the ``trm`` library).
    unjudged
        ``"nonrelevant"`` (trec_eval's convention), ``"bounds"`` (also report, per
        query, a lower and an upper bound over tie orderings *and* every relevance
        the unjudged retrieved documents could have, attained; RBP adds Moffat &
        Zobel's residual; refused for AP, nDCG and Rprec, which no such assumption
        bounds), or ``"condensed"`` (drop unjudged documents first, Sakai; ``trec_eval -J``).
    max_depth
        Read at most this many ranks per query (``trec_eval -M``): every measure's cutoff is
        capped by it, and a tie group straddling it is a tie straddling a cutoff.
    samples, seed
        Random tie orderings drawn, and their seed, by the measures that have no exact method
        for their expectation (their records say ``method: sampled`` with a standard error ``se``).
    judged_only
        trec_eval's ``-J``: ``unjudged="condensed"`` with trec_eval's conventions: a negative qrels
        grade also marks a document unjudged, and a query of the run whose documents are all
        unjudged is still evaluated (as a query that retrieved nothing).

    Returns
    -------
    EvalResult
        with ``.per_query()``, ``.aggregate()`` (pandas DataFrames) and ``.to_dict()``.

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
    resolved = measure_plan([measures] if isinstance(measures, (str, Measure)) else measures)
    for note in resolved.notes:
        warnings.warn(note, stacklevel=2)
    parsed = resolved.measures
    if not parsed:
        raise TierankInputError("no measure given")
    problem = REL.check(rel)
    if problem:
        raise TierankInputError(problem)
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer))
                                  or max_depth < 1):
        raise TierankInputError(f"max_depth must be a positive integer, got {max_depth!r}")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 2:
        raise TierankInputError(f"samples must be an integer of at least 2, got {samples!r}")
    policy = TieBreak.parse(tie_break)
    if unjudged not in UNJUDGED:
        raise TierankInputError(f"unknown unjudged convention {unjudged!r}; accepted: {', '.join(UNJUDGED)}")
    if unjudged == "bounds":
        refused = [m for m in parsed if m.bounds_refusal]
        if refused:
            raise TierankInputError([Problem("", None, f"--unjudged bounds: no valid bound for {m}: {m.bounds_refusal}")
                                     for m in refused])
    if judged_only:
        if unjudged == "bounds":
            raise TierankInputError("judged_only (trec_eval -J) drops unjudged documents: it cannot be combined "
                                    "with unjudged='bounds'")
        unjudged = "condensed"
    q = to_qrels(qrels)
    r = to_run(run)
    eval_q, eval_complete = q, complete
    if unjudged == "condensed":
        if judged_only and not complete:
            # trec_eval -J keeps a query whose documents were all unjudged: evaluate every qrels
            # query of the uncondensed run, as -c does for the whole qrels
            rq = ac.decoded(r.qid)
            keep = ac.is_in(q.qid, ac.unique(rq)).to_numpy(zero_copy_only=False)
            idx = ac.array(np.flatnonzero(keep))
            eval_q = Qrels(qid=ac.take(q.qid, idx), docid=ac.take(q.docid, idx), grade=np.asarray(q.grade)[keep],
                           source=q.source)
            eval_complete = True
        try:
            r = condense(r, q, negative_unjudged=judged_only)
        except NoJudgedDocuments:
            if not judged_only:
                raise
            # trec_eval -J: no document of the run is judged, and every query is evaluated as one that
            # retrieved nothing (map 0.0), not refused
            r = Run(qid=ac.take(r.qid, ac.array(np.zeros(0, dtype=np.int64))),
                    docid=ac.take(r.docid, ac.array(np.zeros(0, dtype=np.int64))),
                    score=np.zeros(0), rank=None, source=r.source)
    prep = prepare(r, eval_q, tie_break=policy, rel_level=rel, complete=eval_complete, candidates_only=candidates_only,
                   measures=tuple(parsed), count_judged=unjudged == "bounds",
                   max_depth=float("inf") if max_depth is None else int(max_depth), samples=int(samples),
                   seed=int(seed))
    if prep.nq == 0:
        raise NothingToEvaluate(
            f"no query of {r.source} is judged in {q.source}: nothing to evaluate "
            "(query ids must match exactly)")
    stats: dict[Measure, Stats] = {m: m.compute(prep) for m in parsed}
    bounds: dict[Measure, tuple[np.ndarray, np.ndarray]] = {}
    residual: dict[Measure, np.ndarray] = {}
    if unjudged == "bounds":
        bounds = {m: m.unjudged_bounds(prep, stats[m]) for m in parsed}
        residual = {m: res for m, res in ((m, m.residual(prep)) for m in parsed) if res is not None}
    settings: dict[str, Any] = {"tie_break": str(policy), "rel": rel, "complete": complete, "candidates_only": candidates_only,
                "unjudged": unjudged, "run": r.source, "qrels": q.source}
    if judged_only:
        settings["judged_only"] = True
    if max_depth is not None:
        settings["max_depth"] = int(max_depth)
    return EvalResult(measures=parsed, qids=prep.qids, stats=stats, ties=prep.summary, settings=settings,
                      bounds=bounds, residual=residual)
