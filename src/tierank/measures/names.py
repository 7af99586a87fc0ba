"""trec_eval's measure names, side by side with the ir_measures names.

``tierank eval -m`` (and [`tierank.evaluate`][tierank.evaluate]) accept every measure the way trec_eval 10
accepts it, next to the ir_measures strings of [`tierank.measures.parse_measure`][tierank.measures.parse_measure]:

* ``NAME`` or ``NAME.PARAMS``: ``map``, ``P`` (trec_eval's default cutoffs 5, 10, 15, 20, 30, 100,
  200, 500, 1000), ``P.5,10,20``, ``recall.100``, ``ndcg``, ``ndcg.1=3.5,2=9`` (gain map),
  ``ndcg_cut.10``, ``map_cut.100``, ``recip_rank``, ``Rprec``, ``success.1,5`` (default 1, 5, 10),
  ``bpref``, ``iprec_at_recall`` (default the 11 levels 0.0, 0.1, ..., 1.0), ``11pt_avg``,
  ``gm_map``, ``set_P``, ``set_recall``, ``set_F`` / ``set_F.0.5``, ``set_map``, ``num_q``,
  ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``, ``rbp`` / ``rbp.p=0.8``,
  ``infAP``, ``gm_bpref``, ``Rprec_mult`` (default 0.2, 0.4, ..., 2.0), ``utility`` / ``utility.1,-1,0,0``,
  ``relative_P``, ``set_relative_P``;
* the nicknames ``official`` (trec_eval's default set), ``set`` and ``all_trec``.

The source is trec_eval 10.0 (usnistgov/trec_eval): ``measures.c`` (the measure table, whose order
is the print order, and the nicknames), ``trec_eval.c`` (``mark_measure``: the name is what precedes
the first ``.``, the parameters what follows), ``meas_init.c`` (parameter parsing: cutoff lists are
comma separated, sorted ascending, duplicates and cutoffs <= 0 refused; printed names ``P_5``
(``%s_%ld``), ``iprec_at_recall_0.10`` (``%s_%3.2f``), and for measures with free parameters the
parameter text appended verbatim, ``rbp_p=0.8``, ``set_F_0.5``) and the ``m_*.c`` files (defaults).
trec_eval quirks kept on purpose so that the output is the same: parameters of a measure given
twice (``-m P.5 -m P.10``) are taken from the first and the others ignored (trec_eval does so
silently; tierank adds a note); the nicknames mark measures with their default (or given) parameters.

Semantics (checked against the real trec_eval 10 by ``tests/crosscheck/test_trec_eval_binary.py``):

* ``rbp``: trec_eval's default persistence is p = 0.9 (``m_rbp.c``), so ``rbp`` is
  ``RBP(p=0.9,gain='trec_eval')``, not tierank's default 0.8.  trec_eval's rbp takes the qrels grades
  as gains and, when the query's top grade G exceeds 1, rescales them to [0, 1], so a document counts
  grade / G (``min``/``max`` are read before being set in C; the released binary reads them as 0,
  which is the definition's own min); it ignores ``-l``.  ``gain='trec_eval'`` is that; tierank's
  plain RBP is binary (grade >= rel) and is not printed under trec_eval's name.  Gain parameters
  (``rbp.2=5``) are refused.
* ``set_F.x``: trec_eval computes (x+1) P R / (R + x P); it maps to ``SetF(beta=x)``.
* ``ndcg.L=G,...``: trec_eval's gain map (levels not named keep gain = level) maps to
  ``nDCG(gains={L:G,...})``.
* ``G``, ``binG``, ``ndcg_rel``, ``Rndcg`` (trec_eval's experimental gain measures) map to ``G``,
  ``BinG``, ``nDCG_rel``, ``RnDCG`` (`tierank.measures.trec_gain`), a gain map ``G.1=2,2=5`` to
  ``G(gains={1:2,2:5})``; ``unj.5,10`` to ``Unj@5``, ``Unj@10`` (default cutoffs 5, 10,
  20) and ``rbp_resid`` / ``rbp_resid.p=0.8`` to ``RBP_resid(p=0.9)`` / ``RBP_resid(p=0.8)``
  (`tierank.measures.unjudged`); ``relstring`` / ``relstring.20`` to ``RelString@10`` /
  ``RelString@20``, a string per query (the tie-oblivious ordering's;
  `tierank.measures.relstring`) that only ``--format trec_eval`` prints.
* ``11pt_avg.0.25,0.5,0.75`` maps to ``IPrecAvg(levels='0.25,0.5,0.75')``, printed
  ``11pt_avg_0.25,0.5,0.75`` (the text as given), averaged as trec_eval averages the levels, in the
  order given.
* Rank cutoffs are read as trec_eval's ``atol`` reads them: ``ndcg_cut.10,20,23.4`` is
  ``ndcg_cut_10``, ``ndcg_cut_20`` and ``ndcg_cut_23``.
* ``all_prefs`` and ``qrels_jg`` (measures of trec_eval's ``-R prefs`` / ``-R qrels_jg`` files)
  are refused.
* Every measure of ``all_trec`` is implemented, so the nickname leaves nothing out.
* ``utility.p1,p2,p3,p4`` maps to ``Utility(p1=..,p2=..,p3=..,p4=..)``; ``-N`` (documents in the
  collection, read by trec_eval's ``utility`` only) sets its ``ndocs`` ([`Plan.with_docs_in_collection`][tierank.measures.names.Plan.with_docs_in_collection]).
* ``Rprec_mult.x,...`` maps to ``RprecMult@x`` (precision at rank ``(long) (x N+ + 0.9)``), printed
  ``Rprec_mult_0.20`` as trec_eval prints it; ``relative_P.k`` to ``RelP@k``.

The reverse, [`trec_name`][tierank.measures.names.trec_name], gives the name trec_eval prints for a measure (``P@10`` ->
``P_10``) or None; [`trec_order`][tierank.measures.names.trec_order] its position in trec_eval's print order.  Unknown names get
"did you mean" suggestions ([`suggest`][tierank.measures.names.suggest]).

Examples
--------
>>> [str(m) for m in resolve(["P.10,5", "map", "nDCG@10"])]
['P@5', 'P@10', 'AP', 'nDCG@10']
>>> [e.name for e in plan(["P.10,5", "map", "nDCG@10"]).printed]
['map', 'P_5', 'P_10', 'ndcg_cut_10']
>>> trec_name(parse_measure("nDCG@10")), trec_name(parse_measure("RR")), trec_name(parse_measure("F1@5"))
('ndcg_cut_10', 'recip_rank', None)
>>> suggest("MRR@10")
['RR@10']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from ..errors import TierankInputError, UnknownMeasure, quote
from .base import (
    REGISTRY,
    Measure,
    TrecNames,
    flat_measures,
    parse_measure,
    supported,
    use_trec_names,
)

#: the tools whose measure names each family declares (`tierank.measures.base.FamilyNames`)
Tool = Literal["trec_eval", "trec_eval_cut", "ir_measures", "ranx", "mteb", "sentence_transformers"]


def family_names(tool: Tool, order: Iterable[str] = ()) -> dict[str, str]:
    """``{name in tool: tierank family}`` of every registered family that declares a name in ``tool``
    (`tierank.measures.Measure.names`): the one source of the name tables of this module and of
    the adapters.  Names listed in ``order`` (the tool's own print order) come first, in that order,
    the others after them in registration order.

    >>> family_names("mteb", ("ndcg", "map"))
    {'ndcg': 'nDCG', 'map': 'AP', 'precision': 'P', 'recall': 'R', 'mrr': 'RR', 'hit_rate': 'Success'}
    >>> list(family_names("trec_eval_cut").items())[-2:]
    [('relative_P', 'RelP'), ('unj', 'Unj')]
    """
    out: dict[str, str] = {}
    for cls in dict.fromkeys(REGISTRY.values()):  # each class once (aliases share it)
        name = getattr(cls.names, tool)
        if tool == "ir_measures" and name == "":
            name = cls.family  # tierank's family names follow ir_measures
        if not name:
            continue
        if out.get(name, cls.family) != cls.family:
            raise ValueError(
                f"{tool} name {name!r} is declared by the families {out[name]} and {cls.family}"
            )
        out[name] = cls.family
    first = [n for n in order if n in out]
    return {**{n: out[n] for n in first}, **{n: f for n, f in out.items() if n not in first}}


#: trec_eval 10's measure table (``measures.c``, ``te_trec_measures``): its order is the print order
TREC_ORDER = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
)

#: trec_eval 10's nicknames (``measures.c``)
NICKNAMES = {
    "official": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ),
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
    "all_trec": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ),
}

_LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_IPREC_LEVELS = tuple(i / 10 for i in range(11))

#: special lines of trec_eval's output that are not measures
RUNID = "runid"


@dataclass(frozen=True)
class _Spec:
    """How one trec_eval measure maps to tierank: ``kind`` of its parameters and a builder."""

    kind: str  # "plain" | "long_cuts" | "double_cuts" | "pairs" | "doubles"
    build: (
        Callable  # parameters -> tierank measure string (None: those parameters are not supported)
    )
    defaults: tuple = ()


def _fmt_num(x: float) -> str:
    return repr(float(x)).rstrip("0").rstrip(".") if "." in repr(float(x)) else repr(float(x))


def _gain_map(family: str, pairs: tuple | None, negative: bool = False) -> str:
    """``family`` with trec_eval's gain map ``level=gain,...`` (None: trec_eval's default gains);
    ``negative``: the family counts a negative gain as 0 unless told ``negative='keep'``, which it is
    when the map holds one (trec_eval counts it as given)."""
    if pairs is None:
        return family
    keep = ",negative='keep'" if negative and any(v < 0 for _, v in pairs) else ""
    return (
        family
        + "(gains={"
        + ",".join(f"{_fmt_num(k)}:{_fmt_num(v)}" for k, v in pairs)
        + "}"
        + keep
        + ")"
    )


#: trec_eval measures whose parameters are not a list of rank cutoffs (the others are derived from the
#: registry: a family's ``names.trec_eval`` is a plain measure, its ``names.trec_eval_cut`` a cutoff list)
_SPECIAL: dict[str, _Spec] = {
    "iprec_at_recall": _Spec("double_cuts", lambda x: f"IPrec@{_fmt_num(x)}", _IPREC_LEVELS),
    "11pt_avg": _Spec(
        "doubles",
        lambda p: (
            "IPrecAvg" if p is None else "IPrecAvg(levels='" + ",".join(map(_fmt_num, p)) + "')"
        ),
    ),
    "ndcg": _Spec("pairs", lambda p: _gain_map("nDCG", p, negative=True)),
    "set_F": _Spec("doubles", lambda p: "SetF" if p is None else f"SetF(beta={_fmt_num(p[0])})"),
    "rbp": _Spec(
        "pairs", lambda p: "RBP(p=" + _fmt_num(dict(p or ()).get("p", 0.9)) + ",gain='trec_eval')"
    ),
    "rbp_resid": _Spec(
        "pairs", lambda p: "RBP_resid(p=" + _fmt_num(dict(p or ()).get("p", 0.9)) + ")"
    ),
    "G": _Spec("pairs", lambda p: _gain_map("G", p)),
    "ndcg_rel": _Spec("pairs", lambda p: _gain_map("nDCG_rel", p)),
    "Rndcg": _Spec("pairs", lambda p: _gain_map("RnDCG", p)),
    # trec_eval reads the length as (long) of its first parameter (m_relstring.c)
    "relstring": _Spec(
        "doubles",
        lambda p: "RelString@10" if p is None else f"RelString@{int(p[0])}" if p[0] >= 1 else None,
    ),
    "Rprec_mult": _Spec(
        "double_cuts",
        lambda x: f"RprecMult@{_fmt_num(x)}",
        (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
    "utility": _Spec(
        "doubles",
        lambda p: (
            "Utility"
            if p is None
            else None
            if len(p) != 4
            else "Utility(" + ",".join(f"p{i + 1}={_fmt_num(x)}" for i, x in enumerate(p)) + ")"
        ),
    ),
}


def _plain_spec(family: str) -> _Spec:
    return _Spec("plain", lambda p: family)


def _cut_spec(family: str, defaults: tuple[int, ...]) -> _Spec:
    return _Spec("long_cuts", lambda k: f"{family}@{k}", defaults or _LONG_CUTS)


@lru_cache(maxsize=4)
def _tables(registered: int) -> tuple[dict[str, _Spec], dict[str, str], dict[str, str]]:
    """(trec_eval name -> `_Spec`, family -> plain trec_eval name, family -> cutoff trec_eval name),
    derived from the registry (``registered``: its size, so that a family registered later is seen)."""
    plain, cut = family_names("trec_eval"), family_names("trec_eval_cut")
    specs = {name: _plain_spec(fam) for name, fam in plain.items()}
    specs.update(
        (name, _cut_spec(fam, REGISTRY[fam].names.trec_eval_cutoffs)) for name, fam in cut.items()
    )
    specs.update(_SPECIAL)
    return (
        specs,
        {fam: name for name, fam in plain.items()},
        {fam: name for name, fam in cut.items()},
    )


def _specs() -> dict[str, _Spec]:
    """trec_eval name -> how it maps to tierank (see `_tables`)."""
    return _tables(len(REGISTRY))[0]


#: trec_eval's nicknames of measures read from other relevance formats (-R prefs, qrels_jg)
_UNSUPPORTED_NICKNAMES = {
    "all_prefs": "preference measures, read from -R prefs or -R qrels_prefs",
    "qrels_jg": "judgment-group measures, read from -R qrels_jg",
}

_NOT_IMPLEMENTED = {
    "dcg": "unnormalised DCG",
    "ideal_dcg": "ideal DCG",
    "yaap": "yet another AP (experimental)",
}


@dataclass(frozen=True)
class Entry:
    """One line kind of trec_eval's output: the printed ``name`` and the tierank ``measure``
    (None for ``runid`` and for ``num_q`` when no NumQ family is registered)."""

    name: str
    measure: Measure | None
    key: tuple = ()  # sort key: trec_eval's print order


@dataclass(frozen=True)
class Plan:
    """What a list of ``-m`` texts asks for.

    ``entries`` in the order asked for ([`printed`][tierank.measures.names.Plan.printed]: in trec_eval's print order);
    ``left_out``: trec_eval measures of a nickname that tierank does not have; ``notes``: what was
    ignored or left out, in words (the CLI prints them on stderr).
    """

    entries: tuple[Entry, ...]
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    runid: bool = False

    @property
    def measures(self) -> list[Measure]:
        """The measures to evaluate, each once, in the order asked for (a trec_eval name or
        nickname expanded in trec_eval's order)."""
        return list(dict.fromkeys(e.measure for e in self.entries if e.measure is not None))

    @property
    def printed(self) -> tuple[Entry, ...]:
        """The entries in trec_eval's print order (its measure table, cutoffs ascending), the
        measures trec_eval lacks after them in the order asked for."""
        return tuple(sorted(self.entries, key=lambda e: e.key))

    def with_docs_in_collection(self, ndocs: int | None) -> Plan:
        """This plan with trec_eval's ``-N``: every ``Utility`` reads ``ndocs`` documents in the collection
        (None: unchanged)."""
        if ndocs is None:
            return self
        from .trec_extra import with_docs_in_collection

        entries = tuple(
            Entry(
                e.name,
                None if e.measure is None else with_docs_in_collection([e.measure], ndocs)[0],
                e.key,
            )
            for e in self.entries
        )
        return Plan(entries, self.left_out, self.notes, self.runid)

    def with_trec_eval_quirks(self) -> Plan:
        """This plan with the measures as ``--format trec_eval`` computes them where trec_eval's value is
        undefined: ``Rndcg`` of a query with relevant documents but no positive gain is trec_eval's
        0/0 (``RnDCG(undefined='nan')``, printed ``-nan``); the other formats keep 0."""
        entries = tuple(
            Entry(e.name, e.measure(undefined="nan"), e.key)
            if e.measure is not None and e.measure.family == "RnDCG"
            else e
            for e in self.entries
        )
        return Plan(entries, self.left_out, self.notes, self.runid)

    def name_of(self, m: Measure) -> str:
        """The name printed for ``m``."""
        for e in self.entries:
            if e.measure == m:
                return e.name
        return trec_name(m) or str(m)


@dataclass
class _State:
    params: dict = field(default_factory=dict)  # trec name -> first parameter text
    marked: list = field(default_factory=list)  # trec names marked, in first-marked order
    explicit: set = field(default_factory=set)  # named directly (not through a nickname)


_TREC_TEXT = re.compile(r"^\s*([A-Za-z0-9_]+)(?:\.(.*?))?\s*$")


def is_trec(text: str) -> bool:
    """Whether ``text`` is written in trec_eval's syntax (a trec_eval measure name or nickname,
    optionally followed by ``.PARAMS``).

    >>> is_trec("P.10"), is_trec("P@10"), is_trec("official"), is_trec("ndcg_cut.5")
    (True, False, True, True)
    """
    m = _TREC_TEXT.match(text) if isinstance(text, str) else None
    return m is not None and (m.group(1) in TREC_ORDER or m.group(1) in NICKNAMES)


def _long_cuts(name: str, text: str) -> tuple[int, ...]:
    """Rank cutoffs as trec_eval reads them (``atol``: a decimal is cut to its integer part, so
    ``ndcg_cut.23.4`` is ``ndcg_cut_23``), sorted; not positive or given twice: refused."""
    out = []
    for tok in text.split(","):
        t = tok.strip()
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", t):
            raise TierankInputError(
                f"trec_eval measure {quote(name + '.' + text)}: cutoff {quote(t)} is not a "
                "positive integer"
            )
        out.append(int(t.split(".")[0]))
    out.sort()
    if out[0] <= 0:
        raise TierankInputError(
            f"trec_eval measure {quote(name + '.' + text)}: cutoffs must be positive"
        )
    if len(set(out)) != len(out):
        raise TierankInputError(f"trec_eval measure {quote(name + '.' + text)}: duplicate cutoffs")
    return tuple(out)


def _float(name: str, text: str, tok: str) -> float:
    t = tok.strip()
    if not re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", t):
        raise TierankInputError(
            f"trec_eval measure {quote(name + '.' + text)}: {quote(t)} is not a number"
        )
    return float(t)


def _double_cuts(name: str, text: str) -> tuple[float, ...]:
    out = sorted(_float(name, text, t) for t in text.split(","))
    if len(set(out)) != len(out):
        raise TierankInputError(f"trec_eval measure {quote(name + '.' + text)}: duplicate cutoffs")
    return tuple(out)


def _pairs(name: str, text: str) -> tuple[tuple, ...]:
    out = []
    for item in text.split(","):
        if "=" not in item:
            raise TierankInputError(
                f"trec_eval measure {quote(name + '.' + text)}: parameter {quote(item)} is not "
                "name=value"
            )
        k, v = item.split("=", 1)
        key: str | float = k.strip() if name in ("rbp", "rbp_resid") else _float(name, text, k)
        if name in ("rbp", "rbp_resid") and re.fullmatch(r"[+-]?[0-9]+", k.strip()):
            raise TierankInputError(
                f"trec_eval measure {quote(name + '.' + text)}: gain parameters ({key}=...) are "
                "not supported by tierank; rbp takes the grades as gains"
            )
        out.append((key, _float(name, text, v)))
    return tuple(out)


def _entries(name: str, text: str | None) -> list[tuple[str, str | None, tuple]]:
    """(printed name, tierank measure string or None, sort key) of trec_eval measure ``name`` with
    parameter text ``text`` (None: the defaults)."""
    idx = TREC_ORDER.index(name)
    spec = _specs().get(name)
    if spec is None:
        return [(name, None, (idx,))]
    if spec.kind == "long_cuts":
        cuts = spec.defaults if text is None else _long_cuts(name, text)
        return [(f"{name}_{k}", spec.build(k), (idx, k)) for k in cuts]
    if spec.kind == "double_cuts":
        cuts = spec.defaults if text is None else _double_cuts(name, text)
        return [(f"{name}_{x:3.2f}", spec.build(x), (idx, x)) for x in cuts]
    printed = name if text is None else f"{name}_{text}"
    if spec.kind == "plain":
        return [(name, spec.build(None), (idx,))]  # trec_eval ignores parameters of these
    if spec.kind == "pairs":
        return [(printed, spec.build(None if text is None else _pairs(name, text)), (idx,))]
    vals = None if text is None else tuple(_float(name, text, t) for t in text.split(","))
    return [(printed, spec.build(vals), (idx,))]


def _available(text: str) -> Measure | None:
    try:
        return parse_measure(text)
    except TierankInputError:
        return None


def plan(texts: Iterable[str | Measure | list[Measure]]) -> Plan:
    """Resolve ``-m`` texts (trec_eval names and nicknames, ir_measures strings, Measures) into a
    [`Plan`][tierank.measures.names.Plan]; bad or unknown texts raise one [`TierankInputError`][tierank.measures.names.TierankInputError] listing all problems
    (unknown names with "did you mean" suggestions).
    """
    st = _State()
    slots: list = []  # ("trec", name) or ("m", Measure), in the order first asked for
    errors: list = []
    for t in flat_measures(texts):
        if isinstance(t, Measure):
            problem = t.incomplete()
            if problem:
                errors.append(problem)
            else:
                slots.append(("m", t))
            continue
        if not isinstance(t, str):
            errors.append(f"measure {t!r} is not a string")
            continue
        m = _TREC_TEXT.match(t)
        if m and (m.group(1) in TREC_ORDER or m.group(1) in NICKNAMES):
            name, params = m.group(1), m.group(2)
            if params is not None and params == "":
                errors.append(f"trec_eval measure {quote(t)}: empty parameter list after '.'")
                continue
            if name in NICKNAMES:
                names = tuple(n for n in TREC_ORDER if n in NICKNAMES[name])
            else:
                names = (name,)
                st.explicit.add(name)
                if params is not None:
                    if name in st.params and st.params[name] != params:
                        st.params.setdefault("__ignored__", []).append(t)
                    st.params.setdefault(name, params)
            for n in names:
                if n not in st.marked:
                    st.marked.append(n)
                    slots.append(("trec", n))
            continue
        if m and m.group(1) in _UNSUPPORTED_NICKNAMES:
            errors.append(
                f"trec_eval nickname {quote(t)} ({_UNSUPPORTED_NICKNAMES[m.group(1)]}) is not "
                "supported by tierank"
            )
            continue
        try:
            slots.append(("m", parse_measure(t)))
        except UnknownMeasure:
            hint = suggest(t)
            errors.append(
                f"unknown measure {quote(t)}"
                + (f"; did you mean {' or '.join(map(quote, hint))}?" if hint else "")
                + " (see `tierank measures`)"
            )
        except TierankInputError as e:
            errors.extend(e.problems)
    entries: list[Entry] = []
    left_out: list[str] = []
    notes: list[str] = []
    runid = False
    seen: set = set()
    for i, (kind, item) in enumerate(slots):
        if kind == "m":
            if item not in seen:
                seen.add(item)
                name = trec_name(item)
                entries.append(
                    Entry(
                        name or str(item), item, trec_order(item) if name else (len(TREC_ORDER), i)
                    )
                )
            continue
        name = item
        if name == RUNID:
            runid = True
            continue
        if name not in _specs():
            if name in st.explicit:
                errors.append(
                    f"trec_eval measure {quote(name)} ({_NOT_IMPLEMENTED.get(name, 'preference measure')}) "
                    "is not implemented by tierank"
                )
            else:
                left_out.append(name)
            continue
        try:
            rows = _entries(name, st.params.get(name))
        except TierankInputError as e:
            errors.extend(e.problems)
            continue
        for printed, text, key in rows:
            try:
                meas = None if text is None else parse_measure(text)
            except UnknownMeasure:
                meas = None
            except TierankInputError as e:  # parameters the family refuses (a level past 1, ...)
                errors.extend(f"trec_eval measure {quote(printed)}: {p}" for p in e.problems)
                continue
            if meas is None and name == "num_q":
                entries.append(Entry(printed, None, key))  # printed from the query count
                continue
            if meas is None:
                why = (
                    "these parameters are not supported by tierank"
                    if text is None
                    else f"needs {text}, not available in this tierank"
                )
                if name in st.explicit:
                    errors.append(f"trec_eval measure {quote(printed)}: {why}")
                elif name not in left_out:
                    left_out.append(name)
                continue
            if meas not in seen:
                seen.add(meas)
                entries.append(Entry(printed, meas, key))
    for t in st.params.get("__ignored__", []):
        notes.append(
            f"-m {t}: trec_eval takes the parameters of a measure from its first -m only; ignored"
        )
    if left_out:
        notes.append("left out (no such measure in tierank): " + ", ".join(left_out))
    if errors:
        raise TierankInputError(errors)
    return Plan(tuple(entries), tuple(left_out), tuple(notes), runid)


def resolve(texts: Iterable[str | Measure] | str) -> list[Measure]:
    """The measures that ``texts`` (trec_eval names and nicknames, ir_measures strings) ask for.

    trec_eval names come in trec_eval's print order, the others after them in the order given;
    each measure once.  Raises [`TierankInputError`][tierank.measures.names.TierankInputError] (all problems together) for unknown
    names, with suggestions.

    >>> [str(m) for m in resolve("success")]
    ['Success@1', 'Success@5', 'Success@10']
    >>> resolve(["ndcg@10"])
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown measure 'ndcg@10'; did you mean 'nDCG@10'? (see `tierank measures`)
    """
    if isinstance(texts, (str, Measure)):
        texts = [texts]
    return plan(texts).measures


class _Installed(TrecNames):
    """This module's reading of trec_eval names, for `tierank.measures.parse_measure(s)`."""

    def is_trec(self, text: str) -> bool:
        return is_trec(text)

    def resolve(self, texts: list[str]) -> list[Measure]:
        return resolve(texts)


use_trec_names(_Installed())


# -- reverse ---------------------------------------------------------------------------------------


def _defaults_only(m: Measure, allowed: tuple[str, ...] = ()) -> bool:
    return all(
        v == p.default for p in m.schema for k, v in m.params if k == p.name and k not in allowed
    )


#: the families that take trec_eval's gain map ``level=gain,...``, and their trec_eval names
_GAIN_MAPPED = {"nDCG": "ndcg", "G": "G", "nDCG_rel": "ndcg_rel", "RnDCG": "Rndcg"}


def trec_name(m: Measure) -> str | None:
    """The name trec_eval prints for measure ``m``, or None when trec_eval has no such measure.

    >>> [trec_name(parse_measure(t)) for t in ("P@5", "AP@100", "R@10", "R", "RBP(p=0.9,gain='trec_eval')",
    ...                                        "RBP(p=0.9)", "P(rel=2)@5")]
    ['P_5', 'map_cut_100', 'recall_10', None, 'rbp', None, None]
    """
    fam = m.family
    if fam == "RBP":  # only trec_eval's own definition (graded gains) prints as trec_eval's rbp
        if m.cutoff is not None or m.param("gain") != "trec_eval" or m.param("rel") is not None:
            return None
        p = m.param("p")
        return "rbp" if p == 0.9 else f"rbp_p={_fmt_num(p)}"
    if fam == "RelString":
        return "relstring" if m.cutoff == 10 else f"relstring_{m.cutoff}"
    if fam == "IPrecAvg" and m.param("levels") is not None and m.param("rel") is None:
        return f"11pt_avg_{m.param('levels')}"
    if fam == "RBP_resid":
        p = m.param("p")
        return "rbp_resid" if p == 0.9 else f"rbp_resid_p={_fmt_num(p)}"
    if fam == "IPrec":
        if m.cutoff is None or not _defaults_only(m):
            return None
        return f"iprec_at_recall_{float(m.cutoff):3.2f}"
    if fam == "RprecMult":
        if m.cutoff is None or not _defaults_only(m):
            return None
        return f"Rprec_mult_{float(m.cutoff):3.2f}"
    if fam == "Utility" and m.param("rel") is None:
        p = tuple(m.param(f"p{i}") for i in range(1, 5))
        return "utility" if p == (1.0, -1.0, 0.0, 0.0) else "utility_" + ",".join(map(_fmt_num, p))
    if fam == "SetF":
        if m.cutoff is not None:
            return None
        beta = dict(m.params).get("beta", 1.0)
        others = tuple(k for k, _ in m.params if k != "beta")
        if not _defaults_only(m, ("beta",)) and others:
            return None
        return "set_F" if beta in (None, 1, 1.0) else f"set_F_{_fmt_num(beta)}"
    if (
        fam in _GAIN_MAPPED
        and m.cutoff is None
        and dict(m.params).get("gains")
        and _defaults_only(m, ("gains", "undefined", "negative"))
    ):
        return f"{_GAIN_MAPPED[fam]}_" + ",".join(
            f"{_fmt_num(k)}={_fmt_num(v)}" for k, v in dict(m.params)["gains"]
        )
    if not _defaults_only(m, ("undefined",)):
        return None
    _, plain, cut = _tables(len(REGISTRY))
    if m.cutoff is None:
        return plain.get(fam)
    if fam in cut and isinstance(m.cutoff, int):
        return f"{cut[fam]}_{m.cutoff}"
    return None


def trec_order(m: Measure) -> tuple:
    """Sort key of ``m`` in trec_eval's print order (measures trec_eval lacks sort last)."""
    name = trec_name(m)
    if name is None:
        return (len(TREC_ORDER),)
    for base in sorted(TREC_ORDER, key=len, reverse=True):
        if name == base:
            return (TREC_ORDER.index(base),)
        if name.startswith(base + "_"):
            rest = name[len(base) + 1 :]
            try:
                return (TREC_ORDER.index(base), float(rest))
            except ValueError:
                return (TREC_ORDER.index(base), 0.0)
    return (len(TREC_ORDER),)


# -- did you mean ----------------------------------------------------------------------------------

_ALIASES = {
    "mrr": "RR",
    "rr": "RR",
    "map": "AP",
    "ap": "AP",
    "ndcg": "nDCG",
    "recall": "R",
    "r": "R",
    "precision": "P",
    "prec": "P",
    "p": "P",
    "success": "Success",
    "hits": "Hits",
    "hit": "Hits",
    "bpref": "Bpref",
    "err": "ERR",
    "rprec": "Rprec",
    "rbp": "RBP",
    "f1": "F1",
    "judged": "Judged",
    "mrr_cut": "RR",
    "ndcg_cut": "nDCG",
    "map_cut": "AP",
    "recip_rank": "RR",
    "gm_map": "GMAP",
    "set_p": "SetP",
    "set_recall": "SetR",
    "set_f": "SetF",
    "set_map": "SetAP",
    "num_q": "NumQ",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "iprec": "IPrec",
    "iprec_at_recall": "IPrec",
    "hitrate": "Success",
    "hit_rate": "Success",
    "recall_cap": "R_cap",
}


def _all_names() -> list[str]:
    return sorted(set(supported()) | set(REGISTRY) | set(_specs()) | set(NICKNAMES))


def suggest(text: str, n: int = 3) -> list[str]:
    """Likely intended spellings of an unknown measure ``text`` (case, ir_measures/trec_eval
    aliases, the printed form ``P_10``, then `difflib` over every name).

    >>> suggest("ndcg@10"), suggest("mAP"), suggest("P_10"), suggest("ndcg_cut_10")
    (['nDCG@10'], ['AP', 'map'], ['P.10', 'P@10'], ['ndcg_cut.10', 'nDCG@10'])
    """
    text = str(text).strip()
    m = re.match(r"^([A-Za-z0-9_]+?)(?:_([0-9.]+))?((?:\(.*\))?(?:@.*)?)$", text)
    out: list[str] = []
    known = set(REGISTRY)
    if m:
        base, num, rest = m.groups()
        low = base.lower()
        if num is not None and not rest:  # trec_eval's printed name, e.g. P_10, ndcg_cut_10
            specs = _specs()
            trec = next((t for t in specs if t.lower() == low), None)
            if trec is not None and specs[trec].kind in ("long_cuts", "double_cuts"):
                out.append(f"{trec}.{num}")
            fam = _ALIASES.get(low)
            if fam in known and re.fullmatch(r"[0-9]+", num):
                out.append(f"{fam}@{num}")
        else:
            fam = next((f for f in known if f.lower() == low), None) or _ALIASES.get(low)
            if num is not None:
                rest = f"_{num}{rest}"
            if fam in known:
                out.append(fam + rest)
            trec = next(
                (t for t in (*_specs(), *NICKNAMES) if t.lower() == low and t != base), None
            )
            if trec is not None and not rest:
                out.append(trec)
    if not out:
        head = re.split(r"[(@.]", text, maxsplit=1)[0]
        tail = text[len(head) :]
        close = difflib.get_close_matches(head, _all_names(), n=n, cutoff=0.7)
        close += [
            c
            for c in difflib.get_close_matches(
                head.lower(), [x.lower() for x in _all_names()], n=n, cutoff=0.7
            )
            if c not in [x.lower() for x in close]
        ]
        lowmap = {x.lower(): x for x in _all_names()}
        for c in close:
            name = lowmap.get(c.lower(), c)
            fam = (
                name
                if name in REGISTRY
                else next((f for f in known if f.lower() == name.lower()), None)
            )
            fam = fam or _ALIASES.get(name.lower())
            for cand in (
                (fam + tail) if fam in known else None,
                name if not tail or name in REGISTRY else None,
            ):
                if cand and cand not in out:
                    out.append(cand)
    return [
        o for o in dict.fromkeys(out) if o != text and (is_trec(o) or _available(o) is not None)
    ][:n]


__all__ = [
    "TREC_ORDER",
    "NICKNAMES",
    "RUNID",
    "Entry",
    "Plan",
    "plan",
    "resolve",
    "trec_name",
    "trec_order",
    "suggest",
    "is_trec",
    "Tool",
    "family_names",
]
