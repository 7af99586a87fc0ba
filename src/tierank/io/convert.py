"""The one adapter layer: files, DataFrames and dicts in; [`Run`][tierank.io.convert.Run] / [`Qrels`][tierank.io.convert.Qrels] out.

Accepted inputs for a run (and likewise for qrels):

* a path (``str`` or ``os.PathLike``) to a TREC file, plain or gzip, or to a Parquet or Arrow
  IPC file (``.parquet``, ``.arrow``, ``.feather``, ``.ipc``; `tierank.io.columnar`) with
  the columns named as for DataFrames below;
* a pyarrow Table;
* a [`Run`][tierank.io.convert.Run] / [`Qrels`][tierank.io.convert.Qrels] already built;
* a pandas or polars DataFrame with a query column, a document column and a
  score (run) or relevance (qrels) column, named as ir_measures, ranx or BEIR
  name them (``query_id``/``qid``/``query-id``, ``doc_id``/``docno``/``corpus-id``,
  ``score``, ``relevance``/``rel``/``grade``/``label``);
* a folder written by [`tierank.stream.partition`][tierank.stream.partition] (one run, read back in its file's line order);
* ``irds:DATASET_ID``: the qrels of an ir_datasets dataset (`tierank.io.irds`; ``pip install 'tierank[irds]'``);
* a dict of dicts ``{qid: {docid: score_or_grade}}`` as pytrec_eval and ranx take;
* ``ranx.Run`` and ``ranx.Qrels`` objects (read through their ``to_dict()``; ranx is not imported).

Tables and frames are held to what a TREC line can say, so that no input means something a text
file could not: exactly one column per field (``qid`` beside ``query_id``, or ``QID`` beside
``qid``, is refused, naming both); scores and grades are integers, floating-point numbers, decimals
or number text (booleans, dates and other types are refused), none missing or non-finite, and held
exactly by float64 (an integer beyond 2**53 that float64 would round is refused: it could become a
tie that is not in the input); ids are text or integers, never empty and never holding a space, tab
or line end.  BEIR names its grade column ``score``, as runs name theirs: such a table is told
apart by its content ([`table_role`][tierank.io.convert.table_role]), and a run given as qrels is refused with the reason
([`check_roles`][tierank.io.convert.check_roles] does the same for two files, in the command line).
Folders of runs are listed by content, not by name ([`folder_runs`][tierank.io.convert.folder_runs]).

Which source an input is, and how it is read, is decided in one place: [`tierank.io.sources`][tierank.io.sources]
(its registry of source kinds); the checks of tables are `tierank.io.tables`.
"""

from __future__ import annotations

from .model import Qrels, Run
from .sources import RUN_SUFFIXES, check_roles, folder_runs, input_role, read
from .tables import (
    DOC_COLUMNS,
    GRADE_COLUMNS,
    GRADE_FALLBACK,
    JUDGMENT_LEVELS,
    JUDGMENT_RANGE,
    QUERY_COLUMNS,
    RANK_COLUMNS,
    SCORE_COLUMNS,
    table_role,
)


def to_run(obj, source: str | None = None, duplicates: str = "error") -> Run:
    """Convert any accepted run input to a [`Run`][tierank.io.convert.Run].

    ``duplicates="keep"`` accepts a document repeated in a query, as [`tierank.read_run`][tierank.read_run] does
    (for the analysis of a run's defects; evaluation refuses them).

    Examples
    --------
    >>> run = to_run({"q1": {"d1": 0.5, "d2": 0.5}})
    >>> len(run), run.score.tolist()
    (2, [0.5, 0.5])
    """
    if isinstance(obj, Run):
        return obj
    return read(obj, "run", source, duplicates=duplicates)


def to_qrels(obj, source: str | None = None) -> Qrels:
    """Convert any accepted qrels input to a [`Qrels`][tierank.io.convert.Qrels].

    Examples
    --------
    >>> qrels = to_qrels({"q1": {"d1": 2, "d9": 0}})
    >>> qrels.grade.tolist()
    [2.0, 0.0]
    """
    if isinstance(obj, Qrels):
        return obj
    return read(obj, "qrels", source)


__all__ = [
    "DOC_COLUMNS",
    "GRADE_COLUMNS",
    "GRADE_FALLBACK",
    "JUDGMENT_LEVELS",
    "JUDGMENT_RANGE",
    "QUERY_COLUMNS",
    "RANK_COLUMNS",
    "RUN_SUFFIXES",
    "SCORE_COLUMNS",
    "check_roles",
    "folder_runs",
    "input_role",
    "table_role",
    "to_qrels",
    "to_run",
]
