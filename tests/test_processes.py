"""tierank.processes: the C allocator of a process tierank owns keeps the memory it frees."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tierank.processes import keep_freed_memory

# a 48 MB buffer allocated, freed and allocated again: the page faults of the second allocation
_FAULTS = """
import resource, sys
from tierank.processes import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
n = 48 << 20
b = bytearray(n); b[::4096] = b"x" * len(b[::4096]); del b
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = bytearray(n); b[::4096] = b"x" * len(b[::4096])
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def test_freed_buffers_are_reused_without_page_faults():
    """Without the setting glibc maps a 48 MB buffer afresh (about 12,000 pages faulted in again); with it the
    second buffer reuses the first one's memory."""
    if not sys.platform.startswith("linux") or not keep_freed_memory():
        pytest.skip("glibc's mallopt only (Linux)")
    pages = (48 << 20) // 4096
    assert _faults("default") > pages // 2
    assert _faults("keep") < pages // 10
