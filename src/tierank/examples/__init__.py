"""Example files shipped with tierank (sources and licences in ``README.md`` beside this module).

=================  ===================================================================================
name               file
=================  ===================================================================================
``run``            ``figure1.run``: the tie of the paper's Figure 1 (one query, five documents)
``qrels``          ``figure1.qrels``
``askubuntu-run``  ``askubuntu-test.bm25.run.gz``: Lucene BM25 on the AskUbuntu test set (Lei et al.,
                   NAACL 2016), 200 queries x 20 candidates, real ties
``askubuntu-qrels`` ``askubuntu-test.qrels.gz``: its binary judgments
``trec-run``       ``trec_eval-results.test.gz``: trec_eval's test run (TREC topics 301-303)
``rag24-run``      ``trec_eval-results.comment.test.gz``: a real TREC RAG 2024 run (301 topics x 100)
``rag24-qrels``    ``trec_eval-qrels.comment.test.gz``: TREC RAG 2024 graded qrels (31 topics)
``rag24-mini``     ``rag24-mini/``: a BEIR-layout reranking set for ``tierank rerank --data``: 5 judged
                   TREC RAG 2024 topics x their 20 MS MARCO v2.1 candidate passages, with texts
                   (``queries.jsonl.gz``, ``corpus.jsonl.gz``, ``candidates.run.gz``, ``qrels.txt.gz``;
                   built by `tierank.examples.build_rag24_mini`)
``llmjudge-mini``  ``llmjudge-mini/``: human and 5 LLM judges' grades of 403 TREC DL 2023 pairs (the
                   LLMJudge challenge; ``human.qrels.gz``, ``judges/*.qrels.gz``, ``judges.qrels.gz``
                   with a judge column; built by `tierank.examples.build_llmjudge_mini`)
``dir``            the folder itself
=================  ===================================================================================

Examples
--------
>>> from tierank.examples import path
>>> path("askubuntu-run").name
'askubuntu-test.bm25.run.gz'
>>> import tierank
>>> agg = tierank.evaluate(path("qrels"), path("run"), ["R@3"]).aggregate()
>>> [round(float(agg[c].iloc[0]), 4) for c in ("expected", "min", "max")]
[0.7778, 0.6667, 1.0]
>>> from tierank.io.beir import load_beir
>>> mini = load_beir(path("rag24-mini"))
>>> len(mini.queries), sum(map(len, mini.candidates.values())), len(mini.docs)
(5, 100, 100)
"""

from __future__ import annotations

from pathlib import Path

from ..errors import TierankInputError

FOLDER = Path(__file__).resolve().parent

#: Example name -> file (or folder) name in `FOLDER`.
FILES = {
    "run": "figure1.run",
    "qrels": "figure1.qrels",
    "askubuntu-run": "askubuntu-test.bm25.run.gz",
    "askubuntu-qrels": "askubuntu-test.qrels.gz",
    "trec-run": "trec_eval-results.test.gz",
    "rag24-run": "trec_eval-results.comment.test.gz",
    "rag24-qrels": "trec_eval-qrels.comment.test.gz",
    "rag24-mini": "rag24-mini",
    "llmjudge-mini": "llmjudge-mini",
}

NAMES = (*FILES, "dir")


def path(name: str) -> Path:
    """The path of the shipped example ``name`` (one of `NAMES`; ``dir`` is the folder)."""
    if name == "dir":
        return FOLDER
    if name not in FILES:
        raise TierankInputError(f"unknown example file {name!r}; accepted: {', '.join(NAMES)}")
    return FOLDER / FILES[name]


__all__ = ["FILES", "FOLDER", "NAMES", "path"]
