"""An ir_measures provider with tie-aware values (and PyTerrier through it).

ir_measures (MacAvaney et al., ECIR 2022; https://ir-measur.es) computes each measure with one
provider; its default, pytrec_eval, breaks tied scores by document id (trec_eval's convention), so
a run's value depends on how its documents happen to be named.  `provider` is an
ir_measures ``Provider`` whose values are tierank's **expected** values over all orderings of tied
documents (the exact closed forms of `tierank.measures`); ``TierankProvider("min")``,
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
[`tierank.supported`][tierank.supported] lists, ir_measures' C/W/L, Accuracy and Compat families included
(``SDCG(max_rel=3)@10``, ``INST(max_rel=3)``, ``NERR8(max_rel=3)@10``, ``Accuracy``, ``Compat``), and the
intent-aware family on subtopic qrels ([`diversity_part`][tierank.integrations.ir_measures.diversity_part]); ``SetP(relative=True)`` (trec_eval's
set_relative_P) is tierank's ``SetRelP``, ``NumRet(rel=1)`` (``NumRelRet``) tierank's ``NumRelRet``,
and ``judged_only=True`` of any family (``P(judged_only=True)@5``) the measure with unjudged
documents removed first ([`resolve_measure`][tierank.integrations.ir_measures.resolve_measure]).  A measure tierank
does not compute (``BPM``) is computed by ir_measures' own provider for it (the first of
``ir_measures.DefaultPipeline`` that supports it, as ir_measures itself would choose), and each of
its values, per query and aggregated, is a [`TieOblivious`][tierank.integrations.ir_measures.TieOblivious]: a ``float``
that says so when printed (``TieOblivious(0.25, provider='cwl_eval')``) and names the provider in
``.provider``, whose value depends on how that provider breaks tied scores (ir_measures issue #18),
whatever statistic was asked for.  The first time that happens in a process,
[`UntieAwareFallback`][tierank.integrations.ir_measures.UntieAwareFallback] is also warned (`warnings.warn`).

Inputs are whatever ir_measures accepts (dicts of dicts, pandas DataFrames with ``query_id``,
``doc_id``, ``score``/``relevance``, iterators of ``Qrel``/``ScoredDoc`` namedtuples) plus what
[`tierank.evaluate`][tierank.evaluate] accepts (TREC file paths, ``tierank.Run``/``Qrels``).  As in ir_measures,
a qrels query absent from the run gets the measure's default (0), and the aggregate is the mean
over all qrels queries (a sum for the counts).  With ``"std"`` the per-query values are standard
deviations over tie orderings and the aggregate is the standard deviation of the mean,
``sqrt(sum_q var_q) / n`` (orderings of different queries are independent), not the mean of them.

[`register`][tierank.integrations.ir_measures.register] puts a provider first in ``ir_measures.DefaultPipeline``: from then on
``ir_measures.calc_aggregate`` / ``iter_calc`` and PyTerrier's ``pt.Experiment`` (which calls
``ir_measures.iter_calc``) report tie-aware values under the usual measure names;
[`tie_aware`][tierank.integrations.ir_measures.tie_aware] does the same for a ``with`` block only.
Registered, it only adds tie-aware values: empty inputs score as ir_measures scores them (no value
and a NaN aggregate for empty qrels, the defaults for an empty run), a measure a user defined
(``ir_measures.define``) is left to ir_measures' own providers, and ``Accuracy`` scores the queries
ir_measures' accuracy provider scores.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..errors import TierankInputError
from ..evaluate import Evaluator as Engine
from ..io.convert import to_qrels, to_run
from ..io.model import Qrels, Run
from ..io.subtopics import SubtopicQrels, read_subtopic_qrels, to_subtopic_qrels
from ..measures.base import Measure as TierankMeasure
from ..measures.base import parse_measure
from ..measures.diversity import IntentAware, parse_diversity_measure
from ..measures.names import family_names
from ..settings import EvalSettings
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


class TieOblivious(float):
    """A value tierank did not compute: ``provider``'s (an ir_measures provider), which depends on how
    that provider breaks tied scores.  It is a ``float`` (arithmetic, ``round`` and pandas read its
    number, and give plain floats); printed, and in ``.tie_aware`` and ``.provider``, it says where it
    comes from.

    >>> v = TieOblivious(0.25, "cwl_eval")
    >>> v, v + 1, v.tie_aware, v.provider
    (TieOblivious(0.25, provider='cwl_eval'), 1.25, False, 'cwl_eval')
    """

    tie_aware = False
    provider: str

    def __new__(cls, value: float, provider: str) -> TieOblivious:
        self = super().__new__(cls, value)
        self.provider = provider
        return self

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return float(self), self.provider

    def __repr__(self) -> str:
        return f"TieOblivious({float(self)!r}, provider={self.provider!r})"

    __str__ = __repr__


_warned = False


def delegate(measure) -> Provider | None:
    """The ir_measures provider that computes ``measure`` for tierank's provider when tierank does not:
    the first available one of ``ir_measures.DefaultPipeline``, other than tierank's, that supports
    it (None: none does).

    >>> from ir_measures import BPM, nDCG
    >>> delegate(BPM(T=1.0, max_rel=1)@5).NAME
    'cwl_eval'
    """
    for p in _irm.DefaultPipeline.providers:
        if not isinstance(p, TierankProvider) and p.is_available() and p.supports(measure):
            return p
    return None


def warn_fallback(measure) -> None:
    """Warn, once per process, that ``measure`` is not computed tie-aware ([`UntieAwareFallback`][tierank.integrations.ir_measures.UntieAwareFallback])."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        f"tierank does not compute {measure}: its value (and that of any other measure tierank lacks) "
        "comes from another ir_measures provider, which breaks tied scores its own way "
        "(ir_measures issue #18), and is a TieOblivious value naming it; this warning is shown once",
        UntieAwareFallback,
        stacklevel=3,
    )


def tierank_measure(measure) -> TierankMeasure | None:
    """The tierank measure for an ir_measures measure, or None when tierank lacks it.

    Examples
    --------
    >>> from ir_measures import nDCG, AP, Compat, SetP, P
    >>> str(tierank_measure(nDCG@10)), str(tierank_measure(AP(rel=2))), str(tierank_measure(Compat))
    ('nDCG@10', 'AP(rel=2)', 'Compat')
    >>> str(tierank_measure(SetP(relative=True, rel=2)))  # trec_eval's set_relative_P as ir_measures writes it
    'SetRelP(rel=2)'
    >>> tierank_measure(P(judged_only=True)@5) is None  # precision over judged documents only: tierank lacks it
    True
    """
    resolved = resolve_measure(measure)
    return None if resolved is None or resolved[1] else resolved[0]


def resolve_measure(measure) -> tuple[TierankMeasure, bool] | None:
    """``(tierank measure, judged_only)`` for an ir_measures measure, or None when tierank lacks it.

    ``judged_only=True`` of a family that has no such parameter in tierank (AP, P, R, RR, Rprec,
    SetAP, SetP, Success, IPrec, ...) is the measure evaluated with unjudged documents removed first
    (trec_eval's -J, what pytrec_eval's judged_docs_only does): the second item True.  ir_measures
    writes ``NumRelRet`` as ``NumRet(rel=1)``: tierank's ``NumRelRet(rel=1)``.

    >>> from ir_measures import P, NumRelRet, NumRet, nDCG
    >>> [(str(m), j) for m, j in map(resolve_measure, (P(judged_only=True)@5, NumRelRet, NumRet(rel=2)))]
    [('P@5', True), ('NumRelRet(rel=1)', False), ('NumRelRet(rel=2)', False)]
    >>> [(str(m), j) for m, j in [resolve_measure(nDCG(judged_only=True)@10)]]
    [('nDCG(judged_only=True)@10', False)]
    """
    text = str(measure)
    params = getattr(measure, "params", None)
    if getattr(measure, "NAME", None) == "NumRet" and isinstance(params, dict) and "rel" in params:
        text = f"NumRelRet(rel={params['rel']})"  # documents retrieved of grade >= rel
    if (
        getattr(measure, "NAME", None) == "SetP"
        and isinstance(params, dict)
        and params.get("relative")
    ):
        # ir_measures writes trec_eval's set_relative_P as SetP(relative=True): tierank's SetRelP
        # (judged_only=True stays unanswered: SetRelP takes no such parameter)
        rest = {
            k: v
            for k, v in params.items()
            if k != "relative" and not (k == "judged_only" and v is False)
        }
        text = "SetRelP" + (f"({','.join(f'{k}={v}' for k, v in rest.items())})" if rest else "")
    head = text.split("(", 1)[0].split("@", 1)[0]
    if head in FAMILIES:
        text = FAMILIES[head] + text[len(head) :]
    try:
        found = parse_measure(text)
    except TierankInputError:
        found = None
    if found is not None:
        # the intent-aware family reads subtopic qrels: answered apart (`diversity_part`)
        return None if found.needs_subtopics else (found, False)
    if "judged_only=True" not in text:
        return None
    plain = text.replace(",judged_only=True", "").replace("judged_only=True,", "")
    plain = plain.replace("(judged_only=True)", "")
    try:
        return parse_measure(plain), True
    except TierankInputError:
        return None


def _as_tierank_qrels(qrels) -> Qrels | None:
    """The qrels as tierank reads them; None for empty qrels (ir_measures then scores no query)."""
    if isinstance(qrels, (Qrels, str)) or hasattr(qrels, "__fspath__"):
        return to_qrels(qrels)
    if _empty(qrels):
        return None
    conv = QrelsConverter(qrels)
    kind, err = conv.predict_type()
    if kind == "dict_of_dict":
        obj = {q: d for q, d in qrels.items() if len(d)}
    elif kind == "pd_dataframe":
        obj = qrels[["query_id", "doc_id", "relevance"]]
    elif kind == "namedtuple_iter":
        obj = conv.as_dict_of_dict()
    else:
        raise TierankInputError(f"qrels: {err}")
    return to_qrels(obj, source="qrels") if len(obj) else None


def _empty(data) -> bool:
    """Whether ir_measures' qrels or run ``data`` (a dict, a DataFrame, a list) holds nothing."""
    return (
        isinstance(data, (dict, list, tuple))
        and len(data) == 0
        or (type(data).__name__ == "DataFrame" and len(data) == 0)
    )


def _as_tierank_run(run) -> Run | None:
    """The run as tierank reads it; None for an empty run (ir_measures scores it with defaults)."""
    if isinstance(run, (Run, str)) or hasattr(run, "__fspath__"):
        return to_run(run)
    if _empty(run):
        return None
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
        self._diversity, self._subtopics, qrels = diversity_part(measures, qrels)
        self._tierank: dict = {}  # ir_measures measure -> (tierank measure, judged_only)
        others: dict = {}  # ir_measures provider -> the measures it computes for tierank's
        for m in measures:
            t = resolve_measure(m)
            if t is None and m in self._diversity:
                continue
            if t is None:
                p = delegate(m)
                if p is None:
                    raise TierankInputError(
                        f"tierank does not compute {m}; supported: {', '.join(_supported())}"
                    )
                others.setdefault(p, []).append(m)
                continue
            self._tierank[m] = t
        if others and isinstance(qrels, Iterator):
            qrels = list(qrels)  # read by tierank and by the other providers
        #: (provider name, its evaluator) for the measures tierank does not compute
        self._others = [
            (p.NAME, p.evaluator(ms, _for_ir_measures(qrels, "qrels"))) for p, ms in others.items()
        ]
        self._oblivious = {m: name for name, ev in self._others for m in ev.measures}
        # read only for the measures tierank computes (a runtime measure's qrels need no doc_id)
        self._qrels = _as_tierank_qrels(qrels) if self._tierank else None
        self._stat = stat
        self._options = options
        # Accuracy: ir_measures' provider scores a query only when the run has a relevant document in
        # its top k; tierank reports it when some ordering of the ties has one (Success's max)
        self._sparse = {
            m: _retrieves_a_relevant(t)
            for m, (t, _) in self._tierank.items()
            if t.family == "Accuracy"
        }
        # the engines (unjudged documents kept, and removed for judged_only=True): qrels, measures and
        # settings checked once, for every run
        self._engines = {}
        for judged in (False, True):
            wanted = list(dict.fromkeys(t for t, j in self._tierank.values() if j == judged))
            wanted += [
                s
                for m, s in self._sparse.items()
                if self._tierank[m][1] == judged and s not in wanted
            ]
            if wanted and self._qrels is not None:
                settings = EvalSettings(**{**options, **({"judged_only": True} if judged else {})})
                self._engines[judged] = Engine(self._qrels, wanted, settings)
        qids = set() if self._qrels is None else set(self._qrels.qid.to_pylist())
        if self._tierank and isinstance(qrels, dict):  # a query without judgments is still scored
            qids |= set(qrels)
        for _, ev in self._others:
            qids |= set(ev.qrel_qids)
        super().__init__(
            measures, sorted(qids | set(self._subtopics.judgments if self._subtopics else ()))
        )

    def result(self, run):
        """The [`tierank.EvalResult`][tierank.EvalResult] of ``run`` on this evaluator's measures (None: no judged query)."""
        r = _as_tierank_run(run)
        if r is None:
            return None
        results = self._results(r)
        return results.get(False, results.get(True))

    def _results(self, r) -> dict:
        """``{judged_only: EvalResult}`` of the tierank run ``r`` (empty: no judged query in it)."""
        if r is None or not set(self.qrel_qids).intersection(
            ac.unique(ac.decoded(r.qid)).to_pylist()
        ):
            return {}
        return {judged: engine.evaluate(r) for judged, engine in self._engines.items()}

    def iter_calc(self, run) -> Iterator:
        """Per-query metrics of ``run``; a qrels query the run lacks gets the measure's default, as
        ir_measures' ``Evaluator.iter_calc`` does, but for Accuracy (as ir_measures' accuracy provider:
        a query without a relevant document retrieved has no value)."""
        expected = {(m, q) for m in self.measures if m not in self._sparse for q in self.qrel_qids}
        for metric in self._iter_calc(run):
            expected.discard((metric.measure, metric.query_id))
            yield metric
        for measure, query_id in sorted(expected, key=lambda x: (str(x[0]), x[1])):
            yield Metric(query_id=query_id, measure=measure, value=measure.DEFAULT)

    def _iter_calc(self, run) -> Iterator:
        if self._others and isinstance(run, Iterator):
            run = list(run)  # read by tierank and by the other providers
        yield from self._own(run)
        for name, ev in self._others:
            for metric in ev.iter_calc(_for_ir_measures(run, "run")):
                yield Metric(metric.query_id, metric.measure, TieOblivious(metric.value, name))

    def _own(self, run) -> Iterator:
        """The metrics tierank computes."""
        if self._subtopics is not None:
            run = _as_tierank_run(run)
            if run is None:
                return
            yield from diversity_metrics(
                self._diversity, self._subtopics, run, self._stat, self._options
            )
        if not self._tierank:
            return
        results = self._results(_as_tierank_run(run))
        if not results:
            return
        for m, (t, judged) in self._tierank.items():
            res = results[judged]
            s = res.stats[t]
            vals = np.asarray(np.sqrt(s.var) if self._stat == "std" else getattr(s, self._stat))
            qids = np.asarray(res.qids, dtype=object)
            if m in self._sparse:
                kept = np.asarray(res.stats[self._sparse[m]].max) > 0
                qids, vals = qids[kept], vals[kept]
            for q, v in zip(qids.tolist(), vals.astype(np.float64).tolist()):
                yield Metric(query_id=q, measure=m, value=v)

    def _summaries(self, metrics) -> dict:
        plain = [m for m in self.measures if self._stat != "std" or m in self._oblivious]
        aggs = {m: m.aggregator() for m in plain}
        sq: dict[object, list[float]] = {m: [] for m in self.measures if m not in aggs}
        for metric in metrics:
            if metric.measure in aggs:
                aggs[metric.measure].add(metric.value)
            else:
                sq[metric.measure].append(metric.value * metric.value)
        out: dict = {m: a.result() for m, a in aggs.items()}
        # std: the standard deviation of the mean over tie orderings
        out.update(
            {m: math.sqrt(math.fsum(v)) / len(v) if v else float("nan") for m, v in sq.items()}
        )
        for m, name in self._oblivious.items():
            out[m] = TieOblivious(out[m], name)
        return {m: out[m] for m in self.measures}

    def calc_aggregate(self, run) -> dict:
        """Aggregate per measure: the mean over qrels queries (ir_measures' aggregator); for ``std``
        the standard deviation of the mean over tie orderings."""
        return self._summaries(list(self.iter_calc(run)))

    def calc(self, run):
        """``CalcResults(aggregated, per_query)`` as ir_measures returns them."""
        metrics = list(self.iter_calc(run))
        return _irm.CalcResults(self._summaries(metrics), metrics)


def _retrieves_a_relevant(accuracy: TierankMeasure) -> TierankMeasure:
    """``Success`` at ``accuracy``'s cutoff and grade: its max is positive where some ordering of the
    ties puts a relevant document in the top k."""
    params = [] if accuracy.rel is None else [f"rel={accuracy.rel}"]
    k = accuracy.k
    cut = "" if k is None or not math.isfinite(k) else f"@{int(k)}"
    return parse_measure("Success" + (f"({','.join(params)})" if params else "") + cut)


def _stock(measure) -> bool:
    """Whether ``measure`` is one of ir_measures' own measures (its registry's family), not one a user
    defined (``ir_measures.define``)."""
    proto = _irm.measures.registry.get(getattr(measure, "NAME", None))
    return proto is not None and type(proto) is type(measure)


def _for_ir_measures(data, kind: str):
    """qrels or a run as ir_measures' own providers read them: a TREC file path read with ir_measures'
    reader; tierank's ``Qrels``/``Run`` refused (give ir_measures' inputs for a measure tierank lacks)."""
    if isinstance(data, str) or hasattr(data, "__fspath__"):
        read = _irm.read_trec_qrels if kind == "qrels" else _irm.read_trec_run
        return list(read(str(data)))
    if isinstance(data, (Qrels, Run)):
        raise TierankInputError(
            f"{kind}: a tierank {type(data).__name__} cannot go to ir_measures' own providers (for a "
            "measure tierank does not compute); give a dict, a DataFrame or a file path"
        )
    return data


def _supported() -> list[str]:
    from ..measures.base import supported

    return supported()


class TierankProvider(Provider):
    """ir_measures provider backed by [`tierank.evaluate`][tierank.evaluate].

    Parameters
    ----------
    stat
        Which statistic over tie orderings each value is: ``"expected"`` (default), ``"min"``,
        ``"max"``, ``"std"``, or ``"oblivious"`` (the value under ``tie_break``).
    **options
        Passed to [`tierank.evaluate`][tierank.evaluate] (``tie_break``, ``rel``, ``candidates_only``,
        ``max_depth``, ...).

    Examples
    --------
    >>> from ir_measures import nDCG, Compat
    >>> p = TierankProvider("max")
    >>> p.NAME, p.supports(nDCG@10), p.supports(Compat)
    ('tierank', True, True)
    """

    NAME = "tierank"

    def __init__(self, stat: str = "expected", **options):
        super().__init__()
        if stat not in STATS:
            raise TierankInputError(f"unknown statistic {stat!r}; accepted: {', '.join(STATS)}")
        if "measures" in options:
            raise TierankInputError(
                "TierankProvider: the measures come from ir_measures, not from options"
            )
        self.stat = stat
        self.options = options

    def supports(self, measure) -> bool:
        """Whether this provider answers ``measure``: tierank computes it, or it is one of ir_measures'
        own measures that another ir_measures provider computes
        ([`delegate`][tierank.integrations.ir_measures.delegate]), its values then that provider's,
        marked [`TieOblivious`][tierank.integrations.ir_measures.TieOblivious]; in that case, the first
        time in a process, a warning ([`UntieAwareFallback`][tierank.integrations.ir_measures.UntieAwareFallback])
        too.  A measure a user defined (``ir_measures.define``) is left to ir_measures' own providers:
        registered, this provider never answers what it does not compute."""
        if _computes(measure):
            return True
        if not _stock(measure) or delegate(measure) is None:
            return False
        warn_fallback(measure)
        return True

    def run_inputs(self, measures) -> list[str]:
        """The run columns ``measures`` need: ir_measures' usual three for tierank's, the delegate's for
        the others (as ``ir_measures.DefaultPipeline`` would answer without this provider)."""
        return self._inputs(measures, "run_inputs")

    def qrel_inputs(self, measures) -> list[str]:
        """The qrels columns ``measures`` need (see `run_inputs`)."""
        return self._inputs(measures, "qrel_inputs")

    def _inputs(self, measures, kind: str) -> list[str]:
        measures = list(measures)
        own = [m for m in measures if _computes(m)]
        inputs = set(getattr(Provider, kind)(self, own)) if own else set()
        others: dict = {}
        for m in measures:
            if not _computes(m) and (p := delegate(m)) is not None:
                others.setdefault(p, []).append(m)
        for p, ms in others.items():
            inputs.update(getattr(p, kind)(ms))
        return sorted(inputs)

    def _evaluator(self, measures, qrels) -> TierankEvaluator:
        return TierankEvaluator(measures, qrels, self.stat, self.options)

    def __repr__(self) -> str:
        return f"TierankProvider({self.stat!r})"


def _computes(measure) -> bool:
    """Whether tierank computes the ir_measures ``measure`` itself."""
    return resolve_measure(measure) is not None or diversity_measure(measure) is not None


#: the expected values over tie orderings
provider = TierankProvider("expected")


def register(p: Provider | None = None) -> Provider:
    """Put ``p`` (default: `provider`) first in ``ir_measures.DefaultPipeline`` and in
    ``ir_measures.providers.registry`` under ``"tierank"``.

    ``ir_measures.calc_aggregate``, ``ir_measures.iter_calc`` and PyTerrier's ``pt.Experiment``
    then report tie-aware values for every measure tierank computes; the others still go to
    ir_measures' own providers.  Undone by [`unregister`][tierank.integrations.ir_measures.unregister].
    """
    p = provider if p is None else p
    unregister()
    _irm.DefaultPipeline.providers.insert(0, p)
    _irm.providers.registry["tierank"] = p
    return p


def unregister() -> None:
    """Remove every tierank provider from ``ir_measures.DefaultPipeline`` and the registry."""
    _irm.DefaultPipeline.providers[:] = [
        q for q in _irm.DefaultPipeline.providers if not isinstance(q, TierankProvider)
    ]
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


# ------------------------------------------------------------------ the intent-aware family


def diversity_measure(measure) -> IntentAware | None:
    """The tierank intent-aware measure for an ir_measures measure, or None when it is not one.

    >>> from ir_measures import alpha_nDCG, NRBP, nDCG
    >>> str(diversity_measure(alpha_nDCG(alpha=0.7)@10)), str(diversity_measure(NRBP)), diversity_measure(nDCG@10)
    ('alpha_nDCG(alpha=0.7)@10', 'NRBP', None)
    """
    try:
        return parse_diversity_measure(str(measure))
    except TierankInputError:
        return None


def subtopic_qrels(qrels) -> SubtopicQrels:
    """ir_measures qrels as subtopic qrels: the ``iteration`` field is the subtopic, as ir_measures'
    pyndeval provider reads it (``"0"`` where there is none: dicts of dicts, [`tierank.Qrels`][tierank.Qrels]);
    a file path is read as ``qid subtopic docid grade`` ([`tierank.io.subtopics.read_subtopic_qrels`][tierank.io.subtopics.read_subtopic_qrels]).

    >>> from ir_measures import Qrel
    >>> subtopic_qrels([Qrel("q", "d", 1, "2"), Qrel("q", "d", 0, "1")]).judgments
    {'q': {'d': {'2': 1.0, '1': 0.0}}}
    """
    if isinstance(qrels, SubtopicQrels):
        return qrels
    if isinstance(qrels, str) or hasattr(qrels, "__fspath__"):
        return read_subtopic_qrels(qrels)
    judgments: dict[str, dict[str, dict[str, float]]] = {}
    if isinstance(qrels, Qrels):
        for q, d, g in zip(qrels.qid.to_pylist(), qrels.docid.to_pylist(), qrels.grade.tolist()):
            judgments.setdefault(q, {})[d] = {"0": g}
        return to_subtopic_qrels(judgments, source=qrels.source)
    conv = QrelsConverter(qrels)
    kind, err = conv.predict_type()
    if kind not in ("dict_of_dict", "pd_dataframe", "namedtuple_iter"):
        raise TierankInputError(f"qrels: {err}")
    for r in conv.as_namedtuple_iter():
        sub = str(getattr(r, "iteration", "0"))
        judgments.setdefault(str(r.query_id), {}).setdefault(str(r.doc_id), {})[sub] = r.relevance
    return to_subtopic_qrels(judgments, source="qrels")


def diversity_part(measures: list, qrels) -> tuple[dict, SubtopicQrels | None, object]:
    """The intent-aware measures among ``measures`` (ir_measures measure -> tierank's), their
    subtopic qrels (None without such a measure), and ``qrels`` (read into a list if it was an
    iterator, so that the plain measures can read it again)."""
    found = {
        m: d
        for m in measures
        if tierank_measure(m) is None and (d := diversity_measure(m)) is not None
    }
    if not found:
        return {}, None, qrels
    if isinstance(qrels, Iterator):
        qrels = list(qrels)
    if _empty(qrels):  # no query to score, as in ir_measures
        return found, None, qrels
    return found, subtopic_qrels(qrels), qrels


def diversity_metrics(
    measures: dict, qrels: SubtopicQrels, run: Run, stat: str, options: dict
) -> Iterator:
    """ir_measures ``Metric`` of every intent-aware measure and judged query of ``run``
    (the common [`tierank.evaluate.Evaluator`][tierank.evaluate.Evaluator]; ``samples`` and ``seed`` from ``options``).
    The oblivious order is trec_eval's (score descending, docid descending) whatever ``tie_break``."""
    qids = set(
        run.qid.dictionary_decode().to_pylist()
        if pa.types.is_dictionary(run.qid.type)
        else run.qid.to_pylist()
    )
    if not qids.intersection(qrels.judgments):
        return
    kw = {k: options[k] for k in ("samples", "seed") if k in options}
    res = Engine(qrels, list(dict.fromkeys(measures.values())), EvalSettings(**kw)).evaluate(run)
    for m, d in measures.items():
        s = res.stats[d]
        vals = np.sqrt(s.var) if stat == "std" else getattr(s, stat)
        for q, v in zip(res.qids, np.asarray(vals, dtype=np.float64).tolist()):
            yield Metric(query_id=q, measure=m, value=v)
