"""The low-precision reranking protocol, end to end (the paper's Table 1 on any model and set).

[`rerank`][tierank.hps.protocol.rerank] takes a [`RerankConfig`][tierank.hps.protocol.RerankConfig] and runs these stages, each a function here over
the modules that do the work:

1. **check** ([`check`][tierank.hps.protocol.check]) everything that can be checked before work, in this order: the
   model spec and the variants it supports ([`tierank.hps.registry`][tierank.hps.registry]: a
   hub name fails here), every option (the query selection of
   `tierank.io.beir.check_selection`, the device's spelling, ...), then
   the output directory and every file it will hold
   (`tierank.hps.output`; no directory is made before all of this
   passed), then the device (only here is torch imported), and lock OUT/;
2. **read** ([`read`][tierank.hps.protocol.read]) the BEIR-layout set and the candidate run (`tierank.io.beir`);
3. **score** ([`score`][tierank.hps.protocol.score]) every candidate under every variant, through the score cache
   (`tierank.hps.cache`): variants that share a model dtype share one
   model load and one forward pass per query; a re-run scores nothing;
4. **write** ([`write_runs`][tierank.hps.protocol.write_runs]) one TREC run per variant with exact scores (``repr``: no tie is
   created or removed) and the reasoning of Rank1-style scorers;
5. **evaluate** ([`evaluate_runs`][tierank.hps.protocol.evaluate_runs], [`run_variance`][tierank.hps.protocol.run_variance]) each variant from its in-memory scores with
   [`tierank.evaluate`][tierank.evaluate] (the same rows, in the same order, as the run
   file) and build Table 1 ([`table`][tierank.hps.protocol.table], `tierank.hps.table`);
6. write ``table.tsv`` and ``table.json`` ([`write_outputs`][tierank.hps.protocol.write_outputs], `tierank.hps.output.write_table`).

Timing: ``model_s`` is the forward pass (encoding; for Rank1-style scorers
generation plus the final pass), ``scoring_s`` the scoring step of the
variant alone.  HPS's overhead is ``(scoring_s(X->fp32) - scoring_s(X)) /
model_s``: the extra time the FP32 scoring step costs relative to the
forward pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from tierank.errors import TierankError, TierankInputError
from tierank.hps.base import QueryScores
from tierank.hps.cache import ScoreCache
from tierank.hps.checks import (
    check_batch_size,
    check_budget,
    check_device,
    check_positive,
    resolve_device,
)
from tierank.hps.output import OutputPlan
from tierank.hps.registry import (
    DEFAULT_BACKEND,
    ModelSpec,
    backend_of,
    cache_key,
    check_backend,
    check_engine,
    check_model,
    kinds,
    make_scorer,
    model_help,
    model_kind,
    parse_model,
    scorer_class,
    scorer_path,
    slug,
)
from tierank.hps.table import RBO_P, TABLE_FIELDS, fp32_similarity, table_rows, tie_stats
from tierank.hps.variants import Variant, parse_variants

__all__ = [
    "ProtocolResult",
    "RerankConfig",
    "Checked",
    "Scored",
    "rerank",
    "check",
    "read",
    "score",
    "write_runs",
    "evaluate_runs",
    "run_variance",
    "table",
    "write_outputs",
    "check_options",
    "PaddedFactory",
    "TABLE_FIELDS",
    "MODEL_HELP",
    "RERANK_REGIMES",
    "RERANK_MEASURES",
]

#: The accepted ``--model`` spellings (from `tierank.hps.registry`).
MODEL_HELP = model_help()
#: The variants `rerank` (and ``tierank rerank --regimes``) compare by default.
RERANK_REGIMES = ("fp32", "bf16", "bf16->fp32")
#: The measures `rerank` (and ``tierank rerank -m``) report by default.
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
        return {
            "settings": self.settings,
            "rows": self.rows,
            "runs": {k: str(v) for k, v in self.runs.items()},
            "reasoning": {k: str(v) for k, v in self.reasoning.items()},
            "ties": self.ties,
        }


@dataclass
class RerankConfig:
    """Everything one protocol run is asked to do: what [`rerank`][tierank.hps.protocol.rerank] takes (the ``tierank rerank`` options).

    ``data_dir``, ``candidates``, ``qrels``: the BEIR-layout set and its run and qrels (default in
    ``data_dir``); ``model``: a ``--model`` spelling or a [`ModelSpec`][tierank.hps.registry.ModelSpec];
    ``regimes``, ``measures``: the variants compared and the measures reported; ``out_dir``,
    ``cache_dir``: OUT/ (every file) or only the score cache (the runs then land in ``cache_dir/runs``);
    ``batch_size``, ``device``, ``backend`` (``hf`` or ``vllm``), ``threads``; the query selection
    (``queries``, ``depth``, ``max_queries``); the model kinds' options (``budget``, ``max_doc_tokens``);
    ``tie_break``; run-to-run variance (``batch_sizes``, ``orders``, ``padding_sides``); sharding over
    Ray (``ray``: True or an address, ``workers``).  Hooks: ``progress(label, total)`` may return an
    ``advance()`` called once per scored query; ``warn(message)`` receives each unusable cache record;
    ``scorer_factory(spec, group)`` replaces [`tierank.hps.registry.make_scorer`][tierank.hps.registry.make_scorer] (tests use it).
    """

    data_dir: str | os.PathLike
    model: str | ModelSpec
    regimes: Iterable[str] | str = RERANK_REGIMES
    measures: Iterable[Any] | str = RERANK_MEASURES
    out_dir: str | os.PathLike | None = None
    candidates: str | os.PathLike | None = None
    qrels: str | os.PathLike | None = None
    cache_dir: str | os.PathLike | None = None
    batch_size: int = 16
    queries: str = "judged"
    depth: int | None = None
    max_queries: int | None = None
    device: str = "auto"
    budget: int = 64
    max_doc_tokens: int = 256
    tie_break: str = "trec_eval"
    progress: Callable[[str, int], Any] | None = None
    scorer_factory: Callable[[ModelSpec, str], Any] | None = None
    threads: int | None = None
    warn: Callable[[str], Any] | None = None
    ray: str | bool | None = None
    workers: int | None = None
    batch_sizes: Iterable[int] | None = None
    backend: str = "hf"
    orders: Iterable[int] | None = None
    padding_sides: Iterable[str] | None = None
    repeat: int = 1


@dataclass
class Checked:
    """What stage 1 ([`check`][tierank.hps.protocol.check]) made of a [`RerankConfig`][tierank.hps.protocol.RerankConfig]: every value checked, OUT/ planned."""

    spec: ModelSpec
    variants: list[Variant]
    backend: str
    measures: list[Any]
    batch_size: int
    extra_sizes: list[int]
    extra_orders: list[int]
    default_side: str | None
    extra_sides: list[str]
    threads: int | None
    options: dict
    queries: str
    depth: int | None
    max_queries: int | None
    device: str
    inputs: list[Path]
    plan: OutputPlan

    @property
    def groups(self) -> dict[str, list[Variant]]:
        """The variants by group: those of one group share one model load and one forward pass per query."""
        groups: dict[str, list[Variant]] = {}
        for v in self.variants:
            groups.setdefault(v.group, []).append(v)
        return groups


@dataclass
class Scored:
    """Stage 3's result: per variant the cache records and scores (queries in ``qids`` order), the timings
    and the scorers' metadata; ``extra`` the scores under each run-to-run setting (``bs=N``, ``order=S``,
    ``padding=SIDE``)."""

    qids: list[str]
    records: dict[str, list[dict]]
    scores: dict[str, dict[str, np.ndarray]]
    timing: dict[str, dict]
    metadata: dict[str, Any]
    extra: dict[Any, dict[str, dict[str, np.ndarray]]] = field(default_factory=dict)


def check_options(budget: Any, max_doc_tokens: Any) -> dict:
    """The protocol options, checked (also those the model ignores: a bad value is a mistake either way)."""
    return {
        "budget": check_budget(budget),
        "max_doc_tokens": check_positive(max_doc_tokens, "max doc tokens"),
    }


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


def _score_group(
    spec: ModelSpec,
    group: str,
    vs: Sequence[Variant],
    qids: Sequence[str],
    data: Any,
    caches: Mapping[str, ScoreCache],
    factory: Callable,
    progress: Callable | None,
    threads: int | None,
    ray: Any = None,
) -> None:
    """Score what the caches of one variant group (one model) lack; with ``ray`` (a
    [`tierank.cluster.RayScoring`][tierank.cluster.RayScoring]) the queries are sharded over Ray workers, and this process
    alone writes the caches, each query's records as soon as they arrive."""
    todo = sorted(set().union(*(caches[v.name].missing(data.candidates, qids) for v in vs)))
    if not todo:
        return
    advance = progress(f"{spec.slug} {group}", len(todo)) if progress else None

    def missing_of(q: str) -> list[Variant]:
        return [v for v in vs if caches[v.name].get(q, data.candidates[q]) is None]

    scorer: Any = None
    results: Any = None
    try:
        if ray is not None:
            results, meta = ray.score(factory, spec, group, todo, data, missing_of, threads)
        else:
            if threads is not None:
                import torch

                torch.set_num_threads(threads)
            scorer = factory(spec, group)
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


def _score(
    spec: ModelSpec,
    groups: Mapping[str, Sequence[Variant]],
    qids: Sequence[str],
    data: Any,
    caches: Mapping[str, ScoreCache],
    factory: Callable,
    progress: Callable | None,
    threads: int | None,
    ray: Any = None,
) -> None:
    """Score what the caches lack, one variant group (one model) at a time (`_score_group`)."""
    for group, vs in groups.items():
        _score_group(spec, group, vs, qids, data, caches, factory, progress, threads, ray)


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


def _padding_kinds() -> list[str]:
    """The model kinds whose (HF) scorer offers padding sides, for the refusal message."""
    out = []
    for k in kinds():
        try:
            if getattr(scorer_class(k.family), "padding_sides", None):
                out.append(k.family)
        except (
            ImportError,
            AttributeError,
            TierankError,
        ):  # a kind registered at run time may not import here
            pass
    return out


def _ordered(qids, cands, scores):
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


# ------------------------------------------------------------------ the stages


def check(config: RerankConfig) -> Checked:
    """Stage 1: check everything before any work (see the module docstring), then plan and create OUT/.

    The model and the options first (a hub name fails here; torch is not imported), then OUT/ and every
    file it will hold (no directory is made before all of this passed), then the device (only here is
    torch imported) and, on the vLLM backend, its engine settings.
    """
    from tierank.hps.output import plan_output, run_paths
    from tierank.hps.variance import padding_sides as check_sides
    from tierank.io.beir import check_selection, find_inputs, find_texts
    from tierank.measures.base import parse_measure
    from tierank.ties import TieBreak

    c = config
    spec = c.model if isinstance(c.model, ModelSpec) else parse_model(c.model)
    variants = parse_variants(c.regimes)
    backend = check_backend(c.backend)
    default_side: str | None = None
    extra_sides: list[str] = []
    if c.padding_sides is not None:  # before check_model: the reason, not a missing vllm
        sides = (
            c.padding_sides.split(",")
            if isinstance(c.padding_sides, str)
            else list(c.padding_sides)
        )
        cls = scorer_class(spec.family) if backend == DEFAULT_BACKEND else None
        offered_by = [] if getattr(cls, "padding_sides", None) else _padding_kinds()
        default_side, extra_sides = check_sides(
            sides, spec.family, backend, cls, offered_by, backend_of(backend).no_padding
        )
    check_model(
        spec, variants, source=c.scorer_factory is None, backend=backend
    )  # a backend's scorers: its engine installed
    mlist = [c.measures] if isinstance(c.measures, str) else list(c.measures)
    measures = [parse_measure(m) for m in mlist]
    TieBreak.parse(c.tie_break)
    batch_size = check_batch_size(c.batch_size)
    extra_sizes = [] if c.batch_sizes is None else [check_batch_size(b) for b in c.batch_sizes]
    extra_sizes = [b for b in dict.fromkeys(extra_sizes) if b != batch_size]
    try:
        extra_orders = [] if c.orders is None else list(dict.fromkeys(int(o) for o in c.orders))
    except (TypeError, ValueError):
        raise TierankInputError(f"orders: give integer seeds, got {c.orders!r}") from None
    if isinstance(c.repeat, bool) or not isinstance(c.repeat, int) or c.repeat < 1:
        raise TierankInputError(f"repeat: give a positive integer, got {c.repeat!r}")
    threads = None if c.threads is None else check_positive(c.threads, "threads")
    options = check_options(c.budget, c.max_doc_tokens)
    queries, depth, max_queries = check_selection(c.queries, c.depth, c.max_queries)
    checked_device = check_device(c.device)
    qrels_path, cand_path = find_inputs(c.data_dir, c.candidates, c.qrels)
    inputs = [qrels_path, cand_path, *find_texts(c.data_dir)]  # plain or .gz: never overwritten
    targets = [p.name for v in variants for p in run_paths(Path(), spec.slug, slug(v.name))]
    plan = plan_output(c.out_dir, c.cache_dir, targets, inputs)
    if c.scorer_factory is not None:
        dev = c.device or "cpu"
    elif (
        backend != DEFAULT_BACKEND
    ):  # a backend's scorer resolves its device (a vLLM build runs on one device kind)
        dev = getattr(scorer_class(spec.family, backend), "resolve_device", resolve_device)(
            checked_device
        )
    else:
        dev = resolve_device(checked_device)
    check_engine(backend, dev)
    return Checked(
        spec,
        variants,
        backend,
        measures,
        batch_size,
        extra_sizes,
        extra_orders,
        default_side,
        extra_sides,
        threads,
        options,
        queries,
        depth,
        max_queries,
        dev,
        inputs,
        plan,
    )


def read(config: RerankConfig, checked: Checked) -> Any:
    """Stage 2: the BEIR-layout set and the candidate run (a `tierank.io.beir.BeirSet`)."""
    from tierank.io.beir import load_beir

    return load_beir(
        config.data_dir,
        config.candidates,
        config.qrels,
        queries=checked.queries,
        depth=checked.depth,
        max_queries=checked.max_queries,
    )


def _record(cache: ScoreCache, q: str, docids: Sequence[str]) -> dict:
    """The record of a query the scoring stage scored (a query left unscored is a scorer's bug, said so)."""
    rec = cache.get(q, docids)
    if rec is None:
        raise TierankError(f"{cache.path}: query {q!r} was not scored")
    return rec


def _caches(
    config: RerankConfig, checked: Checked, batch_size: int, key: Mapping[str, Any]
) -> dict[str, ScoreCache]:
    ch = checked
    return {
        v.name: ScoreCache(
            ch.plan.cache,
            dict(cache_key(ch.spec, v, batch_size, ch.device, ch.options, ch.backend), **key),
            warn=config.warn,
        )
        for v in ch.variants
    }


def _factory_for(config: RerankConfig, checked: Checked, batch_size: int) -> Callable:
    if config.scorer_factory is not None:
        return config.scorer_factory
    # resolved here: a Ray worker's registry may lack run-time kinds and scorers
    kind = model_kind(checked.spec.family)
    kind = replace(kind, scorer=scorer_path(kind, checked.backend))
    dev, options = checked.device, checked.options
    return lambda s, g: make_scorer(s, g, batch_size, dev, options, kind)


def score(config: RerankConfig, checked: Checked, data: Any) -> Scored:
    """Stage 3: score every candidate under every variant through the score cache (a re-run scores nothing),
    then (run-to-run variance) under each other batch size, candidate order and padding side, and
    ``repeat - 1`` more times under the first setting (each repeat its own cache key)."""
    from tierank.hps.variance import realign, shuffle_candidates

    ch = checked
    qids = sorted(data.candidates)
    groups = ch.groups
    caches = _caches(config, ch, ch.batch_size, {})
    distributed = None
    if config.ray:
        from tierank.cluster import RayScoring

        distributed = RayScoring(
            address=None if config.ray is True else str(config.ray), workers=config.workers
        )
    _score(
        ch.spec,
        groups,
        qids,
        data,
        caches,
        _factory_for(config, ch, ch.batch_size),
        config.progress,
        ch.threads,
        distributed,
    )

    def extra_setting(
        name: str, key: dict, bs: int, d: Any, factory: Callable
    ) -> dict[str, dict[str, np.ndarray]]:
        cs = _caches(config, ch, bs, key)
        progress = config.progress
        label = (lambda lbl, total: progress(f"{lbl} {name}", total)) if progress else None
        _score(ch.spec, groups, qids, d, cs, factory, label, ch.threads, distributed)
        return {
            v.name: {
                q: realign(_record(cs[v.name], q, d.candidates[q]), data.candidates[q])
                for q in qids
            }
            for v in ch.variants
        }

    extra: dict[Any, dict[str, dict[str, np.ndarray]]] = {}
    for bs in ch.extra_sizes:  # the same variants under other batch sizes
        extra[bs] = extra_setting(f"bs={bs}", {}, bs, data, _factory_for(config, ch, bs))
    for seed in ch.extra_orders:  # ... with each query's candidates in a seeded random order
        extra[f"order={seed}"] = extra_setting(
            f"order={seed}",
            {"order": seed},
            ch.batch_size,
            shuffle_candidates(data, seed),
            _factory_for(config, ch, ch.batch_size),
        )
    for side in ch.extra_sides:  # ... with the batches padded on another side
        extra[f"padding={side}"] = extra_setting(
            f"padding={side}",
            {"padding": side},
            ch.batch_size,
            data,
            PaddedFactory(_factory_for(config, ch, ch.batch_size), side),
        )
    for r in range(2, config.repeat + 1):  # ... the same setting again, under its own cache key
        extra[f"repeat={r}"] = extra_setting(
            f"repeat={r}",
            {"repeat": r},
            ch.batch_size,
            data,
            _factory_for(config, ch, ch.batch_size),
        )

    recs = {
        v.name: [_record(caches[v.name], q, data.candidates[q]) for q in qids] for v in ch.variants
    }
    scores = {
        name: {q: np.asarray(r["scores"], dtype=np.float64) for q, r in zip(qids, rs)}
        for name, rs in recs.items()
    }
    timing = {
        name: {
            "model_s": float(sum(r["model_s"] for r in rs)),
            "scoring_s": float(sum(r["scoring_s"] for r in rs)),
        }
        for name, rs in recs.items()
    }
    meta = {
        g: caches[vs[0].name].metadata
        for g, vs in groups.items()
        if caches[vs[0].name].metadata is not None
    }
    return Scored(qids, recs, scores, timing, meta, extra)


def write_runs(
    checked: Checked, data: Any, scored: Scored
) -> tuple[dict[str, Path], dict[str, Path], dict[str, Any]]:
    """Stage 4: one TREC run per variant with exact scores (``repr``: no tie is created or removed) and the
    reasoning of Rank1-style scorers.  Returns the run paths, the reasoning paths and each variant's rows
    (a [`Run`][tierank.io.model.Run] of the written file, and its tie layout)."""
    from tierank.hps.output import run_paths
    from tierank.io.writers import write_atomic, write_run

    ch = checked
    runs: dict[str, Path] = {}
    reasoning: dict[str, Path] = {}
    rows: dict[str, Any] = {}
    for v in ch.variants:
        path, rpath = run_paths(ch.plan.runs, ch.spec.slug, slug(v.name))
        run, lay = _ordered(scored.qids, data.candidates, scored.scores[v.name])
        write_run(
            path, run.qid, run.docid, run.score, f"{ch.spec.slug}.{slug(v.name)}", protect=ch.inputs
        )
        runs[v.name] = path
        recs = scored.records[v.name]
        if any("reasoning" in r for r in recs):
            lines = [
                json.dumps({"query": qq, "docid": dd, "score": ss, "reasoning": rr}) + "\n"
                for qq, r in zip(scored.qids, recs)
                for dd, ss, rr in zip(r["docids"], r["scores"], r.get("reasoning", []))
            ]
            write_atomic(rpath, "".join(lines), protect=ch.inputs)
            reasoning[v.name] = rpath
        rows[v.name] = (replace(run, source=str(path)), lay)
    return runs, reasoning, rows


def evaluate_runs(
    config: RerankConfig, checked: Checked, data: Any, rows: Mapping[str, Any]
) -> tuple[dict, dict]:
    """Stage 5: each variant evaluated from its in-memory rows (those of its run file) and its tie statistics."""
    from tierank.evaluate import evaluate

    evals, ties = {}, {}
    for v in checked.variants:
        run, lay = rows[v.name]
        evals[v.name] = evaluate(data.qrels, run, checked.measures, tie_break=config.tie_break)
        ties[v.name] = tie_stats(lay)
    return evals, ties


def run_variance(
    config: RerankConfig, checked: Checked, data: Any, scored: Scored, evals: Mapping[str, Any]
) -> dict | None:
    """Stage 5 (run-to-run variance): ``table.json``'s ``variance`` from the scores under the other settings."""
    if not scored.extra:
        return None
    from tierank.evaluate import evaluate
    from tierank.hps.variance import batch_variance

    ch = checked
    all_scores = {ch.batch_size: scored.scores, **scored.extra}
    all_evals = {ch.batch_size: evals}
    for bs, sc in scored.extra.items():
        all_evals[bs] = {
            v.name: evaluate(
                data.qrels,
                _ordered(scored.qids, data.candidates, sc[v.name])[0],
                ch.measures,
                tie_break=config.tie_break,
            )
            for v in ch.variants
        }
    keys = [ch.batch_size, *scored.extra]
    return {
        "batch_sizes": [ch.batch_size, *ch.extra_sizes],
        "orders": ch.extra_orders,
        "padding_sides": [ch.default_side, *ch.extra_sides] if ch.default_side else [],
        "repeats": int(config.repeat),
        "settings": [f"bs={k}" if isinstance(k, int) else k for k in keys],
        "variants": batch_variance(keys, all_scores, all_evals, ch.measures),
    }


def table(
    config: RerankConfig,
    checked: Checked,
    data: Any,
    scored: Scored,
    runs: dict[str, Path],
    reasoning: dict[str, Path],
    evals: dict,
    ties: dict,
    variance: dict | None,
) -> ProtocolResult:
    """Stage 5 (Table 1): the rows (`tierank.hps.table`) and the run's settings."""
    from tierank.hps.machine import platform

    ch = checked
    runs_in_memory = {
        v.name: _ordered(scored.qids, data.candidates, scored.scores[v.name])[0]
        for v in ch.variants
    }
    similarity = fp32_similarity(runs_in_memory)
    rows = table_rows(
        ch.variants, ch.measures, evals, ties, scored.timing, len(scored.qids), similarity
    )
    settings = {
        "model": ch.spec.name,
        "family": ch.spec.family,
        "source": ch.spec.source,
        "variants": [v.name for v in ch.variants],
        "measures": [str(m) for m in ch.measures],
        "batch_size": int(ch.batch_size),
        "device": ch.device,
        "backend": ch.backend,
        "tie_break": config.tie_break,
        "queries": len(scored.qids),
        "candidates": sum(len(c) for c in data.candidates.values()),
        "data": str(config.data_dir),
        "candidates_file": str(data.candidates_path),
        "qrels_file": str(data.qrels_path),
        "cache": str(ch.plan.cache),
        "scorers": scored.metadata,
        "platform": platform(ch.device, ch.threads),
    }
    settings["similarity"] = {
        "reference": "fp32" if "fp32" in runs_in_memory else None,
        "p": RBO_P,
        "columns": {
            "rbo_fp32": "mean over queries of the expected RBO_ext with the fp32 "
            "variant over both runs' tie orderings",
            "rbo_fp32_min": "mean of its minimum over those orderings",
            "rbo_fp32_max": "mean of its maximum over those orderings",
        },
    }
    if variance is not None:
        settings["variance"] = variance
    settings.update({o: ch.options[o] for o in ch.spec.kind.options})
    return ProtocolResult(rows, runs, reasoning, settings, ties, scored.timing, evals)


def write_outputs(checked: Checked, result: ProtocolResult) -> None:
    """Stage 6: ``table.tsv`` and ``table.json`` in OUT/ (nothing without ``out_dir``)."""
    from tierank.hps.output import write_table
    from tierank.report.formats import jsonable

    if checked.plan.out is not None:
        write_table(
            checked.plan.out, jsonable(result.document()), result.rows, TABLE_FIELDS, checked.inputs
        )


def rerank(config: RerankConfig | str | os.PathLike, *args: Any, **options: Any) -> ProtocolResult:
    """Run the protocol: score, cache, write runs, evaluate, build Table 1 and write OUT/.

    ``config`` is a [`RerankConfig`][tierank.hps.protocol.RerankConfig]; ``rerank(data_dir, model, regimes, measures, **options)``
    builds one from the same arguments (its fields, in its order).  The stages, in order:
    [`check`][tierank.hps.protocol.check], then with OUT/ locked [`read`][tierank.hps.protocol.read], [`score`][tierank.hps.protocol.score], [`write_runs`][tierank.hps.protocol.write_runs],
    [`evaluate_runs`][tierank.hps.protocol.evaluate_runs], [`run_variance`][tierank.hps.protocol.run_variance], [`table`][tierank.hps.protocol.table] and [`write_outputs`][tierank.hps.protocol.write_outputs].

    ``ray`` (True, or a Ray address such as ``"auto"`` or ``"HOST:6379"``) shards the queries over
    ``workers`` Ray workers, one model load each (one GPU each where the cluster has GPUs), writing into
    the same per-query cache: a killed run resumes with no query lost or scored twice
    ([`tierank.cluster`][tierank.cluster]).  ``batch_sizes`` also scores every variant under each of these batch sizes
    (the runs and Table 1 stay those of ``batch_size``) and reports the run-to-run variance in
    ``table.json`` (``variance``: the share of candidates whose score changed, E[M] per batch size and its
    spread; `tierank.hps.variance`); ``orders`` (seeds) also scores every variant with each query's
    candidates in a seeded random order (other batches, other padding); ``padding_sides`` (``"left"``,
    ``"right"``) also scores every variant with the batches padded on each side other than the scorer's
    default (the generative scorers: left; refused for the other kinds and the vLLM backend, which have no
    padding side to vary).  ``settings["platform"]`` records the CPU, GPU, library versions and threads
    (`tierank.hps.machine.platform`).  ``backend`` ``"vllm"`` runs the model kinds that have a vLLM
    scorer through vLLM (`tierank.hps.vllm`; the variants keep their meaning, the cache key records
    the backend).  Returns a [`ProtocolResult`][tierank.hps.protocol.ProtocolResult].
    """
    from tierank.hps.output import locked

    if isinstance(config, RerankConfig):
        if args or options:
            raise TypeError(
                "rerank(config) takes a RerankConfig alone (or the arguments of one, without it)"
            )
    else:
        config = RerankConfig(config, *args, **options)
    checked = check(config)
    with locked(checked.plan.dirs):
        data = read(config, checked)
        scored = score(config, checked, data)
        runs, reasoning, rows = write_runs(checked, data, scored)
        evals, ties = evaluate_runs(config, checked, data, rows)
        variance = run_variance(config, checked, data, scored, evals)
        result = table(config, checked, data, scored, runs, reasoning, evals, ties, variance)
        write_outputs(checked, result)
    return result
