"""Evaluation at any size (issue 15): in memory vs streaming (1 and 2 jobs) vs DuckDB-partitioned.

Runs of 7M, 70M and 200M lines are made from the 7M-line benchmark run of ``bench_eval.py``
(6,980 queries x 1,000 documents): copy ``i`` renames every query ``c{i}_QID``, so the run stays
grouped by query and the qrels are copied the same way.  Each configuration runs in a fresh
process; wall time and peak memory (the summed resident memory of the process and its
workers, sampled every 50 ms) are recorded.  The shuffled 70M case shuffles the lines in
blocks (``shuf`` is not out of core) so that queries are interrupted, and is partitioned with
DuckDB first (timed separately).

    python benchmarks/bench_stream.py --sizes 7,70 --flavour bf16
    python benchmarks/bench_stream.py --sizes 7,70,200 --skip-memory-above 70

Results go to ``bench-data/stream-FLAVOUR.json`` and are printed as a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_eval import REPO, generate  # noqa: E402

MEASURES = ["nDCG@10", "RR@10", "AP", "P@10", "R@100"]

WORKER = r"""
import sys, time, json
import tierank
from tierank.stream import evaluate_stream
mode, qrels, run, jobs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
M = json.loads(sys.argv[5])
t = time.perf_counter()
if mode == "memory":
    res = tierank.evaluate(qrels, run, M)
else:
    res = evaluate_stream(qrels, run, M, jobs=jobs)
agg = res.aggregate()
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len(res.qids),
                  "values": {r["measure"]: [r["oblivious"], r["expected"], r["std"]] for r in agg.to_dict("records")}}))
"""


def copies(src: Path, dst: Path, n: int, field: int = 1) -> None:
    """``dst``: ``n`` copies of ``src`` with the query id of copy i prefixed ``c{i}_`` (grouped by
    query; ``field`` must be the first).  Made in 64 MiB pieces of whole lines, memory flat."""
    if dst.exists():
        return
    assert field == 1, "only the first field (the query id) is renamed"
    tmp = dst.with_suffix(".part")
    with open(tmp, "wb") as out:
        for i in range(n):
            prefix = f"c{i}_".encode()
            with open(src, "rb") as fh:
                rest = b""
                while True:
                    piece = fh.read(64 << 20)
                    data = rest + piece
                    if not data:
                        break
                    cut = data.rfind(b"\n") + 1 if piece else len(data)
                    whole, rest = data[:cut], data[cut:]
                    if whole:
                        out.write(prefix + whole[:-1].replace(b"\n", b"\n" + prefix) + whole[-1:])
                    if not piece:
                        break
    os.replace(tmp, dst)


def block_shuffle(src: Path, dst: Path, seed: int) -> None:
    """Interleave queries: the file cut into 1,000-line pieces written in a seeded random order of pieces
    (memory: the offsets only)."""
    if dst.exists():
        return
    import numpy as np

    offsets = [0]
    with open(src, "rb") as fh:
        for i, _line in enumerate(fh, 1):
            if i % 1000 == 0:
                offsets.append(fh.tell())
    size = src.stat().st_size
    if offsets[-1] != size:
        offsets.append(size)
    order = np.random.default_rng(seed).permutation(len(offsets) - 1)
    tmp = dst.with_suffix(".part")
    with open(src, "rb") as fh, open(tmp, "wb") as out:
        for k in order:
            fh.seek(offsets[k])
            out.write(fh.read(offsets[k + 1] - offsets[k]))
    os.replace(tmp, dst)


def measure(cmd: list[str]) -> dict:
    """Run ``cmd``; wall time and the peak of the summed resident memory of it and its workers
    (sampled every 50 ms with psutil)."""
    import psutil

    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc = psutil.Process(p.pid)
    peak = 0
    while p.poll() is None:
        try:
            tree = [proc, *proc.children(recursive=True)]
            peak = max(peak, sum(x.memory_info().rss for x in tree if x.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.05)
    stdout, stderr = p.communicate()
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return {
            "error": stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {p.returncode}",
            "wall_s": wall,
        }
    out = json.loads(stdout.strip().splitlines()[-1])
    out.update(wall_s=wall, peak_mib=peak / 2**20)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data")
    ap.add_argument(
        "--sizes",
        default="7,70",
        help="millions of lines, multiples of 7 (comma-separated; '' for none)",
    )
    ap.add_argument("--flavour", default="bf16", choices=["f32", "bf16"])
    ap.add_argument(
        "--skip-memory-above", type=int, default=70, help="no in-memory run above this many M lines"
    )
    ap.add_argument(
        "--shuffled",
        type=int,
        default=70,
        help="size (M lines) of the shuffled/partitioned case; 0: none",
    )
    ap.add_argument("--seed", type=int, default=20240607)
    args = ap.parse_args(argv)

    base = generate(
        args.data_dir, 6980, 1000, args.seed, False, lambda s: print(s, file=sys.stderr)
    )
    rows = []
    for size in (int(x) for x in args.sizes.split(",") if x):
        n = max(1, size // 7)
        run = args.data_dir / f"run-x{n}-{args.flavour}.trec"
        qrels = args.data_dir / f"qrels-x{n}.trec"
        copies(base[args.flavour], run, n, 1)
        copies(base["qrels"], qrels, n, 1)
        lines = 6_980_000 * n
        modes = [("stream", 1), ("stream", 2)]
        if size <= args.skip_memory_above:
            modes.insert(0, ("memory", 1))
        for mode, jobs in modes:
            r = measure(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    mode,
                    str(qrels),
                    str(run),
                    str(jobs),
                    json.dumps(MEASURES),
                ]
            )
            r.update(
                size=f"{size}M",
                mode=mode,
                jobs=jobs,
                lines=lines,
                mlines_per_s=lines / r["seconds"] / 1e6 if "seconds" in r else None,
            )
            rows.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "values"}), file=sys.stderr)
    if args.shuffled:
        size = args.shuffled
        n = max(1, size // 7)
        run, qrels, lines = (
            args.data_dir / f"run-x{n}-{args.flavour}.trec",
            args.data_dir / f"qrels-x{n}.trec",
            6_980_000 * n,
        )
        copies(base[args.flavour], run, n, 1)
        copies(base["qrels"], qrels, n, 1)
        if True:
            shuffled = args.data_dir / f"run-x{n}-{args.flavour}-shuffled.trec"
            block_shuffle(run, shuffled, args.seed)
            parts = args.data_dir / f"parts-x{n}-{args.flavour}"
            if not parts.exists():
                t = time.perf_counter()
                code = (
                    f"from tierank.stream import partition; partition({str(shuffled)!r}, {str(parts)!r}, "
                    f"memory_limit='1GB', temp_dir={str(args.data_dir / 'duckdb-tmp')!r})"
                )
                r = measure([sys.executable, "-c", code + "; print('{\"seconds\": 0}')"])
                r.update(
                    size=f"{size}M shuffled",
                    mode="partition (DuckDB)",
                    jobs=1,
                    lines=lines,
                    seconds=time.perf_counter() - t,
                )
                rows.append(r)
            r = measure(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    "stream",
                    str(qrels),
                    str(parts),
                    "2",
                    json.dumps(MEASURES),
                ]
            )
            r.update(
                size=f"{size}M shuffled",
                mode="stream partitions",
                jobs=2,
                lines=lines,
                mlines_per_s=lines / r["seconds"] / 1e6 if "seconds" in r else None,
            )
            rows.append(r)
    same = {
        json.dumps(r.get("values"), sort_keys=True)
        for r in rows
        if r.get("values") and r["size"] == rows[0]["size"]
    }
    print("| size | mode | jobs | wall s | eval s | M lines/s | peak MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['size']} | {r['mode']} | {r['jobs']} | {r.get('wall_s', 0):.1f} | {r.get('seconds', 0):.1f} | "
            f"{(r.get('mlines_per_s') or 0):.2f} | {r.get('peak_mib') or 0:.0f} |"
        )
    print(f"identical aggregates across modes at {rows[0]['size']}: {len(same) == 1}")
    (args.data_dir / f"stream-{args.flavour}.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
