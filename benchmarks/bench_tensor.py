"""tierank.tensor against torchmetrics and tierank.evaluate on the same tensors, side by side in one run.

CPU mode (always): Q queries x C candidates (default 10,000 x 100), bf16-rounded scores (ties as a
bf16 reranker makes them), graded labels 0..3.  Rows:

* ``tierank.tensor`` nDCG@10 + RR@10 + AP + R@100, every statistic (oblivious, expected, min, max,
  std), on torch CPU float32 tensors, and on NumPy float64 arrays;
* ``torchmetrics`` RetrievalNormalizedDCG(top_k=10) alone (one value: it averages tied gains), on the same
  torch tensors in the flat preds/target/indexes form it takes;
* ``tierank.evaluate`` on the same data written as a run and qrels (pandas DataFrames built before
  the clock starts), the same four measures;
* per measure: each of the four alone (every statistic, torch CPU) against torchmetrics' metric for
  the same measure (RetrievalNormalizedDCG, RetrievalMRR, RetrievalMAP, RetrievalRecall), and the
  four together against the sum of torchmetrics' four.  The issue's setting is one thread:
  ``OMP_NUM_THREADS=1 python benchmarks/bench_tensor.py --threads 1 --no-gpu``.

GPU mode (when CUDA is available; ``--gpu-only`` skips the CPU part): ``--gpu-queries`` (default
1,000,000) x C on the GPU, tierank.tensor's four measures with every statistic at each of
``--gpu-chunk-cells`` (default 4M, 16M and 64M cells: time and peak GPU memory beyond the inputs),
against torchmetrics' nDCG@10 alone on the same device (torchmetrics on ``--tm-gpu-queries``
queries, its time scaled per query: it loops over queries in Python); the GPU's float32 values are
checked against NumPy float64 on the CPU for the first 2,000 queries, and the goals (under 1 s, at
least 20 x torchmetrics) are printed under the table.

Every row is the best of ``--repeats`` runs after one warm-up; ratios are against tierank.tensor's
torch row.  The agreement of the values (tierank.tensor's mean expected value against
tierank.evaluate's, and its oblivious nDCG@10 against torchmetrics' value) is printed under the table.

    python benchmarks/bench_tensor.py                       # 10,000 x 100 on CPU (+ GPU if present)
    python benchmarks/bench_tensor.py --queries 1000 --repeats 1 --no-gpu   # quick check
    python benchmarks/bench_tensor.py --gpu-only --repeats 3 --out gpu.json  # the GPU table alone
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
import tracemalloc
from typing import Any

import numpy as np

MEASURES = ["nDCG@10", "RR@10", "AP", "R@100"]
#: families with no torchmetrics peer, timed alone (every statistic, torch CPU): their own rows
OTHERS = ["ERR@10", "ERR", "RBP(p=0.8)", "Bpref", "RBP_resid(p=0.8)"]


def make(q: int, c: int, seed: int, device: str = "cpu"):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    scores = torch.randn(q, c, generator=g, device=device).to(torch.bfloat16).to(torch.float32)
    u = torch.rand(q, c, generator=g, device=device)
    labels = (u > 0.9).long() + (u > 0.96).long() + (u > 0.99).long()
    return scores, labels


def best(fn, repeats: int, sync=lambda: None) -> tuple[float, Any]:
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


#: torchmetrics' metric for each measure of MEASURES (binary targets at rel=1 except nDCG's grades)
TORCHMETRICS = {
    "nDCG@10": ("RetrievalNormalizedDCG", {"top_k": 10}, False),
    "RR@10": ("RetrievalMRR", {"top_k": 10}, True),
    "AP": ("RetrievalMAP", {}, True),
    "R@100": ("RetrievalRecall", {"top_k": 100}, True),
}


def torchmetrics_metric(measure: str, scores, labels, device):
    """torchmetrics' metric for ``measure`` (one value: it averages over queries, ties as its sort
    leaves them), built, updated and computed as one timed call."""
    import torch
    import torchmetrics.retrieval as tmr

    name, kwargs, binary = TORCHMETRICS[measure]
    q, c = scores.shape
    idx = torch.arange(q, device=device).repeat_interleave(c)
    preds, target = scores.reshape(-1), labels.reshape(-1)
    if binary:
        target = target >= 1

    def run():
        m = getattr(tmr, name)(**kwargs).to(device)
        m.update(preds, target, idx)
        return float(m.compute())

    return run


def per_measure(args, scores, labels) -> list[dict]:
    """Each measure of MEASURES alone, every statistic, against torchmetrics' metric for it, and
    the four together against torchmetrics' four (the sum of their times), timed side by side."""
    from tierank import tensor

    out, tm_total = [], 0.0
    for m in MEASURES:
        t_tr, _ = best(lambda m=m: tensor.evaluate(scores, labels, [m]), args.repeats)
        t_tm, _ = best(torchmetrics_metric(m, scores, labels, "cpu"), args.repeats)
        tm_total += t_tm
        out.append({"measure": m, "tierank.tensor": t_tr, "torchmetrics": t_tm})
    t_all, _ = best(lambda: tensor.evaluate(scores, labels, MEASURES), args.repeats)
    out.append({"measure": " + ".join(MEASURES), "tierank.tensor": t_all, "torchmetrics": tm_total})
    return out


def others(args, scores, labels) -> list[dict]:
    """Each family of OTHERS alone, every statistic (no torchmetrics peer)."""
    from tierank import tensor

    return [
        {
            "measure": m,
            "tierank.tensor": best(lambda m=m: tensor.evaluate(scores, labels, [m]), args.repeats)[
                0
            ],
        }
        for m in OTHERS
    ]


def cpu(args) -> dict:
    import pandas as pd

    import tierank
    from tierank import tensor

    scores, labels = make(args.queries, args.candidates, args.seed)
    q, c = scores.shape
    rows = []
    measures = per_measure(args, scores, labels)

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
        "per_measure": measures,
        "others": others(args, scores, labels),
        "agreement": agree,
        "tied_share": float(np.mean(np.asarray(res.tied_share))),
        "numpy_peak_bytes": peak,
        "numpy_peak_bytes_per_cell": peak / (q * c),
    }


def gpu(args) -> dict:
    """``--gpu-queries`` x C on CUDA: tierank.tensor's four measures with every statistic at each
    ``--gpu-chunk-cells`` (time and peak memory beyond the inputs), torchmetrics' nDCG@10 alone on
    the same device (on ``--tm-gpu-queries`` queries, scaled per query), and the agreement of the
    GPU's float32 values with NumPy float64 on the CPU for the first 2,000 queries."""
    import torch

    from tierank import tensor

    dev = args.gpu_device
    scores, labels = make(args.gpu_queries, args.candidates, args.seed, dev)
    sync = torch.cuda.synchronize
    rows, peaks = [], {}
    reference = None
    res = None
    for cells in args.gpu_chunk_cells:
        gc.collect()
        torch.cuda.empty_cache()
        sync()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        t, res = best(
            lambda cells=cells: tensor.evaluate(scores, labels, MEASURES, chunk_cells=cells),
            args.repeats,
            sync,
        )
        peaks[cells] = torch.cuda.max_memory_allocated() - base
        rows.append(
            (
                f"tierank.tensor, CUDA float32, chunks of {cells:,} cells: 4 measures x 5 "
                f"statistics (peak {peaks[cells] / 2**30:.2f} GiB beyond the inputs)",
                t,
            )
        )
        reference = t if reference is None else min(reference, t)
    nq = min(args.tm_gpu_queries, args.gpu_queries)
    t_tm, tm_value = best(torchmetrics_ndcg(scores[:nq], labels[:nq], dev), 1, sync)
    t_tm_scaled = t_tm * args.gpu_queries / nq
    rows.append(
        (
            f"torchmetrics nDCG@10 alone, CUDA ({nq:,} queries, time x {args.gpu_queries / nq:g})",
            t_tm_scaled,
        )
    )
    n_check = min(2000, args.gpu_queries)
    s_cpu = scores[:n_check].cpu().numpy().astype(np.float64)
    l_cpu = labels[:n_check].cpu().numpy()
    ref = tensor.evaluate(s_cpu, l_cpu, MEASURES)
    assert res is not None
    agree = {
        f"{m} {stat}: max |GPU float32 - CPU float64| over {n_check:,} queries": float(
            np.max(
                np.abs(
                    getattr(res[m], stat)[:n_check].cpu().numpy().astype(np.float64)
                    - getattr(ref[m], stat)
                )
            )
        )
        for m in MEASURES
        for stat in ("expected", "min", "max", "std")
    }
    agree["torchmetrics nDCG@10 - tierank.tensor expected nDCG@10 (same queries)"] = (
        tm_value - float(res["nDCG@10"].expected[:nq].mean())
    )
    return {
        "shape": list(scores.shape),
        "device": torch.cuda.get_device_name(),
        "rows": rows,
        "reference": reference,
        "peak_gpu_bytes_over_input": peaks,
        "agreement": agree,
        "torchmetrics_over_tierank": t_tm_scaled / reference,
        "nDCG@10 expected": res["nDCG@10"].summary()["expected"],
        "tied_share": float(res.tied_share.mean()),
    }


def table(title: str, out: dict) -> str:
    lines = [
        f"## {title}: {out['shape'][0]:,} queries x {out['shape'][1]} candidates",
        "",
        "| what | seconds | x tierank.tensor (fastest torch row) |",
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
    ap.add_argument(
        "--gpu-chunk-cells",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[1 << 22, 1 << 24, 1 << 26],
        help="chunk sizes (cells) timed on the GPU, comma-separated",
    )
    ap.add_argument("--gpu-only", action="store_true", help="skip the CPU comparison")
    ap.add_argument("--gpu-device", default="cuda", help="the CUDA device (cuda, cuda:1, ...)")
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
    results: dict = {}
    if not args.gpu_only:
        results["cpu"] = cpu(args)
        print(table("CPU", results["cpu"]))
        c = results["cpu"]
        print(
            "\n| measure (every statistic) | tierank.tensor s | torchmetrics s | torchmetrics / "
            "tierank.tensor |\n|---|---:|---:|---:|"
        )
        for r in c["per_measure"]:
            print(
                f"| {r['measure']} | {r['tierank.tensor']:.3f} | {r['torchmetrics']:.3f} | "
                f"{r['torchmetrics'] / r['tierank.tensor']:.1f} |"
            )
        print(
            "\n| other family (every statistic, no torchmetrics peer) | tierank.tensor s |\n|---|---:|"
        )
        for r in c["others"]:
            print(f"| {r['measure']} | {r['tierank.tensor']:.3f} |")
        print(
            f"\nmean share of tied candidates: {c['tied_share']:.3f}; NumPy peak "
            f"{c['numpy_peak_bytes'] / 2**20:.0f} MiB ({c['numpy_peak_bytes_per_cell']:.0f} bytes per cell)"
        )
        for k, v in c["agreement"].items():
            print(f"  {k}: {v}")
    if not args.no_gpu and torch.cuda.is_available():
        results["gpu"] = g = gpu(args)
        print()
        print(table(f"GPU ({g['device']})", g))
        print(
            f"\nfastest tierank.tensor row {g['reference']:.3f} s (goal: under 1 s); torchmetrics' "
            f"nDCG@10 alone takes {g['torchmetrics_over_tierank']:.1f} x as long (goal: at least 20 x); "
            f"mean share of tied candidates {g['tied_share']:.3f}"
        )
        for k, v in g["agreement"].items():
            print(f"  {k}: {v:.3g}")
    elif args.gpu_only:
        print("--gpu-only: no CUDA device here")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
