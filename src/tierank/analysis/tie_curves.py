"""Tie structure curves: the sizes of a run's tie groups and their CCDF (the numbers that
[`tierank.report.plots.plot_tie_structure`][tierank.report.plots.plot_tie_structure] draws).

* [`tie_group_sizes`][tierank.analysis.tie_curves.tie_group_sizes]: the sizes of the run's tie groups of 2 or more documents;
* [`tie_ccdf`][tierank.analysis.tie_curves.tie_ccdf]: distinct sizes ``s`` and the number of groups of size >= ``s``;
* [`tie_structure`][tierank.analysis.tie_curves.tie_structure]: both, with the share of documents in ties, for each of several runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..io.convert import to_run


def tie_group_sizes(run) -> np.ndarray:
    """Sizes of the run's tie groups of 2 or more documents (equal query and score), int64.

    From the run's `tierank.ties.layout`; the order of the returned sizes is unspecified.

    Examples
    --------
    >>> sorted(tie_group_sizes({"q": {"a": 1.0, "b": 1.0, "c": 0.5}, "r": {"a": 1.0, "b": 2.0}}).tolist())
    [2]
    """
    from ..ties import layout

    return layout(to_run(run)).tied_sizes()


def tie_ccdf(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct group sizes ``s`` and the number of groups of size >= ``s`` (the plotted curve).

    Examples
    --------
    >>> [a.tolist() for a in tie_ccdf(np.array([2, 2, 5]))]
    [[2, 5], [3, 1]]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(sizes) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    vals, counts = np.unique(sizes, return_counts=True)
    return vals, np.cumsum(counts[::-1])[::-1]


@dataclass(frozen=True)
class TieCurve:
    """One run's tie structure: ``sizes`` of its tie groups, ``share`` of its documents in ties, and
    the CCDF (``s``: distinct sizes, ``count``: groups of size >= ``s``)."""

    sizes: np.ndarray
    share: float
    s: np.ndarray
    count: np.ndarray


def tie_structure(runs: Mapping) -> dict[str, TieCurve]:
    """``{name: TieCurve}`` of every run of ``runs`` (name -> run-like), in order.

    Examples
    --------
    >>> c = tie_structure({"A": {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}})["A"]
    >>> c.sizes.tolist(), round(c.share, 3), c.s.tolist(), c.count.tolist()
    ([2], 0.667, [2], [1])
    """
    out = {}
    for name, run in runs.items():
        r = to_run(run)
        sizes = tie_group_sizes(r)
        share = float(sizes.sum() / len(r)) if len(r) else 0.0
        s, c = tie_ccdf(sizes)
        out[name] = TieCurve(sizes, share, s, c)
    return out
