"""The manifests of the commands beside ``eval``: `compare_manifest` (``tierank compare
--manifest``) and `judges_manifest` (``tierank judges --manifest``).

Each writes the same sections as an evaluation's manifest (`tierank.provenance.manifest`; built by `tierank.provenance.build`): the
inputs' SHA-256 under ``data``, the evaluation's settings under ``method.evaluation.settings`` and the
command's own settings in a block beside them (``method.evaluation.compare``,
``method.evaluation.judges``), its numbers under ``results``, and the ``seal``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Protocol

from .build import (
    document,
    estimate_records,
    input_record,
    qrels_input,
    run_input,
    score_format,
    settings_record,
    tie_profile,
)
from .io import Manifest

if TYPE_CHECKING:
    from ..settings import EvalSettings


class Compared(Protocol):
    """What a manifest reads of a comparison ([`tierank.analysis.compare.Comparison`][tierank.analysis.compare.Comparison]
    is one): its measure and its records (so that this room imports nothing of the analysis)."""

    @property
    def measure(self) -> Any: ...

    def to_dict(self) -> dict[str, Any]: ...


#: the role of ``compare --ppi``'s human qrels in ``data.estimates``
PPI_ROLE = "ppi human qrels"
#: what verify checks of a comparison made with ``--ppi``
COMPARE_PPI_NOTE = (
    "verify checks the human qrels' SHA-256 and makes the comparison again with them: every "
    "prediction-powered number of results is compared"
)

#: a compared system's numbers recorded (``results.systems[]``)
SYSTEM_KEYS = (
    "name",
    "oblivious",
    "expected",
    "min",
    "max",
    "std",
    "ci_low",
    "ci_high",
    "rank",
    "rank_oblivious",
    "rank_low",
    "rank_high",
    "group",
)
#: a pair's numbers recorded (``results.pairs[]``)
PAIR_KEYS = (
    "a",
    "b",
    "diff_expected",
    "diff_oblivious",
    "p",
    "p_test",
    "p_adjusted",
    "significant",
    "diff_ci_low",
    "diff_ci_high",
    "p_a_above",
    "test_used",
    "method",
    "samples",
    "seed",
    "se",
)
#: the compare settings recorded (``method.evaluation.compare``): every field of
#: `tierank.analysis.compare.CompareSettings` but ``jobs`` (the same numbers for any number of threads)
COMPARE_SKIP = ("jobs",)


def compare_settings_record(options: Any) -> dict[str, Any]:
    """The fields of a `CompareSettings` that can change a number, as plain values."""
    return {f.name: getattr(options, f.name) for f in fields(options) if f.name not in COMPARE_SKIP}


def comparison_results(comparison: Compared) -> dict[str, Any]:
    """``results`` of a comparison: the queries compared, each system's and each pair's numbers."""
    rec = comparison.to_dict()
    return {
        "measure": rec["measure"],
        "queries": rec["queries"],
        "dropped_queries": rec["dropped_queries"],
        "systems": [{k: s.get(k) for k in SYSTEM_KEYS} for s in rec["systems"]],
        "pairs": [{k: p.get(k) for k in PAIR_KEYS} for p in rec["pairs"]],
    }


def _inputs(
    qrels: str | os.PathLike | None,
    runs: Mapping[str, Any],
    base: str | os.PathLike | None,
) -> tuple[dict[str, Any], list[str]]:
    where = None if base is None else os.fspath(base)
    records, tags = [], []
    for name, path in runs.items():
        rec, tag = run_input(name, path, where)
        records.append(rec)
        tags.append(tag)
    return {"qrels": qrels_input(qrels, where), "runs": records}, tags


def compare_manifest(
    qrels: str | os.PathLike | None,
    runs: Mapping[str, Any],
    comparison: Compared,
    settings: EvalSettings,
    options: Any,
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
    read: Mapping[str, Any] | None = None,
    ppi: str | os.PathLike | None = None,
) -> Manifest:
    """The manifest of a comparison (`tierank.compare`): ``runs`` maps each system's name to its
    file (a path; anything else: given in memory); ``options``: the `CompareSettings` it was made with; ``base``: the folder paths are
    written relative to (the manifest's own); ``read``: each run as the comparison read it (a
    `tierank.io.model.Run` by name), for its tie profile (``data.runs[].ties``; a run not in it
    has none); ``ppi``: the human qrels of a prediction-powered comparison (``data.estimates``).

    Examples
    --------
    >>> from tierank import examples
    >>> from tierank.analysis.compare import CompareSettings
    >>> from tierank.analysis.compare import compare
    >>> from tierank.settings import EvalSettings
    >>> runs = {"bm25": examples.path("askubuntu-run"), "bm25 again": examples.path("askubuntu-run")}
    >>> opts = CompareSettings()
    >>> cmp = compare(runs, examples.path("askubuntu-qrels"), "AP", EvalSettings(), opts)
    >>> man = compare_manifest(examples.path("askubuntu-qrels"), runs, cmp, EvalSettings(), opts)
    >>> man["method"]["evaluation"]["command"], man["results"]["pairs"][0]["diff_expected"]
    ('compare', 0.0)
    """
    from ..ties import layout

    data, tags = _inputs(qrels, runs, base)
    for rec in data["runs"]:
        run = (read or {}).get(rec["name"])
        if run is not None:  # the run as compared: its tie groups and score format
            rec["ties"] = tie_profile(layout(run).summary.to_dict(), score_format(run.score))
    evaluation: dict[str, Any] = {
        "measures": [comparison.measure],
        "settings": settings_record(settings),
        "compare": compare_settings_record(options),
    }
    if ppi is not None:
        evaluation["estimates"] = {"kind": "ppi", "note": COMPARE_PPI_NOTE}
        data["estimates"] = estimate_records(
            [(PPI_ROLE, ppi)], None if base is None else os.fspath(base)
        )
    return document("compare", evaluation, data, comparison_results(comparison), tags, command)


def judges_manifest(
    reference: str | os.PathLike,
    judges: list,
    runs: list,
    settings: Mapping[str, Any],
    results: dict[str, Any],
    measures: list[str],
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
) -> Manifest:
    """The manifest of ``tierank judges``: the reference (``data.qrels``), each judge's file
    (``data.judges``), the runs of ``--runs`` (``data.runs``, named as the command names them),
    its options (``settings``, ``method.evaluation.judges``) and ``results`` (each judge's pooled
    agreement; with runs the orderings and means, evaluated under the default
    `tierank.EvalSettings`, recorded in ``method.evaluation.settings``)."""
    from ..io.naming import name_runs
    from ..settings import EvalSettings

    where = None if base is None else os.fspath(base)
    named = name_runs([os.fspath(r) for r in runs]) if runs else {}
    data, tags = _inputs(reference, named, base)
    data["judges"] = [input_record(j, where) for j in judges]
    evaluation = {
        "measures": list(measures),
        "settings": settings_record(EvalSettings()) if runs else {},
        "judges": dict(settings),
    }
    return document("judges", evaluation, data, results, tags or ["judges"], command)


#: a rerank row's keys left out of the manifest: timings, which no run makes again
RERANK_TIMINGS = ("model_s", "scoring_ms", "hps_overhead")
#: the protocol's settings recorded in ``method.evaluation.rerank`` (where present)
RERANK_SETTINGS = (
    "model",
    "family",
    "source",
    "variants",
    "batch_size",
    "device",
    "backend",
    "queries",
    "candidates",
    "depth",
    "max_queries",
    "batch_sizes",
    "orders",
    "padding_sides",
)
#: a scorer's settings recorded per variant (``method.evaluation.rerank.scorers``)
SCORER_SETTINGS = ("scorer", "model_dtype", "similarity", "batch_size", "device", "backend")


def _model_record(path: Any, base: str | None) -> dict[str, Any]:
    """A model's files (a folder: each file's SHA-256; a file: its own), or its name alone where it
    is not a local path."""
    if isinstance(path, str) and os.path.exists(path):
        return input_record(path, base)
    return {"path": str(path), "sha256": None, "size": None}


def rerank_manifest(
    settings: Mapping[str, Any],
    rows: list[dict[str, Any]],
    runs: Mapping[str, Any],
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
) -> Manifest:
    """The manifest of ``tierank rerank`` from its protocol's result (`ProtocolResult`'s
    ``settings``, ``rows`` and ``runs``: each variant's written run): the qrels, the candidates, the
    data folder's and each model's files (SHA-256 of each), each variant's written run; the model,
    its dtype per variant, device, batch size and backend; and every row of the table but its
    timings."""
    from ..settings import EvalSettings

    where = None if base is None else os.fspath(base)
    data, tags = _inputs(settings.get("qrels_file"), runs, base)
    data["candidates"] = qrels_input(settings.get("candidates_file"), where)
    data["collection"] = qrels_input(settings.get("data"), where)
    scorers = settings.get("scorers") or {}
    models = sorted({str(s["model"]) for s in scorers.values() if s.get("model") is not None})
    data["models"] = [_model_record(m, where) for m in models]
    block = {k: settings[k] for k in RERANK_SETTINGS if settings.get(k) is not None}
    block["scorers"] = {v: {k: s[k] for k in SCORER_SETTINGS if k in s} for v, s in scorers.items()}
    evaluation = {
        "measures": list(settings.get("measures") or []),
        "settings": settings_record(EvalSettings(tie_break=settings.get("tie_break", "trec_eval"))),
        "rerank": block,
    }
    results: dict[str, Any] = {
        "rows": [{k: v for k, v in r.items() if k not in RERANK_TIMINGS} for r in rows],
    }
    if settings.get("variance"):  # run-to-run variance (batch sizes, orders, padding sides)
        results["variance"] = settings["variance"]
    return document("rerank", evaluation, data, results, tags, command)
