"""A killed evaluation leaves nothing behind: no worker process, no partial output (issue 22, item 8).

The run is a FIFO that this test holds open after writing part of the run, so the command is
certainly still running (its workers started, its main process waiting for more of the run) when
it is killed: no timing guesses.  Worker processes are found as the children of the command in
``/proc`` (Linux only).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc and makes FIFOs (Linux)"
)

RUN = "".join(
    f"q{q} Q0 d{d} {d + 1} {(d * 7) % 5} t\n" for q in range(200) for d in range(20)
).encode()
QRELS = "".join(f"q{q} 0 d{q % 20} 1\n" for q in range(200))


def _children(pid: int) -> set[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _fifo(path: Path, data: bytes) -> int:
    """A FIFO at ``path`` holding ``data``, kept open for writing (no end of file) until the fd is closed."""
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR)  # never blocks on Linux; the pipe buffer (64 KiB) holds the data
    os.write(fd, data)
    return fd


@pytest.mark.parametrize("how", ["stream", "several runs"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_evaluation_leaves_no_worker_and_no_output(tmp_path, sig, how):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    if (
        how == "stream"
    ):  # 2 workers, blocks of 2 kB: the first blocks go to the workers, the rest never comes
        runs = [tmp_path / "run.fifo"]
        fds = [_fifo(runs[0], RUN[:30_000])]
        extra = ["--block-bytes", "2000"]
    else:  # two runs at once: each worker reads a run that never ends
        runs = [tmp_path / "a.fifo", tmp_path / "b.fifo"]
        fds = [_fifo(r, RUN[:20_000]) for r in runs]
        extra = []
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "out.jsonl"
    log = tmp_path / "stderr.txt"  # a file: orphaned workers would hold a pipe open
    with open(log, "wb") as err:
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tierank.cli",
                "eval",
                str(qrels),
                *map(str, runs),
                "-j",
                "2",
                *extra,
                "-m",
                "AP",
                "-f",
                "jsonl",
                "-o",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
            workers = _children(p.pid)
        assert p.poll() is None and len(workers) == 2, f"no 2 workers started: {log.read_text()!r}"
        time.sleep(0.3)  # the workers busy with (or waiting on) the run
        p.send_signal(sig)
        p.wait(timeout=15)
        assert (
            p.returncode == -sig
        )  # SIGTERM: cleaned up, then died of the signal as the caller expects
        deadline = time.monotonic() + 5
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [w for w in workers if _alive(w)]
        assert not left, f"workers {left} outlived their parent ({signal.Signals(sig).name})"
        assert "Traceback" not in log.read_text()
        assert os.listdir(tmp_path / "out") == []  # no output, no temporary file
    finally:
        for fd in fds:
            os.close(fd)
        if p.poll() is None:
            p.kill()
            p.wait()
        for w in workers:  # never leave a stray process, even when the test fails
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_the_watchdog_alone_ends_an_orphaned_worker(tmp_path):
    """Where there is no parent-death signal (not Linux), the worker's own watchdog thread ends it."""
    ready = tmp_path / "ready"
    middle = (
        "import os, sys, time\n"
        "from tierank.stream.workers import die_with_parent\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.platform = 'darwin'  # no prctl: the watchdog alone\n"
        "    die_with_parent(os.getppid())\n"
        f"    open({str(ready)!r}, 'w').close()\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(pid, flush=True)\n"
        f"while not os.path.exists({str(ready)!r}):\n"
        "    time.sleep(0.01)\n"
        "os._exit(0)\n"
    )
    p = subprocess.run([sys.executable, "-c", middle], capture_output=True, text=True, timeout=30)
    child = int(p.stdout.split()[0])
    try:
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the worker never got to wait"
        assert not _alive(child), "the orphaned worker is still running"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
