"""The measure contract ([`Measure`][tierank.measures.protocol.Measure]): value objects with declared hooks, and the engine's
loop over them ([`compute_all`][tierank.measures.protocol.compute_all]).

A measure string is written as ir_measures writes it::

    NAME[(param=value[,param=value...])][@cutoff]

e.g. ``nDCG@10``, ``P(rel=2)@5``, ``RBP(p=0.8)``, ``AP``.  Each family declares
its parameters once ([`Param`][tierank.measures.params.Param], with their type and the range or choices
they accept); that schema drives parsing, validation, the canonical string
(``parse(str(m)) == m``) and the CLI's list of measures.

Adding a measure family
-----------------------
Write one module in ``tierank/measures/`` with a subclass of [`Measure`][tierank.measures.protocol.Measure]
(or of `tierank.measures.linear.Linear` for a weighted sum over ranks)
decorated with [`register`][tierank.measures.registry.register], and import it in ``measures/__init__.py``.
The subclass sets the class attributes (``family``, ``description``, ``schema``,
``cutoff_required``, ``cutoff_allowed``, ``bounds_refusal``) and implements
[`Measure.stats`][tierank.measures.protocol.Measure.stats]; the other hooks ([`Measure.depth`][tierank.measures.protocol.Measure.depth],
[`Measure.unjudged_bounds`][tierank.measures.protocol.Measure.unjudged_bounds], [`Measure.residual`][tierank.measures.protocol.Measure.residual],
[`Measure.validate`][tierank.measures.protocol.Measure.validate]) have defaults.  Shared numeric helpers are in
[`tierank.measures.kernels`][tierank.measures.kernels].  The brute-force property tests in
``tests/measures`` then check the new family against its textbook definition.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import TierankInputError, quote
from ..ties import Prepared
from .family import FamilyInfo, FamilyNames
from .params import MAX_CUTOFF, Param, _fmt, _is_type
from .summary import ADDITIVE, Aggregate, Aggregator, Stats, summarize

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Measure", "compute_all"]


@dataclass(frozen=True)
class Measure:
    """Base class of measure families: ``params`` (sorted tuple of (name, value)) and ``cutoff``.

    Class attributes a family sets:

    ``family``, ``description``
        name in measure strings and one line for ``tierank measures``;
    ``schema``
        its parameters ([`Param`][tierank.measures.params.Param]);
    ``cutoff_required``, ``cutoff_allowed``
        whether ``@k`` must / may be given;
    ``bounds_refusal``
        why ``unjudged="bounds"`` is refused for the family (None: supported);
    ``aggregator``
        its summary over queries (`Aggregator`): ``mean`` (the default), ``sum`` (counts) or
        ``geometric_mean``; a family whose summary is not additive overrides [`aggregate`][tierank.measures.protocol.Measure.aggregate] too;
    ``names``
        its names in trec_eval, ir_measures, ranx, MTEB and sentence-transformers ([`FamilyNames`][tierank.measures.family.FamilyNames]).
    ``pretty``, ``definition``, ``citation``
        its name in prose, a one-line definition and the work that defines it (all optional:
        [`about`][tierank.measures.protocol.Measure.about] fills in the defaults);
    ``needs_subtopics``
        whether it reads subtopic qrels (the intent-aware families);
    ``tensor_kernel``
        the kernel of `tierank.tensor` that evaluates it over score tensors (None: none), with
        [`tensor_refusal`][tierank.measures.protocol.Measure.tensor_refusal] for parameters it cannot take there.

    Hooks (override where the default does not fit): [`stats`][tierank.measures.protocol.Measure.stats] (required),
    [`depth`][tierank.measures.protocol.Measure.depth], [`unjudged_bounds`][tierank.measures.protocol.Measure.unjudged_bounds], [`residual`][tierank.measures.protocol.Measure.residual], [`validate`][tierank.measures.protocol.Measure.validate].
    """

    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    schema: ClassVar[tuple[Param, ...]] = ()
    cutoff_required: ClassVar[bool] = False
    cutoff_allowed: ClassVar[bool] = True
    #: a family whose ``@`` value is a recall level (ir_measures' ``IPrec@0.1``) sets a `Param`
    #: here: the cutoff is then that float, checked by the Param, and not a rank
    cutoff_param: ClassVar[Param | None] = None
    bounds_refusal: ClassVar[str | None] = None
    #: the value is a count (trec_eval prints it as an integer; its summary is a sum, not a mean)
    is_count: ClassVar[bool] = False
    #: trec_eval prints it only in the summary (``all``), e.g. ``num_q``, ``gm_map``
    summary_only: ClassVar[bool] = False
    #: the summary over queries (`Aggregator`); ``mean`` and ``sum`` are additive
    aggregator: ClassVar[Aggregator] = "mean"
    #: the family's names in other tools (`FamilyNames`)
    names: ClassVar[FamilyNames] = FamilyNames()
    #: the family's name in prose (``"average precision"``); "" (the default): `family`
    pretty: ClassVar[str] = ""
    #: a one-line definition of the value; "" (the default): `description`
    definition: ClassVar[str] = ""
    #: the work that defines the measure (authors, year, title, venue); "" (the default): none given
    citation: ClassVar[str] = ""
    #: the family reads subtopic qrels (``qid subtopic docid grade``, the intent-aware measures of
    #: `tierank.measures.diversity`): the evaluation reads its qrels as such and hands the judgments
    #: to it (``Prepared.subtopics``); plain qrels are refused for it
    needs_subtopics: ClassVar[bool] = False
    #: the family's kernel over padded score tensors (`tierank.tensor`): ``"linear"`` (a positional
    #: sum: `tierank.measures.linear.Linear`'s ``position_weights``, ``normalizer`` and values),
    #: ``"first_relevant"`` (RR, Success) or ``"ap"``; None (the default): not on tensors.
    #: `tierank.tensor.FAMILIES` is derived from it
    tensor_kernel: ClassVar[str | None] = None
    #: the value depends on N+, the number of relevant documents at the measure's ``rel`` (R, F1,
    #: R_cap, Rprec, AP): `tierank.tensor` refuses it where a given N+ counts at another level
    uses_n_plus: ClassVar[bool] = False

    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | float | None = None

    def param(self, name: str) -> Any:
        return dict(self.params)[name]

    def __str__(self) -> str:
        shown = []
        for p in self.schema:
            v = self.param(p.name)
            if p.always_shown or v != p.default:
                shown.append(f"{p.name}={_fmt(v)}")
        s = self.family + (f"({','.join(shown)})" if shown else "")
        return s + (f"@{_fmt(self.cutoff)}" if self.cutoff is not None else "")

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    @classmethod
    def about(cls) -> FamilyInfo:
        """The family's metadata as data ([`FamilyInfo`][tierank.measures.family.FamilyInfo]), defaults filled in: what the measure
        reference of the documentation is generated from.

        >>> from tierank.measures import REGISTRY
        >>> info = REGISTRY["RR"].about()
        >>> info.pretty, info.names.trec_eval, info.ir_measures
        ('reciprocal rank', 'recip_rank', 'RR')
        """
        names = cls.names if isinstance(cls.names, FamilyNames) else FamilyNames()
        return FamilyInfo(
            family=cls.family,
            pretty=cls.pretty or cls.family,
            definition=cls.definition or cls.description,
            citation=cls.citation or "",
            names=names,
        )

    # -- Python values (as ir_measures writes them: ``nDCG@10``, ``nDCG(dcg='exp-log2')@10``, ``P@[5, 10]``)
    @classmethod
    def default(cls) -> Measure:
        """The family's measure with its default parameters and no cutoff (``tierank.measures.nDCG``)."""
        return cls(params=tuple(sorted((p.name, p.default) for p in cls.schema)))

    def __call__(self, **params: Any) -> Measure:
        """The measure with ``params`` changed, checked as the measure string would be.

        >>> from tierank.measures import nDCG
        >>> nDCG(dcg='exp-log2')@10
        Measure("nDCG(dcg='exp-log2')@10")
        >>> nDCG(nope=1)
        Traceback (most recent call last):
        ...
        tierank.errors.TierankInputError: measure 'nDCG': unknown parameter 'nope'; accepted: dcg, gains, judged_only, negative
        """
        shown = f"measure {quote(str(self))}"
        values = dict(self.params)
        for name, value in params.items():
            spec = next((p for p in self.schema if p.name == name), None)
            if spec is None:
                accepted = ", ".join(p.name for p in self.schema) or "none"
                raise TierankInputError(
                    f"{shown}: unknown parameter {quote(name)}; accepted: {accepted}"
                )
            if spec.type is dict and isinstance(value, dict):  # a map, as the string form stores it
                value = spec.parse(
                    "{" + ",".join(f"{k}:{v}" for k, v in value.items()) + "}", str(self)
                )
            elif spec.type is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if value is not None and not _is_type(value, spec.type):
                raise TierankInputError(
                    f"{shown}: parameter {name}={value!r} is not "
                    f"{'an' if spec.type is int else 'a'} {spec.type.__name__}"
                )
            problem = spec.check(value)
            if problem:
                raise TierankInputError(f"{shown}: {problem}")
            values[name] = value
        measure = replace(self, params=tuple(sorted(values.items())))
        measure.validate(str(measure))
        return measure

    def __matmul__(self, cutoff: Any) -> Any:
        """The measure at ``cutoff`` (``nDCG@10``); a list of cutoffs gives a list of measures
        (``P@[5, 10]``; [`tierank.evaluate`][tierank.evaluate] flattens it).

        >>> from tierank.measures import P, IPrec
        >>> P@[5, 10], IPrec@0.5, str(P(rel=2)@5)
        ([Measure('P@5'), Measure('P@10')], Measure('IPrec@0.5'), 'P(rel=2)@5')
        >>> P@0
        Traceback (most recent call last):
        ...
        tierank.errors.TierankInputError: measure 'P@0': cutoff must be a positive integer, got 0
        """
        if isinstance(cutoff, (list, tuple, range)):
            return [self @ k for k in cutoff]
        shown = f"measure {quote(f'{self}@{cutoff}')}"
        if not self.cutoff_allowed:
            raise TierankInputError(f"{shown}: {self.family} takes no cutoff")
        if self.cutoff_param is not None:
            if isinstance(cutoff, bool) or not isinstance(
                cutoff, (int, float, np.integer, np.floating)
            ):
                raise TierankInputError(f"{shown}: the cutoff must be a number, got {cutoff!r}")
            value: int | float = float(cutoff)
            problem = self.cutoff_param.check(value)
            if problem:
                raise TierankInputError(f"{shown}: {problem}")
        else:
            if isinstance(cutoff, bool) or not isinstance(cutoff, (int, np.integer)) or cutoff < 1:
                raise TierankInputError(
                    f"{shown}: cutoff must be a positive integer, got {cutoff!r}"
                )
            if cutoff > MAX_CUTOFF:
                raise TierankInputError(f"{shown}: cutoff must be at most {MAX_CUTOFF}")
            value = int(cutoff)
        measure = replace(self, cutoff=value)
        measure.validate(str(measure))
        return measure

    def incomplete(self) -> str | None:
        """Why this value is not yet a measure one can evaluate (a family that needs a cutoff has
        none: ``P`` rather than ``P@10``), or None."""
        if self.cutoff is None and self.cutoff_required:
            example = f"{self.family}@0.5" if self.cutoff_param is not None else f"{self.family}@10"
            return f"measure {quote(str(self))}: {self.family} needs a cutoff, e.g. {example}"
        return None

    # -- hooks ---------------------------------------------------------------------------
    def validate(self, text: str) -> None:
        """Raise [`TierankInputError`][tierank.errors.TierankInputError] for parameter combinations the schema cannot
        express (each parameter's own range is checked from `schema` before)."""

    def stats(self, prep: Prepared) -> Stats:  # pragma: no cover - abstract
        """Per-query [`Stats`][tierank.measures.summary.Stats] over the tie orderings of ``prep`` (a
        [`tierank.ties.Prepared`][tierank.ties.Prepared]): oblivious value under the policy, exact
        expectation, min, max and variance.  Variances must be exactly 0 for queries
        whose value no ordering changes (use [`tierank.measures.kernels`][tierank.measures.kernels])."""
        raise NotImplementedError

    def depth(self, nrel: Callable[[int | None], np.ndarray]) -> float | np.ndarray:
        """Ranks this measure reads (exclusive bound), scalar or per query; ``nrel(level)``
        gives N+ per query.  Ranks past every measure's depth are dropped before
        evaluation (whole tie groups kept).  Default: the cutoff (inf without one)."""
        return self.k

    def unjudged_bounds(self, prep: Prepared, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """Attained (lower, upper) per query over tie orderings and every relevance of the
        unjudged retrieved documents.  The default serves measures monotone in relevance with
        no dependence on N+: lower = min with unjudged non-relevant, upper = max with unjudged
        relevant.  Families set `bounds_refusal` where no such bound exists."""
        if self.bounds_refusal:
            raise TierankInputError(
                f"--unjudged bounds: no valid bound for {self}: {self.bounds_refusal}"
            )
        return stats.min, self.compute(prep.assuming_unjudged_relevant()).max

    def tensor_refusal(self) -> str | None:
        """Why this measure (with its parameters) has no tensor kernel (e.g. a parameter that needs
        judgments a tensor of labels does not hold, or a family with no dense closed form); None:
        it has one, or no reason is given.  Default: the reasons common to whole kinds of
        families (subtopic judgments, a summary that is not additive)."""
        if self.needs_subtopics:
            return "it reads subtopic judgments, which a tensor of labels does not hold"
        if self.aggregator not in ADDITIVE:
            return (
                f"its {self.aggregator.replace('_', ' ')} over queries has no closed-form "
                "expectation over tie orderings (tierank.evaluate estimates it by sampling)"
            )
        return None

    def tensor_reads_every_judgment(self) -> bool:
        """Whether its tensor kernel reads more of the query's judgments than N+ (e.g. bpref's
        judged non-relevant count, a top grade): then the labels must hold every judgment, and
        `tierank.tensor` refuses it with ``n_relevant`` (lists cut from a larger pool).  Default:
        False."""
        return False

    def aggregate(self, stats: Stats) -> Aggregate:
        """Summary over the queries of ``stats``.  Default: the mean of each statistic, with
        ``std`` that of the mean, exact because orderings in different queries are independent:
        ``sqrt(sum_q Var_q) / n``.  Families with `aggregator` ``sum`` (counts) sum instead
        (``std`` ``sqrt(sum_q Var_q)``).  A family whose summary is neither (e.g. a geometric mean)
        declares its `aggregator` and overrides this."""
        n = len(stats.expected)
        if n == 0:
            nan = float("nan")
            return Aggregate(nan, nan, nan, nan, nan, stats.method)
        s = summarize(
            np, self.aggregator, stats.oblivious, stats.expected, stats.min, stats.max, stats.var
        )
        div = 1 if self.aggregator == "sum" else n
        se = None if stats.se is None else float(np.sqrt(np.sum(stats.se**2)) / div)
        return Aggregate(
            s["oblivious"], s["expected"], s["min"], s["max"], s["std"], stats.method, se
        )

    @property
    def additive(self) -> bool:
        """Whether the summary over queries is additive (`aggregator` ``mean`` or ``sum``): the
        summary of batches of queries evaluated apart is that of the whole (streaming needs it)."""
        return self.aggregator in ADDITIVE

    def sampling(self, stats: Stats) -> dict[str, Any]:
        """The labels of how ``stats`` were obtained, for records: ``{"method": "exact"}`` or
        ``{"method": "sampled", "samples": N, "seed": S}``."""
        if stats.method == "exact":
            return {"method": "exact"}
        return {"method": stats.method, "samples": stats.samples, "seed": stats.seed}

    def residual(self, prep: Prepared) -> np.ndarray | None:
        """Per-query residual (the weight the unjudged and unretrieved documents could add),
        reported with ``unjudged="bounds"``; None (the default) when the family has none."""
        return None

    def batch_key(self) -> Hashable | None:
        """Measures whose keys are equal (and not None) share their work: the engine computes them
        together with the [`compute_batch`][tierank.measures.protocol.Measure.compute_batch] of the first one's class (e.g. one family's several
        cutoffs, in one pass over the run).  None (the default): computed alone.  A family that
        returns a key overrides [`stats_batch`][tierank.measures.protocol.Measure.stats_batch], whose results must equal those of `stats`;
        its keys name its class, unless its `stats_batch` serves the other classes giving the same key."""
        return None

    @classmethod
    def stats_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """The [`stats`][tierank.measures.protocol.Measure.stats] of each of ``measures`` (of this class, with equal `batch_key`), in
        their order.  Default: one at a time."""
        return [m.stats(prep) for m in measures]

    # -- engine --------------------------------------------------------------------------
    def compute(self, prep: Prepared) -> Stats:
        """[`stats`][tierank.measures.protocol.Measure.stats], settled ([`Stats.settled`][tierank.measures.summary.Stats.settled]).  What the engine calls."""
        return self.stats(prep).settled()

    @classmethod
    def compute_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """[`compute`][tierank.measures.protocol.Measure.compute] of each of ``measures`` (equal `batch_key`) through [`stats_batch`][tierank.measures.protocol.Measure.stats_batch]."""
        if len(measures) == 1:
            return [measures[0].compute(prep)]
        return [s.settled() for s in cls.stats_batch(prep, measures)]

    @property
    def rel(self) -> int | None:
        """Relevance threshold of a binary measure (None: the evaluation's default)."""
        return dict(self.params).get("rel")

    @property
    def required_cutoff(self) -> int | float:
        """The ``@`` value of a family that requires one (`cutoff_required`: never None)."""
        if self.cutoff is None:
            raise ValueError(f"{self}: the family {self.family} needs a cutoff")
        return self.cutoff

    @property
    def k(self) -> float:
        """The rank cutoff (inf without one, or when the ``@`` value is not a rank)."""
        return float("inf") if self.cutoff is None or self.cutoff_param is not None else self.cutoff


def compute_all(
    prep: Prepared,
    measures: Sequence[Measure],
    step: Callable[[str, int, int], None] | None = None,
) -> dict[Measure, Stats]:
    """Each measure's [`Stats`][tierank.measures.summary.Stats] on ``prep`` ([`Measure.compute`][tierank.measures.protocol.Measure.compute]); the measures of equal
    [`Measure.batch_key`][tierank.measures.protocol.Measure.batch_key] are computed together ([`Measure.compute_batch`][tierank.measures.protocol.Measure.compute_batch]) when the first of
    them is reached.  ``step(str(m), done, total)`` is called as each measure begins, in the order
    of ``measures`` (a batch's work falls in its first measure's step).

    >>> from tierank.ties import prepare
    >>> from tierank.io.convert import to_qrels, to_run
    >>> from tierank.measures import parse_measures
    >>> from tierank.settings import EvalSettings
    >>> ms = parse_measures(["P@1", "RR", "P@2"])
    >>> run, qrels = to_run({"q": {"a": 1.0, "b": 1.0}}), to_qrels({"q": {"a": 1}})
    >>> prep = prepare(run, qrels, EvalSettings(), measures=ms)
    >>> steps = []
    >>> stats = compute_all(prep, ms, lambda *a: steps.append(a))
    >>> {str(m): float(s.expected[0]) for m, s in stats.items()}
    {'P@1': 0.5, 'RR': 0.75, 'P@2': 0.5}
    >>> steps
    [('P@1', 0, 3), ('RR', 1, 3), ('P@2', 2, 3)]
    """
    groups: dict[Hashable, list[Measure]] = {}
    for m in measures:
        key = m.batch_key()
        if key is not None:
            groups.setdefault(key, []).append(m)
    out: dict[Measure, Stats] = {}
    for done, m in enumerate(measures):
        if step is not None:
            step(str(m), done, len(measures))
        if m in out:
            continue
        key = m.batch_key()
        batch = groups[key] if key is not None else [m]
        out.update(zip(batch, type(batch[0]).compute_batch(prep, batch)))
    return {m: out[m] for m in measures}
