"""Where the bytes come from: gzip (broken ones too), pipes, ``/dev/stdin``; readable error lines.

Issue 11: broken gzip ended in a traceback (``OSError``, ``zlib.error``,
``EOFError``); non-seekable inputs could not be read; error lines echoed
whole 2-million-character tokens.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading

import pytest

from helpers import invoke, run_cli
from tierank import TierankInputError, read_qrels, read_run
from tierank.errors import Problem, quote, shorten
from tierank.io.readers import first_fields

RUN = b"q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 a 1 3.0 t\n"
QRELS = b"q1 0 a 1\nq1 0 b 0\nq2 0 a 1\n"


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


BROKEN_GZIP = {
    "truncated": (_gz(RUN)[:-12], "truncated gzip data: the compressed stream ends early"),
    "header only": (_gz(RUN)[:10], "truncated gzip data: the compressed stream ends early"),
    "magic only": (b"\x1f\x8b", "truncated gzip data: the compressed stream ends early"),
    "corrupt": (_gz(RUN)[:12] + b"\xff" * 8 + _gz(RUN)[20:], "corrupt gzip data"),
    "bad checksum": (_gz(RUN)[:-8] + b"\x00\x00\x00\x00" + _gz(RUN)[-4:], "corrupt gzip data"),
    "trailing garbage": (
        _gz(RUN) + b"garbage",
        "unexpected data after the end of the gzip stream (at byte",
    ),
}


@pytest.mark.parametrize("name", BROKEN_GZIP)
def test_broken_gzip_is_one_located_line(tmp_path, name):
    data, reason = BROKEN_GZIP[name]
    p = tmp_path / "run.gz"
    p.write_bytes(data)
    for reader in (read_run, read_qrels):
        with pytest.raises(TierankInputError) as e:
            reader(p)
        assert len(e.value.problems) == 1
        assert str(e.value).startswith(f"{p}: {reason}")


def test_broken_gzip_on_the_command_line(tmp_path):
    (tmp_path / "run.gz").write_bytes(BROKEN_GZIP["truncated"][0])
    (tmp_path / "qrels").write_bytes(QRELS)
    p = invoke("eval", tmp_path / "qrels", tmp_path / "run.gz", "-m", "P@1", check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert (
        p.stderr.strip()
        == f"tierank: error: {tmp_path / 'run.gz'}: truncated gzip data: the compressed stream ends early"
    )


def test_gzip_members_and_zero_padding_are_read(tmp_path):
    p = tmp_path / "run.gz"
    p.write_bytes(_gz(RUN[:20]) + _gz(RUN[20:]) + bytes(512))  # two members, then tape padding
    assert read_run(p).docid.to_pylist() == ["a", "b", "a"]


def test_gzip_of_nothing_is_an_empty_run(tmp_path):
    p = tmp_path / "run.gz"
    p.write_bytes(_gz(b""))
    with pytest.raises(TierankInputError, match=r"run.gz: empty run: no result lines$"):
        read_run(p)


# ------------------------------------------------------------ non-seekable inputs


def _fifo(tmp_path, name: str, data: bytes):
    """A named pipe that one writer fills once (a reader that opens it twice would wait forever)."""
    path = tmp_path / name
    os.mkfifo(path)

    def feed():
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except BrokenPipeError:
            pass

    threading.Thread(target=feed, daemon=True).start()
    return path


def _within(seconds: float, fn, *args):
    """``fn(*args)``, failing the test (instead of hanging it) if it blocks on a pipe."""
    out = {}

    def call():
        try:
            out["value"] = fn(*args)
        except BaseException as e:  # re-raised below, in the test's thread
            out["error"] = e

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn.__name__} still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.parametrize("gz", [False, True])
def test_a_fifo_is_read_once(tmp_path, gz):
    path = _fifo(tmp_path, "run", _gz(RUN) if gz else RUN)
    run = _within(20, read_run, path)
    assert run.docid.to_pylist() == ["a", "b", "a"] and run.score.tolist() == [2.0, 1.0, 3.0]


def test_peeking_at_a_fifo_leaves_its_bytes_for_the_reader(tmp_path):
    path = _fifo(tmp_path, "run", RUN)
    assert _within(20, first_fields, path) == ["q1", "Q0", "a", "1", "2.0", "t"]
    assert _within(20, read_run, path).docid.to_pylist() == ["a", "b", "a"]


def test_first_fields_reads_the_start_of_regular_files(tmp_path):
    p = tmp_path / "q.gz"
    p.write_bytes(_gz(b"\xef\xbb\xbf\n \t\nq1\t0  a 1\n" + b"q1 0 b 0\n" * 100_000))
    assert first_fields(p) == ["q1", "0", "a", "1"]
    p.write_bytes(b"")
    assert first_fields(p) is None


@pytest.mark.parametrize("gz", [False, True])
def test_dev_stdin_pipe(tmp_path, gz):
    code = (
        "import sys; from tierank import read_run; print(read_run('/dev/stdin').docid.to_pylist())"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], input=_gz(RUN) if gz else RUN, capture_output=True
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode().strip() == "['a', 'b', 'a']"


def test_process_substitution_on_the_command_line(tmp_path):
    (tmp_path / "run").write_bytes(RUN)
    (tmp_path / "qrels").write_bytes(QRELS)
    direct = run_cli("eval", tmp_path / "qrels", tmp_path / "run", "-m", "P@1", "-f", "json").stdout
    cmd = (
        f"{sys.executable} -m tierank.cli eval <(cat {tmp_path / 'qrels'}) <(gzip -c {tmp_path / 'run'})"
        " -m P@1 -f json"
    )
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr

    def strip(text):
        return [
            line
            for line in text.splitlines()
            if "/dev/fd/" not in line and str(tmp_path) not in line
        ]

    assert strip(p.stdout) == strip(direct)


# ------------------------------------------------------------- readable messages


def test_shorten():
    assert shorten("x" * 80) == "x" * 80
    assert shorten("x" * 2_000_000) == "x" * 80 + "…(2,000,000 chars)"
    assert quote("a\nb") == "'a\\nb'"


def test_a_huge_token_gives_a_short_error_line(tmp_path):
    big = "d" * 2_000_000
    p = tmp_path / "run"
    digits = "7" * 2_000_000 + "x"  # also: the number grammar must not backtrack on it
    p.write_text(f"q Q0 {big} 1 1 t\nq Q0 {big} 2 1 t\nq Q0 e 3 {big} t\nq Q0 f 4 {digits} t\n")
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    lines = str(e.value).splitlines()
    assert lines == [
        f"{p}:2: document '{'d' * 80}…(2,000,000 chars)' appears twice in query 'q' (first at line 1)",
        f"{p}:3: score '{'d' * 80}…(2,000,000 chars)' is not a number",
        f"{p}:4: score '{'7' * 80}…(2,000,001 chars)' is not a number",
    ]


def test_a_huge_valid_docid_is_read(tmp_path):
    p = tmp_path / "run"
    p.write_text(f"q Q0 {'d' * 2_000_000} 1 1 t\nq Q0 e 2 1 t\n")
    assert [len(d) for d in read_run(p).docid.to_pylist()] == [2_000_000, 1]


def test_problem_lines_stay_located():
    assert str(Problem("f", 3, "bad")) == "f:3: bad"
