"""How a sampled value is marked in the human tables (the terminal table, Markdown, LaTeX): one marker
after the measure's name, defined once, and the footnote that says what it means.  The machine formats
say it in fields (tsv/csv: ``method`` and ``se`` columns; json/jsonl: ``method``, ``samples``, ``seed``,
``se``); trec_eval's layout, whose three columns are its contract, says it on stderr.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import EvalResult

#: the marker, after the measure's name, of a row whose statistics are partly estimated from random tie
#: orderings, in the human tables (the terminal table, Markdown, LaTeX); `sampled_note` says what it means
SAMPLED_MARK = "*"


def sampled_measures(results: Iterable[EvalResult]) -> tuple[list, int | None, int | None]:
    """The measures of ``results`` with a sampled query, and the samples and seed of the draws."""
    out, samples, seed = [], None, None
    for r in results:
        for m in r.measures:
            s = r.stats[m]
            if s.method != "exact" and s.sampled_queries().any():
                if m not in out:
                    out.append(m)
                samples, seed = s.samples, s.seed
    return out, samples, seed


def sampled_note(results: Iterable[EvalResult], mark: str = SAMPLED_MARK) -> str | None:
    """The footnote of `SAMPLED_MARK` (None when every value of ``results`` is exact).

    >>> import tierank
    >>> res = tierank.evaluate({"q": {f"d{i}": 1 for i in range(10)}}, {"q": {f"d{i}": 0.5 for i in range(20)}},
    ...                        ["GMAP"], samples=100)
    >>> print(sampled_note([res]))
    * sampled: expected, std and bias estimated from 100 random tie orderings per query (seed 0) where a query has more than 5,040 orderings; the other statistics exact (--format jsonl adds the standard error, se, of each estimate)
    """
    from ..measures.sampling import ENUMERATE

    measures, samples, seed = sampled_measures(results)
    if not measures:
        return None
    extremes = [str(m) for m in measures if getattr(m, "sampled_extremes", False)]
    also = (
        f"; min, max and range of {', '.join(extremes)} are the extremes of the orderings drawn"
        if extremes
        else ""
    )
    exact_mean = [str(m) for m in measures if getattr(m, "expectation_exact", False)]
    if exact_mean:
        also += f"; the expected value of {', '.join(exact_mean)} and the bias are exact (only the std is estimated)"
    return (
        f"{mark} sampled: expected, std and bias estimated from {samples} random tie orderings per "
        f"query (seed {seed}) where a query has more than {ENUMERATE:,} orderings{also}; the other "
        "statistics exact (--format jsonl adds the standard error, se, of each estimate)"
    )


def trec_eval_note(results: Iterable[EvalResult], stat: str, name=str) -> str | None:
    """What ``--format trec_eval --stat STAT`` says on stderr when some value it prints is an estimate
    (``name``: the printed name of a measure); None when every one is exact (``oblivious`` always is).

    >>> import tierank
    >>> res = tierank.evaluate({"q": {f"d{i}": 1 for i in range(10)}}, {"q": {f"d{i}": 0.5 for i in range(20)}},
    ...                        ["GMAP", "P@5"], samples=100)
    >>> print(trec_eval_note([res], "expected"))
    --stat expected of GMAP: estimated from 100 random tie orderings per query (seed 0) where a query has more than 5,040 orderings (--format jsonl adds the standard error, se, of each estimate)
    >>> trec_eval_note([res], "min") is None
    True
    """
    from ..measures.sampling import ENUMERATE

    measures, samples, seed = sampled_measures(results)
    if stat in ("min", "max", "range"):
        measures = [m for m in measures if getattr(m, "sampled_extremes", False)]
    elif stat in ("expected", "bias"):
        measures = [m for m in measures if not getattr(m, "expectation_exact", False)]
    elif stat != "std":
        measures = []
    if not measures:
        return None
    return (
        f"--stat {stat} of {', '.join(name(m) for m in measures)}: estimated from {samples} random "
        f"tie orderings per query (seed {seed}) where a query has more than {ENUMERATE:,} orderings "
        "(--format jsonl adds the standard error, se, of each estimate)"
    )
