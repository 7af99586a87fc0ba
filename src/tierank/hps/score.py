"""The rerank protocol's scoring stage: the set read, every candidate scored under every variant through the score cache.

[`score`][tierank.hps.score.score] reads the BEIR-layout set and its candidate run
(`tierank.io.beir.load_beir`) as a [`RerankPlan`][tierank.hps.plan.RerankPlan] selects it, then scores
what the score cache (`tierank.hps.cache`) lacks, one variant group (one model
load, one forward pass per query) at a time: a re-run scores nothing.  Run-to-run variance scores
every variant again under each other batch size, candidate order (`tierank.hps.variance.shuffle_candidates`),
padding side ([`PaddedFactory`][tierank.hps.score.PaddedFactory]) and repeat, each under its own cache key.
With ``ray`` the queries are sharded over Ray workers ([`tierank.cluster.RayScoring`][tierank.cluster.RayScoring]);
this process alone writes the caches.

The result, [`Scored`][tierank.hps.score.Scored], holds each variant's scores and cache records and its
rows in run-file order ([`ordered_run`][tierank.hps.score.ordered_run]): what the later stages evaluate
and write.

Timing: ``model_s`` is the forward pass (encoding; for Rank1-style scorers generation plus the final
pass), ``scoring_s`` the scoring step of the variant alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

import numpy as np

from tierank.errors import TierankError
from tierank.hps.base import QueryScores
from tierank.hps.cache import ScoreCache
from tierank.hps.plan import RerankPlan
from tierank.hps.registry import ModelSpec, cache_key, make_scorer, model_kind, scorer_path
from tierank.hps.variants import Variant

__all__ = ["Scored", "score", "ordered_run", "PaddedFactory"]


@dataclass(frozen=True)
class Scored:
    """What the scoring stage leaves: the set (``data``, a `tierank.io.beir.BeirSet`), its queries in
    order (``qids``), per variant the cache records and scores, the timings and the scorers' metadata
    (per variant group), and per variant its rows in run-file order with their tie layout (``runs``);
    ``extra`` the scores, and ``extra_runs`` the rows, under each run-to-run setting (``bs=N`` keyed by
    the int ``N``, ``order=S``, ``padding=SIDE``, ``repeat=R``)."""

    data: Any
    qids: list[str]
    records: dict[str, list[dict]]
    scores: dict[str, dict[str, np.ndarray]]
    timing: dict[str, dict]
    metadata: dict[str, Any]
    runs: dict[str, tuple[Any, Any]]
    extra: dict[Any, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)
    extra_runs: dict[Any, dict[str, Any]] = field(default_factory=dict)


class PaddedFactory:
    """A scorer factory ``(spec, group) -> scorer`` whose scorers pad their batches on ``side``: the
    scorer is built as usual, then its ``padding_side`` set (the generative scorers read it at each
    forward pass and refuse a side they do not offer).  A plain class, so a Ray worker can unpickle it."""

    def __init__(self, factory: Callable, side: str):
        self.factory, self.side = factory, side

    def __call__(self, spec: ModelSpec, group: str) -> Any:
        scorer = self.factory(spec, group)
        scorer.padding_side = self.side
        return scorer


def ordered_run(qids, cands, scores):
    """One variant's rows as a [`Run`][tierank.io.model.Run] in run-file order, and their `tierank.ties.layout`.

    Queries in ``qids`` order (sorted), each by descending score, ties in
    candidate order (the layout's score order); ``rank`` is the 1-based
    position in the query.
    """
    import pyarrow as pa

    from tierank.io.model import Run
    from tierank.ties import layout

    counts = [len(cands[x]) for x in qids]
    q = pa.array(np.repeat(np.asarray(qids, dtype=object), counts), pa.string())
    d = pa.array(list(chain.from_iterable(cands[x] for x in qids)), pa.string())
    s = np.concatenate([np.asarray(scores[x], dtype=np.float64) for x in qids])
    lay = layout(Run(qid=q, docid=d, score=s), qids)
    o = lay.order
    rank = np.arange(1, lay.n + 1, dtype=np.float64) - lay.query_starts[lay.sorted_codes]
    take = pa.array(o)
    return Run(qid=q.take(take), docid=d.take(take), score=s[o], rank=rank), lay


def _records(
    q: str, dids: list, res: QueryScores, missing: Sequence[Variant]
) -> list[tuple[str, dict]]:
    """The cache records of one scored query, one per variant scored; wrong shapes refused."""
    out = []
    for v in missing:
        s = np.asarray(res.scores[v.name], dtype=np.float64)
        if s.shape != (len(dids),) or not np.all(np.isfinite(s)):
            raise TierankError(
                f"scorer returned {s.shape} scores (finite: {bool(np.all(np.isfinite(s)))}) "
                f"for query {q!r}"
            )
        rec = {
            "query": q,
            "docids": list(dids),
            "scores": s.tolist(),
            "model_s": float(res.model_s),
            "scoring_s": float(res.scoring_s[v.name]),
        }
        if res.reasoning is not None:
            rec["reasoning"] = list(res.reasoning)
        out.append((v.name, rec))
    return out


def _record(cache: ScoreCache, q: str, docids: Sequence[str]) -> dict:
    """The record of a query the scoring stage scored (a query left unscored is a scorer's bug, said so)."""
    rec = cache.get(q, docids)
    if rec is None:
        raise TierankError(f"{cache.path}: query {q!r} was not scored")
    return rec


@dataclass(frozen=True)
class _Setting:
    """One setting under which every variant is scored: ``key`` (None for the plan's own, else the
    run-to-run key of `Scored.extra`), the progress ``label``, the cache key's extra fields
    (``fields``), the batch size, the set (its candidates perhaps reordered) and the scorer factory."""

    key: Any
    label: str
    fields: dict
    batch_size: int
    data: Any
    factory: Callable


@dataclass(frozen=True)
class _Collected:
    """What one setting left in the caches: per variant the records (queries in order), the scores in
    the set's candidate order, and the scorers' metadata per variant group."""

    records: dict[str, list[dict]]
    scores: dict[str, dict[str, np.ndarray]]
    metadata: dict[str, Any]


class _Scoring:
    """One scoring stage: the plan, the set, its queries, and the Ray sharding (if any)."""

    def __init__(self, plan: RerankPlan, data: Any):
        self.plan, self.data = plan, data
        self.qids = sorted(data.candidates)
        self.ray: Any = None
        if plan.ray:
            from tierank.cluster import RayScoring

            self.ray = RayScoring(
                address=None if plan.ray is True else str(plan.ray), workers=plan.workers
            )

    def factory(self, batch_size: int) -> Callable:
        """The scorer factory ``(spec, group) -> scorer`` at ``batch_size``."""
        p = self.plan
        if p.scorer_factory is not None:
            return p.scorer_factory
        # resolved here: a Ray worker's registry may lack run-time kinds and scorers
        kind = model_kind(p.spec.family)
        kind = replace(kind, scorer=scorer_path(kind, p.backend))
        dev, options = p.device, p.options
        return lambda s, g: make_scorer(s, g, batch_size, dev, options, kind)

    def settings(self) -> list[_Setting]:
        """The plan's own setting, then (run-to-run variance) each other batch size, candidate order
        (`tierank.hps.variance.shuffle_candidates`), padding side and repeat."""
        from tierank.hps.variance import shuffle_candidates

        p, data, bs = self.plan, self.data, self.plan.batch_size
        out = [_Setting(None, "", {}, bs, data, self.factory(bs))]
        out += [_Setting(b, f"bs={b}", {}, b, data, self.factory(b)) for b in p.extra_sizes]
        out += [
            _Setting(
                f"order={seed}",
                f"order={seed}",
                {"order": seed},
                bs,
                shuffle_candidates(data, seed),
                self.factory(bs),
            )
            for seed in p.extra_orders
        ]
        out += [
            _Setting(
                f"padding={side}",
                f"padding={side}",
                {"padding": side},
                bs,
                data,
                PaddedFactory(self.factory(bs), side),
            )
            for side in p.extra_sides
        ]
        out += [
            _Setting(f"repeat={r}", f"repeat={r}", {"repeat": r}, bs, data, self.factory(bs))
            for r in range(2, p.repeat + 1)
        ]
        return out

    def caches(self, setting: _Setting) -> dict[str, ScoreCache]:
        """One score cache per variant, under the cache key of the setting."""
        p = self.plan
        return {
            v.name: ScoreCache(
                p.output.cache,
                dict(
                    cache_key(p.spec, v, setting.batch_size, p.device, p.options, p.backend),
                    **setting.fields,
                ),
                warn=p.warn,
            )
            for v in p.variants
        }

    def fill(self, caches: Mapping[str, ScoreCache], setting: _Setting) -> None:
        """Score what ``caches`` lack, one variant group (one model) at a time."""
        for group, vs in self.plan.groups.items():
            self._fill_group(group, vs, caches, setting)

    def _fill_group(
        self, group: str, vs: Sequence[Variant], caches: Mapping[str, ScoreCache], setting: _Setting
    ) -> None:
        """Score what the caches of one variant group lack; each query's records are written as soon as they arrive."""
        p, data, factory = self.plan, setting.data, setting.factory
        todo = sorted(
            set().union(*(caches[v.name].missing(data.candidates, self.qids) for v in vs))
        )
        if not todo:
            return
        title = " ".join(x for x in (p.spec.slug, group, setting.label) if x)
        advance = p.progress(title, len(todo)) if p.progress else None

        def missing_of(q: str) -> list[Variant]:
            return [v for v in vs if caches[v.name].get(q, data.candidates[q]) is None]

        scorer: Any = None
        results: Any = None
        try:
            if self.ray is not None:
                results, meta = self.ray.score(
                    factory, p.spec, group, todo, data, missing_of, p.threads
                )
            else:
                if p.threads is not None:
                    import torch

                    torch.set_num_threads(p.threads)
                scorer = factory(p.spec, group)
                meta = scorer.metadata() if hasattr(scorer, "metadata") else None
                results = (
                    (
                        q,
                        m,
                        scorer.score_query(
                            data.queries[q], [data.docs[d] for d in data.candidates[q]], m
                        ),
                    )
                    for q, m in ((q, missing_of(q)) for q in todo)
                )
            if meta is not None:
                for v in vs:
                    caches[v.name].set_metadata(meta)
            for q, missing, res in results:
                for name, rec in _records(q, data.candidates[q], res, missing):
                    caches[name].append(rec)
                if advance:
                    advance()
        finally:  # free the model (a vLLM engine: its processes) before the next group, and on Ctrl-C or an error
            if results is not None and hasattr(results, "close"):
                results.close()  # the Ray generator shuts its workers down now, not when garbage-collected
            if scorer is not None and hasattr(
                scorer, "close"
            ):  # a test's factory may return a bare object
                scorer.close()

    def collect(self, caches: Mapping[str, ScoreCache], setting: _Setting) -> _Collected:
        """Every variant's records and scores under ``setting`` (scores in the set's candidate order)."""
        from tierank.hps.variance import realign

        own, moved = self.data.candidates, setting.data.candidates
        records = {
            name: [_record(cache, q, moved[q]) for q in self.qids] for name, cache in caches.items()
        }
        scores = {
            name: {
                q: realign(r, own[q])
                if setting.data is not self.data
                else np.asarray(r["scores"], dtype=np.float64)
                for q, r in zip(self.qids, recs)
            }
            for name, recs in records.items()
        }
        metadata = {
            g: caches[vs[0].name].metadata
            for g, vs in self.plan.groups.items()
            if caches[vs[0].name].metadata is not None
        }
        return _Collected(records, scores, metadata)

    def scored(self, collected: Mapping[Any, _Collected]) -> Scored:
        """The stage's result: the plan's own setting's records, scores, timings and metadata, and every
        setting's rows in run-file order."""
        qids, cands = self.qids, self.data.candidates
        main = collected[None]
        timing = {
            name: {
                "model_s": float(sum(r["model_s"] for r in rs)),
                "scoring_s": float(sum(r["scoring_s"] for r in rs)),
            }
            for name, rs in main.records.items()
        }
        runs = {name: ordered_run(qids, cands, sc) for name, sc in main.scores.items()}
        extra = {k: c.scores for k, c in collected.items() if k is not None}
        extra_runs = {
            k: {name: ordered_run(qids, cands, sc)[0] for name, sc in by_variant.items()}
            for k, by_variant in extra.items()
        }
        return Scored(
            self.data,
            qids,
            main.records,
            main.scores,
            timing,
            main.metadata,
            runs,
            extra,
            extra_runs,
        )


def score(plan: RerankPlan) -> Scored:
    """Read the set, score every candidate under every variant through the score cache (a re-run scores
    nothing), then (run-to-run variance) under each other batch size, candidate order and padding side,
    and ``repeat - 1`` more times under the plan's own setting (each repeat its own cache key)."""
    from tierank.io.beir import load_beir

    data = load_beir(
        plan.data_dir,
        plan.candidates,
        plan.qrels,
        queries=plan.queries,
        depth=plan.depth,
        max_queries=plan.max_queries,
    )
    scoring = _Scoring(plan, data)
    collected = {}
    for setting in scoring.settings():
        caches = scoring.caches(setting)
        scoring.fill(caches, setting)
        collected[setting.key] = scoring.collect(caches, setting)
    return scoring.scored(collected)
