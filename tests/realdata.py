"""The real data the default test tier reads, from files inside the repository (no ``../shared``).

:data:`DATA` is a folder laid out as the team's ``../shared/data`` (``trec_eval/``, ``askubuntu/``,
``rag24/``), made once per machine in the temporary folder from

* the package's shipped examples (``src/tierank/examples``: the AskUbuntu test pair, trec_eval's
  ``results.test`` and the TREC RAG 2024 ``qrels.comment.test`` / ``results.comment.test``), and
* ``tests/data/`` (gzipped, byte-identical to their sources; provenance in ``tests/data/README.md``):
  the rest of trec_eval's test files and its expected outputs, the AskUbuntu dev pair, and a rag24
  subset (every candidate and judgment; the passages and queries of the 31 judged topics and of the
  first two topics).

:data:`TREC_EVAL_SOURCE` is trec_eval 10's C source (``tests/vendor/trec_eval-10.0``, unmodified, NIST
notice kept), which the conformance tests build into a temporary folder.

Only ``slow`` tests may read ``../shared`` itself (fixture ``real_data``): the full rag24 corpus.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from tierank.examples import path as example
from trec_eval_build import TREC_EVAL_SOURCE

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "data"

#: the (name, qrels, run) pairs of DATA that trec_eval is checked on, relative to DATA: trec_eval's own
#: test pairs, AskUbuntu and rag24
TREC_EVAL_PAIRS = [
    ("te-results", "trec_eval/qrels.test", "trec_eval/results.test"),
    ("te-rel_level", "trec_eval/qrels.rel_level", "trec_eval/results.test"),
    ("te-302", "trec_eval/qrels-302.test", "trec_eval/results-302.test"),
    ("te-trunc", "trec_eval/qrels.test", "trec_eval/results.trunc"),
    ("te-comment", "trec_eval/qrels.comment.test", "trec_eval/results.comment.test"),
    ("askubuntu-test", "askubuntu/test.qrels", "askubuntu/test.bm25.run"),
    ("askubuntu-dev", "askubuntu/dev.qrels", "askubuntu/dev.bm25.run"),
    ("rag24", "rag24/qrels.txt", "rag24/candidates.run"),
]

#: files of DATA taken from the package's shipped examples (gzipped there)
FROM_PACKAGE = {
    "askubuntu/test.bm25.run": "askubuntu-run",
    "askubuntu/test.qrels": "askubuntu-qrels",
    "trec_eval/results.test": "trec-run",
    "trec_eval/qrels.comment.test": "rag24-qrels",
    "trec_eval/results.comment.test": "rag24-run",
}


def _sources() -> dict[str, Path]:
    """Relative name in DATA -> the file it is made from."""
    out = {rel: example(name) for rel, name in FROM_PACKAGE.items()}
    for p in sorted(SOURCE.rglob("*")):
        if p.is_file() and TREC_EVAL_SOURCE not in p.parents and p.name != "README.md":
            rel = p.relative_to(SOURCE).as_posix()
            out[rel.removesuffix(".gz")] = p
    return out


def _materialize() -> Path:
    sources = _sources()
    key = hashlib.sha256()
    for rel, src in sorted(sources.items()):
        st = src.stat()
        key.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    target = Path(tempfile.gettempdir()) / f"tierank-test-data-{key.hexdigest()[:16]}"
    if (target / ".complete").exists():
        return target
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    for rel, src in sources.items():
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".gz":
            with gzip.open(src, "rb") as fin, open(dest, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(src, dest)
    (tmp / ".complete").write_text("")
    try:
        os.rename(tmp, target)
    except OSError:  # another process (pytest-xdist, a parallel run) made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


#: the default tier's real-data folder (laid out as ../shared/data)
DATA = _materialize()
