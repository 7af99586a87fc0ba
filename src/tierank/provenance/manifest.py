"""A manifest with every result: what made each number, written as ir_metadata-compatible YAML.

The document's top-level sections are ir_metadata's PRIMAD sections (``tag``, ``platform``,
``implementation``, ``method``, ``data``; Breuer, Keller and Schaer, SIGIR 2022), with tierank's
own records beside them:

* ``tierank manifest``: the schema's version (`SCHEMA_VERSION`);
* ``platform``: the machine (``hardware``: CPU model, architecture, cores, RAM; ``operating
  system``: kernel, distribution) and ``software``: ``libraries`` (Python, tierank and the libraries
  that compute: numpy, pyarrow, scipy, and torch, transformers or vLLM where they were loaded);
* ``implementation``: ``executable`` (tierank's version and the command line);
* ``method``: ``evaluation``: the command, the measures (canonical names) and every setting that
  can change a number (`NUMBER_SETTINGS`);
* ``data``: ``qrels`` and ``runs``, each with its path (relative to the manifest's folder where
  it lies below it), SHA-256 and size; each run with its name, its own ir_metadata header (kept as
  read) and its tie profile (the narrowest float format that holds every score exactly, tie groups,
  tied share);
* ``results``: per run and measure the aggregate (oblivious, expected, min, max, std, method; with
  samples, seed and se where sampled) and a SHA-256 of the per-query values;
* ``seal``: a digest of each setting, of the inputs and of the results, so that `verify` can name
  what was edited after the manifest was written.

`tierank verify MANIFEST` ([`tierank.provenance.verify`][tierank.provenance.verify]) re-reads the
inputs, recomputes and compares.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import TierankInputError
from .inputs import file_record, ir_metadata

if TYPE_CHECKING:
    from ..results import EvalResult
    from ..settings import EvalSettings

#: the manifest schema's version (a change of meaning of any key increments it)
SCHEMA_VERSION = 1
#: the key that marks a tierank manifest (its value: the schema version)
MARK = "tierank manifest"
#: the settings that can change a number, as `tierank.EvalSettings` names them
NUMBER_SETTINGS = (
    "tie_break",
    "rel",
    "complete",
    "candidates_only",
    "unjudged",
    "judged_only",
    "max_depth",
    "samples",
    "seed",
    "exact_limit",
)
#: the libraries whose version is recorded (those loaded in the process, among the optional ones)
LIBRARIES = ("numpy", "pyarrow", "scipy", "pandas")
OPTIONAL_LIBRARIES = ("torch", "transformers", "sentence_transformers", "vllm", "onnxruntime")
#: the blocks of ``method.evaluation`` that hold a command's own settings, beside ``settings``
COMMAND_BLOCKS = ("compare", "judges", "rerank")
#: the per-query columns the results digest covers
DIGEST_COLUMNS = ("oblivious", "expected", "min", "max", "var")
#: the float formats a run's scores are tested against, narrowest first
SCORE_FORMATS = ("bf16", "fp16", "fp32")


#: every key of a manifest: (its path, with ``[]`` for a list's items and ``*`` for any name; what it
#: holds). The reference page of the documentation is generated from it, and a test checks that a
#: written manifest has no key it lacks.
SCHEMA: tuple[tuple[str, str], ...] = (
    (MARK, "the manifest schema's version (1)"),
    (
        "tag",
        "ir_metadata's tag: the run's own (its header's, else its sixth column), or a list of them",
    ),
    ("platform.hardware.cpu.model", "the CPU's model name"),
    ("platform.hardware.cpu.architecture", "the machine's architecture (x86_64, arm64, ...)"),
    ("platform.hardware.cpu.number of cores", "the cores the operating system reports"),
    ("platform.hardware.ram", "the memory installed"),
    ("platform.operating system.kernel", "the kernel (system and release)"),
    ("platform.operating system.distribution", "the distribution, where the system names one"),
    (
        "platform.software.libraries.*",
        "the versions of Python, tierank, numpy, pyarrow, scipy, pandas, and of torch, transformers, "
        "sentence-transformers, vLLM and onnxruntime where the process loaded them",
    ),
    ("implementation.executable.name", "tierank"),
    ("implementation.executable.version", "tierank's version"),
    (
        "implementation.executable.command",
        "the command line, quoted as a shell reads it (null from Python)",
    ),
    (
        "method.evaluation.command",
        "the command whose numbers these are (eval, compare, judges, rerank)",
    ),
    (
        "method.evaluation.measures[]",
        "every measure evaluated, by canonical name (every parameter written out)",
    ),
    (
        "method.evaluation.settings.*",
        "every setting that can change a number: "
        + ", ".join(NUMBER_SETTINGS)
        + " (tierank.EvalSettings)",
    ),
    ("method.evaluation.docs_in_collection", "trec_eval's -N, where given"),
    (
        "method.evaluation.compare.*",
        "compare: every field of tierank.analysis.compare.CompareSettings that can change a number "
        "(alpha, band, correction, test, ci, level, seed, resamples, permutations, leaderboard, "
        "tie_samples)",
    ),
    (
        "data.qrels.path",
        "the qrels' path, relative to the manifest's folder where it lies below it (null: given in memory)",
    ),
    (
        "data.qrels.sha256",
        "the SHA-256 of the file's bytes as stored (a .gz file's compressed bytes)",
    ),
    ("data.qrels.size", "its size in bytes"),
    (
        "data.qrels.files[]",
        "a folder's files, each with path, sha256 and size (the folder's sha256 covers them)",
    ),
    (
        "data.judges[].path, sha256, size",
        "judges: each judge's file (path relative to the manifest's folder, SHA-256, size); the "
        "reference is data.qrels",
    ),
    ("data.candidates.*", "rerank: the first-stage run reranked (path, sha256, size)"),
    (
        "data.collection.*",
        "rerank: the BEIR-layout data folder (path, sha256, size, files: each file's record)",
    ),
    ("data.collection.files[].*", "rerank: a data file's path (in the folder), sha256 and size"),
    (
        "data.models[].*",
        "rerank: each model's folder or file (path, sha256, size, files; null sha256: a name "
        "that is not a local path)",
    ),
    ("data.models[].files[].*", "rerank: a model file's path (in the folder), sha256 and size"),
    ("data.runs[].name", "the run's name in the results (its shortest distinguishing path suffix)"),
    ("data.runs[].path", "as data.qrels.path"),
    ("data.runs[].sha256", "as data.qrels.sha256"),
    ("data.runs[].size", "as data.qrels.size"),
    ("data.runs[].files[]", "as data.qrels.files"),
    (
        "data.runs[].ir_metadata",
        "the run file's own ir_metadata header (# ir_metadata.start ... end), as read",
    ),
    ("data.runs[].ties.tie groups", "groups of two or more documents of a query sharing a score"),
    ("data.runs[].ties.tied documents", "documents in those groups"),
    ("data.runs[].ties.tied share", "tied documents / documents"),
    ("data.runs[].ties.largest group", "the largest group (1: nothing ties)"),
    ("data.runs[].ties.queries with ties", "queries with at least one tie group"),
    (
        "data.runs[].ties.score format",
        "the narrowest of bf16, fp16, fp32 that holds every score exactly, else fp64 (null: not inferred)",
    ),
    ("data.runs[].ties.score format note", "why the score format was not inferred"),
    ("results[].run", "the run's name"),
    ("results[].measures[].measure", "the measure's canonical name"),
    (
        "results[].measures[].oblivious, expected, min, max, range, bias, std",
        "the aggregate statistics, as the jsonl records hold them",
    ),
    (
        "results[].measures[].method",
        "exact, or how the statistics were estimated (then samples, seed and se)",
    ),
    (
        "results[].measures[].samples, seed, se",
        "a sampled measure's samples, seed and standard error",
    ),
    ("results[].measures[].queries", "the queries evaluated"),
    (
        "results[].measures[].per_query_sha256",
        "SHA-256 of the query ids and the per-query oblivious, expected, min, max and variance",
    ),
    ("results.measure", "compare: the measure compared"),
    ("results.queries", "compare: the queries compared (those common to every system)"),
    ("results.dropped_queries", "compare: the queries left out (not in every system)"),
    (
        "results.systems[].name, oblivious, expected, min, max, std, ci_low, ci_high, rank, "
        "rank_oblivious, rank_low, rank_high, group",
        "compare: each system's aggregate statistics, confidence interval and ranks (as in "
        "`tierank compare -f json`)",
    ),
    (
        "results.pairs[].a, b, diff_expected, diff_oblivious, p, p_test, p_adjusted, significant, "
        "diff_ci_low, diff_ci_high, p_a_above, test_used, method, samples, seed, se",
        "compare: each pair's differences, p-values (the test's own, the floored and the adjusted), "
        "interval of the difference, P(A>B), and how p was found (with samples, seed and se where "
        "sampled)",
    ),
    (
        "method.evaluation.judges.*",
        "judges: its options (judge_column, scale, out_of_scale, "
        "missing, rel, bootstrap, confidence, seed)",
    ),
    (
        "results.agreement[].*",
        "judges: each judge's pooled agreement with the reference (n_pairs, n_queries, Cohen's "
        "kappa, Krippendorff's alpha, binarised agreement, their bootstrap intervals, the "
        "confusion matrix), as `-f json` writes it",
    ),
    (
        "results.agreement[].confusion.*",
        "judges: the confusion matrix (its grades, rows the reference's, columns the judge's, and "
        "the counts)",
    ),
    (
        "results.orderings[].*",
        "judges with --runs: how the system ordering moves under each judge (Kendall's tau-b, "
        "tau-AP, the largest rank change, the significant pairs that flip)",
    ),
    (
        "results.systems[].judge, run, measure, mean, queries",
        "judges with --runs: each system's mean under the reference and under each judge",
    ),
    (
        "method.evaluation.rerank.*",
        "rerank: model, family, source, variants, batch_size, device, backend, queries, "
        "candidates (counts) and the run-to-run variance's batch_sizes, orders, padding_sides",
    ),
    ("method.evaluation.rerank.scorers.*", "rerank: each scorer (a model group) by its name"),
    (
        "method.evaluation.rerank.scorers.*.*",
        "rerank: each scorer's scorer, model_dtype, similarity, batch_size, device, backend",
    ),
    (
        "results.rows[].*",
        "rerank: the table's rows (table.json's) without their timings",
    ),
    (
        "results.variance.batch_sizes, orders, padding_sides, repeats, settings",
        "rerank with --batch-sizes, --orders or --padding-sides: the settings each variant was "
        "scored under again (as table.json's variance)",
    ),
    ("results.variance.variants.*", "rerank: each variant's run-to-run variance"),
    (
        "results.variance.variants.*.changed_share, measures",
        "the share of candidates whose score changed under another setting; the measures",
    ),
    ("results.variance.variants.*.measures.*", "each measure's run-to-run variance"),
    (
        "results.variance.variants.*.measures.*.expected, tie_range",
        "E[M] and the tie range (max - min over tie orderings) under each setting",
    ),
    (
        "results.variance.variants.*.measures.*.expected.*",
        "E[M] under the setting named",
    ),
    (
        "results.variance.variants.*.measures.*.tie_range.*",
        "the tie range under the setting named",
    ),
    (
        "results.variance.variants.*.measures.*.spread, larger",
        "the spread of E[M] across the settings, and which moves the number more: ties (the "
        "widest tie range is at least the spread) or settings",
    ),
    (
        "results.variance.variants.*.measures.*.spreads",
        "the spread of E[M] per source of change (over the table's setting and that source's)",
    ),
    (
        "results.variance.variants.*.measures.*.spreads.*",
        "batch sizes, order, padding or repeat: that source's spread",
    ),
    (
        "results.variance.variants.*.measures.*.largest",
        "which of ties (the widest tie range) and the sources' spreads moves the number most",
    ),
    (
        "seal.settings.*",
        "a digest of each setting (verify names the setting edited); a command's own block's as "
        "BLOCK/KEY",
    ),
    ("seal.measures", "a digest of the measures"),
    ("seal.inputs", "a digest of the inputs' SHA-256"),
    ("seal.results", "a digest of the results"),
)


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


def result_record(result: EvalResult) -> list[dict[str, Any]]:
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


@dataclass(frozen=True)
class Manifest(Mapping[str, Any]):
    """A manifest document (a read-only mapping of its sections), written with `to_yaml`.

    Examples
    --------
    >>> import tierank
    >>> from tierank import examples
    >>> res = tierank.evaluate(examples.path("qrels"), examples.path("run"), ["nDCG@3", "AP"])
    >>> man = res.manifest
    >>> man["method"]["evaluation"]["measures"], man["data"]["runs"][0]["ties"]["tied share"]
    (['nDCG@3', 'AP'], 0.6)
    >>> [round(r["expected"], 4) for r in man["results"][0]["measures"]]
    [0.8231, 0.9074]
    """

    document: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.document[key]

    def __iter__(self):
        return iter(self.document)

    def __len__(self) -> int:
        return len(self.document)

    def to_yaml(self) -> str:
        """The manifest as YAML (block style, keys in the document's order), with a header comment."""
        import yaml

        head = (
            "# tierank manifest: what made these numbers (ir_metadata-compatible).\n"
            "# Check them with: tierank verify THIS_FILE\n"
        )
        body = yaml.safe_dump(
            self.document, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
        )
        return head + body

    def write(self, path: str | os.PathLike, protect: tuple = ()) -> None:
        """Write the manifest to ``path`` atomically."""
        from ..io.writers import write_atomic

        write_atomic(path, self.to_yaml(), protect=protect)

    @classmethod
    def read(cls, path: str | os.PathLike) -> Manifest:
        """Read a manifest; a file that is not one is an error naming the file (and the line)."""
        import yaml

        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            raise TierankInputError(f"{p}: cannot be read ({e.strerror or e})") from None
        except UnicodeDecodeError:
            raise TierankInputError(f"{p}: not a manifest (not UTF-8 text)") from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            raise TierankInputError(f"{p}: {where}not YAML ({getattr(e, 'problem', e)})") from None
        if not isinstance(doc, dict) or MARK not in doc:
            raise TierankInputError(f"{p}: not a tierank manifest (no '{MARK}' key)")
        if doc[MARK] != SCHEMA_VERSION:
            raise TierankInputError(
                f"{p}: manifest schema {doc[MARK]!r}; this tierank reads schema {SCHEMA_VERSION}"
            )
        for key in ("method", "data", "results", "seal"):
            if not isinstance(doc.get(key), (dict, list)):
                raise TierankInputError(f"{p}: manifest without its '{key}' section")
        return cls(doc)


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
            [data["qrels"]["sha256"], *[(r["name"], r["sha256"]) for r in data["runs"]]]
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
    runs: Mapping[str, tuple[str | os.PathLike | None, EvalResult]],
    measures: list[str],
    settings: EvalSettings,
    *,
    command: str | None = None,
    base: str | os.PathLike | None = None,
    docs_in_collection: int | None = None,
    scores: Mapping[str, Any] | None = None,
    reread: bool = True,
) -> Manifest:
    """The manifest of an evaluation: ``runs`` maps each run's name to (its file, its result);
    ``base``: the folder paths are written relative to (the manifest's own); ``scores``: each
    run's scores, for its score format; where neither they nor the result give it, a run file up
    to `SCORE_FORMAT_BYTES` is read again for it when ``reread``."""
    where = None if base is None else os.fspath(base)
    run_records = []
    tags = []
    for name, (path, result) in runs.items():
        rec, tag = run_input(name, path, where)
        tags.append(tag)
        ties = dict(result.ties.to_dict())
        profile: dict[str, Any] = {
            "tie groups": ties["groups"],
            "tied documents": ties["tied_docs"],
            "tied share": ties["share"],
            "largest group": ties["largest"],
            "queries with ties": ties["queries_with_ties"],
        }
        fmt = result.score_format or _score_format_of(name, path if reread else None, scores)
        profile["score format"] = fmt
        if fmt is None:
            profile["score format note"] = (
                "not inferred: the run was streamed or evaluated with others (one run in memory is)"
                if not reread
                else f"not inferred: only run files up to {SCORE_FORMAT_BYTES // 2**20} MB are read again for it"
            )
        rec["ties"] = profile
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
    data = {"qrels": qrels_input(qrels, where), "runs": run_records}
    return document("eval", evaluation, data, results, tags, command)


def of_result(result: EvalResult, settings: EvalSettings, measures: list[str]) -> Manifest:
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
