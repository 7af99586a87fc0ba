"""The manifest's builders: the records of a manifest's sections, the seal, and an evaluation's manifest.

[`eval_manifest`][tierank.provenance.build.eval_manifest] (``tierank eval --manifest``) and
[`of_result`][tierank.provenance.build.of_result] (``EvalResult.manifest``) build an evaluation's
manifest; [`document`][tierank.provenance.build.document] seals any command's sections into a
[`Manifest`][tierank.provenance.io.Manifest] (the other commands' builders are in
[`tierank.provenance.commands`][tierank.provenance.commands]).  A result is read through what it
offers ([`Evaluated`][tierank.provenance.build.Evaluated]), so this room needs no import of the
results' own.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .inputs import file_record, ir_metadata
from .io import Manifest
from .schema import (
    COMMAND_BLOCKS,
    DIGEST_COLUMNS,
    LIBRARIES,
    MARK,
    NUMBER_SETTINGS,
    OPTIONAL_LIBRARIES,
    SCHEMA_VERSION,
)

if TYPE_CHECKING:
    from ..settings import EvalSettings


class Evaluated(Protocol):
    """What a manifest reads of an evaluation's result ([`tierank.EvalResult`][tierank.EvalResult] is one):
    its measures, queries, per-query statistics, tie summary, settings and score format, and its
    aggregate records."""

    @property
    def measures(self) -> Sequence[Any]: ...

    @property
    def qids(self) -> Sequence[str]: ...

    @property
    def stats(self) -> Mapping[Any, Any]: ...

    @property
    def ties(self) -> Any: ...

    @property
    def settings(self) -> Mapping[str, Any]: ...

    @property
    def score_format(self) -> str | None: ...

    def records(self, per_query: bool = True) -> list[dict[str, Any]]: ...


def digest(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON (sorted keys), in hex."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def versions() -> dict[str, str]:
    """The versions of Python, tierank and the libraries that compute (optional ones where loaded)."""
    from importlib import metadata

    from ..version import __version__

    out = {"python": platform.python_version(), "tierank": __version__}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    for name in OPTIONAL_LIBRARIES:
        if name in sys.modules:
            try:
                out[name] = metadata.version(name.replace("_", "-"))
            except metadata.PackageNotFoundError:
                pass
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> str | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return f"{pages * size / 2**30:.1f} GiB"


def platform_section() -> dict[str, Any]:
    """ir_metadata's ``platform``: the hardware, the operating system and the software's versions."""
    try:
        distribution = platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        distribution = None
    hardware: dict[str, Any] = {
        "cpu": {
            "model": _cpu_model(),
            "architecture": platform.machine(),
            "number of cores": os.cpu_count(),
        }
    }
    ram = _ram()
    if ram is not None:
        hardware["ram"] = ram
    system = {"kernel": f"{platform.system()} {platform.release()}"}
    if distribution:
        system["distribution"] = distribution
    return {
        "hardware": hardware,
        "operating system": system,
        "software": {"libraries": versions()},
    }


def settings_record(settings: EvalSettings) -> dict[str, Any]:
    """Every setting of `NUMBER_SETTINGS`, as plain values (the tie-break as written)."""
    out = {}
    for key in NUMBER_SETTINGS:
        value = getattr(settings, key)
        out[key] = value if value is None or isinstance(value, (bool, int, float)) else str(value)
    return out


def score_format(scores: Any) -> str:
    """The narrowest float format of `SCORE_FORMATS` that holds every (finite) score exactly, else
    ``fp64``: bf16 where the scores are float32 values whose low 16 bits are zero (bf16 is float32's
    upper half, same exponent range), fp16 through numpy's own cast, vectorized.

    >>> import numpy as np
    >>> score_format([0.5, 0.30078125]), score_format([0.1]), score_format(np.float32([0.1, 2.0]))
    ('bf16', 'fp64', 'fp32')
    """
    import numpy as np

    s = np.asarray(scores, dtype=np.float64)
    ok = np.isfinite(s)
    finite = s if ok.all() else s[ok]
    with np.errstate(over="ignore"):
        f32 = finite.astype(np.float32)
    if not np.array_equal(f32.astype(np.float64), finite):
        return "fp64"
    if not np.any(f32.view(np.uint32) & np.uint32(0xFFFF)):
        return "bf16"
    with np.errstate(over="ignore"):
        if np.array_equal(finite.astype(np.float16).astype(np.float64), finite):
            return "fp16"
    return "fp32"


#: the largest run file read again for its score format (a larger one is evaluated streamed)
SCORE_FORMAT_BYTES = 64 * 2**20


def _score_format_of(
    name: str, path: str | os.PathLike | None, scores: Mapping[str, Any] | None
) -> str | None:
    """The score format of run ``name``: from ``scores`` where given, else from its file where it is
    small enough to read again (`SCORE_FORMAT_BYTES`), else None."""
    if scores is not None and name in scores:
        return score_format(scores[name])
    if path is None or not os.path.isfile(path) or os.path.getsize(path) > SCORE_FORMAT_BYTES:
        return None
    from ..io.convert import to_run

    return score_format(to_run(os.fspath(path)).score)


def result_record(result: Evaluated) -> list[dict[str, Any]]:
    """Per measure: the aggregate record (statistics and their method) and ``per_query_sha256``."""
    import numpy as np

    out = []
    aggregates = result.records(per_query=False)
    for m, agg in zip(result.measures, aggregates):
        s = result.stats[m]
        h = hashlib.sha256()
        h.update("\0".join(result.qids).encode())
        for col in DIGEST_COLUMNS:
            h.update(np.ascontiguousarray(getattr(s, col), dtype=np.float64).tobytes())
        rec = {k: v for k, v in agg.items() if k != "query"}
        rec["queries"] = len(result.qids)
        rec["per_query_sha256"] = h.hexdigest()
        out.append(rec)
    return out


def _relative(path: str, base: str | None) -> str:
    """``path`` relative to the folder ``base`` where it lies below it, else absolute."""
    full = os.path.abspath(path)
    if base is not None:
        rel = os.path.relpath(full, os.path.abspath(base))
        if not rel.startswith(os.pardir):
            return rel
    return full


def input_record(path: str | os.PathLike, base: str | None) -> dict[str, Any]:
    """The record of one input file (or folder) for ``data``, its path relative to ``base``."""
    rec = file_record(path)
    rec["path"] = _relative(os.fspath(path), base)
    return rec


def sealed_settings(evaluation: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of ``method.evaluation`` by its sealed name: ``settings``' as named, a command's
    own block's (``compare``, ``judges``) as ``BLOCK/KEY``."""
    out = dict(evaluation["settings"])
    for block in COMMAND_BLOCKS:
        for k, v in (evaluation.get(block) or {}).items():
            out[f"{block}/{k}"] = v
    return out


def seal(document: Mapping[str, Any]) -> dict[str, Any]:
    """Digests of each setting, of the measures, of each input and of the results."""
    method = document["method"]["evaluation"]
    data = document["data"]
    return {
        "settings": {k: digest(v)[:16] for k, v in sealed_settings(method).items()},
        "measures": digest(method["measures"])[:16],
        "inputs": digest(
            [
                data["qrels"]["sha256"],
                *[(r["name"], r["sha256"]) for r in data["runs"]],
                *[(r["role"], r["sha256"]) for r in data.get("estimates") or []],
            ]
        )[:16],
        "results": digest(document["results"])[:16],
    }


def run_input(name: str, path: Any, base: str | None) -> tuple[dict[str, Any], str]:
    """A run's record for ``data.runs`` (its path relative to ``base``, SHA-256, size, its own
    ir_metadata header) and its tag (the header's, else the file's sixth column, else ``name``)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.exists(path):  # in memory
        return {"name": name, "path": None, "sha256": None, "size": None}, name
    rec: dict[str, Any] = {"name": name, **input_record(path, base)}
    header = ir_metadata(path)
    tag = None
    if header is not None:
        rec["ir_metadata"] = header
        tag = header.get("tag")
    if not isinstance(tag, str) and os.path.isfile(path):
        from ..io.readers import run_tag

        tag = run_tag(path)
    return rec, tag if isinstance(tag, str) else name


def qrels_input(qrels: str | os.PathLike | None, base: str | None) -> dict[str, Any]:
    """The qrels' record for ``data.qrels`` (null path, SHA-256 and size: given in memory)."""
    if qrels is not None and os.path.exists(qrels):
        return input_record(qrels, base)
    return {"path": None, "sha256": None, "size": None}


def estimate_records(
    inputs: Sequence[tuple[str, str | os.PathLike]], base: str | None
) -> list[dict[str, Any]]:
    """``data.estimates``: each (role, file) of the inputs an estimate beside the tie statistics
    reads (``--ppi``'s human qrels, ``--labels``' distributions, each ``--panel`` judge), with its
    path relative to ``base``, SHA-256 and size."""
    return [{"role": role, **input_record(path, base)} for role, path in inputs]


def tie_profile(ties: Mapping[str, Any], fmt: str | None, why: str | None = None) -> dict[str, Any]:
    """``data.runs[].ties``: a run's tie counts (a `tierank.ties.TieSummary`'s ``to_dict``) and its
    score format (None: not inferred, ``why`` then says why)."""
    profile: dict[str, Any] = {
        "tie groups": ties["groups"],
        "tied documents": ties["tied_docs"],
        "tied share": ties["share"],
        "largest group": ties["largest"],
        "queries with ties": ties["queries_with_ties"],
        "score format": fmt,
    }
    if fmt is None and why is not None:
        profile["score format note"] = why
    return profile


def document(
    command_name: str,
    evaluation: dict[str, Any],
    data: dict[str, Any],
    results: Any,
    tags: list[str],
    command: str | None,
) -> Manifest:
    """A sealed manifest of ``command_name``'s numbers: ``evaluation`` (measures, settings and the
    command's own block), ``data`` (qrels, runs, ...) and ``results``."""
    from ..version import __version__

    doc: dict[str, Any] = {
        MARK: SCHEMA_VERSION,
        "tag": tags[0] if len(tags) == 1 else tags,
        "platform": platform_section(),
        "implementation": {
            "executable": {"name": "tierank", "version": __version__, "command": command}
        },
        "method": {"evaluation": {"command": command_name, **evaluation}},
        "data": data,
        "results": results,
    }
    doc["seal"] = seal(doc)
    return Manifest(doc)


def eval_manifest(
    qrels: str | os.PathLike | None,
    runs: Mapping[str, tuple[str | os.PathLike | None, Evaluated]],
    measures: list[str],
    settings: EvalSettings,
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
    docs_in_collection: int | None = None,
    scores: Mapping[str, Any] | None = None,
    reread: bool = True,
    estimates: Mapping[str, Any] | None = None,
    estimate_inputs: Sequence[tuple[str, str | os.PathLike]] = (),
) -> Manifest:
    """The manifest of an evaluation: ``runs`` maps each run's name to (its file, its result);
    ``base``: the folder paths are written relative to (the manifest's own); ``scores``: each
    run's scores, for its score format; where neither they nor the result give it, a run file up
    to `SCORE_FORMAT_BYTES` is read again for it when ``reread``; ``estimates`` and
    ``estimate_inputs``: the settings (``method.evaluation.estimates``) and the (role, file) inputs
    (``data.estimates``, `estimate_records`) of the estimates written beside the tie statistics."""
    where = None if base is None else os.fspath(base)
    run_records = []
    tags = []
    for name, (path, result) in runs.items():
        rec, tag = run_input(name, path, where)
        tags.append(tag)
        fmt = result.score_format or _score_format_of(name, path if reread else None, scores)
        why = (
            "not inferred: the run was streamed or evaluated with others (one run in memory is)"
            if not reread
            else f"not inferred: only run files up to {SCORE_FORMAT_BYTES // 2**20} MB are read again for it"
        )
        rec["ties"] = tie_profile(result.ties.to_dict(), fmt, why)
        run_records.append(rec)
    evaluation: dict[str, Any] = {
        "measures": list(measures),
        "settings": settings_record(settings),
    }
    if docs_in_collection is not None:
        evaluation["docs_in_collection"] = docs_in_collection
    results = [
        {"run": name, "measures": result_record(result)} for name, (_, result) in runs.items()
    ]
    if estimates:
        evaluation["estimates"] = dict(estimates)
    data: dict[str, Any] = {"qrels": qrels_input(qrels, where), "runs": run_records}
    if estimate_inputs:
        data["estimates"] = estimate_records(estimate_inputs, where)
    return document("eval", evaluation, data, results, tags, command)


def of_result(result: Evaluated, settings: EvalSettings, measures: list[str]) -> Manifest:
    """The manifest of one result of the Python API (its inputs named by ``result.settings``)."""
    run = result.settings.get("run")
    qrels = result.settings.get("qrels")
    name = os.path.basename(run) if run else "run"
    return eval_manifest(
        qrels if isinstance(qrels, str) else None,
        {name: (run if isinstance(run, str) else None, result)},
        measures,
        settings,
    )
