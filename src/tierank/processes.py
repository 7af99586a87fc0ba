"""Facts about operating-system processes that several rooms need (a bottom room: the standard library only).

`keep_freed_memory` tunes the C allocator of a process tierank owns (a worker, the command line):
big buffers freed are kept for the next block rather than given back to the system and faulted in again.

[`alive`][tierank.processes.alive] tells whether a process still runs: temporary files and folders named after the
process that writes them ([`tierank.io.writers`][tierank.io.writers], [`tierank.hps.checkpoints`][tierank.hps.checkpoints]) are removed
only once their maker is gone.
"""

import os  # (no ``from __future__ import annotations``: a module, read before Ctrl-C is tierank's)

__all__ = ["alive", "keep_freed_memory", "quiet_interrupt_at_start", "tierank_program"]


def alive(pid: int) -> bool:
    """Whether process ``pid`` (of this machine) still runs; True where that cannot be told.

    This process is alive; on Windows, where ``os.kill(pid, 0)`` would end the process, every pid
    counts as alive (nothing is removed); another user's process counts as alive.

    >>> alive(os.getpid())
    True
    """
    if pid == os.getpid() or os.name != "posix":  # on Windows os.kill(pid, 0) would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists (another user's), or not ours to judge
    return True


#: the interpreter options that take a value as the next argument
_VALUED = ("-X", "-W", "-Q")


def tierank_program(orig_argv: list[str] | None = None) -> bool:
    """Whether this process is the ``tierank`` program: its console script, or ``python -m tierank.cli``
    (``orig_argv``: the interpreter's own command line, `sys.orig_argv`); never a Python caller's
    process that imports tierank.

    >>> tierank_program(["/venv/bin/python", "/venv/bin/tierank", "eval"])
    True
    >>> tierank_program(["python", "-X", "importtime", "-m", "tierank.cli", "eval"])
    True
    >>> tierank_program(["python", "-m", "pytest"]), tierank_program(["python", "-c", "import tierank"])
    (False, False)
    """
    import sys

    argv = list(getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv)
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return argv[i + 1 : i + 2] == ["tierank.cli"]
        if a.startswith("-m"):
            return a[2:] == "tierank.cli"
        if a == "-c" or a == "-":
            return False
        if not a.startswith("-"):  # the script: tierank's console script is named tierank
            name = os.path.basename(a)
            return name.removesuffix(".exe").removesuffix("-script.py") == "tierank"
        i += 2 if a in _VALUED else 1
    return False


def _interrupted_at_start(signum, frame) -> None:
    """Ctrl-C in the ``tierank`` program: inside the command ([`tierank.cli.main`][tierank.cli.main] on the stack) the
    usual ``KeyboardInterrupt``, whose handlers clean up and exit 130; before it (the imports, the start-up)
    or after it, nothing to clean up: exit 130 at once, without a traceback."""
    f = frame
    while f is not None:
        if f.f_code.co_name == "main" and f.f_globals.get("__name__") == "tierank.cli":
            raise KeyboardInterrupt
        f = f.f_back
    os._exit(130)


def quiet_interrupt_at_start(held: list | None = None) -> None:
    """In the ``tierank`` program ([`tierank_program`][tierank.processes.tierank_program]) only, and where Ctrl-C has its usual handler:
    Ctrl-C from now on ends the program with exit 130 and no traceback wherever it lands, also in the
    first imports, before the command line's own handling begins.  Called first thing by ``import tierank``.

    ``held``: the Ctrl-Cs ``import tierank`` held since its first line (its handler appends to it; None
    where it set none): in the program, one there ends it now (exit 130); in a Python caller's process
    Python's own handler is put back and one there is raised as the ``KeyboardInterrupt`` it would
    have been.  It imports nothing but the interpreter's built-in ``_signal``."""
    import _signal  # type: ignore[import-not-found]

    try:
        if not tierank_program():
            if held is not None:
                _signal.signal(_signal.SIGINT, _signal.default_int_handler)
                if held:
                    raise KeyboardInterrupt
            return
        if held is not None or _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
            _signal.signal(_signal.SIGINT, _interrupted_at_start)
    except ValueError:  # not the main thread: signals are not ours to set
        return
    if held:  # a Ctrl-C during tierank's first lines: nothing to clean up yet
        os._exit(130)


#: glibc's ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: allocations below this come from the C heap, and this much free memory at its top is kept
KEEP_BYTES = 1 << 30


def keep_freed_memory(limit: int = KEEP_BYTES) -> bool:
    """Ask the C allocator (glibc) to serve allocations below ``limit`` bytes from its heap and to keep
    freed memory for reuse, in this process; True if it agreed.

    By default glibc gives every allocation above 128 KB to 32 MB its own memory map and returns it to the
    system when freed, so each block of a streamed run (its bytes, Arrow's input, NumPy's temporaries)
    is faulted in page by page again: about a third of the system time of a worker.  Kept, a
    worker's memory is its largest block's working set, not more: it stays flat while streaming.  Only
    processes tierank owns call this (its worker processes, the command line), never a library caller's
    process.  Elsewhere than glibc (macOS, Windows, musl) it does nothing and returns False.
    """
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, limit)) and bool(mallopt(_M_TRIM_THRESHOLD, limit))
