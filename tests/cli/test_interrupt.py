"""Ctrl-C at any moment of the ``tierank`` program, its imports included: exit 130, no traceback."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import pytest

import tierank
from tierank.processes import tierank_program

EXAMPLE = tierank.__file__.rsplit("/", 1)[0] + "/examples/"
QRELS, RUN = EXAMPLE + "figure1.qrels", EXAMPLE + "figure1.run"

# Python code that runs the program as ``python -m tierank.cli`` does (its ``sys.orig_argv``), and sends
# itself SIGINT the moment the module MODULE is imported: a Ctrl-C landing exactly there.
INTERRUPTED_IMPORT = """
import os, signal, sys
sys.orig_argv = [sys.executable, "-m", "tierank.cli", *sys.argv[1:]]

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
from tierank.cli import run
run()
"""


@pytest.mark.parametrize(
    "module",
    [
        "tierank.processes",
        "tierank.errors",
        "tierank.evaluate",
        "tierank.cli.common",
        "tierank.cli.eval",
        "tierank.report.terminal",
    ],
)
def test_interrupt_in_the_imports_exits_130_quietly(module):
    """A Ctrl-C in the imports (before the command's own handling) once gave a 12-31 line traceback and
    death by SIGINT; in the command (the last module), the usual clean exit 130."""
    p = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_IMPORT.format(module=module), "eval", QRELS, RUN],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 130, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "KeyboardInterrupt" not in p.stderr
    assert p.stdout == ""


def test_only_the_program_handles_an_interrupt_so():
    """A Python caller importing tierank keeps Python's Ctrl-C (a KeyboardInterrupt it can catch)."""
    code = "import signal, tierank; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        == "True\n"
    )
    assert tierank_program(["python", "-m", "tierank.cli", "eval"])
    assert tierank_program(["/usr/bin/python3", "-W", "ignore", "/venv/bin/tierank", "eval"])
    assert not tierank_program(["python", "-m", "pytest", "tierank"])
    assert not tierank_program(["python", "script.py", "tierank"])
    assert not tierank_program(["python", "-c", "import tierank", "-m", "tierank.cli"])


@pytest.mark.full
def test_interrupt_at_random_moments_of_the_start():
    """Real Ctrl-Cs in the first 0.8 s: exit 130 (or 0: done before it), never a traceback through
    tierank's code.  (One landing in the interpreter's own start-up, before any tierank code runs, is
    Python's to report.)"""
    rng = random.Random(1)
    for _ in range(12):
        p = subprocess.Popen(
            [sys.executable, "-m", "tierank.cli", "eval", QRELS, RUN],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(rng.uniform(0.0, 0.8))
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if "tierank" not in err or "quiet_interrupt_at_start" in err:
            # before tierank's first line, or while its first line imports and installs the quiet
            # handler (the import of `signal` included): no tierank code can catch it yet
            continue
        assert p.returncode in (0, 130) and "Traceback" not in err, (p.returncode, err)


# Records every module looked up from tierank's first import until Ctrl-C is tierank's (a Ctrl-C in
# any of them would still be Python's traceback), then runs ``tierank --version`` as the program.
BEFORE_THE_HANDLER = """
import _signal, sys
sys.orig_argv = [sys.executable, "-m", "tierank.cli", "--version"]
seen = []

class Record:
    def find_spec(self, name, path=None, target=None):
        if seen or name == "tierank":
            if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
                seen.append(name)
        return None

sys.meta_path.insert(0, Record())
import tierank
sys.meta_path.pop(0)
print(" ".join(seen))
print(_signal.getsignal(_signal.SIGINT) is _signal.default_int_handler)
"""


def test_the_handler_is_installed_before_any_other_import():
    """tierank's first lines hold Ctrl-C before any module is read (not after ``tierank.processes``
    and ``signal``, whose ``enum`` and friends took milliseconds in which a Ctrl-C gave a traceback)."""
    p = subprocess.run(
        [sys.executable, "-c", BEFORE_THE_HANDLER], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["tierank", "False"]


def test_a_python_caller_gets_the_interrupt_held_during_the_import():
    """The same Ctrl-C in a Python caller's ``import tierank``: its KeyboardInterrupt, and Python's own
    handler back."""
    code = INTERRUPTED_IMPORT.format(module="tierank.processes").replace(
        'sys.orig_argv = [sys.executable, "-m", "tierank.cli", *sys.argv[1:]]', ""
    )
    code = code.replace(
        "from tierank.cli import run\nrun()",
        "try:\n    import tierank\nexcept KeyboardInterrupt:\n    import signal\n"
        "    print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)",
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout, p.stderr) == (0, "True\n", "")
