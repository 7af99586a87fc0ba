"""trec_eval's ``relstring``: the relevance values of the top N (default 10) as a string, per query.

Definition (trec_eval 10, ``m_relstring.c``): one character per retrieved document of the top
`\\min(N, n)`: the grade when it is 0..9, ``>`` above 9, ``-`` for a document not in the qrels
(trec_eval's RELVALUE_NONPOOL), ``.`` for a negative grade (``form_res_rels.c`` makes every
negative grade RELVALUE_UNJUDGED; C's ``<`` for other values is then unreachable).  trec_eval prints it for each query only (``relstring  <tab> qid <tab> '0-12'``),
never in the summary.

A string has no expectation, variance or mean over queries.  Over the tie orderings its tie-aware
form is the set of strings the orderings give; tierank reports the string of the **tie-oblivious**
ordering (the evaluation's tie-break), and with ``--stat min`` / ``--stat max`` those of the
pessimistic / optimistic arrangements (each tie group's grades ascending / descending: the orderings
at which the numeric measures' min and max are attained).  Its numeric statistics are NaN: only
``--format trec_eval`` prints it (with ``-q``); the other formats leave it out with a note.  In
Python the strings are `RelStats.texts` of ``result.stats[RelString@10]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..ties import Prepared
from .base import FamilyNames, Measure, Stats, register
from .trec_forms import Length

__all__ = ["RelString", "RelStats", "relchar"]


def relchar(grade: float) -> str:
    """trec_eval's character of one grade (NaN: not in the qrels).

    >>> "".join(relchar(g) for g in (0.0, 3.0, 12.0, float("nan"), -1.0, -2.0, -5.0))
    '03>-...'
    """
    if np.isnan(grade):
        return "-"
    g = int(grade)
    if g > 9:
        return ">"
    return chr(ord("0") + g) if g >= 0 else "."


def _chars(key: np.ndarray) -> np.ndarray:
    """[`relchar`][tierank.measures.relstring.relchar] of every sort key of `RelString.stats` (-1: not in the qrels, -1.5: a negative
    grade), as ASCII bytes.

    >>> _chars(np.array([0.0, 3.0, 12.0, -1.0, -1.5])).tobytes()
    b'03>-.'
    """
    g = np.clip(np.where(key >= 0, key, 0.0), 0, 10).astype(np.int64)
    out = np.where(g > 9, ord(">"), ord("0") + g)
    out = np.where(key == -1.0, ord("-"), np.where(key == -1.5, ord("."), out))
    return out.astype(np.uint8)


def _extremes(prep: Prepared, key: np.ndarray, read: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``key`` (per row) with each tie group's values sorted ascending (pessimistic) and descending
    (optimistic), as ``prep.sorted_in_groups`` sorts them, in the groups that start inside the
    ``read`` ranks of their query (the others hold no rank read) and whose values differ: one sort
    for both, the descending order each group's ascending one reversed (equal values are the same
    character whichever of them comes first)."""
    lo, hi = key.copy(), key.copy()
    if prep.n < 2:
        return lo, hi
    gid = prep.gid
    differ = (key[1:] != key[:-1]) & (gid[1:] == gid[:-1])
    mixed = np.zeros(len(prep.gsize), dtype=bool)
    mixed[gid[1:][differ]] = True
    mixed &= prep.gpos0 < read[prep.gq]
    t = np.flatnonzero(mixed[gid])
    if not len(t):
        return lo, hi
    g = gid[t]
    asc = key[t][np.lexsort((key[t], g))]
    lo[t] = asc
    # the row of each group's rows in reverse: local index i -> size - 1 - i
    hi[t] = asc[np.arange(len(t)) + prep.gstart[g + 1] + prep.gstart[g] - 1 - 2 * t]
    return lo, hi


@dataclass
class RelStats(Stats):
    """[`Stats`][tierank.measures.relstring.Stats] (all NaN) plus the strings per query of the ``policy`` (tie-oblivious),
    ``pessimistic`` and ``optimistic`` arrangements."""

    texts: dict[str, list[str]] = field(default_factory=dict)


@register
class RelString(Measure):
    """trec_eval's relstring: the grades of the top k as a string (printed by --format trec_eval only)."""

    family = "RelString"
    pretty = "relevance string"
    definition = "the grades of the top k as a string (one character per rank)"
    citation = "trec_eval 10.0, m_relstring.c (usnistgov/trec_eval)."
    names = FamilyNames(trec_eval="relstring", trec_eval_form=Length("relstring"), ir_measures=None)
    description = (
        "trec_eval's relstring: the grades of the top k as a string, tie-oblivious ordering "
        "(--format trec_eval -q only; not a number)"
    )
    cutoff_required = True
    bounds_refusal = "it is a string, not a number"
    #: its value is a string (`RelStats`), printed by --format trec_eval only
    string_valued: ClassVar[bool] = True

    def tensor_refusal(self) -> str | None:
        return "a string of grades has no expectation or variance over tie orderings"

    @property
    def additive(self) -> bool:
        """False: its strings are kept per query in memory, never merged from streamed blocks (a large
        run file with relstring is evaluated in memory)."""
        return False

    def stats(self, prep: Prepared) -> Stats:
        k = prep.cut(self.k)
        nan = np.full(prep.nq, np.nan)
        # sort keys that keep the character: not in the qrels -1 ('-'), a negative grade -1.5 ('.')
        key = np.where(np.isnan(prep.grade), -1.0, np.where(prep.grade < 0, -1.5, prep.grade))
        texts = {}
        # the ranks read of every query, as one byte string cut at the query boundaries
        length = np.diff(prep.qstart)
        read = np.minimum(length, k).astype(np.int64) if np.isfinite(k) else length.astype(np.int64)
        keep = prep.pos < read[prep.qi]
        ends = np.cumsum(read)
        starts = ends - read
        read_key = key[keep]
        codes = _chars(read_key).tobytes().decode("ascii")
        policy = [codes[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
        texts["policy"] = policy
        qread = prep.qi[keep]
        for which, k_ in zip(("pessimistic", "optimistic"), _extremes(prep, key, read)):
            k_ = k_[keep]
            # only the queries whose string the arrangement changes are cut out again
            moved = np.flatnonzero(np.bincount(qread[k_ != read_key], minlength=prep.nq))
            codes = _chars(k_).tobytes().decode("ascii")
            out = list(policy)
            for q, a, b in zip(moved.tolist(), starts[moved].tolist(), ends[moved].tolist()):
                out[q] = codes[a:b]
            texts[which] = out
        return RelStats(nan, nan.copy(), nan.copy(), nan.copy(), nan.copy(), texts=texts)
