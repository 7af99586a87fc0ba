"""Evaluating run files on a Ray cluster with Ray Data ([`evaluate_files`][tierank.cluster.evaluation.evaluate_files]).

The evaluation of run files (one large run, many files of one run, or a run partitioned by
[`tierank.stream.partition`][tierank.stream.partition]) is a Ray Data pipeline over query-aligned blocks: plain text
files cut into byte ranges at query boundaries, gzip and columnar files whole; one evaluator
per worker holds the qrels (put once in the object store) and evaluates blocks with the engine
of [`tierank.stream`][tierank.stream]; the driver checks that no query is in two blocks and combines the
per-query statistics exactly as the single-process engine does, so the result equals
[`tierank.evaluate`][tierank.evaluate] on the concatenated run, bit for bit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..errors import NoJudgedDocuments, NothingToEvaluate, Problem, TierankInputError
from ..io.sources import RUN_SUFFIXES, list_files  # RUN_SUFFIXES: the files a folder gives
from .runtime import connect

__all__ = ["RUN_SUFFIXES", "list_sources", "evaluate_files"]


def list_sources(source: str | os.PathLike | Iterable) -> list[str]:
    """The run files of ``source``: a list as given, one file, or the files under a folder (local
    or a pyarrow filesystem URI) whose names end in `RUN_SUFFIXES`, sorted
    ([`tierank.io.sources.list_files`][tierank.io.sources.list_files])."""
    return list_files(source)


class _BlockEvaluator:
    """A Ray Data worker (one per CPU of the cluster): the qrels and measures loaded once, then
    one query-aligned block per call: a byte range of a plain text run (parsed by tierank's
    readers) or a whole gzip/Parquet/Arrow file (streamed).  Its output row carries the
    per-query statistics pickled, or the located input error (line numbers relative to the
    range: the driver shifts them)."""

    def __init__(self, qrels, measures, block_bytes: int, settings):
        from ..evaluate import Evaluator
        from ..stream.evaluate import init_worker

        if not hasattr(qrels, "qid"):  # an ObjectRef
            import ray

            qrels = ray.get(qrels)
        self.evaluator = Evaluator(qrels, measures, settings)
        init_worker(self.evaluator, 1)
        self.block_bytes = block_bytes
        self.ctx = dict(evaluator=self.evaluator)

    def __call__(self, batch: dict) -> dict:
        import pickle

        from ..stream.evaluate import evaluate_batches, evaluate_task

        out = []
        notes: dict
        for src, start, end in zip(batch["src"], batch["start"], batch["end"]):
            src, start, end = str(src), int(start), int(end)
            try:
                empty = False
                if start >= 0:
                    qids, res, rows, lines = evaluate_task(("range", src, start, end), self.ctx)
                    empty = isinstance(res, str)  # judged queries, no judged document (condensed)
                    parts = [res] if hasattr(res, "stats") else []
                else:
                    qids, notes = [], {}
                    parts = list(
                        evaluate_batches(
                            self.evaluator,
                            src,
                            block_bytes=self.block_bytes,
                            queries_seen=qids,
                            notes=notes,
                        )
                    )
                    rows, lines, empty = None, None, bool(notes.get("condensed_empty"))
            except TierankInputError as e:
                qids, parts, rows, lines, empty = e, [], None, None, False
            out.append(pickle.dumps((qids, parts, rows, lines, empty)))
        return {"seq": batch["seq"], "payload": out}


def evaluate_files(
    qrels,
    source,
    measures,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    block_bytes: int | None = None,
    workers: int | None = None,
    **kwargs,
):
    """[`tierank.evaluate`][tierank.evaluate] over run files on a Ray cluster, in query-aligned blocks with Ray Data.

    ``source``: a folder (local or a pyarrow URI), a file, or a list of files that together make one
    run, each query in one file only and grouped by query inside it (as
    [`tierank.stream.partition`][tierank.stream.partition] writes them, or any TREC run).  Plain text files are cut into
    byte ranges of about ``block_bytes`` at query boundaries ([`tierank.stream.iter_ranges`][tierank.stream.iter_ranges]), so
    one large file is spread over the whole cluster; gzip, Parquet and Arrow files are one block
    each, streamed by their worker.  The blocks go through a Ray Data pipeline
    (``from_items(...).map_batches(_BlockEvaluator, concurrency=workers)``, one evaluator per CPU
    by default, the qrels put once in the object store); the driver checks that no query is in two
    blocks and combines them exactly as the single-process engine does, so the result equals
    [`tierank.evaluate`][tierank.evaluate] on the concatenated run, bit for bit.  ``kwargs`` are the settings of
    [`tierank.evaluate`][tierank.evaluate] ([`tierank.settings.EvalSettings`][tierank.settings.EvalSettings]) except ``complete``.
    """
    from ..io.blocks import BLOCK_BYTES
    from ..io.convert import to_qrels
    from ..measures import parse_measures
    from ..settings import EvalSettings
    from ..stream import combine_parts

    if kwargs.get("complete"):
        raise TierankInputError(
            "evaluate_files: complete=True is not supported; evaluate the missing queries apart"
        )
    if workers is not None and workers < 1:
        raise TierankInputError(f"workers must be at least 1, got {workers}")
    settings = EvalSettings(**kwargs)
    block = block_bytes or BLOCK_BYTES
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    files = list_sources(source)
    q = to_qrels(qrels)
    items = _block_items(files, block)
    ray = connect(address, num_cpus)
    n = workers or max(1, min(len(items), int(ray.cluster_resources().get("CPU", 1))))
    rows = _evaluate_blocks(ray, items, n, (ray.put(q), parsed, block, settings))
    parts = _gather_parts(items, rows, source, q)
    record = dict(
        parts[0].settings,
        run=str(source),
        distributed=f"ray data: {len(files)} files, {len(items)} blocks, {n} workers",
    )
    return combine_parts(parts, parts[0].measures, record)


def _block_items(files: list[str], block: int) -> list[dict]:
    """The pipeline's items: per plain text file its byte ranges of about ``block`` bytes at query
    boundaries, per other file the whole file (``start = end = -1``), numbered in order (``seq``)."""
    from ..io.blocks import iter_ranges
    from ..io.sources import seekable_text

    items: list[dict] = []
    for f in files:
        spans = list(iter_ranges(f, block)) if seekable_text(f) else [(-1, -1)]
        items.extend({"seq": len(items), "src": f, "start": a, "end": b} for a, b in spans)
    return items


def _evaluate_blocks(ray, items: list[dict], workers: int, evaluator_args: tuple) -> list[dict]:
    """The output rows of `_BlockEvaluator` (``workers`` actors built with ``evaluator_args``) over
    ``items``, in the items' order."""
    from ray.data import DataContext

    DataContext.get_current().enable_progress_bars = False
    ds = ray.data.from_items(items).map_batches(
        _BlockEvaluator,
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
        fn_constructor_args=evaluator_args,
    )
    return sorted(ds.take_all(), key=lambda r: r["seq"])


def _gather_parts(items: list[dict], rows: list[dict], source, q) -> list:
    """The blocks' per-query statistics, in order, once each block's input error (its lines shifted to
    the file's), a query in two blocks and an empty result are ruled out."""
    import pickle

    from ..io.blocks import lines_before, shift_problems
    from ..stream import CONDENSED_EMPTY

    parts: list = []
    owner: dict[str, str] = {}
    condensed_empty = False
    for item, row in zip(items, rows):
        f = item["src"]
        qids, ps, _, _, empty = pickle.loads(row["payload"])
        condensed_empty |= empty
        if isinstance(qids, TierankInputError):  # the lines before a range are counted only now
            shift = lines_before(f, item["start"]) if item["start"] >= 0 else 0
            raise TierankInputError(shift_problems(qids.problems, shift))
        for x in qids:
            if x in owner:
                raise TierankInputError([_query_twice(x, f, owner[x])])
            owner[x] = f
        parts.extend(ps)
    if not parts:
        if condensed_empty:
            raise NoJudgedDocuments(f"{CONDENSED_EMPTY} {source} is judged in {q.source}")
        raise NothingToEvaluate(
            f"no query of {source} is judged in {q.source}: nothing to evaluate"
        )
    return parts


def _query_twice(x: str, f: str, where: str) -> Problem:
    """The problem of query ``x`` of file ``f`` already met in file ``where``."""
    return Problem(
        f,
        None,
        f"query {x!r} is also in {where}: each query must be in one file (tierank.stream.partition "
        "groups a run by query)"
        if where != f
        else f"the run is not grouped by query: query {x!r} appears again after other queries; "
        "group it first with tierank.stream.partition() (DuckDB, out of core)",
    )
