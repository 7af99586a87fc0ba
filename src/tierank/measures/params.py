"""A measure family's parameters ([`Param`][tierank.measures.params.Param]): their type, default and accepted
values, how their text is parsed and written back (the canonical string ``parse(str(m)) == m``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TierankInputError, quote

__all__ = ["MAX_CUTOFF", "Param"]

#: largest cutoff accepted (positions and cutoffs stay exact in float64 and int64)
MAX_CUTOFF = 2**53

_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)


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
    """Canonical text of a parameter value (what [`Param.parse`][tierank.measures.params.Param.parse] reads back)."""
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
    """A ``str``, ``bool`` or ``dict`` parameter value (see [`Param.parse`][tierank.measures.params.Param.parse])."""
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
