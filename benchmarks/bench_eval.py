#!/usr/bin/env python
"""End-to-end benchmark of tierank against pytrec_eval, ranx and trm.

Generates deterministic synthetic TREC data (cached under ``--data-dir``), then
runs every tool in a fresh subprocess and measures its wall time and peak
resident memory.  See ``benchmarks/README.md``.

Scales
------
* ``large``: ``--queries`` x ``--docs`` (default 6,980 x 1,000: MS MARCO passage
  dev, ~7M run lines), graded qrels (grades 0-3, ~3 judged docs per query).
  Tools: tierank (Python API, and CLI when available), pytrec_eval, ranx.
* ``small``: ``--small-queries`` x ``--small-docs`` (default 1,000 x 100), binary
  qrels. Tools: tierank (``candidates_only=True, tie_break="input"``) and trm,
  whose convention that is.

Each scale comes in two flavours of the *same* ranking: ``f32`` (float32 scores
written with a float32 round-trip representation) and ``bf16`` (the same scores
rounded to bfloat16: heavy ties).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MEASURES = ["nDCG@10", "AP@100", "RR@10", "R@100", "P@10"]

# tool-specific measure names -> tierank's
PYTREC_MEASURES = {
    "ndcg_cut_10": "nDCG@10",
    "map_cut_100": "AP@100",
    "recip_rank": "RR@10",
    "recall_100": "R@100",
    "P_10": "P@10",
}
RANX_MEASURES = {
    "ndcg@10": "nDCG@10",
    "map@100": "AP@100",
    "mrr@10": "RR@10",
    "recall@100": "R@100",
    "precision@10": "P@10",
}
# trm: one call per cutoff, so it computes exactly these five (metric, k) pairs
TRM_CALLS = [(["ndcg", "mrr", "precision"], 10), (["map", "recall"], 100)]
TRM_MEASURES = {
    "ndcg@10": "nDCG@10",
    "map@100": "AP@100",
    "mrr@10": "RR@10",
    "recall@100": "R@100",
    "precision@10": "P@10",
}

MSMARCO_PASSAGES = 8_841_823
MSMARCO_QID_MAX = 1_200_000


# =============================================================================
# synthetic data
# =============================================================================


def _write_table(table, path: Path) -> None:
    import pyarrow.csv as pacsv

    tmp = path.with_suffix(path.suffix + ".tmp")
    pacsv.write_csv(
        table,
        tmp,
        write_options=pacsv.WriteOptions(
            include_header=False, delimiter=" ", quoting_style="none", batch_size=1 << 16
        ),
    )
    os.replace(tmp, path)  # never leave a half-written file that looks cached


def _const(value: str, n: int):
    import numpy as np
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(np.zeros(n, np.int32), pa.array([value]))


def data_paths(data_dir: Path, nq: int, nd: int, binary: bool) -> dict[str, Path]:
    stem = f"{nq}x{nd}"
    return {
        "f32": data_dir / f"run-{stem}-f32.trec",
        "bf16": data_dir / f"run-{stem}-bf16.trec",
        "qrels": data_dir / (f"qrels-{stem}-binary.trec" if binary else f"qrels-{stem}.trec"),
    }


def generate(data_dir: Path, nq: int, nd: int, seed: int, binary: bool, log) -> dict[str, Path]:
    """Write (once) a float32 run, its bfloat16 twin and qrels; return their paths.

    Model: per query, ``nd`` distinct MS MARCO-like passage ids with scores that
    look like the top of a dense retriever's cosine scores (an exponential tail
    above a per-query threshold: sparse at the top, dense near rank ``nd``), so
    bfloat16 rounding ties few documents at the top and many at the bottom.
    Judged documents: 1 + Poisson(2) per query, the first relevant (grade 1-3),
    the others graded 0-3; each is placed at a rank drawn from an exponential
    whose scale shrinks with the grade (relevant documents rank high), and is
    not retrieved when that rank falls beyond ``nd`` or with probability 0.1.
    """
    paths = data_paths(data_dir, nq, nd, binary)
    if all(p.exists() for p in paths.values()):
        log(f"  cached: {', '.join(p.name for p in paths.values())}")
        return paths

    import ml_dtypes
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    t0 = time.perf_counter()
    data_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(MSMARCO_QID_MAX, size=nq, replace=False)).astype(np.int64)

    # distinct docids per query: redraw the (few) rows with a collision
    docs = rng.integers(0, MSMARCO_PASSAGES, size=(nq, nd), dtype=np.int64)
    while True:
        s = np.sort(docs, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if not len(bad):
            break
        docs[bad] = rng.integers(0, MSMARCO_PASSAGES, size=(len(bad), nd), dtype=np.int64)

    thresh = rng.uniform(0.50, 0.65, size=(nq, 1))
    spread = rng.uniform(0.015, 0.035, size=(nq, 1))
    tail = np.sort(rng.exponential(1.0, size=(nq, nd)), axis=1)[:, ::-1]
    f32 = (thresh + spread * tail).astype(np.float32)  # descending per row
    bf16 = f32.astype(ml_dtypes.bfloat16).astype(np.float32)  # monotone: order kept

    n = nq * nd
    qcol = pa.array(np.repeat(qids, nd))
    dcol = pa.array(docs.ravel())
    rcol = pa.array(np.tile(np.arange(1, nd + 1, dtype=np.int32), nq))
    q0, tag = _const("Q0", n), _const("synthetic", n)
    for flavour, sc in (("f32", f32), ("bf16", bf16)):
        # arrow writes float32 with the shortest string that round-trips float32
        t = pa.table(
            {"q": qcol, "q0": q0, "d": dcol, "r": rcol, "s": pa.array(sc.ravel()), "t": tag}
        )
        _write_table(t, paths[flavour])

    # qrels
    nj = 1 + rng.poisson(2.0, size=nq)
    qi = np.repeat(np.arange(nq), nj)
    first = np.ones(len(qi), dtype=bool)
    first[1:] = qi[1:] != qi[:-1]
    grade = np.where(
        first,
        rng.choice([1, 2, 3], size=len(qi), p=[0.5, 0.3, 0.2]),
        rng.choice([0, 1, 2, 3], size=len(qi), p=[0.5, 0.25, 0.15, 0.1]),
    )
    rank0 = np.floor(rng.exponential(np.array([300.0, 60.0, 20.0, 8.0])[grade])).astype(np.int64)
    retrieved = (rank0 < nd) & (rng.random(len(qi)) >= 0.1)
    docid = np.where(
        retrieved,
        docs[qi, np.minimum(rank0, nd - 1)],
        rng.integers(0, MSMARCO_PASSAGES, size=len(qi)),
    )
    if binary:
        grade = (grade >= 1).astype(np.int64)
    qr = pd.DataFrame({"qi": qi, "d": docid, "g": grade}).drop_duplicates(["qi", "d"], keep="first")
    t = pa.table(
        {
            "q": pa.array(qids[qr["qi"].to_numpy()]),
            "it": _const("0", len(qr)),
            "d": pa.array(qr["d"].to_numpy()),
            "g": pa.array(qr["g"].to_numpy()),
        }
    )
    _write_table(t, paths["qrels"])
    in_run = int(retrieved[qr.index.to_numpy()].sum())
    log(
        f"  generated {nq}x{nd} ({n:,} lines per run, {len(qr):,} judgments, {in_run:,} retrieved) "
        f"in {time.perf_counter() - t0:.1f}s"
    )
    return paths


# =============================================================================
# workers: each runs in its own fresh interpreter
# =============================================================================


def _peak_self_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def _tierank_values(res) -> dict:
    agg = res.aggregate()
    return {
        r["measure"]: {k: float(r[k]) for k in ("oblivious", "expected", "min", "max", "std")}
        for r in agg.to_dict("records")
    }


def worker_tierank(job: dict) -> dict:
    t0 = time.perf_counter()
    import tierank

    t1 = time.perf_counter()
    kw = job.get("kwargs", {})
    res = tierank.evaluate(job["qrels"], job["run"], measures=MEASURES, **kw)
    values = _tierank_values(res)
    t2 = time.perf_counter()
    return {
        "phases": {"import": t1 - t0, "evaluate": t2 - t1},
        "peak_mib_inproc": _peak_self_mib(),
        "values": values,
        "ties": res.ties,
        "n_queries": len(res.qids),
    }


def worker_tierank_split(job: dict) -> dict:
    """Reading alone, then evaluating data already read (a separate process, for the breakdown)."""
    import tierank

    kw = job.get("kwargs", {})
    t0 = time.perf_counter()
    run, qrels = tierank.read_run(job["run"]), tierank.read_qrels(job["qrels"])
    t1 = time.perf_counter()
    tierank.evaluate(qrels, run, measures=MEASURES, **kw).aggregate()
    t2 = time.perf_counter()
    return {
        "phases": {"read only": t1 - t0, "compute only": t2 - t1},
        "peak_mib_inproc": _peak_self_mib(),
    }


def worker_pytrec_eval(job: dict) -> dict:
    t0 = time.perf_counter()
    import pytrec_eval

    t1 = time.perf_counter()
    qrels: dict = {}
    with open(job["qrels"]) as fh:
        for line in fh:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    run: dict = {}
    with open(job["run"]) as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    t2 = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES))
    per_query = ev.evaluate(run)
    values = {
        name: {"oblivious": sum(v[m] for v in per_query.values()) / len(per_query)}
        for m, name in PYTREC_MEASURES.items()
    }
    t3 = time.perf_counter()
    return {
        "phases": {"import": t1 - t0, "read (python)": t2 - t1, "evaluate": t3 - t2},
        "peak_mib_inproc": _peak_self_mib(),
        "values": values,
        "n_queries": len(per_query),
    }


def worker_ranx(job: dict) -> dict:
    t0 = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    t1 = time.perf_counter()
    qrels = Qrels.from_file(job["qrels"], kind="trec")
    run = Run.from_file(job["run"], kind="trec")
    t2 = time.perf_counter()
    res = evaluate(qrels, run, list(RANX_MEASURES))
    values = {RANX_MEASURES[m]: {"oblivious": float(v)} for m, v in res.items()}
    t3 = time.perf_counter()
    peak = _peak_self_mib()
    # not part of the end-to-end figures: the driver subtracts extra_s from the wall
    # time and reports the peak taken above
    evaluate(qrels, run, list(RANX_MEASURES))
    t4 = time.perf_counter()
    return {
        "phases": {
            "import": t1 - t0,
            "read (from_file)": t2 - t1,
            "evaluate (1st, +JIT)": t3 - t2,
            "evaluate (2nd)": t4 - t3,
        },
        "peak_mib_inproc": peak,
        "values": values,
        "n_queries": len(run),
        "extra_s": t4 - t3,
    }


def worker_trm(job: dict) -> dict:
    t0 = time.perf_counter()
    import trm

    t1 = time.perf_counter()
    rel: dict = {}
    with open(job["qrels"]) as fh:
        for line in fh:
            q, _, d, g = line.split()
            rel.setdefault(q, {})[d] = int(g) >= 1
    scores: dict = {}
    labels: dict = {}
    with open(job["run"]) as fh:
        for line in fh:
            q, _, d, _, s, _ = line.split()
            scores.setdefault(q, []).append(float(s))
            labels.setdefault(q, []).append(rel.get(q, {}).get(d, False))
    qs = sorted(q for q in scores if q in rel)  # queries in run and qrels, as tierank
    S, L = [scores[q] for q in qs], [labels[q] for q in qs]
    t2 = time.perf_counter()
    values = {}
    for metrics, k in TRM_CALLS:
        out = trm.evaluate(S, L, metrics=metrics, k_list=[k])
        for m in metrics:
            r = out.metrics[m][k]
            values[TRM_MEASURES[f"{m}@{k}"]] = {
                "oblivious": r.oblivious,
                "expected": r.expected,
                "min": r.minimum,
                "max": r.maximum,
            }
    t3 = time.perf_counter()
    return {
        "phases": {"import": t1 - t0, "read (python)": t2 - t1, "evaluate": t3 - t2},
        "peak_mib_inproc": _peak_self_mib(),
        "values": values,
        "n_queries": len(qs),
    }


WORKERS = {
    "tierank": worker_tierank,
    "tierank-split": worker_tierank_split,
    "pytrec_eval": worker_pytrec_eval,
    "ranx": worker_ranx,
    "trm": worker_trm,
}


def worker_main(spec: str) -> None:
    job = json.loads(spec)
    out = WORKERS[job["tool"]](job)
    Path(job["result"]).write_text(json.dumps(out))


# =============================================================================
# driver
# =============================================================================

_TIME_V = shutil.which("time") if sys.platform.startswith("linux") else None
if _TIME_V is None and os.path.exists("/usr/bin/time"):
    _TIME_V = "/usr/bin/time"


def _launch(
    cmd: list[str], env: dict | None = None, timeout: float | None = None
) -> tuple[float, float | None, str]:
    """Run ``cmd`` in a fresh process: (wall seconds, peak RSS MiB or None, stderr)."""
    full = [_TIME_V, "-v", *cmd] if _TIME_V else cmd
    t0 = time.perf_counter()
    p = subprocess.run(full, capture_output=True, text=True, env=env, timeout=timeout)
    wall = time.perf_counter() - t0
    peak = None
    m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", p.stderr)
    if m:
        peak = int(m.group(1)) / 1024.0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-4000:]}")
    return wall, peak, p.stderr


def run_worker(job: dict, env: dict | None = None, timeout: float | None = None) -> dict:
    with tempfile.TemporaryDirectory() as td:
        job = {**job, "result": os.path.join(td, "result.json")}
        wall, peak, _ = _launch(
            [sys.executable, os.path.abspath(__file__), "--_worker", json.dumps(job)],
            env=env,
            timeout=timeout,
        )
        out = json.loads(Path(job["result"]).read_text())
    out["peak_mib_time_v"] = peak
    if out.get("extra_s"):
        # work done after the end-to-end part (ranx's 2nd evaluate) is left out
        out["wall_s"] = wall - out["extra_s"]
        out["peak_mib"] = out["peak_mib_inproc"]
    else:
        out["wall_s"] = wall
        out["peak_mib"] = peak if peak is not None else out["peak_mib_inproc"]
    return out


def cli_available() -> bool:
    exe = shutil.which("tierank")
    if not exe:
        return False
    try:
        return (
            subprocess.run([exe, "eval", "--help"], capture_output=True, timeout=120).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_cli(paths: dict, flavour: str, timeout: float | None, extra: tuple[str, ...] = ()) -> dict:
    with tempfile.TemporaryDirectory() as td:
        outp = os.path.join(td, "out.jsonl")
        cmd = [shutil.which("tierank"), "eval", str(paths["qrels"]), str(paths[flavour])]
        for m in MEASURES:
            cmd += ["-m", m]
        cmd += [*extra, "--format", "jsonl", "-o", outp]
        wall, peak, _ = _launch(cmd, timeout=timeout)
        values = {}
        try:
            for line in Path(outp).read_text().splitlines():
                rec = json.loads(line)
                if rec.get("query") == "all":
                    values[rec["measure"]] = {
                        k: rec.get(k) for k in ("oblivious", "expected", "min", "max", "std")
                    }
        except (OSError, ValueError, KeyError):
            pass
    return {"wall_s": wall, "peak_mib": peak, "phases": {}, "values": values}


def versions() -> dict:
    from importlib import metadata

    out = {"python": platform.python_version()}
    try:
        git = ["git", "-C", str(REPO)]
        out["tierank_commit"] = (
            subprocess.run(
                [*git, "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            or None
        )
        out["tierank_src_dirty"] = bool(
            subprocess.run(
                [*git, "status", "--porcelain", "--", "src"], capture_output=True, text=True
            ).stdout.strip()
        )
    except OSError:
        pass
    for dist in (
        "tierank",
        "numpy",
        "pyarrow",
        "pandas",
        "pytrec-eval-terrier",
        "ranx",
        "numba",
        "tie-aware-retrieval-metrics",
        "ml_dtypes",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _fmt(x, spec=".2f", width=8) -> str:
    return (
        f"{x:{width}{spec}}" if isinstance(x, (int, float)) and x is not None else f"{'-':>{width}}"
    )


def print_timing_table(rows: list[dict]) -> None:
    print(
        "\n== wall time and peak memory (each tool in a fresh process; wall includes interpreter start) =="
    )
    hdr = f"{'scale':<10} {'flavour':<7} {'tool':<22} {'wall s':>8} {'peak MiB':>9} {'x wall':>7} {'x peak':>7}  phases (s)"
    print(hdr)
    print("-" * len(hdr))
    base = {(r["scale"], r["flavour"]): r for r in rows if r["tool"] == "tierank"}
    for r in rows:
        b = base.get((r["scale"], r["flavour"]))
        xw = r["wall_s"] / b["wall_s"] if b else None
        xp = (
            r["peak_mib"] / b["peak_mib"] if b and r.get("peak_mib") and b.get("peak_mib") else None
        )
        ph = ", ".join(f"{k} {v:.2f}" for k, v in r.get("phases", {}).items())
        print(
            f"{r['scale']:<10} {r['flavour']:<7} {r['label']:<22} {_fmt(r['wall_s'])} "
            f"{_fmt(r.get('peak_mib'), '.0f', 9)} {_fmt(xw, '.2f', 7)} {_fmt(xp, '.2f', 7)}  {ph}"
        )
    print(
        "x wall / x peak: ratio to tierank (Python API) on the same files; > 1 means tierank is faster / leaner."
    )


def agreement(tr: dict | None, other: dict) -> str:
    """One line: largest difference to tierank per statistic, and for tools with their own
    tie order whether their value lies in tierank's [min, max]."""
    if not tr:
        return "no tierank values"
    diffs: dict[str, float] = {}
    outside = []
    for m in MEASURES:
        if other["tool"] == "pytrec_eval" and m == "RR@10":
            continue  # recip_rank has no cutoff
        a, b = tr["values"].get(m, {}), other["values"].get(m, {})
        for k in ("oblivious", "expected", "min", "max"):
            if b.get(k) is not None and a.get(k) is not None:
                diffs[k] = max(diffs.get(k, 0.0), abs(b[k] - a[k]))
        if other["tool"] == "ranx" and b.get("oblivious") is not None:
            if not (a["min"] - 1e-12 <= b["oblivious"] <= a["max"] + 1e-12):
                outside.append(m)
    text = ", ".join(f"max |d {k}| {v:.2e}" for k, v in diffs.items())
    if other["tool"] == "ranx":
        text += "; ranx value inside tierank [min, max] on " + (
            "every measure" if not outside else f"all but {', '.join(outside)}"
        )
    return text


def print_agreement(rows: list[dict], scale: str, flavour: str) -> None:
    sel = [r for r in rows if r["scale"] == scale and r["flavour"] == flavour and r.get("values")]
    if not sel:
        return
    tr = next((r for r in sel if r["tool"] == "tierank"), None)
    print(f"\n== aggregate values, {scale} / {flavour} ==")
    if tr and tr.get("ties"):
        t = tr["ties"]
        print(
            f"tierank tie summary: {t['tied_docs']:,} of {t['docs']:,} docs in ties (share {t['share']:.3f}), "
            f"{t['groups']:,} groups, largest {t['largest']}, {t['queries_with_ties']:,}/{t['queries']:,} queries with ties"
        )
    others = list({r["tool"]: r for r in reversed(sel) if r["tool"] != "tierank"}.values())[::-1]
    short = {"tierank-cli": "CLI", "pytrec_eval": "pytrec_eval", "ranx": "ranx", "trm": "trm"}
    hdr = f"{'measure':<8} {'tr obl':>8} {'tr exp':>8} {'tr min':>8} {'tr max':>8} {'tr std':>8}"
    for o in others:
        hdr += f" | {short.get(o['tool'], o['tool']) + ' obl':>15}"
        if o["tool"] == "trm":
            hdr += f" {'exp':>8} {'min':>8} {'max':>8}"
    print(hdr)
    for m in MEASURES:
        v = (tr or {}).get("values", {}).get(m, {})
        line = f"{m:<8} " + " ".join(
            _fmt(v.get(k), ".4f") for k in ("oblivious", "expected", "min", "max", "std")
        )
        for o in others:
            ov = o["values"].get(m, {})
            line += f" | {_fmt(ov.get('oblivious'), '.4f', 15)}"
            if o["tool"] == "trm":
                line += " " + " ".join(_fmt(ov.get(k), ".4f") for k in ("expected", "min", "max"))
        print(line)
    for o in others:
        print(f"{short.get(o['tool'], o['tool'])}: {agreement(tr, o)}")
    print("tr = tierank.")
    if scale == "large":
        print(
            "note: pytrec_eval's recip_rank has no cutoff (RR, not RR@10); ranx breaks ties its own way;"
            " tierank oblivious uses trec_eval's order (score desc, docno desc)."
        )


def profile_tierank(paths: dict, flavour: str, top: int) -> list[dict]:
    """cProfile tierank.evaluate in a fresh process; return the top entries by cumulative time."""
    code = (
        "import cProfile, pstats, json, sys, io, tierank\n"
        f"MEASURES = {MEASURES!r}\n"
        "pr = cProfile.Profile(); pr.enable()\n"
        "tierank.evaluate(sys.argv[1], sys.argv[2], measures=MEASURES, tie_break='trec_eval').aggregate()\n"
        "pr.disable()\n"
        "st = pstats.Stats(pr); st.sort_stats('cumulative')\n"
        "rows = []\n"
        "for func in st.fcn_list:\n"
        "    cc, nc, tt, ct, _ = st.stats[func]\n"
        "    rows.append({'func': pstats.func_std_string(func), 'ncalls': nc, 'tottime': tt, 'cumtime': ct})\n"
        "json.dump(rows, open(sys.argv[3], 'w'))\n"
    )
    with tempfile.TemporaryDirectory() as td:
        outp = os.path.join(td, "prof.json")
        subprocess.run(
            [sys.executable, "-c", code, str(paths["qrels"]), str(paths[flavour]), outp], check=True
        )
        rows = json.loads(Path(outp).read_text())
    # drop the profiler's own frames and the bare entry point
    rows = [r for r in rows if "disable" not in r["func"]]
    print(f"\n== cProfile of tierank.evaluate, large / {flavour}: top {top} by cumulative time ==")
    print(f"{'cum s':>8} {'self s':>8} {'calls':>7}  function")
    for r in rows[:top]:
        print(f"{r['cumtime']:8.2f} {r['tottime']:8.2f} {r['ncalls']:7d}  {r['func']}")
    by_self = sorted(rows, key=lambda r: -r["tottime"])[:top]
    print(f"-- top {top} by self time --")
    for r in by_self:
        print(f"{r['cumtime']:8.2f} {r['tottime']:8.2f} {r['ncalls']:7d}  {r['func']}")
    return rows[:50]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data-dir", type=Path, default=REPO / "bench-data", help="cache for generated data"
    )
    ap.add_argument(
        "--out", type=Path, default=None, help="results JSON (default DATA_DIR/results.json)"
    )
    ap.add_argument(
        "--queries", type=int, default=6980, help="queries of the large run (default 6980)"
    )
    ap.add_argument(
        "--docs", type=int, default=1000, help="documents per query of the large run (default 1000)"
    )
    ap.add_argument(
        "--small-queries", type=int, default=1000, help="queries of the trm comparison run"
    )
    ap.add_argument(
        "--small-docs", type=int, default=100, help="documents per query of the trm comparison run"
    )
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--flavours", default="f32,bf16", help="comma-separated subset of f32,bf16")
    ap.add_argument(
        "--tools",
        default="tierank,tierank-cli,pytrec_eval,ranx,trm",
        help="comma-separated subset of tierank,tierank-cli,pytrec_eval,ranx,trm",
    )
    ap.add_argument("--skip-large", action="store_true", help="only the small (trm) comparison")
    ap.add_argument("--skip-small", action="store_true", help="only the large comparison")
    ap.add_argument(
        "--no-ranx-cold",
        action="store_true",
        help="skip the ranx run with an empty numba cache (JIT compilation included)",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="also cProfile tierank.evaluate on the large bf16 run",
    )
    ap.add_argument(
        "--timeout", type=float, default=3600.0, help="per-process time limit in seconds"
    )
    ap.add_argument(
        "--reuse",
        type=Path,
        default=None,
        help="a previous results JSON: rows of tools not selected by --tools are taken from it "
        "(same sizes), e.g. to re-time tierank alone without rerunning ranx",
    )
    ap.add_argument("--_worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args._worker:
        worker_main(args._worker)
        return 0

    out_path = args.out or args.data_dir / "results.json"
    flavours = [f for f in args.flavours.split(",") if f]
    tools = set(t for t in args.tools.split(",") if t)

    def log(msg: str) -> None:
        print(msg, flush=True)

    v0 = versions()
    log(
        f"tierank at {v0.get('tierank_commit')}{' (src modified)' if v0.get('tierank_src_dirty') else ''}"
    )
    log(
        f"python {sys.executable}; {os.cpu_count()} CPUs; peak RSS via "
        f"{'/usr/bin/time -v' if _TIME_V else 'getrusage in the worker'}"
    )
    log("generating data (cached)")
    large = (
        None
        if args.skip_large
        else generate(args.data_dir, args.queries, args.docs, args.seed, False, log)
    )
    small = (
        None
        if args.skip_small
        else generate(args.data_dir, args.small_queries, args.small_docs, args.seed + 1, True, log)
    )

    has_cli = "tierank-cli" in tools and cli_available()
    if "tierank-cli" in tools and not has_cli:
        log("tierank CLI (`tierank eval`) not available: skipped")

    rows: list[dict] = []

    def record(scale: str, flavour: str, tool: str, label: str, res: dict) -> None:
        row = {"scale": scale, "flavour": flavour, "tool": tool, "label": label, **res}
        rows.append(row)
        ph = ", ".join(f"{k} {v:.2f}" for k, v in res.get("phases", {}).items())
        log(
            f"  {scale:<6} {flavour:<5} {label:<22} wall {res['wall_s']:7.2f}s  peak "
            f"{res['peak_mib'] or float('nan'):7.0f} MiB  [{ph}]"
        )

    numba_dir = tempfile.mkdtemp(prefix="bench-numba-")
    try:
        if large:
            log(f"large: {args.queries} x {args.docs}")
            for fl in flavours:
                job = {"qrels": str(large["qrels"]), "run": str(large[fl])}
                if "tierank" in tools:
                    kw = {"tie_break": "trec_eval"}
                    res = run_worker({**job, "tool": "tierank", "kwargs": kw}, timeout=args.timeout)
                    res["phases"].update(
                        run_worker(
                            {**job, "tool": "tierank-split", "kwargs": kw}, timeout=args.timeout
                        )["phases"]
                    )
                    record("large", fl, "tierank", "tierank (API)", res)
                if has_cli:
                    record(
                        "large",
                        fl,
                        "tierank-cli",
                        "tierank (CLI)",
                        run_cli(large, fl, args.timeout),
                    )
                if "pytrec_eval" in tools:
                    record(
                        "large",
                        fl,
                        "pytrec_eval",
                        "pytrec_eval",
                        run_worker({**job, "tool": "pytrec_eval"}, timeout=args.timeout),
                    )
                if "ranx" in tools:
                    if not args.no_ranx_cold:
                        # a fresh numba cache: the first evaluate compiles, as on first use
                        cold = tempfile.mkdtemp(prefix="bench-numba-cold-")
                        try:
                            record(
                                "large",
                                fl,
                                "ranx",
                                "ranx (cold JIT)",
                                run_worker(
                                    {**job, "tool": "ranx"},
                                    env={**os.environ, "NUMBA_CACHE_DIR": cold},
                                    timeout=args.timeout,
                                ),
                            )
                        finally:
                            shutil.rmtree(cold, ignore_errors=True)
                    # warm numba cache (populated by a first run in the same cache dir)
                    env = {**os.environ, "NUMBA_CACHE_DIR": numba_dir}
                    if not os.listdir(numba_dir):
                        run_worker(
                            {"tool": "ranx", "qrels": str(large["qrels"]), "run": str(large[fl])}
                            if small is None
                            else {
                                "tool": "ranx",
                                "qrels": str(small["qrels"]),
                                "run": str(small[fl]),
                            },
                            env=env,
                            timeout=args.timeout,
                        )
                    record(
                        "large",
                        fl,
                        "ranx",
                        "ranx (cached JIT)",
                        run_worker({**job, "tool": "ranx"}, env=env, timeout=args.timeout),
                    )
        if small:
            log(f"small: {args.small_queries} x {args.small_docs} (binary qrels, candidates only)")
            for fl in flavours:
                job = {"qrels": str(small["qrels"]), "run": str(small[fl])}
                if "tierank" in tools:
                    kw = {"tie_break": "input", "candidates_only": True}
                    res = run_worker({**job, "tool": "tierank", "kwargs": kw}, timeout=args.timeout)
                    res["phases"].update(
                        run_worker(
                            {**job, "tool": "tierank-split", "kwargs": kw}, timeout=args.timeout
                        )["phases"]
                    )
                    record("small", fl, "tierank", "tierank (API)", res)
                if has_cli:
                    record(
                        "small",
                        fl,
                        "tierank-cli",
                        "tierank (CLI)",
                        run_cli(
                            small, fl, args.timeout, ("--candidates-only", "--tie-break", "input")
                        ),
                    )
                if "trm" in tools:
                    record(
                        "small",
                        fl,
                        "trm",
                        "trm",
                        run_worker({**job, "tool": "trm"}, timeout=args.timeout),
                    )
    finally:
        shutil.rmtree(numba_dir, ignore_errors=True)

    if args.reuse:
        prev = json.loads(args.reuse.read_text())
        pc_ = prev.get("config", {})
        same = {
            "large": (pc_.get("queries"), pc_.get("docs")) == (args.queries, args.docs),
            "small": (pc_.get("small_queries"), pc_.get("small_docs"))
            == (args.small_queries, args.small_docs),
        }
        have = {(r["scale"], r["flavour"], r["label"]) for r in rows}
        order = {"large": 0, "small": 1}
        for r in prev.get("runs", []):
            if (
                same.get(r["scale"])
                and r["flavour"] in flavours
                and r["tool"] not in tools
                and (r["scale"], r["flavour"], r["label"]) not in have
            ):
                rows.append({**r, "reused_from": str(args.reuse)})
        tool_order = ["tierank", "tierank-cli", "pytrec_eval", "ranx", "trm"]
        rows.sort(
            key=lambda r: (
                order[r["scale"]],
                flavours.index(r["flavour"]),
                tool_order.index(r["tool"]),
            )
        )
        log(f"reused {sum('reused_from' in r for r in rows)} rows from {args.reuse}")

    print_timing_table(rows)
    for scale in ("large", "small"):
        for fl in flavours:
            print_agreement(rows, scale, fl)

    prof = None
    if args.profile and large and "bf16" in flavours:
        prof = profile_tierank(large, "bf16", 15)

    result = {
        "config": {
            "queries": args.queries,
            "docs": args.docs,
            "small_queries": args.small_queries,
            "small_docs": args.small_docs,
            "seed": args.seed,
            "measures": MEASURES,
            "data": {
                k: {n: str(p) for n, p in v.items()}
                for k, v in (("large", large), ("small", small))
                if v
            },
        },
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "peak_rss": "/usr/bin/time -v" if _TIME_V else "getrusage",
        },
        "versions": v0,
        "runs": rows,
        "profile_tierank_bf16": prof,
    }
    v1 = versions()
    if (v1.get("tierank_commit"), v1.get("tierank_src_dirty")) != (
        v0.get("tierank_commit"),
        v0.get("tierank_src_dirty"),
    ):
        log("WARNING: tierank's source changed during the benchmark; its rows may mix versions")
        result["versions_at_end"] = v1
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1))
    log(f"\nresults written to {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
