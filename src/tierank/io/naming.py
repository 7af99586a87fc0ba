"""How runs given as paths are named: one rule for every command and for `tierank.evaluate_many`.

A run is named by the shortest suffix of its path (whole path components) that no other run's path
ends with: ``a/bm25.run`` and ``b/dense.run`` are ``bm25.run`` and ``dense.run``; ``sub/a.run`` and
``a.run`` are ``sub/a.run`` and ``a.run``.  So two runs never share a name and no run is dropped for a
name clash; the same file given twice is an error.

Examples
--------
>>> run_names(["a/bm25.run", "b/dense.run"])
['bm25.run', 'dense.run']
>>> run_names(["sub/a.run", "a.run", "b.run"])
['sub/a.run', 'a.run', 'b.run']
>>> run_names(["x/2024/a.run", "y/2024/a.run"])
['x/2024/a.run', 'y/2024/a.run']
>>> run_names(["a.run", "./a.run"])
Traceback (most recent call last):
...
tierank.errors.TierankInputError: a.run: given twice
"""

from __future__ import annotations

import os
from pathlib import PurePath

from ..errors import Problem, TierankInputError


def _parts(p) -> tuple[str, ...]:
    text = os.fspath(p)
    if "://" in text:  # a filesystem URI: its path components after the scheme
        scheme, rest = text.split("://", 1)
        return (f"{scheme}://", *(x for x in rest.split("/") if x))
    return PurePath(text).parts


def _join(parts: tuple[str, ...]) -> str:
    if parts and parts[0].endswith("://"):
        return parts[0] + "/".join(parts[1:])
    return PurePath(*parts).as_posix()


def run_names(paths) -> list[str]:
    """The name of each path of ``paths``, in order: its shortest distinguishing path suffix.

    Paths are compared as written (``./a.run`` is ``a.run``; symbolic links are not followed).
    Raises [`TierankInputError`][tierank.errors.TierankInputError] when two paths are the same file (one
    problem per repeated path).
    """
    parts = [_parts(p) for p in paths]
    problems, seen = [], set()
    for p, ps in zip(paths, parts):
        key = _resolved(p, ps)
        if key in seen:
            problems.append(f"{_join(ps) or os.fspath(p)}: given twice")
        seen.add(key)
    if problems:
        raise TierankInputError([Problem("", None, p) for p in problems])
    names = []
    for i, ps in enumerate(parts):
        for k in range(1, len(ps) + 1):
            tail = ps[-k:]
            if not any(j != i and other[-k:] == tail for j, other in enumerate(parts)):
                break
        names.append(_join(ps[-k:]) if ps else os.fspath(paths[i]))
    return names


def name_runs(runs) -> dict[str, object]:
    """``{name: run}``: a mapping as given, paths named by `run_names` (the shortest
    distinguishing path suffix; the same file twice is an error).

    >>> list(name_runs(["a/bm25.txt", "b/dense.txt"]))
    ['bm25.txt', 'dense.txt']
    """
    if isinstance(runs, dict):
        return dict(runs)
    runs = list(runs)
    return dict(zip(run_names(runs), runs))


def _resolved(p, ps: tuple[str, ...]):
    """What identifies the file: its absolute normalised path (URIs as written)."""
    if ps and ps[0].endswith("://"):
        return ps
    return os.path.normcase(os.path.abspath(os.fspath(p)))


def short_name(path) -> str:
    """The name of a run given alone: its file name (``runs/bm25.run`` -> ``bm25.run``)."""
    return run_names([path])[0]


__all__ = ["name_runs", "run_names", "short_name"]
