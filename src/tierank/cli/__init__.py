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

import sys
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

from . import app as _root  # the module; its Typer object is ``tierank.cli.app`` (see __getattr__)

__all__ = ["app", "main", "run"]

# ``from . import app`` bound the module :mod:`tierank.cli.app` here: the name ``app`` is the Typer
# object, given by ``__getattr__`` once every command is registered on it.
del globals()["app"]

#: the modules that register the commands, in the order of ``tierank --help``
COMMAND_MODULES = ("eval", "analysis", "similarity", "diversity", "plots", "rerank", "mteb", "misc")

#: the module of each top-level command (a group's sub-commands are in its module): a command line
#: imports only its command's module; ``tierank``, ``tierank --help`` and an unknown name import all
COMMANDS = {
    "eval": "eval",
    "ties": "analysis",
    "sweep": "analysis",
    "compare": "analysis",
    "bands": "analysis",
    "similarity": "similarity",
    "diversity": "diversity",
    "plot": "plots",
    "report": "plots",
    "rerank": "rerank",
    "mteb": "mteb",
    "measures": "misc",
    "example": "misc",
}


def register(names=COMMAND_MODULES):
    """The Typer app with the commands of ``names`` (modules of :mod:`tierank.cli`) registered on it;
    registered in the order of ``tierank --help`` whatever the order they were asked for in."""
    app = _root.app
    for name in names:
        import_module(f"{__name__}.{name}")
    if len(names) > 1:
        order = {f"{__name__}.{name}": i for i, name in enumerate(COMMAND_MODULES)}
        app.registered_commands.sort(
            key=lambda c: order.get(getattr(c.callback, "__module__", ""), 0)
        )
    return app


def __getattr__(name: str):
    if name == "app":  # every command registered (the complete `tierank`, as Python callers use it)
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_app(argv: list[str]):
    """The Typer app with what the command line ``argv`` needs: the module of its command only (the
    command-line start-up, without the imports of the other commands), or every command."""
    first = argv[0] if argv else ""
    module = COMMANDS.get(first)
    return register((module,) if module else COMMAND_MODULES)


def main() -> None:
    """Run the command line in this process (typer's ``SystemExit`` carries the status)."""
    app = command_app(sys.argv[1:])
    if COMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "") != "eval" or "pandas" in sys.modules:
        app()
        return
    hide = PandasForPyarrow()
    sys.meta_path.insert(0, hide)
    try:
        app()
    finally:
        sys.meta_path.remove(hide)


class PandasForPyarrow:
    """A module finder that keeps pyarrow from importing pandas (about 0.2 s) in ``tierank eval``.

    pyarrow imports pandas on its first ``pa.array``, ``to_numpy`` or ``np.asarray`` of an array, to
    recognise pandas inputs and pandas' missing values (a command line hands it none).  While this finder
    is installed, such an import from pyarrow's compiled code (no ``import`` statement of Python code asks
    for it) fails as if pandas were not installed, and pyarrow goes on without it; an ``import pandas``
    written in Python (a ``--format trec_eval`` summary) imports it as usual, and once imported it is
    pyarrow's too.
    """

    attempts = 0

    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        if frame is not None and frame.f_code.co_code[frame.f_lasti] == _IMPORT_NAME:
            return None  # a Python import statement: the usual import
        PandasForPyarrow.attempts += 1
        raise ImportError("pandas is not imported for pyarrow by tierank eval", name=name)


_IMPORT_NAME = __import__("opcode").opmap["IMPORT_NAME"]


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
