"""Readers for TREC runs, TREC qrels and BEIR-style qrels (plain or gzip).

A file is read once (`tierank.io.lexer.load`: pipes and ``/dev/stdin``
work, gzip is decompressed and checked, a byte-order mark dropped) and put in
canonical form (one space between fields), the grammar of
`tierank.io.lexer`.  The fast path parses those bytes with ``pyarrow.csv``
(multi-threaded C++).  Whenever it cannot parse them, or a check on the parsed
columns fails (non-finite score, duplicate document in a query, the reserved
query id ``all``, text that is not UTF-8, ...), the same bytes go to a
line-by-line validator whose job is to say exactly which lines are wrong and
why, or to parse what the fast path cannot.  Both paths see the same tokens,
so the same bytes give the same result whichever path reads them.
"""

from __future__ import annotations

import math
import os
import stat

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from .. import compute as ac
from ..errors import EmptyRun, Problem, ProblemLog, TierankInputError, quote
from . import lexer
from .fingerprint import fingerprint, fingerprint_ids, pair_fingerprint
from .model import Qrels, Run

#: Query id reserved for the aggregate records of results (``to_dict()``, jsonl).
RESERVED_QID = "all"
RESERVED_REASON = (
    f"query id {RESERVED_QID!r} is reserved for the aggregate over queries "
    f"in tierank's results; rename the query"
)

_RUN_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
_QRELS_COLUMNS = ["qid", "iter", "docid", "grade"]
_BEIR_COLUMNS = ["qid", "docid", "grade"]
# query ids repeat on every line: dictionary-encoded while parsing
_QID_DICT = pa.dictionary(pa.int32(), pa.string())


def first_fields(path: str | os.PathLike) -> list[str] | None:
    """The fields of the first non-blank line of ``path``, None for an empty file.

    Use it to sniff a file's layout (a run line has 6 fields, qrels 3 or 4):
    it reads only the start of a regular file, and a pipe's bytes stay for
    the reader that follows, so ``<(cmd)`` and ``/dev/stdin`` work.

    Raises
    ------
    TierankInputError
        For a missing, unreadable or directory path, or corrupt gzip data.
    """
    return lexer.first_fields(path)


#: bytes Arrow's CSV parser takes at a time (one per thread): a streamed range of 64 MB gives each of
#: two threads several pieces to share, and each piece's columns stay in the CPU's cache
ARROW_BLOCK = 1 << 22


def _arrow_read(data: pa.Buffer, names: list[str], types: dict, include: list[str]) -> pa.Table:
    return pacsv.read_csv(
        data,
        # one thread in Arrow's pool (a worker process): the serial reader, about 5% cheaper than the threaded one
        read_options=pacsv.ReadOptions(
            column_names=names, block_size=ARROW_BLOCK, use_threads=pa.cpu_count() > 1
        ),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            include_columns=include,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
            check_utf8=False,  # every caller checked the bytes first (`_fast_ok`): about a tenth of the parse
        ),
    )


def _numbers(col: pa.ChunkedArray) -> np.ndarray:
    """A parsed float64 column (no nulls) as one numpy array ([`tierank.compute.numpy`][tierank.compute.numpy])."""
    return ac.numpy(col)


def _fast_ok(data: bytes) -> bool:
    """True if Arrow's CSV parser sees exactly the tokens of [`lexer.lines`][tierank.io.readers.lexer.lines] in ``data``.

    Arrow drops a byte-order mark at the start of its input: after the
    reader dropped the file's own, a second one belongs to the first id.
    Text that is not UTF-8 goes to the validator, which locates it.
    """
    return bool(data) and not data.startswith(lexer.BOM) and lexer.is_utf8(data)


# --------------------------------------------------------------------------- runs


def _run_slow(src: str, data: bytes, duplicates: str = "error") -> Run:
    """Parse (and validate) canonical run bytes line by line; raise with every located problem."""
    bad = ProblemLog(src)
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    ranks: list[float] = []
    seen: dict[str, dict[str, int]] = {}

    for lineno, raw in lexer.lines(data):
        line, why = lexer.decode(raw)
        if line is None:
            bad(lineno, why or "not UTF-8")
            continue
        parts = line.split(" ", 6)  # fields after the tag are ignored, as trec_eval ignores them
        if len(parts) < 6:
            bad(
                lineno,
                f"expected 6 whitespace-separated columns "
                f"(qid Q0 docid rank score tag; spaces and tabs separate), found {len(parts)}",
            )
            continue
        q, _, d, r, s = parts[:5]
        score = lexer.parse_number(s)
        if score is None:
            bad(lineno, f"score {quote(s)} is not a number")
            continue
        if not math.isfinite(score):
            bad(lineno, f"score {quote(s)} is not finite (NaN and infinities cannot be ranked)")
            continue
        if q == RESERVED_QID:
            bad(lineno, RESERVED_REASON)
            continue
        prev = seen.setdefault(q, {}).get(d)
        if prev is not None and duplicates == "error":
            bad.repeated(lineno, f"document {quote(d)} appears twice in query {quote(q)}", prev)
            continue
        seen[q].setdefault(d, lineno)
        rank = lexer.parse_number(r)
        qids.append(q)
        docids.append(d)
        scores.append(score)
        ranks.append(np.nan if rank is None else rank)
    bad.raise_if_any()
    if not qids:
        raise EmptyRun([Problem(src, None, "empty run: no result lines")])
    return Run(
        qid=pa.array(qids, pa.string()).dictionary_encode().cast(_QID_DICT),
        docid=pa.array(docids, pa.string()),
        score=np.asarray(scores, dtype=np.float64),
        rank=np.asarray(ranks, dtype=np.float64),
        source=src,
    )


def _run_fast(src: str, data: bytes, duplicates: str = "error", ranks: bool = True) -> Run | None:
    """The run parsed by Arrow, or None where the validator must decide (it may accept or refuse).

    ``ranks=False`` leaves the rank column unread (`Run.rank` None): evaluation never reads it, and
    converting it is about a fifth of Arrow's work."""
    if not _fast_ok(data):
        return None
    # query ids as plain strings, encoded after the parse (`encode_ids`): Arrow's dictionary
    # conversion while parsing costs a sixth of the parse, the encoding of the runs of equal ids a tenth of that
    types = {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()}
    if ranks:
        types["rank"] = pa.float64()
    try:
        t = _arrow_read(pa.py_buffer(data), _RUN_COLUMNS, types, list(types))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    finally:
        pa.default_memory_pool().release_unused()  # the parser's buffers
    if t.num_rows == 0:
        return None
    qid = encode_ids(t.column("qid"))
    docid = t.column("docid").combine_chunks()
    score = _numbers(t.column("score"))
    rank = _numbers(t.column("rank")) if ranks else None
    del t  # the query ids as strings
    if (
        not np.isfinite(score).all()
        or _reserved(qid.dictionary)
        or (duplicates == "error" and _has_duplicates(qid, docid))
    ):
        return None
    return Run(qid=qid, docid=docid, score=score, rank=rank, source=src)


def read_run(path: str | os.PathLike, duplicates: str = "error") -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``), plain or gzip.

    Fields are separated by runs of spaces and tabs; anything after the tag
    is ignored (as trec_eval ignores it); scores may use any float
    notation of the number grammar (``1.5``, ``-2e-07``, ``3E+02``; see
    `tierank.io.lexer`).  The rank column is kept in `Run.rank`
    but never used for ordering.  ``duplicates="keep"`` accepts a document
    repeated in a query (for analysis of a run's defects; evaluation refuses
    them).  ``path`` may be a pipe or ``/dev/stdin``.

    Raises
    ------
    TierankInputError
        Naming file, line and reason for wrong column counts, unparsable,
        NaN or infinite scores, a document repeated in a query, the reserved
        query id ``all``, text that is not UTF-8, an empty file, or gzip data
        that is truncated or corrupt.
    """
    src = str(path)
    data = lexer.load(path)
    run = _run_fast(src, data, duplicates)
    return run if run is not None else _run_slow(src, data, duplicates)


def _reserved(ids: pa.Array) -> bool:
    # the id as an Arrow array built from its bytes: a Python string handed to pyarrow makes it infer a
    # type (importing dateutil) and ask its pandas layer (importing pandas)
    return bool(ac.any(ac.is_in(ids, ac.strings([RESERVED_QID]))).as_py())


def encode_ids(ids: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """``ids`` (strings) dictionary-encoded: the array ``pyarrow.compute.dictionary_encode`` gives (int32
    codes in order of first appearance), found faster where equal ids come in runs of lines (a run file's
    query ids): one comparison of neighbours, then the encoding of each run's first id.

    >>> enc = encode_ids(pa.chunked_array([["q2", "q2"], ["q1", "q2", "q2"]]))
    >>> enc.dictionary.to_pylist(), enc.indices.to_pylist()
    (['q2', 'q1'], [0, 0, 1, 0, 0])
    """
    arr = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    n = len(arr)
    if n < 2 or arr.null_count:  # (a parsed column has no nulls; Arrow's encoding keeps them null)
        return ac.dictionary_encode(arr)
    starts = np.flatnonzero(ac.numpy(ac.not_equal(arr.slice(1), arr.slice(0, n - 1))))
    if 4 * len(starts) > n:  # runs of fewer than four lines: encode every id
        return ac.dictionary_encode(arr)
    starts = np.concatenate((np.zeros(1, np.int64), starts + 1))
    heads = ac.dictionary_encode(ac.take(arr, ac.array(starts)))
    codes = np.repeat(ac.numpy(heads.indices), np.diff(starts, append=n))
    return pa.DictionaryArray.from_arrays(
        ac.array(codes.astype(np.int32, copy=False)), heads.dictionary
    )


def _has_duplicates(qid: pa.Array, docid: pa.Array) -> bool:
    """True if some (qid, docid) pair may repeat: equal 64-bit fingerprints.

    Exact in the "no" direction; a "yes" sends the file to the line-by-line
    validator, which either locates the duplicate or (after a fingerprint
    collision) parses the file normally.

    The fast filter keys each line by its query's code (the index in a
    dictionary of distinct query ids) in the high bits and the document's
    fingerprint in the others: equal pairs get equal keys, and it costs one
    fingerprint column instead of three.  Only when two keys are equal (a
    duplicate, or a collision of the shortened fingerprints) is the full
    pair fingerprint of `_pair_duplicates` asked.  ``qid``: strings, or
    their dictionary encoding.
    """
    doc = fingerprint(docid, quick=True)  # only its high bits make the key
    enc = qid if pa.types.is_dictionary(qid.type) else encode_ids(qid)
    n_codes = len(enc.dictionary)
    if (
        len(ac.unique(enc.dictionary)) != n_codes
    ):  # equal ids under two codes: the codes cannot tell
        return _pair_duplicates(enc, doc)
    bits = max(n_codes - 1, 0).bit_length()
    if bits == 0:
        key = doc.copy()
        key.sort()
    else:
        codes = ac.numpy(enc.indices)
        key = codes.astype(np.uint64) << np.uint64(64 - bits)
        key |= doc >> np.uint64(bits)
        _sort_by_query(key, codes, n_codes)
    if not (key[1:] == key[:-1]).any():
        return False
    return _pair_duplicates(enc, doc)


_SORT_PIECE = (
    1 << 16
)  # keys sorted at a time when the queries are grouped: the piece stays in the CPU's cache


def _sort_by_query(key: np.ndarray, codes: np.ndarray, n_codes: int) -> None:
    """Sort ``key`` in place enough that equal keys end up next to each other.

    A key holds its line's query code in its high bits, so equal keys have equal codes.  When the
    lines of each query are together (the usual layout: one run of lines per code), sorting pieces
    of whole queries of about ``_SORT_PIECE`` keys each is enough (a query is never cut, and keys
    of different queries never compare equal), and about 5x faster than one global sort of millions of
    keys; otherwise the whole array is sorted.

    >>> key = np.array([5, 3, 5, 9, 9], dtype=np.uint64)
    >>> _sort_by_query(key, np.array([0, 0, 0, 1, 1]), 2)
    >>> key.tolist()
    [3, 5, 5, 9, 9]
    """
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if (
        len(key) <= _SORT_PIECE
        or len(starts) >= n_codes  # more runs of lines than queries
        or np.bincount(codes[np.r_[0, starts]], minlength=n_codes).max() > 1
    ):  # a query comes back
        key.sort()
        return
    lo = 0
    while lo < len(key):
        at = int(
            np.searchsorted(starts, lo + _SORT_PIECE)
        )  # the first query start at or past the piece's size
        hi = int(starts[at]) if at < len(starts) else len(key)
        key[lo:hi].sort()
        lo = hi


def _pair_duplicates(qid: pa.Array, doc: np.ndarray) -> bool:
    """True if two lines have equal 64-bit fingerprints of their (qid, docid) pair (``doc``: of the docids)."""
    key = pair_fingerprint(fingerprint_ids(qid), doc)
    key.sort()
    return bool((key[1:] == key[:-1]).any())


# -------------------------------------------------------------------------- qrels


def _qrels_layout(data: bytes) -> tuple[bool, int]:
    """(BEIR?, offset where judgments start) from the first non-blank line.

    Three fields make BEIR qrels (``query-id corpus-id score``); if the third
    is not a number the line is a header, skipped.  Anything else is TREC qrels.
    """
    first = lexer.first_line(data)
    if first is None:
        return False, 0
    end, line = first
    parts = line.split(b" ")
    if len(parts) != 3:
        return False, 0
    header = lexer.parse_number(parts[2].decode("utf-8", "replace")) is None
    return True, (end if header else 0)


def _qrels_slow(src: str, data: bytes) -> Qrels:
    beir, start = _qrels_layout(data)
    bad = ProblemLog(src)
    qids: list[str] = []
    docids: list[str] = []
    grades: list[float] = []
    seen: dict[tuple[str, str], tuple[int, str]] = {}
    #: documents judged again under another iter value: subtopic qrels (said once, at the end)
    subtopic: list[tuple[int, str, str, int]] = []
    ncols = 3 if beir else 4
    layout = "query-id corpus-id score" if beir else "qid iter docid grade"
    header_line = data.count(b"\n", 0, start) + 1 if start else 0

    for lineno, raw in lexer.lines(data):
        line, why = lexer.decode(raw)
        if line is None:
            bad(lineno, why or "not UTF-8")
            continue
        if lineno == header_line:
            continue
        parts = line.split(" ")
        if len(parts) != ncols:
            bad(lineno, f"expected {ncols} columns ({layout}), found {len(parts)}")
            continue
        q, d, g = (parts[0], parts[1], parts[2]) if beir else (parts[0], parts[2], parts[3])
        grade = lexer.parse_number(g)
        if grade is None or not math.isfinite(grade):
            bad(lineno, f"relevance grade {quote(g)} is not a finite number")
            continue
        if q == RESERVED_QID:
            bad(lineno, RESERVED_REASON)
            continue
        prev = seen.get((q, d))
        if prev is not None:
            if not beir and prev[1] != parts[1]:
                subtopic.append((lineno, q, d, prev[0]))
            else:
                what = f"document {quote(d)} judged twice for query {quote(q)}"
                bad.repeated(lineno, what, prev[0])
            continue
        seen[(q, d)] = (lineno, "" if beir else parts[1])
        qids.append(q)
        docids.append(d)
        grades.append(grade)
    if subtopic:
        at, q, d, first = subtopic[0]
        n = len(subtopic)
        bad(
            at,
            f"document {quote(d)} judged again for query {quote(q)} under another value of column 2 "
            f"(first at line {first}; {n} such line{'s' * (n > 1)}): subtopic qrels (qid subtopic "
            "docid grade), which the intent-aware measures read (alpha_nDCG, ERR_IA, ...); the other "
            "measures need one judgment per document and query",
        )
    bad.raise_if_any()
    if not qids:
        raise TierankInputError([Problem(src, None, "empty qrels: no judgment lines")])
    return Qrels(
        qid=pa.array(qids, pa.string()),
        docid=pa.array(docids, pa.string()),
        grade=np.asarray(grades, dtype=np.float64),
        source=src,
    )


def _qrels_fast(src: str, data: bytes) -> Qrels | None:
    """The qrels parsed by Arrow, or None where the validator must decide."""
    if not _fast_ok(data):
        return None
    beir, start = _qrels_layout(data)
    names, include = (
        (_BEIR_COLUMNS, _BEIR_COLUMNS) if beir else (_QRELS_COLUMNS, ["qid", "docid", "grade"])
    )
    try:
        t = _arrow_read(
            pa.py_buffer(data)[start:],
            names,
            {"qid": pa.string(), "docid": pa.string(), "grade": pa.float64()},
            include,
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if t.num_rows == 0:
        return None
    grade = _numbers(t.column("grade"))
    qid = t.column("qid").combine_chunks()
    docid = t.column("docid").combine_chunks()
    if not np.isfinite(grade).all() or _reserved(qid) or _has_duplicates(qid, docid):
        return None
    return Qrels(qid=qid, docid=docid, grade=grade, source=src)


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read TREC qrels (``qid iter docid grade``) or BEIR qrels TSV
    (``query-id<TAB>corpus-id<TAB>score`` with or without a header), plain or gzip.

    The first non-blank line decides the layout: 3 fields are BEIR (a header
    if its third field is not a number), otherwise TREC.  Fields are separated
    by runs of spaces and tabs in both.  Grades may be any finite number;
    grades <= 0 are judged non-relevant.  ``path`` may be a pipe or ``/dev/stdin``.

    Raises
    ------
    TierankInputError
        Naming file, line and reason, as [`read_run`][tierank.io.readers.read_run] does.
    """
    src = str(path)
    data = lexer.load(path)
    qrels = _qrels_fast(src, data)
    return qrels if qrels is not None else _qrels_slow(src, data)


def run_tag(path: str | os.PathLike) -> str | None:
    """The tag (6th field) of the last content line of a TREC run: what trec_eval prints as ``runid``.

    trec_eval keeps the run_id of the last line that is neither blank nor a ``#`` comment
    (``get_trec_results.c``).  A plain file is read from its end; gzip and pipes are read whole
    (a pipe's bytes are kept for the reader that follows); a `Held` file
    read already gives the tag its reader found.  None when no line has 6 fields.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> _ = p.write_text("q Q0 d 1 2.0 first\\nq Q0 e 2 1.0 last\\n# comment\\n\\n")
    >>> run_tag(p)
    'last'
    """
    if isinstance(path, lexer.Held):
        if path.loaded:
            return path.tag
        path = path.path
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as fh:
            if fh.read(2) != lexer.GZIP_MAGIC:

                def tail(start: int) -> bytes:
                    fh.seek(start)
                    return fh.read(st.st_size - start)

                return lexer.tail_tag(st.st_size, tail)
    return lexer.last_tag(lexer.load(path, keep=True))
