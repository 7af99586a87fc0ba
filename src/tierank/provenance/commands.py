"""The manifests of the commands beside ``eval``: `compare_manifest` (``tierank compare
--manifest``) and `judges_manifest` (``tierank judges --manifest``).

Each writes the same sections as an evaluation's manifest (`tierank.provenance.manifest`): the
inputs' SHA-256 under ``data``, the evaluation's settings under ``method.evaluation.settings`` and the
command's own settings in a block beside them (``method.evaluation.compare``,
``method.evaluation.judges``), its numbers under ``results``, and the ``seal``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .manifest import Manifest, document, input_record, qrels_input, run_input, settings_record

if TYPE_CHECKING:
    from ..analysis.compare import Comparison
    from ..settings import EvalSettings

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


def comparison_results(comparison: Comparison) -> dict[str, Any]:
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
    comparison: Comparison,
    settings: EvalSettings,
    options: Any,
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
) -> Manifest:
    """The manifest of a comparison (`tierank.compare`): ``runs`` maps each system's name to its
    file (a path; anything else: given in memory); ``options``: the `CompareSettings` it was made with; ``base``: the folder paths are
    written relative to (the manifest's own).

    Examples
    --------
    >>> from tierank import examples
    >>> from tierank.analysis.compare import CompareSettings
    >>> from tierank.report.comparison import compare
    >>> from tierank.settings import EvalSettings
    >>> runs = {"bm25": examples.path("askubuntu-run"), "bm25 again": examples.path("askubuntu-run")}
    >>> opts = CompareSettings()
    >>> cmp = compare(runs, examples.path("askubuntu-qrels"), "AP", EvalSettings(), opts)
    >>> man = compare_manifest(examples.path("askubuntu-qrels"), runs, cmp, EvalSettings(), opts)
    >>> man["method"]["evaluation"]["command"], man["results"]["pairs"][0]["diff_expected"]
    ('compare', 0.0)
    """
    data, tags = _inputs(qrels, runs, base)
    evaluation = {
        "measures": [comparison.measure],
        "settings": settings_record(settings),
        "compare": compare_settings_record(options),
    }
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
