"""The public entry point: :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import TierankInputError
from .io.convert import to_qrels, to_run
from .measures import parse_measure
from .results import EvalResult
from .ties import TieBreak, prepare


def evaluate(qrels, run, measures: Iterable[str] | str, *, tie_break: str = "trec_eval", rel: int = 1,
             complete: bool = False, candidates_only: bool = False) -> EvalResult:
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
        Measure strings as ir_measures writes them (``"nDCG@10"``, ``"RR"``, ...).
    tie_break
        Order used for the tie-oblivious value: ``"trec_eval"`` (docno descending,
        trec_eval's own), ``"input"`` (file order), ``"docno"`` (ascending), or
        ``"random:SEED"``.
    rel
        Minimum grade counted relevant by binary measures (trec_eval ``-l``).
    complete
        Average over every qrels query; queries absent from the run score 0 (``trec_eval -c``).
    candidates_only
        Count relevant documents and the ideal DCG only among judged documents
        present in the run (reranking convention of MTEB and the ``trm`` library).

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
    """
    if isinstance(measures, str):
        measures = [measures]
    parsed, errors = [], []
    for m in measures:
        try:
            parsed.append(parse_measure(m))
        except TierankInputError as e:
            errors.extend(e.problems)
    if errors:
        raise TierankInputError(errors)
    if not parsed:
        raise TierankInputError("no measure given")
    parsed = list(dict.fromkeys(parsed))
    policy = TieBreak.parse(tie_break)
    q = to_qrels(qrels)
    r = to_run(run)
    prep = prepare(r, q, tie_break=policy, rel_level=rel, complete=complete, candidates_only=candidates_only,
                   measures=tuple(parsed))
    if prep.nq == 0:
        raise TierankInputError(
            f"no query of {r.source} is judged in {q.source}: nothing to evaluate "
            "(query ids must match exactly)")
    stats = {m: m.compute(prep) for m in parsed}
    settings = {"tie_break": str(policy), "rel": rel, "complete": complete,
                "candidates_only": candidates_only, "run": r.source, "qrels": q.source}
    return EvalResult(measures=parsed, qids=prep.qids, stats=stats, ties=prep.tie_summary(), settings=settings)
