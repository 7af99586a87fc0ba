"""Parsing and duplicate-check timings of ``tierank.io`` on a synthetic TREC run (issue 26).

Generates (once) a run of ``--lines`` lines in /tmp: ``--docs`` documents per query, grouped by
query, bf16-like scores (few distinct values: most documents tied), then times, in this process,
the phases of :func:`tierank.io.readers.read_run` and of a streamed byte range:
``canonical`` on its own, the comment scan of a run with ``#`` in every document id
(``comments_hash_ids``), ``line_count`` (what every streamed byte range paid before issue 26),
``dups`` (the duplicate check), ``read_run`` (all of it), ``parse_block`` and, where it exists,
``line_at_end`` (:class:`LineCounter` on the whole file: what an error's location costs now).
Wall and CPU seconds (best of ``--repeat``) and the load average are printed.

Compare two source trees interleaved, e.g.::

    for i in 1 2 3; do
      PYTHONPATH=/work/main/src python benchmarks/bench_parse.py --label main
      PYTHONPATH=src python benchmarks/bench_parse.py --label new
    done
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def make_run(path: str, lines: int, docs: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    nq = -(-lines // docs)
    q = np.repeat(np.arange(nq), docs)[:lines]
    d = rng.integers(0, 8_000_000, size=lines)
    # bf16-like: 8 bits of mantissa, few exponents -> heavy ties
    s = (rng.integers(0, 256, size=lines) / 256.0 + 1.0) * 2.0 ** rng.integers(-2, 1, size=lines)
    s = np.sort(s.reshape(-1, docs) if lines % docs == 0 else s)[..., ::-1].ravel()
    r = np.tile(np.arange(1, docs + 1), nq)[:lines]
    # distinct documents within a query: add the position (keeps the check honest, no duplicates)
    d = d - d % docs + (np.arange(lines) % docs)
    with open(path + ".tmp", "w") as fh:
        step = 1 << 20
        for c in range(0, lines, step):
            sl = slice(c, c + step)
            fh.write(
                "".join(
                    f"q{a} Q0 doc{b} {k} {v!r} bench\n"
                    for a, b, k, v in zip(
                        q[sl].tolist(), d[sl].tolist(), r[sl].tolist(), s[sl].tolist()
                    )
                )
            )
    os.replace(path + ".tmp", path)


def best(fn, repeat: int) -> tuple[float, float]:
    """The fastest of ``repeat`` calls: wall seconds and CPU seconds (every thread of this process; on
    a shared, loaded machine the CPU time is the steadier figure)."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=7_000_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--label", default=os.environ.get("PYTHONPATH", "?"))
    a = ap.parse_args()
    path = f"/tmp/tierank_bench_{a.lines}_{a.docs}.run"
    if not os.path.exists(path):
        make_run(path, a.lines, a.docs)

    import pyarrow as pa

    from tierank.io import blocks, lexer, readers

    raw = open(path, "rb").read()
    hashed = raw.replace(b" Q0 doc", b" Q0 doc#")
    data = lexer.load(path)
    t = readers._arrow_read(
        pa.py_buffer(data),
        readers._RUN_COLUMNS,
        {
            "qid": readers._QID_DICT,
            "docid": pa.string(),
            "score": pa.float64(),
            "rank": pa.float64(),
        },
        ["qid", "docid", "rank", "score"],
    )
    times = {
        "canonical": best(lambda: lexer.canonical(raw), a.repeat),
        # ``#`` inside every document id (not a comment): the comment scan cannot stop at a first look
        "comments_hash_ids": best(lambda: lexer._blank_comments(hashed), a.repeat),
        "line_count": best(lambda: blocks.line_count(raw), a.repeat),
        "dups": best(lambda: readers._has_duplicates(t), a.repeat),
        "read_run": best(lambda: readers.read_run(path), a.repeat),
        "parse_block": best(lambda: blocks.parse_block(path, raw, 1), a.repeat),
    }
    if hasattr(blocks, "LineCounter"):  # counted only when an error needs it (issue 26)
        times["line_at_end"] = best(lambda: blocks.LineCounter(path).before(len(raw)), a.repeat)
    assert not readers._has_duplicates(t)
    print(
        f"{a.label:8s} lines={a.lines:,} load={os.getloadavg()[0]:.1f} wall/cpu "
        + " ".join(f"{k}={w:.3f}/{c:.3f}s" for k, (w, c) in times.items()),
        flush=True,
    )


if __name__ == "__main__":
    main()
