"""Columnar inputs: Parquet and Arrow IPC (file or stream) runs and qrels.

Nobody keeps a billion-line run as text.  A file whose name ends in ``.parquet``/``.pq`` or
``.arrow``/``.feather``/``.ipc``/``.arrows`` is read with pyarrow and goes through the same
column adapter as DataFrames ([`tierank.io.convert`][tierank.io.convert]): the query, document and score or
relevance columns are found by the names ir_measures, ranx and BEIR use, and every check of the
text readers applies (missing ids, non-finite values, the reserved query id, duplicates), each
refusal naming the file and the row.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from ..errors import Problem, TierankInputError

PARQUET = (".parquet", ".pq")
ARROW = (".arrow", ".feather", ".ipc", ".arrows")


def is_columnar(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a Parquet or Arrow IPC file (by its suffix, case-insensitive).

    >>> is_columnar("run.parquet"), is_columnar("RUN.ARROW"), is_columnar("run.trec.gz")
    (True, True, False)
    """
    return Path(path).suffix.lower() in PARQUET + ARROW


def read_table(path: str | os.PathLike) -> pa.Table:
    """The table stored in a Parquet or Arrow IPC file (IPC file or stream format)."""
    src = str(path)
    if "://" in src:  # any filesystem pyarrow supports
        return _read_uri(src)
    p = Path(path)
    if not p.exists():
        raise TierankInputError([Problem(src, None, "no such file")])
    if p.is_dir():
        raise TierankInputError([Problem(src, None, "is a directory, not a file")])
    try:
        if p.suffix.lower() in PARQUET:
            import pyarrow.parquet as pq

            with pq.ParquetFile(
                p
            ) as f:  # pq.read_table fails on two columns of one name: refused later, named
                return f.read()
        import pyarrow.ipc as ipc

        try:
            with ipc.open_file(p) as reader:
                return reader.read_all()
        except pa.ArrowInvalid:
            with ipc.open_stream(p) as reader:
                return reader.read_all()
    except (pa.ArrowException, OSError) as e:
        kind = "Parquet" if p.suffix.lower() in PARQUET else "Arrow IPC"
        raise TierankInputError([Problem(src, None, f"not a readable {kind} file ({e})")]) from None


def _read_uri(uri: str) -> pa.Table:
    import pyarrow.fs as pafs

    try:
        fs, inner = pafs.FileSystem.from_uri(uri)
        if uri.lower().endswith(PARQUET):
            import pyarrow.parquet as pq

            return pq.read_table(inner, filesystem=fs)
        import pyarrow.ipc as ipc

        with fs.open_input_file(inner) as fh:
            try:
                return ipc.open_file(fh).read_all()
            except pa.ArrowInvalid:
                fh.seek(0)
                return ipc.open_stream(fh).read_all()
    except (pa.ArrowException, OSError, ValueError) as e:
        raise TierankInputError([Problem(uri, None, f"cannot be read ({e})")]) from None


#: the columns of every file `tierank.stream.partition` writes
PARTITION_COLUMNS = ("qid", "docid", "score", "line")


def partition_files(path: str | os.PathLike) -> list[Path] | None:
    """The Parquet files of a folder written by [`tierank.stream.partition`][tierank.stream.partition] (``bucket=N/*.parquet``,
    each with the columns ``qid, docid, score, line``), sorted; None for anything else (a file, another
    folder).  Such a folder holds *one* run, split by query hash: it is read as one run.
    """
    text = str(path)
    if "://" in text:
        return None
    p = Path(path)
    try:
        if not p.is_dir():
            return None
    except (
        OSError
    ):  # a name the file system cannot hold (too long): not a folder; its reader says why
        return None
    entries = [e for e in p.iterdir() if not e.name.startswith(".")]
    if not entries or not all(e.is_dir() and e.name.startswith("bucket=") for e in entries):
        return None
    files = sorted(f for e in entries for f in e.iterdir() if not f.name.startswith("."))
    if not files or not all(f.is_file() and f.suffix.lower() in PARQUET for f in files):
        return None
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(files[0]).names
    except (pa.ArrowException, OSError):
        return None
    return files if tuple(names) == PARTITION_COLUMNS else None


def is_partitioned(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder written by [`tierank.stream.partition`][tierank.stream.partition] (one run)."""
    return partition_files(path) is not None


def read_partitioned(path: str | os.PathLike) -> pa.Table:
    """The one run of a [`tierank.stream.partition`][tierank.stream.partition] folder as a table in the original file's line
    order (``qid, docid, score``): what the partitioned run file itself would give."""
    files = partition_files(path)
    if files is None:
        raise TierankInputError(
            [Problem(str(path), None, "not a folder written by tierank.stream.partition()")]
        )
    tables = [read_table(f) for f in files]
    for f, t in zip(files, tables):
        if tuple(t.column_names) != PARTITION_COLUMNS:
            raise TierankInputError(
                [
                    Problem(
                        str(f),
                        None,
                        f"columns {t.column_names}, expected "
                        f"{', '.join(PARTITION_COLUMNS)} as partition() writes them",
                    )
                ]
            )
    try:
        t = pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowException as e:
        raise TierankInputError(
            [Problem(str(path), None, f"its files do not hold one table ({e})")]
        ) from None
    return t.sort_by([("line", "ascending")]).drop_columns(["line"])
