"""Could another CSV reader parse a worker's byte range faster than Arrow's (issue 26)?

What is left of issue 26's worker goals is CPU per line, and about half of a worker's CPU is Arrow's
``read_csv``.  This script times, on one thread, the readers a tierank worker could call instead, on the
same byte range of the 7M-line bf16 run of ``bench_eval.py`` (whole lines from the start of the file;
``--mib 16,64``: the size of a worker's range with two workers, and of a ``-j 1`` range):

* ``arrow``: ``pyarrow.csv.read_csv`` with tierank's options (``tierank.io.readers``: query and document
  ids as strings, scores as float64; one thread, the serial reader);
* ``polars``: ``polars.read_csv`` of the same three columns with ``POLARS_MAX_THREADS=1``, then
  ``to_arrow()`` (tierank's engine takes Arrow arrays);
* ``duckdb``: DuckDB's ``read_csv`` with ``SET threads = 1``, then ``to_arrow_table()``;
* ``numpy separators``: only the first step of a tokenizer written with numpy, the positions of every
  space and line end (``np.flatnonzero`` in cache-sized pieces): a lower bound for such a tokenizer,
  which must still build the strings and parse the floats;
* ``tierank parse_block``: tierank's whole parse of the range (the UTF-8, comment and separator
  checks, Arrow, the query-id encoding, the finite-score and duplicate checks), for scale, in a process set
  up as a worker is (``tierank.processes.keep_freed_memory``).

Each reader runs in its own fresh process (a thread setting such as ``POLARS_MAX_THREADS`` holds only
when set before the import), imports excluded, and parses the range ``--reps`` times; the rounds are
interleaved (every reader once, then the next round) and the table gives the median over the rounds of
each process's best CPU time (``time.process_time``: user + system of every thread), with the ratio to
Arrow.  Every reader must return the range's number of lines (checked).  A reader whose package is not
installed is listed as skipped, with the install command.

    python benchmarks/bench_tokenizers.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_eval import REPO, generate  # noqa: E402

#: what each reader's process runs: ``data`` (bytes, whole lines) and ``path`` (the same bytes in a file) are set
READERS = {
    "arrow": """
import pyarrow as pa, pyarrow.csv as pacsv
pa.set_cpu_count(1)
def parse():
    return pacsv.read_csv(pa.py_buffer(data), read_options=pacsv.ReadOptions(
            column_names=["qid", "q0", "docid", "rank", "score", "tag"], block_size=1 << 22, use_threads=False),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(column_types={"qid": pa.string(), "docid": pa.string(),
            "score": pa.float64()}, include_columns=["qid", "docid", "score"], strings_can_be_null=False,
            quoted_strings_can_be_null=False, null_values=[], check_utf8=False)).num_rows
""",
    "polars": """
import os
os.environ["POLARS_MAX_THREADS"] = "1"
import io, polars as pl
def parse():
    df = pl.read_csv(io.BytesIO(data), separator=" ", has_header=False, quote_char=None, columns=[0, 2, 4],
                     schema_overrides={"column_1": pl.String, "column_3": pl.String, "column_5": pl.Float64})
    return df.to_arrow().num_rows
""",
    "duckdb": """
import duckdb
con = duckdb.connect()
con.execute("SET threads = 1")
def parse():
    return con.execute("SELECT qid, docid, score FROM read_csv(?, delim = ' ', header = false, quote = '', "
        "escape = '', auto_detect = false, columns = {'qid': 'VARCHAR', 'q0': 'VARCHAR', 'docid': 'VARCHAR', "
        "'rank': 'VARCHAR', 'score': 'DOUBLE', 'tag': 'VARCHAR'})", [path]).to_arrow_table().num_rows
""",
    "numpy separators": """
import numpy as np
def parse():
    b = np.frombuffer(data, np.uint8)
    ends = 0
    for c in range(0, len(b), 1 << 20):
        piece = b[c:c + (1 << 20)]
        sep = piece == 32
        sep |= piece == 10
        at = np.flatnonzero(sep)
        ends += int(np.count_nonzero(piece[at] == 10))
    return ends
""",
    "tierank parse_block": """
import pyarrow as pa
pa.set_cpu_count(1)
from tierank.io.blocks import parse_block
from tierank.processes import keep_freed_memory
keep_freed_memory()  # as a worker process does
def parse():
    return len(parse_block(path, data, 1, ranks=False))
""",
}

INSTALL = {"polars": 'pip install -e ".[polars]"', "duckdb": 'pip install -e ".[scale]"'}

CHILD = """
import json, sys, time
data = open(sys.argv[1], "rb").read()
path = sys.argv[1]
{code}
best = None
for _ in range(int(sys.argv[2])):
    t = time.process_time()
    n = parse()
    cpu = time.process_time() - t
    best = cpu if best is None else min(best, cpu)
print(json.dumps({{"cpu_s": best, "rows": n}}))
"""


def cut(run: Path, mib: int, folder: Path) -> tuple[Path, int]:
    """The first ``mib`` MiB of ``run`` cut back to a whole line, as a file; and its number of lines."""
    out = folder / f"range-{mib}MiB.trec"
    with open(run, "rb") as fh:
        data = fh.read(mib << 20)
    data = data[: data.rfind(b"\n") + 1]
    if not out.exists() or out.stat().st_size != len(data):
        out.write_bytes(data)
    return out, data.count(b"\n")


def available(name: str) -> bool:
    module = {"polars": "polars", "duckdb": "duckdb"}.get(name)
    if module is None:
        return True
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", type=Path, default=REPO / "bench-data")
    ap.add_argument(
        "--mib", default="16,64", help="sizes of the byte range, comma-separated (default 16,64)"
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--reps", type=int, default=3, help="parses per process; its best counts (default 3)"
    )
    args = ap.parse_args(argv)

    paths = generate(
        args.data_dir, 6980, 1000, 0, binary=False, log=lambda m: print(m, file=sys.stderr)
    )
    run = paths["bf16"]
    readers = [r for r in READERS if available(r)]
    skipped = [r for r in READERS if r not in readers]
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    results: dict[tuple[int, str], list[float]] = {}
    sizes = [int(x) for x in args.mib.split(",")]
    ranges = {mib: cut(run, mib, args.data_dir) for mib in sizes}
    for rnd in range(args.rounds):
        for mib in sizes:
            path, lines = ranges[mib]
            for name in readers:
                out = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        CHILD.format(code=READERS[name]),
                        str(path),
                        str(args.reps),
                    ],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                if out.returncode:
                    raise SystemExit(f"{name}: exit {out.returncode}: {out.stderr[-800:]}")
                got = json.loads(out.stdout.strip().splitlines()[-1])
                if got["rows"] != lines:
                    raise SystemExit(f"{name}: {got['rows']} rows, the range has {lines} lines")
                results.setdefault((mib, name), []).append(got["cpu_s"])
        print(f"round {rnd + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr)

    print(
        f"One thread, CPU seconds per range (median over {args.rounds} interleaved rounds of each process's best "
        f"of {args.reps}); load average at the end {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| reader | "
        + " | ".join(f"{m} MiB ({ranges[m][1]:,} lines)" for m in sizes)
        + " | against arrow |"
    )
    print("|---|" + "---:|" * (len(sizes) + 1))
    for name in readers:
        meds = [statistics.median(results[(m, name)]) for m in sizes]
        ratios = [
            statistics.median(results[(m, name)]) / statistics.median(results[(m, "arrow")])
            for m in sizes
        ]
        print(
            f"| {name} | "
            + " | ".join(f"{s:.3f} s" for s in meds)
            + " | "
            + " / ".join(f"{r:.2f}x" for r in ratios)
            + " |"
        )
    for name in skipped:
        print(f"| {name} | skipped: not installed ({INSTALL[name]}) |" + " |" * len(sizes))
    print(
        f"\nmachine: {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
