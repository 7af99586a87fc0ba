"""The tie statistics of a run: [`TieSummary`][tierank.ties.summary.TieSummary], tierank's one vocabulary for tie counts.

Evaluation results (`tierank.EvalResult.ties`), streaming (batches combined with
[`TieSummary.combine`][tierank.ties.summary.TieSummary.combine]), tie prevalence ([`tierank.analysis.prevalence.RunTies`][tierank.analysis.prevalence.RunTies]) and
Table 1 of the HPS protocol (`tierank.hps.table.tie_stats`) all hold a [`TieSummary`][tierank.ties.summary.TieSummary]
and name its counts with the views below, so their outputs keep their own keys:

* [`TieSummary.to_dict`][tierank.ties.summary.TieSummary.to_dict]: ``docs, queries, queries_with_ties, groups, tied_docs, largest, share``
  (``EvalResult.ties``, the json output);
* [`TieSummary.prevalence_fields`][tierank.ties.summary.TieSummary.prevalence_fields]: ``queries, docs, queries_with_ties, tie_groups, docs_in_ties,
  docs_tied_with_predecessor`` (``tierank ties``);
* [`TieSummary.table1_fields`][tierank.ties.summary.TieSummary.table1_fields]: ``candidates, tied, tied_share, tie_groups, mean_group, max_group``
  (the HPS protocol's Table 1).

A [`TieSummary`][tierank.ties.summary.TieSummary] is also a read-only mapping with the keys of [`to_dict`][tierank.ties.summary.TieSummary.to_dict]
(``summary["share"]``, ``dict(summary)``), and equals a dict with those items.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, astuple, dataclass, fields
from typing import Any

#: the keys of `TieSummary.to_dict` (and of ``EvalResult.ties``), in order
KEYS = ("docs", "queries", "queries_with_ties", "groups", "tied_docs", "largest", "share")


@dataclass(frozen=True)
class TieSummary(Mapping[str, Any]):
    """Tie statistics of a run: how many documents share their score with another one of their query.

    Attributes
    ----------
    docs, queries : int
        Documents (rows) and queries laid out.
    queries_with_ties : int
        Queries with at least one tie group.
    groups : int
        Tie groups of 2 or more documents (equal query and score).
    tied_docs : int
        Documents in those groups.
    largest : int
        Size of the largest group, counting every document as a group of its own:
        1 when nothing ties, 0 for no documents (see [`largest_tie_group`][tierank.ties.summary.TieSummary.largest_tie_group]).
    share : float
        ``tied_docs / docs`` (0.0 for no documents).

    Examples
    --------
    >>> from tierank import to_run
    >>> from tierank.ties import layout
    >>> t = layout(to_run({"q": {"a": 2.0, "b": 1.0, "c": 1.0, "d": 1.0}, "r": {"x": 1.0}})).summary
    >>> t
    TieSummary(docs=5, queries=2, queries_with_ties=1, groups=1, tied_docs=3, largest=3, share=0.6)
    >>> t.tied_with_predecessor, t.mean_group, t.largest_tie_group
    (2, 3.0, 3)
    >>> t["share"], t == t.to_dict()
    (0.6, True)
    >>> print(t)
    {'docs': 5, 'queries': 2, 'queries_with_ties': 1, 'groups': 1, 'tied_docs': 3, 'largest': 3, 'share': 0.6}
    """

    docs: int = 0
    queries: int = 0
    queries_with_ties: int = 0
    groups: int = 0
    tied_docs: int = 0
    largest: int = 0
    share: float = 0.0

    @classmethod
    def of(
        cls,
        docs: int,
        queries: int,
        queries_with_ties: int,
        groups: int,
        tied_docs: int,
        largest: int,
    ) -> TieSummary:
        """The summary of these counts, with ``share = tied_docs / docs`` (0.0 for no documents)."""
        return cls(
            docs=docs,
            queries=queries,
            queries_with_ties=queries_with_ties,
            groups=groups,
            tied_docs=tied_docs,
            largest=largest,
            share=tied_docs / docs if docs else 0.0,
        )

    @classmethod
    def from_mapping(cls, d: Mapping[str, Any]) -> TieSummary:
        """A summary from the keys of [`to_dict`][tierank.ties.summary.TieSummary.to_dict] (a [`TieSummary`][tierank.ties.summary.TieSummary] is returned as is)."""
        if isinstance(d, TieSummary):
            return d
        return cls(**{k: d[k] for k in KEYS})

    @classmethod
    def combine(cls, parts: Iterable[TieSummary | Mapping[str, Any]]) -> TieSummary:
        """The summary of disjoint parts of a run (different queries, or different runs): counts
        add up, ``largest`` is the largest of the parts', ``share`` is recomputed.

        >>> a = TieSummary.of(docs=4, queries=2, queries_with_ties=1, groups=1, tied_docs=2, largest=2)
        >>> b = TieSummary.of(docs=6, queries=1, queries_with_ties=1, groups=2, tied_docs=5, largest=3)
        >>> TieSummary.combine([a, b])
        TieSummary(docs=10, queries=3, queries_with_ties=2, groups=3, tied_docs=7, largest=3, share=0.7)
        >>> TieSummary.combine([]) == TieSummary()
        True
        """
        t = [cls.from_mapping(p) for p in parts]
        return cls.of(
            docs=sum(x.docs for x in t),
            queries=sum(x.queries for x in t),
            queries_with_ties=sum(x.queries_with_ties for x in t),
            groups=sum(x.groups for x in t),
            tied_docs=sum(x.tied_docs for x in t),
            largest=max((x.largest for x in t), default=0),
        )

    def __add__(self, other: TieSummary) -> TieSummary:
        if not isinstance(other, TieSummary):
            return NotImplemented
        return TieSummary.combine((self, other))

    @property
    def tied_with_predecessor(self) -> int:
        """Tied documents that are not the first of their group (the first paper's "tied" count)."""
        return self.tied_docs - self.groups

    @property
    def mean_group(self) -> float:
        """Mean size of the tie groups (0.0 without ties)."""
        return self.tied_docs / self.groups if self.groups else 0.0

    @property
    def largest_tie_group(self) -> int:
        """Size of the largest tie group, 0 without ties."""
        return self.largest if self.groups else 0

    def to_dict(self) -> dict[str, Any]:
        """``docs, queries, queries_with_ties, groups, tied_docs, largest, share`` (``EvalResult.ties``)."""
        return asdict(self)

    def prevalence_fields(self) -> dict[str, int]:
        """The counts under the names of tie prevalence ([`tierank.analysis.prevalence.RunTies`][tierank.analysis.prevalence.RunTies]):
        ``queries, docs, queries_with_ties, tie_groups, docs_in_ties, docs_tied_with_predecessor``."""
        return {
            "queries": self.queries,
            "docs": self.docs,
            "queries_with_ties": self.queries_with_ties,
            "tie_groups": self.groups,
            "docs_in_ties": self.tied_docs,
            "docs_tied_with_predecessor": self.tied_with_predecessor,
        }

    def table1_fields(self) -> dict[str, Any]:
        """The counts under the names of the HPS protocol's Table 1 (`tierank.hps.table.tie_stats`):
        ``candidates, tied, tied_share, tie_groups, mean_group, max_group``."""
        return {
            "candidates": self.docs,
            "tied": self.tied_docs,
            "tied_share": self.share,
            "tie_groups": self.groups,
            "mean_group": self.mean_group,
            "max_group": self.largest_tie_group,
        }

    def __str__(self) -> str:
        """As the dict of [`to_dict`][tierank.ties.summary.TieSummary.to_dict] (what ``print(result.ties)`` showed when it was a dict)."""
        return str(self.to_dict())

    # read-only mapping over the keys of to_dict (EvalResult.ties was a dict)
    def __getitem__(self, key: str) -> Any:
        if key not in KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(KEYS)

    def __len__(self) -> int:
        return len(KEYS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TieSummary):
            return astuple(self) == astuple(other)
        if isinstance(other, Mapping):
            return self.to_dict() == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, f.name) for f in fields(self)))
