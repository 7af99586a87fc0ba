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
import zlib
from collections.abc import Iterable, Iterator
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
        fh = open(path, "rb")
    except OSError as e:
        raise TierankInputError([Problem(src, None, f"cannot read ({e.strerror or e})")]) from None
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


def _concat(a: Run | None, b: Run) -> Run:
    if a is None:
        return b
    rank = None if a.rank is None or b.rank is None else np.concatenate([a.rank, b.rank])
    return Run(qid=pa.concat_arrays([_qids(a), _qids(b)]), docid=pa.concat_arrays([a.docid, b.docid]),
               score=np.concatenate([a.score, b.score]), rank=rank, source=a.source)


def _take(run: Run, start: int, stop: int) -> Run:
    return Run(qid=_qids(run)[start:stop], docid=run.docid[start:stop], score=run.score[start:stop],
               rank=None if run.rank is None else run.rank[start:stop], source=run.source)


def iter_batches(path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """The run at ``path`` as :class:`Run` batches holding whole queries, in file order.

    Raises :class:`TierankInputError` (file and line) for bad lines, and for a run not grouped by
    query (a query that reappears after other queries), naming the query and the way out.
    """
    if block_bytes < 1:
        raise TierankInputError(f"block size must be positive, got {block_bytes}")
    src = str(path)
    seen: set[str] = set()
    carry: Run | None = None
    line = 1
    first = True
    any_rows = False

    def emit(batch: Run, joined: int) -> Run:
        """``batch``, after the checks across blocks: no query seen before (grouped), and no document
        twice in the query that was joined across a block boundary (its first ``joined`` rows came
        from the earlier block; each block's own rows were checked by the reader)."""
        q = _qids(batch)
        qs = pc.unique(q).to_pylist()
        again = [x for x in qs if x in seen]
        if again:
            raise TierankInputError([Problem(src, None,
                f"the run is not grouped by query: query {again[0]!r} appears again after other queries; "
                "streaming needs each query's lines together: group it first with "
                "tierank.stream.partition() (DuckDB, out of core), or evaluate it in memory")])
        if joined:
            mask = pc.equal(q, q[0])
            docs = batch.docid.filter(mask)
            if len(pc.unique(docs)) != len(docs):
                raise TierankInputError([Problem(src, None, f"a document appears more than once in query "
                                                 f"{q[0].as_py()!r} (across a block boundary)")])
        seen.update(qs)
        return batch

    buf = bytearray()
    for chunk in _raw_blocks(path, block_bytes):
        if first:
            if chunk.startswith(lexer.BOM):
                chunk = chunk[len(lexer.BOM):]
            first = False
        buf += chunk
        start = 0
        while len(buf) - start >= block_bytes:
            cut = buf.rfind(b"\n", start, start + block_bytes)
            if cut < 0:
                cut = buf.find(b"\n", start + block_bytes)
                if cut < 0:
                    break
            block = bytes(buf[start:cut + 1])
            start = cut + 1
            if block.isspace():
                line += block.count(b"\n")
                continue
            run = _parse(src, block, line)
            line += block.count(b"\n")
            any_rows = True
            joined = 0 if carry is None else len(carry)
            batch = _concat(carry, run)
            q = _qids(batch)
            # hold back the rows of the last query: its lines may go on in the next block
            last = q[len(q) - 1]
            change = np.flatnonzero(~np.asarray(pc.equal(q, last)))
            split = int(change[-1]) + 1 if len(change) else 0
            carry = _take(batch, split, len(batch))
            if split:
                yield emit(_take(batch, 0, split), joined)
        del buf[:start]
    pending = bytes(buf)
    joined = 0 if carry is None else len(carry)
    if pending and not pending.isspace():
        carry = _concat(carry, _parse(src, pending, line))
        any_rows = True
    if carry is not None and len(carry):
        yield emit(carry, joined)
    if not any_rows:
        raise TierankInputError([Problem(src, None, "empty run: no lines")])


def batches_of(run_path: str | os.PathLike, block_bytes: int = BLOCK_BYTES) -> Iterator[Run]:
    """Query-aligned batches of any run source: a TREC text file (:func:`iter_batches`), a folder
    written by :func:`partition` (one batch per Parquet file, each holding whole queries), or one
    Parquet/Arrow file (read whole: columnar files are compact; split them with :func:`partition`)."""
    from .io.columnar import is_columnar
    from .io.convert import to_run

    p = Path(run_path)
    if p.is_dir():
        files = sorted(p.rglob("*.parquet"))
        if not files:
            raise TierankInputError([Problem(str(p), None, "no Parquet files in this folder")])
        import pyarrow.parquet as pq

        for f in files:
            t = pq.read_table(f).sort_by([("qid", "ascending"), ("line", "ascending")])
            yield to_run(t.select(["qid", "docid", "score"]), source=str(f))
    elif is_columnar(p):
        yield to_run(p)
    else:
        yield from iter_batches(p, block_bytes)


# --------------------------------------------------------------------------------------- evaluating


def _judgments_of(qrels: Qrels, qids: pa.Array) -> Qrels:
    keep = pc.is_in(qrels.qid, value_set=qids)
    return Qrels(qid=qrels.qid.filter(keep), docid=qrels.docid.filter(keep),
                 grade=np.asarray(qrels.grade)[np.asarray(keep)], source=qrels.source)


def _evaluate_batch(args) -> EvalResult | None:
    from .evaluate import evaluate

    qrels, run, measures, kwargs = args
    if len(qrels) == 0:
        return None  # no query of this batch is judged
    try:
        return evaluate(qrels, run, measures, **kwargs)
    except TierankInputError as e:
        if any("nothing to evaluate" in p.reason for p in e.problems):
            return None
        raise


def _combine(parts: list[EvalResult], measures, settings: dict) -> EvalResult:
    qids = [q for p in parts for q in p.qids]
    order = sorted(range(len(qids)), key=qids.__getitem__)
    idx = np.asarray(order, dtype=np.int64)

    def cat(arrays):
        return np.concatenate(arrays)[idx] if arrays else np.zeros(0)

    stats = {}
    for m in measures:
        ss = [p.stats[m] for p in parts]
        se = None if any(s.se is None for s in ss) else cat([s.se for s in ss])
        stats[m] = replace(ss[0], oblivious=cat([s.oblivious for s in ss]), expected=cat([s.expected for s in ss]),
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


def iter_evaluate(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                  block_bytes: int = BLOCK_BYTES, **kwargs) -> Iterator[EvalResult]:
    """Evaluate the run at ``run_path`` batch by batch: one :class:`EvalResult` per batch of whole
    queries (those judged), in file order, as soon as it is ready.  ``jobs`` worker processes
    evaluate batches in parallel (at most ``jobs + 1`` batches in memory).  ``kwargs`` are those of
    :func:`tierank.evaluate` (``complete`` is refused: use :func:`evaluate_stream`)."""
    from .measures import parse_measures

    if kwargs.get("complete"):
        raise TierankInputError("iter_evaluate: complete=True needs the whole query set; use evaluate_stream")
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    q = to_qrels(qrels)
    batches = ((_judgments_of(q, pc.unique(_qids(b))), b, parsed, kwargs) for b in batches_of(run_path, block_bytes))
    if jobs <= 1:
        for args in batches:
            res = _evaluate_batch(args)
            if res is not None:
                yield res
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        running: list = []
        done_in_order: dict = {}
        nxt = submitted = 0
        exhausted = False
        while True:
            while not exhausted and len(running) < jobs + 1:
                try:
                    args = next(batches)
                except StopIteration:
                    exhausted = True
                    break
                fut = pool.submit(_evaluate_batch, args)
                fut.index = submitted
                submitted += 1
                running.append(fut)
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                running.remove(fut)
                done_in_order[fut.index] = fut.result()
            while nxt in done_in_order:
                res = done_in_order.pop(nxt)
                nxt += 1
                if res is not None:
                    yield res


def evaluate_stream(qrels, run_path: str | os.PathLike, measures: Iterable[str] | str, *, jobs: int = 1,
                    block_bytes: int = BLOCK_BYTES, complete: bool = False, **kwargs) -> EvalResult:
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
    parts = list(iter_evaluate(q, run_path, parsed, jobs=jobs, block_bytes=block_bytes, **kwargs))
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
    con.execute("CREATE TEMP VIEW lines AS "
                "SELECT row_number() OVER () AS line, string_split_regex(trim(l, ' \t\r'), '[ \t]+') AS f "
                f"FROM read_csv({lit}, columns={{'l': 'VARCHAR'}}, delim='\x01', quote='', escape='', "
                "header=false, auto_detect=false, strict_mode=false)")
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
