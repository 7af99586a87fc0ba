"""Errors raised for bad input.

Every problem with user input is reported as a :class:`TierankInputError`
whose message says *what* was wrong, *where* (``file:line`` when there is a
file) and, where useful, what is accepted.  The CLI turns it into one line per
problem on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One located problem in an input."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        if not self.source:
            return self.reason
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        return f"{where}: {self.reason}"


class TierankError(Exception):
    """Base class of tierank's own errors."""


class TierankInputError(TierankError, ValueError):
    """Bad user input: malformed files, bad scores, unknown measures, ...

    Examples
    --------
    >>> err = TierankInputError([Problem("run.txt", 3, "score 'abc' is not a number")])
    >>> str(err)
    "run.txt:3: score 'abc' is not a number"
    """

    def __init__(self, problems: list[Problem] | str):
        if isinstance(problems, str):
            problems = [Problem("", None, problems)]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


# Typed refusals that callers act on (decided by type, never by the message's text).  Each is a
# TierankInputError with its usual message, so an ``except TierankInputError`` and the command
# line (one line per problem, exit 2) treat it as before.


class NothingToEvaluate(TierankInputError):
    """No query of the run is judged in the qrels: there is nothing to evaluate.

    >>> isinstance(NothingToEvaluate("no query of run is judged in qrels: nothing to evaluate"), ValueError)
    True
    """


class NoJudgedDocuments(TierankInputError):
    """Dropping unjudged documents (``--condensed``, ``judged_only``) left no document of the run."""


class EmptyRun(TierankInputError):
    """A run with no result line (nothing, or comment lines only)."""


class UnknownMeasure(TierankInputError):
    """A measure name that no registered family knows."""


def shorten(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for an error message, saying how long it was.

    Error lines echo the offending token; a 2-million-character document id
    must not make a 2 MB error line.

    Examples
    --------
    >>> shorten("d1")
    'd1'
    >>> shorten("x" * 2_000_000, limit=3)
    'xxx…(2,000,000 chars)'
    """
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text):,} chars)"


def quote(token: str, limit: int = 80) -> str:
    """``repr`` of :func:`shorten` (control characters escaped), for echoing a token.

    >>> quote("caf\\x00" + "e" * 100, limit=5)
    "'caf\\\\x00e…(104 chars)'"
    """
    return repr(shorten(token, limit))
