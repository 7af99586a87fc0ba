"""The evaluation plan: what a list of ``-m`` texts (trec_eval names and nicknames, ir_measures
strings, Measures) asks for, which measures are computed, and which lines trec_eval's layout
prints, under which names, in which order.

trec_eval quirks kept on purpose so that the output is the same: parameters of a measure given
twice (``-m P.5 -m P.10``) are taken from the first and the others ignored (trec_eval does so
silently; tierank adds a note); the nicknames mark measures with their default (or given)
parameters.  What trec_eval computes besides the printed measures is the plan's too: the measures
the evaluation needs but does not print ([`Plan.with_trec_eval_counts`][tierank.measures.plans.Plan.with_trec_eval_counts],
[`Plan.with_coverage`][tierank.measures.plans.Plan.with_coverage]) are entries with ``shown`` False.

>>> [str(m) for m in resolve(["P.10,5", "map", "nDCG@10"])]
['P@5', 'P@10', 'AP', 'nDCG@10']
>>> [e.name for e in plan(["P.10,5", "map", "nDCG@10"]).printed]
['map', 'P_5', 'P_10', 'ndcg_cut_10']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..errors import TierankInputError, UnknownMeasure, quote
from .aliases import suggest
from .base import Measure, TrecNames, flat_measures, parse_measure, use_trec_names
from .trec_naming import (
    NICKNAMES,
    NOT_IMPLEMENTED,
    RUNID,
    TREC_ORDER,
    UNSUPPORTED_NICKNAMES,
    form_of,
    is_trec,
    split_text,
    trec_name,
    trec_order,
    trec_words,
)

#: the families whose value trec_eval divides 0 by 0 for a query that retrieves nothing under ``-J``
#: (``m_iprec_at_recall.c``, ``m_11pt_avg.c``: ``num_rel_ret / num_ret``), printed ``-nan``
NAN_WHEN_EMPTY = ("IPrec", "IPrecAvg")

#: the judgment coverage that the terminal table shows beside the measures
COVERAGE = "Judged@10"


def empty_is_nan(stats: dict, rel: int) -> None:
    """trec_eval's (and pytrec_eval's) ``-J`` value of interpolated precision for a query left with
    no document: its 0/0, NaN (printed ``  -nan``, and so is the summary), at each recall level that
    ``lround`` turns into 0 relevant documents, where tierank's measure says 0.  ``stats`` (a
    result's measure -> `Stats`, changed in place) holds the counts that
    [`Plan.with_trec_eval_counts`][tierank.measures.plans.Plan.with_trec_eval_counts] adds under ``-J``.

    >>> import numpy as np
    >>> from tierank.measures.summary import Stats
    >>> def s(*v):
    ...     a = np.array(v, dtype=float)
    ...     return Stats(a, a, a, a, np.zeros(len(a)))
    >>> stats = {parse_measure("NumRet"): s(0, 3), parse_measure("NumRel(rel=1)"): s(2, 2),
    ...          parse_measure("IPrec@0.1"): s(0, 0.5)}
    >>> empty_is_nan(stats, rel=1)
    >>> stats[parse_measure("IPrec@0.1")].oblivious.tolist()
    [nan, 0.5]
    """
    import numpy as np

    num_ret = stats.get(parse_measure("NumRet"))
    num_rel = stats.get(parse_measure(f"NumRel(rel={rel})"))
    if num_ret is None or num_rel is None:
        return
    empty = np.asarray(num_ret.oblivious) == 0
    if not empty.any():
        return
    rels = np.asarray(num_rel.oblivious, dtype=float)
    for m, s in list(stats.items()):
        if m.family not in NAN_WHEN_EMPTY:
            continue
        if m.family == "IPrec":
            levels = [float(m.cutoff)]
        else:
            given = dict(m.params).get("levels")
            levels = [float(x) for x in given.split(",")] if given else [i / 10 for i in range(11)]
        # C's lround: half away from zero (levels and counts are not negative)
        zero = np.zeros(len(rels), dtype=bool)
        for level in levels:
            zero |= np.floor(level * rels + 0.5) == 0
        nan = empty & zero
        if nan.any():
            fields = ("oblivious", "expected", "min", "max")
            new = {k: np.where(nan, np.nan, getattr(s, k)) for k in fields}
            stats[m] = replace(s, var=np.where(nan, 0.0, s.var), **new)


@dataclass(frozen=True)
class Entry:
    """One line kind of trec_eval's output: the printed ``name`` and the tierank ``measure``
    (None for ``runid`` and for ``num_q`` when no NumQ family is registered).

    ``shown`` False: computed for the evaluation, not printed; ``summary``: the measure whose
    per-query values, added, are the ``all`` line of a count (trec_eval's ``-c`` ``num_rel``)."""

    name: str
    measure: Measure | None
    key: tuple = ()  # sort key: trec_eval's print order
    shown: bool = True
    summary: Measure | None = None


@dataclass(frozen=True)
class Plan:
    """What a list of ``-m`` texts asks for.

    ``entries`` in the order asked for ([`printed`][tierank.measures.plans.Plan.printed]: in trec_eval's print order);
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
        nickname expanded in trec_eval's order), then those computed but not printed."""
        return list(dict.fromkeys(e.measure for e in self.entries if e.measure is not None))

    @property
    def printed(self) -> tuple[Entry, ...]:
        """The entries shown, in trec_eval's print order (its measure table, cutoffs ascending),
        the measures trec_eval lacks after them in the order asked for."""
        return tuple(sorted((e for e in self.entries if e.shown), key=lambda e: e.key))

    def shows(self, m: Measure) -> bool:
        """Whether ``m`` was asked for (printed), not only computed."""
        return any(e.shown and e.measure == m for e in self.entries)

    def with_docs_in_collection(self, ndocs: int | None) -> Plan:
        """This plan with trec_eval's ``-N``: every ``Utility`` reads ``ndocs`` documents in the collection
        (None: unchanged)."""
        if ndocs is None:
            return self
        from .trec_extra import with_docs_in_collection

        entries = tuple(
            replace(
                e,
                measure=None
                if e.measure is None
                else with_docs_in_collection([e.measure], ndocs)[0],
            )
            for e in self.entries
        )
        return replace(self, entries=entries)

    def with_trec_eval_quirks(self) -> Plan:
        """This plan with the measures as ``--format trec_eval`` computes them where trec_eval's value is
        undefined: ``Rndcg`` of a query with relevant documents but no positive gain is trec_eval's
        0/0 (``RnDCG(undefined='nan')``, printed ``-nan``); the other formats keep 0."""
        entries = tuple(
            replace(e, measure=e.measure(undefined="nan"))
            if e.measure is not None and e.measure.family == "RnDCG"
            else e
            for e in self.entries
        )
        return replace(self, entries=entries)

    def with_trec_eval_counts(
        self, *, complete: bool = False, rel: int = 1, judged_only: bool = False
    ) -> Plan:
        """This plan with the counts that trec_eval's options need, computed and not printed:
        with ``-c`` and ``-l`` other than 1, ``num_rel``'s summary is the judgments of grade > 0
        of every qrels query whatever ``-l`` says (``m_num_rel.c``): it reads ``NumRel(rel=1)``
        (the entry's ``summary``); with ``-J`` (``judged_only``) and interpolated precision,
        ``NumRet`` and ``NumRel(rel=REL)`` say which queries retrieve nothing (their value is
        trec_eval's 0/0, `NAN_WHEN_EMPTY`).

        >>> p = plan(["num_rel", "map"]).with_trec_eval_counts(complete=True, rel=2)
        >>> [(e.name, str(e.measure), e.shown, str(e.summary)) for e in p.entries]
        [('num_rel', 'NumRel', True, 'NumRel(rel=1)'), ('map', 'AP', True, 'None'), ('num_rel', 'NumRel(rel=1)', False, 'None')]
        """
        measures = self.measures
        entries = list(self.entries)
        if complete and rel != 1 and any(m.family == "NumRel" for m in measures):
            one = parse_measure("NumRel(rel=1)")
            entries = [
                replace(e, summary=one)
                if e.measure is not None and e.measure.family == "NumRel" and e.measure != one
                else e
                for e in entries
            ]
            entries.append(Entry("num_rel", one, shown=False))
        if judged_only and any(m.family in NAN_WHEN_EMPTY for m in measures):
            entries.append(Entry("num_ret", parse_measure("NumRet"), shown=False))
            entries.append(Entry("num_rel", parse_measure(f"NumRel(rel={rel})"), shown=False))
        return replace(self, entries=tuple(entries))

    def with_coverage(self) -> Plan:
        """This plan with the judgment coverage (`COVERAGE`, ``Judged@10``) computed for the
        terminal table, not printed as a measure unless it was asked for."""
        judged = parse_measure(COVERAGE)
        if judged in self.measures:
            return self
        return replace(self, entries=(*self.entries, Entry(COVERAGE, judged, shown=False)))

    def name_of(self, m: Measure) -> str:
        """The name printed for ``m``."""
        for e in self.entries:
            if e.measure == m:
                return e.name
        return trec_name(m) or str(m)


@dataclass
class _State:
    params: dict = field(default_factory=dict)  # trec name -> first parameter text
    ignored: list = field(default_factory=list)  # texts whose parameters were ignored
    marked: list = field(default_factory=list)  # trec names marked, in first-marked order
    explicit: set = field(default_factory=set)  # named directly (not through a nickname)
    slots: list = field(default_factory=list)  # ("trec", name) or ("m", Measure), as first asked
    errors: list = field(default_factory=list)


def _unknown(t: str) -> str:
    hint = suggest(t)
    return (
        f"unknown measure {quote(t)}"
        + (f"; did you mean {' or '.join(map(quote, hint))}?" if hint else "")
        + " (see `tierank measures`)"
    )


def _mark_trec(st: _State, t: str, name: str, params: str | None) -> None:
    """Mark trec_eval name or nickname ``name`` as trec_eval's ``mark_measure`` does."""
    if params is not None and params == "":
        st.errors.append(f"trec_eval measure {quote(t)}: empty parameter list after '.'")
        return
    if name in NICKNAMES:
        names = NICKNAMES[name]
    else:
        names = (name,)
        st.explicit.add(name)
        if params is not None:
            if name in st.params and st.params[name] != params:
                st.ignored.append(t)
            st.params.setdefault(name, params)
    for n in names:
        if n not in st.marked:
            st.marked.append(n)
            st.slots.append(("trec", n))


def _read(st: _State, t: object) -> None:
    """Read one ``-m`` item: a Measure, a trec_eval text or an ir_measures string."""
    if isinstance(t, Measure):
        problem = t.incomplete()
        if problem:
            st.errors.append(problem)
        else:
            st.slots.append(("m", t))
        return
    if not isinstance(t, str):
        st.errors.append(f"measure {t!r} is not a string")
        return
    trec = split_text(t)
    if trec is not None:
        _mark_trec(st, t, *trec)
        return
    words = trec_words(t)
    if words is not None and words[0] in UNSUPPORTED_NICKNAMES:
        st.errors.append(
            f"trec_eval nickname {quote(t)} ({UNSUPPORTED_NICKNAMES[words[0]]}) is not "
            "supported by tierank"
        )
        return
    try:
        st.slots.append(("m", parse_measure(t)))
    except UnknownMeasure:
        st.errors.append(_unknown(t))
    except TierankInputError as e:
        st.errors.extend(e.problems)


def _trec_entries(st: _State, name: str, left_out: list[str]) -> list[Entry]:
    """The entries of trec_eval name ``name`` (with its first parameters); what it cannot give
    goes to ``st.errors`` (named directly) or ``left_out`` (through a nickname)."""
    idx = TREC_ORDER.index(name)
    known = form_of(name)
    if known is None:
        if name in st.explicit:
            st.errors.append(
                f"trec_eval measure {quote(name)} ({NOT_IMPLEMENTED.get(name, 'preference measure')}) "
                "is not implemented by tierank"
            )
        else:
            left_out.append(name)
        return []
    family, form = known
    try:
        rows = form.rows(family, st.params.get(name))
    except TierankInputError as e:
        st.errors.extend(e.problems)
        return []
    out = []
    for printed, text, key in rows:
        try:
            meas = None if text is None else parse_measure(text)
        except TierankInputError as e:  # parameters the family refuses (a level past 1, ...)
            st.errors.extend(f"trec_eval measure {quote(printed)}: {p}" for p in e.problems)
            continue
        if meas is None:
            if name in st.explicit:
                st.errors.append(
                    f"trec_eval measure {quote(printed)}: these parameters are not supported by tierank"
                )
            elif name not in left_out:
                left_out.append(name)
            continue
        out.append(Entry(printed, meas, (idx, *key)))
    return out


def plan(texts: Iterable[str | Measure | list[Measure]]) -> Plan:
    """Resolve ``-m`` texts (trec_eval names and nicknames, ir_measures strings, Measures) into a
    [`Plan`][tierank.measures.plans.Plan]; bad or unknown texts raise one [`TierankInputError`][tierank.errors.TierankInputError] listing all problems
    (unknown names with "did you mean" suggestions).
    """
    st = _State()
    for t in flat_measures(texts):
        _read(st, t)
    entries: list[Entry] = []
    left_out: list[str] = []
    runid = False
    seen: set = set()
    for i, (kind, item) in enumerate(st.slots):
        if kind == "m":
            name = trec_name(item)
            key = trec_order(item) if name else (len(TREC_ORDER), i)
            found = [Entry(name or str(item), item, key)]
        elif item == RUNID:
            runid = True
            continue
        elif item == "num_q" and form_of("num_q") is None:
            found = [Entry("num_q", None, (TREC_ORDER.index("num_q"),))]  # the query count
        else:
            found = _trec_entries(st, item, left_out)
        for e in found:
            if e.measure is None or e.measure not in seen:
                seen.add(e.measure)
                entries.append(e)
    notes = [
        f"-m {t}: trec_eval takes the parameters of a measure from its first -m only; ignored"
        for t in st.ignored
    ]
    if left_out:
        notes.append("left out (no such measure in tierank): " + ", ".join(left_out))
    if st.errors:
        raise TierankInputError(st.errors)
    return Plan(tuple(entries), tuple(left_out), tuple(notes), runid)


def resolve(texts: Iterable[str | Measure] | str) -> list[Measure]:
    """The measures that ``texts`` (trec_eval names and nicknames, ir_measures strings) ask for.

    trec_eval names come in trec_eval's print order, the others after them in the order given;
    each measure once.  Raises [`TierankInputError`][tierank.errors.TierankInputError] (all problems together) for unknown
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


__all__ = ["NAN_WHEN_EMPTY", "COVERAGE", "empty_is_nan", "Entry", "Plan", "plan", "resolve"]
