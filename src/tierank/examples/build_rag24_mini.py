"""Build the shipped ``rag24-mini`` reranking set from the full ``rag24`` set (deterministic).

``rag24-mini`` (``tierank example rag24-mini``) is a BEIR-layout folder that
``tierank rerank --data`` reads from any fresh clone: the first ``TOPICS``
judged TREC RAG 2024 topics (judged topic ids sorted as strings) of
``../shared/data/rag24`` with all of their first-stage candidates (20 each),

- ``queries.jsonl.gz``: those topics' lines of ``queries.jsonl``,
- ``corpus.jsonl.gz``: the lines of ``corpus.jsonl`` of exactly their candidates,
- ``candidates.run.gz``: their lines of ``candidates.run``,
- ``qrels.txt.gz``: ALL their judgments in ``qrels.txt`` (judged documents
  outside the 20 candidates included, so that nDCG's ideal ranking and the
  number of relevant documents are those of the full set),

each line byte for byte as in the source file and in the source's order,
gzip-compressed at level 9 with no file name and time stamp 0.  Rebuild with::

    python -m tierank.examples.build_rag24_mini ../shared/data/rag24

(``--out DIR`` writes elsewhere; the default is the shipped folder).  Sources and
licences: ``README.md`` beside this module.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

TOPICS = 5
NAME = "rag24-mini"
OUT = Path(__file__).resolve().parent / NAME
FILES = ("queries.jsonl", "corpus.jsonl", "candidates.run", "qrels.txt")


def select(source: Path, topics: int = TOPICS) -> dict[str, bytes]:
    """The mini set's files (uncompressed bytes, by file name) cut from the BEIR folder ``source``."""
    qrels = (source / "qrels.txt").read_bytes().splitlines(keepends=True)
    judged = sorted({line.split()[0].decode() for line in qrels if line.strip()})
    keep = set(judged[:topics])
    if len(keep) < topics:
        raise SystemExit(f"{source}: only {len(keep)} judged topics, {topics} asked for")
    run = [
        line
        for line in (source / "candidates.run").read_bytes().splitlines(keepends=True)
        if line.strip() and line.split()[0].decode() in keep
    ]
    docs = {line.split()[2].decode() for line in run}
    queries = [
        line
        for line in (source / "queries.jsonl").read_bytes().splitlines(keepends=True)
        if line.strip() and json.loads(line)["_id"] in keep
    ]
    corpus = [
        line
        for line in (source / "corpus.jsonl").read_bytes().splitlines(keepends=True)
        if line.strip() and json.loads(line)["_id"] in docs
    ]
    if len(queries) != len(keep) or len(corpus) != len(docs):
        raise SystemExit(
            f"{source}: {len(keep) - len(queries)} topics lack a text, "
            f"{len(docs) - len(corpus)} candidates lack a passage"
        )
    return {
        "queries.jsonl": b"".join(queries),
        "corpus.jsonl": b"".join(corpus),
        "candidates.run": b"".join(run),
        "qrels.txt": b"".join(
            line for line in qrels if line.strip() and line.split()[0].decode() in keep
        ),
    }


def build(source: Path, out: Path = OUT, topics: int = TOPICS) -> list[Path]:
    """Write the mini set's ``.gz`` files into ``out``; the paths written."""
    from tierank.io.writers import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in select(source, topics).items():
        target = out / f"{name}.gz"
        write_atomic(
            target, gzip.compress(data, compresslevel=9, mtime=0)
        )  # a killed build leaves the old file
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "source", type=Path, help="the full BEIR-layout rag24 folder (../shared/data/rag24)"
    )
    ap.add_argument(
        "--out", type=Path, default=OUT, help=f"where to write (default: the shipped {NAME}/)"
    )
    ap.add_argument(
        "--topics", type=int, default=TOPICS, help=f"how many judged topics (default {TOPICS})"
    )
    args = ap.parse_args(argv)
    for p in build(args.source, args.out, args.topics):
        print(f"{p}\t{p.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
