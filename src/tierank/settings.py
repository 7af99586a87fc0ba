"""The settings of an evaluation: [`EvalSettings`][tierank.settings.EvalSettings], one frozen value, validated once.

Each setting's constraint is data (`RULES`, in the manner of scikit-learn's
``validate_params``): a rule names the setting and returns the problem with its value, or None.
Every problem of a set of settings is reported together in one [`TierankInputError`][tierank.settings.TierankInputError], with
the messages the engine has always given; the rules between settings are `JOINT`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .errors import Problem, TierankInputError
from .measures.linear import REL
from .ties import TieBreak

#: conventions for unjudged documents
UNJUDGED = ("nonrelevant", "bounds", "condensed")

#: a rule: the problem with a setting's value, in words, or None
Rule = Callable[[Any], "str | None"]


def _integer(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def _flag(name: str) -> Rule:
    return lambda v: (
        None if isinstance(v, (bool, np.bool_)) else f"{name} must be True or False, got {v!r}"
    )


def _at_least(low: int, text: str, optional: bool = False) -> Rule:
    def rule(v: Any) -> str | None:
        if optional and v is None:
            return None
        return None if _integer(v) and v >= low else text.format(v)

    return rule


def _one_of(choices: tuple[str, ...], text: str) -> Rule:
    return lambda v: None if isinstance(v, str) and v in choices else text.format(v)


#: the constraint of each setting (the tie-break policy is parsed by `TieBreak.parse`, which says why not)
RULES: dict[str, Rule] = {
    "rel": lambda v: (
        f"rel must be a number, got {v!r}"
        if v is None or isinstance(v, (bool, str))
        else REL.check(v)
    ),
    "complete": _flag("complete"),
    "candidates_only": _flag("candidates_only"),
    "unjudged": _one_of(
        UNJUDGED, f"unknown unjudged convention {{!r}}; accepted: {', '.join(UNJUDGED)}"
    ),
    "judged_only": _flag("judged_only"),
    "max_depth": _at_least(1, "max_depth must be a positive integer, got {!r}", optional=True),
    "samples": _at_least(2, "samples must be an integer of at least 2, got {!r}"),
    "seed": _at_least(0, "seed must be an integer >= 0, got {!r}"),
    "exact_limit": _at_least(1, "exact_limit must be a positive integer, got {!r}"),
}

#: the constraints between settings: (the settings read, the rule over them)
JOINT: tuple[tuple[tuple[str, ...], Callable[..., str | None]], ...] = (
    (
        ("judged_only", "unjudged"),
        lambda judged_only, unjudged: (
            "-J/--judged-only drops unjudged documents: it cannot be combined with "
            "--unjudged bounds (judged_only=True, unjudged='bounds')"
            if judged_only and unjudged == "bounds"
            else None
        ),
    ),
)


@dataclass(frozen=True)
class EvalSettings:
    """How runs are evaluated against qrels: every setting but the measures.

    Attributes
    ----------
    tie_break
        Order used for the tie-oblivious value: ``"trec_eval"`` (docno descending, trec_eval's own),
        ``"input"`` (file order), ``"docno"`` (ascending), or ``"random:SEED"``; kept parsed (a
        [`tierank.ties.TieBreak`][tierank.ties.TieBreak]).
    rel
        Minimum grade counted relevant by binary measures (trec_eval ``-l``); an integer in
        ``[-2**53, 2**53]``, the range of a measure's own ``rel`` parameter.
    complete
        Average over every qrels query; queries absent from the run score 0 (``trec_eval -c``).
    candidates_only
        Count relevant documents and the ideal DCG only among judged documents present in the run
        (reranking convention of MTEB and the ``trm`` library).
    unjudged
        ``"nonrelevant"`` (trec_eval's convention), ``"bounds"`` (also report, per query, a lower and
        an upper bound over tie orderings *and* every relevance the unjudged retrieved documents could
        have, attained; RBP adds Moffat & Zobel's residual; refused for AP, nDCG and Rprec, which no
        such assumption bounds), or ``"condensed"`` (drop unjudged documents first, Sakai; ``trec_eval -J``).
    judged_only
        trec_eval's ``-J``: ``unjudged="condensed"`` with trec_eval's conventions: a negative qrels
        grade also marks a document unjudged, and a query of the run whose documents are all unjudged
        is still evaluated (as a query that retrieved nothing).  It sets ``unjudged`` to ``"condensed"``.
    max_depth
        Read at most this many ranks per query (``trec_eval -M``): every measure's cutoff is capped by
        it, and a tie group straddling it is a tie straddling a cutoff.
    samples, seed
        Random tie orderings drawn, and their seed, by the measures that have no exact method for
        their expectation (their records say ``method: sampled`` with a standard error ``se``).
    exact_limit
        The most distinct tie orderings of one query that the measures without a closed form (the
        intent-aware family) enumerate exactly; past it they draw ``samples`` orderings.

    Examples
    --------
    Every problem is reported at once, with its reason:

    >>> EvalSettings(rel=1, max_depth=0, samples=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: max_depth must be a positive integer, got 0
    samples must be an integer of at least 2, got 1
    >>> EvalSettings(judged_only=True).unjudged
    'condensed'
    """

    tie_break: TieBreak | str = "trec_eval"
    rel: int = 1
    complete: bool = False
    candidates_only: bool = False
    unjudged: str = "nonrelevant"
    judged_only: bool = False
    max_depth: int | None = None
    samples: int = 1000
    seed: int = 0
    exact_limit: int = 10000

    def __post_init__(self) -> None:
        problems = []
        try:
            object.__setattr__(self, "tie_break", TieBreak.parse(self.tie_break))
        except TierankInputError as e:
            problems.extend(e.problems)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        reasons = [rule(values[name]) for name, rule in RULES.items()]
        reasons += [rule(*(values[n] for n in names)) for names, rule in JOINT]
        problems += [Problem("", None, r) for r in reasons if r]
        if problems:
            raise TierankInputError(problems)
        # numpy integers as Python's
        for name in ("max_depth", "samples", "seed", "rel", "exact_limit"):
            if _integer(values[name]):
                object.__setattr__(self, name, int(values[name]))
        for name in ("complete", "candidates_only", "judged_only"):
            object.__setattr__(self, name, bool(values[name]))
        if self.judged_only:
            object.__setattr__(self, "unjudged", "condensed")

    @classmethod
    def of(cls, settings: EvalSettings | None = None, **options: Any) -> EvalSettings:
        """``settings`` with ``options`` changed (validated again), or new settings from ``options``.

        >>> EvalSettings.of(EvalSettings(rel=2), complete=True).rel
        2
        """
        if settings is None:
            return cls(**options)
        return replace(settings, **options) if options else settings

    @property
    def policy(self) -> TieBreak:
        """The tie-break policy, parsed."""
        assert isinstance(self.tie_break, TieBreak)
        return self.tie_break

    @property
    def depth(self) -> float:
        """The ranks read at most: `max_depth`, or infinity."""
        return float("inf") if self.max_depth is None else self.max_depth

    def record(self, run: str, qrels: str) -> dict[str, Any]:
        """The ``settings`` of a result evaluated under these settings (keys in their stable order)."""
        out: dict[str, Any] = {
            "tie_break": str(self.tie_break),
            "rel": self.rel,
            "complete": self.complete,
            "candidates_only": self.candidates_only,
            "unjudged": self.unjudged,
            "run": run,
            "qrels": qrels,
        }
        if self.judged_only:
            out["judged_only"] = True
        if self.max_depth is not None:
            out["max_depth"] = self.max_depth
        if self.exact_limit != EvalSettings.exact_limit:
            out["exact_limit"] = self.exact_limit
        return out
