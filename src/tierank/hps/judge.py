"""An LLM as the relevance judge: label distributions of a pool's pairs from a generative model.

For each (query, document) pair of a pool (a qrels or a run file), a causal LM reads a judge prompt
and the next token's probabilities over the grade tokens, renormalised over them, give the pair's
label distribution ``p0 .. pK``:

``scale="0-3"``
    the graded prompt (`tierank.hps.prompts.GRADED_PROMPT`, UMBRELA-style: the four grades of the
    TREC RAG 2024 assessors); the answer tokens are the digits ``0`` .. ``3``;
``scale="0-1"`` (also ``yes-no``)
    the yes/no prompt of the ``yesno`` reranker; ``p0 = P(no)``, ``p1 = P(yes)`` (two-way softmax).

The model, its dtype and where the softmax runs come from the HPS machinery: a generative model kind of
`tierank.hps.registry` (``smollm2``, ``smollm2-yesno`` or ``yesno:PATH``) and one variant of
`tierank.hps.variants` (default ``bf16->fp32:head``: the model in BF16, the grade logits computed in
FP32 from the LM head's input and the FP32 head rows, softmax in FP32; ``fp32``: all in FP32; ``bf16``:
softmax in BF16, each row renormalised in FP64).  The forward pass runs on a backend of the registry:
``hf`` (transformers, in this process; the default) or ``vllm`` (a vLLM engine asked for the raw logits
of the grade tokens alone; the ``:head`` level from its pooling engine's last hidden state).  Scores can be cached per query in the rerank
protocol's score cache (`tierank.hps.cache.ScoreCache`, one more field ``probs``), so an interrupted
run resumes.

The result is a `tierank.io.distributions.LabelDistributions` in the pool's order, written as
``qid 0 docid p0 .. pK`` text, JSONL or Parquet (`write_labels`) and read back by
`tierank.io.distributions.read_distributions`; `tierank eval --labels` evaluates runs under it, and
its most probable grades (`LabelDistributions.qrels` of `mode_grades`) are machine qrels for
``tierank judges`` and ``tierank eval --ppi``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.prompts import DEFAULT_INSTRUCTION, DEFAULT_SYSTEM, GRADED_PROMPT, GRADED_SYSTEM
from tierank.hps.registry import (
    ModelSpec,
    cache_key,
    check_backend,
    check_engine,
    check_model,
    parse_model,
    scorer_class,
)
from tierank.hps.variants import Variant, parse_variant
from tierank.io.distributions import SUM_TOLERANCE, LabelDistributions

__all__ = [
    "LabelScale",
    "SCALES",
    "parse_scale",
    "label_model",
    "read_pool",
    "read_texts",
    "JudgeResult",
    "JudgeSettings",
    "judge",
    "check_settings",
    "mode_grades",
    "write_labels",
    "write_grades",
]


@dataclass(frozen=True)
class LabelScale:
    """A grade scale ``0..K`` of the judge: the answer token of each grade and the prompt asking for it."""

    name: str
    tokens: tuple[str, ...]  # grade k's answer token at k
    prompt: str  # "graded" or "yesno"

    @property
    def top(self) -> int:
        return len(self.tokens) - 1

    def template(self) -> str:
        """The prompt's fixed text (what the cache key and the manifest record)."""
        if self.prompt == "graded":
            return GRADED_SYSTEM + "\n" + GRADED_PROMPT
        return DEFAULT_SYSTEM + "\n" + DEFAULT_INSTRUCTION


SCALES: dict[str, LabelScale] = {
    "0-3": LabelScale("0-3", ("0", "1", "2", "3"), "graded"),
    "0-1": LabelScale("0-1", ("no", "yes"), "yesno"),
}
_ALIASES = {"yes-no": "0-1", "yesno": "0-1", "0..3": "0-3", "0..1": "0-1"}


def parse_scale(text: Any) -> LabelScale:
    """The scale named ``text``: ``0-3`` (graded prompt) or ``0-1`` / ``yes-no`` (yes/no prompt).

    >>> parse_scale("yes-no").tokens
    ('no', 'yes')
    >>> parse_scale("0-4")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown scale '0-4'; accepted: 0-3, 0-1 (yes-no)
    """
    t = str(text).strip().lower()
    t = _ALIASES.get(t, t)
    if t not in SCALES:
        raise TierankInputError(
            [Problem("", None, f"unknown scale {text!r}; accepted: 0-3, 0-1 (yes-no)")]
        )
    return SCALES[t]


def label_model(text: str) -> ModelSpec:
    """The generative model of ``text``: ``smollm2`` (SmolLM2-135M-Instruct), a named ``yesno`` model or
    ``yesno:PATH``; another model kind cannot give next-token probabilities and is refused.

    >>> label_model("smollm2")
    ModelSpec(family='yesno', source='smollm2', name='smollm2')
    >>> label_model("minilm")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: model 'minilm' is a biencoder model; the judge needs a generative one: smollm2, smollm2-yesno or yesno:PATH
    """
    if str(text).strip().lower() == "smollm2":
        return ModelSpec("yesno", "smollm2", "smollm2")
    spec = parse_model(text)
    if spec.family != "yesno":
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"model {text!r} is a {spec.family} model; the judge needs a generative one: "
                    "smollm2, smollm2-yesno or yesno:PATH",
                )
            ]
        )
    return spec


def _pairs(path: str | os.PathLike) -> tuple[list[str], list[str]]:
    from tierank.io.readers import first_fields, read_qrels, read_run

    fields = first_fields(path)
    if fields is None:
        raise TierankInputError([Problem(os.fspath(path), None, "empty: no pair to judge")])
    table = read_run(path) if len(fields) == 6 else read_qrels(path)
    return [str(q) for q in table.qid.to_pylist()], [str(d) for d in table.docid.to_pylist()]


def read_pool(
    path: str | os.PathLike, within: str | os.PathLike | None = None
) -> dict[str, list[str]]:
    """The pairs to judge, ``{qid: [docid, ...]}`` in the file's order: a qrels file (``qid 0 docid
    grade``; the grades are not read into the judge) or a TREC run (``qid Q0 docid rank score tag``;
    every retrieved pair).  ``within`` (a qrels or run file too) keeps only the pairs it also holds (the
    judged candidates: qrels within a candidate run).  Read through tierank's readers, so every problem
    is a located line; nothing left to judge is an error."""
    qid, docid = _pairs(path)
    keep = None
    if within is not None:
        wq, wd = _pairs(within)
        keep = set(zip(wq, wd, strict=True))
    pool: dict[str, list[str]] = {}
    for q, d in zip(qid, docid, strict=True):
        if keep is None or (q, d) in keep:
            pool.setdefault(q, []).append(d)
    if not pool:
        raise TierankInputError([Problem(os.fspath(path), None, f"no pair is also in {within}")])
    return pool


def read_texts(
    pool: Mapping[str, Sequence[str]],
    data: str | os.PathLike | None = None,
    queries: str | os.PathLike | None = None,
    docs: str | os.PathLike | None = None,
) -> tuple[dict[str, str], dict[str, str], tuple[Path, Path]]:
    """The texts of the pool's queries and documents from ``queries.jsonl`` and ``corpus.jsonl`` (BEIR
    layout, plain or gzip) of ``data``, or the files ``queries`` / ``docs`` (which win).  A document's text
    is its title and text.  A pooled query or document without a text is a located error (the file and
    the pair's id)."""
    from tierank.io.beir import find_texts, pool_texts

    if data is not None:
        dq, dd = find_texts(data)
    elif queries is None or docs is None:
        raise TierankInputError(
            [Problem("", None, "give --data DIR, or both --queries FILE and --docs FILE")]
        )
    qfile = Path(queries) if queries is not None else dq
    dfile = Path(docs) if docs is not None else dd
    missing = "is in the pool but has no text here"
    qtexts, dtexts = pool_texts(qfile, dfile, pool, missing, missing)
    return qtexts, dtexts, (qfile, dfile)


@dataclass
class JudgeResult:
    """What `judge` returns: the label distributions (the pool's order), the judge's settings and
    where the time went (``model_s``: the forward passes of the queries scored now; ``cached``: the
    queries taken from the cache)."""

    labels: LabelDistributions
    settings: dict[str, Any] = field(default_factory=dict)
    model_s: float = 0.0
    cached: int = 0


def _cache_problem(rec: Mapping[str, Any], n_docs: int, width: int) -> str | None:
    """Why a cached record's ``probs`` cannot be used (None: they can)."""
    probs = rec.get("probs")
    if not isinstance(probs, list) or len(probs) != n_docs:
        return "probs is not one row per document"
    for row in probs:
        if not isinstance(row, list) or len(row) != width:
            return f"a probs row does not hold {width} probabilities"
        if not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
            for x in row
        ):
            return "a probability is not a finite non-negative number"
        if abs(sum(row) - 1.0) > SUM_TOLERANCE:
            return "a probs row does not sum to 1"
    return None


@dataclass(frozen=True)
class JudgeSettings:
    """What decides a judge's labels: the model (a name of `tierank.hps.registry` or a folder),
    the regime (a variant the yes/no model kind supports), the scale, prompts per forward pass, the
    document's truncation in tokens, the device and the backend (``hf`` or ``vllm``)."""

    model: str = "smollm2"
    regime: str = "bf16->fp32:head"
    scale: str = "0-3"
    batch_size: int = 8
    max_doc_tokens: int = 256
    device: str = "cpu"
    backend: str = "hf"

    @classmethod
    def of(cls, settings: JudgeSettings | None = None, **options: Any) -> JudgeSettings:
        """``settings`` (default: the defaults) with ``options`` (its field names) changed; a name
        that is not a field, or settings of another type, is a ``TypeError`` naming it.

        >>> JudgeSettings.of(scale="0-1").scale, JudgeSettings.of(JudgeSettings(model="m")).model
        ('0-1', 'm')
        >>> JudgeSettings.of(modle="m")
        Traceback (most recent call last):
        ...
        TypeError: judge: unknown setting 'modle'; the settings are model, regime, scale, batch_size, max_doc_tokens, device, backend
        """
        if settings is not None and not isinstance(settings, cls):
            raise TypeError(
                f"judge: settings must be a JudgeSettings, not {type(settings).__name__}"
            )
        names = [f.name for f in fields(cls)]
        unknown = [k for k in options if k not in names]
        if unknown:
            listed = ", ".join(map(repr, unknown))
            raise TypeError(
                f"judge: unknown setting{'s' if len(unknown) > 1 else ''} {listed}; "
                f"the settings are {', '.join(names)}"
            )
        return replace(settings or cls(), **options)


def check_settings(
    settings: JudgeSettings, source: bool = True
) -> tuple[ModelSpec, Variant, LabelScale, int, int, str]:
    """The judge's settings checked before anything is read or loaded: the model spec, the variant (one
    the ``yesno`` kind supports), the scale, batch size, document truncation, the backend (``hf`` or
    ``vllm``: installed) and the resolved device (the vLLM build's for ``vllm``) (``source``: the model's
    source must be a named one or exist on disk)."""
    from tierank.hps.checks import check_batch_size, check_device, check_positive, resolve_device

    spec = label_model(settings.model)
    variant: Variant = parse_variant(settings.regime)
    sc = parse_scale(settings.scale)
    batch_size = check_batch_size(settings.batch_size)
    max_doc_tokens = check_positive(settings.max_doc_tokens, "max doc tokens")
    backend = check_backend(settings.backend)
    device = check_device(settings.device)
    try:
        check_model(spec, [variant], source=source, backend=backend)
        if backend == "hf":
            return spec, variant, sc, batch_size, max_doc_tokens, resolve_device(device)
        dev = scorer_class(spec.family, backend).resolve_device(device)
        check_engine(backend, dev)
    except TierankInputError:
        raise
    except TierankError as e:  # a backend that is not installed: one line
        raise TierankInputError(str(e)) from None
    return spec, variant, sc, batch_size, max_doc_tokens, dev


def judge(
    pool: Mapping[str, Sequence[str]],
    queries: Mapping[str, str],
    docs: Mapping[str, str],
    settings: JudgeSettings | None = None,
    *,
    cache_dir: str | os.PathLike | None = None,
    scorer: Any = None,
    progress: Callable[[int], Any] | None = None,
    warn: Callable[[str], Any] | None = None,
    source: str = "judge",
    **options: Any,
) -> JudgeResult:
    """Label distributions of the ``pool``'s pairs (``{qid: [docid, ...]}``) judged under
    ``settings`` (a `JudgeSettings`; ``options``: its fields, changed: ``model=``, ``regime=``,
    ``scale=``, ...; the scale: see the module docstring).  ``cache_dir`` keeps each query's probabilities (a
    re-run with the same settings scores nothing).  ``scorer``: an already loaded `YesNoScorer` made
    with the scale's ``label_tokens`` and the regime's dtype (else it is loaded here, on ``backend``:
    ``hf`` or ``vllm``, and closed at the end).  ``progress`` is called with the number of pairs after
    each query.

    >>> from tierank.hps.judge import judge  # doctest: +SKIP
    >>> judge({"q": ["d"]}, {"q": "tie"}, {"d": "a tie"}).labels.probs.shape  # doctest: +SKIP
    (1, 4)
    """
    from tierank.hps.cache import ScoreCache

    settings = JudgeSettings.of(settings, **options)
    spec, variant, sc, batch_size, max_doc_tokens, dev = check_settings(settings, scorer is None)
    backend = check_backend(settings.backend)
    loaded: list[Any] = [] if scorer is None else [scorer]

    def load() -> Any:  # loaded on the first pair the cache does not hold
        if not loaded:
            loaded.append(
                scorer_class(spec.family, backend)(
                    spec.source,
                    model_dtype=variant.model_dtype,
                    batch_size=batch_size,
                    max_doc_tokens=max_doc_tokens,
                    device=dev,
                    label_tokens=sc.tokens,
                )
            )
        if len(loaded[0].label_ids) != len(sc.tokens):
            raise TierankInputError(
                f"the scorer reads {len(loaded[0].label_ids)} answer tokens; scale {sc.name} needs "
                f"{len(sc.tokens)} ({', '.join(sc.tokens)})"
            )
        return loaded[0]

    prompt_digest = hashlib.sha1(sc.template().encode()).hexdigest()[:12]
    cache = None
    if cache_dir is not None:
        key = cache_key(spec, variant, batch_size, dev, {"max_doc_tokens": max_doc_tokens}, backend)
        key.update({"task": "label", "scale": sc.name, "prompt": prompt_digest})
        cache = ScoreCache(cache_dir, key, warn=warn)
    qids: list[str] = []
    dids: list[str] = []
    rows: list[np.ndarray] = []
    model_s, cached, done = 0.0, 0, 0
    try:
        for q, docids in pool.items():
            docids = list(docids)
            probs = _cached_probs(cache, q, docids, len(sc.tokens), warn)
            if probs is not None:
                cached += 1
            else:
                m = load()
                probs, spent = _judged(m, sc, variant, queries[q], [docs[d] for d in docids])
                model_s += spent
                if cache is not None:
                    _cache_labels(cache, m, q, docids, probs, spent)
            qids += [q] * len(docids)
            dids += docids
            rows.append(probs)
            done += len(docids)
            if progress is not None:
                progress(done)
    finally:
        if scorer is None and loaded:  # what the judge loaded (a vLLM engine: its processes)
            loaded[0].close()
    width = len(sc.tokens)
    probs_all = np.vstack(rows) if rows else np.zeros((0, width))
    labels = LabelDistributions(
        np.asarray(qids, dtype=object), np.asarray(dids, dtype=object), probs_all, source
    )
    meta = loaded[0].metadata() if loaded else (cache.metadata if cache is not None else None) or {}
    record = {
        "model": spec.name,
        "model_file": str(meta.get("model", spec.source)),
        **_dtypes(variant),
        "scale": sc.name,
        "answer_tokens": list(sc.tokens),
        "prompt": sc.prompt,
        "prompt_sha1": prompt_digest,
        "batch_size": batch_size,
        "max_doc_tokens": max_doc_tokens,
        "device": str(dev),
        "backend": backend,
    }
    return JudgeResult(labels, record, model_s, cached)


def _cached_probs(cache, q: str, docids: list[str], width: int, warn) -> np.ndarray | None:
    """The query's probabilities from ``cache`` (None: not there, or unusable, which ``warn`` says)."""
    rec = cache.get(q, docids) if cache is not None else None
    if rec is None:
        return None
    why = _cache_problem(rec, len(docids), width)
    if why is not None:
        (warn or (lambda m: None))(
            f"{cache.path}: query {q!r}: unusable cached labels ({why}); judged again"
        )
        return None
    return np.asarray(rec["probs"], dtype=np.float64).reshape(len(docids), -1)


def _judged(m, sc: LabelScale, variant: Variant, query: str, docs: list[str]):
    """One query's label distributions from the scorer ``m`` (float64 rows) and the seconds spent."""
    if sc.prompt == "graded":
        texts = [m.graded_prompt(query, d, sc.top) for d in docs]
    else:
        texts = [m.prompt(query, d) for d in docs]
    t0 = time.perf_counter()
    probs = np.asarray(m.label_distributions(texts, variant), dtype=np.float64)
    return probs, time.perf_counter() - t0


def _cache_labels(cache, m, q: str, docids: list[str], probs: np.ndarray, spent: float) -> None:
    """One query's probabilities kept in ``cache`` (its score: the expected grade)."""
    cache.set_metadata(m.metadata())
    cache.append(
        {
            "query": q,
            "docids": docids,
            "scores": (probs @ np.arange(probs.shape[1])).tolist(),
            "probs": probs.tolist(),
            "model_s": spent,
            "scoring_s": 0.0,
        }
    )


def _dtypes(variant: Variant) -> dict[str, str]:
    """Where the regime runs each step: the model, the grade head, the softmax."""
    head = (
        "fp32" if variant.level == "head" or variant.model_dtype == "fp32" else variant.model_dtype
    )
    return {
        "regime": variant.name,
        "model_dtype": variant.model_dtype,
        "head_dtype": head,
        "softmax_dtype": variant.scoring_dtype if variant.level != "head" else "fp32",
    }


def mode_grades(labels: LabelDistributions) -> np.ndarray:
    """Per pair the most probable grade (the lowest of equally probable ones): the judge's hard label."""
    return np.argmax(labels.probs, axis=1).astype(np.float64)


def _jsonl(labels: LabelDistributions) -> bytes:
    lines = [
        json.dumps({"qid": q, "docid": d, "probs": p})
        for q, d, p in zip(
            labels.qid.tolist(), labels.docid.tolist(), labels.probs.tolist(), strict=True
        )
    ]
    return ("\n".join(lines) + "\n").encode() if lines else b""


def write_labels(
    labels: LabelDistributions, path: str | os.PathLike, protect: Sequence[Any] = ()
) -> None:
    """Write ``labels`` in the layout its name says: ``.jsonl`` (``.jsonl.gz``) and ``.parquet`` with the
    fields ``qid, docid, probs``, else ``qid 0 docid p0 .. pK`` text (gzip where it ends in ``.gz``); the
    numbers in their shortest round-trip form, so `read_distributions` gives them back exactly.  Written
    atomically; ``protect``: inputs it must not overwrite."""
    import gzip

    from tierank.io.distributions import format_distributions
    from tierank.io.writers import write_atomic

    p = os.fspath(path)
    low = p.lower()
    if low.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table(
            {
                "qid": pa.array(labels.qid.tolist(), pa.string()),
                "docid": pa.array(labels.docid.tolist(), pa.string()),
                "probs": pa.array(labels.probs.tolist(), pa.list_(pa.float64())),
            }
        )
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        write_atomic(p, sink.getvalue().to_pybytes(), protect=protect)
        return
    data = (
        _jsonl(labels)
        if low.endswith((".jsonl", ".jsonl.gz"))
        else format_distributions(labels).encode()
    )
    if low.endswith(".gz"):
        data = gzip.compress(data, 9, mtime=0)
    write_atomic(p, data, protect=protect)


def write_grades(
    labels: LabelDistributions, path: str | os.PathLike, protect: Sequence[Any] = ()
) -> None:
    """The most probable grade of each pair (`mode_grades`) as TREC qrels ``qid 0 docid grade``."""
    from tierank.io.writers import write_atomic

    g = mode_grades(labels).astype(np.int64)
    lines = [
        f"{q} 0 {d} {k}"
        for q, d, k in zip(labels.qid.tolist(), labels.docid.tolist(), g.tolist(), strict=True)
    ]
    write_atomic(os.fspath(path), ("\n".join(lines) + "\n") if lines else "", protect=protect)
