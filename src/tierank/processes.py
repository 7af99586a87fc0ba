"""Facts about operating-system processes that several rooms need (a bottom room: the standard library only).

:func:`alive` tells whether a process still runs: temporary files and folders named after the
process that writes them (:mod:`tierank.io.writers`, :mod:`tierank.hps.checkpoints`) are removed
only once their maker is gone.
"""

from __future__ import annotations

import os

__all__ = ["alive"]


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
