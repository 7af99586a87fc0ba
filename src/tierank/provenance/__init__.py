"""Every number reproducible: a manifest of what made a result, and its verification.

* [`Manifest`][tierank.provenance.io.Manifest]: the inputs' SHA-256 and sizes, the versions,
  the platform, every setting that can change a number, the runs' tie profiles and the results,
  as ir_metadata-compatible YAML (`tierank eval --manifest FILE`, `EvalResult.manifest`);
* [`verify`][tierank.provenance.verify.verify]: re-read the inputs, recompute, and say what moved
  (`tierank verify MANIFEST`).
"""

from __future__ import annotations

from .build import eval_manifest
from .io import Manifest
from .schema import SCHEMA_VERSION
from .verify import Verdict, verify

__all__ = ["Manifest", "eval_manifest", "verify", "Verdict", "SCHEMA_VERSION"]
