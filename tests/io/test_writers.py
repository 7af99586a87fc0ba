"""The one output writer: atomic, never replaces a special file or an input, cleans up after a kill."""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.errors import TierankInputError
from tierank.io.readers import read_run
from tierank.io.writers import (
    check_output,
    clean_stale_temps,
    ensure_dir,
    run_text,
    write_atomic,
    write_run,
)

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
TMP_RE = re.compile(r"^\..*\.tierank-[A-Za-z0-9-]*-\d+-[0-9a-f]{8}\.tmp$")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _temp_name(target: str, pid: int) -> str:
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32]
    return f".{target}.tierank-{host}-{pid}-0123abcd.tmp"


# -- plain writing -------------------------------------------------------------------------------


def test_write_atomic_writes_text_and_bytes_with_ordinary_permissions(tmp_path):
    out = write_atomic(tmp_path / "a.txt", "é\n")
    assert out == tmp_path / "a.txt" and out.read_bytes() == "é\n".encode()
    write_atomic(out, b"\x00\x01")
    assert out.read_bytes() == b"\x00\x01"
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temporary file left


def test_dash_means_stdout(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert check_output("-") is None
    assert write_atomic("-", "to stdout\n") is None
    assert capfd.readouterr().out == "to stdout\n"
    assert not (tmp_path / "-").exists()  # before: a file named '-'


def test_pieces_are_written_one_after_the_other(tmp_path, capfd):
    """Bytes-like pieces (bytes, memoryview, an Arrow buffer), as trec_eval's layout hands them over:
    the file holds them in order and nothing else is left in its folder; stdout gets the same."""
    import pyarrow as pa

    from tierank.cli.common import emit

    pieces = [b"a\tb\n", memoryview(b"\xc3\xa9\n"), pa.py_buffer(b"last\n"), b""]
    out = write_atomic(tmp_path / "p.txt", pieces)
    assert out is not None and out.read_bytes() == "a\tb\né\nlast\n".encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.txt"]
    print("text first", end="\n")
    emit(pieces, None, ())
    write_atomic("-", pieces)
    assert capfd.readouterr().out == "text first\n" + "a\tb\né\nlast\n" * 2


# -- special files ---------------------------------------------------------------------------------


def test_fifo_is_refused_and_kept(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TierankInputError, match=r"fifo: is a special file \(FIFO\).*-o -"):
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # before: replaced by a regular file


def test_symlink_to_fifo_is_refused_and_kept(tmp_path):
    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(fifo)
    with pytest.raises(TierankInputError, match="special file"):
        write_atomic(link, "x")
    assert link.is_symlink() and stat.S_ISFIFO(os.stat(link).st_mode)


def test_socket_is_refused(tmp_path):
    short = Path(tempfile.mkdtemp(prefix="tr", dir="/tmp"))  # AF_UNIX paths are short
    try:
        path = short / "s"
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))
            with pytest.raises(TierankInputError, match=r"\(socket\)"):
                write_atomic(path, "x")
            assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        for p in short.iterdir():
            p.unlink()
        short.rmdir()


@pytest.mark.parametrize(
    "path", ["/dev/null", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "/dev/new-file"]
)
def test_device_nodes_and_system_folders_are_refused(path):
    # checked with check_output only: a regression in write_atomic must not get to replace /dev/null
    with pytest.raises(TierankInputError, match=r"-o -"):
        check_output(path)


def test_symlink_into_dev_is_refused(tmp_path):
    (tmp_path / "devnull").symlink_to("/dev/null")
    (tmp_path / "dev").symlink_to("/dev")
    for p in (
        tmp_path / "devnull",
        tmp_path / "dev" / "null",
        tmp_path / "dev" / "tierank-test-file",
    ):
        with pytest.raises(TierankInputError, match=r"-o -"):
            check_output(p)
    assert not Path("/dev/tierank-test-file").exists()


# -- inputs, directories, folders -----------------------------------------------------------------


def test_refuses_to_overwrite_an_input_also_through_links(tmp_path):
    src = tmp_path / "in.run"
    src.write_text("keep\n")
    (tmp_path / "soft").symlink_to(src)
    os.link(src, tmp_path / "hard")
    for target in (src, tmp_path / "soft", tmp_path / "hard"):
        with pytest.raises(TierankInputError, match="refusing to overwrite an input"):
            write_atomic(target, "x", protect=(str(src),))
    assert src.read_text() == "keep\n"
    write_atomic(
        tmp_path / "other", "x", protect=(src, "-", None, {"q": {}})
    )  # '-' (stdin), objects: no files


def test_directory_and_missing_folder(tmp_path):
    with pytest.raises(TierankInputError, match="is a directory"):
        write_atomic(tmp_path, "x")
    with pytest.raises(TierankInputError, match="folder .* does not exist"):
        write_atomic(tmp_path / "no" / "such.txt", "x")


@pytest.mark.skipif(ROOT, reason="root may write into any folder")
def test_non_writable_folder_is_refused_before_work(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(TierankInputError, match="not writable"):
            check_output(ro / "out.txt")
    finally:
        ro.chmod(0o700)


def test_failing_temp_file_creation_is_a_clear_error(tmp_path, monkeypatch):
    # e.g. a read-only file system, or a folder the process may not write into (PermissionError from
    # mkstemp before the fix)
    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(
        TierankInputError, match=r"out\.txt: cannot write into folder .*Permission denied"
    ):
        write_atomic(tmp_path / "out.txt", "x")


# -- temporary files: named, cleaned up after a kill --------------------------------------------


def test_stale_temp_files_of_dead_writers_are_removed_and_nothing_else(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / _temp_name("old.txt", dead)
    alive = tmp_path / _temp_name("old.txt", os.getppid())
    foreign_host = tmp_path / f".old.txt.tierank-otherhost-{dead}-0123abcd.tmp"
    users = [tmp_path / n for n in (".old.txt.tmp", f"old.txt.tierank-{dead}.tmp", "notes.tmp")]
    for p in (stale, alive, foreign_host, *users):
        p.write_text("x")
    linked = tmp_path / _temp_name("link.txt", dead)
    linked.mkdir()  # not a regular file: left alone
    write_atomic(tmp_path / "new.txt", "y")
    left = {p.name for p in tmp_path.iterdir()}
    assert stale.name not in left
    assert {alive.name, foreign_host.name, linked.name, "new.txt", *(p.name for p in users)} == left
    assert clean_stale_temps(tmp_path / "missing") == []


_KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    from tierank.io import writers

    def hang(fd):  # stop inside the write, after the data reached the temporary file
        print("writing", flush=True)
        time.sleep(600)

    os.fsync = hang
    writers.write_atomic(sys.argv[1], "new contents\\n" * 100000)
""")


def test_sigkill_mid_write_keeps_the_old_file_and_the_next_write_cleans_up(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old contents\n")
    p = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert p.stdout.readline() == "writing\n"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
    assert p.returncode == -signal.SIGKILL
    assert target.read_text() == "old contents\n"  # atomic: the old file is intact
    temps = [q for q in tmp_path.iterdir() if q != target]
    assert len(temps) == 1 and TMP_RE.match(temps[0].name) and str(p.pid) in temps[0].name
    assert temps[0].stat().st_size > 0
    write_atomic(tmp_path / "other.txt", "z")  # any later write into the folder
    assert sorted(q.name for q in tmp_path.iterdir()) == ["other.txt", "out.txt"]
    assert target.read_text() == "old contents\n"


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(
        TierankInputError, match="out.txt: cannot write: No space left on device; the existing file"
    ):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


# -- TREC runs --------------------------------------------------------------------------------------


def test_write_run_worked_example(tmp_path):
    out = write_run(
        tmp_path / "r.run",
        ["q2", "q10", "q10", "q10", "q2"],
        ["a", "b", "c", "d", "e"],
        np.array([1.0, 0.5, 0.1 + 0.2, 0.5, -0.0]),
        "tag",
    )
    assert out.read_text() == (
        "q10 Q0 b 1 0.5 tag\n"
        "q10 Q0 d 2 0.5 tag\n"  # equal scores keep their input order
        "q10 Q0 c 3 0.30000000000000004 tag\n"
        "q2 Q0 a 1 1.0 tag\n"
        "q2 Q0 e 2 -0.0 tag\n"
    )


def test_write_run_accepts_arrow_arrays_as_the_reader_returns_them(tmp_path):
    run = read_run(
        write_run(tmp_path / "a.run", ["1", "1", "2"], ["x", "y", "z"], [3.0, 2.0, 1.0], "t")
    )
    out = write_run(tmp_path / "b.run", run.qid, run.docid, run.score, "t")
    assert out.read_bytes() == (tmp_path / "a.run").read_bytes()


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.floats(allow_nan=False, allow_infinity=False, width=64)),
        min_size=1,
        max_size=40,
    )
)
def test_write_run_scores_read_back_exactly(rows):
    with tempfile.TemporaryDirectory() as d:
        qids = [f"q{q}" for q, _ in rows]
        docids = [f"d{i}" for i in range(len(rows))]
        scores = np.array([s for _, s in rows])
        run = read_run(write_run(Path(d) / "r.run", qids, docids, scores, "t"))
        back = dict(zip(run.docid.to_pylist(), run.score.tolist()))
        assert all(
            back[d] == s and np.signbit(back[d]) == np.signbit(s) for d, s in zip(docids, scores)
        )


def _reference_run_text(rows, tag):
    """The rerank protocol's run writer before write_run existed: queries sorted, then a stable sort by -score."""
    by_q = {}
    for q, d, s in rows:
        by_q.setdefault(q, []).append((d, s))
    out = []
    for q in sorted(by_q):
        docs, s = zip(*by_q[q])
        s = np.asarray(s, dtype=np.float64)
        for rank, i in enumerate(np.argsort(-s, kind="stable"), 1):
            out.append(f"{q} Q0 {docs[i]} {rank} {float(s[i])!r} {tag}\n")
    return "".join(out)


ids = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=4
)


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(
        st.tuples(ids, st.sampled_from([0.5, -0.0, 0.0, 1e-300, 1e16, 3.3, -2.5e-07, 0.1 + 0.2])),
        min_size=1,
        max_size=30,
    )
)
def test_write_run_bytes_equal_the_protocol_writer(rows):
    rows = [(q, f"d{i}", s) for i, (q, s) in enumerate(rows)]
    assume(all(not c.isspace() for q, _, _ in rows for c in q))
    q, d, s = zip(*rows)
    assert run_text(list(q), list(d), np.array(s), "tag") == _reference_run_text(rows, "tag")


@pytest.mark.parametrize(
    "qids, docids, scores, tag, match",
    [
        (["q"], ["d"], [float("nan")], "t", "score of document 'd' in query 'q' is nan"),
        (["q"], ["d"], [float("inf")], "t", "is inf"),
        (["q"], ["d e"], [1.0], "t", "document id is empty or contains whitespace"),
        (["q"], [""], [1.0], "t", "document id is empty"),
        (["q 1"], ["d"], [1.0], "t", "query id is empty or contains whitespace"),
        (["q"], ["d"], [1.0], "a tag", "run tag"),
    ],
)
def test_write_run_refuses_what_would_not_read_back(tmp_path, qids, docids, scores, tag, match):
    with pytest.raises(TierankInputError, match=match):
        write_run(tmp_path / "r.run", qids, docids, scores, tag)
    assert not (tmp_path / "r.run").exists()


def test_run_text_empty_and_length_mismatch():
    assert run_text([], [], [], "t") == ""
    with pytest.raises(ValueError, match="differ in length"):
        run_text(["q"], ["a", "b"], [1.0], "t")


# -- the report writers are the same writer --------------------------------------------------------


def test_report_writers_use_the_one_writer(tmp_path):
    pytest.importorskip("matplotlib")
    from tierank.report.html import write_report
    from tierank.report.plots import _figure, save_figure

    fig, _ = _figure(2, 2)
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    for call in (
        lambda: write_report(fifo, "<p>"),
        lambda: save_figure(fig, tmp_path / "fifo", ("png",)),
    ):
        with pytest.raises(TierankInputError, match="special file"):
            call()
    src = tmp_path / "in.svg"
    src.write_text("keep")
    for call in (
        lambda: write_report(src, "<p>", protect=(src,)),
        lambda: save_figure(fig, tmp_path / "in", ("svg",), protect=(src,)),
    ):
        with pytest.raises(TierankInputError, match="refusing to overwrite an input"):
            call()
    assert src.read_text() == "keep"


def test_atomic_write_alias_is_gone():
    """report.plots.atomic_write only repeated io.writers.write_atomic."""
    import tierank.report.plots as plots

    assert not hasattr(plots, "atomic_write") and "atomic_write" not in plots.__all__


def test_ensure_dir_creates_missing_parents_and_checks_without_creating(tmp_path):
    target = tmp_path / "a" / "b"
    assert ensure_dir(target, create=False) == target and not (tmp_path / "a").exists()
    assert ensure_dir(target) == target and target.is_dir()
    assert ensure_dir(target) == target  # an existing folder is fine
    assert ensure_dir("") == Path(".")


def test_ensure_dir_refuses_a_file_and_what_is_below_one(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(TierankInputError) as e:
        ensure_dir(f, why=" (rerank writes a directory of files)")
    assert str(e.value) == f"{f}: is not a directory (rerank writes a directory of files)"
    with pytest.raises(TierankInputError) as e:
        ensure_dir(f / "sub", create=False)
    assert (
        str(e.value)
        == f"{f / 'sub'}: cannot create the folder ({str(f)!r} is not a writable folder)"
    )
    with pytest.raises(TierankInputError) as e:
        ensure_dir(f / "sub")
    assert str(e.value) == f"{f / 'sub'}: cannot create the folder: Not a directory"
    assert f.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_ensure_dir_refuses_a_folder_it_cannot_write(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(TierankInputError, match="ro: folder is not writable"):
            ensure_dir(ro)
        with pytest.raises(TierankInputError, match="is not a writable folder"):
            ensure_dir(ro / "new", create=False)
    finally:
        ro.chmod(0o700)


def test_save_figure_checks_every_target_before_writing(tmp_path):
    pytest.importorskip("matplotlib")
    from tierank.report.plots import _figure, save_figure

    fig, _ = _figure(2, 2)
    src = tmp_path / "fig.svg"
    src.write_text("input")
    with pytest.raises(TierankInputError, match="refusing to overwrite an input"):
        save_figure(fig, tmp_path / "fig", protect=(src,))
    assert not (tmp_path / "fig.png").exists() and src.read_text() == "input"
    assert [p.name for p in save_figure(fig, tmp_path / "sub" / "fig")] == ["fig.png", "fig.svg"]
