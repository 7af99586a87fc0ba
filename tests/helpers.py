"""Shared test helpers.

Two ways to run the command line:

* :func:`invoke` runs ``tierank ARGS...`` in this process (typer's runner: stdout, stderr and the exit
  status apart, as a :class:`subprocess.CompletedProcess`).  Use it wherever the process is not
  the point: it saves an interpreter start and tierank's import (about a second) per call.
* :func:`run_cli` runs it as users do, in a subprocess.  Keep it for what only a real process shows:
  signals, pipes, SIGKILL, the exit status of the process itself, console scripts, worker
  processes, what an interpreter without an optional package does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from contextlib import contextmanager

PROG = "python -m tierank.cli"  # the program name click shows for ``python -m tierank.cli``


def run_cli(*args, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``tierank ARGS...`` as users do (a subprocess); assert success unless ``check`` is False."""
    p = subprocess.run(
        [sys.executable, "-m", "tierank.cli", *map(str, args)], capture_output=True, text=True
    )
    if check:
        assert p.returncode == 0, p.stderr
    return p


@contextmanager
def _cwd(path: str | os.PathLike | None):
    if path is None:
        yield
        return
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def invoke(
    *args,
    check: bool = True,
    input: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: str | os.PathLike | None = None,
) -> subprocess.CompletedProcess:
    """Run ``tierank ARGS...`` in this process; assert success unless ``check`` is False.

    ``input`` is standard input, ``env`` variables set (None: unset) for the call, ``cwd`` the
    working directory for the call.  An exception other than the command's exit is raised here,
    with its traceback (in a subprocess it would be exit 1 and a traceback on stderr).
    """
    from typer.testing import CliRunner

    from tierank.cli import app

    with _cwd(cwd):
        r = CliRunner().invoke(
            app, [str(a) for a in args], input=input, env=dict(env) if env else None, prog_name=PROG
        )
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    p = subprocess.CompletedProcess(["tierank", *map(str, args)], r.exit_code, r.stdout, r.stderr)
    if check:
        assert p.returncode == 0, p.stderr
    return p


# Hypothesis example counts: one rule for every property test.  A test states the count it runs in
# the full tier (``pytest --full``, CI); the default tier runs a share of it, so that README's test
# command stays fast while every property is still exercised.  Set by tests/conftest.py.
FULL_TIER = os.environ.get("TIERANK_TEST_TIER") == "full"
DEFAULT_TIER_SHARE = 0.1
DEFAULT_TIER_MIN = 8


def examples(full: int) -> int:
    """The ``max_examples`` of a property test whose full-tier count is ``full``.

    >>> examples(400) in (400, 40)
    True
    """
    if FULL_TIER or os.environ.get("TIERANK_TEST_TIER") == "full":
        return full
    return min(full, max(DEFAULT_TIER_MIN, round(full * DEFAULT_TIER_SHARE)))


def distinct_orderings(values) -> list[list]:
    """Every distinct ordering of the multiset ``values``, each once (equally likely under a uniformly
    random ordering of the documents: documents of equal value are interchangeable): the brute-force
    oracle of the closed forms over tie orderings."""
    from collections import Counter

    counts = Counter(values)
    out: list[list] = []

    def rec(prefix: list) -> None:
        if len(prefix) == len(values):
            out.append(list(prefix))
            return
        for k in sorted(counts):
            if counts[k]:
                counts[k] -= 1
                rec([*prefix, k])
                counts[k] += 1

    rec([])
    return out
