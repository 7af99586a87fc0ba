"""Measure names across tools: the name tables the adapters derive from the families' declared
names ([`family_names`][tierank.measures.aliases.family_names]), and "did you mean" suggestions for
an unknown measure ([`suggest`][tierank.measures.aliases.suggest]: case, ir_measures and trec_eval
aliases, trec_eval's printed names, then close spellings).

>>> suggest("MRR@10")
['RR@10']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from ..errors import TierankInputError
from .base import REGISTRY, Measure, parse_measure, supported
from .trec_naming import NICKNAMES, forms, is_trec

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


def _available(text: str) -> Measure | None:
    try:
        return parse_measure(text)
    except TierankInputError:
        return None


def _all_names() -> list[str]:
    return sorted(set(supported()) | set(REGISTRY) | set(forms()) | set(NICKNAMES))


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
            known_forms = forms()
            trec = next((t for t in known_forms if t.lower() == low), None)
            if trec is not None and known_forms[trec][1].has_cutoffs:
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
            trec = next((t for t in (*forms(), *NICKNAMES) if t.lower() == low and t != base), None)
            if trec is not None and not rest:
                out.append(trec)
    if not out:
        import difflib  # (only an unknown name needs it)

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


__all__ = ["Tool", "family_names", "suggest"]
