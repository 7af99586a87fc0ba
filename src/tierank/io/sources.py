"""The one door for inputs: every kind of source tierank reads, how it is recognised, read, streamed and named.

A source kind ([`SourceKind`][tierank.io.sources.SourceKind]) says, in one place:

* how to **recognise** it (``recognise(obj) -> bool``; kinds are tried in the order of `KINDS`,
  the first that recognises an input and can read it in the asked role wins);
* how to **read** it in each role it can play (``read[role](obj, source, **options)``; ``"subtopic-qrels"``
  gives a [`SubtopicQrels`][tierank.io.subtopics.SubtopicQrels], read from a text file, a dict of dicts of dicts or one already
  built, and refuses any other input with the reason): ``"run"`` and
  ``"qrels"`` give ``(value, source)`` where the value is a [`Run`][tierank.io.sources.Run] / [`Qrels`][tierank.io.sources.Qrels] already
  built or a table / DataFrame / dict of dicts that `tierank.io.tables` validates; ``"predictions"``
  (MTEB's retrieval predictions) gives ``{(subset, split): Run}``; ``"mteb-qrels"`` (the MTEB
  adapter's qrels) gives a Qrels or ``{(subset, split): Qrels}``;
* whether it can be **streamed**, and how it is split (``split(src, block_bytes)`` yields the tasks of
  [`tierank.stream`][tierank.stream]: ``("run", Run)`` batches, ``("range", src, start, end)`` byte ranges read by
  the workers, or ``("text", src, bytes, first_line)`` blocks, ``first_line`` None: counted by the worker);
* what a folder **expands** to (``expand(path) -> (runs, skipped)``) and how runs are **named**
  ([`name_runs`][tierank.io.sources.name_runs]: the shortest distinguishing path suffix, `tierank.io.naming`).

The kinds: ``built`` (a Run / Qrels), ``subtopics`` (a
[`SubtopicQrels`][tierank.io.subtopics.SubtopicQrels]: read as ``subtopic-qrels``, or as qrels by each document's largest grade), ``irds`` (``irds:DATASET_ID``, qrels of an ir_datasets
dataset, `tierank.io.irds`), ``ranx`` (ranx.Run / ranx.Qrels, through ``to_dict()``),
``mteb-task``, ``mteb-jsonl``, ``mteb-json`` (`tierank.io.mteb_json`), ``partition`` (a folder
written by [`tierank.stream.partition`][tierank.stream.partition]), ``folder`` (a folder of runs), ``columnar``
(Parquet / Arrow IPC), ``text`` (a plain TREC file, local or a pyarrow filesystem URI: cut into byte
ranges), ``text-stream`` (gzip, a pipe, http: decompressed and cut on the fly), ``frame`` (pyarrow
Table, pandas / polars DataFrame) and ``mapping`` (a dict of dicts).

Adding a source is one module with its reader plus one [`SourceKind`][tierank.io.sources.SourceKind] in `KINDS` (or
[`register`][tierank.io.sources.register]).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..errors import Problem, TierankInputError
from . import irds, lexer
from .columnar import PARQUET, is_columnar, is_partitioned, read_partitioned, read_table
from .lexer import parse_number
from .model import Qrels, Run
from .naming import name_runs  # noqa: F401  # re-exported: the runs of a command line, named
from .readers import first_fields, read_qrels, read_run
from .tables import role_parts, table_qrels, table_role, table_run

# The kinds' own modules (MTEB's JSON, subtopics, byte blocks) are imported where a kind reads or
# splits, so that reading a text file pays for none of them.


def _mteb_json():
    from . import mteb_json

    return mteb_json


def _subtopics():
    from . import subtopics

    return subtopics


def _is_subtopic_qrels(obj) -> bool:
    """Whether ``obj`` is a `tierank.io.subtopics.SubtopicQrels` (none exists before its module is
    imported, so the module is not imported to say no)."""
    module = sys.modules.get(f"{__package__}.subtopics")
    return module is not None and isinstance(obj, module.SubtopicQrels)


#: the roles a source is read in (``subtopic-qrels``: the judgments of the intent-aware measures,
#: ``qid subtopic docid grade``, a [`SubtopicQrels`][tierank.io.subtopics.SubtopicQrels])
ROLES = ("run", "qrels", "predictions", "mteb-qrels", "subtopic-qrels")


@dataclass(frozen=True)
class SourceKind:
    """One kind of input source (see the module's documentation)."""

    name: str
    recognise: Callable[[object], bool]
    read: Mapping[str, Callable] = field(default_factory=dict)
    #: (source, block bytes, workers) -> its tasks
    split: Callable[[str, int, int], Iterator[tuple]] | None = None
    expand: Callable[[str | os.PathLike], tuple[list[Path], list[tuple[Path, str]]]] | None = None

    @property
    def streams(self) -> bool:
        """Whether a run of this kind can be evaluated in blocks ([`tierank.stream`][tierank.stream])."""
        return self.split is not None


def _is_path(obj) -> bool:
    return isinstance(obj, (str, os.PathLike))


def _local_dir(obj) -> bool:
    return _is_path(obj) and "://" not in str(obj) and Path(obj).is_dir()


# ------------------------------------------------------------------------------------ text files


def seekable_text(src: str) -> bool:
    """True for a plain text file (not gzip, not a pipe, not Parquet/Arrow), local or behind a pyarrow
    filesystem URI: it can be cut into byte ranges ([`tierank.io.blocks.iter_ranges`][tierank.io.blocks.iter_ranges])."""
    src = str(src)
    if is_columnar(src) or ("://" not in src and not os.path.isfile(src)):
        return False
    if "://" in src and src.startswith(("http://", "https://")):
        return False
    from .blocks import open_random

    try:
        fh, _ = open_random(src)
    except TierankInputError:
        return False
    with fh:
        return not bytes(fh.read(len(lexer.GZIP_MAGIC))).startswith(lexer.GZIP_MAGIC)


def _text_run(obj, source, duplicates: str = "error"):
    return read_run(obj, duplicates=duplicates), source


def _text_qrels(obj, source, **_):
    return read_qrels(obj), source


def _ranges(src: str, block_bytes: int, workers: int = 1) -> Iterator[tuple]:
    from .blocks import iter_ranges

    for start, end in iter_ranges(src, block_bytes, tail=workers if workers > 1 else 0):
        yield ("range", src, start, end)


def _text_blocks(src: str, block_bytes: int, workers: int = 1) -> Iterator[tuple]:
    from .blocks import cut_blocks

    for block in cut_blocks(src, block_bytes):
        yield ("text", src, block, None)  # its lines are counted where it is parsed (a worker)


# -------------------------------------------------------------------------------- tables on disk


def _columnar_table(obj, source, **_):
    return read_table(obj), str(obj)


def _partition_table(obj, source, **_):
    return read_partitioned(obj), str(obj)


def _as_batch(src: str) -> Run:
    t = read_table(src)
    if "line" in t.column_names:  # written by partition(): back to file order
        t = t.sort_by([("line", "ascending")]).drop_columns(["line"])
    return table_run(t, src)


def _parquet_batches(src: str, block_bytes: int, workers: int = 1) -> Iterator[tuple]:
    """One batch per Parquet file of a folder (a [`tierank.stream.partition`][tierank.stream.partition] folder: each holds whole queries)."""
    files = sorted(Path(src).rglob("*.parquet"))
    if not files:
        raise TierankInputError([Problem(src, None, "no Parquet files in this folder")])
    for f in files:
        yield ("run", _as_batch(str(f)))


def _whole_file(src: str, block_bytes: int, workers: int = 1) -> Iterator[tuple]:
    yield ("run", _as_batch(src))


# ---------------------------------------------------------------------------------- in memory


def _ranx(obj) -> bool:
    return type(obj).__module__.startswith("ranx.") and hasattr(obj, "to_dict")


def _ranx_dict(obj, source, **_):
    return obj.to_dict(), source or getattr(obj, "name", None) or f"ranx.{type(obj).__name__}"


def _as_is(obj, source, **_):
    return obj, source


def _frame(obj) -> bool:
    return isinstance(obj, pa.Table) or type(obj).__module__.startswith(("pandas", "polars"))


# ---------------------------------------------------------------------------------- MTEB's JSON


def _json_path(suffix: str) -> Callable[[object], bool]:
    return lambda obj: (
        isinstance(obj, (str, os.PathLike)) and os.fspath(obj).lower().endswith(suffix)
    )


def _predictions_file(
    obj, source, ignore_identical_ids: bool = False, skip_first_result: bool = False
):
    return _mteb_json().read_predictions(
        obj,
        source or os.fspath(obj),
        ignore_identical_ids=ignore_identical_ids,
        skip_first_result=skip_first_result,
    )


def _predictions_dict(
    obj, source, ignore_identical_ids: bool = False, skip_first_result: bool = False
):
    src = source or "predictions"
    mteb = _mteb_json()
    return mteb.columns_of(
        mteb.load_predictions(obj, source=src), src, ignore_identical_ids, skip_first_result
    )


def _through(role: str) -> Callable:
    """A reader giving the value of ``obj`` in ``role`` (read through the door): MTEB's qrels given as a
    TREC/BEIR/Parquet file are read as any qrels."""
    return lambda obj, source, **options: read(obj, role, source, **options)


# ----------------------------------------------------------------------------------- the registry

_FILES: dict[str, Callable] = {
    "run": _text_run,
    "qrels": _text_qrels,
    "mteb-qrels": _through("qrels"),
    "subtopic-qrels": lambda obj, source, **_: _subtopics().read_subtopic_file(obj),
}
_TABLES_ON_DISK: dict[str, Callable] = {
    "run": _columnar_table,
    "qrels": _columnar_table,
    "mteb-qrels": _through("qrels"),
}

#: every source kind, in the order they are tried
KINDS: list[SourceKind] = [
    SourceKind(
        "built", lambda obj: isinstance(obj, (Run, Qrels)), {"run": _as_is, "qrels": _as_is}
    ),
    SourceKind(
        "subtopics",
        _is_subtopic_qrels,
        {
            "subtopic-qrels": lambda obj, source, **_: obj,
            "qrels": lambda obj, source, **_: (obj.plain(), obj.source),
        },
    ),
    SourceKind(
        "irds",
        irds.recognise,
        {"qrels": irds.read_qrels, "run": irds.refuse_run, "mteb-qrels": _through("qrels")},
    ),
    SourceKind("ranx", _ranx, {"run": _ranx_dict, "qrels": _ranx_dict}),
    SourceKind(
        "mteb-task",
        lambda obj: not isinstance(obj, (str, os.PathLike, Mapping)) and _mteb_json().is_task(obj),
        {"mteb-qrels": lambda obj, source, **_: _mteb_json().task_qrels(obj)},
    ),
    SourceKind(
        "mteb-jsonl",
        _json_path(".jsonl"),
        {"mteb-qrels": lambda obj, source, **o: _mteb_json().jsonl_qrels(obj, source, **o)},
    ),
    SourceKind(
        "mteb-json",
        _json_path(".json"),
        {"mteb-qrels": lambda obj, source, **o: _mteb_json().json_qrels(obj, source, **o)},
    ),
    SourceKind("mteb-predictions", _is_path, {"predictions": _predictions_file}),
    SourceKind(
        "partition",
        lambda obj: isinstance(obj, (str, os.PathLike)) and is_partitioned(obj),
        {"run": _partition_table, "qrels": _partition_table, "mteb-qrels": _through("qrels")},
        split=_parquet_batches,
    ),
    # a folder of runs: expanded by the command line, listed by tierank.cluster; streamed as its Parquet files
    SourceKind("folder", _local_dir, split=_parquet_batches, expand=lambda p: folder_runs(p)),
    SourceKind(
        "columnar",
        lambda obj: isinstance(obj, (str, os.PathLike)) and is_columnar(obj),
        _TABLES_ON_DISK,
        split=_whole_file,
    ),
    # a plain text file is read as any text file (text-stream); it differs in how it is split: byte ranges
    # (recognising it opens the file, which a read need not do)
    SourceKind("text", lambda obj: _is_path(obj) and seekable_text(str(obj)), split=_ranges),
    SourceKind("text-stream", _is_path, _FILES, split=_text_blocks),
    SourceKind("frame", _frame, {"run": _as_is, "qrels": _as_is}),
    SourceKind(
        "mapping",
        lambda obj: isinstance(obj, Mapping),
        {
            "run": _as_is,
            "qrels": _as_is,
            "mteb-qrels": lambda obj, source, **_: _mteb_json().nested_qrels(obj, source),
            "predictions": _predictions_dict,
            "subtopic-qrels": lambda obj, source, **_: _subtopics().nested_subtopics(
                obj, source or "qrels"
            ),
        },
    ),
]

#: how an input no kind recognises is read in the roles that give more than a run or qrels (refused, named)
_UNKNOWN: dict[str, Callable] = {
    "predictions": _predictions_dict,
    "mteb-qrels": lambda obj, source, **_: _mteb_json().nested_qrels(obj, source),
}


def register(kind: SourceKind, before: str | None = None) -> None:
    """Add ``kind`` to `KINDS`, before the kind named ``before`` (default: before ``text-stream``,
    which takes any path)."""
    names = [k.name for k in KINDS]
    if kind.name in names:
        raise ValueError(f"source kind {kind.name!r} is registered already")
    KINDS.insert(names.index(before or "text-stream"), kind)


def kind_of(obj, role: str | None = None) -> SourceKind | None:
    """The kind of ``obj``: the first of `KINDS` that recognises it (and reads it as ``role``, if given).

    >>> kind_of("irds:msmarco-passage/dev/small", "qrels").name, kind_of({"q": {"d": 1}}).name
    ('irds', 'mapping')
    """
    for kind in KINDS:
        if (role is None or role in kind.read) and kind.recognise(obj):
            return kind
    return None


def read(obj, role: str, source: str | None = None, **options):
    """``obj`` read as ``role`` (`ROLES`) by its kind; a run or qrels is validated
    (`tierank.io.tables.table_run` / `table_qrels`), its errors naming
    ``source`` (default: the path, or the role).

    >>> read({"q1": {"d1": 2}}, "qrels").grade.tolist()
    [2.0]
    """
    kind = kind_of(obj, role)
    if role == "subtopic-qrels":
        # a columnar file, a folder, a dataset: no subtopic column is read from them
        tabular = _is_path(obj) and (is_columnar(obj) or _local_dir(obj) or irds.recognise(obj))
        if kind is None or tabular:
            raise TierankInputError(
                [Problem(_shown(obj, source), None, f"{_PLAIN} ({_what(obj)} given)")]
            )
        return kind.read[role](obj, source, **options)
    if role not in (
        "run",
        "qrels",
    ):  # what no kind reads is refused by the dict reader, naming its type
        return (kind.read[role] if kind is not None else _UNKNOWN[role])(obj, source, **options)
    if kind is not None:
        obj, source = kind.read[role](obj, source, **options)
    if role == "run":
        return (
            obj
            if isinstance(obj, Run)
            else table_run(obj, source or "run", options.get("duplicates", "error"))
        )
    return obj if isinstance(obj, Qrels) else table_qrels(obj, source or "qrels")


#: why an input that holds no subtopic is refused where subtopic qrels are needed
_PLAIN = "the intent-aware measures need subtopic qrels (qid subtopic docid grade)"


def _shown(obj, source: str | None) -> str:
    if source:
        return source
    if isinstance(obj, Qrels):
        return obj.source
    return os.fspath(obj) if _is_path(obj) else "qrels"


def _what(obj) -> str:
    """An input that cannot hold subtopics, in words."""
    if isinstance(obj, Qrels):
        return "plain qrels: one grade per document"
    if _is_path(obj):
        return "a columnar file, a folder or a dataset"
    return f"a {type(obj).__module__.split('.')[0]}.{type(obj).__name__}"


# ---------------------------------------------------------------------------------------- streaming


def stream_kind(src: str | os.PathLike) -> SourceKind | None:
    """The kind that splits the run source ``src`` for streaming: the first of `KINDS` with a ``split``
    that recognises it."""
    return next((k for k in KINDS if k.split is not None and k.recognise(str(src))), None)


def tasks(run_path, block_bytes: int | None = None, workers: int = 1) -> Iterator[tuple]:
    """The tasks [`tierank.stream`][tierank.stream] evaluates a run source in, split as its kind says (any other
    path is read as text, decompressed and cut on the fly).  ``workers``: how many processes will
    evaluate them (a plain file's last ranges then shrink, so that the workers finish together:
    [`tierank.io.blocks.iter_ranges`][tierank.io.blocks.iter_ranges]).  ``block_bytes``: default
    `tierank.io.blocks.BLOCK_BYTES`."""
    from .blocks import BLOCK_BYTES

    src = str(run_path)
    kind = stream_kind(src)
    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    yield from (kind.split if kind is not None and kind.split is not None else _text_blocks)(
        src, block_bytes, workers
    )


def batches_of(run_path: str | os.PathLike, block_bytes: int | None = None) -> Iterator[Run]:
    """Query-aligned batches of any run source: a TREC text file ([`tierank.io.blocks.iter_batches`][tierank.io.blocks.iter_batches]),
    a folder written by [`tierank.stream.partition`][tierank.stream.partition] (one batch per Parquet file, each holding whole
    queries), or one Parquet/Arrow file (read whole: columnar files are compact; split them with
    [`tierank.stream.partition`][tierank.stream.partition]).  ``block_bytes``: default
    `tierank.io.blocks.BLOCK_BYTES`."""
    from .blocks import BLOCK_BYTES, iter_batches

    block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
    text = str(run_path)
    split = next(
        (
            k.split
            for k in KINDS
            if k.split in (_parquet_batches, _whole_file) and k.recognise(text)
        ),
        None,
    )
    if split is None:
        yield from iter_batches(text, block_bytes)
        return
    for task in split(text, block_bytes):
        yield task[1]


#: a single text run larger than this is streamed by default (all cores); smaller ones fit one block
AUTO_STREAM_BYTES = 64 << 20


def stream_by_default(path: str | os.PathLike, limit: int = AUTO_STREAM_BYTES) -> bool:
    """Whether the run file ``path`` is large enough to be streamed when no one asked: a local plain or
    gzip text file of more than ``limit`` bytes of text (gzip counted four times its size); a small file,
    a columnar file, a folder or a pipe is read in memory."""
    p = Path(path)
    if not p.is_file() or is_columnar(str(p)):
        return False
    try:
        with open(p, "rb") as fh:
            gz = fh.read(2).startswith(lexer.GZIP_MAGIC)
    except OSError:
        return False  # the reader reports it, with the file's name
    return p.stat().st_size * (4 if gz else 1) > limit


def hold(path: str | os.PathLike, stream_over: int | None = None):
    """The run source ``path`` for an evaluation in memory: a local text file (plain, gzip, a pipe)
    opened and read once (`tierank.io.lexer.Held`; its role, its size and
    the tag of its last line then come from that one read, and its reader takes the bytes), unless
    it is a regular file of more than ``stream_over`` bytes of text (gzip counted four times its
    size; see [`stream_by_default`][tierank.io.sources.stream_by_default]): then only opened, to be
    streamed (``streams``).  Any other source is given back as it is."""
    kind = kind_of(path, "run")
    if kind is None or kind.read.get("run") is not _text_run or "://" in str(path):
        return path
    return lexer.Held(path, stream_over)


# ------------------------------------------------------------------------------------------- roles


def _schema_table(path) -> pa.Table | None:
    """An empty table with the columns of the columnar file at ``path`` (its schema only; a local
    file), or None when the schema cannot be read that way."""
    if "://" in str(path):
        return None
    try:
        if str(path).lower().endswith(PARQUET):
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
        else:
            import pyarrow.ipc as ipc

            try:
                with ipc.open_file(path) as reader:
                    schema = reader.schema
            except pa.ArrowInvalid:
                with ipc.open_stream(path) as reader:
                    schema = reader.schema
    except (pa.ArrowException, OSError, ValueError):
        return None
    return pa.Table.from_arrays(
        [pa.array([], f.type) for f in schema], schema=schema
    )  # a name given twice kept


def _column(path, name: str) -> pa.Table:
    """The one column ``name`` of a local columnar file (an Arrow IPC file memory-mapped, not read)."""
    if str(path).lower().endswith(PARQUET):
        import pyarrow.parquet as pq

        return pq.read_table(path, columns=[name])
    import pyarrow.ipc as ipc

    try:  # the map stays open while the column's buffers are referenced
        return ipc.open_file(pa.memory_map(str(path))).read_all().select([name])
    except pa.ArrowInvalid:
        return read_table(path).select([name])


def _columnar_role(path: str | os.PathLike) -> tuple[str | None, str]:
    """[`table_role`][tierank.io.sources.table_role] of a Parquet/Arrow file, reading its schema and at most one column."""
    empty = _schema_table(path)
    if empty is None:
        try:
            return table_role(read_table(path))
        except (TierankInputError, pa.ArrowException, ValueError):
            return None, ""
    role, why, shared = role_parts(empty)
    if shared is None:
        return role, why
    try:
        return table_role(_column(path, shared))
    except (TierankInputError, pa.ArrowException, OSError, ValueError, KeyError):
        return None, ""


def input_role(path: str | os.PathLike) -> tuple[str | None, str]:
    """Whether the file at ``path`` holds a run or qrels: ``("run" | "qrels" | None, why)``.

    A Parquet/Arrow file by its columns and content ([`tierank.io.tables.table_role`][tierank.io.tables.table_role]; its schema
    and at most one column read), a folder written by [`tierank.stream.partition`][tierank.stream.partition] is a run, a
    text file by its first line (6 fields: a run; 3 or 4: qrels).  Unreadable inputs give
    ``(None, "")``: their reader says what is wrong."""
    if "://" in str(path):
        return None, ""  # remote: read once, by its reader
    try:
        if is_partitioned(path):
            return "run", "it is a folder written by tierank.stream.partition()"
        if not os.path.isfile(path):
            # a pipe is read once, by its reader (a peek would hold it all in memory)
            return None, ""
        if is_columnar(path):
            return _columnar_role(path)
        fields = first_fields(path)  # a file read once already (`hold`): from its bytes
    except TierankInputError:
        return None, ""
    if not lexer.is_text(fields):
        return None, "not a TREC file: its first line is binary data, not text"
    n = len(fields) if fields else 0
    if n == 6:
        return "run", "its first line has 6 fields (qid Q0 docid rank score tag)"
    if n in (3, 4):
        return (
            "qrels",
            f"its first line has {n} fields (qid iter docid grade, or BEIR's query-id corpus-id score)",
        )
    return None, f"its first line has {n} fields"


def role_shared(path) -> bool:
    """True if the columnar file's role rests on the content of BEIR's shared ``score`` column (its schema read)."""
    t = _schema_table(path)
    if t is None:
        try:
            t = read_table(path)
        except (TierankInputError, pa.ArrowException, OSError, ValueError):
            return False
    return role_parts(t)[2] is not None


def check_roles(qrels: str | os.PathLike, *runs: str | os.PathLike) -> None:
    """Refuse a qrels file and a run file given in each other's place, or that cannot be told apart
    (each of ``runs`` against ``qrels``, whose role is found once).

    Raises
    ------
    TierankInputError
        ``did you swap QRELS and RUN?`` when the qrels look like a run and a run like qrels; a
        refusal with the reason when both are tables whose shared ``score`` column holds only small
        integers (either could be the run).
    """
    if not runs:
        return
    rq, wq = input_role(qrels)
    for run in runs:
        _check_pair(qrels, rq, wq, run)


def _check_pair(qrels: str | os.PathLike, rq: str | None, wq: str, run: str | os.PathLike) -> None:
    """`check_roles` for one run, the qrels' role ``rq`` (why: ``wq``) found already."""
    rr, wr = input_role(run)
    if rq == "run" and rr == "qrels":
        raise TierankInputError(
            f"did you swap QRELS and RUN? {qrels} looks like a run ({wq}) and {run} like "
            f"qrels ({wr})"
        )
    if (
        rq == rr == "qrels"
        and is_columnar(qrels)
        and is_columnar(run)
        and all(role_shared(p) for p in (qrels, run))
    ):
        raise TierankInputError(
            f"cannot tell the run from the qrels: {qrels} ({wq}) and {run} ({wr}) could each be "
            "either; name the qrels' grade column 'relevance' (or give the run a 'rank' column)"
        )


# ------------------------------------------------------------------------------- folders of runs

#: file names that were read as runs by their suffix alone: such a file is always read (its reader
#: says what is wrong with it), whatever its first line; `list_files` lists the files with them
RUN_SUFFIXES = (
    ".parquet",
    ".pq",
    ".arrow",
    ".feather",
    ".ipc",
    ".arrows",
    ".trec",
    ".txt",
    ".run",
    ".gz",
    ".tsv",
)

_MAGIC = {b"PAR1": ("a Parquet file", ".parquet"), b"ARROW1": ("an Arrow IPC file", ".arrow")}


def _run_or_why(f: Path) -> str | None:
    """None if the file ``f`` is to be read as a run, else why it is skipped."""
    if f.name.startswith("."):
        return "hidden file"
    known = f.name.lower().endswith(RUN_SUFFIXES)
    if is_columnar(f):
        role, why = input_role(f)
        # by a grade column's name only: a run of small integer scores in BEIR's 'score' column is a run here
        return (
            f"looks like qrels, not a run ({why})"
            if role == "qrels" and not role_shared(f)
            else None
        )
    try:
        with open(f, "rb") as fh:
            head = fh.read(8)
    except OSError as e:
        return None if known else f"cannot be read ({e.strerror or e})"
    for magic, (kind, suffix) in _MAGIC.items():
        if head.startswith(magic):
            return None if known else f"{kind} without its suffix: name it *{suffix} to read it"
    try:
        fields = first_fields(f)
    except TierankInputError as e:
        return None if known else f"cannot be read ({e.problems[0].reason})"
    if fields is None:
        return None if known else "empty file"
    if not lexer.is_text(fields):
        return None if known else "not a TREC file: its first line is binary data, not text"
    if len(fields) >= 6 and parse_number(fields[4]) is not None:
        return None
    role = (
        "qrels" if len(fields) in (3, 4) and parse_number(fields[-1]) is not None else "not a run"
    )
    if known and role != "qrels":
        return None  # read as a run: its reader says which lines are wrong
    return (
        f"{role}: its first line has {len(fields)} field{'s' * (len(fields) != 1)}, a run line 6 "
        "(qid Q0 docid rank score tag)"
    )


def folder_runs(folder: str | os.PathLike) -> tuple[list[Path], list[tuple[Path, str]]]:
    """``(runs, skipped)``: the run files under ``folder`` (recursively, sorted) and the files left out,
    each with why.

    Every regular file that parses as a run is a run, whatever its name (TREC submissions are often
    called ``input.NAME``): a Parquet/Arrow file that is not qrels, or a text file (plain or gzip) whose
    first line is a run line (6 fields, the 5th a number).  A file with a usual run suffix
    (`RUN_SUFFIXES`) is always read, so that a broken one is reported, not skipped.  Hidden
    files, files inside hidden folders and other files are skipped and listed.  A folder written by
    [`tierank.stream.partition`][tierank.stream.partition] inside ``folder`` is one run.
    """
    root = Path(folder)
    runs: list[Path] = []
    skipped: list[tuple[Path, str]] = []

    def walk(d: Path) -> None:
        for e in sorted(d.iterdir()):
            if e.name.startswith("."):
                skipped.append((e, "hidden folder" if e.is_dir() else "hidden file"))
            elif e.is_dir():
                if is_partitioned(e):
                    runs.append(e)
                else:
                    walk(e)
            elif not e.is_file():
                skipped.append((e, "not a regular file"))
            else:
                why = _run_or_why(e)
                if why is None:
                    runs.append(e)
                else:
                    skipped.append((e, why))

    walk(root)
    return runs, skipped


def expand_runs(paths: Iterable[Path], note: Callable[[str], None]) -> list[Path]:
    """The run files of ``paths``: files as given, a folder expanded by its kind ([`folder_runs`][tierank.io.sources.folder_runs]: every
    file that parses as a run, sorted; what is skipped goes to ``note``, with why), a folder written by
    [`tierank.stream.partition`][tierank.stream.partition] as one run."""
    files: list[Path] = []
    for p in paths:
        kind = next(
            (k for k in KINDS if ("run" in k.read or k.expand is not None) and k.recognise(p)), None
        )
        if kind is not None and kind.expand is not None:
            found, skipped = kind.expand(p)
            for f, why in skipped:
                note(f"{f}: skipped: {why}")
            if not found:
                raise TierankInputError(
                    f"{p}: no run files in this folder (a run file's first line is qid Q0 "
                    "docid rank score tag; Parquet/Arrow files with a score column)"
                )
            files.extend(found)
        else:
            files.append(p)
    return files


def list_files(source: str | os.PathLike | Iterable) -> list[str]:
    """The run files of ``source`` for workers that read them themselves ([`tierank.cluster`][tierank.cluster]): a list
    as given, one file, or the files under a folder (local or a pyarrow filesystem URI) whose names end
    in `RUN_SUFFIXES`, sorted (by name: a remote folder is not opened file by file)."""
    if not isinstance(source, (str, os.PathLike)):
        return [str(s) for s in source]
    text = str(source)
    import pyarrow.fs as pafs

    try:
        fs, root = (
            pafs.FileSystem.from_uri(text)
            if "://" in text
            else (pafs.LocalFileSystem(), str(Path(text).resolve()))
        )
        info = fs.get_file_info(root)
    except (OSError, ValueError) as e:
        raise TierankInputError([Problem(text, None, f"cannot be opened ({e})")]) from None
    if info.type == pafs.FileType.NotFound:
        raise TierankInputError([Problem(text, None, "no such file or folder")])
    if info.type == pafs.FileType.File:
        return [text]
    files = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    prefix = text.split("://", 1)[0] + "://" if "://" in text else ""
    out = sorted(
        prefix + f.path
        for f in files
        if f.type == pafs.FileType.File
        and f.path.lower().endswith(RUN_SUFFIXES)
        and not Path(f.path).name.startswith(".")
    )
    if not out:
        raise TierankInputError(
            [Problem(text, None, f"no run files in this folder ({', '.join(RUN_SUFFIXES)})")]
        )
    return out


# ------------------------------------------------------------------------------------------- naming


__all__ = [
    "AUTO_STREAM_BYTES",
    "KINDS",
    "ROLES",
    "RUN_SUFFIXES",
    "SourceKind",
    "batches_of",
    "check_roles",
    "expand_runs",
    "folder_runs",
    "hold",
    "input_role",
    "kind_of",
    "list_files",
    "name_runs",
    "read",
    "register",
    "role_shared",
    "seekable_text",
    "stream_by_default",
    "stream_kind",
    "tasks",
]
