"""Command-line options generated from the settings objects: one declaration per setting.

A `Setting` declares the option of one field of a settings dataclass (`tierank.EvalSettings`,
`tierank.analysis.compare.CompareSettings`): its flags, help, the type typer parses, and how the
parsed value becomes the field's value; its default is the dataclass's own.  `EVAL` holds the
declarations of `tierank.EvalSettings`, `compare_declarations` those of ``CompareSettings``.

`with_settings` decorates a command whose body takes settings objects (``settings: EvalSettings``):
it replaces each such parameter by the options of the fields the command offers (`Offer`), in its
place, and calls the body with the object built from the parsed values (the settings' own rules
validate them; every problem of every object is reported together, one line each, exit 2, by
`tierank.cli.common.input_errors`).  A field offered in two objects of one command (``--seed`` of
``tierank compare``) is one option that sets both.

Options that exclude each other are one table (`Exclusive`, `excluded`).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Annotated, Any

import typer

from ..errors import Problem, TierankInputError
from . import common

__all__ = [
    "EVAL",
    "EVAL_FIELDS",
    "FROM_OPTIONS",
    "Exclusive",
    "Offer",
    "Setting",
    "built",
    "compare_declarations",
    "excluded",
    "keywords_of",
    "offers_of",
    "settings_from",
    "with_settings",
]


#: the default a command gives the parameter of a settings object (``settings: EvalSettings =
#: FROM_OPTIONS``): `with_settings` replaces the parameter by the options, and passes the object
FROM_OPTIONS: Any = None


def _same(value: Any) -> Any:
    return value


def _value(choice: Any) -> Any:
    """A choice's value: an Enum's (as typer passes it), or the text (as click parses it)."""
    return getattr(choice, "value", choice)


def _option(flags: tuple[str, ...], help: str, tp: Any, **extra: Any) -> Any:
    return Annotated[tp, typer.Option(*flags, help=help, **extra)]


@dataclass(frozen=True)
class Setting:
    """The option of one settings field.

    ``option``: its type as typer reads it, ``Annotated[TYPE, typer.Option(FLAGS, help=...,
    ...)]``; ``to_setting`` turns the parsed value into the field's value, ``to_option`` the field's
    default into the option's; ``alias``: another flag that sets the field to one value
    (``--condensed``: ``unjudged="condensed"``), as (parameter, flag, help, value)."""

    field: str
    option: Any
    to_setting: Callable[[Any], Any] = _same
    to_option: Callable[[Any], Any] = _same
    alias: tuple[str, str, str, Any] | None = None

    @property
    def param(self) -> str:
        """The parameter's name in the command (the field's)."""
        return self.field

    @property
    def info(self) -> Any:
        """typer's ``OptionInfo`` of the option."""
        return self.option.__metadata__[0]

    @property
    def flags(self) -> tuple[str, ...]:
        """The option's flags (in ``Annotated``, typer keeps the first one as the default)."""
        first = self.info.default
        return (*([first] if isinstance(first, str) else []), *self.info.param_decls)

    @property
    def help(self) -> str:
        return str(self.info.help)

    def annotation(self, help: str | None = None) -> Any:
        """The option's annotation, with ``help`` in place of the declared one when given."""
        if help is None:
            return self.option
        info = copy.copy(self.info)
        info.help = help
        return Annotated[self.option.__origin__, info]


#: the options of `tierank.EvalSettings`, one per field, in the order a command lists them
EVAL: dict[str, Setting] = {
    s.field: s
    for s in (
        Setting("tie_break", common.TieBreakOption),
        Setting("candidates_only", common.CandidatesOnly),
        Setting("complete", common.Complete),
        Setting("rel", common.Rel),
        Setting(
            "unjudged",
            _option(
                ("--unjudged",),
                "Unjudged documents: nonrelevant (trec_eval), bounds (also lower/upper bounds over "
                "every relevance they could have; refused for AP, nDCG, Rprec), condensed (dropped).",
                common.Unjudged,
            ),
            to_setting=_value,
            to_option=lambda v: common.Unjudged(v),
            alias=(
                "condensed",
                "--condensed",
                "Same as --unjudged condensed (Sakai).",
                "condensed",
            ),
        ),
        Setting("max_depth", common.MaxDepth),
        Setting("judged_only", common.JudgedOnly),
        Setting("samples", common.Samples),
        Setting("seed", common.Seed),
        Setting(
            "exact_limit",
            _option(
                ("--exact-limit",),
                "The most distinct tie orderings of one query that the measures without a closed "
                "form (the intent-aware family) enumerate exactly; past it they draw --samples "
                "orderings.",
                int,
                min=1,
            ),
        ),
    )
}

#: every field of `tierank.EvalSettings`, in the order the options are listed
EVAL_FIELDS = tuple(EVAL)


@functools.cache
def compare_declarations() -> dict[str, Setting]:
    """The options of `tierank.analysis.compare.CompareSettings`, one per field (built on first use:
    their choices come from the registries of tests, intervals and corrections)."""
    return {s.field: s for s in (*_tests_and_intervals(), *_draws_and_views())}


def _tests_and_intervals() -> tuple[Setting, ...]:
    """The options of the comparison's tests and intervals (`compare_declarations`)."""
    from ..analysis.methods import CI_METHODS, CORRECTIONS
    from ..analysis.paired import REGISTRY as PAIRED_TESTS

    # `tierank compare --correction` (none, or a multiple-comparison correction across the pairs),
    # `--test` and `--ci` (tierank.analysis.inference), built where their options are
    CompareCorrection = common.choices_enum("CompareCorrection", ("none", *CORRECTIONS))
    CompareTest = common.choices_enum("CompareTest", tuple(PAIRED_TESTS))
    CompareCI = common.choices_enum("CompareCI", CI_METHODS)

    return (
        Setting(
            "alpha",
            _option(
                ("--alpha",),
                "Significance level of the pairs' tests (whichever --test) and of the "
                "--leaderboard Tukey HSD groups.",
                float,
            ),
        ),
        Setting(
            "band",
            _option(
                ("--band",),
                "Also band every run with geometric rank bands RHO > 1 and report which "
                "significant pairs stay significant (Yang, Moffat & Turpin, Table 3 / Fig. 4).",
                float | None,
            ),
        ),
        Setting(
            "correction",
            _option(
                ("--correction",),
                "Multiple-comparison correction of the pairs' p-values (whichever --test) "
                "across all pairs (Holm, Benjamini-Hochberg, Bonferroni); 'significant' then "
                "reads the adjusted p. Default: holm with more than one pair, none with one.",
                CompareCorrection | None,
            ),
            # none given and "none" are told apart by the command: the default depends on the
            # number of pairs (`tierank.analysis.compare.default_correction`)
            to_setting=lambda v: None if _value(v) in (None, "none") else _value(v),
        ),
        Setting(
            "test",
            _option(
                ("--test",),
                "Paired test on per-query expected values (log values for GMAP-like measures): "
                + "; ".join(f"{t.name}: {t.help}" for t in PAIRED_TESTS.values())
                + " (--permutations, --resamples). Where a test cannot decide (t undefined; the "
                "bootstrap with <= 20 nonzero differences) the exact randomization test "
                "answers, and the output says so. No p is below 2/2^m (m nonzero differences: "
                "the least p of exact sign flips), and no interval is given where that cannot "
                "fall below 1 - level.",
                CompareTest,
            ),
            to_setting=_value,
            to_option=lambda v: CompareTest(v),
        ),
        Setting(
            "ci",
            _option(
                ("--ci",),
                "Confidence intervals of E[M] and of the differences over the query sample: t, "
                "percentile or bca (bootstrap).",
                CompareCI,
            ),
            to_setting=_value,
            to_option=lambda v: CompareCI(v),
        ),
        Setting(
            "level",
            _option(
                ("--level",),
                "Confidence level of the intervals (of E[M], of the differences, the rank "
                "intervals), in (0, 1).",
                float,
            ),
        ),
    )


def _draws_and_views() -> tuple[Setting, ...]:
    """The options of the comparison's draws, view and threads (`compare_declarations`)."""
    return (
        Setting("seed", common.Seed),
        Setting(
            "resamples",
            _option(
                ("--resamples",),
                f"Bootstrap resamples (at most {common.MAX_RESAMPLES:,}: 8 bytes per resample "
                "and system are kept).",
                int,
                min=1,
                max=common.MAX_RESAMPLES,
            ),
        ),
        Setting(
            "permutations",
            _option(
                ("--permutations",),
                "Tukey HSD permutations and Monte Carlo sign flips (at most "
                f"{common.MAX_PERMUTATIONS:,}).",
                int,
                min=1,
                max=common.MAX_PERMUTATIONS,
            ),
        ),
        Setting(
            "leaderboard",
            _option(
                ("--leaderboard",),
                "Leaderboard view: systems by E[M] with [min, max], CI, ranks by E and by the "
                "oblivious value, bootstrap rank intervals, randomized Tukey HSD groups, and "
                "the pairs whose order flips.",
                bool,
            ),
        ),
        Setting(
            "jobs",
            _option(
                ("--jobs", "-j"),
                "Threads sharing the Tukey HSD permutations (same result for any number; "
                "default: the CPUs available, at most 2).",
                int | None,
                min=1,
                max=common.MAX_JOBS,
            ),
        ),
        Setting(
            "tie_samples",
            _option(
                ("--tie-samples",),
                "With --leaderboard: rank intervals also redraw each query's tie ordering from "
                f"N random tie orderings (at most {common.MAX_TIE_SAMPLES:,}: each a tie-free "
                "copy of every run, kept per query).",
                int,
                min=0,
                max=common.MAX_TIE_SAMPLES,
            ),
        ),
    )


@dataclass(frozen=True)
class Offer:
    """The fields of the settings class ``cls`` that a command offers as options (declared in
    ``declarations``: a mapping or a function returning one), with the help of some reworded for the
    command (``help``)."""

    cls: type
    fields: Sequence[str]
    declarations: Mapping[str, Setting] | Callable[[], Mapping[str, Setting]] = field(
        default_factory=lambda: EVAL
    )
    help: Mapping[str, str] = field(default_factory=dict)

    def settings(self) -> list[Setting]:
        """The declarations of the offered fields, in order."""
        table = self.declarations() if callable(self.declarations) else self.declarations
        known = {f.name for f in fields(self.cls)}
        out = []
        for name in self.fields:
            if name not in known or name not in table:
                raise TypeError(f"{self.cls.__name__} has no declared option {name!r}")
            out.append(table[name])
        return out

    def default(self, name: str) -> Any:
        """The field's default in the settings class."""
        (f,) = (f for f in fields(self.cls) if f.name == name)
        if f.default is not MISSING:
            return f.default
        assert f.default_factory is not MISSING, name
        return f.default_factory()


def compare_offer(reworded: Mapping[str, str | None] | None = None) -> Offer:
    """The comparison settings (`tierank.analysis.compare.CompareSettings`) a command offers: every
    declared one, or the fields of ``reworded``, the help of those mapped to a string reworded."""
    from ..analysis.comparison.settings import CompareSettings

    if reworded is None:
        return Offer(CompareSettings, tuple(compare_declarations()), compare_declarations)
    help = {k: v for k, v in reworded.items() if v is not None}
    return Offer(CompareSettings, tuple(reworded), compare_declarations, help=help)


def _params(offers: Mapping[str, Offer]) -> list[inspect.Parameter]:
    """The option parameters of ``offers``, one per field (a field two offers share: one)."""
    out: dict[str, inspect.Parameter] = {}
    for offer in offers.values():
        for s in offer.settings():
            if s.param in out:
                continue
            out[s.param] = inspect.Parameter(
                s.param,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=s.annotation(offer.help.get(s.field)),
                default=s.to_option(offer.default(s.field)),
            )
            if s.alias is not None:
                param, flag, text, _ = s.alias
                out[param] = inspect.Parameter(
                    param,
                    inspect.Parameter.KEYWORD_ONLY,
                    annotation=Annotated[bool, typer.Option(flag, help=text)],
                    default=False,
                )
    return list(out.values())


def built(*builders: Callable[[], Any]) -> tuple[Any, ...]:
    """Each value ``builders`` build, or one `TierankInputError` with the problems of all of them."""
    values, problems = [], []
    for build in builders:
        try:
            values.append(build())
        except TierankInputError as e:
            problems += e.problems
    if problems:
        raise TierankInputError(problems)
    return tuple(values)


def _keywords(offer: Offer, values: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for s in offer.settings():
        out[s.field] = s.to_setting(values[s.param])
        if s.alias is not None and values.get(s.alias[0]):
            out[s.field] = s.alias[3]
    return out


def settings_from(offers: Mapping[str, Offer], values: Mapping[str, Any]) -> dict[str, Any]:
    """``{name: settings object}`` built from the parsed option ``values`` (by parameter name);
    the problems of every object together in one `TierankInputError`."""
    names = list(offers)
    objects = built(
        *(functools.partial(lambda o: o.cls(**_keywords(o, values)), offers[n]) for n in names)
    )
    return dict(zip(names, objects))


def keywords_of(settings: Any) -> dict[str, Any]:
    """The fields of the `tierank.EvalSettings` ``settings`` that differ from their defaults, by name,
    and ``tie_break`` as text: the keywords of the functions that take them one by one
    ([`tierank.analysis.cutoff.cutoff_curves`][tierank.analysis.cutoff.cutoff_curves])."""
    out: dict[str, Any] = {"tie_break": str(settings.tie_break)}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if f.name != "tie_break" and value != f.default:
            out[f.name] = value
    return out


def offers_of(command: Callable[..., Any]) -> Mapping[str, Offer]:
    """The settings a command built by `with_settings` offers (``{}`` for another command)."""
    return getattr(command, "__tierank_offers__", {})


def _annotation(body: Callable[..., Any], param: inspect.Parameter) -> Any:
    """A parameter's annotation as an object (a string one evaluated in the body's module)."""
    ann = param.annotation
    if isinstance(ann, str):
        return eval(ann, body.__globals__)  # noqa: S307  # the module's own annotation text
    return ann


def with_settings(**offers: Offer) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command whose body takes the settings objects named by ``offers``: its signature
    (what typer reads) gets the offered fields' options in place of those parameters, and the body
    gets the objects built from them (`settings_from`)."""

    def decorate(body: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(body)
        generated = _params(offers)
        names = [p.name for p in generated]
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            if p.name in offers:
                if generated:
                    params += generated
                    generated = []
                continue
            params.append(
                p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=_annotation(body, p))
            )
        missing = set(offers) - set(sig.parameters)
        if missing:
            raise TypeError(f"{body.__name__} takes no parameter {sorted(missing)[0]!r}")
        twice = set(names) & (set(sig.parameters) - set(offers))
        if twice:  # an option of the command's own under a setting's name: offer the field or not
            raise TypeError(f"{body.__name__} declares {sorted(twice)[0]!r}, a setting's option")

        @functools.wraps(body)
        def command(**kwargs: Any) -> Any:
            values = {n: kwargs.pop(n) for n in names}
            return body(**kwargs, **settings_from(offers, values))

        command.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=params, return_annotation=None
        )
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__tierank_offers__ = dict(offers)  # type: ignore[attr-defined]
        return command

    return decorate


# options that exclude each other


@dataclass(frozen=True)
class Exclusive:
    """An option (``flag``) that cannot be given with any of ``others`` (each a flag, or a flag and
    its value, as the message names them), and why: the line says ``{why} (no A, B or C with it)``."""

    flag: str
    others: tuple[str, ...]
    why: str

    def message(self) -> str:
        """The one line of the refusal."""
        *head, last = self.others
        listed = f"{', '.join(head)} or {last}" if head else last
        return f"{self.flag} {self.why} (no {listed} with it)"


def excluded(table: Sequence[Exclusive], given: Callable[[str], bool]) -> list[Problem]:
    """The problems of the options given together that ``table`` says exclude each other (``given``:
    whether a flag of the table, or a flag and its value, is given)."""
    return [
        Problem("", None, row.message())
        for row in table
        if given(row.flag) and any(given(o) for o in row.others)
    ]
