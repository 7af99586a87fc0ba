"""sentence-transformers' InformationRetrievalEvaluator against tierank's tie-aware one, side by side.

One run, the same bf16 embeddings (a stand-in model returning fixed vectors, so encoding costs
nothing and the evaluators' own work is timed): ``--queries`` x ``--corpus`` dot-product scores in
bf16 (ties as a bf16 bi-encoder makes them), one relevant document per query, the stock metric set
(accuracy@1,3,5,10, precision/recall@1,3,5,10, MRR@10, nDCG@10, MAP@100).  Rows: stock (one value
per key, ties by corpus id), ``TieAwareInformationRetrievalEvaluator`` (expected, min, max per key
from ``tierank.tensor``).  Best of ``--repeats`` after one warm-up; on CUDA with ``--device cuda``.

    python benchmarks/bench_st_evaluator.py --queries 1000 --corpus 100000
"""

from __future__ import annotations

import argparse
import gc
import time
import types
from typing import Any

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--corpus", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()

    import torch
    from sentence_transformers.sentence_transformer.evaluation import (
        InformationRetrievalEvaluator,
    )

    from tierank.integrations.sentence_transformers import TieAwareInformationRetrievalEvaluator

    if args.threads:
        torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    qv = torch.randn(args.queries, args.dim, generator=g)
    dv = torch.randn(args.corpus, args.dim, generator=g)
    step = args.corpus // args.queries
    dv[:: max(step, 1)][: args.queries] = qv + 1.2 * torch.randn(
        args.queries, args.dim, generator=g
    )
    qv, dv = qv.to(torch.bfloat16).to(args.device), dv.to(torch.bfloat16).to(args.device)
    queries: dict[str, Any] = {f"q{i}": f"q {i}" for i in range(args.queries)}
    corpus: dict[str, Any] = {f"d{j:07d}": f"d {j}" for j in range(args.corpus)}
    relevant = {f"q{i}": {f"d{i * max(step, 1):07d}"} for i in range(args.queries)}

    class Model:  # fixed bf16 vectors: "q i" / "d j" -> row i / j
        model_card_data = types.SimpleNamespace(set_evaluation_metrics=lambda *a, **k: None)
        similarity_fn_name = "dot"

        def encode_query(self, texts, **kw):
            rows = torch.tensor([int(t.split()[1]) for t in texts], device=args.device)
            return (qv if texts[0][0] == "q" else dv)[rows]

        encode_document = encode_query

        def similarity(self, a, b):
            return a @ b.T

    def timed(ev):
        ev(Model())
        best = np.inf
        for _ in range(args.repeats):
            gc.collect()
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            t = time.perf_counter()
            out = ev(Model())
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
        return best, out

    t_s, s = timed(InformationRetrievalEvaluator(queries, corpus, relevant, write_csv=False))
    t_o, o = timed(
        TieAwareInformationRetrievalEvaluator(queries, corpus, relevant, write_csv=False)
    )
    print(
        f"{args.queries:,} queries x {args.corpus:,} documents, bf16, {args.device}, "
        f"torch threads {torch.get_num_threads()}"
    )
    print("| evaluator | seconds | x tie-aware |\n|---|---:|---:|")
    print(f"| stock InformationRetrievalEvaluator | {t_s:.3f} | {t_s / t_o:.2f} |")
    print(f"| TieAwareInformationRetrievalEvaluator (E, min, max) | {t_o:.3f} | 1.00 |")
    print(
        f"tied share {o['dot_tied_share']:.3f}; nDCG@10 stock {s['dot_ndcg@10']:.4f}, "
        f"expected {o['dot_ndcg@10']:.4f} in [{o['dot_ndcg@10_min']:.4f}, {o['dot_ndcg@10_max']:.4f}]"
    )


if __name__ == "__main__":
    main()
