"""The measure contract: value objects parsed from strings, one registry, declared hooks.

A measure string is written as ir_measures writes it::

    NAME[(param=value[,param=value...])][@cutoff]

e.g. ``nDCG@10``, ``P(rel=2)@5``, ``RBP(p=0.8)``, ``AP``.  Each family declares
its parameters once ([`Param`][tierank.measures.base.Param], with their type and the range or choices
they accept); that schema drives parsing, validation, the canonical string
(``parse(str(m)) == m``) and the CLI's list of measures.

Adding a measure family
-----------------------
Write one module in ``tierank/measures/`` with a subclass of [`Measure`][tierank.measures.base.Measure]
(or of `tierank.measures.linear.Linear` for a weighted sum over ranks)
decorated with [`register`][tierank.measures.base.register], and import it in ``measures/__init__.py``.
The subclass sets the class attributes (``family``, ``description``, ``schema``,
``cutoff_required``, ``cutoff_allowed``, ``bounds_refusal``) and implements
[`Measure.stats`][tierank.measures.base.Measure.stats]; the other hooks ([`Measure.depth`][tierank.measures.base.Measure.depth],
[`Measure.unjudged_bounds`][tierank.measures.base.Measure.unjudged_bounds], [`Measure.residual`][tierank.measures.base.Measure.residual],
[`Measure.validate`][tierank.measures.base.Measure.validate]) have defaults.  Shared numeric helpers are in
[`tierank.measures.kernels`][tierank.measures.kernels].  The brute-force property tests in
``tests/measures`` then check the new family against its textbook definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import numpy as np

from ..errors import TierankInputError, UnknownMeasure, quote
from ..ties import Prepared
from .registry import MODULES, Registry

if TYPE_CHECKING:
    from collections.abc import Callable

    from .trec_forms import TrecForm

#: largest cutoff accepted (positions and cutoffs stay exact in float64 and int64)
MAX_CUTOFF = 2**53


#: how a family summarises its per-query values over queries (`Measure.aggregator`):
#: ``mean`` and ``sum`` are additive (a batch of queries at a time gives the same summary: streaming
#: may evaluate them), ``geometric_mean`` needs every query at once
Aggregator = Literal["mean", "sum", "geometric_mean"]
AGGREGATORS: tuple[str, ...] = get_args(Aggregator)
ADDITIVE: frozenset[str] = frozenset({"mean", "sum"})


@dataclass(frozen=True)
class FamilyNames:
    """The names of a measure family in the tools tierank reads and writes (`Measure.names`);
    the name tables of [`tierank.measures.names`][tierank.measures.names] and of the adapters in `tierank.integrations`
    are derived from these ([`tierank.measures.names.family_names`][tierank.measures.names.family_names]).  None: the tool has no such measure.

    Attributes
    ----------
    trec_eval : str or None
        trec_eval's name of the family without a cutoff (``map``), printed as is.
    trec_eval_cut : str or None
        trec_eval's name of the family at rank cutoffs (``map_cut``: ``map_cut.10`` asks, ``map_cut_10`` prints).
    trec_eval_cutoffs : tuple of int
        trec_eval's default cutoffs of `trec_eval_cut` (empty: its long list 5, 10, ..., 1000).
    trec_eval_form : TrecForm or None
        how the `trec_eval` name reads its parameters and prints its lines where trec_eval does not
        ignore them (`tierank.measures.trec_forms`: ``Levels``, ``GainMap``, ``Persistence`` ...).
    ir_measures : str or None
        ir_measures' family name; "" (the default): the tierank family name, which follows ir_measures.
    ranx : str or None
        ranx's metric name (``ndcg``, written ``ndcg@10``, ``ndcg@10-l2``).
    mteb : str or None
        the family in MTEB's retrieval keys (``ndcg`` in ``ndcg_at_10``).
    sentence_transformers : str or None
        the family in sentence-transformers' evaluator keys (``ndcg`` in ``ndcg@10``).
    """

    trec_eval: str | None = None
    trec_eval_cut: str | None = None
    trec_eval_cutoffs: tuple[int, ...] = ()
    trec_eval_form: TrecForm | None = None
    ir_measures: str | None = ""
    ranx: str | None = None
    mteb: str | None = None
    sentence_transformers: str | None = None


@dataclass(frozen=True)
class FamilyInfo:
    """A family's metadata ([`Measure.about`][tierank.measures.base.Measure.about]): its name in prose, a one-line definition, the work
    that defines it ("" when none is given) and its names in other tools ([`FamilyNames`][tierank.measures.base.FamilyNames])."""

    family: str
    pretty: str
    definition: str
    citation: str
    names: FamilyNames

    @property
    def ir_measures(self) -> str | None:
        """ir_measures' name of the family (None: ir_measures has none)."""
        return self.family if self.names.ir_measures == "" else self.names.ir_measures

    @property
    def trec_eval(self) -> list[str]:
        """trec_eval's names of the family as declared (``map``, ``map_cut``)."""
        return [n for n in (self.names.trec_eval, self.names.trec_eval_cut) if n]


@dataclass(frozen=True)
class Param:
    """One parameter of a measure family.

    ``type`` parses the text (``int`` or ``float``); ``low``/``high`` bound the value
    (exclusive where ``open`` says so: ``"low"``, ``"high"`` or ``"both"``);
    ``choices`` lists the accepted values instead.  ``None`` as a default means "the
    evaluation's setting" and is always accepted.
    """

    name: str
    type: type
    default: Any
    description: str
    always_shown: bool = False
    low: float | None = None
    high: float | None = None
    open: str = ""
    choices: tuple | None = None

    def parse(self, text: str, measure: str) -> Any:
        """The value of ``text`` for this parameter, or [`TierankInputError`][tierank.errors.TierankInputError].

        ``int``/``float``: ASCII numbers; ``str``: a quoted string (``'x'`` or ``"x"``; a bare
        word is accepted too); ``bool``: ``True`` or ``False``; ``dict``: a map of integer keys
        to numbers, ``{0:0,1:1,2:3}``, stored as a sorted tuple of (key, value) pairs (hashable).

        >>> Param("dcg", str, "log2", "", choices=("log2", "exp-log2")).parse("'exp-log2'", "nDCG")
        'exp-log2'
        >>> Param("gains", dict, None, "").parse("{2:3, 0:0,1:1.5}", "nDCG")  # identity entries dropped
        ((1, 1.5), (2, 3))
        """
        shown = f"measure {quote(measure)}"
        if self.type in (str, bool, dict):
            value = _parse_special(self, text.strip(), shown)
            problem = self.check(value)
            if problem:
                raise TierankInputError(f"{shown}: {problem}")
            return value
        grammar = {int: _INT_RE, float: _FLOAT_RE}.get(self.type)
        try:
            if grammar is not None and not grammar.fullmatch(text):
                raise ValueError(text)  # ASCII numbers only: no '1_000', no other scripts' digits
            value = (
                None
                if self.type is int and len(text.lstrip("+-").lstrip("0")) > 18
                else self.type(text)
            )
        except ValueError:
            raise TierankInputError(
                f"{shown}: parameter {self.name}={quote(text)} is not "
                f"{'an' if self.type is int else 'a'} {self.type.__name__}"
            ) from None
        if value is None:  # too many digits to be in any range a measure accepts
            raise TierankInputError(
                f"{shown}: {self.name} must lie in {self.range_text()}, got {quote(text)}"
            )
        problem = self.check(value)
        if problem:
            raise TierankInputError(f"{shown}: {problem}")
        return value

    def check(self, value: Any) -> str | None:
        """Why ``value`` is not accepted (a sentence naming the parameter), or None.

        >>> Param("p", float, 0.8, "persistence", low=0, high=1, open="both").check(1.0)
        'p must lie in (0, 1), got 1.0'
        """
        if value is None and self.default is None:
            return None
        if self.choices is not None:
            return (
                None
                if value in self.choices
                else f"{self.name} must be one of {self.range_text()}, got {value!r}"
            )
        if self.type in (bool, dict, str):
            return None
        lo_open, hi_open = self.open in ("low", "both"), self.open in ("high", "both")
        bad = isinstance(value, float) and not math.isfinite(
            value
        )  # inf and nan: never a parameter
        bad |= self.low is not None and (value < self.low or (lo_open and value == self.low))
        bad |= self.high is not None and (value > self.high or (hi_open and value == self.high))
        return f"{self.name} must lie in {self.range_text()}, got {value!r}" if bad else None

    def range_text(self) -> str:
        """The accepted values in words, e.g. ``(0, 1)`` or ``any integer``."""
        if self.choices is not None:
            return "{" + ", ".join(map(str, self.choices)) + "}"
        if self.type is bool:
            return "{True, False}"
        if self.type is dict:
            return "a map {grade:number,...}"
        if self.low is None and self.high is None:
            return "any finite number" if self.type is float else f"any {self.type.__name__}"
        lo = "(" if self.open in ("low", "both") else "["
        hi = ")" if self.open in ("high", "both") else "]"
        return f"{lo}{'-inf' if self.low is None else _fmt(self.low)}, {'inf' if self.high is None else _fmt(self.high)}{hi}"


@dataclass
class Stats:
    """Per-query statistics of one measure over the orderings of tied documents."""

    oblivious: np.ndarray
    expected: np.ndarray
    min: np.ndarray
    max: np.ndarray
    var: np.ndarray  # variance over tie orderings (exact unless ``method == "sampled"``)
    method: str = (
        "exact"  # "exact", or "sampled": expected and var estimated from random tie orderings
    )
    samples: int | None = None  # with "sampled": orderings drawn per query
    seed: int | None = None  # with "sampled": the seed of the draws
    se: np.ndarray | None = (
        None  # with "sampled": standard error of ``expected`` per query (0 where exact)
    )
    #: with "sampled": per query, True where ``expected`` and ``var`` were estimated from random orderings
    #: (False: exact, e.g. a query no ordering changes or one whose orderings were all enumerated);
    #: None: every query
    sampled: np.ndarray | None = None

    def sampled_queries(self) -> np.ndarray:
        """Per query, whether its ``expected`` and ``var`` are estimates (see `sampled`).

        >>> z = np.zeros(2)
        >>> Stats(z, z, z, z, z).sampled_queries().tolist()
        [False, False]
        >>> Stats(z, z, z, z, z, method="sampled", sampled=np.array([True, False])).sampled_queries().tolist()
        [True, False]
        """
        n = len(self.expected)
        if self.method == "exact":
            return np.zeros(n, dtype=bool)
        return (
            np.ones(n, dtype=bool) if self.sampled is None else np.asarray(self.sampled, dtype=bool)
        )

    def settled(self) -> Stats:
        """Where no tie ordering can change the value, ``expected`` is that one value, bit for bit.

        Such a query has variance exactly 0 (the kernels make every tie group that cannot
        vary add exactly 0.0) and equal extremal values; its expectation, a different float
        sum, is then replaced by ``min``.  Requiring both guards against a variance that
        underflows to 0 for a value that can change (e.g. Success with a 1e-600 chance).
        """
        fixed = (self.var == 0.0) & (self.min == self.max)
        if not fixed.any():
            return self
        se = None if self.se is None else np.where(fixed, 0.0, self.se)
        sampled = None if self.method == "exact" else self.sampled_queries() & ~fixed
        return replace(
            self, expected=np.where(fixed, self.min, self.expected), se=se, sampled=sampled
        )


@dataclass(frozen=True)
class Aggregate:
    """The summary over queries of one measure's [`Stats`][tierank.measures.base.Stats] (what trec_eval prints as ``all``).

    ``std`` is the standard deviation over tie orderings of the summary value itself; ``se`` the
    standard error of a sampled ``expected`` (None when exact).
    """

    oblivious: float
    expected: float
    min: float
    max: float
    std: float
    method: str = "exact"
    se: float | None = None
    #: True: the summary's ``range``, ``bias`` (and bounds) are the means (sums for counts) of the
    #: per-query columns; False: ``max - min`` and ``oblivious - expected`` of this summary
    linear: bool = True


def summarize(xp: Any, aggregator: str, oblivious, expected, lo, hi, var) -> dict[str, float]:
    """The summary over queries of per-query statistics (arrays of the array namespace ``xp``), the
    one rule of every additive `Aggregator`: the mean (``sum`` for counts) of each statistic, and
    ``std`` that of the summary value itself, exact because orderings in different queries are
    independent: ``sqrt(sum_q Var_q) / n`` (``sqrt(sum_q Var_q)`` summed); NaN for no query.

    >>> import numpy as np
    >>> s = summarize(np, "mean", *(np.array([0.5, 1.0]),) * 4, np.array([0.01, 0.03]))
    >>> s["expected"], round(s["std"], 6)
    (0.75, 0.1)
    """
    if aggregator not in ADDITIVE:
        raise ValueError(f"summarize: aggregator {aggregator!r} is not additive")
    n = int(expected.shape[0])
    if n == 0:
        nan = float("nan")
        return dict.fromkeys(("oblivious", "expected", "min", "max", "std"), nan)
    summed = aggregator == "sum"
    agg = xp.sum if summed else xp.mean
    out = {
        "oblivious": float(agg(oblivious)),
        "expected": float(agg(expected)),
        "min": float(agg(lo)),
        "max": float(agg(hi)),
    }
    out["std"] = math.sqrt(float(xp.sum(var))) / (1 if summed else n)
    return out


@dataclass(frozen=True)
class Measure:
    """Base class of measure families: ``params`` (sorted tuple of (name, value)) and ``cutoff``.

    Class attributes a family sets:

    ``family``, ``description``
        name in measure strings and one line for ``tierank measures``;
    ``schema``
        its parameters ([`Param`][tierank.measures.base.Param]);
    ``cutoff_required``, ``cutoff_allowed``
        whether ``@k`` must / may be given;
    ``bounds_refusal``
        why ``unjudged="bounds"`` is refused for the family (None: supported);
    ``aggregator``
        its summary over queries (`Aggregator`): ``mean`` (the default), ``sum`` (counts) or
        ``geometric_mean``; a family whose summary is not additive overrides [`aggregate`][tierank.measures.base.Measure.aggregate] too;
    ``names``
        its names in trec_eval, ir_measures, ranx, MTEB and sentence-transformers ([`FamilyNames`][tierank.measures.base.FamilyNames]).
    ``pretty``, ``definition``, ``citation``
        its name in prose, a one-line definition and the work that defines it (all optional:
        [`about`][tierank.measures.base.Measure.about] fills in the defaults);
    ``needs_subtopics``
        whether it reads subtopic qrels (the intent-aware families);
    ``tensor_kernel``
        the kernel of `tierank.tensor` that evaluates it over score tensors (None: none), with
        [`tensor_refusal`][tierank.measures.base.Measure.tensor_refusal] for parameters it cannot take there.

    Hooks (override where the default does not fit): [`stats`][tierank.measures.base.Measure.stats] (required),
    [`depth`][tierank.measures.base.Measure.depth], [`unjudged_bounds`][tierank.measures.base.Measure.unjudged_bounds], [`residual`][tierank.measures.base.Measure.residual], [`validate`][tierank.measures.base.Measure.validate].
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
        """The family's metadata as data ([`FamilyInfo`][tierank.measures.base.FamilyInfo]), defaults filled in: what the measure
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
        """Per-query [`Stats`][tierank.measures.base.Stats] over the tie orderings of ``prep`` (a
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
        """Why this measure (with its parameters) has no tensor kernel although its family has one
        (e.g. a parameter that needs judgments a tensor of labels does not hold); None: it has."""
        return None

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
        together with the [`compute_batch`][tierank.measures.base.Measure.compute_batch] of the first one's class (e.g. one family's several
        cutoffs, in one pass over the run).  None (the default): computed alone.  A family that
        returns a key overrides [`stats_batch`][tierank.measures.base.Measure.stats_batch], whose results must equal those of `stats`;
        its keys name its class, unless its `stats_batch` serves the other classes giving the same key."""
        return None

    @classmethod
    def stats_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """The [`stats`][tierank.measures.base.Measure.stats] of each of ``measures`` (of this class, with equal `batch_key`), in
        their order.  Default: one at a time."""
        return [m.stats(prep) for m in measures]

    # -- engine --------------------------------------------------------------------------
    def compute(self, prep: Prepared) -> Stats:
        """[`stats`][tierank.measures.base.Measure.stats], settled ([`Stats.settled`][tierank.measures.base.Stats.settled]).  What the engine calls."""
        return self.stats(prep).settled()

    @classmethod
    def compute_batch(cls, prep: Prepared, measures: Sequence[Measure]) -> list[Stats]:
        """[`compute`][tierank.measures.base.Measure.compute] of each of ``measures`` (equal `batch_key`) through [`stats_batch`][tierank.measures.base.Measure.stats_batch]."""
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
    """Each measure's [`Stats`][tierank.measures.base.Stats] on ``prep`` ([`Measure.compute`][tierank.measures.base.Measure.compute]); the measures of equal
    [`Measure.batch_key`][tierank.measures.base.Measure.batch_key] are computed together ([`Measure.compute_batch`][tierank.measures.base.Measure.compute_batch]) when the first of
    them is reached.  ``step(str(m), done, total)`` is called as each measure begins, in the order
    of ``measures`` (a batch's work falls in its first measure's step).

    >>> from tierank.ties import prepare
    >>> from tierank.io.convert import to_qrels, to_run
    >>> ms = parse_measures(["P@1", "RR", "P@2"])
    >>> prep = prepare(to_run({"q": {"a": 1.0, "b": 1.0}}), to_qrels({"q": {"a": 1}}), measures=ms)
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


def _is_type(value: Any, kind: type) -> bool:
    """Whether a Python value is of a parameter's type (bool is not an int here)."""
    if kind is bool:
        return isinstance(value, (bool, np.bool_))
    if kind is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(
            value, bool
        )
    if kind is dict:
        return isinstance(value, tuple)
    return isinstance(value, kind)


def _fmt(v: Any) -> str:
    """Canonical text of a parameter value (what [`Param.parse`][tierank.measures.base.Param.parse] reads back)."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        return "'" + v + "'" if "'" not in v else '"' + v + '"'
    if isinstance(v, tuple):  # a map, stored as sorted (key, value) pairs
        return "{" + ",".join(f"{_fmt(k)}:{_fmt(x)}" for k, x in v) + "}"
    if isinstance(v, float):
        return repr(v).rstrip("0").rstrip(".") if "." in repr(v) else repr(v)
    return str(v)


def _split_top(args: str, shown: str) -> list[str]:
    """``args`` split at the commas outside braces and quotes (a map's commas stay inside).

    >>> _split_top("gains={0:0,1:1},dcg='a,b', judged_only=True", "m")
    ['gains={0:0,1:1}', "dcg='a,b'", ' judged_only=True']
    """
    items: list[str] = []
    depth, quote_ch = 0, None
    cur: list[str] = []
    for ch in args:
        if quote_ch:
            quote_ch = None if ch == quote_ch else quote_ch
        elif ch in "'\"":
            quote_ch = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise TierankInputError(f"{shown}: unbalanced '}}' in the parameters")
        elif ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if quote_ch or depth:
        raise TierankInputError(
            f"{shown}: unclosed {'quote' if quote_ch else chr(123)} in the parameters"
        )
    items.append("".join(cur))
    return items


_STR_RE = re.compile(r"'([^']*)'|\"([^\"]*)\"|([A-Za-z0-9_.+-]+)")


def _parse_special(spec: Param, text: str, shown: str) -> Any:
    """A ``str``, ``bool`` or ``dict`` parameter value (see [`Param.parse`][tierank.measures.base.Param.parse])."""
    name = spec.name
    if spec.type is bool:
        value = {"true": True, "false": False}.get(text.lower())
        if value is None:
            raise TierankInputError(f"{shown}: parameter {name}={quote(text)} is not True or False")
        return value
    if spec.type is str:
        m = _STR_RE.fullmatch(text)
        if not m:
            raise TierankInputError(
                f"{shown}: parameter {name}={quote(text)} is not a quoted string"
            )
        return next(g for g in m.groups() if g is not None)
    # dict: {int:number,...}
    if not (text.startswith("{") and text.endswith("}")):
        raise TierankInputError(
            f"{shown}: parameter {name}={quote(text)} is not a map like {{0:0,1:1,2:3}}"
        )
    body = text[1:-1].strip()
    pairs: dict[int, int | float] = {}
    for item in body.split(",") if body else []:
        k, sep, v = (x.strip() for x in item.partition(":"))
        if (
            not sep
            or not _INT_RE.fullmatch(k)
            or not _FLOAT_RE.fullmatch(v)
            or len(k.lstrip("+-")) > 18
        ):
            raise TierankInputError(
                f"{shown}: parameter {name}: entry {quote(item.strip())} is not grade:number "
                f"(integer grade, finite number), as in {{0:0,1:1,2:3}}"
            )
        x = int(v) if _INT_RE.fullmatch(v) and len(v.lstrip("+-")) <= 18 else float(v)
        if isinstance(x, float) and not math.isfinite(x):
            raise TierankInputError(
                f"{shown}: parameter {name}: entry {quote(item.strip())}: the number must be finite"
            )
        if int(k) in pairs:
            raise TierankInputError(f"{shown}: parameter {name}: grade {int(k)} is mapped twice")
        pairs[int(k)] = x
    # identity entries change nothing (unmapped grades keep their grade, as ir_measures): dropped,
    # so equal maps are equal measures; a map of identities only is the default
    kept = tuple(sorted((k, x) for k, x in pairs.items() if x != k))
    return kept if kept else None


#: every family by name (its aliases too), filled as the family modules are imported
#: (`tierank.measures.registry`: a name imports its module, a listing all of them)
REGISTRY: dict[str, type[Measure]] = Registry("tierank.measures", MODULES)


def register(cls: type[Measure], aliases: tuple[str, ...] = ()) -> type[Measure]:
    """Add a family (and optional alias names) to `REGISTRY`; a name already taken by
    another class is a programming error (``ValueError``)."""
    names = (cls.family, *aliases)
    if not cls.family or not all(_NAME_RE.fullmatch(n) for n in names):
        raise ValueError(
            f"measure class {cls.__name__}: names {names!r} must match {_NAME_RE.pattern}"
        )
    if cls.aggregator not in AGGREGATORS:
        raise ValueError(
            f"measure class {cls.__name__}: aggregator {cls.aggregator!r} is not one of "
            f"{', '.join(AGGREGATORS)}"
        )
    for name in names:
        taken = REGISTRY.get(name)
        if taken is not None and taken is not cls:
            raise ValueError(
                f"measure name {name!r} of {cls.__module__}.{cls.__qualname__} is already "
                f"registered by {taken.__module__}.{taken.__qualname__}"
            )
    for name in names:
        REGISTRY[name] = cls
    return cls


_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)
_MEASURE_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$")


def parse_measure(text: str | Measure) -> Measure:
    """Parse an ir_measures-style measure string.

    Examples
    --------
    >>> parse_measure("nDCG@10")
    Measure('nDCG@10')
    >>> parse_measure("RBP(p=0.8)")
    Measure('RBP(p=0.8)')
    >>> str(parse_measure("P(rel=2)@5")), parse_measure("P@5").param("rel")
    ('P(rel=2)@5', None)
    >>> parse_measure("ndcg_cut.10"), parse_measure("map")  # trec_eval's names, as tierank.evaluate takes them
    (Measure('nDCG@10'), Measure('AP'))
    >>> parse_measure("P@0")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: measure 'P@0': cutoff must be a positive integer, got '0'
    >>> parse_measure("P@99999999999999999999")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: measure 'P@99999999999999999999': cutoff must be at most 9007199254740992
    """
    if isinstance(text, Measure):
        return text
    try:
        return _parse_ir_measures(text)
    except TierankInputError as e:
        if not _TREC.is_trec(text):
            raise
        first = e
    found = _trec_measures(text)
    if len(found) != 1:  # e.g. P: trec_eval's P@5 ... P@1000
        raise TierankInputError(
            f"{first}; as trec_eval's name, {quote(text)} is {len(found)} measures "
            f"({', '.join(map(str, found))}): parse_measures takes it"
        ) from None
    return found[0]


class TrecNames:
    """trec_eval's names as [`parse_measure`][tierank.measures.base.parse_measure] and [`parse_measures`][tierank.measures.base.parse_measures] read them: installed by
    [`tierank.measures.names`][tierank.measures.names] ([`use_trec_names`][tierank.measures.base.use_trec_names]), which imports this module; until then no
    text is a trec_eval name."""

    def is_trec(self, text: str) -> bool:
        return False

    def resolve(
        self, texts: list[str]
    ) -> list[Measure]:  # pragma: no cover - never called before install
        raise TierankInputError(
            f"trec_eval names are not available: {', '.join(map(quote, texts))}"
        )


_TREC = TrecNames()


def use_trec_names(names: TrecNames) -> None:
    """Install the reader of trec_eval's names ([`tierank.measures.names`][tierank.measures.names] does, on import)."""
    global _TREC
    _TREC = names


def _trec_measures(text: str) -> list[Measure]:
    """The measures a trec_eval name asks for, through [`tierank.measures.names.resolve`][tierank.measures.names.resolve] (the
    path of [`tierank.evaluate`][tierank.evaluate]'s ``-m``)."""
    return _TREC.resolve([text])


def _parse_ir_measures(text: str) -> Measure:
    shown = quote(text)
    m = _MEASURE_RE.match(str(text))
    if not m:
        raise TierankInputError(f"measure {shown}: not of the form NAME[(param=value,...)][@k]")
    name, args, cut = m.groups()
    cls = REGISTRY.get(name)
    if cls is None:
        raise UnknownMeasure(
            f"unknown measure {quote(name)} in {shown}; supported: {', '.join(supported())}"
        )
    values = {p.name: p.default for p in cls.schema}
    given = set()
    if args is not None and args.strip():
        for item in _split_top(args, shown):
            if "=" not in item:
                raise TierankInputError(
                    f"measure {shown}: parameter {quote(item.strip())} is not name=value"
                )
            k, v = (x.strip() for x in item.split("=", 1))
            spec = next((p for p in cls.schema if p.name == k), None)
            if spec is None:
                accepted = ", ".join(p.name for p in cls.schema) or "none"
                raise TierankInputError(
                    f"measure {shown}: unknown parameter {quote(k)}; accepted: {accepted}"
                )
            if k in given:
                raise TierankInputError(f"measure {shown}: parameter {k} is given twice")
            given.add(k)
            values[k] = spec.parse(v, text)
    cutoff = None
    if cut is not None:
        if not cls.cutoff_allowed:
            raise TierankInputError(f"measure {shown}: {name} takes no cutoff")
        if cls.cutoff_param is not None:
            cutoff = cls.cutoff_param.parse(cut, text)
        elif not re.fullmatch(r"[0-9]+", cut) or not cut.strip("0"):
            raise TierankInputError(
                f"measure {shown}: cutoff must be a positive integer, got {quote(cut)}"
            )
        elif len(cut.lstrip("0")) > len(str(MAX_CUTOFF)) or int(cut) > MAX_CUTOFF:
            raise TierankInputError(f"measure {shown}: cutoff must be at most {MAX_CUTOFF}")
        else:
            cutoff = int(cut)
    elif cls.cutoff_required:
        raise TierankInputError(f"measure {shown}: {name} needs a cutoff, e.g. {name}@10")
    measure = cls(params=tuple(sorted(values.items())), cutoff=cutoff)
    measure.validate(text)
    return measure


def flat_measures(texts: Iterable[Any]) -> Iterable[Any]:
    """``texts`` with its lists and tuples opened (``[nDCG@10, P@[5, 10]]``: ``P@[5, 10]`` is a list)."""
    for t in texts:
        if isinstance(t, (list, tuple)):
            yield from flat_measures(t)
        else:
            yield t


def parse_measures(texts: Iterable[str | Measure | list[Measure]]) -> list[Measure]:
    """Parse every measure string of ``texts`` (see [`parse_measure`][tierank.measures.base.parse_measure]); the errors of all the bad
    ones are reported together in one [`TierankInputError`][tierank.errors.TierankInputError].  Duplicates are removed, order kept.
    Measure values are taken as they are (lists of them opened: ``P@[5, 10]``).

    >>> parse_measures(["P@5", "RR", "P@5", "P(rel=1)@5"])
    [Measure('P@5'), Measure('RR'), Measure('P(rel=1)@5')]
    >>> try:
    ...     parse_measures(["P@0", "RR", "Nope"])
    ... except TierankInputError as e:
    ...     for problem in e.problems:
    ...         print(problem)  # doctest: +ELLIPSIS
    measure 'P@0': cutoff must be a positive integer, got '0'
    unknown measure 'Nope' in 'Nope'; supported: ...AP, ..., RR, ...
    """
    parsed, errors = [], []
    for m in flat_measures(texts):
        problem = m.incomplete() if isinstance(m, Measure) else None
        if problem:
            errors.extend(TierankInputError(problem).problems)
            continue
        try:
            parsed.append(parse_measure(m))
        except TierankInputError as e:
            err = e
            if isinstance(m, str) and _TREC.is_trec(
                m
            ):  # a trec_eval name of several measures (P.5,10; official)
                try:
                    parsed.extend(_trec_measures(m))
                    continue
                except TierankInputError as e2:
                    err = e2
            errors.extend(err.problems)
    if errors:
        raise TierankInputError(errors)
    return list(dict.fromkeys(parsed))


def supported() -> list[str]:
    """Names of the registered measure families (generated from the registry)."""
    return sorted({cls.family for cls in REGISTRY.values()}, key=str.lower)


def _cutoff_text(cls) -> str:
    """What ``@`` takes in a family's measure strings, from its class attributes: a rank cutoff
    (``@k``), or the value of its `Measure.cutoff_param` (``IPrec@0.5``).

    >>> _cutoff_text(REGISTRY["IPrec"]), _cutoff_text(REGISTRY["P"]), _cutoff_text(REGISTRY["IPrecAvg"])
    ('@recall required (recall level in [0, 1], e.g. IPrec@0.5)', '@k required', 'no cutoff')
    """
    if not cls.cutoff_allowed:
        return "no cutoff"
    need = "required" if cls.cutoff_required else "optional"
    p = cls.cutoff_param
    if p is None:
        return f"@k {need}"
    low, high = p.low if p.low is not None else 0, p.high if p.high is not None else 1
    return f"@{p.name} {need} ({p.description} in {p.range_text()}, e.g. {cls.family}@{_fmt((low + high) / 2)})"


def describe() -> list[tuple[str, str, str]]:
    """(family, parameters, description) for each family, for help texts and docs."""
    out = []
    for fam in supported():
        cls = REGISTRY[fam]
        params = ", ".join(f"{p.name}={p.default} ({p.description})" for p in cls.schema)
        cut = _cutoff_text(cls)
        out.append((fam, "; ".join(x for x in (params, cut) if x), cls.description))
    return out
