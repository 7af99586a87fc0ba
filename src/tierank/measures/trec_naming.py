"""trec_eval's names: its measure table (one order, the print order, with the nicknames that mark
each name) and the forms the families declare for their names (`tierank.measures.trec_forms`).

The source is trec_eval 10.0 (usnistgov/trec_eval): ``measures.c`` (``te_trec_measures``: the
measure table, whose order is the print order; ``off_names``, ``set_names``, ``trec_names``: the
nicknames ``official``, ``set`` and ``all_trec``).  Which family a name belongs to, and how it
reads its parameters, is declared by the family (``FamilyNames.trec_eval``, ``trec_eval_cut``,
``trec_eval_cutoffs``, ``trec_eval_form``): `forms` derives the index from the registry.

>>> from tierank.measures import parse_measure
>>> trec_name(parse_measure("nDCG@10")), trec_name(parse_measure("RR")), trec_name(parse_measure("F1@5"))
('ndcg_cut_10', 'recip_rank', None)
>>> NICKNAMES["official"][:6]
('runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map')
"""

from __future__ import annotations

import re
from functools import lru_cache

from .base import REGISTRY, Measure
from .lazy import Registry
from .trec_forms import Cuts, Plain, TrecForm

# the nicknames that mark a name (measures.c's off_names, set_names, trec_names)
_O, _S, _A = "official", "set", "all_trec"

#: trec_eval 10's measure table (``measures.c``, ``te_trec_measures``), in its print order, each
#: name with the nicknames that mark it: the one source of `TREC_ORDER` and `NICKNAMES`
TREC_TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("runid", (_O, _S, _A)),
    ("num_q", (_O, _S, _A)),
    ("num_ret", (_O, _S, _A)),
    ("num_rel", (_O, _S, _A)),
    ("num_rel_ret", (_O, _S, _A)),
    ("map", (_O, _A)),
    ("gm_map", (_O, _A)),
    ("Rprec", (_O, _A)),
    ("bpref", (_O, _A)),
    ("recip_rank", (_O, _A)),
    ("iprec_at_recall", (_O, _A)),
    ("P", (_O, _A)),
    ("relstring", (_A,)),
    ("recall", (_A,)),
    ("infAP", (_A,)),
    ("gm_bpref", (_A,)),
    ("Rprec_mult", (_A,)),
    ("utility", (_S, _A)),
    ("11pt_avg", (_A,)),
    ("binG", (_A,)),
    ("G", (_A,)),
    ("dcg", ()),
    ("ideal_dcg", ()),
    ("ndcg", (_A,)),
    ("ndcg_rel", (_A,)),
    ("Rndcg", (_A,)),
    ("ndcg_cut", (_A,)),
    ("map_cut", (_A,)),
    ("relative_P", (_A,)),
    ("success", (_A,)),
    ("set_P", (_S, _A)),
    ("set_relative_P", (_S, _A)),
    ("set_recall", (_S, _A)),
    ("set_map", (_S, _A)),
    ("set_F", (_S, _A)),
    ("num_nonrel_judged_ret", (_A,)),
    *(
        (f"prefs_{n}", ())
        for n in (
            "num_prefs_poss",
            "num_prefs_ful",
            "num_prefs_ful_ret",
            "simp",
            "pair",
            "avgjg",
            "avgjg_Rnonrel",
            "simp_ret",
            "pair_ret",
            "avgjg_ret",
            "avgjg_Rnonrel_ret",
            "simp_imp",
            "pair_imp",
            "avgjg_imp",
        )
    ),
    ("map_avgjg", ()),
    ("P_avgjg", ()),
    ("Rprec_mult_avgjg", ()),
    ("yaap", ()),
    ("rbp", (_A,)),
    ("rbp_resid", (_A,)),
    ("unj", (_A,)),
)

#: trec_eval's print order (the names of `TREC_TABLE`)
TREC_ORDER: tuple[str, ...] = tuple(name for name, _ in TREC_TABLE)

#: trec_eval 10's nicknames: the names of `TREC_TABLE` that each marks, in the print order
NICKNAMES: dict[str, tuple[str, ...]] = {
    nick: tuple(name for name, marks in TREC_TABLE if nick in marks) for nick in (_O, _S, _A)
}

#: special lines of trec_eval's output that are not measures
RUNID = "runid"

#: trec_eval's nicknames of measures read from other relevance formats (-R prefs, qrels_jg)
UNSUPPORTED_NICKNAMES = {
    "all_prefs": "preference measures, read from -R prefs or -R qrels_prefs",
    "qrels_jg": "judgment-group measures, read from -R qrels_jg",
}

#: trec_eval measures that no family implements, in words (the others: preference measures)
NOT_IMPLEMENTED = {
    "dcg": "unnormalised DCG",
    "ideal_dcg": "ideal DCG",
    "yaap": "yet another AP (experimental)",
}


def family_forms(cls: type[Measure]) -> list[TrecForm]:
    """The trec_eval names of the family ``cls`` as forms: its ``trec_eval_form`` (else its
    ``trec_eval`` name as a `Plain` form), then its ``trec_eval_cut`` name as a `Cuts` form."""
    names = cls.names
    out: list[TrecForm] = []
    if names.trec_eval_form is not None:
        out.append(names.trec_eval_form)
    elif names.trec_eval:
        out.append(Plain(names.trec_eval))
    if names.trec_eval_cut:
        out.append(Cuts(names.trec_eval_cut, names.trec_eval_cutoffs))
    return out


@lru_cache(maxsize=4)
def _forms(registered: tuple[type[Measure], ...]) -> dict[str, tuple[str, TrecForm]]:
    out: dict[str, tuple[str, TrecForm]] = {}
    for cls in dict.fromkeys(registered):  # each class once (aliases share it)
        for form in family_forms(cls):
            if form.name in out and out[form.name][0] != cls.family:
                raise ValueError(
                    f"trec_eval name {form.name!r} is declared by the families "
                    f"{out[form.name][0]} and {cls.family}"
                )
            out[form.name] = (cls.family, form)
    return out


def form_of(name: str) -> tuple[str, TrecForm] | None:
    """``(family, form)`` of trec_eval name ``name``, or None where no family declares it; imports
    the module that declares it (`tierank.measures.lazy`), not every family's."""
    if isinstance(REGISTRY, Registry):
        REGISTRY.find(name)
        found = _forms(tuple(REGISTRY.loaded())).get(name)
        if found is not None:
            return found
    return forms().get(name)


def forms() -> dict[str, tuple[str, TrecForm]]:
    """``{trec_eval name: (family, form)}`` of every registered family (derived from the registry;
    its classes are the cache key, so that a family registered later is seen)."""
    return _forms(tuple(REGISTRY.values()))


_TREC_TEXT = re.compile(r"^\s*([A-Za-z0-9_]+)(?:\.(.*?))?\s*$")


def trec_words(text: str) -> tuple[str, str | None] | None:
    """(name, parameter text or None) of a text written as trec_eval writes a measure (``NAME`` or
    ``NAME.PARAMS``: the name is what precedes the first ``.``, as ``mark_measure`` of trec_eval.c
    reads it), whether or not the name is trec_eval's; None for other texts."""
    m = _TREC_TEXT.match(text) if isinstance(text, str) else None
    return None if m is None else (m.group(1), m.group(2))


def split_text(text: str) -> tuple[str, str | None] | None:
    """`trec_words` of ``text`` where its name is in trec_eval's table or one of its nicknames,
    else None."""
    words = trec_words(text)
    if words is None or not (words[0] in TREC_ORDER or words[0] in NICKNAMES):
        return None
    return words


def is_trec(text: str) -> bool:
    """Whether ``text`` is written in trec_eval's syntax (a trec_eval measure name or nickname,
    optionally followed by ``.PARAMS``).

    >>> is_trec("P.10"), is_trec("P@10"), is_trec("official"), is_trec("ndcg_cut.5")
    (True, False, True, True)
    """
    return split_text(text) is not None


def trec_name(m: Measure) -> str | None:
    """The name trec_eval prints for measure ``m``, or None when trec_eval has no such measure
    (the first of its family's forms that prints it).

    >>> from tierank.measures import parse_measure
    >>> [trec_name(parse_measure(t)) for t in ("P@5", "AP@100", "R@10", "R", "RBP(p=0.9,gain='trec_eval')",
    ...                                        "RBP(p=0.9)", "P(rel=2)@5")]
    ['P_5', 'map_cut_100', 'recall_10', None, 'rbp', None, None]
    """
    cls = REGISTRY.get(m.family)
    for form in family_forms(cls) if cls is not None else ():
        name = form.printed(m)
        if name is not None:
            return name
    return None


@lru_cache(maxsize=1)
def _longest_first() -> tuple[str, ...]:
    return tuple(sorted(TREC_ORDER, key=len, reverse=True))


def trec_order(m: Measure) -> tuple:
    """Sort key of ``m`` in trec_eval's print order (measures trec_eval lacks sort last)."""
    name = trec_name(m)
    if name is None:
        return (len(TREC_ORDER),)
    for base in _longest_first():
        if name == base:
            return (TREC_ORDER.index(base),)
        if name.startswith(base + "_"):
            rest = name[len(base) + 1 :]
            try:
                return (TREC_ORDER.index(base), float(rest))
            except ValueError:
                return (TREC_ORDER.index(base), 0.0)
    return (len(TREC_ORDER),)


__all__ = [
    "TREC_TABLE",
    "TREC_ORDER",
    "NICKNAMES",
    "RUNID",
    "UNSUPPORTED_NICKNAMES",
    "NOT_IMPLEMENTED",
    "family_forms",
    "forms",
    "form_of",
    "split_text",
    "trec_words",
    "is_trec",
    "trec_name",
    "trec_order",
]
