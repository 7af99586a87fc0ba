"""The low-precision reranking protocol, end to end (the paper's Table 1 on any model and set).

:func:`rerank` reads a BEIR-layout set (``corpus.jsonl``, ``queries.jsonl``,
qrels) and a first-stage candidate run, scores every candidate under every
requested variant (:mod:`tierank.hps.variants`), writes one TREC run per
variant with exact scores, evaluates each with tie-aware measures and returns
a :class:`ProtocolResult` whose rows are Table 1's: M at FP32, then per
variant M_obl, E[M], Range, Bias, the tie statistics and the measured time.

Scores are cached on disk, one JSON-lines file per (model, variant, batch
size, scorer options), one line per query written and fsync'd as soon as the
query is scored: an interrupted run resumes where it stopped, and a re-run
with the same settings scores nothing.  Variants that share a model dtype
share one model load and one forward pass per query.

Timing: ``model_s`` is the forward pass (encoding; for Rank1-style scorers
generation plus the final pass), ``scoring_s`` the scoring step of the
variant alone.  HPS's overhead is ``(scoring_s(X->fp32) - scoring_s(X)) /
model_s``: the extra time the FP32 scoring step costs relative to the
forward pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.variants import Variant, check_batch_size, parse_variants

__all__ = [
    "ModelSpec",
    "parse_model",
    "BeirSet",
    "load_beir",
    "ScoreCache",
    "ProtocolResult",
    "rerank",
    "TABLE_FIELDS",
    "MODEL_HELP",
]

CACHE_VERSION = 1

MODEL_HELP = (
    "minilm (all-MiniLM-L6-v2; onnx-int8 uses its int8 ONNX twin), smollm2-yesno, smollm2-rank1, "
    "or biencoder:PATH, cross:PATH, yesno:PATH|smollm2, rank1:PATH|smollm2"
)

_NAMED = {
    "minilm": ("biencoder", "minilm"),
    "smollm2-yesno": ("yesno", "smollm2"),
    "smollm2-rank1": ("rank1", "smollm2"),
}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "x"


@dataclass(frozen=True)
class ModelSpec:
    """A model named on the command line: its family and where it loads from."""

    family: str  # biencoder | cross | yesno | rank1
    source: str  # "minilm", "smollm2" or a local path
    name: str  # as given

    @property
    def slug(self) -> str:
        return _slug(self.name if self.name in _NAMED else f"{self.family}-{Path(self.source).name}")


def parse_model(text: str) -> ModelSpec:
    """Parse a model spec.

    >>> parse_model("smollm2-rank1")
    ModelSpec(family='rank1', source='smollm2', name='smollm2-rank1')
    >>> parse_model("cross:/models/ms-marco").family
    'cross'
    """
    t = str(text).strip()
    if t.lower() in _NAMED:
        fam, src = _NAMED[t.lower()]
        return ModelSpec(fam, src, t.lower())
    fam, sep, src = t.partition(":")
    if sep and fam.lower() in ("biencoder", "cross", "yesno", "rank1") and src:
        return ModelSpec(fam.lower(), src, t)
    raise TierankInputError([Problem("", None, f"unknown model {text!r}; accepted: {MODEL_HELP}")])


# ----------------------------------------------------------------- BEIR input


def _read_jsonl(path: Path, keep: Callable[[dict], bool] | None = None) -> list[dict]:
    """Parse a JSON-lines file, raising with file:line for malformed lines."""
    out, problems = [], []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(str(path), n, f"not valid JSON ({exc.msg})"))
                continue
            if not isinstance(rec, dict) or "_id" not in rec:
                problems.append(Problem(str(path), n, 'expected an object with an "_id"'))
                continue
            if keep is None or keep(rec):
                out.append(rec)
            if len(problems) >= 20:
                break
    if problems:
        raise TierankInputError(problems)
    return out


@dataclass
class BeirSet:
    """Query texts, document texts, qrels and candidates (first-stage order) of a reranking set."""

    queries: dict[str, str]
    docs: dict[str, str]
    candidates: dict[str, list[str]]  # qid -> docids in first-stage order
    qrels: Any  # tierank.io.model.Qrels
    qrels_path: Path
    candidates_path: Path


def _find(data: Path, names: Sequence[str], what: str) -> Path:
    for n in names:
        if (data / n).is_file():
            return data / n
    raise TierankInputError([Problem(str(data), None, f"no {what} file (looked for {', '.join(names)})")])


def load_beir(
    data_dir: str | os.PathLike,
    candidates: str | os.PathLike | None = None,
    qrels: str | os.PathLike | None = None,
    queries: str = "judged",
    depth: int | None = None,
    max_queries: int | None = None,
) -> BeirSet:
    """Read a BEIR-layout directory and a candidate run.

    ``queries="judged"`` keeps the queries with at least one judgment (the
    only ones any measure can see); ``"all"`` keeps every query with
    candidates.  Candidates are ordered by first-stage score (descending;
    ties by the file's order), ``depth`` keeps the top ``depth`` of each
    query and ``max_queries`` the first queries in sorted order.
    """
    from tierank.io.readers import read_qrels, read_run

    data = Path(data_dir)
    if not data.is_dir():
        raise TierankInputError([Problem(str(data), None, "not a directory")])
    if queries not in ("judged", "all"):
        raise TierankInputError([Problem("", None, f"queries must be 'judged' or 'all', got {queries!r}")])
    for name, val in (("depth", depth), ("max queries", max_queries)):
        if val is not None and int(val) < 1:
            raise TierankInputError([Problem("", None, f"{name} must be >= 1, got {val!r}")])
    qrels_path = Path(qrels) if qrels else _find(data, ("qrels.txt", "qrels/test.tsv", "qrels.tsv", "qrels"), "qrels")
    cand_path = Path(candidates) if candidates else _find(data, ("candidates.run", "candidates.txt"), "candidate run")
    qr = read_qrels(qrels_path)
    run = read_run(cand_path)

    qid = np.asarray(run.qid.to_pylist(), dtype=object)
    docid = np.asarray(run.docid.to_pylist(), dtype=object)
    order = np.lexsort((np.arange(len(qid)), -run.score, qid.astype(str)))
    cands: dict[str, list[str]] = {}
    for i in order:
        cands.setdefault(str(qid[i]), []).append(str(docid[i]))
    judged = set(map(str, qr.qid.to_pylist()))
    keep = sorted(q for q in cands if queries == "all" or q in judged)
    if max_queries is not None:
        keep = keep[: int(max_queries)]
    cands = {q: cands[q][: int(depth)] if depth else cands[q] for q in keep}
    if not cands:
        raise TierankInputError([Problem(str(cand_path), None, f"no {'judged ' if queries == 'judged' else ''}query has candidates")])

    need_q = set(cands)
    need_d = {d for ds in cands.values() for d in ds}
    qfile = _find(data, ("queries.jsonl",), "queries")
    cfile = _find(data, ("corpus.jsonl",), "corpus")
    qtexts = {str(r["_id"]): str(r.get("text", "")) for r in _read_jsonl(qfile, lambda r: str(r["_id"]) in need_q)}
    docs = {}
    for r in _read_jsonl(cfile, lambda r: str(r["_id"]) in need_d):
        title, text = str(r.get("title") or ""), str(r.get("text") or "")
        docs[str(r["_id"])] = f"{title} {text}".strip() if title else text
    problems = [Problem(str(qfile), None, f"query {q!r} has candidates but no text") for q in sorted(need_q - set(qtexts))]
    problems += [Problem(str(cfile), None, f"document {d!r} is a candidate but not in the corpus") for d in sorted(need_d - set(docs))]
    if problems:
        raise TierankInputError(problems[:20])
    return BeirSet(qtexts, docs, cands, qr, qrels_path, cand_path)


# ---------------------------------------------------------------------- cache


class ScoreCache:
    """Append-only JSON-lines store of one variant's scores, one line per query.

    The first line holds the key (model, variant, batch size, options).  A
    line cut short by an interruption is dropped (and truncated away) on the
    next open; a query scored twice keeps its last record.
    """

    def __init__(self, directory: str | os.PathLike, key: dict):
        self.key = dict(key, cache_version=CACHE_VERSION)
        blob = json.dumps(self.key, sort_keys=True)
        digest = hashlib.sha1(blob.encode()).hexdigest()[:10]
        self.path = Path(directory) / f"{_slug(key['model'])}__{_slug(key['variant'])}__bs{key['batch_size']}__{digest}.jsonl"
        self.records: dict[str, dict] = {}
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        raw = self.path.read_bytes()
        good = 0
        pos = 0
        for n, line in enumerate(raw.split(b"\n")):
            end = pos + len(line) + 1
            if end > len(raw):  # no newline: an interrupted write
                break
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break
            if n == 0:
                if rec.get("key") != self.key:
                    raise TierankError(f"{self.path}: cache key does not match the settings; delete the file")
            else:
                self.records[rec["query"]] = rec
            good = pos = end
        if good < len(raw):
            with open(self.path, "r+b") as fh:
                fh.truncate(good)

    def get(self, qid: str, docids: Sequence[str]) -> dict | None:
        rec = self.records.get(qid)
        if rec is not None and rec["docids"] == list(docids):
            return rec
        return None

    def append(self, rec: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        with open(self.path, "a", encoding="utf-8") as fh:
            if new:
                fh.write(json.dumps({"key": self.key}) + "\n")
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.records[rec["query"]] = rec


# -------------------------------------------------------------------- scorers


def make_scorer(spec: ModelSpec, group: str, batch_size: int, device: str, budget: int, max_doc_tokens: int):
    """Load the scorer for one variant group (a model dtype, or ``onnx-int8``)."""
    if group == "onnx-int8":
        from tierank.hps.onnx import OnnxBiEncoderScorer

        if spec.source != "minilm":
            raise TierankInputError([Problem("", None, "onnx-int8 is only known for the model 'minilm'")])
        return OnnxBiEncoderScorer(batch_size=batch_size)
    if spec.family == "biencoder":
        from tierank.hps.biencoder import BiEncoderScorer

        return BiEncoderScorer(spec.source, model_dtype=group, batch_size=batch_size, device=device)
    if spec.family == "cross":
        from tierank.hps.crossencoder import CrossEncoderScorer

        return CrossEncoderScorer(spec.source, model_dtype=group, batch_size=batch_size, device=device)
    if spec.family == "yesno":
        from tierank.hps.generative import YesNoScorer

        return YesNoScorer(spec.source, model_dtype=group, batch_size=batch_size, max_doc_tokens=max_doc_tokens, device=device)
    from tierank.hps.generative import Rank1Scorer

    return Rank1Scorer(spec.source, model_dtype=group, batch_size=batch_size, budget=budget,
                       max_doc_tokens=max_doc_tokens, device=device)


def _cache_key(spec: ModelSpec, v: Variant, batch_size: int, budget: int, max_doc_tokens: int, device: str) -> dict:
    key = {"model": spec.slug, "family": spec.family, "source": spec.source, "variant": v.name, "batch_size": int(batch_size)}
    if spec.family in ("yesno", "rank1") and not v.onnx:
        key["max_doc_tokens"] = int(max_doc_tokens)
    if spec.family == "rank1":
        key["budget"] = int(budget)
    # GPU and CPU kernels round low-precision arithmetic differently
    key["device"] = "cuda" if str(device).startswith("cuda") else "cpu"
    return key


# -------------------------------------------------------------------- results

TABLE_FIELDS = (
    "query", "variant", "measure", "fp32", "oblivious", "expected", "range", "bias", "min", "max", "std",
    "tied_share", "tie_groups", "mean_group", "max_group", "model_s", "scoring_ms", "hps_overhead", "queries",
)


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


def tie_stats(scores: dict[str, np.ndarray]) -> dict:
    """Share of candidates in tie groups, number, mean and largest size of tie groups (size >= 2).

    >>> tie_stats({"q": np.array([1.0, 1.0, 0.5, 0.2, 0.2, 0.2])})
    {'candidates': 6, 'tied': 5, 'tied_share': 0.8333333333333334, 'tie_groups': 2, 'mean_group': 2.5, 'max_group': 3}
    """
    sizes = []
    total = 0
    for s in scores.values():
        s = np.asarray(s)
        total += len(s)
        if len(s):
            _, counts = np.unique(s, return_counts=True)
            sizes.extend(counts[counts > 1].tolist())
    tied = int(sum(sizes))
    return {
        "candidates": total,
        "tied": tied,
        "tied_share": tied / total if total else 0.0,
        "tie_groups": len(sizes),
        "mean_group": float(np.mean(sizes)) if sizes else 0.0,
        "max_group": int(max(sizes)) if sizes else 0,
    }


def _write_run(path: Path, scores: dict[str, np.ndarray], cands: dict[str, list[str]], tag: str) -> None:
    """TREC run with ``repr`` scores (exact float64 round trip: no tie created or removed)."""
    from tierank.io.writers import write_atomic

    lines = []
    for q in sorted(scores):
        s = np.asarray(scores[q], dtype=np.float64)
        order = np.argsort(-s, kind="stable")  # ties keep the candidate order
        for rank, i in enumerate(order, 1):
            lines.append(f"{q} Q0 {cands[q][i]} {rank} {float(s[i])!r} {tag}\n")
    write_atomic(path, "".join(lines))


def rerank(
    data_dir: str | os.PathLike,
    model: str | ModelSpec,
    regimes: Iterable[str] | str = ("fp32", "bf16", "bf16->fp32"),
    measures: Iterable[str] | str = ("nDCG@10", "RR@10"),
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
) -> ProtocolResult:
    """Run the protocol: score, cache, write runs, evaluate, and build Table 1's rows.

    ``progress(label, total)`` may return a callable ``advance()`` invoked once
    per scored query (the CLI passes a rich progress bar).
    ``scorer_factory(spec, group)`` replaces :func:`make_scorer` (tests use it).
    Returns a :class:`ProtocolResult`; runs land in ``out_dir/runs`` (if
    given) and the cache in ``cache_dir`` (default ``out_dir/cache``).
    """
    from tierank.evaluate import evaluate
    from tierank.io.readers import read_run
    from tierank.measures.base import parse_measure
    from tierank.ties import TieBreak

    spec = model if isinstance(model, ModelSpec) else parse_model(model)
    variants = parse_variants(regimes)
    for v in variants:
        v.check(spec.family)
    mlist = [measures] if isinstance(measures, str) else list(measures)
    parsed_measures = [parse_measure(m) for m in mlist]
    TieBreak.parse(tie_break)
    batch_size = check_batch_size(batch_size)
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    from tierank.hps.variants import resolve_device

    dev = resolve_device(device) if scorer_factory is None else (device or "cpu")
    data = load_beir(data_dir, candidates, qrels, queries=queries, depth=depth, max_queries=max_queries)
    out = Path(out_dir) if out_dir is not None else None
    cache_root = Path(cache_dir) if cache_dir is not None else (out / "cache" if out is not None else None)
    if cache_root is None:
        raise TierankInputError([Problem("", None, "give an output or a cache directory")])

    caches = {v.name: ScoreCache(cache_root, _cache_key(spec, v, batch_size, budget, max_doc_tokens, dev)) for v in variants}
    groups: dict[str, list[Variant]] = {}
    for v in variants:
        groups.setdefault(v.group, []).append(v)
    qids = sorted(data.candidates)
    factory = scorer_factory or (lambda s, g: make_scorer(s, g, batch_size, dev, budget, max_doc_tokens))
    meta: dict[str, dict] = {}
    for group, vs in groups.items():
        todo = [q for q in qids if any(caches[v.name].get(q, data.candidates[q]) is None for v in vs)]
        if not todo:
            continue
        scorer = factory(spec, group)
        if hasattr(scorer, "metadata"):
            meta[group] = scorer.metadata()
        advance = progress(f"{spec.slug} {group}", len(todo)) if progress else None
        for q in todo:
            dids = data.candidates[q]
            missing = [v for v in vs if caches[v.name].get(q, dids) is None]
            res = scorer.score_query(data.queries[q], [data.docs[d] for d in dids], missing)
            for v in missing:
                s = np.asarray(res.scores[v.name], dtype=np.float64)
                if s.shape != (len(dids),) or not np.all(np.isfinite(s)):
                    raise TierankError(f"scorer returned {s.shape} scores (finite: {bool(np.all(np.isfinite(s)))}) for query {q!r}")
                rec = {"query": q, "docids": list(dids), "scores": s.tolist(),
                       "model_s": float(res.model_s), "scoring_s": float(res.scoring_s[v.name])}
                if res.reasoning is not None:
                    rec["reasoning"] = list(res.reasoning)
                caches[v.name].append(rec)
            if advance:
                advance()
        del scorer

    # ---- runs, evaluation, Table 1
    scores = {v.name: {q: np.asarray(caches[v.name].records[q]["scores"]) for q in qids} for v in variants}
    timing = {}
    for v in variants:
        recs = [caches[v.name].records[q] for q in qids]
        timing[v.name] = {"model_s": float(sum(r["model_s"] for r in recs)),
                          "scoring_s": float(sum(r["scoring_s"] for r in recs))}
    runs: dict[str, Path] = {}
    reasoning: dict[str, Path] = {}
    run_dir = (out / "runs") if out is not None else (cache_root / "runs")
    run_dir.mkdir(parents=True, exist_ok=True)
    from tierank.io.writers import write_atomic

    for v in variants:
        path = run_dir / f"{spec.slug}.{_slug(v.name)}.run"
        _write_run(path, scores[v.name], data.candidates, f"{spec.slug}.{_slug(v.name)}")
        runs[v.name] = path
        if any("reasoning" in caches[v.name].records[q] for q in qids):
            rpath = run_dir / f"{spec.slug}.{_slug(v.name)}.reasoning.jsonl"
            lines = []
            for q in qids:
                rec = caches[v.name].records[q]
                for d, s, r in zip(rec["docids"], rec["scores"], rec.get("reasoning", [])):
                    lines.append(json.dumps({"query": q, "docid": d, "score": s, "reasoning": r}) + "\n")
            write_atomic(rpath, "".join(lines))
            reasoning[v.name] = rpath

    evals = {v.name: evaluate(data.qrels, read_run(runs[v.name]), parsed_measures, tie_break=tie_break) for v in variants}
    ties = {v.name: tie_stats(scores[v.name]) for v in variants}
    ref = next((v.name for v in variants if v.name == "fp32"), None)
    rows = []
    for m in parsed_measures:
        fp32_val = None
        if ref is not None:
            fp32_val = _agg(evals[ref], m)["oblivious"]
        for v in variants:
            a = _agg(evals[v.name], m)
            t = timing[v.name]
            twin = v.low_twin
            overhead = None
            if twin in timing and t["model_s"] > 0:
                overhead = (t["scoring_s"] - timing[twin]["scoring_s"]) / t["model_s"]
            rows.append({
                "query": "all", "variant": v.name, "measure": str(m), "fp32": fp32_val,
                "oblivious": a["oblivious"], "expected": a["expected"], "range": a["range"], "bias": a["bias"],
                "min": a["min"], "max": a["max"], "std": a["std"],
                "tied_share": ties[v.name]["tied_share"], "tie_groups": ties[v.name]["tie_groups"],
                "mean_group": ties[v.name]["mean_group"], "max_group": ties[v.name]["max_group"],
                "model_s": t["model_s"], "scoring_ms": 1000 * t["scoring_s"], "hps_overhead": overhead,
                "queries": len(qids),
            })
    settings = {
        "model": spec.name, "family": spec.family, "source": spec.source,
        "variants": [v.name for v in variants], "measures": [str(m) for m in parsed_measures],
        "batch_size": int(batch_size), "device": dev, "tie_break": tie_break, "queries": len(qids),
        "candidates": sum(len(c) for c in data.candidates.values()), "data": str(data_dir),
        "candidates_file": str(data.candidates_path), "qrels_file": str(data.qrels_path),
        "cache": str(cache_root), "scorers": meta,
    }
    if spec.family == "rank1":
        settings["budget"] = int(budget)
    if spec.family in ("yesno", "rank1"):
        settings["max_doc_tokens"] = int(max_doc_tokens)
    return ProtocolResult(rows, runs, reasoning, settings, ties, timing, evals)


def _agg(res, m) -> dict:
    for row in res._aggregate_rows():
        if row["measure"] == str(m):
            return row
    raise KeyError(str(m))
