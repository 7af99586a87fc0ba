"""The registry of measure families ([`register`][tierank.measures.registry.register], `REGISTRY`) and the parsers of measure
strings ([`parse_measure`][tierank.measures.registry.parse_measure], [`parse_measures`][tierank.measures.registry.parse_measures]); trec_eval's names are installed by
[`tierank.measures.names`][tierank.measures.names] ([`use_trec_names`][tierank.measures.registry.use_trec_names])."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..errors import TierankInputError, UnknownMeasure, quote
from .lazy import MODULES, Registry
from .params import _NAME_RE, MAX_CUTOFF, _fmt, _split_top
from .protocol import Measure
from .summary import AGGREGATORS

__all__ = [
    "REGISTRY",
    "register",
    "parse_measure",
    "parse_measures",
    "flat_measures",
    "TrecNames",
    "use_trec_names",
    "supported",
    "describe",
]


#: the registered families by name (and alias)
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
    """trec_eval's names as [`parse_measure`][tierank.measures.registry.parse_measure] and [`parse_measures`][tierank.measures.registry.parse_measures] read them: installed by
    [`tierank.measures.names`][tierank.measures.names] ([`use_trec_names`][tierank.measures.registry.use_trec_names]), which imports this module; until then no
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
    """Parse every measure string of ``texts`` (see [`parse_measure`][tierank.measures.registry.parse_measure]); the errors of all the bad
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
