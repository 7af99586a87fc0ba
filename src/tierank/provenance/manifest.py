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

The names here are those of three rooms: the schema ([`tierank.provenance.schema`][tierank.provenance.schema]),
the builders ([`tierank.provenance.build`][tierank.provenance.build]) and the document's YAML I/O
([`tierank.provenance.io`][tierank.provenance.io]).
"""

from __future__ import annotations

from .build import (
    SCORE_FORMAT_BYTES,
    Evaluated,
    digest,
    document,
    eval_manifest,
    input_record,
    of_result,
    platform_section,
    qrels_input,
    result_record,
    run_input,
    score_format,
    seal,
    sealed_settings,
    settings_record,
    versions,
)
from .io import Manifest
from .schema import (
    COMMAND_BLOCKS,
    DIGEST_COLUMNS,
    LIBRARIES,
    MARK,
    NUMBER_SETTINGS,
    OPTIONAL_LIBRARIES,
    SCHEMA,
    SCHEMA_VERSION,
    SCORE_FORMATS,
)

__all__ = [
    "Manifest",
    "eval_manifest",
    "of_result",
    "document",
    "digest",
    "versions",
    "platform_section",
    "settings_record",
    "score_format",
    "result_record",
    "input_record",
    "run_input",
    "qrels_input",
    "seal",
    "sealed_settings",
    "Evaluated",
    "SCHEMA",
    "SCHEMA_VERSION",
    "MARK",
    "NUMBER_SETTINGS",
    "LIBRARIES",
    "OPTIONAL_LIBRARIES",
    "COMMAND_BLOCKS",
    "DIGEST_COLUMNS",
    "SCORE_FORMATS",
    "SCORE_FORMAT_BYTES",
]
