"""Evaluation at any size: a run read in query-aligned batches, evaluated batch by batch.

Memory is bounded by the batch size, not by the input.  A TREC run is read in blocks of about
``block_bytes`` (plain, gzip or a pipe), each block cut at a line end and parsed by the same
readers as a whole file (:mod:`tierank.io.readers`; every refusal still names the file and the
line).  The rows of the query the block ends in are held back and joined to the next block, so
**a query is never split between batches**.  Each batch is evaluated by the one engine
(:func:`tierank.evaluate`) against the judgments of its queries only, in this process or in
``jobs`` worker processes, and the per-query statistics are put together at the end.

Combining is exact: every per-query statistic depends on that query's documents and judgments
only, and the summary over queries is computed from the per-query arrays in the order of the
in-memory engine (queries sorted), so the result equals :func:`tierank.evaluate` on the whole
run bit for bit (the tests check this on the brute-force cases split into tiny batches).

A run whose queries are not grouped (a query's lines interrupted by another query's) cannot be
read this way; it is detected (a query seen again in a later batch) and refused with the way
out: :func:`partition` writes it grouped by query with DuckDB (out of core, with a memory limit
and a temporary directory), never a home-made external sort.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import Problem, TierankInputError
from .io import lexer
from .io.convert import to_qrels
from .io.model import Qrels, Run
from .io.readers import _run_fast, _run_slow
from .measures import Stats
from .results import EvalResult
from .ties import TieSummary

#: default size of the blocks read from a text run (bytes); a batch holds about this much text
BLOCK_BYTES = 64 << 20
_READ = 8 << 20


# ------------------------------------------------------------------------------------------ reading


def _raw_blocks(path: str | os.PathLike, size: int) -> Iterator[bytes]:
    """Decompressed bytes of ``path`` in pieces of about ``size`` (gzip detected by its magic)."""
    src = str(path)
    try:
        if "://" in src:  # any filesystem pyarrow supports (s3://, gs://, hdfs://, file://)
            import pyarrow.fs as pafs

            fs, inner = pafs.FileSystem.from_uri(src)
            fh = fs.open_input_stream(inner, compression=None)
        else:
            fh = open(path, "rb")
    except (OSError, ValueError) as e:
        raise TierankInputError([Problem(src, None, f"cannot read ({getattr(e, 'strerror', None) or e})")]) from None
    with fh:
        step = max(1, min(_READ, size))
        head = fh.read(step)
        if not head.startswith(lexer.GZIP_MAGIC):
            chunk = head
            while chunk:
                yield chunk
                chunk = fh.read(size)
            return
        d = zlib.decompressobj(wbits=31)
        raw = head
        while True:
            if not raw:
                raw = fh.read(step)
                if not raw:
                    break
            try:
                out = d.decompress(raw)
            except zlib.error as e:
                raise TierankInputError([Problem(src, None, f"corrupt gzip data ({e})")]) from None
            raw = b""
            if out:
                yield out
            if d.eof:
                rest = d.unused_data
                if not rest:
                    rest = fh.read(step)
                if not rest.strip(b"\x00"):
                    if not fh.read(1):  # zero padding or nothing: the end
                        return
                    rest = rest  # more data after padding: fall through to the magic check
                if not rest.startswith(lexer.GZIP_MAGIC):
                    raise TierankInputError([Problem(src, None, "unexpected data after the end of the gzip stream")])
                d = zlib.decompressobj(wbits=31)
                raw = rest
        if not d.eof:
            raise TierankInputError([Problem(src, None, "truncated gzip data: the compressed stream ends early")])


def _parse(src: str, data: bytes, first_line: int) -> Run:
    """Parse a block of whole lines; problems are located in the file (``first_line`` is the block's)."""
    try:
        data = lexer.canonical(data)
        run = _run_fast(src, data)
        return run if run is not None else _run_slow(src, data)
    except TierankInputError as e:
        shift = first_line - 1
        raise TierankInputError([p if p.line is None else Problem(p.source, p.line + shift, p.reason)
                                 for p in e.problems]) from None


def _qids(run: Run) -> pa.Array:
    return run.qid.dictionary_decode() if pa.types.is_dictionary(run.qid.type) else run.qid


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
        line_start = max(buf.rfind(b"\r", line_start, stop) + 1, line_start)  # a lone CR inside: a line end
        field = _FIRST_FIELD.match(buf, line_start, stop).group(1)
        if field:
            if qid is None:
                qid = field
            elif field != qid:
                return pos
        pos = line_start
    return start


def _line_count(block: bytes) -> int:
    """Lines ended in ``block``: LF, CRLF and lone CR each end one (the readers' rule)."""
    n = block.count(b"\n")
    return n if block.find(b"\r") < 0 else n + block.count(b"\r") - block.count(b"\r\n")


def iter_blocks(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[tuple[bytes, int]]:
    """The text of the run at ``path`` as (bytes, number of its first line) blocks of about
    ``block_bytes``, each holding whole queries when the run is grouped by query: a block ends
    where its last query begins, and that query's lines start the next block.  Decompressed on
    the fly (gzip); the BOM of the file is dropped.  Nothing is parsed here: the blocks are
    parsed where they are evaluated (in the workers)."""
    if block_bytes < 1:
        raise TierankInputError(f"block size must be positive, got {block_bytes}")
    line = 1
    first = True
    buf = bytearray()
    retry_at = 0  # a query longer than a block: look again only when the buffer has doubled
    for chunk in _raw_blocks(path, block_bytes):
        if first:
            if chunk.startswith(lexer.BOM):
                chunk = chunk[len(lexer.BOM):]
            first = False
        buf += chunk
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
            yield block, line
            line += _line_count(block)
        del buf[:start]
        retry_at = max(0, retry_at - start)
    if buf:
        yield bytes(buf), line


def iter_batches(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """The run at ``path`` as :class:`Run` batches holding whole queries, in file order (the
    blocks of :func:`iter_blocks`, parsed).

    Raises :class:`TierankInputError` (file and line) for bad lines, and for a run not grouped by
    query (a query that reappears after other queries), naming the query and the way out.
    """
    src = str(path)
    check = _GroupCheck(src)
    any_rows = False
    for block, line in iter_blocks(path, block_bytes):
        if block.isspace():
            continue
        run = _parse(src, block, line)
        any_rows = True
        check(pc.unique(_qids(run)).to_pylist())
        yield run
    if not any_rows:
        raise TierankInputError([Problem(src, None, "empty run: no lines")])


class _GroupCheck:
    """Refuses a query seen in an earlier batch: the run is not grouped by query."""

    def __init__(self, src: str, order: list | None = None):
        self.src, self.seen, self.order = src, set(), order

    def __call__(self, qids: list[str]) -> None:
        again = [x for x in qids if x in self.seen]
        if again:
            raise TierankInputError([Problem(self.src, None,
                f"the run is not grouped by query: query {again[0]!r} appears again after other queries; "
                "streaming needs each query's lines together: group it first with "
                "tierank.stream.partition() (DuckDB, out of core), or evaluate it in memory")])
        self.seen.update(qids)
        if self.order is not None:
            self.order.extend(qids)


def batches_of(run_path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """Query-aligned batches of any run source: a TREC text file (:func:`iter_batches`), a folder
    written by :func:`partition` (one batch per Parquet file, each holding whole queries), or one
    Parquet/Arrow file (read whole: columnar files are compact; split them with :func:`partition`)."""
    from .io.columnar import is_columnar, read_table
    from .io.convert import to_run

    def columnar(src: str) -> Run:
        t = read_table(src)
        if "line" in t.column_names:  # written by partition(): back to file order
            t = t.sort_by([("line", "ascending")]).drop_columns(["line"])
        return to_run(t, source=src)

    text = str(run_path)
    if "://" not in text and Path(text).is_dir():
        files = sorted(Path(text).rglob("*.parquet"))
        if not files:
            raise TierankInputError([Problem(text, None, "no Parquet files in this folder")])
        for f in files:
            yield columnar(str(f))
    elif is_columnar(text):
        yield columnar(text)
    else:
        yield from iter_batches(text, block_bytes)


# --------------------------------------------------------------------------------------- evaluating


def _judgments_of(qrels: Qrels, qids: pa.Array) -> Qrels:
    keep = pc.is_in(qrels.qid, value_set=qids)
    return Qrels(qid=qrels.qid.filter(keep), docid=qrels.docid.filter(keep),
                 grade=np.asarray(qrels.grade)[np.asarray(keep)], source=qrels.source)


_WORKER: dict = {}


def _init_worker(qrels: Qrels, measures, kwargs: dict) -> None:
    _WORKER.update(qrels=qrels, measures=measures, kwargs=kwargs)


def _evaluate_task(task) -> tuple[list[str], EvalResult | None, int]:
    """Parse (a text block) and evaluate one batch: (its query ids in file order, the result, or
    None when none of its queries is judged, the number of run lines in it)."""
    from .evaluate import evaluate

    if task[0] == "text":
        _, src, block, line = task
        if block.isspace():
            return [], None, 0
        run = _parse(src, block, line)
    else:
        run = task[1]
    qids = pc.unique(_qids(run)).to_pylist()
    q = _WORKER["qrels"]
    judged = _judgments_of(q, pa.array(qids, pa.string()))
    if len(judged) == 0:
        return qids, None, len(run)
    try:
        return qids, evaluate(judged, run, _WORKER["measures"], **_WORKER["kwargs"]), len(run)
    except TierankInputError as e:
        if any("nothing to evaluate" in p.reason for p in e.problems):
            return qids, None, len(run)
        raise


def _tasks(run_path, block_bytes: int) -> Iterator[tuple]:
    from .io.columnar import is_columnar

    src = str(run_path)
    if ("://" not in src and Path(src).is_dir()) or is_columnar(src):
        for run in batches_of(src, block_bytes):
            yield ("run", run)
    else:
        for block, line in iter_blocks(src, block_bytes):
            yield ("text", src, block, line)


def _combine(parts: list[EvalResult], measures, settings: dict) -> EvalResult:
    qids = [q for p in parts for q in p.qids]
    order = sorted(range(len(qids)), key=qids.__getitem__)
    idx = np.asarray(order, dtype=np.int64)

    def cat(arrays):
        return np.concatenate(arrays)[idx] if arrays else np.zeros(0)

    stats = {}
    for m in measures:
        ss = [p.stats[m] for p in parts]
        se = None if all(s.se is None for s in ss) else cat(
            [s.se if s.se is not None else np.zeros(len(s.expected)) for s in ss])
        labelled = next((s for s in ss if s.method != "exact"), ss[0])  # sampled if any batch is
        stats[m] = replace(Stats(*(getattr(labelled, f) for f in ("oblivious", "expected", "min", "max", "var")),
                                 method=labelled.method, samples=labelled.samples, seed=labelled.seed), oblivious=cat([s.oblivious for s in ss]), expected=cat([s.expected for s in ss]),
                           min=cat([s.min for s in ss]), max=cat([s.max for s in ss]), var=cat([s.var for s in ss]),
                           se=se)
    bounds = {m: tuple(cat([p.bounds[m][i] for p in parts]) for i in (0, 1)) for m in parts[0].bounds}
    residual = {m: cat([p.residual[m] for p in parts]) for m in parts[0].residual}
    t = [TieSummary(**p.ties) for p in parts]
    docs = sum(x.docs for x in t)
    tied = sum(x.tied_docs for x in t)
    ties = TieSummary(docs=docs, queries=sum(x.queries for x in t),
                      queries_with_ties=sum(x.queries_with_ties for x in t), groups=sum(x.groups for x in t),
                      tied_docs=tied, largest=max((x.largest for x in t), default=0),
                      share=tied / docs if docs else 0.0).to_dict()
    return EvalResult(measures=list(measures), qids=[qids[i] for i in order], stats=stats, ties=ties,
                      settings=settings, bounds=bounds, residual=residual)


def _in_order(tasks: Iterator[tuple], jobs: int, init: tuple) -> Iterator[tuple]:
    """:func:`_evaluate_task` of every task, in task order: here, or in ``jobs`` worker processes with
    at most ``jobs + 1`` tasks in flight (results that finish early wait for their turn)."""
    if jobs <= 1:
        _init_worker(*init)
        yield from map(_evaluate_task, tasks)
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=init) as pool:
        running: dict = {}
        ready: dict = {}
        nxt = submitted = 0
        exhausted = False
        while True:
            while not exhausted and len(running) < jobs + 1:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                    break
                running[pool.submit(_evaluate_task, task)] = submitted
                submitted += 1
            if not running:
                break
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in finished:
                ready[running.pop(fut)] = fut.result()
            while nxt in ready:
                yield ready.pop(nxt)
                nxt += 1


def iter_evaluate(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                  block_bytes: int = BLOCK_BYTES, progress: Callable[[int, int], None] | None = None,
                  queries_seen: list | None = None, **kwargs) -> Iterator[EvalResult]:
    """Evaluate the run at ``run_path`` batch by batch: one :class:`EvalResult` per batch of whole
    queries (those judged), in file order, as soon as it is ready.  ``jobs`` worker processes parse
    and evaluate batches in parallel while this process only cuts the text into blocks at query
    boundaries (at most ``jobs + 1`` blocks in flight).  ``progress(lines, queries)`` is called with
    the run lines and queries done after each batch; ``queries_seen``, a list, receives every query id
    of the run in file order (judged or not).  ``kwargs`` are those of
    :func:`tierank.evaluate` (``complete`` is refused: use :func:`evaluate_stream`)."""
    from .measures import Measure, parse_measures

    if kwargs.get("complete"):
        raise TierankInputError("iter_evaluate: complete=True needs the whole query set; use evaluate_stream")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    whole = [str(m) for m in parsed if type(m).aggregate is not Measure.aggregate]
    if whole:
        raise TierankInputError(f"{', '.join(whole)}: the summary over queries is not a sum of per-query terms "
                                "(it needs every query at once); evaluate it in memory (tierank.evaluate)")
    q = to_qrels(qrels)
    check = _GroupCheck(str(run_path), queries_seen)
    tasks = _tasks(run_path, block_bytes)
    any_rows = False
    done = [0, 0]
    for qids, res, rows in _in_order(tasks, jobs, (q, parsed, kwargs)):
        check(qids)
        done[0] += rows
        done[1] += len(qids)
        if progress is not None:
            progress(*done)
        any_rows |= bool(qids)
        if res is not None:
            yield res
    if not any_rows:
        raise TierankInputError([Problem(str(run_path), None, "empty run: no lines")])


def evaluate_stream(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                    block_bytes: int = BLOCK_BYTES, complete: bool = False,
                    progress: Callable[[int, int], None] | None = None, **kwargs) -> EvalResult:
    """:func:`tierank.evaluate` on a run of any size, read in query-aligned batches.

    Equal, bit for bit, to ``tierank.evaluate(qrels, run_path, measures, **kwargs)``; memory is
    bounded by ``block_bytes`` (times ``jobs + 1``) plus the per-query results.

    Examples
    --------
    >>> from tierank.examples import path
    >>> import tierank
    >>> a = evaluate_stream(path("askubuntu-qrels"), path("askubuntu-run"), ["AP", "nDCG@10"], block_bytes=4096)
    >>> b = tierank.evaluate(path("askubuntu-qrels"), path("askubuntu-run"), ["AP", "nDCG@10"])
    >>> a.records() == b.records()
    True
    """
    from .evaluate import evaluate
    from .measures import parse_measures

    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    q = to_qrels(qrels)
    parts = list(iter_evaluate(q, run_path, parsed, jobs=jobs, block_bytes=block_bytes, progress=progress, **kwargs))
    if complete:
        # qrels queries the run does not have: evaluated with no documents (every one scores as trec_eval -c)
        have = {x for p in parts for x in p.qids}
        missing = sorted(set(pc.unique(q.qid).to_pylist()) - have)
        if missing:
            empty = Run(qid=pa.array([], pa.string()), docid=pa.array([], pa.string()), score=np.zeros(0),
                        rank=None, source=str(run_path))
            parts.append(evaluate(_judgments_of(q, pa.array(missing, pa.string())), empty, parsed,
                                  complete=True, **kwargs))
    if not parts:
        raise TierankInputError(f"no query of {run_path} is judged in {q.source}: nothing to evaluate "
                                "(query ids must match exactly)")
    settings = dict(parts[0].settings, run=str(run_path), complete=complete, streamed=True)
    return _combine(parts, parts[0].measures, settings)


# -------------------------------------------------------------------------------------- partitioning


def partition(run_path: str | os.PathLike, out_dir: str | os.PathLike, *, buckets: int = 64,
              memory_limit: str = "1GB", temp_dir: str | os.PathLike | None = None) -> Path:
    """Write the TREC run at ``run_path`` (plain or gzip) grouped by query, out of core, with DuckDB.

    DuckDB reads the lines (whitespace-separated fields, as the TREC readers split them) with
    their line numbers and writes one Parquet file per query-hash bucket (``COPY ...
    PARTITION_BY``), under ``memory_limit`` and spilling to ``temp_dir``.  Each file holds whole
    queries; :func:`batches_of` reads them back in (query, line) order, so file order inside ties
    (``tie_break="input"``) is kept.  Lines without 6 fields or with a score that is not a finite
    number are refused with their line numbers.  Returns ``out_dir``, which must not exist or be
    empty.  Needs ``pip install 'tierank[scale]'``.
    """
    try:
        import duckdb
    except ImportError:
        raise TierankInputError("partitioning needs DuckDB: pip install 'tierank[scale]'") from None
    src = str(run_path)
    if not Path(run_path).is_file():
        raise TierankInputError([Problem(src, None, "no such file")])
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TierankInputError(f"{out}: exists and is not an empty folder; partition writes a new folder")
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    if temp_dir is not None:
        con.execute(f"SET temp_directory = '{Path(temp_dir).as_posix()}'")
    lit = "'" + src.replace("'", "''") + "'"
    con.execute("SET enable_progress_bar = false")
    lines = (f"read_csv({lit}, columns={{'l': 'VARCHAR'}}, delim='\x01', quote='', escape='', header=false, "
             "auto_detect=false, strict_mode=false)")
    # fields split on runs of spaces and tabs (the readers' grammar); plain single spaces, the usual
    # layout, take the fast split
    irregular = con.execute(f"SELECT bool_or(contains(l, '\t') OR contains(l, '  ') OR starts_with(l, ' ') "
                            f"OR ends_with(l, ' ') OR contains(l, '\r')) FROM {lines}").fetchone()[0]
    split = ("string_split_regex(trim(l, ' \t\r'), '[ \t]+')" if irregular else "string_split(l, ' ')")
    con.execute(f"CREATE TEMP VIEW lines AS SELECT row_number() OVER () AS line, {split} AS f FROM {lines}")
    bad = con.execute("""SELECT line, len(f) FROM lines
        WHERE trim(f[1]) <> '' AND (len(f) < 6 OR TRY_CAST(f[5] AS DOUBLE) IS NULL
                                    OR NOT isfinite(TRY_CAST(f[5] AS DOUBLE)))
        ORDER BY line LIMIT 5""").fetchall()
    if bad:
        raise TierankInputError([Problem(src, int(line), "expected 6 fields (qid Q0 docid rank score tag)"
                                         if n < 6 else "score is not a finite number") for line, n in bad])
    out.mkdir(parents=True, exist_ok=True)
    dest = "'" + out.as_posix().replace("'", "''") + "'"
    con.execute(f"""COPY (SELECT f[1] AS qid, f[3] AS docid, CAST(f[5] AS DOUBLE) AS score, line,
                         hash(f[1]) % {int(buckets)} AS bucket
                  FROM lines WHERE trim(f[1]) <> '') TO {dest}
                  (FORMAT parquet, PARTITION_BY (bucket), OVERWRITE_OR_IGNORE)""")
    return out


# ------------------------------------------------------------------------------------------ many runs


def _evaluate_named(args) -> tuple[str, EvalResult]:
    from .evaluate import evaluate

    name, qrels, run, measures, kwargs = args
    return name, evaluate(qrels, run, measures, **kwargs)


def run_names(runs) -> dict[str, object]:
    """``{name: run}`` from a mapping, or from paths named by their file names (a clash is an error).

    >>> list(run_names(["a/bm25.txt", "b/dense.txt"]))
    ['bm25.txt', 'dense.txt']
    """
    if isinstance(runs, dict):
        return dict(runs)
    out: dict[str, object] = {}
    for r in runs:
        name = Path(r).name
        if name in out:
            raise TierankInputError(f"two runs are named {name!r} ({out[name]} and {r}); pass a dict of names")
        out[name] = r
    return out


def evaluate_many(qrels, runs, measures: Iterable[str] | str, *, jobs: int = 1, **kwargs) -> dict[str, EvalResult]:
    """Evaluate many runs against one qrels, read once: ``{run name: EvalResult}`` in the order given.

    ``runs`` is a list of paths (named by file name) or a dict ``{name: run}`` of any input
    :func:`tierank.evaluate` takes.  ``jobs`` worker processes evaluate runs in parallel.  Each
    result equals ``tierank.evaluate(qrels, run, measures, **kwargs)``.

    >>> from tierank.examples import path
    >>> res = evaluate_many(path("qrels"), {"a": path("run"), "b": path("run")}, ["P@2"])
    >>> [(name, r.aggregate()["expected"].round(4).tolist()) for name, r in res.items()]
    [('a', [0.8333]), ('b', [0.8333])]
    """
    from .measures import parse_measures

    named = run_names(runs)
    if not named:
        raise TierankInputError("no run given")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    q = to_qrels(qrels)
    jobs_args = [(name, q, r if not isinstance(r, (str, os.PathLike)) else str(r), parsed, kwargs)
                 for name, r in named.items()]
    if jobs <= 1 or len(jobs_args) == 1:
        return dict(_evaluate_named(a) for a in jobs_args)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(_evaluate_named, jobs_args))
