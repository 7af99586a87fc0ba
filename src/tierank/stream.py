"""Evaluation at any size: a run read in query-aligned batches, evaluated batch by batch.

Memory is bounded by the batch size, not by the input.  The run is read as blocks that hold
whole queries (:mod:`tierank.io.blocks`: byte ranges of a plain file, read by the workers
themselves; decompressed blocks of a gzip file or a pipe; the files of a partitioned run), so
**a query is never split between batches**.  Each batch is parsed by the same readers as a whole
file (every refusal names the file and the line) and evaluated by the one engine
(:func:`tierank.evaluate`) against the judgments of its queries only, in this process or in
``jobs`` worker processes, and the per-query statistics are put together at the end.

Combining is exact: every per-query statistic depends on that query's documents and judgments
only, and the summary over queries is computed from the per-query arrays in the order of the
in-memory engine (queries sorted), so the result equals :func:`tierank.evaluate` on the whole
run bit for bit (the tests check this on the brute-force cases split into tiny batches).

A run whose queries are not grouped (a query's lines interrupted by another query's) cannot be
read this way; it is detected (a query seen again in a later batch) and refused with the way
out: :func:`partition` writes it grouped by query with DuckDB (out of core, with a memory limit
and a temporary directory), never a home-made external sort.

Worker processes never outlive the evaluation (:func:`worker_pool`): they die with their parent,
even one killed with SIGKILL, and are terminated at once when the evaluation stops on an error or
an interrupt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import Problem, TierankInputError
from .io.blocks import (  # noqa: F401
    BLOCK_BYTES,
    EMPTY_RUN,
    GroupCheck,
    ProblemLog,
    _line_count,
    _parse,
    _qids,
    blank,
    iter_batches,
    iter_blocks,
    iter_ranges,
    query_ids,
    read_range,
    shift_problems,
)
from .io.convert import to_qrels
from .io.model import Qrels, Run
from .io.sources import batches_of, name_runs, seekable_text  # noqa: F401
from .io.sources import tasks as source_tasks
from .measures import Stats
from .results import EvalResult
from .ties import TieSummary

# --------------------------------------------------------------------------------------- evaluating


def _judgments_of(qrels: Qrels, qids: pa.Array) -> Qrels:
    keep = pc.is_in(qrels.qid, value_set=qids)
    return Qrels(qid=qrels.qid.filter(keep), docid=qrels.docid.filter(keep),
                 grade=np.asarray(qrels.grade)[np.asarray(keep)], source=qrels.source)


# ------------------------------------------------------------------------------------------- workers


@contextmanager
def worker_pool(jobs: int, initializer: Callable | None = None, initargs: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """A :class:`ProcessPoolExecutor` of ``jobs`` workers that never outlive this process.

    * Each worker dies with its parent: on Linux the kernel sends it SIGKILL when the parent dies
      (``prctl(PR_SET_PDEATHSIG)``), even when the parent is killed with SIGKILL; elsewhere a
      thread in the worker polls its parent's pid and exits when the worker is orphaned.
    * Leaving the block by an exception (an error, Ctrl-C, SIGTERM turned into
      ``KeyboardInterrupt`` by the command line, a generator closed early) cancels the tasks not
      started and terminates the workers at once, rather than waiting for the tasks in flight.
    * Workers ignore SIGINT (Ctrl-C reaches the whole process group: the parent alone handles
      it, so the workers print no traceback) and die quietly on SIGTERM.
    """
    import multiprocessing

    ctx = multiprocessing.get_context()
    # the pid a worker's parent must have: this process, except under the forkserver (its parent
    # is the server, which exits when this process does)
    parent = os.getpid() if ctx.get_start_method() != "forkserver" else None
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_start_worker,
                               initargs=(parent, initializer, initargs))
    try:
        yield pool
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and terminate the workers now (what Python 3.14's
    ``ProcessPoolExecutor.terminate_workers`` does), then reap them."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.terminate()
        except (OSError, ValueError):  # already gone, or closed
            pass
    for p in procs:
        try:
            p.join(5)
        except (OSError, ValueError, AssertionError):
            pass


def _start_worker(parent: int | None, initializer: Callable | None, initargs: tuple) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler (fork copies it)
    _die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


#: how often an orphaned worker notices, where the kernel does not tell it (seconds)
WATCH_SECONDS = 0.5


def _die_with_parent(parent: int | None) -> None:
    """Make this worker exit when its parent process does (see :func:`worker_pool`)."""
    import signal
    import sys
    import threading
    import time

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # no libc symbol: the watchdog below still works
            pass
    ppid = os.getppid()
    if parent is not None and ppid != parent:  # the parent died before the signal was set up
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCH_SECONDS)
            if os.getppid() != ppid:  # orphaned: adopted by init or a subreaper
                os._exit(1)

    threading.Thread(target=watch, name="tierank-parent-watch", daemon=True).start()


_WORKER: dict = {}
#: how :func:`tierank.evaluate` says that dropping unjudged documents left nothing
CONDENSED_EMPTY = "--condensed: no document of"


def _init_worker(qrels: Qrels, measures, kwargs: dict, threads: int | None = None) -> None:
    if threads is not None:  # one worker per core: Arrow's own thread pool would only contend
        pa.set_cpu_count(threads)
    _WORKER.update(qrels=qrels, measures=measures, kwargs=kwargs)


def _evaluate_task(task, ctx: dict | None = None) -> tuple:
    """Parse (a byte range or a text block) and evaluate one batch: (its query ids in file order, the
    result, or None when none of its queries is judged, the number of run lines in it, the number
    of text lines of a byte range).  A parse error is returned in place of the query ids (for a
    byte range its line numbers relative to the range, the caller shifts them), so that errors are
    reported in file order whichever worker finishes first.  ``("check", task)`` only parses
    (after a refusal the rest of the file is read for its problems, as the in-memory reader does).
    ``ctx`` (qrels, measures, kwargs) is given in this process; a worker process reads its own, set
    once by :func:`_init_worker`."""
    from .evaluate import evaluate

    ctx = _WORKER if ctx is None else ctx
    check_only = task[0] == "check"
    if check_only:
        task = task[1]

    lines = None
    if task[0] == "range":  # a byte range of a plain file, read here
        _, src, start, end = task
        block = read_range(src, start, end)
        lines = _line_count(block)
        if blank(block):
            return [], None, 0, lines
        first = 1  # line numbers relative to the range: the caller shifts them
    elif task[0] == "text":
        _, src, block, first = task
        if blank(block):
            return [], None, 0, None
    if task[0] in ("range", "text"):
        try:
            run = _parse(src, block, first)
        except TierankInputError as e:
            if [p.reason for p in e.problems] == [EMPTY_RUN]:  # comment lines only: no run lines here
                return [], None, 0, lines
            return e, query_ids(block), 0, lines  # the queries still tell whether the run is grouped
        del block
    else:
        run = task[1]
    if check_only:
        return pc.unique(_qids(run)).to_pylist(), None, len(run), lines
    qids = pc.unique(_qids(run)).to_pylist()
    judged = _judgments_of(ctx["qrels"], pa.array(qids, pa.string()))
    if len(judged) == 0:
        return qids, None, len(run), lines
    try:
        return qids, evaluate(judged, run, ctx["measures"], **ctx["kwargs"]), len(run), lines
    except TierankInputError as e:
        if any("nothing to evaluate" in p.reason for p in e.problems):
            return qids, None, len(run), lines
        if not any(p.reason.startswith(CONDENSED_EMPTY) for p in e.problems):
            return qids, e, len(run), lines  # raised in file order, after the file's bad lines
        # judged queries, none of their documents judged in this batch
        if not ctx["kwargs"].get("judged_only"):
            return qids, CONDENSED_EMPTY, len(run), lines  # condensed: such queries drop out, as in memory
        # trec_eval -J keeps them, with no documents (evaluate() scores them as -c does)
        res = _without_documents(judged, ctx["measures"], ctx["kwargs"], run.source)
        return qids, replace(res, settings=dict(res.settings, empty_batch=True)), len(run), lines


def _without_documents(qrels: Qrels, measures, kwargs: dict, source: str) -> EvalResult:
    """The queries of ``qrels`` evaluated with no retrieved document (as ``-c`` scores a query the run
    lacks), under the settings ``kwargs`` name (their ``settings`` record says so)."""
    from .evaluate import evaluate

    kw = {k: v for k, v in kwargs.items() if k != "complete"}
    condensed = kw.get("judged_only") or kw.get("unjudged") == "condensed"
    if condensed:  # nothing to condense in an empty run (condense() refuses an empty result)
        kw.pop("judged_only", None)
        kw["unjudged"] = "nonrelevant"
    empty = Run(qid=pa.array([], pa.string()), docid=pa.array([], pa.string()), score=np.zeros(0), rank=None,
                source=source)
    res = evaluate(qrels, empty, measures, complete=True, **kw)
    settings = dict(res.settings, complete=bool(kwargs.get("complete")))
    if condensed:
        settings["unjudged"] = "condensed"
        if kwargs.get("judged_only"):
            settings["judged_only"] = True
    return replace(res, settings=settings)


def _tasks(run_path, block_bytes: int) -> Iterator[tuple]:
    yield from source_tasks(run_path, block_bytes)  # split as its source kind says (tierank.io.sources)


def _combine(parts: list[EvalResult], measures, settings: dict) -> EvalResult:
    qids = [q for p in parts for q in p.qids]
    order = sorted(range(len(qids)), key=qids.__getitem__)
    idx = np.asarray(order, dtype=np.int64)

    def cat(arrays):
        return np.concatenate(arrays)[idx] if arrays else np.zeros(0)

    stats = {}
    for m in measures:
        ss = [p.stats[m] for p in parts]
        se = None if all(s.se is None for s in ss) else cat(
            [s.se if s.se is not None else np.zeros(len(s.expected)) for s in ss])
        labelled = next((s for s in ss if s.method != "exact"), ss[0])  # sampled if any batch is
        stats[m] = replace(Stats(*(getattr(labelled, f) for f in ("oblivious", "expected", "min", "max", "var")),
                                 method=labelled.method, samples=labelled.samples, seed=labelled.seed), oblivious=cat([s.oblivious for s in ss]), expected=cat([s.expected for s in ss]),
                           min=cat([s.min for s in ss]), max=cat([s.max for s in ss]), var=cat([s.var for s in ss]),
                           se=se)
    bounds = {m: tuple(cat([p.bounds[m][i] for p in parts]) for i in (0, 1)) for m in parts[0].bounds}
    residual = {m: cat([p.residual[m] for p in parts]) for m in parts[0].residual}
    t = [TieSummary(**p.ties) for p in parts]
    docs = sum(x.docs for x in t)
    tied = sum(x.tied_docs for x in t)
    ties = TieSummary(docs=docs, queries=sum(x.queries for x in t),
                      queries_with_ties=sum(x.queries_with_ties for x in t), groups=sum(x.groups for x in t),
                      tied_docs=tied, largest=max((x.largest for x in t), default=0),
                      share=tied / docs if docs else 0.0).to_dict()
    return EvalResult(measures=list(measures), qids=[qids[i] for i in order], stats=stats, ties=ties,
                      settings=settings, bounds=bounds, residual=residual)


def _in_order(tasks: Iterator[tuple], jobs: int, init: tuple) -> Iterator[tuple]:
    """:func:`_evaluate_task` of every task, in task order: here, or in ``jobs`` worker processes with
    at most ``jobs + 1`` tasks in flight (results that finish early wait for their turn, and so do
    a worker's exceptions: the first in task order is raised, whichever worker fails first)."""
    if jobs <= 1:  # the context goes with each call: two evaluations may run in one process at once
        ctx = dict(qrels=init[0], measures=init[1], kwargs=init[2])
        for task in tasks:
            yield _evaluate_task(task, ctx)
        return
    with worker_pool(jobs, _init_worker, (*init, 1)) as pool:
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
                running[pool.submit(_evaluate_task, task)] = submitted
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


def iter_evaluate(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                  block_bytes: int = BLOCK_BYTES, progress: Callable[[int, int], None] | None = None,
                  queries_seen: list | None = None, notes: dict | None = None, **kwargs) -> Iterator[EvalResult]:
    """Evaluate the run at ``run_path`` batch by batch: one :class:`EvalResult` per batch of whole
    queries (those judged), in file order, as soon as it is ready.  ``jobs`` worker processes parse
    and evaluate batches in parallel while this process only cuts the text into blocks at query
    boundaries (at most ``jobs + 1`` blocks in flight).  ``progress(lines, queries)`` is called with
    the run lines and queries done after each batch; ``queries_seen``, a list, receives every query id
    of the run in file order (judged or not); ``notes``, a dict, gets ``condensed_empty`` when a batch
    had judged queries but no judged document (``unjudged="condensed"``).  ``kwargs`` are those of
    :func:`tierank.evaluate` (``complete`` is refused: use :func:`evaluate_stream`).

    Refusals are those of the in-memory engine: the settings it refuses, before any block is read;
    then every bad line, in file order, however the blocks are cut and whichever worker finishes
    first (after a bad line the rest of the file is parsed, not evaluated, for its problems); a run
    not grouped by query is refused too (with its bad lines, if any: the duplicates of an ungrouped
    run whose first line is in another block are the one thing streaming cannot see)."""
    from .measures import Measure, parse_measures

    if kwargs.get("complete"):
        raise TierankInputError("iter_evaluate: complete=True needs the whole query set; use evaluate_stream")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    whole = [str(m) for m in parsed if type(m).aggregate is not Measure.aggregate]
    if whole:
        raise TierankInputError(f"{', '.join(whole)}: the summary over queries is not a sum of per-query terms "
                                "(it needs every query at once); evaluate it in memory (tierank.evaluate)")
    _check_settings(parsed, kwargs)
    q = to_qrels(qrels)
    src = str(run_path)
    check = GroupCheck(src, queries_seen)
    # after a refusal the rest of the file is only parsed, for its problems: the in-memory reader
    # reports every bad line (the first MAX_PROBLEMS, and how many more), and so must this
    problems = ProblemLog(src)
    evaluation: list[TierankInputError] = []  # an error of the evaluation of a batch (the first)
    ungrouped: list[TierankInputError] = []  # a query seen again after other queries (the first)
    failed = [False]

    def tasks() -> Iterator[tuple]:
        for task in _tasks(run_path, block_bytes):
            yield ("check", task) if failed[0] else task

    any_rows = False
    done = [0, 0]
    lines_before = 0
    for qids, res, rows, lines in _in_order(tasks(), jobs, (q, parsed, kwargs)):
        if isinstance(qids, TierankInputError):  # a range's lines are counted from its first line
            problems.add(shift_problems(qids.problems, lines_before) if lines is not None else qids.problems)
            failed[0] = True
            qids = res
        lines_before += lines or 0
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
        if progress is not None:
            progress(*done)
        if isinstance(res, str):
            if notes is not None:
                notes["condensed_empty"] = True
        elif res is not None:
            yield res
    if problems:  # the in-memory reader's problems (a run not grouped also says so: it cannot be streamed)
        raise TierankInputError(problems.error().problems + [p for e in ungrouped for p in e.problems])
    if evaluation or ungrouped:
        raise (evaluation or ungrouped)[0]
    if not any_rows:
        raise TierankInputError([Problem(src, None, EMPTY_RUN)])


def _check_settings(measures: list, kwargs: dict) -> None:
    """Refuse the settings :func:`tierank.evaluate` refuses before it reads a run (the same message,
    before any block is read): evaluated once on a one-line run."""
    from .evaluate import evaluate

    one = pa.array(["q"], pa.string())
    evaluate(Qrels(qid=one, docid=one, grade=np.ones(1), source=""),
             Run(qid=one, docid=one, score=np.ones(1), rank=None, source=""), measures,
             **{k: v for k, v in kwargs.items() if k != "complete"})


def evaluate_stream(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                    block_bytes: int = BLOCK_BYTES, complete: bool = False,
                    progress: Callable[[int, int], None] | None = None, **kwargs) -> EvalResult:
    """:func:`tierank.evaluate` on a run of any size, read in query-aligned batches.

    Equal, bit for bit, to ``tierank.evaluate(qrels, run_path, measures, **kwargs)``; memory is
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
    from .measures import parse_measures

    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    q = to_qrels(qrels)
    notes: dict = {}
    parts = list(iter_evaluate(q, run_path, parsed, jobs=jobs, block_bytes=block_bytes, progress=progress,
                               notes=notes, **kwargs))
    evaluated = [p for p in parts if not p.settings.get("empty_batch")]
    if not evaluated and (notes.get("condensed_empty") or parts):
        # no document of the run is judged: the in-memory engine refuses this, -c or not
        raise TierankInputError(f"{CONDENSED_EMPTY} {run_path} is judged in {q.source}")
    if complete:
        # qrels queries the run does not have: evaluated with no documents (every one scores as trec_eval -c)
        have = {x for p in parts for x in p.qids}
        missing = sorted(set(pc.unique(q.qid).to_pylist()) - have)
        if missing:
            parts.append(_without_documents(_judgments_of(q, pa.array(missing, pa.string())), parsed,
                                            dict(kwargs, complete=True), str(run_path)))
    if not parts:
        raise TierankInputError(f"no query of {run_path} is judged in {q.source}: nothing to evaluate "
                                "(query ids must match exactly)")
    first = (evaluated or parts)[0]
    settings = dict(first.settings, run=str(run_path), complete=complete, streamed=True)
    settings.pop("empty_batch", None)
    return _combine(parts, parts[0].measures, settings)


# -------------------------------------------------------------------------------------- partitioning


def partition(run_path: str | os.PathLike, out_dir: str | os.PathLike, *, buckets: int = 64,
              memory_limit: str = "1GB", temp_dir: str | os.PathLike | None = None) -> Path:
    """Write the TREC run at ``run_path`` (plain or gzip) grouped by query, out of core, with DuckDB.

    DuckDB reads the lines (whitespace-separated fields, as the TREC readers split them) with
    their line numbers and writes one Parquet file per query-hash bucket (``COPY ...
    PARTITION_BY``), under ``memory_limit`` and spilling to ``temp_dir``.  Each file holds whole
    queries; :func:`batches_of` reads them back in (query, line) order, so file order inside ties
    (``tie_break="input"``) is kept.  Comment lines (``#`` first) are skipped, as trec_eval does.
    Lines without 6 fields or with a score that is not a finite
    number are refused with their line numbers.  Returns ``out_dir``, which must not exist or be
    empty.  Needs ``pip install 'tierank[scale]'``.
    """
    try:
        import duckdb
    except ImportError:
        raise TierankInputError("partitioning needs DuckDB: pip install 'tierank[scale]'") from None
    src = str(run_path)
    if not Path(run_path).is_file():
        raise TierankInputError([Problem(src, None, "no such file")])
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TierankInputError(f"{out}: exists and is not an empty folder; partition writes a new folder")
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    if temp_dir is not None:
        con.execute(f"SET temp_directory = '{Path(temp_dir).as_posix()}'")
    lit = "'" + src.replace("'", "''") + "'"
    con.execute("SET enable_progress_bar = false")
    lines = (f"read_csv({lit}, columns={{'l': 'VARCHAR'}}, delim='\x01', quote='', escape='', header=false, "
             "auto_detect=false, strict_mode=false)")
    # fields split on runs of spaces and tabs (the readers' grammar); plain single spaces, the usual
    # layout, take the fast split
    irregular = con.execute(f"SELECT bool_or(contains(l, '\t') OR contains(l, '  ') OR starts_with(l, ' ') "
                            f"OR ends_with(l, ' ') OR contains(l, '\r')) FROM {lines}").fetchone()[0]
    split = ("string_split_regex(trim(l, ' \t\r'), '[ \t]+')" if irregular else "string_split(l, ' ')")
    con.execute(f"CREATE TEMP VIEW lines AS SELECT row_number() OVER () AS line, {split} AS f FROM {lines}")
    bad = con.execute("""SELECT line, len(f) FROM lines
        WHERE trim(f[1]) <> '' AND NOT starts_with(trim(f[1]), '#') AND (len(f) < 6 OR TRY_CAST(f[5] AS DOUBLE) IS NULL
                                    OR NOT isfinite(TRY_CAST(f[5] AS DOUBLE)))
        ORDER BY line LIMIT 5""").fetchall()
    if bad:
        raise TierankInputError([Problem(src, int(line), "expected 6 fields (qid Q0 docid rank score tag)"
                                         if n < 6 else "score is not a finite number") for line, n in bad])
    out.mkdir(parents=True, exist_ok=True)
    dest = "'" + out.as_posix().replace("'", "''") + "'"
    con.execute(f"""COPY (SELECT f[1] AS qid, f[3] AS docid, CAST(f[5] AS DOUBLE) AS score, line,
                         hash(f[1]) % {int(buckets)} AS bucket
                  FROM lines WHERE trim(f[1]) <> '' AND NOT starts_with(trim(f[1]), '#')) TO {dest}
                  (FORMAT parquet, PARTITION_BY (bucket), OVERWRITE_OR_IGNORE)""")
    return out


# ------------------------------------------------------------------------------------------ many runs


def _evaluate_named(args) -> tuple[str, EvalResult]:
    from .evaluate import evaluate

    name, qrels, run, measures, kwargs = args
    return name, evaluate(qrels, run, measures, **kwargs)


def run_names(runs) -> dict[str, object]:
    """``{name: run}`` from a mapping, or from paths named by :func:`tierank.io.naming.run_names`
    (the shortest distinguishing path suffix; the same file twice is an error).

    >>> list(run_names(["a/bm25.txt", "b/dense.txt"]))
    ['bm25.txt', 'dense.txt']
    >>> list(run_names(["sub/a.txt", "a.txt"]))
    ['sub/a.txt', 'a.txt']
    """
    return name_runs(runs)


def evaluate_many(qrels, runs, measures: Iterable[str] | str, *, jobs: int = 1,
                  progress: Callable[[str], None] | None = None, **kwargs) -> dict[str, EvalResult]:
    """Evaluate many runs against one qrels, read once: ``{run name: EvalResult}`` in the order given.

    ``runs`` is a list of paths (named by file name) or a dict ``{name: run}`` of any input
    :func:`tierank.evaluate` takes.  ``jobs`` worker processes evaluate runs in parallel;
    ``progress(name)`` is called as each run is done.  Each result equals
    ``tierank.evaluate(qrels, run, measures, **kwargs)``.

    >>> from tierank.examples import path
    >>> res = evaluate_many(path("qrels"), {"a": path("run"), "b": path("run")}, ["P@2"])
    >>> [(name, r.aggregate()["expected"].round(4).tolist()) for name, r in res.items()]
    [('a', [0.8333]), ('b', [0.8333])]
    """
    from .measures import parse_measures

    named = run_names(runs)
    if not named:
        raise TierankInputError("no run given")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    q = to_qrels(qrels)
    jobs_args = [(name, q, r if not isinstance(r, (str, os.PathLike)) else str(r), parsed, kwargs)
                 for name, r in named.items()]
    done: dict[str, EvalResult] = {}

    def finished(name: str, res: EvalResult) -> None:
        done[name] = res
        if progress is not None:
            progress(name)

    if jobs <= 1 or len(jobs_args) == 1:
        for a in jobs_args:
            finished(*_evaluate_named(a))
    else:
        with worker_pool(min(jobs, len(jobs_args)), pa.set_cpu_count, (1,)) as pool:
            for fut in as_completed([pool.submit(_evaluate_named, a) for a in jobs_args]):
                finished(*fut.result())
    return {name: done[name] for name in named}
