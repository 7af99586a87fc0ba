"""Worker processes that never outlive the evaluation ([`worker_pool`][tierank.stream.workers.worker_pool]).

They die with their parent, even one killed with SIGKILL (``prctl(PR_SET_PDEATHSIG)`` on Linux, a
watchdog thread elsewhere), and are terminated at once when the work stops on an error or an
interrupt.  Used by streaming (`tierank.stream.evaluate`), many runs (`tierank.stream.many`)
and the permutation tests of [`tierank.analysis.inference`][tierank.analysis.inference].
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from ..processes import keep_freed_memory

__all__ = ["worker_pool", "die_with_parent", "WATCH_SECONDS"]


@contextmanager
def worker_pool(
    jobs: int, initializer: Callable | None = None, initargs: tuple = ()
) -> Iterator[ProcessPoolExecutor]:
    """A `ProcessPoolExecutor` of ``jobs`` workers that never outlive this process.

    * Each worker dies with its parent: on Linux the kernel sends it SIGKILL when the parent dies
      (``prctl(PR_SET_PDEATHSIG)``), even when the parent is killed with SIGKILL; elsewhere a
      thread in the worker polls its parent's pid and exits when the worker is orphaned.
    * Leaving the block by an exception (an error, Ctrl-C, SIGTERM turned into
      ``KeyboardInterrupt`` by the command line, a generator closed early) cancels the tasks not
      started and terminates the workers at once, rather than waiting for the tasks in flight.
    * Workers keep the memory they free for their next task (`tierank.processes.keep_freed_memory`).
    * Workers ignore SIGINT (Ctrl-C reaches the whole process group: the parent alone handles
      it, so the workers print no traceback) and die quietly on SIGTERM.
    """
    import multiprocessing

    ctx = multiprocessing.get_context()
    # the pid a worker's parent must have: this process, except under the forkserver (its parent
    # is the server, which exits when this process does)
    parent = os.getpid() if ctx.get_start_method() != "forkserver" else None
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=_start_worker,
        initargs=(parent, initializer, initargs),
    )
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
    die_with_parent(parent)
    keep_freed_memory()  # a process of ours: each block reuses the memory of the one before
    if initializer is not None:
        initializer(*initargs)


#: how often an orphaned worker notices, where the kernel does not tell it (seconds)
WATCH_SECONDS = 0.5


def die_with_parent(parent: int | None) -> None:
    """Make this worker exit when its parent process does (see [`worker_pool`][tierank.stream.workers.worker_pool])."""
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
