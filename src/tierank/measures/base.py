"""Measures as parsed value objects, with one registry.

A measure string is written as ir_measures writes it::

    NAME[(param=value[,param=value...])][@cutoff]

e.g. ``nDCG@10``, ``P(rel=2)@5``, ``RBP(p=0.8)``, ``AP``.  Each family declares
its parameters once (:class:`Param`); that schema drives parsing, validation,
the canonical string (``parse(str(m)) == m``) and the CLI's list of measures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import TierankInputError


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    description: str
    always_shown: bool = False


@dataclass
class Stats:
    """Per-query statistics of one measure over the orderings of tied documents."""

    oblivious: np.ndarray
    expected: np.ndarray
    min: np.ndarray
    max: np.ndarray
    var: np.ndarray  # exact variance over tie orderings


@dataclass(frozen=True)
class Measure:
    """Base class of measure families: ``name``, ``params`` (sorted tuple) and ``cutoff``."""

    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    schema: ClassVar[tuple[Param, ...]] = ()
    cutoff_required: ClassVar[bool] = False
    cutoff_allowed: ClassVar[bool] = True

    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | None = None

    def param(self, name: str) -> Any:
        return dict(self.params)[name]

    def __str__(self) -> str:
        shown = []
        for p in self.schema:
            v = self.param(p.name)
            if p.always_shown or v != p.default:
                shown.append(f"{p.name}={_fmt(v)}")
        s = self.family + (f"({','.join(shown)})" if shown else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def validate(self, text: str) -> None:
        """Raise :class:`TierankInputError` for parameter values out of range."""

    # -- evaluation ------------------------------------------------------------------
    def compute(self, prep) -> Stats:  # pragma: no cover - abstract
        raise NotImplementedError

    #: why ``unjudged_bounds`` is refused for this family (None: bounds are supported)
    bounds_refusal: ClassVar[str | None] = None

    def unjudged_bounds(self, prep, stats: Stats) -> tuple[np.ndarray, np.ndarray]:
        """Attained (lower, upper) per query over tie orderings and every relevance of the
        unjudged retrieved documents.  The default serves measures monotone in relevance with
        no dependence on N+: lower = min with unjudged non-relevant, upper = max with unjudged
        relevant."""
        if self.bounds_refusal:
            raise TierankInputError(f"--unjudged bounds: no valid bound for {self}: {self.bounds_refusal}")
        return stats.min, self.compute(prep.assuming_unjudged_relevant()).max

    def depth(self, nrel) -> float | np.ndarray:
        """Ranks this measure reads (exclusive bound), scalar or per query; ``nrel(level)`` gives N+."""
        return self.k

    @property
    def level(self) -> int | None:
        """Relevance threshold of a binary measure (None: the evaluation's default)."""
        return dict(self.params).get("rel")

    @property
    def k(self) -> float:
        return float("inf") if self.cutoff is None else self.cutoff


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v).rstrip("0").rstrip(".") if "." in repr(v) else repr(v)
    return str(v)


REGISTRY: dict[str, type[Measure]] = {}


def register(cls: type[Measure], aliases: tuple[str, ...] = ()) -> type[Measure]:
    for name in (cls.family, *aliases):
        REGISTRY[name] = cls
    return cls


_MEASURE_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]+))?\s*$")


def parse_measure(text: "str | Measure") -> Measure:
    """Parse an ir_measures-style measure string.

    Examples
    --------
    >>> parse_measure("nDCG@10")
    Measure('nDCG@10')
    >>> parse_measure("RBP(p=0.8)")
    Measure('RBP(p=0.8)')
    >>> str(parse_measure("P(rel=2)@5")), parse_measure("P@5").param("rel")
    ('P(rel=2)@5', None)
    >>> parse_measure("P@0")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: measure 'P@0': cutoff must be a positive integer, got '0'
    """
    if isinstance(text, Measure):
        return text
    m = _MEASURE_RE.match(str(text))
    if not m:
        raise TierankInputError(f"measure {text!r}: not of the form NAME[(param=value,...)][@k]")
    name, args, cut = m.groups()
    cls = REGISTRY.get(name)
    if cls is None:
        raise TierankInputError(f"unknown measure {name!r} in {text!r}; supported: {', '.join(supported())}")
    values = {p.name: p.default for p in cls.schema}
    if args is not None and args.strip():
        for item in args.split(","):
            if "=" not in item:
                raise TierankInputError(f"measure {text!r}: parameter {item.strip()!r} is not name=value")
            k, v = (x.strip() for x in item.split("=", 1))
            spec = next((p for p in cls.schema if p.name == k), None)
            if spec is None:
                accepted = ", ".join(p.name for p in cls.schema) or "none"
                raise TierankInputError(f"measure {text!r}: unknown parameter {k!r}; accepted: {accepted}")
            try:
                values[k] = spec.type(v) if spec.type is not int else int(v)
            except ValueError:
                raise TierankInputError(f"measure {text!r}: parameter {k}={v!r} is not a {spec.type.__name__}") from None
    cutoff = None
    if cut is not None:
        if not cls.cutoff_allowed:
            raise TierankInputError(f"measure {text!r}: {name} takes no cutoff")
        if not re.fullmatch(r"\d+", cut) or int(cut) <= 0:
            raise TierankInputError(f"measure {text!r}: cutoff must be a positive integer, got {cut!r}")
        cutoff = int(cut)
    elif cls.cutoff_required:
        raise TierankInputError(f"measure {text!r}: {name} needs a cutoff, e.g. {name}@10")
    measure = cls(params=tuple(sorted(values.items())), cutoff=cutoff)
    measure.validate(text)
    return measure


def supported() -> list[str]:
    """Names of the registered measure families (generated from the registry)."""
    return sorted({cls.family for cls in REGISTRY.values()}, key=str.lower)


def describe() -> list[tuple[str, str, str]]:
    """(family, parameters, description) for each family, for help texts and docs."""
    out = []
    for fam in supported():
        cls = REGISTRY[fam]
        params = ", ".join(f"{p.name}={p.default} ({p.description})" for p in cls.schema)
        cut = "@k required" if cls.cutoff_required else "@k optional" if cls.cutoff_allowed else "no cutoff"
        out.append((fam, "; ".join(x for x in (params, cut) if x), cls.description))
    return out
