"""Tie-break policies for the tie-oblivious value: [`TieBreak`][tierank.ties.policy.TieBreak] and the reordering of tie groups."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..errors import TierankInputError
from ..io.fingerprint import fingerprint, pair_fingerprint

_RANDOM = re.compile(r"^random(?::(\d+))?$")

POLICIES = ("trec_eval", "input", "docno", "random:SEED")

#: the kinds of tie-break policy (`TieBreak.kind`)
TieBreakKind = Literal["trec_eval", "input", "docno", "random"]
_FIXED: tuple[TieBreakKind, ...] = ("trec_eval", "input", "docno")


@dataclass(frozen=True)
class TieBreak:
    """A named tie-break policy for the tie-oblivious value.

    ``trec_eval``: score descending, then docno descending (bytewise), as trec_eval;
    ``input``: file order; ``docno``: docno ascending; ``random:SEED``: a
    pseudo-random order inside each tie group, a function of SEED, query and docid
    only (the same for any file order and any choice of measures).

    Examples
    --------
    >>> TieBreak.parse("random:7")
    TieBreak(kind='random', seed=7)
    >>> TieBreak.parse("random")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: tie-break 'random': random needs a seed: random:SEED (e.g. random:0), ...
    >>> str(TieBreak.parse("trec_eval"))
    'trec_eval'
    """

    kind: TieBreakKind
    seed: int | None = None

    @classmethod
    def parse(cls, text: str | TieBreak) -> TieBreak:
        if isinstance(text, TieBreak):
            return text
        t = str(text).strip().lower()
        for kind in _FIXED:
            if t == kind:
                return cls(kind)
        m = _RANDOM.match(t)
        if m and m.group(1) is None:
            raise TierankInputError(
                f"tie-break {text!r}: random needs a seed: random:SEED (e.g. random:0), so that "
                "the oblivious value can be reproduced"
            )
        if m:
            return cls("random", int(m.group(1)) % (1 << 64))
        raise TierankInputError(
            f"unknown tie-break policy {text!r}; accepted: {', '.join(POLICIES)}"
        )

    def __str__(self) -> str:
        return f"random:{self.seed}" if self.kind == "random" else self.kind


def break_ties(
    order: np.ndarray,
    gid: np.ndarray,
    tied: np.ndarray,
    docid: pa.Array,
    policy: TieBreak,
    qids: pa.Array,
    qi_s: np.ndarray,
) -> None:
    """Reorder, in place, the rows of each tie group (rows ``tied`` of ``order``) by the policy.

    ``random:SEED`` orders a group by a seeded fingerprint of (query, docid): a pure
    function of the seed and the documents, whatever the file order or the ranks
    the measures read (``qids``: the query id of each code of ``qi_s``).
    """
    if policy.kind == "input" or not len(tied):
        return  # the score order is stable: file order inside ties
    g = gid[tied]
    if policy.kind == "random":
        qfp = fingerprint(qids)
        seeded = pair_fingerprint(qfp, np.full(len(qfp), policy.seed, dtype=np.uint64))
        key = pair_fingerprint(
            seeded[qi_s[tied]], fingerprint(ac.take(docid, ac.array(order[tied])))
        )
        sub = np.lexsort((key, g))
    else:
        # bytewise docno order, as trec_eval's strcmp; arrow sorts strings bytewise
        t = pa.table({"g": ac.array(g), "d": ac.take(docid, ac.array(order[tied]))})
        direction = "descending" if policy.kind == "trec_eval" else "ascending"
        sub = ac.numpy(ac.sort_indices(t, sort_keys=[("g", "ascending"), ("d", direction)]))
    order[tied] = order[tied][sub]
