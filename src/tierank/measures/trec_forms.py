"""How one trec_eval measure name reads its parameters and prints its lines: the forms a family
declares (``FamilyNames(trec_eval_form=...)``; without one, its ``trec_eval`` name is a `Plain` form
and its ``trec_eval_cut`` name a `Cuts` form).

A form maps both ways: [`TrecForm.rows`][tierank.measures.trec_forms.TrecForm.rows] turns the
parameter text of ``-m NAME.PARAMS`` (None: trec_eval's defaults) into the printed names and the
tierank measure strings, as trec_eval's ``meas_init.c`` reads them (cutoff lists comma separated,
sorted ascending, duplicates and cutoffs <= 0 refused; printed ``P_5`` (``%s_%ld``),
``iprec_at_recall_0.10`` (``%s_%3.2f``), free parameters appended verbatim, ``rbp_p=0.8``);
[`TrecForm.printed`][tierank.measures.trec_forms.TrecForm.printed] gives the name trec_eval prints
for a measure of the family, or None when trec_eval has no such measure.

>>> Cuts("P").rows("P", "10,5")
[('P_5', 'P@5', (5,)), ('P_10', 'P@10', (10,))]
>>> Levels("iprec_at_recall", (0.0, 0.5)).rows("IPrec", None)
[('iprec_at_recall_0.00', 'IPrec@0', (0.0,)), ('iprec_at_recall_0.50', 'IPrec@0.5', (0.5,))]
>>> GainMap("ndcg", negative=True).rows("nDCG", "1=2,2=-1")
[('ndcg_1=2,2=-1', "nDCG(gains={1:2,2:-1},negative='keep')", ())]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import TierankInputError, quote

if TYPE_CHECKING:
    from .protocol import Measure

#: trec_eval's default rank cutoffs (``P``, ``recall``, ``ndcg_cut``, ``map_cut`` ...)
LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: one line kind of a trec_eval name: (printed name, tierank measure string or None where those
#: parameters are not supported, sort key within the name)
Row = tuple[str, "str | None", tuple]


def fmt_num(x: float) -> str:
    """A number as measure strings write it: no trailing zeros.

    >>> fmt_num(0.5), fmt_num(2.0), fmt_num(-1)
    ('0.5', '2', '-1')
    """
    text = repr(float(x))
    return text.rstrip("0").rstrip(".") if "." in text else text


def defaults_only(m: Measure, allowed: tuple[str, ...] = ()) -> bool:
    """Whether every parameter of ``m`` but those ``allowed`` has its default."""
    return all(
        v == p.default for p in m.schema for k, v in m.params if k == p.name and k not in allowed
    )


def _refuse(name: str, text: str, why: str) -> TierankInputError:
    return TierankInputError(f"trec_eval measure {quote(name + '.' + text)}: {why}")


def long_cuts(name: str, text: str) -> tuple[int, ...]:
    """Rank cutoffs as trec_eval reads them (``atol``: a decimal is cut to its integer part, so
    ``ndcg_cut.23.4`` is ``ndcg_cut_23``), sorted; not positive or given twice: refused."""
    out = []
    for tok in text.split(","):
        t = tok.strip()
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", t):
            raise _refuse(name, text, f"cutoff {quote(t)} is not a positive integer")
        out.append(int(t.split(".")[0]))
    out.sort()
    if out[0] <= 0:
        raise _refuse(name, text, "cutoffs must be positive")
    if len(set(out)) != len(out):
        raise _refuse(name, text, "duplicate cutoffs")
    return tuple(out)


def number(name: str, text: str, tok: str) -> float:
    """One number of trec_eval's parameter text (C's ``atof`` grammar, whole token)."""
    t = tok.strip()
    if not re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", t):
        raise _refuse(name, text, f"{quote(t)} is not a number")
    return float(t)


def numbers(name: str, text: str) -> tuple[float, ...]:
    """The comma-separated numbers of ``text``, in the order given."""
    return tuple(number(name, text, t) for t in text.split(","))


def pairs(name: str, text: str, named: bool = False) -> tuple[tuple, ...]:
    """trec_eval's ``key=value,...`` parameters: numeric keys (a gain map), or with ``named`` word
    keys (``p=0.8``), where a numeric key (a gain) is refused."""
    out = []
    for item in text.split(","):
        if "=" not in item:
            raise _refuse(name, text, f"parameter {quote(item)} is not name=value")
        k, v = item.split("=", 1)
        if named and re.fullmatch(r"[+-]?[0-9]+", k.strip()):
            raise _refuse(
                name,
                text,
                f"gain parameters ({k.strip()}=...) are not supported by tierank; "
                "rbp takes the grades as gains",
            )
        key: str | float = k.strip() if named else number(name, text, k)
        out.append((key, number(name, text, v)))
    return tuple(out)


class TrecForm:
    """One trec_eval name of a family (``name``) and how it reads its parameters: trec_eval ignores
    them (the base class, `Plain`).  A form is a value of a few fields (plain classes rather than
    dataclasses: every family module makes its forms at import, on the command line's start-up)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        mro = reversed(type(self).__mro__)
        fields = [getattr(self, f) for c in mro for f in c.__dict__.get("__slots__", ())]
        return f"{type(self).__name__}({', '.join(map(repr, fields))})"

    def rows(self, family: str, text: str | None) -> list[Row]:
        """The lines of ``-m NAME.TEXT`` (``text`` None: ``-m NAME``) for the family ``family``."""
        return [(self.name, family, ())]  # trec_eval ignores parameters of these

    def printed(self, m: Measure) -> str | None:
        """The name trec_eval prints for ``m`` (a measure of the declaring family), or None."""
        if m.cutoff is None and defaults_only(m, ("undefined",)):
            return self.name
        return None

    @property
    def has_cutoffs(self) -> bool:
        """Whether ``NAME.X`` prints ``NAME_X`` lines (a list of rank cutoffs or levels)."""
        return False


class Plain(TrecForm):
    """A name without parameters (``map``, ``num_rel``): printed as is."""

    __slots__ = ()


class Cuts(TrecForm):
    """Rank cutoffs (``P.5,10``: ``P_5``, ``P_10``); ``defaults``: trec_eval's (empty: `LONG_CUTS`)."""

    __slots__ = ("defaults",)

    def __init__(self, name: str, defaults: tuple[int, ...] = ()) -> None:
        super().__init__(name)
        self.defaults = defaults

    def rows(self, family: str, text: str | None) -> list[Row]:
        cuts = (self.defaults or LONG_CUTS) if text is None else long_cuts(self.name, text)
        return [(f"{self.name}_{k}", f"{family}@{k}", (k,)) for k in cuts]

    def printed(self, m: Measure) -> str | None:
        if isinstance(m.cutoff, int) and defaults_only(m, ("undefined",)):
            return f"{self.name}_{m.cutoff}"
        return None

    @property
    def has_cutoffs(self) -> bool:
        return True


class Levels(TrecForm):
    """Real-valued cutoffs (``iprec_at_recall.0.1``: ``iprec_at_recall_0.10``, ``%3.2f``), sorted."""

    __slots__ = ("defaults",)

    def __init__(self, name: str, defaults: tuple[float, ...] = ()) -> None:
        super().__init__(name)
        self.defaults = defaults

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            cuts: tuple[float, ...] = self.defaults
        else:
            cuts = tuple(sorted(numbers(self.name, text)))
            if len(set(cuts)) != len(cuts):
                raise _refuse(self.name, text, "duplicate cutoffs")
        return [(f"{self.name}_{x:3.2f}", f"{family}@{fmt_num(x)}", (x,)) for x in cuts]

    def printed(self, m: Measure) -> str | None:
        if m.cutoff is None or not defaults_only(m):
            return None
        return f"{self.name}_{float(m.cutoff):3.2f}"

    @property
    def has_cutoffs(self) -> bool:
        return True


def _joined_map(gains: tuple) -> str:
    return ",".join(f"{fmt_num(k)}:{fmt_num(v)}" for k, v in gains)


class GainMap(TrecForm):
    """trec_eval's gain map ``NAME.level=gain,...`` (the family's ``gains``); ``negative``: the
    family counts a negative gain as 0 unless told ``negative='keep'``, which it is when the map
    holds one (trec_eval counts it as given)."""

    __slots__ = ("negative",)

    def __init__(self, name: str, negative: bool = False) -> None:
        super().__init__(name)
        self.negative = negative

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            return [(self.name, family, ())]
        given = pairs(self.name, text)
        keep = ",negative='keep'" if self.negative and any(v < 0 for _, v in given) else ""
        return [(f"{self.name}_{text}", f"{family}(gains={{{_joined_map(given)}}}{keep})", ())]

    def printed(self, m: Measure) -> str | None:
        gains = dict(m.params).get("gains")
        if m.cutoff is None and gains and defaults_only(m, ("gains", "undefined", "negative")):
            return f"{self.name}_" + ",".join(f"{fmt_num(k)}={fmt_num(v)}" for k, v in gains)
        return super().printed(m)


class Persistence(TrecForm):
    """``NAME.p=x`` (rank-biased measures; trec_eval's default ``p`` 0.9), printed ``NAME_p=x``;
    ``fixed``: the other parameters of the family's measure (``gain='trec_eval'``), which a
    measure must have to be printed under this name."""

    __slots__ = ("fixed",)

    def __init__(self, name: str, fixed: tuple[tuple[str, object], ...] = ()) -> None:
        super().__init__(name)
        self.fixed = fixed

    def rows(self, family: str, text: str | None) -> list[Row]:
        p = dict(() if text is None else pairs(self.name, text, named=True)).get("p", 0.9)
        extra = "".join(f",{k}={v!r}" for k, v in self.fixed)
        return [
            (
                self.name if text is None else f"{self.name}_{text}",
                f"{family}(p={fmt_num(p)}{extra})",
                (),
            )
        ]

    def printed(self, m: Measure) -> str | None:
        if self.fixed and (
            m.cutoff is not None
            or any(m.param(k) != v for k, v in self.fixed)
            or m.param("rel") is not None
        ):
            return None
        p = m.param("p")
        return self.name if p == 0.9 else f"{self.name}_p={fmt_num(p)}"


class LevelList(TrecForm):
    """A list of levels kept as the text given (``11pt_avg.0.25,0.5``: the family's ``param``)."""

    __slots__ = ("param",)

    def __init__(self, name: str, param: str = "levels") -> None:
        super().__init__(name)
        self.param = param

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            return [(self.name, family, ())]
        given = ",".join(map(fmt_num, numbers(self.name, text)))
        return [(f"{self.name}_{text}", f"{family}({self.param}='{given}')", ())]

    def printed(self, m: Measure) -> str | None:
        if m.param(self.param) is not None and m.param("rel") is None:
            return f"{self.name}_{m.param(self.param)}"
        return super().printed(m)


class FirstNumber(TrecForm):
    """The first number of the text as the family's ``param`` (``set_F.0.5``: ``beta=0.5``);
    ``default``: the value printed under the bare name."""

    __slots__ = (
        "param",
        "default",
    )

    def __init__(self, name: str, param: str = "", default: float = 1.0) -> None:
        super().__init__(name)
        self.param = param
        self.default = default

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            return [(self.name, family, ())]
        first = numbers(self.name, text)[0]
        return [(f"{self.name}_{text}", f"{family}({self.param}={fmt_num(first)})", ())]

    def printed(self, m: Measure) -> str | None:
        if m.cutoff is not None:
            return None
        value = dict(m.params).get(self.param, self.default)
        others = tuple(k for k, _ in m.params if k != self.param)
        if not defaults_only(m, (self.param,)) and others:
            return None
        return self.name if value in (None, self.default) else f"{self.name}_{fmt_num(value)}"


class Length(TrecForm):
    """A length read as C's ``(long)`` of the first number (``relstring.20``: the family's cutoff
    20; below 1: not supported), ``default`` under the bare name."""

    __slots__ = ("default",)

    def __init__(self, name: str, default: int = 10) -> None:
        super().__init__(name)
        self.default = default

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            return [(self.name, f"{family}@{self.default}", ())]
        first = numbers(self.name, text)[0]
        return [(f"{self.name}_{text}", f"{family}@{int(first)}" if first >= 1 else None, ())]

    def printed(self, m: Measure) -> str | None:
        return self.name if m.cutoff == self.default else f"{self.name}_{m.cutoff}"


class Weights(TrecForm):
    """Exactly ``len(params)`` numbers, the family's ``params`` in order (``utility.1,-1,0,0``);
    ``defaults``: their values under the bare name."""

    __slots__ = (
        "params",
        "defaults",
    )

    def __init__(
        self, name: str, params: tuple[str, ...] = (), defaults: tuple[float, ...] = ()
    ) -> None:
        super().__init__(name)
        self.params = params
        self.defaults = defaults

    def rows(self, family: str, text: str | None) -> list[Row]:
        if text is None:
            return [(self.name, family, ())]
        given = numbers(self.name, text)
        if len(given) != len(self.params):
            return [(f"{self.name}_{text}", None, ())]
        args = ",".join(f"{k}={fmt_num(x)}" for k, x in zip(self.params, given))
        return [(f"{self.name}_{text}", f"{family}({args})", ())]

    def printed(self, m: Measure) -> str | None:
        if m.param("rel") is not None:
            return super().printed(m)
        values = tuple(m.param(k) for k in self.params)
        if values == self.defaults:
            return self.name
        return f"{self.name}_" + ",".join(map(fmt_num, values))


__all__ = [
    "LONG_CUTS",
    "TrecForm",
    "Plain",
    "Cuts",
    "Levels",
    "GainMap",
    "Persistence",
    "LevelList",
    "FirstNumber",
    "Length",
    "Weights",
    "fmt_num",
    "defaults_only",
]
