"""Evaluation at any size: a run read in query-aligned batches, evaluated batch by batch.

Memory is bounded by the batch size, not by the input.  The run is read as blocks that hold
whole queries (`tierank.io.blocks`: byte ranges of a plain file, read by the workers
themselves; decompressed blocks of a gzip file or a pipe; the files of a partitioned run), so
**a query is never split between batches**.  Each batch is parsed by the same readers as a whole
file (every refusal names the file and the line) and evaluated by the one engine
([`tierank.evaluate`][tierank.evaluate]) against the judgments of its queries only, in this process or in
``jobs`` worker processes ([`tierank.stream.workers.worker_pool`][tierank.stream.workers.worker_pool]), and the per-query
statistics are put together at the end (`tierank.stream.combine.combine_parts`).

Combining is exact: every per-query statistic depends on that query's documents and judgments
only, and the summary over queries is computed from the per-query arrays in the order of the
in-memory engine (queries sorted), so the result equals [`tierank.evaluate`][tierank.evaluate] on the whole
run bit for bit (the tests check this on the brute-force cases split into tiny batches).

A run whose queries are not grouped (a query's lines interrupted by another query's) cannot be
read this way; it is detected (a query seen again in a later batch) and refused with the way
out: [`tierank.stream.partition`][tierank.stream.partition] writes it grouped by query with DuckDB.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import replace

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..errors import (
    EmptyRun,
    NoJudgedDocuments,
    NothingToEvaluate,
    Problem,
    ProblemLog,
    TierankInputError,
)
from ..evaluate import Evaluator
from ..io.blocks import (
    BLOCK_BYTES,
    EMPTY_RUN,
    GroupCheck,
    LineCounter,
    blank,
    line_count,
    open_random,
    parse_block,
    query_ids,
    read_range,
    shift_problems,
)
from ..io.model import Run
from ..io.sources import tasks as source_tasks
from ..measures import Measure
from ..results import EvalResult
from ..settings import EvalSettings
from .combine import combine_parts
from .workers import worker_pool

__all__ = [
    "iter_evaluate",
    "evaluate_batches",
    "evaluate_stream",
    "evaluate_task",
    "init_worker",
    "balanced_block_bytes",
    "CONDENSED_EMPTY",
]


_WORKER: dict = {}
#: how `tierank.evaluate` says that dropping unjudged documents left nothing
CONDENSED_EMPTY = "--condensed: no document of"


def init_worker(evaluator: Evaluator, threads: int | None = None) -> None:
    if threads is not None:  # one worker per core: Arrow's own thread pool would only contend
        pa.set_cpu_count(threads)
    _WORKER.update(evaluator=evaluator)


def evaluate_task(task, ctx: dict | None = None) -> tuple:
    """Parse (a byte range or a text block) and evaluate one batch: (its query ids in file order, the
    result, or None when none of its queries is judged, the number of run lines in it, the number
    of text lines of a text block whose first line is not given, else None).  A parse error is
    returned in place of the query ids (for a byte range, or a text block without its first line,
    its line numbers relative to the range or block: the caller shifts them, counting the lines
    before a range only then, [`tierank.io.blocks.LineCounter`][tierank.io.blocks.LineCounter]), so that errors are
    reported in file order whichever worker finishes first.  ``("check", task)`` only parses
    (after a refusal the rest of the file is read for its problems, as the in-memory reader does).
    ``ctx`` (``{"evaluator": Evaluator}``) is given in this process; a worker process reads its own,
    set once by `init_worker`."""
    ctx = _WORKER if ctx is None else ctx
    check_only = task[0] == "check"
    if check_only:
        task = task[1]

    lines = None
    if task[0] == "range":  # a byte range of a plain file, read here
        _, src, start, end = task
        block = read_range(src, start, end)
        if blank(block):
            return [], None, 0, None
        first = 1  # line numbers relative to the range: the caller shifts them (only on an error)
    elif task[0] == "text":
        _, src, block, first = task
        if (
            first is None
        ):  # the lines are counted here (not where the text is cut): the caller adds them up
            lines = line_count(block)
            first = 1
        if blank(block):
            return [], None, 0, lines
    if task[0] in ("range", "text"):
        try:
            run = parse_block(src, block, first, ranks=False)
        except EmptyRun:  # comment lines only: no run lines here
            return [], None, 0, lines
        except TierankInputError as e:
            return (
                e,
                query_ids(block),
                0,
                lines,
            )  # the queries still tell whether the run is grouped
        del block
    else:
        run = task[1]
    if check_only:
        return ac.distinct(run.qid), None, len(run), lines
    qids = ac.distinct(run.qid)
    judged = ctx["evaluator"].judging(ac.strings(qids))
    if len(judged.qrels) == 0:
        return qids, None, len(run), lines
    try:
        return qids, judged.evaluate(run), len(run), lines
    except NothingToEvaluate:
        return qids, None, len(run), lines
    except NoJudgedDocuments:
        pass  # judged queries, none of their documents judged in this batch: below
    except TierankInputError as e:
        return qids, e, len(run), lines  # raised in file order, after the file's bad lines
    if not judged.settings.judged_only:
        return (
            qids,
            CONDENSED_EMPTY,
            len(run),
            lines,
        )  # condensed: such queries drop out, as in memory
    # trec_eval -J keeps them, with no documents (evaluate() scores them as -c does)
    res = _without_documents(judged, run.source)
    return qids, replace(res, settings=dict(res.settings, empty_batch=True)), len(run), lines


def _without_documents(evaluator: Evaluator, source: str) -> EvalResult:
    """The queries of the evaluator's qrels evaluated with no retrieved document (as ``-c`` scores a
    query the run lacks), under its settings (their ``settings`` record says so)."""
    s = evaluator.settings
    condensed = s.unjudged == "condensed"
    # nothing to condense in an empty run (condense() refuses an empty result)
    plain = {"judged_only": False, "unjudged": "nonrelevant"} if condensed else {}
    empty = Run(
        qid=ac.strings([]),
        docid=ac.strings([]),
        score=np.zeros(0),
        rank=None,
        source=source,
    )
    res = evaluator.under(complete=True, **plain).evaluate(empty)
    settings = dict(res.settings, complete=s.complete)
    if condensed:
        settings["unjudged"] = "condensed"
        if s.judged_only:
            settings["judged_only"] = True
    return replace(res, settings=settings)


def _tasks(run_path, block_bytes: int, jobs: int = 1) -> Iterator[tuple]:
    yield from source_tasks(
        run_path, block_bytes, jobs
    )  # split as its source kind says (tierank.io.sources)


#: with several workers, a run file is cut into at least this many blocks per worker: few large blocks
#: leave workers idle at the end (the 7M-line benchmark run, 292 MB, is 5 blocks of 64 MB: 3 rounds on 2
#: workers, one of them with a single worker busy), and smaller blocks cost less memory traffic
BLOCKS_PER_WORKER = 8
#: ... but no block below this (each batch has a fixed cost), unless the caller asked for smaller ones
MIN_BALANCED_BLOCK = 16 << 20


def balanced_block_bytes(run_path, block_bytes: int, jobs: int) -> int:
    """The block size to stream ``run_path`` in with ``jobs`` workers: ``block_bytes``, or less for a local
    file with several workers, so that it makes at least `BLOCKS_PER_WORKER` blocks per worker (none
    smaller than `MIN_BALANCED_BLOCK` or than ``block_bytes``).  Never larger than ``block_bytes``: the
    memory bound stands; the numbers do not depend on the blocks.

    >>> from tierank.examples import path
    >>> balanced_block_bytes(path("askubuntu-run"), 64 << 20, 1) == 64 << 20
    True
    >>> balanced_block_bytes(path("askubuntu-run"), 64 << 20, 2) == MIN_BALANCED_BLOCK
    True
    >>> balanced_block_bytes(path("askubuntu-run"), 4096, 2)
    4096
    """
    if jobs <= 1:
        return block_bytes
    try:
        size = os.stat(run_path).st_size
    except (OSError, TypeError, ValueError):  # a pipe, a URL, a folder of parts: as asked
        return block_bytes
    if not os.path.isfile(run_path):
        return block_bytes
    return min(block_bytes, max(MIN_BALANCED_BLOCK, -(-size // (jobs * BLOCKS_PER_WORKER))))


def _in_order(tasks: Iterator[tuple], jobs: int, init: tuple) -> Iterator[tuple]:
    """[`evaluate_task`][tierank.stream.evaluate.evaluate_task] of every task, in task order: here, or in ``jobs`` worker processes with
    at most ``jobs + 1`` tasks in flight (results that finish early wait for their turn, and so do
    a worker's exceptions: the first in task order is raised, whichever worker fails first)."""
    task: tuple | None
    if jobs <= 1:  # the context goes with each call: two evaluations may run in one process at once
        ctx = dict(evaluator=init[0])
        for task in tasks:
            yield evaluate_task(task, ctx)
        return
    with worker_pool(jobs, init_worker, (*init, 1)) as pool:
        running: dict = {}
        ready: dict = {}
        nxt = submitted = 0
        exhausted = False
        while True:
            while not exhausted and len(running) < jobs + 1:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                running[pool.submit(evaluate_task, task)] = submitted
                submitted += 1
            if not running and not ready:
                break
            if running:
                finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for fut in finished:
                    ready[running.pop(fut)] = fut
            while nxt in ready:
                fut = ready.pop(nxt)
                nxt += 1
                yield fut.result()


def iter_evaluate(
    qrels,
    run_path: str | os.PathLike,
    measures: Iterable[str | Measure] | str,
    *,
    jobs: int = 1,
    block_bytes: int = BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    queries_seen: list | None = None,
    notes: dict | None = None,
    settings: EvalSettings | None = None,
    progress_bytes: Callable[[int, int], None] | None = None,
    **options,
) -> Iterator[EvalResult]:
    """Evaluate the run at ``run_path`` batch by batch: one [`EvalResult`][tierank.stream.evaluate.EvalResult] per batch of whole
    queries (those judged), in file order, as soon as it is ready.  ``jobs`` worker processes parse
    and evaluate batches in parallel while this process only cuts the text into blocks at query
    boundaries (at most ``jobs + 1`` blocks in flight; with several workers a
    local file is cut into blocks of at most ``block_bytes``, smaller when that balances the workers:
    `balanced_block_bytes`).  ``progress(lines, queries)`` is called with
    the run lines and queries done after each batch, and ``progress_bytes(done, size)`` with the bytes of
    the file done where it is read in byte ranges (a plain file, not gzip nor a pipe); ``queries_seen``,
    a list, receives every query id
    of the run in file order (judged or not); ``notes``, a dict, gets ``condensed_empty`` when a batch
    had judged queries but no judged document (``unjudged="condensed"``).  ``settings`` and ``options``
    are those of [`tierank.evaluate`][tierank.evaluate] (``complete`` is refused: use [`evaluate_stream`][tierank.stream.evaluate.evaluate_stream]).

    Refusals are those of the in-memory engine: the settings it refuses, before any block is read;
    then every bad line, in file order, however the blocks are cut and whichever worker finishes
    first (after a bad line the rest of the file is parsed, not evaluated, for its problems); a run
    not grouped by query is refused too (with its bad lines, if any: the duplicates of an ungrouped
    run whose first line is in another block are the one thing streaming cannot see)."""
    s = EvalSettings.of(settings, **options)
    if s.complete:
        raise TierankInputError(
            "iter_evaluate: complete=True needs the whole query set; use evaluate_stream"
        )
    yield from evaluate_batches(
        Evaluator(qrels, measures, s),
        run_path,
        jobs=jobs,
        block_bytes=block_bytes,
        progress=progress,
        queries_seen=queries_seen,
        notes=notes,
        progress_bytes=progress_bytes,
    )


def evaluate_batches(
    evaluator: Evaluator,
    run_path: str | os.PathLike,
    *,
    jobs: int = 1,
    block_bytes: int = BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    queries_seen: list | None = None,
    notes: dict | None = None,
    progress_bytes: Callable[[int, int], None] | None = None,
) -> Iterator[EvalResult]:
    """[`iter_evaluate`][tierank.stream.evaluate.iter_evaluate] with an [`tierank.evaluate.Evaluator`][tierank.evaluate.Evaluator] built once (its settings without
    ``complete``)."""
    _check_streamable(evaluator)
    src = str(run_path)
    check = GroupCheck(src, queries_seen)
    # after a refusal the rest of the file is only parsed, for its problems: the in-memory reader
    # reports every bad line (the first MAX_PROBLEMS, and how many more), and so must this
    problems = ProblemLog(src)
    evaluation: list[TierankInputError] = []  # an error of the evaluation of a batch (the first)
    ungrouped: list[TierankInputError] = []  # a query seen again after other queries (the first)
    failed = [False]

    sent: deque = deque()  # the tasks in flight, in order: the results come back in this order

    def tasks() -> Iterator[tuple]:
        for task in _tasks(run_path, balanced_block_bytes(run_path, block_bytes, jobs), jobs):
            sent.append(task)
            yield ("check", task) if failed[0] else task

    any_rows = False
    done = [0, 0]
    text_lines = 0  # the lines of the text blocks so far (counted by their workers)
    counter = None  # the lines before a byte range: counted only for an error's location
    size: int | None = None  # the size of a file read in byte ranges (for progress_bytes)
    for qids, res, rows, lines in _in_order(tasks(), jobs, (evaluator,)):
        task = sent.popleft()
        if isinstance(qids, TierankInputError):  # located from the first line of its range or block
            counter = counter or (LineCounter(task[1]) if task[0] == "range" else None)
            problems.add(shift_problems(qids.problems, _lines_before(task, counter, text_lines)))
            failed[0] = True
            qids = res
        text_lines += lines or 0
        any_rows |= bool(qids)
        try:  # checked after a refusal too: a run both bad and not grouped is told both
            check(qids)
        except TierankInputError as e:
            ungrouped[:] = ungrouped or [e]
            failed[0] = True
        if failed[0]:
            continue
        if isinstance(res, TierankInputError):
            evaluation.append(res)
            failed[0] = True
            continue
        done[0] += rows
        done[1] += len(qids)
        if progress_bytes is not None and task[0] == "range":  # the ranges come back in file order
            if size is None:
                fh, size = open_random(task[1])
                fh.close()
            progress_bytes(task[3], size)
        if progress is not None:
            progress(*done)
        if isinstance(res, str):
            if notes is not None:
                notes["condensed_empty"] = True
        elif res is not None:
            yield res
    _raise_refusals(problems, evaluation, ungrouped)
    if not any_rows:
        raise EmptyRun([Problem(src, None, EMPTY_RUN)])


def _check_streamable(evaluator: Evaluator) -> None:
    """Refuse the measures a stream cannot evaluate: string-valued ones, and those whose summary over
    queries is not a sum of per-query terms."""
    strings = [str(m) for m in evaluator.measures if getattr(m, "string_valued", False)]
    if strings:
        raise TierankInputError(
            f"{', '.join(strings)}: a string per query, not streamed; evaluate it in memory "
            "(without --jobs or --block-bytes)"
        )
    whole = [str(m) for m in evaluator.measures if not m.additive]
    if whole:
        raise TierankInputError(
            f"{', '.join(whole)}: the summary over queries is not a sum of per-query terms "
            "(it needs every query at once); evaluate it in memory (tierank.evaluate)"
        )


def _lines_before(task: tuple, counter: LineCounter | None, text_lines: int) -> int:
    """The run lines before ``task``'s range or block, to locate its problems: counted by ``counter``
    for a byte range, ``text_lines`` (those of the text blocks so far) for a text block of no known
    start, else 0."""
    if task[0] == "range":
        assert counter is not None
        return counter.before(task[2])
    if task[0] == "text" and task[3] is None:
        return text_lines
    return 0


def _raise_refusals(
    problems: ProblemLog, evaluation: list[TierankInputError], ungrouped: list[TierankInputError]
) -> None:
    """Raise what the stream refused, if anything: the bad lines (the in-memory reader's problems; a
    run not grouped also says so: it cannot be streamed), else the first error of an evaluation or of
    the grouping."""
    if problems:
        raise TierankInputError(
            problems.error().problems + [p for e in ungrouped for p in e.problems]
        )
    if evaluation or ungrouped:
        raise (evaluation or ungrouped)[0]


def evaluate_stream(
    qrels,
    run_path: str | os.PathLike,
    measures: Iterable[str | Measure] | str,
    *,
    jobs: int = 1,
    block_bytes: int = BLOCK_BYTES,
    progress: Callable[[int, int], None] | None = None,
    settings: EvalSettings | None = None,
    progress_bytes: Callable[[int, int], None] | None = None,
    **options,
) -> EvalResult:
    """[`tierank.evaluate`][tierank.evaluate] on a run of any size, read in query-aligned batches (``progress`` and
    ``progress_bytes`` as in [`iter_evaluate`][tierank.stream.evaluate.iter_evaluate]).

    Equal, bit for bit, to ``tierank.evaluate(qrels, run_path, measures, settings, **options)``; memory is
    bounded by ``block_bytes`` (times ``jobs + 1``) plus the per-query results.

    Examples
    --------
    >>> from tierank.examples import path
    >>> import tierank
    >>> a = evaluate_stream(path("askubuntu-qrels"), path("askubuntu-run"), ["AP", "nDCG@10"], block_bytes=4096)
    >>> b = tierank.evaluate(path("askubuntu-qrels"), path("askubuntu-run"), ["AP", "nDCG@10"])
    >>> a.records() == b.records()
    True
    """
    s = EvalSettings.of(settings, **options)
    complete = s.complete
    ev = Evaluator(qrels, measures, EvalSettings.of(s, complete=False) if complete else s)
    q = ev.qrels
    notes: dict = {}
    parts = list(
        evaluate_batches(
            ev,
            run_path,
            jobs=jobs,
            block_bytes=block_bytes,
            progress=progress,
            notes=notes,
            progress_bytes=progress_bytes,
        )
    )
    evaluated = [p for p in parts if not p.settings.get("empty_batch")]
    if not evaluated and not s.judged_only and (notes.get("condensed_empty") or parts):
        # no document of the run is judged: refused under --condensed, -c or not, as in memory (under
        # trec_eval's -J every query is evaluated as one that retrieved nothing, as in memory)
        raise NoJudgedDocuments(f"{CONDENSED_EMPTY} {run_path} is judged in {q.source}")
    if complete:
        # qrels queries the run does not have: evaluated with no documents (every one scores as trec_eval -c)
        have = {x for p in parts for x in p.qids}
        missing = sorted(set(ac.unique(q.qid).to_pylist()) - have)
        if missing:
            parts.append(
                _without_documents(
                    ev.judging(ac.strings(missing)).under(complete=True), str(run_path)
                )
            )
    if not parts:
        raise NothingToEvaluate(
            f"no query of {run_path} is judged in {q.source}: nothing to evaluate "
            "(query ids must match exactly)"
        )
    first = (evaluated or parts)[0]
    record = dict(first.settings, run=str(run_path), complete=complete, streamed=True)
    record.pop("empty_batch", None)
    return combine_parts(parts, parts[0].measures, record)
