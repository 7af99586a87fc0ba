"""Discriminative power and meta-analysis at scale: 20 systems x 15 collections x 1,000 topics.

Per collection, a synthetic matrix of per-topic expected values (systems' means spread over 0.05,
per-topic sd 0.2, a shared topic effect) and per-topic tie variances; then, timed in this process:

* ``discriminative power``: `tierank.analysis.discrimination.discriminative_power` (studentized
  paired bootstrap, 1,000 resamples, all 190 pairs) on every collection;
* ``meta-analysis``: every pair's per-collection effect with its variance (tie variance included,
  `tierank.analysis.meta.pair_effect`) and `combine_effects` by DerSimonian-Laird and Paule-Mandel
  on both scales;
* peers, in the same run: statsmodels' ``combine_effects`` on the same effects (``chi2`` and
  ``iterated``), and a loop over pairs drawing each pair's resamples itself (numpy, per pair) on one
  collection, scaled by the number of collections.

The goal (issue 52): the whole analysis under 30 s on 2 cores.

    python benchmarks/bench_meta.py                # 20 systems, 15 collections, 1,000 topics
    python benchmarks/bench_meta.py --systems 10 --collections 5 --topics 500 --reps 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def collection(seed: int, topics: int, systems: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    means = np.linspace(0.5, 0.45, systems)
    topic = rng.normal(0.0, 0.15, (topics, 1))
    E = np.clip(means + topic + rng.normal(0.0, 0.12, (topics, systems)), 0.0, 1.0)
    V = rng.uniform(0.0, 0.004, (topics, systems)) * (rng.uniform(size=(topics, systems)) < 0.3)
    return E, V


def discrimination(data, samples: int, seed: int):
    from tierank.analysis.discrimination import discriminative_power

    return [discriminative_power(E, samples=samples, seed=seed) for E, _ in data]


def meta(data):
    from tierank.analysis.meta import combine_effects, pair_effect

    S = data[0][0].shape[1]
    out = []
    for a in range(S):
        for b in range(a + 1, S):
            eff = [
                pair_effect(f"c{k}", "a", "b", E[:, a], E[:, b], V[:, a], V[:, b])
                for k, (E, V) in enumerate(data)
            ]
            for m in ("dl", "pm"):
                out.append(combine_effects([e.diff for e in eff], [e.var_diff for e in eff], m))
                out.append(combine_effects([e.dz for e in eff], [e.var_dz for e in eff], m))
    return out


def peer_meta(metas) -> None:
    from statsmodels.stats.meta_analysis import combine_effects

    for r in metas:
        combine_effects(
            np.array(r.effects),
            np.array(r.variances),
            method_re="chi2" if r.method == "dl" else "iterated",
            use_t=False,
        )


def peer_bootstrap(E: np.ndarray, samples: int, seed: int) -> int:
    """Each pair's studentized bootstrap with its own draws, one pair at a time (numpy)."""
    n, S = E.shape
    rng = np.random.default_rng(seed)
    separated = 0
    for a in range(S):
        for b in range(a + 1, S):
            z = E[:, a] - E[:, b]
            t0 = abs(z.mean()) / (z.std(ddof=1) / np.sqrt(n))
            w = z - z.mean()
            idx = rng.integers(0, n, size=(samples, n))
            ws = w[idx]
            ts = np.abs(ws.mean(axis=1)) / (ws.std(axis=1, ddof=1) / np.sqrt(n))
            separated += int(np.mean(ts >= t0) < 0.05)
    return separated


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--collections", type=int, default=15)
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    data = [collection(k, args.topics, args.systems) for k in range(args.collections)]
    discrimination(data[:1], 50, args.seed)  # imports and first calls out of the timing
    meta(data[:2])
    t_disc, t_meta, t_peer_meta, t_peer_boot = [], [], [], []
    for _ in range(args.reps):
        t = time.perf_counter()
        disc = discrimination(data, args.samples, args.seed)
        t_disc.append(time.perf_counter() - t)
        t = time.perf_counter()
        metas = meta(data)
        t_meta.append(time.perf_counter() - t)
        t = time.perf_counter()
        peer_meta(metas)
        t_peer_meta.append(time.perf_counter() - t)
        t = time.perf_counter()
        peer_bootstrap(data[0][0], args.samples, args.seed)
        t_peer_boot.append((time.perf_counter() - t) * args.collections)
    S = args.systems
    md, mm = statistics.median(t_disc), statistics.median(t_meta)
    pb, pm = statistics.median(t_peer_boot), statistics.median(t_peer_meta)
    print(
        f"{S} systems ({S * (S - 1) // 2} pairs) x {args.collections} collections x "
        f"{args.topics:,} topics, bootstrap {args.samples:,} samples; median of {args.reps} runs"
    )
    print(f"discriminative power (all collections): {md:.2f} s")
    print(f"meta-analysis ({len(metas):,}: DL and PM, diff and d_z): {mm:.2f} s")
    total = md + mm
    print(f"total: {total:.2f} s ({'within' if total < 30 else 'OVER'} the 30 s goal)")
    print(f"  power of the first collections: {', '.join(f'{d.power:.2f}' for d in disc[:5])}")
    print(
        f"peer, per-pair bootstrap loop (1 collection, x {args.collections}): {pb:.2f} s "
        f"({pb / md:.1f}x tierank's)"
    )
    print(
        f"peer, statsmodels combine_effects on the same meta-analyses: {pm:.2f} s "
        f"({pm / mm:.1f}x tierank's)"
    )


if __name__ == "__main__":
    main()
