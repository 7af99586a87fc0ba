"""Command line: ``tierank eval QRELS RUN -m nDCG@10 -m RR@10 ...``.

Bad input is reported as one line per problem on stderr (``file:line: reason``)
with exit code 2, never a traceback.

One module per command group: :mod:`.eval`, :mod:`.analysis` (ties, sweep,
compare, bands), :mod:`.plots` (the plot and report groups), :mod:`.rerank`,
:mod:`.mteb` (MTEB's saved predictions), :mod:`.misc` (measures, example); the shared option types, the error decorator
and the output helpers are in :mod:`.common`, and every table printed on the
terminal is built in :mod:`tierank.report.terminal`.
"""

from __future__ import annotations

from .app import app

__all__ = ["app", "main", "run"]

# the command modules register on `app`; this order is the order of `tierank --help`
from . import eval, analysis, similarity, diversity, plots, rerank, mteb, misc  # noqa: E402,F401,I001


def main() -> None:
    """Run the command line in this process (typer's ``SystemExit`` carries the status)."""
    app()


def run() -> None:
    """The ``tierank`` program: :func:`main`, then leave without interpreter finalization.

    SIGTERM (what ``timeout``, Slurm and Kubernetes send) is handled as Ctrl-C is: it raises
    ``KeyboardInterrupt`` in the command, so that worker processes are terminated and no partial
    output is left (outputs are written atomically, at the end); the program then dies of SIGTERM.

    Output is flushed first.  ``os._exit`` skips the finalizers because, once in
    a few dozen runs, a native thread pool's teardown at interpreter exit aborted
    the process (``terminate called without an active exception``, exit 134)
    after all output was written.  Python callers use :func:`main`.
    """
    import os
    import signal
    import sys

    terminated: list[int] = []
    finished: list[bool] = []

    def on_sigterm(signum, frame):
        if not terminated:  # once: a second SIGTERM does not interrupt the cleanup
            terminated.append(signum)
            if not finished:  # after the command returned, only remember it (die of it below)
                raise KeyboardInterrupt

    handled = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # left alone where it is ignored
    if handled:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        main()
        code = 0
    except SystemExit as done:
        status = done.code
        if status is None:
            code = 0
        elif isinstance(status, int):
            code = status
        else:
            print(status, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # outside the command (click turns one inside into exit 1)
        code = 130
    finished.append(True)
    if handled:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    if terminated:  # cleaned up: now die of the signal, as the caller expects
        os.kill(os.getpid(), signal.SIGTERM)
    os._exit(code)


__all__ = ["app", "main", "run"]
