"""A run not grouped by query, written grouped by query out of core with DuckDB ([`partition`][tierank.stream.partitioning.partition])."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import Problem, TierankInputError

__all__ = ["partition"]


def partition(
    run_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    buckets: int = 64,
    memory_limit: str = "1GB",
    temp_dir: str | os.PathLike | None = None,
) -> Path:
    """Write the TREC run at ``run_path`` (plain or gzip) grouped by query, out of core, with DuckDB.

    DuckDB reads the lines (whitespace-separated fields, as the TREC readers split them) with
    their line numbers and writes one Parquet file per query-hash bucket (``COPY ...
    PARTITION_BY``), under ``memory_limit`` and spilling to ``temp_dir``.  Each file holds whole
    queries; `batches_of` reads them back in (query, line) order, so file order inside ties
    (``tie_break="input"``) is kept.  Comment lines (``#`` first) are skipped, as trec_eval does.
    Lines without 6 fields or with a score that is not a finite
    number are refused with their line numbers.  Returns ``out_dir``, which must not exist or be
    empty.  Needs ``pip install 'tierank[scale]'``.
    """
    try:
        import duckdb
    except ImportError:
        raise TierankInputError("partitioning needs DuckDB: pip install 'tierank[scale]'") from None
    src = str(run_path)
    if not Path(run_path).is_file():
        raise TierankInputError([Problem(src, None, "no such file")])
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TierankInputError(
            f"{out}: exists and is not an empty folder; partition writes a new folder"
        )
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    if temp_dir is not None:
        con.execute(f"SET temp_directory = '{Path(temp_dir).as_posix()}'")
    lit = "'" + src.replace("'", "''") + "'"
    con.execute("SET enable_progress_bar = false")
    lines = (
        f"read_csv({lit}, columns={{'l': 'VARCHAR'}}, delim='\x01', quote='', escape='', header=false, "
        "auto_detect=false, strict_mode=false)"
    )
    # fields split on runs of spaces and tabs (the readers' grammar); plain single spaces, the usual
    # layout, take the fast split
    irregular = (
        con.execute(
            f"SELECT bool_or(contains(l, '\t') OR contains(l, '  ') OR starts_with(l, ' ') "
            f"OR ends_with(l, ' ') OR contains(l, '\r')) FROM {lines}"
        ).fetchone()
        or (None,)
    )[0]
    split = (
        "string_split_regex(trim(l, ' \t\r'), '[ \t]+')" if irregular else "string_split(l, ' ')"
    )
    con.execute(
        f"CREATE TEMP VIEW lines AS SELECT row_number() OVER () AS line, {split} AS f FROM {lines}"
    )
    bad = con.execute("""SELECT line, len(f) FROM lines
        WHERE trim(f[1]) <> '' AND NOT starts_with(trim(f[1]), '#') AND (len(f) < 6 OR TRY_CAST(f[5] AS DOUBLE) IS NULL
                                    OR NOT isfinite(TRY_CAST(f[5] AS DOUBLE)))
        ORDER BY line LIMIT 5""").fetchall()
    if bad:
        raise TierankInputError(
            [
                Problem(
                    src,
                    int(line),
                    "expected 6 fields (qid Q0 docid rank score tag)"
                    if n < 6
                    else "score is not a finite number",
                )
                for line, n in bad
            ]
        )
    out.mkdir(parents=True, exist_ok=True)
    dest = "'" + out.as_posix().replace("'", "''") + "'"
    con.execute(f"""COPY (SELECT f[1] AS qid, f[3] AS docid, CAST(f[5] AS DOUBLE) AS score, line,
                         hash(f[1]) % {int(buckets)} AS bucket
                  FROM lines WHERE trim(f[1]) <> '' AND NOT starts_with(trim(f[1]), '#')) TO {dest}
                  (FORMAT parquet, PARTITION_BY (bucket), OVERWRITE_OR_IGNORE)""")
    return out
