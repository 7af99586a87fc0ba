"""The protocol's output directory OUT/: its layout, the checks made before any work, its lock, its files.

Layout (the only writer of OUT/ is [`tierank.hps.protocol.rerank`][tierank.hps.protocol.rerank])::

    OUT/runs/MODEL.VARIANT.run               one TREC run per variant, exact scores
    OUT/runs/MODEL.VARIANT.reasoning.jsonl   Rank1-style reasoning, one line per (query, document)
    OUT/cache/MODEL__VARIANT__bsN__KEY.jsonl the score cache (tierank.hps.cache)
    OUT/table.tsv, OUT/table.json            Table 1's rows (table.json also settings, runs, ties)

Every target is checked (writable, not special, not one of the inputs) and
OUT/ is locked before any model is loaded: two runs on one OUT/ would score
everything twice and interleave their cache lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tierank.errors import Problem, TierankInputError

__all__ = ["OutputPlan", "plan_output", "locked", "run_paths", "write_table", "LOCK_MESSAGE"]

LOCK_MESSAGE = (
    "another `tierank rerank` run is using this directory (it holds its lock); wait for it to finish "
    "or choose another output directory"
)


@dataclass(frozen=True)
class OutputPlan:
    """Where one protocol run writes: ``out`` (None without -o), the cache and the runs."""

    out: Path | None
    cache: Path
    runs: Path

    @property
    def dirs(self) -> tuple[Path, ...]:
        """The directories to lock (OUT/ and a cache directory outside it)."""
        return tuple(dict.fromkeys(p for p in (self.out, self.cache) if p is not None))


#: Appended to the error for an OUT/ (or cache directory) that is a file.
_WHY = " (rerank writes a directory of files)"


def run_paths(runs: Path, model_slug: str, variant_slug: str) -> tuple[Path, Path]:
    """The run file and the reasoning file of one variant."""
    stem = f"{model_slug}.{variant_slug}"
    return runs / f"{stem}.run", runs / f"{stem}.reasoning.jsonl"


def plan_output(
    out_dir, cache_dir, targets: Iterable[str], inputs: Sequence[os.PathLike]
) -> OutputPlan:
    """Check OUT/ (and the cache directory) and every file that will be written, then create the directories.

    ``targets`` are file names relative to the runs directory.  Refused with a
    [`TierankInputError`][tierank.hps.output.TierankInputError], before any directory is created: an OUT/ that
    is a file or cannot be created or written, and any target that is a
    special file, a directory or one of ``inputs``.
    """
    from tierank.io.writers import check_output, ensure_dir

    out = Path(out_dir) if out_dir is not None else None
    if cache_dir is not None:
        cache = Path(cache_dir)
    elif out is not None:
        cache = out / "cache"
    else:
        raise TierankInputError([Problem("", None, "give an output or a cache directory")])
    runs = out / "runs" if out is not None else cache / "runs"
    dirs = [d for d in (out, cache, runs) if d is not None]
    files = [runs / t for t in targets]
    if out is not None:
        files += [out / "table.tsv", out / "table.json"]
    for d in dirs:
        ensure_dir(d, create=False, why=_WHY)
    for f in files:  # those that exist can be refused: check them before anything is created
        if f.parent.is_dir():
            check_output(f, protect=tuple(inputs))
    for d in dirs:
        ensure_dir(d, why=_WHY)
    for f in files:
        check_output(f, protect=tuple(inputs))
    return OutputPlan(out, cache, runs)


@contextmanager
def locked(dirs: Iterable[Path]) -> Iterator[None]:
    """Hold an exclusive lock on each directory (``flock`` on the directory itself: no lock file is left)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock on this platform
        yield
        return
    fds: list[int] = []
    try:
        for d in dirs:
            fd = os.open(d, os.O_RDONLY)
            fds.append(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise TierankInputError([Problem(str(d), None, LOCK_MESSAGE)]) from None
            except OSError:  # a file system without locks: go on unlocked
                pass
        yield
    finally:
        for fd in fds:
            os.close(fd)  # releases the lock


def write_table(
    out: Path, document: dict, rows: list[dict], fields: Sequence[str], inputs: Sequence = ()
) -> None:
    """OUT/table.tsv (the rows) and OUT/table.json (the whole document), each written atomically."""
    from tierank.io.writers import write_atomic
    from tierank.report.formats import jsonable, render_records

    write_atomic(
        out / "table.tsv", render_records(rows, tuple(fields), "tsv"), protect=tuple(inputs)
    )
    write_atomic(
        out / "table.json", json.dumps(jsonable(document), indent=2) + "\n", protect=tuple(inputs)
    )
