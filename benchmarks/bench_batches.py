"""The measures of ``-m all_trec`` computed in batches (``tierank.measures.base.compute_all``: a
family's cutoffs in one pass) against one at a time (``Measure.compute`` each), side by side in one
process on the same prepared run, interleaved (alternating which goes first), medians; and whether the two agree bit for bit.

Per family: the time of its measures (the first measure of a batch carries the batch, so the
families whose ranks all weigh 1, P, R, RelP, Rprec, Rprec_mult and set_relative_P, are reported
together).  Each repetition starts from a fresh ``Prepared`` (empty caches), so intermediates one
family caches for another (arrangements, group moments) fall where the evaluation order puts them.

    python benchmarks/bench_batches.py                     # AskUbuntu x50: 200,000 lines
    python benchmarks/bench_batches.py --reps 7 --tie-decimals 1   # scores rounded: ties everywhere
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_all_trec import askubuntu_x50  # noqa: E402

UNIT = {"P", "R", "RelP", "Rprec", "RprecMult", "SetRelP", "Hits", "R_cap"}
COLUMNS = ("oblivious", "expected", "min", "max", "var")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--tie-decimals", type=int, default=None, help="round the scores (ties)")
    args = ap.parse_args(argv)

    import tierank
    from tierank.evaluate import Evaluator
    from tierank.measures.base import compute_all
    from tierank.ties import prepare

    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = askubuntu_x50(Path(tmp), args.copies)
        if args.tie_decimals is not None:
            lines = run.read_text().splitlines()
            rounded = []
            for line in lines:
                f = line.split()
                f[4] = f"{float(f[4]):.{args.tie_decimals}f}"
                rounded.append(" ".join(f))
            run.write_text("\n".join(rounded) + "\n")
        ev = Evaluator(str(qrels), ["all_trec"])
        r = tierank.to_run(str(run))
    measures = ev.measures
    n_lines = len(r.score)

    def fresh():
        return prepare(r, ev.qrels, ev.settings, measures=tuple(measures))

    def family(m) -> str:
        return "unit weights (P, R, RelP, Rprec, ...)" if m.family in UNIT else m.family

    times: dict[str, dict[str, list[float]]] = {
        "alone": defaultdict(list),
        "batched": defaultdict(list),
    }
    totals: dict[str, list[float]] = {"alone": [], "batched": []}
    same = True
    for rep in range(args.reps):
        results = {}
        for mode in ("alone", "batched")[
            :: 1 if rep % 2 == 0 else -1
        ]:  # alternate which goes first
            prep = fresh()
            stamps: list[tuple[str, float]] = []

            def step(what: str, done: int, total: int, stamps=stamps) -> None:
                stamps.append((family(measures[done]), time.perf_counter()))

            t0 = time.perf_counter()
            if mode == "alone":
                out = {}
                for done, m in enumerate(measures):
                    step(str(m), done, len(measures))
                    out[m] = m.compute(prep)
            else:
                out = compute_all(prep, measures, step)
            end = time.perf_counter()
            results[mode] = out
            totals[mode].append(end - t0)
            per: dict[str, float] = defaultdict(float)
            for (fam, t), (_, t_next) in zip(stamps, [*stamps[1:], ("", end)]):
                per[fam] += t_next - t
            for fam, dt in per.items():
                times[mode][fam].append(dt)
        same &= all(
            np.array_equal(
                getattr(results["batched"][m], c), getattr(results["alone"][m], c), equal_nan=True
            )
            for m in measures
            for c in COLUMNS
        )
    print(f"{n_lines:,} lines, {len(measures)} measures, {args.reps} repetitions (medians, s)")
    print(f"{'family':40s} {'alone':>8s} {'batched':>8s} {'ratio':>6s}")
    shown = sorted(times["alone"], key=lambda f: -statistics.median(times["alone"][f]))
    for fam in shown:
        a, b = statistics.median(times["alone"][fam]), statistics.median(times["batched"][fam])
        if a >= 0.005:
            print(f"{fam:40s} {a:8.3f} {b:8.3f} {a / max(b, 1e-6):6.1f}")
    a, b = statistics.median(totals["alone"]), statistics.median(totals["batched"])
    print(f"{'every measure':40s} {a:8.3f} {b:8.3f} {a / b:6.2f}")
    print("batched equal to alone, bit for bit, every column:", same)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
