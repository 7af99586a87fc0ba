"""Shared test helpers."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``tierank ARGS...`` as users do (a subprocess); assert success unless ``check`` is False."""
    p = subprocess.run([sys.executable, "-m", "tierank.cli", *map(str, args)], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p
