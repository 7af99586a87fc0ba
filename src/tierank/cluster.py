"""Work across machines with Ray: the one place tierank talks to a Ray cluster.

Nothing here imports Ray until it is used (``pip install 'tierank[ray]'``).  The evaluation of
run files (one large run, many files of one run, or a run partitioned by
:func:`tierank.stream.partition`) is a Ray Data pipeline over query-aligned blocks: plain text
files cut into byte ranges at query boundaries, gzip and columnar files whole; one evaluator
per worker holds the qrels (put once in the object store) and evaluates blocks with the engine
of :mod:`tierank.stream`; the driver checks that no query is in two blocks and combines the
per-query statistics exactly as the single-process engine does, so the result equals
:func:`tierank.evaluate` on the concatenated run, bit for bit.  Reranking uses the same Ray
cluster with one model actor per worker (:class:`RayScoring`).

Files may be local paths or URIs of any filesystem pyarrow supports (``s3://``, ``gs://``,
``hdfs://``, ...), read by the workers themselves.  On a cluster, start Ray on the nodes
(``ray start --head`` on one, ``ray start --address HEAD:6379`` on the others) and pass
``address="HEAD:6379"`` (or ``"auto"`` on a node of the cluster); without an address a local
Ray is started with ``num_cpus`` workers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .errors import Problem, TierankError, TierankInputError
from .io.sources import RUN_SUFFIXES, list_files  # noqa: F401  (RUN_SUFFIXES: the files a folder gives)


def require_ray():
    """The ``ray`` module, or a one-line error with the install command."""
    try:
        import ray
    except ImportError:
        raise TierankInputError("distributed evaluation needs Ray: pip install 'tierank[ray]'") from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Join the Ray cluster at ``address`` (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``), or
    start a local one with ``num_cpus`` CPUs; an existing connection is reused.  Returns ``ray``."""
    ray = require_ray()
    if not ray.is_initialized():
        kwargs = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=num_cpus, **kwargs)
    return ray


def list_sources(source: str | os.PathLike | Iterable) -> list[str]:
    """The run files of ``source``: a list as given, one file, or the files under a folder (local
    or a pyarrow filesystem URI) whose names end in :data:`RUN_SUFFIXES`, sorted
    (:func:`tierank.io.sources.list_files`)."""
    return list_files(source)


class _BlockEvaluator:
    """A Ray Data worker (one per CPU of the cluster): the qrels and measures loaded once, then
    one query-aligned block per call: a byte range of a plain text run (parsed by tierank's
    readers) or a whole gzip/Parquet/Arrow file (streamed).  Its output row carries the
    per-query statistics pickled, or the located input error (line numbers relative to the
    range: the driver shifts them)."""

    def __init__(self, qrels, measures, block_bytes: int, kwargs: dict):
        from .stream import _init_worker

        if not hasattr(qrels, "qid"):  # an ObjectRef
            import ray

            qrels = ray.get(qrels)
        _init_worker(qrels, measures, kwargs, 1)
        self.block_bytes, self.qrels, self.measures, self.kwargs = block_bytes, qrels, measures, kwargs
        self.ctx = dict(qrels=qrels, measures=measures, kwargs=kwargs)

    def __call__(self, batch: dict) -> dict:
        import pickle

        from .stream import _evaluate_task, iter_evaluate

        out = []
        for src, start, end in zip(batch["src"], batch["start"], batch["end"]):
            src, start, end = str(src), int(start), int(end)
            try:
                empty = False
                if start >= 0:
                    qids, res, rows, lines = _evaluate_task(("range", src, start, end), self.ctx)
                    empty = isinstance(res, str)  # judged queries, no judged document (condensed)
                    parts = [res] if hasattr(res, "stats") else []
                else:
                    qids, notes = [], {}
                    parts = list(iter_evaluate(self.qrels, src, self.measures, block_bytes=self.block_bytes,
                                               queries_seen=qids, notes=notes, **self.kwargs))
                    rows, lines, empty = None, None, bool(notes.get("condensed_empty"))
            except TierankInputError as e:
                qids, parts, rows, lines, empty = e, [], None, None, False
            out.append(pickle.dumps((qids, parts, rows, lines, empty)))
        return {"seq": batch["seq"], "payload": out}


def evaluate_files(qrels, source, measures, *, address: str | None = None, num_cpus: int | None = None,
                   block_bytes: int | None = None, workers: int | None = None, **kwargs):
    """:func:`tierank.evaluate` over run files on a Ray cluster, in query-aligned blocks with Ray Data.

    ``source``: a folder (local or a pyarrow URI), a file, or a list of files that together make one
    run, each query in one file only and grouped by query inside it (as
    :func:`tierank.stream.partition` writes them, or any TREC run).  Plain text files are cut into
    byte ranges of about ``block_bytes`` at query boundaries (:func:`tierank.stream.iter_ranges`), so
    one large file is spread over the whole cluster; gzip, Parquet and Arrow files are one block
    each, streamed by their worker.  The blocks go through a Ray Data pipeline
    (``from_items(...).map_batches(_BlockEvaluator, concurrency=workers)``, one evaluator per CPU
    by default, the qrels put once in the object store); the driver checks that no query is in two
    blocks and combines them exactly as the single-process engine does, so the result equals
    :func:`tierank.evaluate` on the concatenated run, bit for bit.  ``kwargs`` are those of
    :func:`tierank.evaluate` except ``complete``.
    """
    import pickle

    from .io.convert import to_qrels
    from .measures import parse_measures
    from .stream import (
        BLOCK_BYTES,
        CONDENSED_EMPTY,
        _combine,
        iter_ranges,
        seekable_text,
        shift_problems,
    )

    if kwargs.get("complete"):
        raise TierankInputError("evaluate_files: complete=True is not supported; evaluate the missing queries apart")
    if workers is not None and workers < 1:
        raise TierankInputError(f"workers must be at least 1, got {workers}")
    block = block_bytes or BLOCK_BYTES
    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    files = list_sources(source)
    q = to_qrels(qrels)
    items = []
    for f in files:
        spans = list(iter_ranges(f, block)) if seekable_text(f) else [(-1, -1)]
        items.extend({"seq": len(items), "src": f, "start": a, "end": b} for a, b in spans)
    ray = connect(address, num_cpus)
    from ray.data import DataContext

    DataContext.get_current().enable_progress_bars = False
    n = workers or max(1, min(len(items), int(ray.cluster_resources().get("CPU", 1))))
    ds = ray.data.from_items(items).map_batches(
        _BlockEvaluator, batch_size=1, compute=ray.data.ActorPoolStrategy(size=n), num_cpus=1,
        fn_constructor_args=(ray.put(q), parsed, block, kwargs))
    rows = sorted(ds.take_all(), key=lambda r: r["seq"])
    parts, owner, lines_before, condensed_empty = [], {}, {}, False
    for item, row in zip(items, rows):
        f = item["src"]
        qids, ps, _, lines, empty = pickle.loads(row["payload"])
        condensed_empty |= empty
        if isinstance(qids, TierankInputError):
            shift = lines_before.get(f, 0) if item["start"] >= 0 else 0
            raise TierankInputError(shift_problems(qids.problems, shift))
        lines_before[f] = lines_before.get(f, 0) + (lines or 0)
        for x in qids:
            if x in owner:
                where = owner[x]
                raise TierankInputError([Problem(f, None,
                    f"query {x!r} is also in {where}: each query must be in one file (tierank.stream.partition "
                    "groups a run by query)" if where != f else
                    f"the run is not grouped by query: query {x!r} appears again after other queries; "
                    "group it first with tierank.stream.partition() (DuckDB, out of core)")])
            owner[x] = f
        parts.extend(ps)
    if not parts:
        if condensed_empty:
            raise TierankInputError(f"{CONDENSED_EMPTY} {source} is judged in {q.source}")
        raise TierankInputError(f"no query of {source} is judged in {q.source}: nothing to evaluate")
    settings = dict(parts[0].settings, run=str(source),
                    distributed=f"ray data: {len(files)} files, {len(items)} blocks, {n} workers")
    return _combine(parts, parts[0].measures, settings)


# ------------------------------------------------------------------------------------ scoring (rerank)


class _ScorerActor:
    """One model load on one Ray worker; scores the queries it is sent."""

    def __init__(self, factory, spec, group: str, threads: int | None):
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        self.scorer = factory(spec, group)

    def metadata(self):
        return self.scorer.metadata() if hasattr(self.scorer, "metadata") else None

    def score(self, query: str, docs: list, variants: list):
        return self.scorer.score_query(query, docs, variants)

    def close(self) -> bool:
        """Free what the scorer holds beyond this process (a vLLM engine's processes), before the actor dies."""
        close = getattr(self.scorer, "close", None)
        if callable(close):
            close()
            return True
        return False


def _shut_down(ray, actors, timeout: float = 120.0) -> None:
    """Ask every live actor to close its scorer (a vLLM engine runs in processes of its own, which a killed
    actor would leave behind), wait up to ``timeout`` seconds, then kill the actors."""
    from ray.exceptions import GetTimeoutError, RayActorError

    refs = []
    for a in actors:
        try:
            refs.append(a.close.remote())
        except RayActorError:  # pragma: no cover - already dead
            pass
    if refs:
        try:
            ray.wait(refs, num_returns=len(refs), timeout=timeout)
        except (GetTimeoutError, RayActorError):  # pragma: no cover - a dead or stuck actor is killed below
            pass
    for a in actors:
        ray.kill(a)


class RayScoring:
    """Shards a rerank's queries over Ray workers (:func:`tierank.hps.protocol.rerank` with ``ray=``).

    ``workers`` actors (default: one per GPU of the cluster, else one per CPU) each load the model
    once (``num_gpus=1`` each where the cluster has GPUs) and score one query at a time; results
    come back to the driver, which alone writes the per-query cache, a query's records as soon as
    they arrive.  A worker that dies is replaced and its query sent again (up to ``retries`` times);
    a killed driver leaves a cache from which the next run scores only the missing queries.
    """

    def __init__(self, address: str | None = None, workers: int | None = None, retries: int = 3,
                 num_cpus: int | None = None):
        if workers is not None and workers < 1:
            raise TierankInputError(f"--workers must be at least 1, got {workers}")
        self.address, self.workers, self.retries, self.num_cpus = address, workers, retries, num_cpus
        self.restarts = 0  # workers replaced after dying (for reports and tests)

    def score(self, factory, spec, group: str, todo: list, data, missing_of, threads):
        ray = connect(self.address, self.num_cpus)
        res = ray.cluster_resources()
        gpus = int(res.get("GPU", 0))
        n = self.workers or max(1, gpus or int(res.get("CPU", 1)))
        n = min(n, len(todo))
        actor_cls = ray.remote(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1, max_restarts=0)(_ScorerActor)

        def start():
            return actor_cls.remote(factory, spec, group, threads)

        actors = [start() for _ in range(n)]
        try:
            meta = ray.get(actors[0].metadata.remote())
        except Exception:
            _shut_down(ray, actors)  # the others may still be loading their model (a vLLM engine: a minute or more)
            raise
        return self._results(ray, actors, start, todo, data, missing_of), meta

    def _results(self, ray, actors, start, todo, data, missing_of):
        from ray.exceptions import RayActorError

        queue = list(reversed(todo))
        tries: dict[str, int] = {}
        running: dict = {}  # ObjectRef -> (actor index, query, variants)

        def submit(i: int) -> None:
            q = queue.pop()
            variants = missing_of(q)
            docs = [data.docs[d] for d in data.candidates[q]]
            running[actors[i].score.remote(data.queries[q], docs, variants)] = (i, q, variants)

        try:
            for i in range(len(actors)):
                if queue:
                    submit(i)
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                ref = ready[0]
                i, q, variants = running.pop(ref)
                try:
                    result = ray.get(ref)
                except RayActorError:
                    tries[q] = tries.get(q, 0) + 1
                    if tries[q] > self.retries:
                        raise TierankError(f"query {q!r}: the Ray worker scoring it died {tries[q]} times") from None
                    self.restarts += 1
                    actors[i] = start()
                    queue.append(q)
                    submit(i)
                    continue
                if queue:
                    submit(i)
                yield q, variants, result
        finally:
            for ref in running:  # stop what is still scoring (an actor runs one task at a time: close waits on it)
                try:
                    ray.cancel(ref)
                except Exception:  # pragma: no cover - already finished or gone
                    pass
            _shut_down(ray, actors)
