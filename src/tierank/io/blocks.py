"""A run file as query-aligned blocks: the reading half of evaluation at any size ([`tierank.stream`][tierank.stream]).

A plain file (local, or behind any filesystem pyarrow supports) is cut into byte ranges that end
where a query begins ([`iter_ranges`][tierank.io.blocks.iter_ranges]; only the lines around each cut are read), which the
workers read themselves (`read_range`).  A gzip file or a pipe is decompressed on the fly
and cut into blocks the same way ([`iter_blocks`][tierank.io.blocks.iter_blocks]).  Blocks are parsed by the same readers as
a whole file ([`tierank.io.readers`][tierank.io.readers]), so every refusal still names the file and the line.
Line ends are LF, CRLF and lone CR, fields are split on runs of spaces and tabs (the readers'
grammar, `tierank.io.lexer`).  A run whose queries are not grouped is detected
([`GroupCheck`][tierank.io.blocks.GroupCheck]) and refused with the way out ([`tierank.stream.partition`][tierank.stream.partition]).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator

import numpy as np

from .. import compute as ac
from ..errors import EmptyRun, Problem, ProblemLog, TierankInputError
from . import lexer
from .model import Run
from .readers import _run_fast, _run_slow

#: default size of the blocks read from a text run (bytes); a batch holds about this much text
BLOCK_BYTES = 64 << 20
_READ = 8 << 20


#: decompressed bytes looked at for a compression tierank does not read (`lexer.check_compression`)
_SNIFF = 16


def _raw_blocks(path: str | os.PathLike, size: int) -> Iterator[bytes]:
    """Decompressed bytes of ``path`` in pieces of about ``size`` (gzip detected by its magic); data
    compressed otherwise (bzip2, xz, zstd, zip, or gzip twice) is refused as the in-memory reader
    refuses it ([`lexer.check_compression`][tierank.io.blocks.lexer.check_compression])."""
    src = str(path)
    with _opened(path, src) as fh:
        step = max(1, min(_READ, size))
        head = fh.read(max(step, 64))  # enough to see the gzip magic, whatever the block size
        if head.startswith(lexer.GZIP_MAGIC):
            yield from _gunzipped(fh, head, step, src)
            return
        lexer.check_compression(head[:_SNIFF], src)
        chunk = head
        while chunk:
            yield chunk
            chunk = fh.read(size)


def _opened(path: str | os.PathLike, src: str):
    """``path`` open for reading bytes: a local file, ``-`` (standard input) or any filesystem pyarrow
    supports (s3://, gs://, hdfs://, file://); else [`TierankInputError`][tierank.errors.TierankInputError] in one line."""
    try:
        if "://" in src:
            import pyarrow.fs as pafs

            fs, inner = pafs.FileSystem.from_uri(src)
            return fs.open_input_stream(inner, compression=None)
        return open(lexer.stdin_or(path), "rb")
    except (OSError, ValueError) as e:
        raise TierankInputError(
            [Problem(src, None, f"cannot read ({getattr(e, 'strerror', None) or e})")]
        ) from None


def _gunzipped(fh, head: bytes, step: int, src: str) -> Iterator[bytes]:
    """The decompressed bytes of the gzip data in ``fh`` (its first bytes ``head`` already read), every
    member in turn, read ``step`` bytes at a time; data compressed again inside is refused."""
    d = zlib.decompressobj(wbits=31)
    raw = head
    read = len(head)  # compressed bytes read so far
    first: bytes | None = b""  # the first decompressed bytes, held until there are enough to check
    while True:
        if not raw:
            raw = fh.read(step)
            if not raw:
                break
            read += len(raw)
        try:
            out = d.decompress(raw)
        except zlib.error as e:
            raise TierankInputError([Problem(src, None, f"corrupt gzip data ({e})")]) from None
        raw = b""
        if out and first is not None:
            first += out
            out = b""
            if len(first) >= _SNIFF:
                lexer.check_compression(first[:_SNIFF], src, inner=True)
                out, first = first, None
        if out:
            yield out
        if d.eof:  # as lexer.gunzip: another member, or zero padding to the end, or nothing
            member, read = _next_member(fh, d.unused_data, read, step, src)
            if member is None:
                break
            d = zlib.decompressobj(wbits=31)
            raw = member
    if first:  # fewer decompressed bytes than the check looks at
        lexer.check_compression(first, src, inner=True)
        yield first
    if not d.eof:
        raise TierankInputError(
            [Problem(src, None, "truncated gzip data: the compressed stream ends early")]
        )


def _next_member(fh, rest: bytes, read: int, step: int, src: str) -> tuple[bytes | None, int]:
    """After a gzip member (``rest``: the bytes read past its end; ``read``: the compressed bytes read so
    far): the start of the next member and the bytes read, or None at the end of the data (zero padding
    to the end of the file is allowed; anything else is refused)."""
    end = read - len(rest)  # where this member ends in the file
    while len(rest) < len(lexer.GZIP_MAGIC):
        more = fh.read(step)
        if not more:
            break
        read += len(more)
        rest += more
    if rest.startswith(lexer.GZIP_MAGIC):
        return rest, read
    while rest:
        if rest.strip(b"\x00"):
            raise TierankInputError(
                [
                    Problem(
                        src,
                        None,
                        f"unexpected data after the end of the gzip stream (at byte {end:,})",
                    )
                ]
            )
        rest = fh.read(step)
    return None, read


def _parse(src: str, data: bytes, first_line: int, ranks: bool = True) -> Run:
    """Parse a block of whole lines; problems are located in the file (``first_line`` is the block's).
    ``ranks=False``: the rank column is not kept where the fast reader parses the block (evaluation
    never reads it)."""
    try:
        data = lexer.canonical(data)
        run = _run_fast(src, data, ranks=ranks)
        return run if run is not None else _run_slow(src, data)
    except TierankInputError as e:
        raise type(e)(
            shift_problems(e.problems, first_line - 1)
        ) from None  # EmptyRun stays EmptyRun


#: public name of `_parse` (used by `tierank.stream`)
parse_block = _parse


#: how the readers refuse a run without a result line (a block of comment lines only is not refused)
EMPTY_RUN = "empty run: no result lines"


def shift_problems(problems, shift: int) -> list[Problem]:
    """``problems`` located in a block, moved ``shift`` lines down to their place in the file
    ([`tierank.errors.Problem.shifted`][tierank.errors.Problem.shifted]: a [`tierank.errors.Repeated`][tierank.errors.Repeated] moves the line it
    repeats too).

    >>> from tierank.errors import Repeated
    >>> [str(p) for p in shift_problems([Repeated.of("run", 3, "document 'd' appears twice in query 'q'", 1)], 10)]
    ["run:13: document 'd' appears twice in query 'q' (first at line 11)"]
    """
    return [p.shifted(shift) for p in problems]


def blank(block: bytes) -> bool:
    """Whether ``block`` holds no field at all: only spaces, tabs and line ends (the readers' blanks;
    a form feed or a vertical tab is a character of a field).

    >>> blank(b" \\t\\r\\n"), blank(b"\\n\\x0c")
    (True, False)
    """
    return (
        _FIELD_BYTE.search(block) is None
    )  # stops at the first field byte (strip() copied the block)


_FIELD_BYTE = re.compile(rb"[^ \t\r\n]")


def query_ids(block: bytes) -> list[str]:
    """The first field of each line of ``block`` (comment and blank lines skipped), distinct, in order:
    the queries of a block that does not parse, to tell whether the run is grouped (bytes that are
    not UTF-8 kept distinct).

    >>> query_ids(b"q1 Q0 a 1 x t\\n# c\\nq2\\tQ0 b\\nq1 Q0 c 1 1 t\\n")
    ['q1', 'q2']
    """
    first = (line.split(b" ", 1)[0] for line in lexer.canonical(block).split(b"\n"))
    return list(dict.fromkeys(f.decode("utf-8", "surrogateescape") for f in first if f))


_FIRST_FIELD = re.compile(rb"[ \t]*([^ \t\r\n]*)")


def _tail_start(buf: bytearray, start: int, end: int) -> int:
    """Offset in ``buf[start:end]`` (whole lines) where the lines of its last query begin
    (``start`` when the block is one query).  Lines end at LF, CRLF or a lone CR, fields are
    separated by spaces and tabs (the readers' grammar); blank lines go with the query after them.
    A Python step per line of the last query only."""
    qid = None
    pos = end  # the start of the line after the one examined
    while pos > start:
        stop = pos - 1  # the line terminator ending the examined line
        if buf[stop] == 0x0A and stop > start and buf[stop - 1] == 0x0D:
            stop -= 1
        line_start = max(buf.rfind(b"\n", start, stop) + 1, start)
        line_start = max(
            buf.rfind(b"\r", line_start, stop) + 1, line_start
        )  # a lone CR inside: a line end
        field = _FIRST_FIELD.match(buf, line_start, stop).group(1)  # type: ignore[union-attr]  # always matches
        if field and not field.startswith(
            b"#"
        ):  # a comment line goes with any query, as a blank one
            if qid is None:
                qid = field
            elif field != qid:
                return pos
        pos = line_start
    return start


_COUNT_CHUNK = 1 << 18  # bytes compared at a time: the temporary stays in the CPU's cache


def _count_lf(block: bytes) -> int:
    """``block.count(b"\\n")``, about 3x faster (vectorized, in cache-sized pieces)."""
    b = np.frombuffer(block, np.uint8)
    if len(b) <= _COUNT_CHUNK:
        return int(np.count_nonzero(b == 10))
    tmp = np.empty(_COUNT_CHUNK, dtype=bool)
    n = 0
    for c in range(0, len(b), _COUNT_CHUNK):
        piece = b[c : c + _COUNT_CHUNK]
        out = tmp[: len(piece)]
        np.equal(piece, 10, out=out)
        n += int(np.count_nonzero(out))
    return n


def _line_count(block: bytes) -> int:
    """Lines ended in ``block``: LF, CRLF and lone CR each end one (the readers' rule).

    >>> _line_count(b"a\\nb\\r\\nc\\rd"), _line_count(b"")
    (3, 0)
    """
    n = _count_lf(block)
    return n if block.find(b"\r") < 0 else n + block.count(b"\r") - block.count(b"\r\n")


#: public name of `_line_count` (used by `tierank.stream`)
line_count = _line_count


class LineCounter:
    """Line numbers of byte offsets of a plain file (local or a pyarrow URI), counted only when asked.

    Only an error message needs the line a byte range starts at: [`before`][tierank.io.blocks.LineCounter.before] counts the lines
    ended before an offset then, forward from the offset asked last (offsets asked in file order
    read the file once, in pieces), with the readers' rule (LF, CRLF and lone CR each end one).

    >>> import tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "run")
    >>> _ = open(f, "wb").write(b"a\\nb\\r\\nc\\rd\\n")
    >>> count = LineCounter(f)
    >>> count.before(2), count.before(5), count.before(9), count.before(0)
    (1, 2, 4, 0)
    """

    def __init__(self, path: str | os.PathLike, piece: int = _READ):
        self.path, self.piece = str(path), max(1, piece)
        self.offset = self.lines = 0
        self.cr = (
            False  # the bytes counted end with a CR (a CRLF cut between two pieces is one line end)
        )

    def before(self, offset: int) -> int:
        """The number of lines ended in the file's first ``offset`` bytes."""
        if offset < self.offset:
            self.offset = self.lines = 0
            self.cr = False
        if offset > self.offset:
            fh, _ = open_random(self.path)
            with fh:
                fh.seek(self.offset)
                while self.offset < offset:
                    piece = bytes(fh.read(min(self.piece, offset - self.offset)))
                    if not piece:
                        break
                    self.lines += _line_count(piece) - (self.cr and piece[:1] == b"\n")
                    self.cr = piece[-1:] == b"\r"
                    self.offset += len(piece)
        return self.lines


def lines_before(path: str | os.PathLike, offset: int) -> int:
    """The number of lines ended in the first ``offset`` bytes of ``path`` (see [`LineCounter`][tierank.io.blocks.LineCounter])."""
    return LineCounter(path).before(offset)


def iter_blocks(
    path: str | os.PathLike, block_bytes: int = BLOCK_BYTES
) -> Iterator[tuple[bytes, int]]:
    """The text of the run at ``path`` as (bytes, number of its first line) blocks of about
    ``block_bytes``, each holding whole queries when the run is grouped by query: a block ends
    where its last query begins, and that query's lines start the next block.  Decompressed on
    the fly (gzip); the BOM of the file is dropped.  Nothing is parsed here: the blocks are
    parsed where they are evaluated (in the workers)."""
    line = 1
    for block in cut_blocks(path, block_bytes):
        yield block, line
        line += _line_count(block)


def cut_blocks(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The blocks of [`iter_blocks`][tierank.io.blocks.iter_blocks] without their line numbers: streaming counts each block's
    lines where it is parsed (a worker), not in the process that cuts the text."""
    if block_bytes < 1:
        raise TierankInputError(f"block size must be positive, got {block_bytes}")
    first = True
    buf = bytearray()
    retry_at = 0  # a query longer than a block: look again only when the buffer has doubled
    for chunk in _raw_blocks(path, block_bytes):
        buf += chunk
        if first:  # the file's BOM, however the first bytes were cut into chunks
            if len(buf) < len(lexer.BOM) and lexer.BOM.startswith(bytes(buf)):
                continue
            if buf.startswith(lexer.BOM):
                del buf[: len(lexer.BOM)]
            first = False
        start = 0
        size = block_bytes
        while len(buf) - start >= size and len(buf) >= retry_at:
            # cut at a line end past ``size``, then go back to where the last query begins
            at = start + size
            cut = buf.find(b"\n", at)
            cr = buf.find(b"\r", at, cut if cut >= 0 else len(buf))
            cut = cr if cr >= 0 and not (cr + 1 < len(buf) and buf[cr + 1] == 0x0A) else cut
            if cut < 0 or (buf[cut] == 0x0D and cut + 1 == len(buf)):
                break  # no line end yet (or a CR that may be half of a CRLF): read on
            if buf[cut] == 0x0D and buf[cut + 1] == 0x0A:
                cut += 1
            end = _tail_start(buf, start, cut + 1)
            if end == start:  # one query longer than the block: try a block twice as long
                size *= 2
                retry_at = start + size
                continue
            retry_at, size = 0, block_bytes
            block = bytes(memoryview(buf)[start:end])
            start = end
            yield block
        del buf[:start]
        retry_at = max(0, retry_at - start)
    if first and buf.startswith(lexer.BOM):
        del buf[: len(lexer.BOM)]
    if buf:
        yield bytes(buf)


_TERM = re.compile(rb"\r\n|\r|\n")


def _query_start_after(fh, pos: int, size: int) -> int:
    """The first offset at or after ``pos`` where a line of a new query begins: past the end of the
    line ``pos`` falls in, the lines of that line's query are skipped (blank lines too), and the
    start of the first line with another query id is returned (``size`` when the file ends first).
    Line ends are LF, CRLF and lone CR, as the readers have them; only the lines of one query are
    looked at."""
    if pos >= size:
        return size
    base = pos - 1  # one byte back: tells whether ``pos`` itself starts a line
    want = 1 << 16
    while True:
        fh.seek(base)
        window = fh.read(want)
        eof = base + len(window) >= size
        m = _TERM.search(window, 0)
        if m is None and eof:
            return size  # ``pos`` falls in the last line, which has no line end
        if m is None or (m.end() == len(window) and not eof):
            want *= 2
            continue
        at = m.end()
        qid = None
        while True:
            if at >= len(window):
                if eof:
                    return size
                break  # read a longer window
            nxt = _TERM.search(window, at)
            if nxt is None and not eof:
                break
            if nxt is not None and nxt.end() == len(window) and window[-1] == 0x0D and not eof:
                break  # a CR that may be half of a CRLF
            field = _FIRST_FIELD.match(window, at).group(1)  # type: ignore[union-attr]  # always matches
            if field and not field.startswith(b"#"):  # comment lines are blank lines
                if qid is None:
                    qid = field
                elif field != qid:
                    return base + at
            if nxt is None:
                return size
            at = nxt.end()
        want *= 2


def open_random(src: str):
    """A seekable handle on ``src`` (a local path or a pyarrow filesystem URI) and its size."""
    try:
        if "://" in src:
            import pyarrow.fs as pafs

            fs, inner = pafs.FileSystem.from_uri(src)
            fh = fs.open_input_file(inner)
            return fh, fh.size()
        return open(src, "rb"), os.path.getsize(src)
    except (OSError, ValueError) as e:
        raise TierankInputError(
            [Problem(src, None, f"cannot read ({getattr(e, 'strerror', None) or e})")]
        ) from None


#: the smallest range `iter_ranges` cuts to balance workers at the end of a file (each batch has a
#: fixed cost of some milliseconds)
MIN_TAIL_BYTES = 4 << 20


def iter_ranges(
    path: str | os.PathLike, block_bytes: int = BLOCK_BYTES, tail: int = 0
) -> Iterator[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of the plain (uncompressed) run file at ``path`` (local, or a URI
    of any filesystem pyarrow supports), of about ``block_bytes`` each, cut where a query begins,
    so that a range holds whole queries when the run is grouped by query.  Only the few lines
    around each cut are read: the ranges themselves are read where they are parsed
    (`read_range`), so this process never holds the text.

    ``tail``: the number of workers the ranges go to (guided self-scheduling).  No range is then
    larger than the rest of the file over ``2 * tail`` (nor smaller than `MIN_TAIL_BYTES`, nor
    larger than ``block_bytes``): the last ranges shrink, so that the workers run out of work at
    about the same time rather than one of them parsing a whole large block alone.

    >>> import tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "run")
    >>> _ = open(f, "wb").write(b"q1 Q0 a 1 2 t\\nq1 Q0 b 2 1 t\\nq2 Q0 a 1 3 t\\n")
    >>> list(iter_ranges(f, 5))
    [(0, 28), (28, 42)]
    >>> [tail_block(100 << 20, 64 << 20, 2) >> 20, tail_block(1 << 20, 64 << 20, 2) >> 20]
    [25, 4]
    """
    if block_bytes < 1:
        raise TierankInputError(f"block size must be positive, got {block_bytes}")
    fh, size = open_random(str(path))
    start = 0
    with fh:
        lexer.check_compression(bytes(fh.read(_SNIFF)), str(path))  # as the in-memory reader
        while start < size:
            end = _query_start_after(fh, start + tail_block(size - start, block_bytes, tail), size)
            yield start, end
            start = end


def tail_block(rest: int, block_bytes: int, tail: int) -> int:
    """The size of the next range of [`iter_ranges`][tierank.io.blocks.iter_ranges] when ``rest`` bytes are left (see there)."""
    if tail <= 0:
        return block_bytes
    return min(block_bytes, max(MIN_TAIL_BYTES, -(-rest // (2 * tail))))


def read_range(path: str | os.PathLike, start: int, end: int) -> bytes:
    """The bytes ``[start, end)`` of ``path`` (local or a pyarrow URI), without the file's BOM."""
    fh, _ = open_random(str(path))
    with fh:
        fh.seek(start)
        data = bytes(fh.read(end - start))
    if start == 0 and data.startswith(lexer.BOM):
        data = data[len(lexer.BOM) :]
    return data


def iter_batches(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """The run at ``path`` as [`Run`][tierank.io.model.Run] batches holding whole queries, in file order (the
    blocks of [`iter_blocks`][tierank.io.blocks.iter_blocks], parsed).

    Raises [`TierankInputError`][tierank.errors.TierankInputError] (file and line) for bad lines, the same problems the
    in-memory reader reports for the whole file (after a bad line, the rest of the file is parsed
    for its problems and nothing more is yielded), and for a run not grouped by query (a query
    that reappears after other queries), naming the query and the way out.
    """
    src = str(path)
    check = GroupCheck(src)
    problems = ProblemLog(src)
    ungrouped = None
    any_rows = False
    for block, line in iter_blocks(path, block_bytes):
        if blank(block):
            continue
        try:
            run = _parse(src, block, line)
            qids = ac.distinct(run.qid)
        except EmptyRun:  # a block of comment lines only
            continue
        except TierankInputError as e:
            problems.add(e.problems)
            qids = query_ids(block)
        any_rows = True
        try:
            check(qids)
        except TierankInputError as e:
            ungrouped = ungrouped or e
        if problems or ungrouped:
            continue
        yield run
    if problems:
        raise TierankInputError(
            problems.error().problems + (ungrouped.problems if ungrouped else [])
        )
    if ungrouped:
        raise ungrouped
    if not any_rows:
        raise EmptyRun([Problem(src, None, EMPTY_RUN)])


class GroupCheck:
    """Refuses a query seen in an earlier batch: the run is not grouped by query."""

    def __init__(self, src: str, order: list | None = None):
        self.seen: set[str] = set()
        self.src, self.order = src, order

    def __call__(self, qids: list[str]) -> None:
        again = [x for x in qids if x in self.seen]
        if again:
            raise TierankInputError(
                [
                    Problem(
                        self.src,
                        None,
                        f"the run is not grouped by query: query {again[0]!r} appears again after other queries; "
                        "streaming needs each query's lines together: group it first with "
                        "tierank.stream.partition() (DuckDB, out of core), or evaluate it in memory",
                    )
                ]
            )
        self.seen.update(qids)
        if self.order is not None:
            self.order.extend(qids)
