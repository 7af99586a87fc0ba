"""Tie groups and total orders over a whole run, vectorized.

`layout` is the one place where queries are coded and tie groups found: a
[`RunLayout`][tierank.ties.RunLayout] holds the query codes, the score order (query ascending, score
descending, file order inside ties), the tie groups and a typed
[`TieSummary`][tierank.ties.TieSummary].  Evaluation, tie prevalence, rank bands, score formats, the
tie-structure figure and the rerank protocol all read it.

`prepare` joins a run with its qrels and lays every evaluated query's
documents out in one flat array, sorted by the one explicit total order

    (query id ascending, score descending, tie-break policy)

so that each query is a contiguous segment and each *tie group* (documents of a
query whose parsed scores are equal) a contiguous sub-segment.  Tie groups do
not depend on the policy; only the order inside a group does.  Measures then
read three arrangements of the same positions:

* ``policy``: the tie-oblivious order (trec_eval, input, docno, random:SEED);
* ``optimistic``: inside every tie group, higher grades first;
* ``pessimistic``: inside every tie group, lower grades first.

Every measure tierank supports is monotone under moving a more relevant
document ahead of a less relevant one, and groups are independent, so the
optimistic and pessimistic arrangements attain the exact max and min.

The package, one job per module (everything public is re-exported here):

* `tierank.ties.policy`: the tie-break policies ([`TieBreak`][tierank.ties.TieBreak]);
* `tierank.ties.summary`: the tie statistics ([`TieSummary`][tierank.ties.TieSummary], with [`TieSummary.combine`][tierank.ties.TieSummary.combine]);
* `tierank.ties.layout`: query codes, score order and tie groups ([`RunLayout`][tierank.ties.RunLayout], `layout`);
* `tierank.ties.prepare`: the measure input, a run joined with its qrels ([`Prepared`][tierank.ties.Prepared], `prepare`, which reads the evaluation's settings through `PrepareSettings`).
"""

from __future__ import annotations

from .layout import RunLayout, layout, running_count, segment_offsets
from .policy import POLICIES, TieBreak, TieBreakKind, break_ties
from .prepare import (
    ARRANGEMENTS,
    DOC_KINDS,
    DocKind,
    HasDepth,
    Prepared,
    PrepareSettings,
    Which,
    prepare,
)
from .summary import TieSummary

__all__ = [
    "POLICIES",
    "TieBreak",
    "TieBreakKind",
    "TieSummary",
    "RunLayout",
    "layout",
    "Prepared",
    "prepare",
    "DocKind",
    "Which",
    "DOC_KINDS",
    "ARRANGEMENTS",
    "HasDepth",
    "PrepareSettings",
    "segment_offsets",
    "running_count",
    "break_ties",
]
