"""Facts about operating-system processes that several rooms need (a bottom room: the standard library only).

:func:`keep_freed_memory` tunes the C allocator of a process tierank owns (a worker, the command line):
big buffers freed are kept for the next block rather than given back to the system and faulted in again.

:func:`alive` tells whether a process still runs: temporary files and folders named after the
process that writes them (:mod:`tierank.io.writers`, :mod:`tierank.hps.checkpoints`) are removed
only once their maker is gone.
"""

from __future__ import annotations

import os

__all__ = ["alive", "keep_freed_memory"]


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
