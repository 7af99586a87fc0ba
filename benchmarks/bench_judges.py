"""Agreement of the 33 LLMJudge judges with the human grades (4,423 pairs each): tierank's vectorised
agreement against scikit-learn's ``cohen_kappa_score`` x 3 weightings and the ``krippendorff``
package's ``alpha`` x 3 levels, judge by judge, in one run, on one core.

Reads ``../shared/data/llmjudge`` (the team's data; skipped with the reason where it is absent).
Timed in this process, median of ``--reps`` repetitions (after one warm-up):

* ``read``: the human qrels and the 33 judge files read through the one input door and aligned
  (out-of-scale grades clipped to 0..3);
* ``tierank``: every statistic (3 kappas, 3 alphas, binarised agreement, confusion) pooled and per
  query, without and with ``--bootstrap`` resamples of the queries (the CIs of every statistic);
* ``references``: scikit-learn's three kappas and krippendorff's three alphas of every judge, pooled
  only (no per query, no bootstrap): the peer of tierank's pooled numbers.

    taskset -c 0 python benchmarks/bench_judges.py                 # 5 repetitions, 1,000 resamples
    taskset -c 0 python benchmarks/bench_judges.py --reps 3 --bootstrap 200
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "llmjudge"


def _median_time(fn, reps: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args(argv)
    if not (args.data / "test.human.qrels").is_file():
        sys.exit(f"skipped: {args.data} is not there (the team's ../shared/data/llmjudge)")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy as np

    from tierank.analysis.agreement import agreement
    from tierank.io.judgments import align, read_judges
    from tierank.io.sources import read

    files = sorted(glob.glob(str(args.data / "judges" / "*.txt")))

    def load():
        ref = read(str(args.data / "test.human.qrels"), "qrels")
        judges, _ = read_judges(files)
        return align(ref, judges, out_of_scale="clip")

    j = load()
    m, n = j.grades.shape
    print(f"{m} judges x {n} pairs, {len(j.queries)} queries; {args.reps} repetitions, medians")
    t_read = _median_time(load, args.reps)
    t_plain = _median_time(
        lambda: agreement(j.reference, j.grades, j.qid, j.judges, samples=0), args.reps
    )
    t_boot = _median_time(
        lambda: agreement(j.reference, j.grades, j.qid, j.judges, samples=args.bootstrap),
        args.reps,
    )
    print(f"read and align                         {t_read:8.3f} s")
    print(f"tierank, pooled + per query            {t_plain:8.3f} s")
    print(f"tierank, + {args.bootstrap:>5} bootstrap resamples  {t_boot:8.3f} s")
    try:
        import krippendorff
        from sklearn.metrics import cohen_kappa_score
    except ImportError as e:
        print(f"references skipped: {e} (pip install scikit-learn krippendorff)")
        return

    def references():
        for k in range(m):
            for w in (None, "linear", "quadratic"):
                cohen_kappa_score(j.reference, j.grades[k], weights=w)
            data = np.vstack([j.reference, j.grades[k]])
            for level in ("nominal", "ordinal", "interval"):
                krippendorff.alpha(data, level_of_measurement=level)

    t_ref = _median_time(references, max(1, args.reps // 2))
    print(f"sklearn + krippendorff, pooled only    {t_ref:8.3f} s")
    print(f"ratio references / tierank (pooled + per query): {t_ref / t_plain:.1f}x")


if __name__ == "__main__":
    main()
