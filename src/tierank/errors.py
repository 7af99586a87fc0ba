"""Errors raised for bad input.

Every problem with user input is reported as a [`TierankInputError`][tierank.errors.TierankInputError]
whose message says *what* was wrong, *where* (``file:line`` when there is a
file) and, where useful, what is accepted.  The CLI turns it into one line per
problem on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

#: the located problems an input error lists, at most (then how many more: `More`)
MAX_PROBLEMS = 20


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

    def shifted(self, lines: int) -> Problem:
        """The problem ``lines`` lines further down (a block's problem placed in its file)."""
        return self if self.line is None or not lines else replace(self, line=self.line + lines)


@dataclass(frozen=True)
class Repeated(Problem):
    """A line that repeats an earlier one (``first``): its reason is ``what`` and ``(first at line N)``,
    built from the data, so that moving it moves both lines.

    >>> p = Repeated.of("run", 3, "document 'd' appears twice in query 'q'", 1)
    >>> str(p.shifted(10))
    "run:13: document 'd' appears twice in query 'q' (first at line 11)"
    """

    what: str = ""
    first: int = 0

    @classmethod
    def of(cls, source: str, line: int, what: str, first: int) -> Repeated:
        return cls(source, line, f"{what} (first at line {first})", what, first)

    def shifted(self, lines: int) -> Problem:
        assert self.line is not None
        return (
            self
            if not lines
            else Repeated.of(self.source, self.line + lines, self.what, self.first + lines)
        )


@dataclass(frozen=True)
class More(Problem):
    """How many problems were left out after the first ones (``... and N more problems``).

    >>> str(More.of("run", 4))
    'run: ... and 4 more problems'
    """

    count: int = 0

    @classmethod
    def of(cls, source: str, count: int) -> More:
        return cls(source, None, f"... and {count} more problems", count)


class ProblemLog:
    """Located problems gathered in file order, reported as one error: the first ``limit`` kept, the
    others counted (a [`More`][tierank.errors.More] counts as its ``count``: the logs of a file's blocks add up).

    >>> log = ProblemLog("run", limit=2)
    >>> log.add([Problem("run", 3, "bad")] * 2 + [More.of("run", 4)])
    >>> log(900, "worse")
    >>> [str(p) for p in log.error().problems]
    ['run:3: bad', 'run:3: bad', 'run: ... and 5 more problems']
    """

    def __init__(self, source: str, limit: int = MAX_PROBLEMS):
        self.source, self.limit, self.total = source, limit, 0
        self.items: list[Problem] = []

    def __call__(self, line: int, reason: str) -> None:
        self.add([Problem(self.source, line, reason)])

    def repeated(self, line: int, what: str, first: int) -> None:
        """``what`` at ``line`` repeats line ``first`` ([`Repeated`][tierank.errors.Repeated])."""
        self.add([Repeated.of(self.source, line, what, first)])

    def add(self, problems) -> None:
        for p in problems:
            if isinstance(p, More):
                self.total += p.count
                continue
            self.total += 1
            if len(self.items) < self.limit:
                self.items.append(p)

    def __bool__(self) -> bool:
        return self.total > 0

    def error(self) -> TierankInputError:
        more = self.total - len(self.items)
        return TierankInputError(self.items + ([More.of(self.source, more)] if more else []))

    def raise_if_any(self) -> None:
        if self:
            raise self.error()


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
    """``repr`` of [`shorten`][tierank.errors.shorten] (control characters escaped), for echoing a token.

    >>> quote("caf\\x00" + "e" * 100, limit=5)
    "'caf\\\\x00e…(104 chars)'"
    """
    return repr(shorten(token, limit))
