"""Strict JSON for tierank's own JSON inputs (``table.json``, MTEB qrels): RFC 8259 and no more.

Python's `json` accepts what the RFC leaves out and fails in ways that are not input errors:
``NaN`` and ``Infinity`` literals pass, a duplicated key silently keeps the last value, a number
beyond float range becomes ``inf`` (``1e999``) or a Python int that later overflows (400 digits;
past 4,300 digits ``int()`` itself refuses), deep nesting raises `RecursionError`, and an
escaped lone surrogate (``"\\ud800"``) becomes a string that cannot be written out as UTF-8.
[`loads`][tierank.io.strict_json.loads] refuses each of these with [`TierankInputError`][tierank.errors.TierankInputError], one line
naming the source, the place (line and column, or the key) and the reason.

Examples
--------
>>> loads('{"a": 1, "b": [2.5, null]}', "t.json")
{'a': 1, 'b': [2.5, None]}
>>> loads('{"a": 1, "a": 2}', "t.json")
Traceback (most recent call last):
...
tierank.errors.TierankInputError: t.json: not valid JSON: key 'a' appears twice in one object
>>> loads('{"max": NaN}', "t.json")
Traceback (most recent call last):
...
tierank.errors.TierankInputError: t.json: not valid JSON: NaN is not a JSON number
"""

from __future__ import annotations

import json
import math

from ..errors import Problem, TierankInputError, quote, shorten

__all__ = ["loads", "lone_surrogate", "finite_float"]


class _Refused(ValueError):
    """Raised inside the decoder's hooks; turned into one input error by [`loads`][tierank.io.strict_json.loads]."""


def lone_surrogate(text: str) -> bool:
    """True when ``text`` holds an unpaired UTF-16 surrogate (only an escape like ``\\ud800`` makes one).

    >>> lone_surrogate("caf\\u00e9"), lone_surrogate("\\ud800")
    (False, True)
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def finite_float(text: str) -> float:
    """The float of a JSON number's text, or `ValueError` when it is beyond float range.

    >>> finite_float("0.25"), finite_float("-12")
    (0.25, -12.0)
    >>> finite_float("1e999")
    Traceback (most recent call last):
    ...
    ValueError: number 1e999 is beyond the range of a float (about 1.8e308)
    """
    v = float(text)  # correctly rounded for any length of digits; never the int() digit limit
    if not math.isfinite(v):
        raise ValueError(
            f"number {shorten(text, 60)} is beyond the range of a float (about 1.8e308)"
        )
    return v


def _int(text: str):
    v = finite_float(text)
    return int(text) if len(text) <= 20 else v


def _pairs(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise _Refused(f"key {quote(k)} appears twice in one object")
        seen.add(k)
    return dict(pairs)


def _constant(name: str):
    raise _Refused(f"{name} is not a JSON number")


def _surrogate_path(doc) -> str | None:
    """Where ``doc`` holds a string with a lone surrogate (a key or a value), or None."""
    stack = [(doc, "")]
    while stack:
        obj, where = stack.pop()
        if isinstance(obj, str):
            if lone_surrogate(obj):
                return where or "the document"
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if lone_surrogate(k):
                    return f"a key in {where or 'the top object'}"
                stack.append((v, f"{where}.{k}" if where else str(k)))
        elif isinstance(obj, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(obj))
    return None


def loads(text: str | bytes, source: str):
    """The JSON value of ``text``, strictly (see the module), else [`TierankInputError`][tierank.io.strict_json.TierankInputError].

    ``bytes`` are read as UTF-8 (a byte order mark is allowed).  Integers keep their exact value
    where they have at most 20 digits; longer ones (within float range) become floats.
    """

    def refuse(reason: str, line: int | None = None):
        raise TierankInputError([Problem(source, line, f"not valid JSON: {reason}")]) from None

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            refuse(f"byte {e.start + 1} is not UTF-8")
    elif text.startswith("\ufeff"):
        text = text[1:]
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=finite_float,
        )
    except json.JSONDecodeError as e:
        refuse(f"{e.msg} (line {e.lineno}, column {e.colno})")
    except _Refused as e:
        refuse(str(e))
    except RecursionError:
        refuse("nested too deeply")
    except ValueError as e:  # a number beyond float range
        refuse(str(e))
    bad = _surrogate_path(doc)
    if bad is not None:
        refuse(
            f"{bad}: a string holds a lone surrogate escape (\\ud800-\\udfff), which is not text"
        )
    return doc
