"""An ir_measures provider with tie-aware values (and PyTerrier through it).

ir_measures (MacAvaney et al., ECIR 2022; https://ir-measur.es) computes each measure with one
provider; its default, pytrec_eval, breaks tied scores by document id (trec_eval's convention), so
a run's value depends on how its documents happen to be named.  :data:`provider` is an
ir_measures ``Provider`` whose values are tierank's **expected** values over all orderings of tied
documents (the exact closed forms of :mod:`tierank.measures`); ``TierankProvider("min")``,
``("max")``, ``("std")`` and ``("oblivious")`` give the other statistics through the same interface:

>>> import ir_measures
>>> from ir_measures import RR, P
>>> from tierank.integrations.ir_measures import provider, TierankProvider
>>> qrels = {"q1": {"d3": 1}}
>>> run = {"q1": {f"d{i}": 1.0 for i in range(1, 6)}}      # 1 relevant among 5 tied documents
>>> round(provider.calc_aggregate([RR, P@1], qrels, run)[RR], 4)   # (1 + 1/2 + ... + 1/5) / 5
0.4567
>>> ir_measures.pytrec_eval.calc_aggregate([RR], qrels, run)[RR]   # d5, d4, d3: rank 3
0.3333333333333333
>>> [TierankProvider(s).calc_aggregate([RR], qrels, run)[RR] for s in ("min", "max")]
[0.2, 1.0]

A measure is supported when tierank parses ir_measures' own string for it (``str(measure)``,
tierank's names follow ir_measures): ``nDCG@10``, ``RR@10``, ``AP(rel=2)``, ``P@5``, ``R@100``,
``Success@1``, ``Rprec``, ``RBP(p=0.8)``, ``Judged@10`` and whatever else
:func:`tierank.supported` lists, ir_measures' C/W/L, Accuracy and Compat families included
(``SDCG(max_rel=3)@10``, ``INST(max_rel=3)``, ``NERR8(max_rel=3)@10``, ``Accuracy``, ``Compat``).  Others
(``infAP``, ``alpha_nDCG``, ...) fall through to the next provider of an ir_measures pipeline, as in
ir_measures itself; the first time that happens in a process, :class:`UntieAwareFallback` is
warned (:func:`warnings.warn`): those values come from a provider that breaks ties its own way
(ir_measures issue #18).

Inputs are whatever ir_measures accepts (dicts of dicts, pandas DataFrames with ``query_id``,
``doc_id``, ``score``/``relevance``, iterators of ``Qrel``/``ScoredDoc`` namedtuples) plus what
:func:`tierank.evaluate` accepts (TREC file paths, ``tierank.Run``/``Qrels``).  As in ir_measures,
a qrels query absent from the run gets the measure's default (0), and the aggregate is the mean
over all qrels queries (a sum for the counts).  With ``"std"`` the per-query values are standard
deviations over tie orderings and the aggregate is the standard deviation of the mean,
``sqrt(sum_q var_q) / n`` (orderings of different queries are independent), not the mean of them.

:func:`register` puts a provider first in ``ir_measures.DefaultPipeline``: from then on
``ir_measures.calc_aggregate`` / ``iter_calc`` and PyTerrier's ``pt.Experiment`` (which calls
``ir_measures.iter_calc``) report tie-aware values under the usual measure names;
:func:`tie_aware` does the same for a ``with`` block only.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import TierankInputError
from ..evaluate import evaluate
from ..io.convert import to_qrels, to_run
from ..io.model import Qrels, Run
from ..measures.base import Measure as TierankMeasure
from ..measures.base import parse_measure
from ..measures.names import family_names
from . import require

_irm = require("ir_measures")
from ir_measures.providers.base import Evaluator, Provider  # noqa: E402
from ir_measures.util import Metric, QrelsConverter, RunConverter  # noqa: E402

#: statistics a provider can report per query
STATS = ("expected", "min", "max", "std", "oblivious")
#: ir_measures family name -> tierank family, from the families' declared names (``Measure.names.ir_measures``;
#: tierank's names follow ir_measures, so each is its own); a name not here is read as tierank's own
FAMILIES = family_names("ir_measures")


class UntieAwareFallback(UserWarning):
    """A measure tierank's provider does not compute goes to another provider, whose value depends
    on how that provider breaks tied scores (ir_measures issue #18)."""


_warned = False


def warn_fallback(measure) -> None:
    """Warn, once per process, that ``measure`` is not computed tie-aware (:class:`UntieAwareFallback`)."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(f"tierank does not compute {measure}: its value (and that of any other measure tierank lacks) "
                  "comes from another ir_measures provider, which breaks tied scores its own way "
                  "(ir_measures issue #18); this warning is shown once", UntieAwareFallback, stacklevel=3)


def tierank_measure(measure) -> TierankMeasure | None:
    """The tierank measure for an ir_measures measure, or None when tierank lacks it.

    Examples
    --------
    >>> from ir_measures import nDCG, AP, infAP
    >>> str(tierank_measure(nDCG@10)), str(tierank_measure(AP(rel=2))), tierank_measure(infAP)
    ('nDCG@10', 'AP(rel=2)', None)
    """
    text = str(measure)
    head = text.split("(", 1)[0].split("@", 1)[0]
    if head in FAMILIES:
        text = FAMILIES[head] + text[len(head):]
    try:
        return parse_measure(text)
    except TierankInputError:
        return None


def _as_tierank_qrels(qrels) -> Qrels:
    if isinstance(qrels, (Qrels, str)) or hasattr(qrels, "__fspath__"):
        return to_qrels(qrels)
    conv = QrelsConverter(qrels)
    kind, err = conv.predict_type()
    if kind == "dict_of_dict":
        return to_qrels(qrels, source="qrels")
    if kind == "pd_dataframe":
        return to_qrels(qrels[["query_id", "doc_id", "relevance"]], source="qrels")
    if kind == "namedtuple_iter":
        return to_qrels(conv.as_dict_of_dict(), source="qrels")
    raise TierankInputError(f"qrels: {err}")


def _as_tierank_run(run) -> Run | None:
    """The run as tierank reads it; None for an empty run (ir_measures scores it with defaults)."""
    if isinstance(run, (Run, str)) or hasattr(run, "__fspath__"):
        return to_run(run)
    conv = RunConverter(run)
    kind, err = conv.predict_type()
    if kind == "dict_of_dict":
        obj = {q: d for q, d in run.items() if len(d)}
    elif kind == "pd_dataframe":
        obj = run[["query_id", "doc_id", "score"]]
    elif kind == "namedtuple_iter":
        obj = conv.as_dict_of_dict()
    else:
        raise TierankInputError(f"run: {err}")
    if len(obj) == 0:
        return None
    return to_run(obj, source="run")


class TierankEvaluator(Evaluator):
    """Evaluates runs against one qrels for a fixed set of measures (``Provider.evaluator``)."""

    def __init__(self, measures: Iterable, qrels, stat: str, options: dict):
        measures = list(measures)
        self._tierank = {}
        for m in measures:
            t = tierank_measure(m)
            if t is None:
                raise TierankInputError(f"tierank does not compute {m}; supported: {', '.join(_supported())}")
            self._tierank[m] = t
        self._qrels = _as_tierank_qrels(qrels)
        self._stat = stat
        self._options = options
        qids = self._qrels.qid
        super().__init__(measures, sorted(set(qids.to_pylist())))

    def result(self, run):
        """The :class:`tierank.EvalResult` of ``run`` on this evaluator's measures (None: no judged query)."""
        r = _as_tierank_run(run)
        if r is None:
            return None
        judged = set(self.qrel_qids)
        rq = r.qid.dictionary_decode() if pa.types.is_dictionary(r.qid.type) else r.qid
        if not judged.intersection(pc.unique(rq).to_pylist()):
            return None
        return evaluate(self._qrels, r, list(dict.fromkeys(self._tierank.values())), **self._options)

    def _iter_calc(self, run) -> Iterator:
        res = self.result(run)
        if res is None:
            return
        for m, t in self._tierank.items():
            s = res.stats[t]
            vals = np.sqrt(s.var) if self._stat == "std" else getattr(s, self._stat)
            for q, v in zip(res.qids, np.asarray(vals, dtype=np.float64).tolist()):
                yield Metric(query_id=q, measure=m, value=v)

    def _summaries(self, metrics) -> dict:
        if self._stat != "std":
            aggs = {m: m.aggregator() for m in self.measures}
            for metric in metrics:
                aggs[metric.measure].add(metric.value)
            return {m: a.result() for m, a in aggs.items()}
        sq: dict[object, list[float]] = {m: [] for m in self.measures}
        for metric in metrics:
            sq[metric.measure].append(metric.value * metric.value)
        return {m: (math.sqrt(math.fsum(v)) / len(v) if v else float("nan")) for m, v in sq.items()}

    def calc_aggregate(self, run) -> dict:
        """Aggregate per measure: the mean over qrels queries (ir_measures' aggregator); for ``std``
        the standard deviation of the mean over tie orderings."""
        return self._summaries(list(self.iter_calc(run)))

    def calc(self, run):
        """``CalcResults(aggregated, per_query)`` as ir_measures returns them."""
        metrics = list(self.iter_calc(run))
        return _irm.CalcResults(self._summaries(metrics), metrics)


def _supported() -> list[str]:
    from ..measures.base import supported

    return supported()


class TierankProvider(Provider):
    """ir_measures provider backed by :func:`tierank.evaluate`.

    Parameters
    ----------
    stat
        Which statistic over tie orderings each value is: ``"expected"`` (default), ``"min"``,
        ``"max"``, ``"std"``, or ``"oblivious"`` (the value under ``tie_break``).
    **options
        Passed to :func:`tierank.evaluate` (``tie_break``, ``rel``, ``candidates_only``,
        ``max_depth``, ...).

    Examples
    --------
    >>> from ir_measures import nDCG, infAP
    >>> p = TierankProvider("max")
    >>> p.NAME, p.supports(nDCG@10), p.supports(infAP)
    ('tierank', True, False)
    """

    NAME = "tierank"

    def __init__(self, stat: str = "expected", **options):
        super().__init__()
        if stat not in STATS:
            raise TierankInputError(f"unknown statistic {stat!r}; accepted: {', '.join(STATS)}")
        if "measures" in options:
            raise TierankInputError("TierankProvider: the measures come from ir_measures, not from options")
        self.stat = stat
        self.options = options

    def supports(self, measure) -> bool:
        """Whether tierank computes ``measure``; if not, the first time in a process, a warning
        (:class:`UntieAwareFallback`) that its value will come from a provider that is not tie-aware."""
        if tierank_measure(measure) is not None:
            return True
        warn_fallback(measure)
        return False

    def _evaluator(self, measures, qrels) -> TierankEvaluator:
        return TierankEvaluator(measures, qrels, self.stat, self.options)

    def __repr__(self) -> str:
        return f"TierankProvider({self.stat!r})"


#: the expected values over tie orderings
provider = TierankProvider("expected")


def register(p: Provider | None = None) -> Provider:
    """Put ``p`` (default: :data:`provider`) first in ``ir_measures.DefaultPipeline`` and in
    ``ir_measures.providers.registry`` under ``"tierank"``.

    ``ir_measures.calc_aggregate``, ``ir_measures.iter_calc`` and PyTerrier's ``pt.Experiment``
    then report tie-aware values for every measure tierank computes; the others still go to
    ir_measures' own providers.  Undone by :func:`unregister`.
    """
    p = provider if p is None else p
    unregister()
    _irm.DefaultPipeline.providers.insert(0, p)
    _irm.providers.registry["tierank"] = p
    return p


def unregister() -> None:
    """Remove every tierank provider from ``ir_measures.DefaultPipeline`` and the registry."""
    _irm.DefaultPipeline.providers[:] = [q for q in _irm.DefaultPipeline.providers
                                         if not isinstance(q, TierankProvider)]
    if isinstance(_irm.providers.registry.get("tierank"), TierankProvider):
        del _irm.providers.registry["tierank"]


@contextlib.contextmanager
def tie_aware(stat: str = "expected", **options):
    """``with tie_aware(): ...``: ir_measures (and PyTerrier) report ``stat`` over tie orderings
    inside the block, their own values after it.

    Examples
    --------
    >>> import ir_measures
    >>> from ir_measures import RR
    >>> qrels, run = {"q": {"b": 1}}, {"q": {"a": 1.0, "b": 1.0}}
    >>> with tie_aware():
    ...     ir_measures.calc_aggregate([RR], qrels, run)[RR]
    0.75
    >>> ir_measures.calc_aggregate([RR], qrels, run)[RR]
    1.0
    """
    previous = list(_irm.DefaultPipeline.providers)
    previous_reg = _irm.providers.registry.get("tierank")
    register(TierankProvider(stat, **options))
    try:
        yield
    finally:
        _irm.DefaultPipeline.providers[:] = previous
        if previous_reg is None:
            _irm.providers.registry.pop("tierank", None)
        else:
            _irm.providers.registry["tierank"] = previous_reg
