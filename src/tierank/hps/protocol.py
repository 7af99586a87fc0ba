"""The low-precision reranking protocol, end to end (the paper's Table 1 on any model and set).

:func:`rerank` runs these stages, each in its own module:

1. **check** everything that can be checked before work, in this order: the
   model spec and the variants it supports (:mod:`tierank.hps.registry`: a
   hub name fails here), every option (the query selection of
   :func:`tierank.io.beir.check_selection`, the device's spelling, ...), then
   the output directory and every file it will hold
   (:mod:`tierank.hps.output`; no directory is made before all of this
   passed), then the device (only here is torch imported), and lock OUT/;
2. **read** the BEIR-layout set and the candidate run (:mod:`tierank.io.beir`);
3. **score** every candidate under every variant, through the score cache
   (:mod:`tierank.hps.cache`): variants that share a model dtype share one
   model load and one forward pass per query; a re-run scores nothing;
4. **write** one TREC run per variant with exact scores (``repr``: no tie is
   created or removed) and the reasoning of Rank1-style scorers;
5. **evaluate** each variant from its in-memory scores with
   :func:`tierank.evaluate` (the same rows, in the same order, as the run
   file) and build Table 1 (:mod:`tierank.hps.table`);
6. write ``table.tsv`` and ``table.json`` (:func:`tierank.hps.output.write_table`).

Timing: ``model_s`` is the forward pass (encoding; for Rank1-style scorers
generation plus the final pass), ``scoring_s`` the scoring step of the
variant alone.  HPS's overhead is ``(scoring_s(X->fp32) - scoring_s(X)) /
model_s``: the extra time the FP32 scoring step costs relative to the
forward pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.base import check_batch_size, check_device, check_positive, resolve_device
from tierank.hps.cache import ScoreCache
from tierank.hps.registry import (
    ModelSpec,
    cache_key,
    check_model,
    kinds,
    make_scorer,
    model_help,
    model_kind,
    parse_model,
    scorer_class,
    slug,
)
from tierank.hps.table import TABLE_FIELDS, table_rows, tie_stats
from tierank.hps.variants import Variant, parse_variants

__all__ = ["ProtocolResult", "rerank", "TABLE_FIELDS", "MODEL_HELP", "RERANK_REGIMES", "RERANK_MEASURES"]

#: The accepted ``--model`` spellings (from :mod:`tierank.hps.registry`).
MODEL_HELP = model_help()
#: The variants :func:`rerank` (and ``tierank rerank --regimes``) compare by default.
RERANK_REGIMES = ("fp32", "bf16", "bf16->fp32")
#: The measures :func:`rerank` (and ``tierank rerank -m``) report by default.
RERANK_MEASURES = ("nDCG@10", "RR@10")


@dataclass
class ProtocolResult:
    """Table 1 rows, the written runs and the settings of one protocol run."""

    rows: list[dict]
    runs: dict[str, Path]
    reasoning: dict[str, Path]
    settings: dict
    ties: dict[str, dict] = field(default_factory=dict)
    timing: dict[str, dict] = field(default_factory=dict)
    evals: dict[str, Any] = field(default_factory=dict)

    def records(self) -> list[dict]:
        return [dict(r) for r in self.rows]

    def document(self) -> dict:
        """What ``table.json`` holds: settings, rows, run and reasoning paths, tie statistics."""
        return {"settings": self.settings, "rows": self.rows,
                "runs": {k: str(v) for k, v in self.runs.items()},
                "reasoning": {k: str(v) for k, v in self.reasoning.items()}, "ties": self.ties}


def _options(spec: ModelSpec, budget: Any, max_doc_tokens: Any) -> dict:
    """The protocol options, checked (also those the model ignores: a bad value is a mistake either way)."""
    try:
        b = int(budget)
        ok = not isinstance(budget, bool) and (b == budget if isinstance(budget, float) else True)
    except (TypeError, ValueError):
        b, ok = -1, False
    if not ok or b < 0:
        raise TierankInputError([Problem("", None, f"reasoning budget must be >= 0 tokens, got {budget!r}")])
    return {"budget": b, "max_doc_tokens": check_positive(max_doc_tokens, "max doc tokens")}


def _records(q: str, dids: list, res, missing) -> list[tuple[str, dict]]:
    """The cache records of one scored query, one per variant scored; wrong shapes refused."""
    out = []
    for v in missing:
        s = np.asarray(res.scores[v.name], dtype=np.float64)
        if s.shape != (len(dids),) or not np.all(np.isfinite(s)):
            raise TierankError(f"scorer returned {s.shape} scores (finite: {bool(np.all(np.isfinite(s)))}) "
                               f"for query {q!r}")
        rec = {"query": q, "docids": list(dids), "scores": s.tolist(),
               "model_s": float(res.model_s), "scoring_s": float(res.scoring_s[v.name])}
        if res.reasoning is not None:
            rec["reasoning"] = list(res.reasoning)
        out.append((v.name, rec))
    return out


def _score(spec, groups, qids, data, caches, factory, progress, threads, ray=None) -> None:
    """Score what the caches lack, one variant group (one model) at a time; with ``ray`` (a
    :class:`tierank.cluster.RayScoring`) the queries are sharded over Ray workers, and this
    process alone writes the caches, each query's records as soon as they arrive."""
    for group, vs in groups.items():
        todo = sorted(set().union(*(caches[v.name].missing(data.candidates, qids) for v in vs)))
        if not todo:
            continue
        advance = progress(f"{spec.slug} {group}", len(todo)) if progress else None

        def missing_of(q):
            return [v for v in vs if caches[v.name].get(q, data.candidates[q]) is None]

        scorer = results = None
        try:
            if ray is not None:
                results, meta = ray.score(factory, spec, group, todo, data, missing_of, threads)
            else:
                if threads is not None:
                    import torch

                    torch.set_num_threads(threads)
                scorer = factory(spec, group)
                meta = scorer.metadata() if hasattr(scorer, "metadata") else None
                results = ((q, m, scorer.score_query(data.queries[q], [data.docs[d] for d in data.candidates[q]], m))
                           for q, m in ((q, missing_of(q)) for q in todo))
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
            if scorer is not None and hasattr(scorer, "close"):
                scorer.close()


class PaddedFactory:
    """A scorer factory ``(spec, group) -> scorer`` whose scorers pad their batches on ``side``: the
    scorer is built as usual, then its ``padding_side`` set (the generative scorers read it at each
    forward pass and refuse a side they do not offer).  A plain class, so a Ray worker can unpickle it."""

    def __init__(self, factory: Callable, side: str):
        self.factory, self.side = factory, side

    def __call__(self, spec, group):
        scorer = self.factory(spec, group)
        scorer.padding_side = self.side
        return scorer


def _padding_kinds() -> list[str]:
    """The model kinds whose (HF) scorer offers padding sides, for the refusal message."""
    out = []
    for k in kinds():
        try:
            if getattr(scorer_class(k.family), "padding_sides", None):
                out.append(k.family)
        except (ImportError, AttributeError, TierankError):  # a kind registered at run time may not import here
            pass
    return out


def _ordered(qids, cands, scores):
    """One variant's rows as a :class:`~tierank.io.model.Run` in run-file order, and their :func:`tierank.ties.layout`.

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


def rerank(
    data_dir: str | os.PathLike,
    model: str | ModelSpec,
    regimes: Iterable[str] | str = RERANK_REGIMES,
    measures: Iterable[str] | str = RERANK_MEASURES,
    out_dir: str | os.PathLike | None = None,
    candidates: str | os.PathLike | None = None,
    qrels: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    batch_size: int = 16,
    queries: str = "judged",
    depth: int | None = None,
    max_queries: int | None = None,
    device: str = "auto",
    budget: int = 64,
    max_doc_tokens: int = 256,
    tie_break: str = "trec_eval",
    progress: Callable[[str, int], Any] | None = None,
    scorer_factory: Callable[[ModelSpec, str], Any] | None = None,
    threads: int | None = None,
    warn: Callable[[str], Any] | None = None,
    ray: str | bool | None = None,
    workers: int | None = None,
    batch_sizes: Iterable[int] | None = None,
    backend: str = "hf",
    orders: Iterable[int] | None = None,
    padding_sides: Iterable[str] | None = None,
) -> ProtocolResult:
    """Run the protocol: score, cache, write runs, evaluate, build Table 1 and write OUT/.

    ``progress(label, total)`` may return a callable ``advance()`` invoked once
    per scored query (the CLI passes a rich progress bar); ``warn(message)``
    receives each unusable cache record (default: a
    :class:`~tierank.hps.cache.CacheWarning`).  ``scorer_factory(spec, group)``
    replaces :func:`tierank.hps.registry.make_scorer` (tests use it).  With
    ``out_dir`` every file of OUT/ is written (runs/, cache/, table.tsv,
    table.json; the CLI writes the same); with only ``cache_dir`` the runs land
    in ``cache_dir/runs``.  ``ray`` (True, or a Ray address such as ``"auto"`` or ``"HOST:6379"``)
    shards the queries over ``workers`` Ray workers, one model load each (one GPU each where the
    cluster has GPUs), writing into the same per-query cache: a killed run resumes with no query
    lost or scored twice (:mod:`tierank.cluster`).  ``batch_sizes`` also scores every variant under
    each of these batch sizes (the runs and Table 1 stay those of ``batch_size``) and reports the
    run-to-run variance in ``table.json`` (``variance``: the share of candidates whose score changed,
    E[M] per batch size and its spread; :mod:`tierank.hps.variance`); ``orders`` (seeds) also scores
    every variant with each query's candidates in a seeded random order (other batches, other padding);
    ``padding_sides`` (``"left"``, ``"right"``) also scores every variant with the batches padded on each
    side other than the scorer's default (the generative scorers: left; refused for the other kinds and
    the vLLM backend, which have no padding side to vary).  ``settings["platform"]``
    records the CPU, GPU, library versions and threads.  ``backend`` ``"vllm"`` runs the model kinds that
    have a vLLM scorer through vLLM (:mod:`tierank.hps.vllm`; the variants keep their meaning, the cache
    key records the backend).  Returns a :class:`ProtocolResult`.
    """
    from tierank.evaluate import evaluate
    from tierank.hps.output import locked, plan_output, run_paths, write_table
    from tierank.hps.variance import platform

    # ---- 1. check everything before any work: the model and the options, then OUT/, then (torch) the device
    from tierank.hps.vllm import check_backend
    from tierank.io.beir import check_selection, find_inputs, find_texts, load_beir
    from tierank.io.writers import write_atomic, write_run
    from tierank.measures.base import parse_measure
    from tierank.report.formats import jsonable
    from tierank.ties import TieBreak

    spec = model if isinstance(model, ModelSpec) else parse_model(model)
    variants = parse_variants(regimes)
    backend = check_backend(backend)
    default_side, extra_sides = None, []  # before check_model: the reason, not a missing vllm
    if padding_sides is not None:
        from tierank.hps.variance import padding_sides as check_sides

        sides = padding_sides.split(",") if isinstance(padding_sides, str) else list(padding_sides)
        cls = scorer_class(spec.family) if backend == "hf" else None
        offered_by = [] if getattr(cls, "padding_sides", None) else _padding_kinds()
        default_side, extra_sides = check_sides(sides, spec.family, backend, cls, offered_by)
    check_model(spec, variants, source=scorer_factory is None, backend=backend)  # vLLM's scorers: vllm installed
    mlist = [measures] if isinstance(measures, str) else list(measures)
    parsed_measures = [parse_measure(m) for m in mlist]
    TieBreak.parse(tie_break)
    batch_size = check_batch_size(batch_size)
    extra_sizes = [] if batch_sizes is None else [check_batch_size(b) for b in batch_sizes]
    extra_sizes = [b for b in dict.fromkeys(extra_sizes) if b != batch_size]
    try:
        extra_orders = [] if orders is None else list(dict.fromkeys(int(o) for o in orders))
    except (TypeError, ValueError):
        raise TierankInputError(f"orders: give integer seeds, got {orders!r}") from None
    threads = None if threads is None else check_positive(threads, "threads")
    options = _options(spec, budget, max_doc_tokens)
    queries, depth, max_queries = check_selection(queries, depth, max_queries)
    checked_device = check_device(device)
    qrels_path, cand_path = find_inputs(data_dir, candidates, qrels)
    inputs = [qrels_path, cand_path, *find_texts(data_dir)]  # plain or .gz: never overwritten
    targets = [p.name for v in variants for p in run_paths(Path(), spec.slug, slug(v.name))]
    plan = plan_output(out_dir, cache_dir, targets, inputs)
    if scorer_factory is not None:
        dev = device or "cpu"
    elif backend != "hf":  # a backend's scorer resolves its device (a vLLM build runs on one device kind)
        dev = getattr(scorer_class(spec.family, backend), "resolve_device", resolve_device)(checked_device)
    else:
        dev = resolve_device(checked_device)
    if backend == "vllm":  # its settings, refused now rather than when a (Ray) worker starts an engine
        from tierank.hps.vllm import check_batch_invariant, memory_fraction

        memory_fraction(dev)
        check_batch_invariant(dev)

    with locked(plan.dirs):
        # ---- 2. read
        data = load_beir(data_dir, candidates, qrels, queries=queries, depth=depth, max_queries=max_queries)
        qids = sorted(data.candidates)

        # ---- 3. score through the cache
        caches = {v.name: ScoreCache(plan.cache, cache_key(spec, v, batch_size, dev, options, backend), warn=warn)
                  for v in variants}
        groups: dict[str, list[Variant]] = {}
        for v in variants:
            groups.setdefault(v.group, []).append(v)
        kind = model_kind(spec.family)  # resolved here: a Ray worker's registry may lack run-time kinds

        def factory_for(bs):
            return scorer_factory or (lambda s, g: make_scorer(s, g, bs, dev, options, kind, backend))

        distributed = None
        if ray:
            from tierank.cluster import RayScoring

            distributed = RayScoring(address=None if ray is True else str(ray), workers=workers)
        _score(spec, groups, qids, data, caches, factory_for(batch_size), progress, threads, distributed)
        from tierank.hps.variance import realign, shuffle_candidates

        def extra_setting(name, key, bs, d, factory):  # run-to-run variance: every variant under one more setting
            cs = {v.name: ScoreCache(plan.cache, dict(cache_key(spec, v, bs, dev, options, backend), **key), warn=warn)
                  for v in variants}
            label = (lambda lbl, total: progress(f"{lbl} {name}", total)) if progress else None
            _score(spec, groups, qids, d, cs, factory, label, threads, distributed)
            return {v.name: {q: realign(cs[v.name].get(q, d.candidates[q]), data.candidates[q]) for q in qids}
                    for v in variants}

        extra_scores = {}
        for bs in extra_sizes:  # the same variants under other batch sizes
            extra_scores[bs] = extra_setting(f"bs={bs}", {}, bs, data, factory_for(bs))
        for seed in extra_orders:  # ... with each query's candidates in a seeded random order
            extra_scores[f"order={seed}"] = extra_setting(f"order={seed}", {"order": seed}, batch_size,
                                                          shuffle_candidates(data, seed), factory_for(batch_size))
        for side in extra_sides:  # ... with the batches padded on another side
            extra_scores[f"padding={side}"] = extra_setting(f"padding={side}", {"padding": side}, batch_size, data,
                                                            PaddedFactory(factory_for(batch_size), side))

        recs = {v.name: [caches[v.name].get(q, data.candidates[q]) for q in qids] for v in variants}
        scores = {name: {q: np.asarray(r["scores"], dtype=np.float64) for q, r in zip(qids, rs)}
                  for name, rs in recs.items()}
        timing = {name: {"model_s": float(sum(r["model_s"] for r in rs)),
                         "scoring_s": float(sum(r["scoring_s"] for r in rs))} for name, rs in recs.items()}
        meta = {g: caches[vs[0].name].metadata for g, vs in groups.items() if caches[vs[0].name].metadata is not None}

        # ---- 4. write the runs, 5. evaluate them from memory
        runs: dict[str, Path] = {}
        reasoning: dict[str, Path] = {}
        evals, ties = {}, {}
        for v in variants:
            path, rpath = run_paths(plan.runs, spec.slug, slug(v.name))
            run, lay = _ordered(qids, data.candidates, scores[v.name])
            write_run(path, run.qid, run.docid, run.score, f"{spec.slug}.{slug(v.name)}", protect=inputs)
            runs[v.name] = path
            if any("reasoning" in r for r in recs[v.name]):
                lines = [json.dumps({"query": qq, "docid": dd, "score": ss, "reasoning": rr}) + "\n"
                         for qq, r in zip(qids, recs[v.name])
                         for dd, ss, rr in zip(r["docids"], r["scores"], r.get("reasoning", []))]
                write_atomic(rpath, "".join(lines), protect=inputs)
                reasoning[v.name] = rpath
            run = replace(run, source=str(path))
            evals[v.name] = evaluate(data.qrels, run, parsed_measures, tie_break=tie_break)
            ties[v.name] = tie_stats(lay)

        variance = None
        if extra_scores:
            from tierank.hps.variance import batch_variance

            all_scores = {batch_size: scores, **extra_scores}
            all_evals = {batch_size: evals}
            for bs, sc in extra_scores.items():
                all_evals[bs] = {v.name: evaluate(data.qrels, _ordered(qids, data.candidates, sc[v.name])[0],
                                                  parsed_measures, tie_break=tie_break) for v in variants}
            keys = [batch_size, *extra_scores]
            variance = {"batch_sizes": [batch_size, *extra_sizes], "orders": extra_orders,
                        "padding_sides": [default_side, *extra_sides] if default_side else [],
                        "settings": [f"bs={k}" if isinstance(k, int) else k for k in keys],
                        "variants": batch_variance(keys, all_scores, all_evals, parsed_measures)}
        rows = table_rows(variants, parsed_measures, evals, ties, timing, len(qids))
        settings = {
            "model": spec.name, "family": spec.family, "source": spec.source,
            "variants": [v.name for v in variants], "measures": [str(m) for m in parsed_measures],
            "batch_size": int(batch_size), "device": dev, "backend": backend, "tie_break": tie_break,
            "queries": len(qids),
            "candidates": sum(len(c) for c in data.candidates.values()), "data": str(data_dir),
            "candidates_file": str(data.candidates_path), "qrels_file": str(data.qrels_path),
            "cache": str(plan.cache), "scorers": meta, "platform": platform(dev, threads),
        }
        if variance is not None:
            settings["variance"] = variance
        settings.update({o: options[o] for o in spec.kind.options})
        result = ProtocolResult(rows, runs, reasoning, settings, ties, timing, evals)

        # ---- 6. the table files
        if plan.out is not None:
            write_table(plan.out, jsonable(result.document()), rows, TABLE_FIELDS, inputs)
    return result
