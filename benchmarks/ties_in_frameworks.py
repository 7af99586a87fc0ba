"""One tied example, evaluated by the frameworks people already use, as they are, and by tierank.

One query; five documents ``d2, d1, d3, d4, d5`` (in that input order) all scored 0.5; ``d2`` is
the only relevant one.  Every ordering of the five is equally justified by the scores, so RR@10
(= AP here) can be anything from 1/5 to 1 and nDCG@10 anything from 1/log2(6) to 1.  Each
framework silently picks one ordering, and each picks differently:

* ``pytrec_eval`` (and so MTEB, and ir_measures' pytrec_eval provider): trec_eval's tie-break,
  docno descending (``d5 d4 d3 d2 d1``), whatever the input order;
* ir_measures' default chain serves RR@10 from its ``msmarco`` provider, which breaks ties by
  docno *ascending* (``d1 d2 ...``), and nDCG@10 and AP from pytrec_eval: one call, two orderings
  (RR@10 and AP differ although with one relevant document they are the same measure);
* ``ranx``: the input order with a ``ranx.Run``, the *reversed* input order with a plain dict;
* sentence-transformers' ``CrossEncoderRerankingEvaluator``: ``np.argsort(scores)[::-1]``, the
  reversed input order, for MRR; ``sklearn.metrics.ndcg_score`` (which averages over ties) for
  nDCG; ``sklearn.metrics.average_precision_score`` (one threshold: precision of the whole tie)
  for AP; with ``positive``/``negative`` samples the positives go first, so MRR is the worst case;
* sentence-transformers' ``InformationRetrievalEvaluator``: corpus id ascending;
* tierank: the exact [min, E, max] over all 5! orderings (and the oblivious value under the
  tie-break asked for, trec_eval's by default).

Run it (prints a Markdown table to stdout; a framework that is not installed says so in its
cells)::

    python benchmarks/ties_in_frameworks.py
    python benchmarks/ties_in_frameworks.py --relevant d3   # the middle docno: up and down agree

Versions measured for the README: pytrec_eval-terrier 0.5.11, ranx 0.3.21, ir_measures 0.4.3,
sentence-transformers 6.2.0, mteb 2.26.24.  The frameworks are called on in-memory objects; no
model or data set is loaded (the sentence-transformers evaluators get a stand-in model whose
scores are the tied ones).
"""

from __future__ import annotations

import importlib.metadata
import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

#: the columns: tierank's measure names, as ir_measures writes them
MEASURES = ("RR@10", "nDCG@10", "AP")


@dataclass(frozen=True)
class Example:
    """One query: ``docs`` in input order, each scored ``score``; ``relevant`` the relevant docids."""

    qid: str = "q1"
    docs: tuple[str, ...] = ("d2", "d1", "d3", "d4", "d5")
    score: float = 0.5
    relevant: tuple[str, ...] = ("d2",)

    def run(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``, the dict in input order."""
        return {self.qid: {d: self.score for d in self.docs}}

    def qrels(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: 1}}`` for the relevant documents, 0 for the others."""
        return {self.qid: {d: int(d in self.relevant) for d in self.docs}}


EXAMPLE = Example()


@dataclass(frozen=True)
class Row:
    """One line of the table: who computed it, how it was called, a cell per measure (a float, or
    a string such as ``"not installed"``), and how it orders tied documents."""

    tool: str
    how: str
    cells: dict[str, float | str]
    ties: str = ""


class _NotInstalled(Exception):
    pass


def _need(module: str):
    """Import ``module`` or raise _NotInstalled (its cells then read "not installed")."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _NotInstalled(module) from exc


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --- the frameworks, one function each, as they are ---------------------------------------------


def pytrec_eval_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """pytrec_eval.RelevanceEvaluator with recip_rank, ndcg_cut.10, map."""
    pytrec_eval = _need("pytrec_eval")
    res = pytrec_eval.RelevanceEvaluator(ex.qrels(), {"recip_rank", "ndcg_cut.10", "map"}).evaluate(
        ex.run()
    )
    q = res[ex.qid]
    return {"RR@10": q["recip_rank"], "nDCG@10": q["ndcg_cut_10"], "AP": q["map"]}


def _ranx(ex: Example, wrap: bool) -> dict[str, float]:
    ranx = _need("ranx")
    qrels, run = ex.qrels(), ex.run()
    if wrap:
        qrels, run = ranx.Qrels(qrels), ranx.Run(run)
    res = ranx.evaluate(qrels, run, ["mrr@10", "ndcg@10", "map"])
    return {
        "RR@10": float(res["mrr@10"]),
        "nDCG@10": float(res["ndcg@10"]),
        "AP": float(res["map"]),
    }


def ranx_run_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """ranx.evaluate(ranx.Qrels(...), ranx.Run(...), ["mrr@10", "ndcg@10", "map"])."""
    return _ranx(ex, wrap=True)


def ranx_dict_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """ranx.evaluate(qrels_dict, run_dict, ...): the same call on plain dicts."""
    return _ranx(ex, wrap=False)


def ir_measures_values(ex: Example = EXAMPLE) -> tuple[dict[str, float], dict[str, str]]:
    """ir_measures.calc_aggregate with its default provider chain (tierank's provider not
    registered); also returns the provider that served each measure."""
    irm = _need("ir_measures")
    chain = irm.DefaultPipeline.providers
    if any(
        getattr(p, "NAME", "") == "tierank" or type(p).__module__.startswith("tierank")
        for p in chain
    ):
        raise RuntimeError(
            "tierank's provider is registered in ir_measures.DefaultPipeline; "
            "call tierank.integrations.ir_measures.unregister() first"
        )
    measures = {m: irm.parse_measure(m) for m in MEASURES}
    agg = irm.calc_aggregate(list(measures.values()), ex.qrels(), ex.run())
    served = {}
    for name, m in measures.items():
        served[name] = next(
            (
                getattr(p, "NAME", type(p).__name__)
                for p in chain
                if p.supports(m) and p.is_available()
            ),
            "?",
        )
    return {name: float(agg[m]) for name, m in measures.items()}, served


class _ModelCard:
    def set_evaluation_metrics(self, *args, **kwargs) -> None:
        pass


class TiedCrossEncoder:
    """Stand-in for a ``CrossEncoder``: ``predict`` (what the evaluator calls, once, on all
    [query, document] pairs) returns the same score for every pair."""

    model_card_data = _ModelCard()

    def __init__(self, score: float):
        self.score = score
        self.calls = []

    def predict(self, pairs, **kwargs):
        import numpy as np

        self.calls.append([tuple(p) for p in pairs])
        return np.full(len(pairs), self.score, dtype=np.float32)


class TiedBiEncoder:
    """Stand-in for a ``SentenceTransformer``: every query and document gets the same embedding,
    so every cosine similarity is the same (exactly 1.0)."""

    model_card_data = _ModelCard()
    similarity_fn_name = "cosine"

    def similarity(self, a, b):
        from sentence_transformers import util

        return util.cos_sim(a, b)

    def _embed(self, sentences, **kwargs):
        import torch

        return torch.ones((len(sentences), 4))

    encode_query = encode_document = encode = _embed


def _st_reranking(ex: Example, samples: list[dict], **kwargs) -> dict[str, float]:
    _need("sentence_transformers")
    from sentence_transformers.cross_encoder.evaluation import CrossEncoderRerankingEvaluator

    ev = CrossEncoderRerankingEvaluator(samples, at_k=10, **kwargs)
    out = ev(TiedCrossEncoder(ex.score))
    return {
        "RR@10": float(out["mrr@10"]),
        "nDCG@10": float(out["ndcg@10"]),
        "AP": float(out["map"]),
    }


def st_reranking_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """CrossEncoderRerankingEvaluator with ``positive``/``negative`` samples (positives go first)."""
    pos = [d for d in ex.docs if d in ex.relevant]
    neg = [d for d in ex.docs if d not in ex.relevant]
    return _st_reranking(ex, [{"query": ex.qid, "positive": pos, "negative": neg}])


def st_reranking_documents_values(
    ex: Example = EXAMPLE, relevant_last: bool = False
) -> dict[str, float]:
    """CrossEncoderRerankingEvaluator with ``documents`` in the input order (or with the relevant
    ones moved last) and ``always_rerank_positives=False``."""
    docs = list(ex.docs)
    if relevant_last:
        docs = [d for d in docs if d not in ex.relevant] + [d for d in docs if d in ex.relevant]
    pos = [d for d in ex.docs if d in ex.relevant]
    return _st_reranking(
        ex, [{"query": ex.qid, "positive": pos, "documents": docs}], always_rerank_positives=False
    )


def st_ir_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """InformationRetrievalEvaluator (bi-encoder) with a model whose similarities all tie."""
    _need("sentence_transformers")
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    ev = InformationRetrievalEvaluator(
        {ex.qid: "query"},
        {d: f"text of {d}" for d in ex.docs},
        {ex.qid: set(ex.relevant)},
        mrr_at_k=[10],
        ndcg_at_k=[10],
        map_at_k=[10],
        accuracy_at_k=[1],
        precision_recall_at_k=[1],
    )
    out = ev(TiedBiEncoder())
    return {
        "RR@10": out["cosine_mrr@10"],
        "nDCG@10": out["cosine_ndcg@10"],
        "AP": out["cosine_map@10"],
    }


def mteb_values(ex: Example = EXAMPLE) -> dict[str, float]:
    """MTEB's retrieval scoring of saved results ``{qid: {docid: score}}``:
    ``mteb._evaluators.retrieval_metrics.calculate_retrieval_scores`` (NDCG@10, MAP@10, MRR@10;
    it rounds the NDCG and MAP means to 5 decimals)."""
    _need("mteb")
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores

    res = calculate_retrieval_scores(ex.run(), ex.qrels(), [10])
    return {
        "RR@10": float(res.mrr["MRR@10"]),
        "nDCG@10": float(res.ndcg["NDCG@10"]),
        "AP": float(res.map["MAP@10"]),
    }


# --- tierank ---------------------------------------------------------------------------------------


def tierank_stats(
    ex: Example = EXAMPLE, tie_break: str = "trec_eval"
) -> dict[str, dict[str, float]]:
    """``{measure: {"oblivious", "min", "expected", "max"}}`` from :func:`tierank.evaluate`."""
    import tierank

    agg = tierank.evaluate(ex.qrels(), ex.run(), list(MEASURES), tie_break=tie_break).aggregate()
    out = {}
    for _, r in agg.iterrows():
        out[str(r["measure"])] = {k: float(r[k]) for k in ("oblivious", "min", "expected", "max")}
    return out


#: (tool, how it is called, how it orders the tie, function) for every framework row, in table order;
#: the tie orders are checked by tests/benchmarks_/test_ties_in_frameworks.py
FRAMEWORKS: tuple[tuple[str, str, str, Callable[[Example], dict[str, float]] | None], ...] = (
    (
        "pytrec_eval",
        "`RelevanceEvaluator(qrels, {recip_rank, ndcg_cut.10, map})`",
        "docno descending",
        pytrec_eval_values,
    ),
    ("ranx", "`evaluate(Qrels(qrels), Run(run), ...)`", "input order", ranx_run_values),
    ("ranx", "`evaluate(qrels, run, ...)` on dicts", "input order reversed", ranx_dict_values),
    (
        "ir_measures",
        "`calc_aggregate([RR@10, nDCG@10, AP], qrels, run)`",
        "RR@10: docno ascending; nDCG@10, AP: docno descending",
        None,
    ),  # the function is set in rows()
    (
        "sentence-transformers",
        "`CrossEncoderRerankingEvaluator`, `positive`/`negative` samples",
        "MRR: positives first, then reversed; nDCG: averaged over the tie; AP: the tie as one threshold",
        st_reranking_values,
    ),
    (
        "sentence-transformers",
        "`CrossEncoderRerankingEvaluator`, `documents` in input order",
        "MRR: input order reversed (nDCG, AP as above)",
        st_reranking_documents_values,
    ),
    (
        "sentence-transformers",
        "`CrossEncoderRerankingEvaluator`, `documents`, relevant listed last",
        "MRR: input order reversed (nDCG, AP as above)",
        lambda ex: st_reranking_documents_values(ex, relevant_last=True),
    ),
    (
        "sentence-transformers",
        "`InformationRetrievalEvaluator` (MRR/nDCG/MAP@10)",
        "corpus id ascending",
        st_ir_values,
    ),
    (
        "MTEB",
        "`calculate_retrieval_scores(results, qrels, [10])` (MRR/NDCG/MAP@10)",
        "docno descending",
        mteb_values,
    ),
)

_DISTS = {
    "pytrec_eval": "pytrec_eval-terrier",
    "ranx": "ranx",
    "ir_measures": "ir_measures",
    "sentence-transformers": "sentence-transformers",
    "MTEB": "mteb",
    "tierank": "tierank",
}


def _call(fn, ex: Example) -> dict[str, float | str]:
    """The framework's values, or the same note in every cell when it cannot run."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dict(fn(ex))
    except (_NotInstalled, ImportError):  # the package, or one it needs (mteb needs pytrec_eval)
        return {m: "not installed" for m in MEASURES}
    except Exception as exc:  # a framework that changed its API: say so in the cells, go on
        msg = f"error: {type(exc).__name__}"
        print(f"{fn.__name__ if hasattr(fn, '__name__') else fn}: {exc!r}", file=sys.stderr)
        return {m: msg for m in MEASURES}


def rows(ex: Example = EXAMPLE) -> list[Row]:
    """Every framework's row (tool, how called, cells), each call isolated from the others."""
    out = []
    for tool, how, ties, fn in FRAMEWORKS:
        if tool == "ir_measures":
            served: dict[str, str] = {}

            def fn(e, served=served):  # noqa: E306
                values, providers = ir_measures_values(e)
                served.update(providers)
                return values

            cells = _call(fn, ex)
            if served:
                by = {}
                for m, p in served.items():
                    by.setdefault(p, []).append(m)
                providers = "; ".join(f"{p} for {', '.join(ms)}" for p, ms in by.items())
                how = f"{how} (default providers: {providers})"
        else:
            cells = _call(fn, ex)
        out.append(Row(f"{tool} {_version(_DISTS[tool])}", how, cells, ties))
    return out


def _fmt(x) -> str:
    return x if isinstance(x, str) else f"{x:.4f}"


def table(ex: Example = EXAMPLE, framework_rows: list[Row] | None = None) -> str:
    """The Markdown table: one row per framework call (``framework_rows``, by default :func:`rows` of ``ex``),
    then tierank's oblivious value and its exact ``[min, E, max]`` over all orderings of the tie."""
    tr = tierank_stats(ex)
    if framework_rows is None:
        framework_rows = rows(ex)
    head = "| tool | how it is called | tie order | " + " | ".join(MEASURES) + " |"
    lines = [head, "|" + "---|" * (len(MEASURES) + 3)]
    for r in framework_rows:
        lines.append(
            f"| {r.tool} | {r.how} | {r.ties} | "
            + " | ".join(_fmt(r.cells[m]) for m in MEASURES)
            + " |"
        )
    ver = _version("tierank")
    lines.append(
        f"| tierank {ver} | `evaluate(qrels, run, ...)`, oblivious value | docno descending "
        '(`tie_break="trec_eval"`) | '
        + " | ".join(_fmt(tr[m]["oblivious"]) for m in MEASURES)
        + " |"
    )
    lines.append(
        f"| **tierank {ver}** | `evaluate(qrels, run, ...)` | **all {math.factorial(len(ex.docs))} orderings: "
        "exact [min, E, max]** | "
        + " | ".join(
            f"**[{tr[m]['min']:.4f}, {tr[m]['expected']:.4f}, {tr[m]['max']:.4f}]**"
            for m in MEASURES
        )
        + " |"
    )
    return "\n".join(lines) + "\n"


def example(relevant: str = "d2", n: int = 5) -> Example:
    """Documents ``d1..dn`` tied, ``relevant`` the relevant one and listed first in the input."""
    docs = [f"d{i}" for i in range(1, n + 1)]
    if relevant not in docs:
        raise SystemExit(f"--relevant must be one of {', '.join(docs)}, got {relevant!r}")
    return Example(docs=(relevant, *(d for d in docs if d != relevant)), relevant=(relevant,))


def main(argv=None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--relevant", default="d2", help="the relevant document, listed first (default d2)"
    )
    ap.add_argument(
        "--docs", type=int, default=5, help="number of tied documents d1..dN (default 5, at most 8)"
    )
    args = ap.parse_args(argv)
    if not 1 <= args.docs <= 8:
        raise SystemExit("--docs must be between 1 and 8")
    ex = example(args.relevant, args.docs)
    print(
        f"One query, documents {', '.join(ex.docs)} (input order) all scored {ex.score}; "
        f"relevant: {', '.join(ex.relevant)}.\n"
    )
    sys.stdout.write(table(ex))


if __name__ == "__main__":
    main()
