"""The rerank protocol's record: what the scores mean, as Table 1, its settings and its manifest.

[`record`][tierank.hps.record.record] evaluates each variant from its in-memory rows (those its run file
will hold, in the same order) with [`tierank.evaluate`][tierank.evaluate], takes its tie statistics and
its similarity with the fp32 variant, builds Table 1's rows (`tierank.hps.table`), the run-to-run
variance (`tierank.hps.variance.batch_variance`) and the settings, and returns a
[`ProtocolResult`][tierank.hps.record.ProtocolResult]: everything ``table.json`` holds.
[`manifest`][tierank.hps.record.manifest] makes the result's manifest (``tierank rerank --manifest``).
Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tierank.hps.plan import RerankPlan
from tierank.hps.score import Scored
from tierank.hps.table import RBO_P, fp32_similarity, table_rows, tie_stats

__all__ = ["ProtocolResult", "record", "manifest"]


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


def _evaluations(plan: RerankPlan, scored: Scored) -> dict[Any, dict[str, Any]]:
    """Every variant evaluated under every setting (None: the plan's own, each run as its file names
    it; then the run-to-run settings of ``scored.extra``)."""
    from tierank.evaluate import evaluate

    p, qrels, measures = plan, scored.data.qrels, list(plan.measures)
    own = {
        name: replace(run, source=str(p.output.files[name][0]))
        for name, (run, _) in scored.runs.items()
    }
    return {
        key: {
            v.name: evaluate(qrels, runs[v.name], measures, tie_break=p.tie_break)
            for v in p.variants
        }
        for key, runs in {None: own, **scored.extra_runs}.items()
    }


def _variance(
    plan: RerankPlan, scored: Scored, evals: Mapping[Any, Mapping[str, Any]]
) -> dict | None:
    """``table.json``'s ``variance``: the scores and E[M] under the other run-to-run settings."""
    if not scored.extra:
        return None
    from tierank.hps.variance import batch_variance

    p = plan
    keys = [p.batch_size, *scored.extra]
    all_scores = {p.batch_size: scored.scores, **scored.extra}
    all_evals = {p.batch_size: evals[None], **{k: evals[k] for k in scored.extra}}
    return {
        "batch_sizes": [p.batch_size, *p.extra_sizes],
        "orders": list(p.extra_orders),
        "padding_sides": [p.default_side, *p.extra_sides] if p.default_side else [],
        "repeats": int(p.repeat),
        "settings": [f"bs={k}" if isinstance(k, int) else k for k in keys],
        "variants": batch_variance(keys, all_scores, all_evals, list(p.measures)),
    }


def _settings(plan: RerankPlan, scored: Scored, variance: dict | None) -> dict:
    """``table.json``'s ``settings``: the model, what was compared and how, where it ran."""
    from tierank.hps.machine import platform

    p, data = plan, scored.data
    settings = {
        "model": p.spec.name,
        "family": p.spec.family,
        "source": p.spec.source,
        "variants": [v.name for v in p.variants],
        "measures": [str(m) for m in p.measures],
        "batch_size": int(p.batch_size),
        "device": p.device,
        "backend": p.backend,
        "tie_break": p.tie_break,
        "queries": len(scored.qids),
        "candidates": sum(len(c) for c in data.candidates.values()),
        "data": str(p.data_dir),
        "candidates_file": str(data.candidates_path),
        "qrels_file": str(data.qrels_path),
        "cache": str(p.output.cache),
        "scorers": scored.metadata,
        "platform": platform(p.device, p.threads),
        "similarity": {
            "reference": "fp32" if "fp32" in scored.runs else None,
            "p": RBO_P,
            "columns": {
                "rbo_fp32": "mean over queries of the expected RBO_ext with the fp32 "
                "variant over both runs' tie orderings",
                "rbo_fp32_min": "mean of its minimum over those orderings",
                "rbo_fp32_max": "mean of its maximum over those orderings",
            },
        },
    }
    if variance is not None:
        settings["variance"] = variance
    settings.update({o: p.options[o] for o in p.spec.kind.options})
    return settings


def record(plan: RerankPlan, scored: Scored) -> ProtocolResult:
    """Table 1 of ``scored``: each variant evaluated from the rows its run file holds (named by the
    file), and under each run-to-run setting; its tie statistics and similarity with fp32; the
    run-to-run variance and the settings."""
    p = plan
    evals = _evaluations(p, scored)
    ties = {name: tie_stats(lay) for name, (_, lay) in scored.runs.items()}
    similarity = fp32_similarity({name: run for name, (run, _) in scored.runs.items()})
    rows = table_rows(
        list(p.variants),
        list(p.measures),
        evals[None],
        ties,
        scored.timing,
        len(scored.qids),
        similarity,
    )
    variance = _variance(p, scored, evals)
    settings = _settings(p, scored, variance)
    runs = {v.name: p.output.files[v.name][0] for v in p.variants}
    reasoning = {
        v.name: p.output.files[v.name][1]
        for v in p.variants
        if any("reasoning" in r for r in scored.records[v.name])
    }
    return ProtocolResult(rows, runs, reasoning, settings, ties, scored.timing, evals[None])


def manifest(result: ProtocolResult, command: str, base: Path) -> Any:
    """The manifest of a protocol run ([`rerank_manifest`][tierank.provenance.commands.rerank_manifest]:
    the inputs', the models' and the written runs' SHA-256, the settings, the table's numbers), with
    paths relative to ``base`` (the manifest's folder) and ``command`` as the command line."""
    from tierank.provenance.commands import rerank_manifest

    return rerank_manifest(result.settings, result.rows, result.runs, command=command, base=base)
