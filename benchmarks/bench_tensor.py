"""tierank.tensor against torchmetrics and tierank.evaluate on the same tensors, side by side in one run.

CPU mode (always): Q queries x C candidates (default 10,000 x 100), bf16-rounded scores (ties as a
bf16 reranker makes them), graded labels 0..3.  Rows:

* ``tierank.tensor`` nDCG@10 + RR@10 + AP + R@100, every statistic (oblivious, expected, min, max,
  std), on torch CPU float32 tensors, and on NumPy float64 arrays;
* ``torchmetrics`` RetrievalNormalizedDCG(top_k=10) alone (one value: it averages tied gains), on the same
  torch tensors in the flat preds/target/indexes form it takes;
* ``tierank.evaluate`` on the same data written as a run and qrels (pandas DataFrames built before
  the clock starts), the same four measures.

GPU mode (when CUDA is available, or ``--device cuda``): ``--gpu-queries`` (default 1,000,000) x C on
the GPU, tierank.tensor's four measures with every statistic against torchmetrics' nDCG@10 alone on
the same device (torchmetrics on ``--tm-gpu-queries`` queries, its time scaled per query: it loops
over queries in Python), with the peak GPU memory.

Every row is the best of ``--repeats`` runs after one warm-up; ratios are against tierank.tensor's
torch row.  The agreement of the values (tierank.tensor's mean expected value against
tierank.evaluate's, and its oblivious nDCG@10 against torchmetrics' value) is printed under the table.

    python benchmarks/bench_tensor.py                       # 10,000 x 100 on CPU (+ GPU if present)
    python benchmarks/bench_tensor.py --queries 1000 --repeats 1 --no-gpu   # quick check
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
import tracemalloc

import numpy as np

MEASURES = ["nDCG@10", "RR@10", "AP", "R@100"]


def make(q: int, c: int, seed: int, device: str = "cpu"):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    scores = torch.randn(q, c, generator=g, device=device).to(torch.bfloat16).to(torch.float32)
    u = torch.rand(q, c, generator=g, device=device)
    labels = (u > 0.9).long() + (u > 0.96).long() + (u > 0.99).long()
    return scores, labels


def best(fn, repeats: int, sync=lambda: None) -> tuple[float, object]:
    out = fn()  # warm-up
    sync()
    times = []
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - t)
    return min(times), out


def torchmetrics_ndcg(scores, labels, device):
    import torch
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    q, c = scores.shape
    idx = torch.arange(q, device=device).repeat_interleave(c)
    preds, target = scores.reshape(-1), labels.reshape(-1)

    def run():
        m = RetrievalNormalizedDCG(top_k=10).to(device)
        m.update(preds, target, idx)
        return float(m.compute())

    return run


def cpu(args) -> dict:
    import pandas as pd

    import tierank
    from tierank import tensor

    scores, labels = make(args.queries, args.candidates, args.seed)
    q, c = scores.shape
    rows = []

    def tensor_torch():
        return tensor.evaluate(scores, labels, MEASURES)

    t_torch, res = best(tensor_torch, args.repeats)
    rows.append(("tierank.tensor, torch CPU float32: 4 measures x 5 statistics", t_torch))
    s_np, l_np = scores.numpy().astype(np.float64), labels.numpy()
    t_np, res_np = best(lambda: tensor.evaluate(s_np, l_np, MEASURES), args.repeats)
    rows.append(("tierank.tensor, NumPy float64: 4 measures x 5 statistics", t_np))
    t_tm, tm_value = best(torchmetrics_ndcg(scores, labels, "cpu"), args.repeats)
    rows.append(("torchmetrics RetrievalNormalizedDCG(top_k=10) alone (one value)", t_tm))
    # torchmetrics' nDCG averages the gains of tied documents: the expected value (float32 here)
    agree: dict = {
        "torchmetrics nDCG@10 - tierank.tensor expected nDCG@10 (float32)": tm_value
        - res["nDCG@10"].summary()["expected"]
    }
    if not args.skip_evaluate:
        qid = np.repeat([f"q{i}" for i in range(q)], c)
        docid = np.tile([f"d{j:03d}" for j in range(c)], q)
        run = pd.DataFrame({"query": qid, "docid": docid, "score": s_np.reshape(-1)})
        qrels = pd.DataFrame({"query": qid, "docid": docid, "relevance": l_np.reshape(-1)})
        t_ev, ev = best(
            lambda: tierank.evaluate(qrels, run, MEASURES, tie_break="input"), args.repeats
        )
        rows.append(("tierank.evaluate on the same data as a run: 4 measures x 5 statistics", t_ev))
        agg = ev.aggregate().set_index("measure")
        for m in MEASURES:
            s = res_np[m].summary()
            agree[f"{m}: tensor (NumPy float64) - evaluate, expected / std"] = (
                s["expected"] - float(agg.loc[m, "expected"]),
                s["std"] - float(agg.loc[m, "std"]),
            )
    # peak memory of the NumPy path (tracemalloc sees NumPy's allocations)
    tracemalloc.start()
    tensor.evaluate(s_np, l_np, MEASURES)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "shape": [q, c],
        "rows": rows,
        "reference": t_torch,
        "agreement": agree,
        "tied_share": float(np.mean(np.asarray(res.tied_share))),
        "numpy_peak_bytes": peak,
        "numpy_peak_bytes_per_cell": peak / (q * c),
    }


def gpu(args) -> dict:
    import torch

    from tierank import tensor

    dev = "cuda"
    scores, labels = make(args.gpu_queries, args.candidates, args.seed, dev)
    sync = torch.cuda.synchronize
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    t_tensor, res = best(lambda: tensor.evaluate(scores, labels, MEASURES), args.repeats, sync)
    peak = torch.cuda.max_memory_allocated() - base
    nq = min(args.tm_gpu_queries, args.gpu_queries)
    t_tm, _ = best(torchmetrics_ndcg(scores[:nq], labels[:nq], dev), 1, sync)
    t_tm_scaled = t_tm * args.gpu_queries / nq
    return {
        "shape": list(scores.shape),
        "device": torch.cuda.get_device_name(),
        "rows": [
            ("tierank.tensor, CUDA float32: 4 measures x 5 statistics", t_tensor),
            (
                f"torchmetrics nDCG@10 alone, CUDA ({nq:,} queries, time x {args.gpu_queries / nq:g})",
                t_tm_scaled,
            ),
        ],
        "reference": t_tensor,
        "peak_gpu_bytes_over_input": peak,
        "nDCG@10 expected": res["nDCG@10"].summary()["expected"],
    }


def table(title: str, out: dict) -> str:
    lines = [
        f"## {title}: {out['shape'][0]:,} queries x {out['shape'][1]} candidates",
        "",
        "| what | seconds | x tierank.tensor (torch) |",
        "|---|---:|---:|",
    ]
    for name, t in out["rows"]:
        lines.append(f"| {name} | {t:.3f} | {t / out['reference']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--gpu-queries", type=int, default=1_000_000)
    ap.add_argument("--tm-gpu-queries", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--skip-evaluate", action="store_true")
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--out", help="write every measurement as JSON here")
    args = ap.parse_args()

    import torch
    import torchmetrics

    import tierank

    if args.threads:
        torch.set_num_threads(args.threads)
    print(
        f"tierank {tierank.__version__}, torch {torch.__version__}, torchmetrics {torchmetrics.__version__}, "
        f"numpy {np.__version__}, {platform.processor() or platform.machine()}, torch threads {torch.get_num_threads()}"
    )
    results = {"cpu": cpu(args)}
    print(table("CPU", results["cpu"]))
    c = results["cpu"]
    print(
        f"\nmean share of tied candidates: {c['tied_share']:.3f}; NumPy peak {c['numpy_peak_bytes'] / 2**20:.0f} MiB "
        f"({c['numpy_peak_bytes_per_cell']:.0f} bytes per cell)"
    )
    for k, v in c["agreement"].items():
        print(f"  {k}: {v}")
    if not args.no_gpu and torch.cuda.is_available():
        results["gpu"] = gpu(args)
        print()
        print(table(f"GPU ({results['gpu']['device']})", results["gpu"]))
        print(
            f"\npeak GPU memory beyond the inputs: {results['gpu']['peak_gpu_bytes_over_input'] / 2**30:.2f} GiB"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
