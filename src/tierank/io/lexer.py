"""The one byte-level grammar of tierank's TREC/BEIR readers, shared by every code path.

Both the fast reader (Arrow's CSV parser) and the line-by-line validator see the
*same* bytes: `load` reads a file once (regular file, pipe, ``/dev/stdin``,
``<(cmd)``), decompresses gzip in memory and drops a byte-order mark, and
[`canonical`][tierank.io.lexer.canonical] rewrites the field separators so that every field is followed
by exactly one space.  The fast path then splits on ``' '`` (nothing else is
special to it: quoting and escaping are off, ``\\r`` is gone), the validator on
``b' '`` too, so a line can never tokenize differently on the two paths.

The grammar (also in README "Inputs"):

* **Compression**: a file starting with the gzip magic bytes is decompressed
  whole (several members are concatenated, trailing zero padding is ignored);
  a truncated or corrupt stream, or other bytes after its end, is refused.
* **Byte-order mark**: one UTF-8 BOM at the start of the (decompressed) content
  is dropped; anywhere else it is an ordinary character of an identifier.
* **Lines** end at LF, CRLF or a lone CR.  A line of nothing but spaces and
  tabs is blank and skipped.
* **Fields** are separated by any run of ASCII spaces (0x20) and tabs (0x09),
  as trec_eval splits them; leading and trailing ones are ignored.  No other
  character separates fields: NBSP, U+2003, U+3000, U+001C-U+001F, vertical
  tab, form feed and NUL are ordinary characters of an identifier (and make a
  number invalid).
* **Text**: every line must be valid UTF-8; a line that is not is refused with
  its line number (never decoded with replacement characters).
* **Numbers** (scores, grades, ranks) are ASCII only: an optional sign, digits
  with an optional decimal point (``12``, ``1.``, ``.5``, ``1.5``), and an
  optional exponent (``e-07``, ``E+02``); or, in any letter case, an optional
  sign and ``inf``, ``infinity`` or ``nan``, which parse (so that the message
  can say "not finite") but are refused as scores and grades.  Digit group
  separators (``1_000``, ``1,000``), non-ASCII digits (``١``, ``１``), hex
  and spaces inside a number are not numbers.  A rank that is not a number is
  kept as NaN (ranks are informative only).
"""

from __future__ import annotations

import io
import os
import re
import stat
import zlib
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from ..errors import Problem, TierankInputError

BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"

#: The number grammar as a regular expression (Python ``re`` and RE2 syntax), to match whole tokens.
#: Unambiguous (each digit can match one way only), so matching stays linear on huge tokens.
NUMBER_PATTERN = (
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))"
)
_NUMBER = re.compile(NUMBER_PATTERN, re.ASCII)
_TAB_TO_SPACE = bytes.maketrans(b"\t", b" ")
_CHUNK = 1 << 23  # normalisation works on ~8 MiB of whole lines at a time
_SCAN = (
    1 << 18
)  # the check for work to do looks at 256 KiB at a time: its temporaries stay in cache (3x faster)


def parse_number(token: str) -> float | None:
    """The value of ``token`` under the number grammar, or None if it is not a number.

    Examples
    --------
    >>> [parse_number(t) for t in ["1.5", "-2e-07", "3E+02", ".5", "1.", "+4"]]
    [1.5, -2e-07, 300.0, 0.5, 1.0, 4.0]
    >>> parse_number("-Infinity"), parse_number("NaN") != parse_number("NaN")
    (-inf, True)
    >>> [parse_number(t) for t in ["1_000", "1,5", "\\u0661", "\\uff11", " 1", "0x10", "", "."]]
    [None, None, None, None, None, None, None, None]
    """
    if _NUMBER.fullmatch(token) is None:
        return None
    return float(token)


# ----------------------------------------------------------------------- reading


class _Spool:
    """Contents of non-seekable inputs (pipes, ``/dev/stdin``) read by a peek, kept for the one read that follows.

    A pipe can be read once only, but a caller may look at its first line
    ([`first_fields`][tierank.io.lexer.first_fields]) before reading it: the bytes read by the peek wait
    here, keyed by the pipe's identity, and the next [`read_bytes`][tierank.io.lexer.read_bytes] takes them.
    """

    def __init__(self):
        self.items: dict[tuple, bytes] = {}

    @staticmethod
    def key(st: os.stat_result) -> tuple:
        return (st.st_dev, st.st_ino, st.st_mode)

    def take(self, st: os.stat_result) -> bytes | None:
        return self.items.pop(self.key(st), None)

    def put(self, st: os.stat_result, data: bytes) -> None:
        self.items[self.key(st)] = data


_SPOOL = _Spool()


def _fail(src: str, reason: str) -> TierankInputError:
    return TierankInputError([Problem(src, None, reason)])


def stdin_or(path: str | os.PathLike) -> str | os.PathLike:
    """``path``, or ``/dev/stdin`` for ``-`` (standard input, as trec_eval users write it) where no file
    is named ``-``."""
    if str(path) == "-" and not os.path.lexists("-"):
        return "/dev/stdin"
    return path


def read_bytes(path: str | os.PathLike, *, keep: bool = False) -> bytes:
    """All raw bytes of ``path`` (regular file, pipe or device), read once.

    ``keep=True`` (used by peeks) leaves a non-seekable input's bytes for the
    next call.  Refuses missing paths, directories and unreadable files with a
    [`TierankInputError`][tierank.io.lexer.TierankInputError] naming the path.
    A `Held` file gives the bytes it holds.
    """
    if isinstance(path, Held):
        return path.take(keep)
    data, _ = _read(path, keep=keep)
    return b"" if data is None else data  # (never None: no size limit)


def _read(
    path: str | os.PathLike, *, keep: bool = False, stream_over: int | None = None
) -> tuple[bytes | None, os.stat_result]:
    """The raw bytes of ``path`` and its status, opened once (see `read_bytes`); with
    ``stream_over``, None instead of the bytes for a regular file of more than that many bytes of
    text (gzip counted four times its size: `Held`)."""
    src = str(path)
    path = stdin_or(path)
    st = _stat(path)
    regular = stat.S_ISREG(st.st_mode)
    if not regular:
        data = _SPOOL.take(st)
        if data is not None:
            if keep:
                _SPOOL.put(st, data)
            return data, st
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stream_over is not None and stat.S_ISREG(st.st_mode):
                gz = fh.read(len(GZIP_MAGIC)).startswith(GZIP_MAGIC)
                if st.st_size * (4 if gz else 1) > stream_over:
                    return None, st
                fh.seek(0)
            data = fh.read()
    except OSError as e:
        raise _fail(src, f"cannot read ({e.strerror or e})") from None
    if keep and not regular:
        _SPOOL.put(st, data)
    return data, st


class Held(os.PathLike[str]):
    """A run file opened once and read whole for the readers that follow (the command line's
    in-memory evaluation): its size and kind from the one open, its raw bytes until a reader takes
    them, the error a reader would meet (raised by that reader, in its turn), and, once read, the
    tag of its last content line ([`run_tag`][tierank.io.readers.run_tag]).

    A regular file of more than ``stream_over`` bytes of text (gzip counted four times its size) is
    not read: ``streams`` is True and its streaming reader opens it (as
    `tierank.io.sources.stream_by_default` says; ``-``, standard input, is always read).  It stands for its path
    everywhere (``os.fspath``, ``str``), so the door (`tierank.io.sources.read`) recognises it as it
    recognises the path, and messages name the path as given.
    """

    def __init__(self, path: str | os.PathLike, stream_over: int | None = None):
        self.path = path
        self.src = str(path)
        self.regular = False
        self.size = 0
        self.streams = False
        self.error: TierankInputError | None = None
        self.raw: bytes | None = None
        #: the tag of its last content line, once a reader has loaded it (``loaded``)
        self.tag: str | None = None
        self.loaded = False
        if stdin_or(path) is not path:
            stream_over = None  # ``-``: standard input, read in memory whatever it is
        try:
            self.raw, st = _read(path, stream_over=stream_over)
        except TierankInputError as e:
            self.error = e
            return
        self.regular = stat.S_ISREG(st.st_mode)
        self.size = st.st_size if self.regular else len(self.raw or b"")
        self.streams = self.raw is None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return self.src

    def __repr__(self) -> str:
        return f"Held({self.src!r})"

    def take(self, keep: bool = False) -> bytes:
        """The raw bytes, given once (``keep``: left for the next reader); a file read already (or
        streamed) is read again from its path."""
        if self.error is not None:
            raise self.error
        data = self.raw
        if data is None:
            return read_bytes(self.path, keep=keep)
        if not keep:
            self.raw = None
        return data


def gunzip(raw: bytes, src: str) -> bytes:
    """Decompress a whole gzip file (every member), refusing truncated, corrupt or trailing data.

    Examples
    --------
    >>> import gzip
    >>> gunzip(gzip.compress(b"a ") + gzip.compress(b"b\\n") + bytes(4), "f.gz")
    b'a b\\n'
    >>> gunzip(gzip.compress(b"a b\\n")[:-3], "f.gz")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: f.gz: truncated gzip data: the compressed stream ends early
    """
    out = []
    view = memoryview(raw)
    pos = 0
    while True:
        d = zlib.decompressobj(wbits=31)
        try:
            out.append(d.decompress(view[pos:]))
            out.append(d.flush())
        except zlib.error as e:
            raise _fail(src, f"corrupt gzip data ({e})") from None
        if not d.eof:
            raise _fail(src, "truncated gzip data: the compressed stream ends early")
        rest = d.unused_data
        pos = len(raw) - len(rest)
        if not rest.strip(b"\x00"):  # end of data, or zero padding (gzip ignores it too)
            break
        if not rest.startswith(GZIP_MAGIC):
            raise _fail(src, f"unexpected data after the end of the gzip stream (at byte {pos:,})")
    return b"".join(out)


#: the first bytes of compressed data tierank does not read (plain text and gzip only), and how to undo it
OTHER_COMPRESSION = (
    (re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59"), "bzip2", "bunzip2"),
    (re.compile(rb"\xfd7zXZ\x00"), "xz", "unxz"),
    (re.compile(rb"\x28\xb5\x2f\xfd"), "zstd", "unzstd"),
    (re.compile(rb"PK\x03\x04"), "zip", "unzip"),
)


def check_compression(head: bytes, src: str, inner: bool = False) -> None:
    """Refuse data compressed in a way tierank does not read (bzip2, xz, zstd, zip; or gzip inside gzip
    when ``inner``), saying what it is and what is read: plain text or gzip.

    >>> import gzip
    >>> check_compression(gzip.compress(b"q"), "run.gz", inner=True)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: run.gz: gzip data inside gzip data (compressed twice): decompress it once (gunzip), then read it
    """
    if inner and head.startswith(GZIP_MAGIC):
        raise _fail(
            src,
            "gzip data inside gzip data (compressed twice): decompress it once (gunzip), then read it",
        )
    for magic, name, tool in OTHER_COMPRESSION:
        if magic.match(head):
            raise _fail(
                src,
                f"{name}-compressed{' inside gzip' if inner else ''}: tierank reads plain text or gzip "
                f"(.gz); decompress it first ({tool})",
            )


def load(path: str | os.PathLike, *, keep: bool = False) -> bytes:
    """The content of ``path`` as the readers parse it: decompressed, BOM dropped, [`canonical`][tierank.io.lexer.canonical].

    A `Held` file keeps the tag of its last content line (``tag``), found
    where [`run_tag`][tierank.io.readers.run_tag] finds it: in the raw bytes of a plain regular file,
    else in the content."""
    src = str(path)
    data = read_bytes(path, keep=keep)
    held = path if isinstance(path, Held) else None
    plain = held is not None and held.regular and not data.startswith(GZIP_MAGIC)
    if held is not None and plain:
        held.tag = last_tag(data)
    data = content(data, src)
    if held is not None:
        if not plain:
            held.tag = last_tag(data)
        held.loaded = True
    return data


def content(data: bytes, src: str) -> bytes:
    """The raw bytes ``data`` of the file ``src`` as the readers parse them (see `load`)."""
    check_compression(data[:16], src)
    if data.startswith(GZIP_MAGIC):
        data = gunzip(data, src)
        check_compression(data[:16], src, inner=True)
    if data.startswith(BOM):
        data = data[len(BOM) :]
    return canonical(data)


def _last(data: bytes) -> str | None:
    """The tag (6th field) of the last line of ``data`` that is neither blank nor a ``#`` comment
    (None if that line has fewer fields, or there is none)."""
    for line in reversed(data.splitlines()):
        f = line.split()
        if not f or f[0].startswith(b"#"):
            continue
        return f[5].decode("utf-8", "replace") if len(f) >= 6 else None
    return None


def last_tag(data: bytes) -> str | None:
    """The tag (6th field) of the last content line of a run's bytes ``data``: what trec_eval prints
    as ``runid`` (`tierank.io.readers.run_tag`); looked for from the end (`tail_tag`).

    >>> last_tag(b"q Q0 d 1 2.0 first\\nq Q0 e 2 1.0 last\\n# comment\\n\\n")
    'last'
    """
    return tail_tag(len(data), lambda start: data[start:])


def tail_tag(size: int, tail: Callable[[int], bytes]) -> str | None:
    """`last_tag` of ``size`` bytes of which ``tail(start)`` gives those from ``start`` to the end:
    the last 64 KiB looked at, then four times more, until a content line is found."""
    block = 1 << 16
    while True:
        start = max(0, size - block)
        data = tail(start)
        tag = _last(data if start == 0 else data[data.find(b"\n") + 1 :])
        if tag is not None or start == 0:
            return tag
        block *= 4


# ---------------------------------------------------------------- tokenization


def canonical(data: bytes) -> bytes:
    """``data`` with LF line ends and exactly one space between fields, none around them.

    Every run of spaces and tabs becomes one space; leading and trailing ones
    are dropped (a blank line becomes empty); CRLF and lone CR become LF.  A
    line whose first non-blank character is ``#`` is a comment and becomes
    empty, as trec_eval skips it (``get_trec_results.c``, ``get_qrels.c``).
    Line numbers are kept.  Already canonical content is returned as is.

    Examples
    --------
    >>> canonical(b"\\t1 Q0  a\\t 2 2.0 t \\r\\n \\t\\r2\\xc2\\xa0Q0 b 1 1 t")
    b'1 Q0 a 2 2.0 t\\n\\n2\\xc2\\xa0Q0 b 1 1 t'
    >>> canonical(b"# run of 2024\\n  # tuned\\nq1 Q0 doc#3 1 2.0 t\\n")
    b'\\n\\nq1 Q0 doc#3 1 2.0 t\\n'
    """
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data:
        data = data.translate(_TAB_TO_SPACE)
    if not _needs_squeeze(data):
        return _blank_comments(data)
    parts = []
    start = 0
    while start < len(data):  # whole lines at a time: bounded temporaries
        end = data.find(b"\n", start + _CHUNK)
        end = len(data) if end < 0 else end + 1
        parts.append(_squeeze(np.frombuffer(data, np.uint8, end - start, start)))
        start = end
    return _blank_comments(b"".join(parts))


_COMMENT = re.compile(rb"(?m)^#[^\n]*")


def _blank_comments(data: bytes) -> bytes:
    """Canonical ``data`` with its comment lines (``#`` first) made empty, line numbers kept."""
    if _has_comment(data):
        return _COMMENT.sub(b"", data)
    return data


_FEW_HASHES = 16  # ``#`` bytes looked at one by one before a vectorized look at the rest


def _has_comment(data: bytes) -> bool:
    """True if a line of canonical ``data`` starts with ``#``.

    ``b"\\n#" in data`` stops at every line end (about 1.2 GB/s); ``#`` is rare, so it is looked for
    with ``find`` (memchr, about 20x faster) and the byte before each one is checked; where ``#``
    is common (inside ids), the rest is checked vectorized, in cache-sized pieces.

    >>> [_has_comment(d) for d in [b"q d#1 1\\n", b"#c\\nq d 1\\n", b"q d 1\\n#c", b"q # 1\\n"]]
    [False, True, True, False]
    """
    pos = data.find(b"#")
    if pos < 0:
        return False
    if pos == 0:
        return True
    for _ in range(_FEW_HASHES):
        if data[pos - 1] == 10:
            return True
        pos = data.find(b"#", pos + 1)
        if pos < 0:
            return False
    b = np.frombuffer(data, np.uint8)
    for c in range(
        pos, len(b), _SCAN
    ):  # a line end before the piece's first ``#`` counts: one byte back
        piece = b[c - 1 : c + _SCAN]
        if ((piece[1:] == 35) & (piece[:-1] == 10)).any():
            return True
    return False


def _needs_squeeze(data: bytes) -> bool:
    """True if ``data`` (spaces the only separator, LF line ends) has two spaces in a row or one at a line's edge.

    Two separators (space or line end) in a row are looked for, then those that are not a blank
    line (two line ends) are: four vectorized passes a piece instead of seven.

    >>> [_needs_squeeze(d) for d in [b"a b\\n\\nc d\\n", b"a  b\\n", b"a b \\n", b"a\\n b\\n", b" a"]]
    [False, True, True, True, True]
    """
    if data[:1] == b" " or data[-1:] == b" ":
        return True
    b = np.frombuffer(data, np.uint8)
    for c in range(0, len(b), _SCAN):  # a byte of overlap: pairs across pieces count
        piece = b[c : c + _SCAN + 1]
        sep = piece == 32
        sep |= piece == 10
        pair = sep[1:] & sep[:-1]
        if pair.any():
            at = np.flatnonzero(pair)
            if ((piece[at] == 32) | (piece[at + 1] == 32)).any():
                return True
    return False


def _squeeze(b: np.ndarray) -> bytes:
    """Whole lines with spaces only as separators -> one space between fields, none around."""
    sp = b == 32
    keep = ~sp
    keep[1:] |= ~sp[:-1]  # the first space of every run stays
    keep[0] = True
    c = b[keep]
    sp = c == 32
    edge = np.empty(len(c), dtype=bool)
    edge[0] = True  # start of a line
    np.equal(c[:-1], 10, out=edge[1:])
    drop = sp & edge  # leading space
    np.equal(c[1:], 10, out=edge[:-1])
    edge[-1] = True  # end of a line
    drop |= sp & edge  # trailing space
    return c[~drop].tobytes()


def lines(data: bytes):
    """``(line number, line)`` for every non-blank line of canonical ``data``."""
    for n, line in enumerate(data.split(b"\n"), start=1):
        if line:
            yield n, line


def first_line(data: bytes) -> tuple[int, bytes] | None:
    """The first non-blank line of canonical ``data`` and its end offset, or None."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end > start:
            return end, data[start:end]
        start = end + 1
    return None


def decode(line: bytes) -> tuple[str | None, str | None]:
    """``(text, None)`` for valid UTF-8, else ``(None, reason)`` naming the first bad byte."""
    try:
        return line.decode("utf-8"), None
    except UnicodeDecodeError as e:
        field = line.count(b" ", 0, e.start) + 1
        return (
            None,
            f"field {field} is not valid UTF-8 (byte 0x{line[e.start]:02x}); text must be UTF-8",
        )


def is_utf8(data: bytes) -> bool:
    """True if all of ``data`` is valid UTF-8 (fast for ASCII)."""
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _stat(path: str | os.PathLike) -> os.stat_result:
    src = str(path)
    path = stdin_or(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise _fail(src, "no such file") from None
    except OSError as e:
        raise _fail(src, f"cannot read ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise _fail(src, "is a directory, expected a file")
    return st


def _prefix(fh: BinaryIO, src: str, size: int) -> tuple[bytes | None, bool]:
    """At least ``size`` bytes of the decompressed content of the regular file ``src`` open as ``fh``
    (fewer at its end), and whether that is all; read from its start.

    None (read it all) for a gzip file of several members that end early.
    """
    try:
        fh.seek(0)
        raw = fh.read(size)
        if not raw.startswith(GZIP_MAGIC):
            return raw, len(raw) < size
        d = zlib.decompressobj(wbits=31)
        out = b""
        while len(out) < size and raw:
            out += d.decompress(raw, size - len(out))
            raw = d.unconsumed_tail or fh.read(1 << 16)
            if d.eof:  # end of the first member
                if d.unused_data or fh.read(1):
                    return None, True  # several members: the caller reads it all
                return out, True
        return out, not raw
    except zlib.error as e:
        raise _fail(src, f"corrupt gzip data ({e})") from None
    except OSError as e:
        raise _fail(src, f"cannot read ({e.strerror or e})") from None


def _first_data(fh: BinaryIO, src: str, whole: Callable[[], bytes]) -> bytes:
    """Canonical whole lines from the start of the regular file ``src`` open as ``fh``, up to its
    first non-blank line (``whole()``: all its content, where a prefix cannot be decompressed)."""
    # compressed otherwise than gzip: no line to sniff (the reader says why)
    check_compression(fh.read(16), src)
    size = 1 << 16
    while True:
        got, complete = _prefix(fh, src, size)
        if got is None:
            return whole()
        data = got
        if data.startswith(BOM):
            data = data[len(BOM) :]
        data = canonical(data)
        if not complete:
            data = data[: data.rfind(b"\n") + 1]  # whole lines only
        if complete or first_line(data) is not None:
            return data
        size *= 4


def first_fields(path: str | os.PathLike) -> list[str] | None:
    """The fields of the first non-blank line of ``path`` (None if it has none).

    Reads only the start of a regular file (opened once), or of the bytes a
    `Held` file holds; a pipe is read whole and its
    bytes stay for the reader that follows.  Undecodable bytes show as U+FFFD
    here only (the readers refuse them; [`is_text`][tierank.io.lexer.is_text] tells such a line).
    Compressed data inside gzip (gzip twice, bzip2 ...) is refused as the readers refuse it.
    """
    raw = path.raw if isinstance(path, Held) and path.regular else None
    if raw is not None:
        src = str(path)
        data = _first_data(io.BytesIO(raw), src, lambda: content(raw, src))
    elif not stat.S_ISREG(_stat(path).st_mode):
        data = load(path, keep=True)
    else:
        with open(path, "rb") as fh:
            data = _first_data(fh, str(path), lambda: load(path))
    check_compression(data[:16], str(path), inner=True)  # gzip content that is compressed again
    first = first_line(data)
    return None if first is None else first[1].decode("utf-8", "replace").split(" ")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def is_text(fields: list[str] | None) -> bool:
    """Whether the fields of [`first_fields`][tierank.io.lexer.first_fields] are text: no control
    characters, and at most a quarter of undecodable bytes (one Latin-1 letter is text in the wrong
    encoding, which the readers locate; random or binary bytes are no TREC file, whatever their
    field count).

    >>> is_text(["q1", "0", "d1", "1"]), is_text(["caf\ufffd", "0"]), is_text(["\ufffd\x03", "7"])
    (True, True, False)
    """
    if fields is None:
        return True
    line = " ".join(fields)
    return not _CONTROL.search(line) and 4 * line.count("\ufffd") <= len(line)
