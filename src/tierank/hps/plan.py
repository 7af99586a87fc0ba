"""The rerank protocol's first stage: every check made once, before any work, and the plan it leaves.

[`plan_rerank`][tierank.hps.plan.plan_rerank] takes a [`RerankConfig`][tierank.hps.plan.RerankConfig]
(what a caller asks for) and returns a [`RerankPlan`][tierank.hps.plan.RerankPlan] (what will be
done: every value checked and in its final form, OUT/ created, the run files named).  The later
stages ([`tierank.hps.score`][tierank.hps.score], [`tierank.hps.record`][tierank.hps.record],
[`tierank.hps.output`][tierank.hps.output]) read the plan and check nothing again.

The checks, in this order: the model spec, the variants and the backend ([`tierank.hps.registry`][tierank.hps.registry]:
a hub name fails here; torch is not imported), the padding sides, the model's support of the
variants, the measures and tie-breaking, the numbers (batch sizes, orders, repeats, threads, the
model kinds' options: `tierank.hps.checks`), the query selection and the input
files (`tierank.io.beir`), OUT/ and every file it will hold (no directory is made before all of this
passed), then the device (only here is torch imported) and, on the vLLM backend, its engine settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.checks import (
    check_batch_size,
    check_device,
    check_options,
    check_positive,
    resolve_device,
)
from tierank.hps.registry import (
    DEFAULT_BACKEND,
    ModelSpec,
    backend_of,
    check_backend,
    check_engine,
    check_model,
    kinds,
    parse_model,
    scorer_class,
    slug,
)
from tierank.hps.variants import Variant, parse_variants

__all__ = [
    "RerankConfig",
    "RerankPlan",
    "plan_rerank",
    "OutputPlan",
    "plan_output",
    "run_paths",
    "RERANK_REGIMES",
    "RERANK_MEASURES",
]

#: The variants `rerank` (and ``tierank rerank --regimes``) compare by default.
RERANK_REGIMES = ("fp32", "bf16", "bf16->fp32")
#: The measures `rerank` (and ``tierank rerank -m``) report by default.
RERANK_MEASURES = ("nDCG@10", "RR@10")


@dataclass
class RerankConfig:
    """Everything one protocol run is asked to do: what [`rerank`][tierank.hps.protocol.rerank] takes (the ``tierank rerank`` options).

    ``data_dir``, ``candidates``, ``qrels``: the BEIR-layout set and its run and qrels (default in
    ``data_dir``); ``model``: a ``--model`` spelling or a [`ModelSpec`][tierank.hps.registry.ModelSpec];
    ``regimes``, ``measures``: the variants compared and the measures reported; ``out_dir``,
    ``cache_dir``: OUT/ (every file) or only the score cache (the runs then land in ``cache_dir/runs``);
    ``batch_size``, ``device``, ``backend`` (``hf`` or ``vllm``), ``threads``; the query selection
    (``queries``, ``depth``, ``max_queries``); the model kinds' options (``budget``, ``max_doc_tokens``);
    ``tie_break``; run-to-run variance (``batch_sizes``, ``orders``, ``padding_sides``, ``repeat``); sharding over
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


@dataclass(frozen=True)
class OutputPlan:
    """Where one protocol run writes: ``out`` (None without -o), the cache and the runs directories, and
    per variant its run file and its reasoning file (``files``, by variant name)."""

    out: Path | None
    cache: Path
    runs: Path
    files: dict[str, tuple[Path, Path]]

    @property
    def dirs(self) -> tuple[Path, ...]:
        """The directories to lock (OUT/ and a cache directory outside it)."""
        return tuple(dict.fromkeys(p for p in (self.out, self.cache) if p is not None))


#: Appended to the error for an OUT/ (or cache directory) that is a file.
_WHY = " (rerank writes a directory of files)"


def run_paths(runs: Path, model_slug: str, variant_slug: str) -> tuple[Path, Path]:
    """The run file and the reasoning file of one variant."""
    stem = f"{model_slug}.{variant_slug}"
    return runs / f"{stem}.run", runs / f"{stem}.reasoning.jsonl"


def plan_output(
    out_dir, cache_dir, stems: Mapping[str, tuple[str, str]], inputs: Sequence[os.PathLike]
) -> OutputPlan:
    """Check OUT/ (and the cache directory) and every file that will be written, then create the directories.

    ``stems`` are per variant name its model's and its own slug (its files' names, `run_paths`).  Refused with a
    [`TierankInputError`][tierank.errors.TierankInputError], before any directory is created: an OUT/ that
    is a file or cannot be created or written, and any target that is a
    special file, a directory or one of ``inputs``.
    """
    from tierank.io.writers import check_output, ensure_dir

    out = Path(out_dir) if out_dir is not None else None
    if cache_dir is not None:
        cache = Path(cache_dir)
    elif out is not None:
        cache = out / "cache"
    else:
        raise TierankInputError([Problem("", None, "give an output or a cache directory")])
    runs = out / "runs" if out is not None else cache / "runs"
    dirs = [d for d in (out, cache, runs) if d is not None]
    named = {name: run_paths(runs, *stem) for name, stem in stems.items()}
    files = [f for pair in named.values() for f in pair]
    if out is not None:
        files += [out / "table.tsv", out / "table.json"]
    for d in dirs:
        ensure_dir(d, create=False, why=_WHY)
    for f in files:  # those that exist can be refused: check them before anything is created
        if f.parent.is_dir():
            check_output(f, protect=tuple(inputs))
    for d in dirs:
        ensure_dir(d, why=_WHY)
    for f in files:
        check_output(f, protect=tuple(inputs))
    return OutputPlan(out, cache, runs, named)


@dataclass(frozen=True)
class RerankPlan:
    """What one protocol run will do, every value checked ([`plan_rerank`][tierank.hps.plan.plan_rerank] makes it).

    The model (``spec``, ``variants``, ``backend``, ``device``), the measures and ``tie_break``, the
    batch size and the run-to-run settings (``extra_sizes``, ``extra_orders``, ``default_side`` and
    ``extra_sides``, ``repeat``), the model kinds' ``options``, ``threads``; the set (``data_dir``,
    ``candidates``, ``qrels``, the query selection) and the ``inputs`` that are never overwritten;
    ``output`` (OUT/, the cache and runs directories, created) and per variant its run and reasoning
    files (``output.files``); sharding (``ray``, ``workers``) and the caller's hooks (``progress``,
    ``warn``, ``scorer_factory``).
    """

    spec: ModelSpec
    variants: tuple[Variant, ...]
    backend: str
    device: str
    measures: tuple[Any, ...]
    tie_break: str
    batch_size: int
    extra_sizes: tuple[int, ...]
    extra_orders: tuple[int, ...]
    default_side: str | None
    extra_sides: tuple[str, ...]
    repeat: int
    threads: int | None
    options: dict
    data_dir: str | os.PathLike
    candidates: str | os.PathLike | None
    qrels: str | os.PathLike | None
    queries: str
    depth: int | None
    max_queries: int | None
    inputs: tuple[Path, ...]
    output: OutputPlan
    ray: str | bool | None = None
    workers: int | None = None
    progress: Callable[[str, int], Any] | None = None
    warn: Callable[[str], Any] | None = None
    scorer_factory: Callable[[ModelSpec, str], Any] | None = None

    @property
    def groups(self) -> dict[str, list[Variant]]:
        """The variants by group: those of one group share one model load and one forward pass per query."""
        groups: dict[str, list[Variant]] = {}
        for v in self.variants:
            groups.setdefault(v.group, []).append(v)
        return groups

    @property
    def run_name(self) -> dict[str, str]:
        """Per variant the name its run file carries (``MODEL.VARIANT``)."""
        return {v.name: f"{self.spec.slug}.{slug(v.name)}" for v in self.variants}


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


def _sides(
    padding_sides: Iterable[str] | str | None, spec: ModelSpec, backend: str
) -> tuple[str | None, tuple[str, ...]]:
    """The scorer's default padding side and the other sides asked for (none without ``padding_sides``)."""
    from tierank.hps.variance import padding_sides as check_sides

    if padding_sides is None:
        return None, ()
    sides = padding_sides.split(",") if isinstance(padding_sides, str) else list(padding_sides)
    cls = scorer_class(spec.family) if backend == DEFAULT_BACKEND else None
    offered_by = [] if getattr(cls, "padding_sides", None) else _padding_kinds()
    default_side, extra_sides = check_sides(
        sides, spec.family, backend, cls, offered_by, backend_of(backend).no_padding
    )
    return default_side, tuple(extra_sides)


def _numbers(c: RerankConfig) -> tuple[dict[str, Any], str]:
    """The batch size, the run-to-run settings, threads and the model kinds' options (as `RerankPlan`
    names them), and the device's spelling, checked (torch is not imported)."""
    batch_size = check_batch_size(c.batch_size)
    extra_sizes = [] if c.batch_sizes is None else [check_batch_size(b) for b in c.batch_sizes]
    try:
        orders = [] if c.orders is None else list(dict.fromkeys(int(o) for o in c.orders))
    except (TypeError, ValueError):
        raise TierankInputError(f"orders: give integer seeds, got {c.orders!r}") from None
    if isinstance(c.repeat, bool) or not isinstance(c.repeat, int) or c.repeat < 1:
        raise TierankInputError(f"repeat: give a positive integer, got {c.repeat!r}")
    return {
        "batch_size": batch_size,
        "extra_sizes": tuple(b for b in dict.fromkeys(extra_sizes) if b != batch_size),
        "extra_orders": tuple(orders),
        "repeat": c.repeat,
        "threads": None if c.threads is None else check_positive(c.threads, "threads"),
        "options": check_options(c.budget, c.max_doc_tokens),
    }, check_device(c.device)


def _resolved(c: RerankConfig, spec: ModelSpec, backend: str, device: str) -> str:
    """The device the scorers run on (torch is imported here), its engine settings checked."""
    if c.scorer_factory is not None:
        dev = c.device or "cpu"
    elif backend != DEFAULT_BACKEND:
        # a backend's scorer resolves its device (a vLLM build runs on one device kind)
        dev = getattr(scorer_class(spec.family, backend), "resolve_device", resolve_device)(device)
    else:
        dev = resolve_device(device)
    check_engine(backend, dev)
    return dev


def plan_rerank(config: RerankConfig) -> RerankPlan:
    """Check everything before any work (in the order of the module docstring), create OUT/, and return the plan.

    Refused with a one-line [`TierankInputError`][tierank.errors.TierankInputError] at the first
    problem; no directory is made before every check but the device's passed.
    """
    from tierank.io.beir import check_selection, find_inputs, find_texts
    from tierank.measures.base import parse_measure
    from tierank.ties import TieBreak

    c = config
    spec = c.model if isinstance(c.model, ModelSpec) else parse_model(c.model)
    variants = tuple(parse_variants(c.regimes))
    backend = check_backend(c.backend)
    # before check_model: the reason, not a missing vllm
    default_side, extra_sides = _sides(c.padding_sides, spec, backend)
    check_model(spec, list(variants), source=c.scorer_factory is None, backend=backend)
    mlist = [c.measures] if isinstance(c.measures, str) else c.measures
    measures = tuple(parse_measure(m) for m in mlist)
    TieBreak.parse(c.tie_break)
    numbers, spelled = _numbers(c)
    queries, depth, max_queries = check_selection(c.queries, c.depth, c.max_queries)
    qrels_path, cand_path = find_inputs(c.data_dir, c.candidates, c.qrels)
    inputs = (qrels_path, cand_path, *find_texts(c.data_dir))  # plain or .gz: never overwritten
    stems = {v.name: (spec.slug, slug(v.name)) for v in variants}
    output = plan_output(c.out_dir, c.cache_dir, stems, inputs)
    device = _resolved(c, spec, backend, spelled)
    return RerankPlan(
        spec=spec,
        variants=variants,
        backend=backend,
        device=device,
        measures=measures,
        tie_break=c.tie_break,
        default_side=default_side,
        extra_sides=extra_sides,
        data_dir=c.data_dir,
        candidates=c.candidates,
        qrels=c.qrels,
        queries=queries,
        depth=depth,
        max_queries=max_queries,
        inputs=inputs,
        output=output,
        ray=c.ray,
        workers=c.workers,
        progress=c.progress,
        warn=c.warn,
        scorer_factory=c.scorer_factory,
        **numbers,
    )
