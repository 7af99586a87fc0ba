"""The rerank protocol's last stage: OUT/ written, under its lock.

[`write_outputs`][tierank.hps.output.write_outputs] writes what the earlier stages made (the layout
and its checks are planned by [`tierank.hps.plan`][tierank.hps.plan]); [`locked`][tierank.hps.output.locked]
holds OUT/ from before the set is read until the last file is written.  Layout::

    OUT/runs/MODEL.VARIANT.run               one TREC run per variant, exact scores
    OUT/runs/MODEL.VARIANT.reasoning.jsonl   Rank1-style reasoning, one line per (query, document)
    OUT/cache/MODEL__VARIANT__bsN__KEY.jsonl the score cache (tierank.hps.cache)
    OUT/table.tsv, OUT/table.json            Table 1's rows (table.json also settings, runs, ties)

Every target is checked (writable, not special, not one of the inputs) by
[`plan_output`][tierank.hps.plan.plan_output] and OUT/ is locked before any model is
loaded: two runs on one OUT/ would score everything twice and interleave their cache lines.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tierank.errors import Problem, TierankInputError
from tierank.hps.plan import RerankPlan
from tierank.hps.record import ProtocolResult
from tierank.hps.score import Scored
from tierank.hps.table import TABLE_FIELDS

__all__ = ["locked", "write_outputs", "write_table", "LOCK_MESSAGE"]

LOCK_MESSAGE = (
    "another `tierank rerank` run is using this directory (it holds its lock); wait for it to finish "
    "or choose another output directory"
)


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


def write_outputs(plan: RerankPlan, scored: Scored, result: ProtocolResult) -> None:
    """Every file of OUT/, each written atomically: one TREC run per variant with exact scores
    (``repr``: no tie is created or removed), the reasoning of Rank1-style scorers, and (with OUT/)
    ``table.tsv`` and ``table.json``; no input file is ever overwritten."""
    from tierank.io.writers import write_atomic, write_run
    from tierank.report.formats import jsonable

    names = plan.run_name
    for v in plan.variants:
        run, _ = scored.runs[v.name]
        write_run(
            result.runs[v.name], run.qid, run.docid, run.score, names[v.name], protect=plan.inputs
        )
        if v.name in result.reasoning:
            lines = [
                json.dumps({"query": qq, "docid": dd, "score": ss, "reasoning": rr}) + "\n"
                for qq, r in zip(scored.qids, scored.records[v.name])
                for dd, ss, rr in zip(r["docids"], r["scores"], r.get("reasoning", []))
            ]
            write_atomic(result.reasoning[v.name], "".join(lines), protect=plan.inputs)
    if plan.output.out is not None:
        write_table(
            plan.output.out, jsonable(result.document()), result.rows, TABLE_FIELDS, plan.inputs
        )
