"""Columnar inputs: Parquet and Arrow IPC (file or stream) runs and qrels.

Nobody keeps a billion-line run as text.  A file whose name ends in ``.parquet``/``.pq`` or
``.arrow``/``.feather``/``.ipc``/``.arrows`` is read with pyarrow and goes through the same
column adapter as DataFrames (:mod:`tierank.io.convert`): the query, document and score or
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

            return pq.read_table(p)
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
