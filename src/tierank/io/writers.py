"""The one output writer, and the writer of TREC runs (data, not a report).

Rendering results in an output format is [`tierank.report.formats`][tierank.report.formats]' job; this module writes bytes safely.

* [`check_output`][tierank.io.writers.check_output]: validates an ``-o`` target before any work (``-`` is stdout; refuses the
  inputs, special files such as ``/dev/null`` or a FIFO and links to them, directories, folders that
  are missing or not writable);
* [`write_atomic`][tierank.io.writers.write_atomic]: every file tierank writes goes through it: a temporary file
  ``.NAME.tierank-HOST-PID-XXXXXXXX.tmp`` in the target's folder, moved into place with
  `os.replace`, so a reader never sees a half-written file and a failed or killed run leaves
  the old file intact; the next write into the folder removes the temporary files of dead writers;
* [`write_run`][tierank.io.writers.write_run]: a TREC run whose scores read back exactly;
* [`ensure_dir`][tierank.io.writers.ensure_dir]: creates (or checks before any work) a folder that output files go into.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import Problem, TierankInputError, shorten
from ..processes import alive

_TMP_RE = re.compile(r"^\..*\.tierank-(?P<host>[A-Za-z0-9-]*)-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$")
_SYSTEM_ROOTS = ("/dev", "/proc", "/sys")
#: What Python's str.isspace() calls whitespace, for Arrow's RE2: ids holding it could not be read back.
_SPACE_RE2 = r"[\t-\r\x1c-\x1f\x85\pZ]"


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32]


def _refuse(path, reason: str):
    raise TierankInputError([Problem(str(path), None, reason)])


def _same_file(a: str, b: str) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_output(path: str | os.PathLike | None, protect: Iterable = ()) -> Path | None:
    """Validate an output target before any work is done; ``"-"`` means stdout (returns None).

    Refused, with a [`TierankInputError`][tierank.errors.TierankInputError] naming the path and the reason:
    a path that is one of the inputs in ``protect`` (the same file, also through a link), a
    directory, a special file (device node, FIFO, socket) or a symlink to one, a path under
    ``/dev``, ``/proc`` or ``/sys`` (use ``-`` to write to stdout), and a folder that does not
    exist or cannot be written.  Returns the target as a `Path`.

    Examples
    --------
    >>> check_output("-") is None
    True
    >>> check_output("/dev/null")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: /dev/null: is a special file (character device), not a regular file; use -o - to write to stdout
    """
    if path is None or str(path) == "-":
        return None
    target = Path(path)
    name = str(target)
    for p in protect:
        if isinstance(p, (str, os.PathLike)) and str(p) != "-" and _same_file(name, os.fspath(p)):
            _refuse(target, "refusing to overwrite an input file with the output")
    try:
        st = os.stat(name)  # follows symlinks: a link to a device is judged by the device
    except FileNotFoundError:
        st = None  # new file, or a dangling symlink (replaced by the file)
    except OSError as e:
        _refuse(target, f"cannot be used as an output: {e.strerror or e}")
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            _refuse(target, "is a directory, expected an output file path")
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "character device"
                if stat.S_ISCHR(st.st_mode)
                else "block device"
                if stat.S_ISBLK(st.st_mode)
                else "FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            _refuse(
                target,
                f"is a special file ({kind}), not a regular file; use -o - to write to stdout",
            )
    folder = target.parent if str(target.parent) else Path(".")
    real = os.path.realpath(folder)
    if any(real == r or real.startswith(r + "/") for r in _SYSTEM_ROOTS):
        _refuse(
            target,
            f"is in the system folder {real!r}, not a place for output files; use -o - to write to stdout",
        )
    if not folder.is_dir():
        _refuse(target, f"folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        _refuse(target, f"folder {str(folder)!r} is not writable")
    return target


def ensure_dir(path: str | os.PathLike, *, create: bool = True, why: str = "") -> Path:
    """The folder ``path`` made ready for output files: THE way tierank creates an output folder.

    With ``create`` (the default) the folder is created with its missing parents; it must then be a
    writable folder.  With ``create=False`` nothing is created: the folder must be a writable folder,
    or be missing with its nearest existing ancestor a writable folder (so that a later
    ``ensure_dir(path)`` can create it): the check done before any work.  Refused with a
    [`TierankInputError`][tierank.errors.TierankInputError] naming ``path``: an existing path that is not a folder
    (``why`` is appended to that message, e.g. ``" (rerank writes a directory of files)"``), a folder
    that cannot be created, a folder that is not writable.  ``""`` means the current folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> ensure_dir(d / "a" / "b", create=False).exists()
    False
    >>> ensure_dir(d / "a" / "b").is_dir()
    True
    >>> (d / "f").write_text("x") and None
    >>> ensure_dir(d / "f" / "sub", create=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: .../f/sub: cannot create the folder ('.../f' is not a writable folder)
    """
    folder = Path(path) if str(path) else Path(".")
    if folder.exists() and not folder.is_dir():
        _refuse(folder, f"is not a directory{why}")
    if not folder.exists():
        if not create:
            parent = folder
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
                _refuse(
                    folder, f"cannot create the folder ({str(parent)!r} is not a writable folder)"
                )
            return folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            _refuse(folder, f"cannot create the folder: {e.strerror or e}")
    if not os.access(folder, os.W_OK | os.X_OK):
        _refuse(folder, "folder is not writable")
    return folder


def clean_stale_temps(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that [`write_atomic`][tierank.io.writers.write_atomic] left in ``folder`` when its process was killed.

    Only files named by [`write_atomic`][tierank.io.writers.write_atomic] (``.NAME.tierank-HOST-PID-XXXXXXXX.tmp``) of this host
    whose process is no longer alive are removed; any other file is left alone.  Returns the removed paths.
    """
    removed: list[Path] = []
    host = _host()
    try:
        entries = list(os.scandir(os.fspath(folder)))
    except OSError:
        return removed
    for e in entries:
        m = _TMP_RE.match(e.name)
        if (
            not m
            or m["host"] != host
            or not e.is_file(follow_symlinks=False)
            or alive(int(m["pid"]))
        ):
            continue
        try:
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            pass
    return removed


def _pieces(data: str | bytes | Sequence) -> Sequence:
    """The bytes-like pieces that ``data`` is written as: text encoded as UTF-8, bytes as they are,
    a sequence of pieces (bytes, memoryviews, Arrow buffers) as it is."""
    if isinstance(data, str):
        return [data.encode("utf-8")]
    if isinstance(data, (bytes, bytearray, memoryview)):
        return [data]
    return data


def _write_stdout(data: str | bytes | Sequence) -> None:
    """``data`` (as [`write_atomic`][tierank.io.writers.write_atomic] takes it) to stdout, as UTF-8
    bytes where stdout has a binary buffer (after what was written to it as text)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write("".join(str(p, "utf-8") for p in _pieces(data)))
        return
    sys.stdout.flush()
    for piece in _pieces(data):
        out.write(piece)
    out.flush()


def write_atomic(
    path: str | os.PathLike, data: str | bytes | Sequence, protect: Iterable = ()
) -> Path | None:
    """Write ``data`` (text as UTF-8; bytes; or bytes-like pieces such as Arrow buffers, written one
    after the other) to ``path`` atomically; ``"-"`` writes to stdout (returns None).

    Refuses what [`check_output`][tierank.io.writers.check_output] refuses (inputs in ``protect``, special files, directories, a
    folder that is missing or not writable).  A temporary file ``.NAME.tierank-HOST-PID-XXXXXXXX.tmp`` in
    the target's folder is created with ordinary permissions (0o666 less the umask), filled, synced and
    moved into place with `os.replace`; on any failure it is removed and an existing ``path``
    stays as it was.  If the process is killed (SIGKILL) mid-write, the old file is intact and the
    temporary file is removed by the next write into that folder ([`clean_stale_temps`][tierank.io.writers.clean_stale_temps]).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(d / "out.txt", "x\\n").read_text()
    'x\\n'
    >>> sorted(p.name for p in d.iterdir())
    ['out.txt']
    """
    target = check_output(path, protect)
    pieces = _pieces(data)
    if target is None:
        _write_stdout(pieces)
        return None
    folder = target.parent if str(target.parent) else Path(".")
    clean_stale_temps(folder)
    tmp = (
        folder / f".{target.name[:100]}.tierank-{_host()}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    )
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        _refuse(target, f"cannot write into folder {str(folder)!r}: {e.strerror or e}")
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(
            e, OSError
        ):  # disk full, quota, a file system gone read-only: one located line
            exists = "; the existing file is unchanged" if os.path.lexists(target) else ""
            raise TierankInputError(
                [Problem(str(target), None, f"cannot write: {e.strerror or e}{exists}")]
            ) from e
        raise
    return target


def _arrow_strings(x) -> pa.Array:
    """Identifiers (sequence, numpy or Arrow array, dictionary-encoded or not) as one Arrow string array."""
    if isinstance(x, pa.ChunkedArray):
        x = x.combine_chunks() if x.num_chunks != 1 else x.chunk(0)
    if not isinstance(x, pa.Array):
        x = pa.array(
            np.asarray(x, dtype=object) if isinstance(x, np.ndarray) else list(x), type=pa.string()
        )
    if pa.types.is_dictionary(x.type):
        x = x.dictionary_decode()
    return x.cast(pa.string()) if not pa.types.is_string(x.type) else x


def run_text(qids, docids, scores, tag: str, source: str = "run") -> str:
    """The TREC run text of parallel ``qids``, ``docids``, ``scores`` (see [`write_run`][tierank.io.writers.write_run]).

    Examples
    --------
    >>> print(run_text(["q2", "q1", "q1", "q1"], ["a", "b", "c", "d"], [1.0, 0.5, 0.1 + 0.2, 0.5], "t"), end="")
    q1 Q0 b 1 0.5 t
    q1 Q0 d 2 0.5 t
    q1 Q0 c 3 0.30000000000000004 t
    q2 Q0 a 1 1.0 t
    """
    import pyarrow.compute as pc

    q, d = _arrow_strings(qids), _arrow_strings(docids)
    s = np.asarray(scores, dtype=np.float64)
    if not (len(q) == len(d) == len(s)):
        raise ValueError(f"qids, docids and scores differ in length: {len(q)}, {len(d)}, {len(s)}")
    if not tag or re.search(r"\s", tag):
        raise TierankInputError(
            [Problem(source, None, f"run tag {tag!r} must be non-empty and without whitespace")]
        )
    if len(s) == 0:
        return ""
    bad = ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"score of document {shorten(d[i].as_py())!r} in query "
                    f"{shorten(q[i].as_py())!r} is {float(s[i])!r}; a run needs finite scores",
                )
            ]
        )
    enc = q.dictionary_encode()
    uniq = enc.dictionary
    for kind, ids in (("query", uniq), ("document", d)):
        if (
            pc.min(pc.utf8_length(ids)).as_py() == 0
            or pc.any(pc.match_substring_regex(ids, _SPACE_RE2)).as_py()
        ):
            raise TierankInputError(
                [Problem(source, None, f"a {kind} id is empty or contains whitespace")]
            )
    # queries in sorted order (Arrow sorts strings bytewise: code point order, as Python's sorted)
    by_name = pc.sort_indices(uniq).to_numpy()
    position = np.empty_like(by_name)
    position[by_name] = np.arange(len(by_name))
    inv = position[enc.indices.to_numpy(zero_copy_only=False)]
    order = np.lexsort((-s, inv))  # stable: equal scores keep their input order
    counts = np.bincount(inv, minlength=len(uniq))
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    rank = np.arange(1, len(s) + 1) - starts
    take = pa.array(order)
    lines = pc.binary_join_element_wise(
        uniq.take(pa.array(by_name)).take(pa.array(inv[order])),
        "Q0",
        d.take(take),
        pc.cast(pa.array(rank), pa.string()),
        pa.array(list(map(repr, s[order].tolist())), type=pa.string()),
        tag,
        " ",
    )
    return "\n".join(lines.to_pylist()) + "\n"


def write_run(
    path: str | os.PathLike, qids, docids, scores, tag: str, protect: Iterable = ()
) -> Path | None:
    """Write a TREC run (``qid Q0 docid rank score tag``) atomically with [`write_atomic`][tierank.io.writers.write_atomic].

    ``qids``, ``docids`` and ``scores`` are parallel (lists, numpy or Arrow arrays).  Queries are
    written in sorted order; one query's rows by descending score, equal scores keeping their input
    order, ranks 1, 2, ...  Scores are written as the ``repr`` of their float64 value, so they read
    back exactly: writing creates or removes no tie.  Non-finite scores, empty ids and ids with
    whitespace are refused.  ``"-"`` writes to stdout.
    """
    target = check_output(path, protect)
    text = run_text(qids, docids, scores, tag, source=str(path))
    return write_atomic(path if target is None else target, text, protect=protect)
