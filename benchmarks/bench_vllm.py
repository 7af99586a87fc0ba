"""The vLLM backend against the HF backend: scores, ties, Table 1 and forward cost (issue 14).

Two steps.

1. ``compare HF_OUT VLLM_OUT``: two ``tierank rerank`` output directories of the
   same model, set and variants, one per backend (``--backend hf`` /
   ``--backend vllm``).  Prints per variant the max |score difference| over
   all pairs, the tie shares, the Table 1 rows side by side and the forward
   time (``model_s``) per 1,000 pairs.  Runs without vLLM.

2. ``extras DATA``: what only vLLM itself can show, on a few queries of a set
   (run it in the venv that has vLLM; it spawns engine processes, so it runs
   as a script):

   * vLLM's default FP32 log-probabilities (``logprobs_mode="raw_logprobs"``)
     turned into P(yes): the paper's ``bf16->fp32`` level, with its ties;
   * vLLM's own FP32 head (``classifier_from_token``, ``head_dtype`` float32:
     rows rounded to BF16 at load) against tierank's ``:head`` (FP32 hidden
     state times the checkpoint's FP32 rows);
   * ``VLLM_BATCH_INVARIANT=1`` (``--batch-invariant``): whether this vLLM
     accepts it here and whether BF16 scores change between batch sizes 1 and 8.

3. ``batch DATA --sizes 1,8``: the share of pairs whose BF16 yes/no logits change
   with the engine's batch size, with ``VLLM_BATCH_INVARIANT`` 0 and 1 (each in
   a fresh process).

Example (the evidence of /tmp/coord/vllm_notes.md)::

    tierank rerank --data ../shared/data/rag24 --model smollm2-yesno --backend hf --device cpu \\
        --regimes "fp32,bf16,bf16->fp32,bf16->fp32:head" --max-queries 5 -b 8 -o OUT_HF
    tierank rerank ... --backend vllm ... -o OUT_VLLM          # in the vLLM venv
    python benchmarks/bench_vllm.py compare OUT_HF OUT_VLLM
    python benchmarks/bench_vllm.py extras ../shared/data/rag24 --queries 2 --depth 10
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def _records(out: Path) -> dict[str, dict[tuple[str, str], float]]:
    """variant -> {(query, docid): score} from the cache files of one OUT/ (the variant is in each header)."""
    got: dict[str, dict] = {}
    for f in sorted((out / "cache").glob("*.jsonl")):
        lines = f.read_text().splitlines()
        key = json.loads(lines[0])["key"]
        d = got.setdefault(key["variant"], {})
        for line in lines[1:]:
            rec = json.loads(line)
            if "query" in rec:
                d.update({(rec["query"], doc): s for doc, s in zip(rec["docids"], rec["scores"])})
    return got


def compare(hf_out: Path, vllm_out: Path) -> dict:
    hf_doc, vl_doc = (json.loads((o / "table.json").read_text()) for o in (hf_out, vllm_out))
    hf, vl = _records(hf_out), _records(vllm_out)
    report = {
        "pairs": hf_doc["settings"]["candidates"],
        "queries": hf_doc["settings"]["queries"],
        "variants": {},
    }
    print(
        f"{report['queries']} queries, {report['pairs']} pairs; backends: "
        f"{hf_doc['settings'].get('backend', 'hf')} vs {vl_doc['settings'].get('backend')}"
    )
    print(
        f"{'variant':<18}{'max|diff|':>12}{'mean|diff|':>12}{'tied HF':>10}{'tied vLLM':>11}"
        f"{'fwd s/1k HF':>13}{'fwd s/1k vLLM':>15}"
    )
    for v in hf_doc["settings"]["variants"]:
        keys = sorted(hf[v])
        a = np.array([hf[v][k] for k in keys])
        b = np.array([vl[v][k] for k in keys])
        diff = np.abs(a - b)
        t_hf = [r["model_s"] for r in hf_doc["rows"] if r["variant"] == v][0]
        t_vl = [r["model_s"] for r in vl_doc["rows"] if r["variant"] == v][0]
        row = {
            "max_abs_diff": float(diff.max()),
            "mean_abs_diff": float(diff.mean()),
            "tied_share_hf": hf_doc["ties"][v]["tied_share"],
            "tied_share_vllm": vl_doc["ties"][v]["tied_share"],
            "forward_s_per_1k_hf": 1000 * t_hf / len(keys),
            "forward_s_per_1k_vllm": 1000 * t_vl / len(keys),
        }
        report["variants"][v] = row
        print(
            f"{v:<18}{row['max_abs_diff']:>12.3g}{row['mean_abs_diff']:>12.3g}{row['tied_share_hf']:>10.1%}"
            f"{row['tied_share_vllm']:>11.1%}{row['forward_s_per_1k_hf']:>13.1f}"
            f"{row['forward_s_per_1k_vllm']:>15.1f}"
        )
    print("\nTable 1 rows (HF | vLLM): variant measure  M_obl  E[M]  range  tied_share")
    for rh, rv in zip(hf_doc["rows"], vl_doc["rows"]):

        def f(r):
            return (
                f"{r['oblivious']:.4f} {r['expected']:.4f} {r['range']:.4f} {r['tied_share']:.3f}"  # noqa: E731
            )

        print(f"{rh['variant']:<18}{rh['measure']:<9} {f(rh)} | {f(rv)}")
    report["table_hf"], report["table_vllm"] = hf_doc["rows"], vl_doc["rows"]
    same = _same_reasoning(hf_out, vllm_out)
    if same:
        report["same_reasoning_share"] = same
        print(
            "\nRank1-style reasoning identical on both backends (share of pairs): "
            + ", ".join(f"{v} {x:.0%}" for v, x in same.items())
        )
    return report


def _same_reasoning(hf_out: Path, vllm_out: Path) -> dict[str, float]:
    """variant file stem -> share of pairs whose generated reasoning is the same text on both backends."""
    out = {}
    for f in sorted((hf_out / "runs").glob("*.reasoning.jsonl")):
        g = vllm_out / "runs" / f.name
        if not g.exists():
            continue

        def read(p):
            return {
                (r["query"], r["docid"]): r["reasoning"]  # noqa: E731
                for r in map(json.loads, p.read_text().splitlines())
            }

        a, b = read(f), read(g)
        out[f.name.split(".")[1]] = sum(a[k] == b.get(k) for k in a) / max(len(a), 1)
    return out


def _tied_share(scores_by_query: list[np.ndarray]) -> float:
    tied = n = 0
    for s in scores_by_query:
        _, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
        tied += int(np.sum(counts[inv] > 1))
        n += len(s)
    return tied / max(n, 1)


def extras(data_dir: str, n_queries: int, depth: int, batch_invariant: bool) -> dict:
    """vLLM-only evidence (see the module docstring); each engine is loaded once, one at a time."""
    from tierank.hps.regimes import yes_no_scores
    from tierank.hps.variants import parse_variants
    from tierank.hps.vllm import generative as vg
    from tierank.hps.vllm import outputs as vo
    from tierank.hps.vllm import settings as vs
    from tierank.io.beir import load_beir

    data = load_beir(data_dir, max_queries=n_queries, depth=depth)
    qids = sorted(data.candidates)
    out: dict = {"queries": len(qids), "pairs": sum(len(data.candidates[q]) for q in qids)}
    scorer = vg.VllmYesNoScorer("smollm2", "bf16", batch_size=8, device="cpu")
    texts = {
        q: [scorer.prompt(data.queries[q], data.docs[d]) for d in data.candidates[q]] for q in qids
    }

    # 1. raw logits (tierank's path) and the default FP32 log-probabilities, from one engine each
    _ = scorer.llm  # the engine starts outside the timing
    t0 = time.perf_counter()
    logits = {q: scorer.answer_logits(texts[q]) for q in qids}
    out["generate_s_per_1k"] = 1000 * (time.perf_counter() - t0) / out["pairs"]
    hps = [yes_no_scores(logits[q], 1, 0, "bf16->fp32") for q in qids]
    low = [yes_no_scores(logits[q], 1, 0, "bf16") for q in qids]
    vs.close_engine(scorer._llm)  # shut the engine down before the next one starts
    scorer._llm = None
    lp_engine = vs.make_engine(**vs.engine_options(scorer.model_dir, "bf16", 8, scorer.max_len))
    params = vs.require_vllm().SamplingParams(
        max_tokens=1, temperature=0.0, logprob_token_ids=[scorer.no_id, scorer.yes_id]
    )
    out["tie_groups_bf16->fp32 (raw logits)"] = [
        np.unique(h, return_counts=True)[1].max().item() for h in hps
    ]
    lps = [
        vo.logprob_scores(
            vo.answer_logits(
                lp_engine.generate(scorer.token_ids(texts[q]), params, use_tqdm=False),
                scorer.yes_id,
                scorer.no_id,
            )
        )
        for q in qids
    ]
    vs.close_engine(lp_engine)
    allv = lambda xs: np.concatenate(xs)  # noqa: E731
    out["logprobs_vs_raw_logits_max_abs_diff"] = float(np.max(np.abs(allv(lps) - allv(hps))))
    out["tied_share"] = {
        "bf16": _tied_share(low),
        "bf16->fp32 (raw logits)": _tied_share(hps),
        "bf16->fp32 (vLLM logprobs)": _tied_share(lps),
    }

    # 2. the two FP32 heads
    head = parse_variants("bf16->fp32:head")
    hidden = [
        scorer.score_query(
            data.queries[q], [data.docs[d] for d in data.candidates[q]], head
        ).scores["bf16->fp32:head"]
        for q in qids
    ]
    scorer.close()
    native = vg.VllmYesNoScorer(
        "smollm2", "bf16", batch_size=8, device="cpu", head_method="classify"
    )
    try:
        cls = [native.head_difference(texts[q]) for q in qids]
        out["native_head_vs_hidden_head_max_abs_diff"] = float(
            np.max(np.abs(allv(cls) - allv(hidden)))
        )
        out["tied_share"]["head (hidden x FP32 rows)"] = _tied_share(hidden)
        out["tied_share"]["head (vLLM classify, BF16 rows)"] = _tied_share(cls)
    except Exception as exc:  # the evidence records what failed
        out["native_head_error"] = f"{type(exc).__name__}: {exc}"
    native.close()

    # 3. batch invariance (the env is read when the engine process starts)
    if batch_invariant:
        os.environ["VLLM_BATCH_INVARIANT"] = "1"
        vs.check_batch_invariant = lambda device: (
            None
        )  # measure vLLM itself, not tierank's refusal on a CPU
        try:
            res = {}
            for bs in (1, 8):
                s = vg.VllmYesNoScorer("smollm2", "bf16", batch_size=bs, device="cpu")
                res[bs] = allv([s.answer_logits(texts[q]) for q in qids])
                s.close()
            out["batch_invariant_bs1_vs_bs8_changed_logits"] = float(
                np.mean(np.any(res[1] != res[8], axis=1))
            )
        except Exception as exc:
            out["batch_invariant_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    return out


def batch_logits(data_dir: str, n_queries: int, depth: int, sizes: list[int]) -> dict:
    """BF16 answer logits of every pair under each engine batch size (``max_num_seqs``), in this process's
    ``VLLM_BATCH_INVARIANT`` mode; an engine that will not start is recorded, not raised."""
    from tierank.hps.vllm import generative as vg
    from tierank.hps.vllm import settings as vs
    from tierank.io.beir import load_beir

    vs.check_batch_invariant = lambda device: (
        None
    )  # measure vLLM itself, not tierank's refusal on a CPU
    data = load_beir(data_dir, max_queries=n_queries, depth=depth)
    qids = sorted(data.candidates)
    res: dict = {"mode": os.environ.get("VLLM_BATCH_INVARIANT", "0"), "logits": {}}
    for bs in sizes:
        s = vg.VllmYesNoScorer("smollm2", "bf16", batch_size=bs, device="cpu")
        try:
            texts = [
                s.prompt(data.queries[q], data.docs[d]) for q in qids for d in data.candidates[q]
            ]
            res["logits"][bs] = s.answer_logits(texts).tolist()
        except Exception as exc:  # the evidence records what failed
            res["error"] = f"{type(exc).__name__}: {str(exc)[:400]}"
            break
        finally:
            s.close()
    return res


def batch(data_dir: str, n_queries: int, depth: int, sizes: list[int]) -> dict:
    """vLLM's batch (in)variance on this machine: for ``VLLM_BATCH_INVARIANT`` 0 and 1 (each in a fresh process,
    as vLLM reads it when its engine starts), the share of pairs whose BF16 yes/no logits differ between the
    first batch size and each other one."""
    import subprocess

    out: dict = {"sizes": sizes}
    for mode in ("0", "1"):
        env = dict(os.environ, VLLM_BATCH_INVARIANT=mode)
        code = (
            f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_vllm as b; "
            f"print('@@' + json.dumps(b.batch_logits({data_dir!r}, {n_queries}, {depth}, {sizes!r})))"
        )
        p = subprocess.run(
            [sys.executable, "-c", f"if __name__ == '__main__':\n    {code}"],
            capture_output=True,
            text=True,
            env=env,
        )
        line = [x for x in p.stdout.splitlines() if x.startswith("@@")]
        if not line:
            out[f"VLLM_BATCH_INVARIANT={mode}"] = {
                "error": (p.stderr.strip().splitlines() or ["no output"])[-1][:400]
            }
            continue
        res = json.loads(line[0][2:])
        logits = {int(k): np.array(v) for k, v in res["logits"].items()}
        row: dict = {"error": res["error"]} if "error" in res else {}
        base = logits.get(sizes[0])
        for bs in sizes[1:]:
            if base is not None and bs in logits:
                row[f"changed_share_bs{sizes[0]}_vs_bs{bs}"] = float(
                    np.mean(np.any(logits[bs] != base, axis=1))
                )
                row[f"max_abs_logit_diff_bs{sizes[0]}_vs_bs{bs}"] = float(
                    np.max(np.abs(logits[bs] - base))
                )
        out[f"VLLM_BATCH_INVARIANT={mode}"] = row
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    c.add_argument("hf_out", type=Path)
    c.add_argument("vllm_out", type=Path)
    e = sub.add_parser("extras")
    e.add_argument("data")
    e.add_argument("--queries", type=int, default=2)
    e.add_argument("--depth", type=int, default=10)
    e.add_argument("--batch-invariant", action="store_true")
    b = sub.add_parser("batch")
    b.add_argument("data")
    b.add_argument("--queries", type=int, default=1)
    b.add_argument("--depth", type=int, default=6)
    b.add_argument("--sizes", default="1,8")
    p.add_argument("--json", type=Path, help="also write the numbers here")
    a = p.parse_args(argv)
    if a.cmd == "compare":
        rep = compare(a.hf_out, a.vllm_out)
    elif a.cmd == "batch":
        rep = batch(a.data, a.queries, a.depth, [int(x) for x in a.sizes.split(",")])
    else:
        rep = extras(a.data, a.queries, a.depth, a.batch_invariant)
    if a.cmd != "compare":
        print(json.dumps(rep, indent=1))
    if a.json:
        a.json.write_text(json.dumps(rep, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
