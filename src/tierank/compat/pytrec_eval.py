"""pytrec_eval's interface, computed by tierank: ``import tierank.compat.pytrec_eval as pytrec_eval``
is the whole migration of a script that calls
``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` (BEIR, MTEB and many papers do).

[`RelevanceEvaluator`][tierank.compat.pytrec_eval.RelevanceEvaluator] takes pytrec_eval's arguments
(``query_relevance`` as ``{qid: {docid: grade}}``, ``measures`` as a set of its names:
``"map"``, ``"ndcg_cut.10"``, ``"P_5"``, ``"recall"``, a base name alone meaning trec_eval's
default parameters; ``relevance_level``; ``judged_docs_only_flag``) and its
[`evaluate`][tierank.compat.pytrec_eval.RelevanceEvaluator.evaluate] returns the same nested dict:
``{qid: {measure: value}}`` for every query both in the run and in the qrels, under the names
trec_eval prints (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``), the values pytrec_eval gives
(ties broken as trec_eval breaks them: score descending, then docid descending; ``runid`` and
``relstring`` 0.0, ``num_q`` 1.0, ``gm_map`` and ``gm_bpref`` the logarithm of the query's value,
as pytrec_eval's per-query dict holds them).

[`evaluate_ties`][tierank.compat.pytrec_eval.RelevanceEvaluator.evaluate_ties] adds what the tied
scores do to each value: ``{qid: {measure: {"oblivious", "expected", "min", "max", "std"}}}``, exact
over every ordering of the tied documents.

Examples
--------
>>> import tierank.compat.pytrec_eval as pytrec_eval
>>> qrels = {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}}
>>> run = {"q1": {"a": 0.5, "b": 0.5}, "q2": {"x": 0.9, "y": 0.1}}
>>> ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.1"})
>>> ev.evaluate(run)
{'q1': {'map': 0.5, 'P_1': 0.0}, 'q2': {'map': 1.0, 'P_1': 1.0}}
>>> ev.evaluate_ties(run)["q1"]["P_1"]
{'oblivious': 0.0, 'expected': 0.5, 'min': 0.0, 'max': 1.0, 'std': 0.5}
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Iterable
from itertools import chain
from typing import Any

__all__ = [
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "supported_measures",
    "supported_nicknames",
]

#: the measure names pytrec_eval offers (``pytrec_eval.supported_measures``)
supported_measures = frozenset(
    {
        "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref",
        "gm_map", "infAP", "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel",
        "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret", "num_ret", "recall",
        "recip_rank", "relative_P", "relstring", "runid", "set_F", "set_P", "set_map",
        "set_recall", "set_relative_P", "success", "utility",
    }
)  # fmt: skip
#: the nicknames pytrec_eval expands (``pytrec_eval.supported_nicknames``)
supported_nicknames = frozenset({"all_trec", "official", "set"})

#: the measures whose per-query entry is a constant in pytrec_eval's dict
_CONSTANT = {"runid": 0.0, "relstring": 0.0, "num_q": 1.0}
#: the measures whose per-query entry is the logarithm of the value (trec_eval's MIN_GEO_MEAN floor)
_LOG = {"gm_map", "gm_bpref"}
_MIN_GEO_MEAN = 0.00001


def _table(scores: Any) -> Any:
    """The run ``{qid: {docid: score}}`` as a tierank run, read column-wise (a dict holds no
    document twice in a query: nothing to check there; a score is read as pytrec_eval reads it, an
    int or a bool as its float); anything else, or a run with a score that is not a finite number, a
    key that is not a string or a reserved query id, is given back as it is (tierank's reader then
    says what is wrong, and where)."""
    if not isinstance(scores, dict):
        return scores
    docs = list(scores.values())
    plain = set(map(type, docs)) <= {dict}  # (then dict.values is each one's values: one pass)
    if not plain and not all(isinstance(d, dict) for d in docs):
        return scores
    import numpy as np
    import pyarrow as pa

    from ..io.model import Run
    from ..io.readers import RESERVED_QID

    lens = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    values = list(
        chain.from_iterable(map(dict.values, docs) if plain else (d.values() for d in docs))
    )
    if not values or RESERVED_QID in scores:
        return scores
    try:  # numbers read as pytrec_eval reads them (an int or a bool as its float)
        numbers = pa.array(values, type=pa.float64())
        qids = pa.array(list(scores), type=pa.string())
        docids = pa.array(list(chain.from_iterable(docs)), type=pa.string())
    except (pa.ArrowException, TypeError, OverflowError):
        return scores
    if numbers.null_count:
        return scores
    score = numbers.to_numpy(zero_copy_only=True)
    if not np.isfinite(score).all():
        return scores
    # the query ids dictionary-encoded as they come (a dict's keys are distinct): nothing to encode later
    codes = pa.array(np.repeat(np.arange(len(docs), dtype=np.int32), lens))
    qid = pa.DictionaryArray.from_arrays(codes, qids)
    return Run(qid=qid, docid=docids, score=score, rank=None, source="run")


def _by_query(qids: list[str], names: list[str], columns: list[list[float]]) -> dict:
    """``{qid: {name: value}}`` from one list of values per name: each query's dict built by one
    dict display with the names as its constant keys (about twice as fast as ``dict(zip(names,
    values))`` per query, the cost that dominates a dict of many small queries).  A name enters the
    display as its ``repr``, a string literal that reads back as the same string, never as code."""
    if not all(type(name) is str for name in names):  # (the literals are those of str only)
        return {q: dict(zip(names, row)) for q, row in zip(qids, zip(*columns))}
    values = [f"v{i}" for i in range(len(names))]
    display = ", ".join(f"{name!r}: {v}" for name, v in zip(names, values))
    code = f"{{q: {{{display}}} for q, {''.join(v + ', ' for v in values)} in rows}}"
    scope: dict[str, Any] = {"__builtins__": {}, "rows": zip(qids, *columns)}
    # the collector is held off while the dicts are made: they hold floats and strings only, so no
    # cycle is created, and a pass every few hundred dicts costs a third of the time (the switch is
    # the interpreter's: a thread that turns it on meanwhile only costs this the time again)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return eval(code, scope)
    finally:
        if collecting:
            gc.enable()


def _text(measure: str) -> str:
    """A pytrec_eval measure name as a trec_eval ``-m`` text: ``P_5`` -> ``P.5``."""
    if measure in supported_measures or measure in supported_nicknames or "." in measure:
        return measure
    for base in sorted(supported_measures, key=len, reverse=True):
        if measure.startswith(base + "_") and re.fullmatch(r"[0-9.,]+", measure[len(base) + 1 :]):
            return f"{base}.{measure[len(base) + 1 :]}"
    return measure


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``: qrels and measures read once, any number of runs.

    Parameters
    ----------
    query_relevance
        ``{qid: {docid: grade}}``.
    measures
        pytrec_eval's measure names (see the module).
    relevance_level
        The least grade counted relevant (trec_eval's ``-l``).
    judged_docs_only_flag
        Drop the unjudged documents first (trec_eval's ``-J``).
    """

    def __init__(
        self,
        query_relevance: dict,
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        from ..errors import TierankInputError
        from ..evaluate import Evaluator
        from ..io.convert import to_qrels
        from ..measures.names import Entry, plan, resolve
        from ..settings import EvalSettings

        if isinstance(measures, str):
            raise TypeError("measures must be a set of measure names, not a string")
        texts = [_text(m) for m in measures]
        if not texts:
            raise ValueError("no measure given")
        self.measures = set(measures)
        self.relevance_level = int(relevance_level)
        self.judged_docs_only_flag = bool(judged_docs_only_flag)
        try:
            p = plan(texts).with_trec_eval_counts(
                rel=self.relevance_level, judged_only=self.judged_docs_only_flag
            )
        except TierankInputError as e:
            raise ValueError(str(e)) from None
        self._entries = list(p.printed)
        if p.runid and not any(e.name == "runid" for e in self._entries):
            self._entries.insert(0, Entry("runid", None))
        # the query set alone when only runid / num_q is asked for: the counts give it
        evaluated = p.measures or resolve(["num_ret", f"NumRel(rel={self.relevance_level})"])
        settings = EvalSettings(
            rel=self.relevance_level,
            judged_only=self.judged_docs_only_flag,
            unjudged="condensed" if self.judged_docs_only_flag else "nonrelevant",
        )
        try:
            self._evaluator = Evaluator(to_qrels(query_relevance), evaluated, settings)
        except TierankInputError as e:
            raise ValueError(str(e)) from None
        if not self.judged_docs_only_flag:  # the judgments each run is joined with, read once here
            self._evaluator.judgments.ready()  # (as pytrec_eval reads its qrels in its constructor)

    def _result(self, scores: dict, moments: bool = True, extremes: bool = True):
        from ..errors import NothingToEvaluate
        from ..measures.plans import empty_is_nan

        try:
            result = self._evaluator.evaluate(_table(scores), moments=moments, extremes=extremes)
        except NothingToEvaluate:
            return None
        if self.judged_docs_only_flag:
            empty_is_nan(result.stats, self.relevance_level)
        return result

    def _columns(self, result, stat: str) -> tuple[list[str], list[Any]]:
        """The names of the per-query entries and, per name, the values of ``stat`` by query."""
        import numpy as np

        names, columns = [], []
        n = len(result.qids)
        for e in self._entries:
            if e.measure is None:  # runid, num_q without a family
                names.append(e.name)
                value = (
                    _CONSTANT.get(e.name, 0.0)
                    if stat in ("oblivious", "expected", "min", "max")
                    else 0.0
                )
                columns.append(np.full(n, value))
                continue
            s = result.stats[e.measure]
            if getattr(e.measure, "string_valued", False) or e.name in _CONSTANT:
                constant = _CONSTANT.get(e.name, 0.0) if stat != "std" else 0.0
                names.append(e.name)
                columns.append(np.full(n, constant))
                continue
            if stat == "std":
                v = np.sqrt(np.asarray(s.var, dtype=float))
            else:
                v = np.asarray(getattr(s, stat), dtype=float)
            if e.name in _LOG:
                if stat == "std":  # the spread of the logarithm: exact only where nothing moves
                    lo = np.log(np.maximum(np.asarray(s.min, dtype=float), _MIN_GEO_MEAN))
                    hi = np.log(np.maximum(np.asarray(s.max, dtype=float), _MIN_GEO_MEAN))
                    v = np.where(hi == lo, 0.0, np.nan)
                else:
                    v = np.log(np.maximum(v, _MIN_GEO_MEAN))
            names.append(e.name)
            columns.append(v)
        return names, columns

    def evaluate(self, scores: dict) -> dict[str, dict[str, float]]:
        """``{qid: {measure: value}}`` of the run ``scores`` (``{qid: {docid: score}}``) for every
        query both in it and in the qrels: pytrec_eval's dict, key for key and value for value
        (the oblivious values alone are computed)."""
        result = self._result(scores, moments=False, extremes=False)
        if result is None:
            return {}
        import numpy as np

        names, columns = self._columns(result, "oblivious")
        return _by_query(result.qids, names, [np.asarray(c).tolist() for c in columns])

    def evaluate_ties(self, scores: dict) -> dict[str, dict[str, dict[str, float]]]:
        """``{qid: {measure: {"oblivious", "expected", "min", "max", "std"}}}``: `evaluate`'s value
        (``oblivious``) and, over every ordering of the tied documents (each equally likely), the
        expected value, the least, the greatest and the standard deviation.  ``gm_map`` and
        ``gm_bpref`` hold the logarithm of each (their ``std``: 0 where no ordering moves the value,
        NaN elsewhere, as the logarithm's variance has no closed form here)."""
        result = self._result(scores)
        if result is None:
            return {}
        import numpy as np

        stats = ("oblivious", "expected", "min", "max", "std")
        per = {}
        for stat in stats:
            names, columns = self._columns(result, stat)
            per[stat] = np.column_stack(columns).tolist() if columns else None
        out: dict[str, dict[str, dict[str, float]]] = {}
        for i, q in enumerate(result.qids):
            out[q] = {
                name: {stat: per[stat][i][j] for stat in stats}  # type: ignore[index]
                for j, name in enumerate(names)
            }
        return out

    def __repr__(self) -> str:
        return f"RelevanceEvaluator(measures={sorted(self.measures)!r}, relevance_level={self.relevance_level})"


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """pytrec_eval's ``compute_aggregated_measure``: the mean of the per-query ``values``, but for
    ``gm_map`` and ``gm_bpref`` (per-query logarithms: the geometric mean) and the counts ``num_*``
    (the sum)."""
    if measure in _LOG:
        return math.exp(sum(values) / len(values))
    if measure.startswith("num_"):
        return float(sum(values))
    return sum(values) / len(values)
