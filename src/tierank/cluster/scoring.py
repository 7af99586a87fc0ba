"""Reranking on a Ray cluster: one model actor per worker ([`RayScoring`][tierank.cluster.scoring.RayScoring])."""

from __future__ import annotations

import logging

from ..errors import TierankError, TierankInputError
from .runtime import connect

__all__ = ["RayScoring"]

log = logging.getLogger(__name__)


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
        except (
            GetTimeoutError,
            RayActorError,
        ):  # pragma: no cover - a dead or stuck actor is killed below
            pass
    for a in actors:
        ray.kill(a)


class RayScoring:
    """Shards a rerank's queries over Ray workers ([`tierank.hps.protocol.rerank`][tierank.hps.protocol.rerank] with ``ray=``).

    ``workers`` actors (default: one per GPU of the cluster, else one per CPU) each load the model
    once (``num_gpus=1`` each where the cluster has GPUs) and score one query at a time; results
    come back to the driver, which alone writes the per-query cache, a query's records as soon as
    they arrive.  A worker that dies is replaced and its query sent again (up to ``retries`` times);
    a killed driver leaves a cache from which the next run scores only the missing queries.
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        retries: int = 3,
        num_cpus: int | None = None,
    ):
        if workers is not None and workers < 1:
            raise TierankInputError(f"--workers must be at least 1, got {workers}")
        self.address, self.workers, self.retries, self.num_cpus = (
            address,
            workers,
            retries,
            num_cpus,
        )
        self.restarts = 0  # workers replaced after dying (for reports and tests)

    def score(self, factory, spec, group: str, todo: list, data, missing_of, threads):
        ray = connect(self.address, self.num_cpus)
        res = ray.cluster_resources()
        gpus = int(res.get("GPU", 0))
        n = self.workers or max(1, gpus or int(res.get("CPU", 1)))
        n = min(n, len(todo))
        actor_cls = ray.remote(
            num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1, max_restarts=0
        )(_ScorerActor)

        def start():
            return actor_cls.remote(factory, spec, group, threads)

        actors = [start() for _ in range(n)]
        try:
            meta = ray.get(actors[0].metadata.remote())
        except Exception:
            _shut_down(
                ray, actors
            )  # the others may still be loading their model (a vLLM engine: a minute or more)
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
                        raise TierankError(
                            f"query {q!r}: the Ray worker scoring it died {tries[q]} times"
                        ) from None
                    self.restarts += 1
                    actors[i] = start()
                    queue.append(q)
                    submit(i)
                    continue
                if queue:
                    submit(i)
                yield q, variants, result
        finally:
            for ref in (
                running
            ):  # stop what is still scoring (an actor runs one task at a time: close waits on it)
                try:
                    ray.cancel(ref)
                except (
                    Exception
                ) as e:  # pragma: no cover - already finished or gone: the actors are killed below
                    log.debug("cancelling a scoring task failed: %r", e)
            _shut_down(ray, actors)
