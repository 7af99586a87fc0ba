"""ir_datasets as a source of qrels: ``irds:DATASET_ID``, as ranx and PyTerrier name them.

``tierank eval irds:msmarco-passage/dev/small run.trec`` (or ``tierank.evaluate("irds:...", run, ...)``)
reads the judgments of the dataset through ``ir_datasets.load(DATASET_ID).qrels_iter()``: each
``(query_id, doc_id, relevance)`` goes through the same checks as any table (`tierank.io.tables`).
ir_datasets downloads a dataset's files on first use, into its own cache (``IR_DATASETS_HOME``).
The package is optional (``pip install 'tierank[irds]'``); without it, one line names the install.

Whatever fails while ir_datasets loads or reads is one line naming the dataset and the reason: a
cache folder (``IR_DATASETS_HOME``) it cannot use, a download that fails, a line of its cached qrels
file it cannot parse (the file and line, where the file is plain text), a qrels file with no
judgments.  ir_datasets' own log lines (``[INFO] ...``, ``[WARNING] ...``) are held back while it
works: when the read fails its last warning goes into that line instead, and when it succeeds they
are passed on to ir_datasets' own handlers (on stderr) as they would have been.

Registered as the ``irds`` kind of [`tierank.io.sources`][tierank.io.sources]: this module and that entry are all it takes.
"""

from __future__ import annotations

import codecs
import logging
import os

import pyarrow as pa

from ..errors import Problem, TierankInputError
from ..extras import require

#: how a source names an ir_datasets dataset
PREFIX = "irds:"


def recognise(obj) -> bool:
    """Whether ``obj`` names an ir_datasets dataset (``irds:DATASET_ID``).

    >>> recognise("irds:msmarco-passage/dev/small"), recognise("qrels.txt")
    (True, False)
    """
    return isinstance(obj, (str, os.PathLike)) and os.fspath(obj).startswith(PREFIX)


def dataset_id(obj) -> str:
    """The dataset id of ``irds:DATASET_ID``, refused when empty."""
    text = os.fspath(obj)
    ident = text[len(PREFIX) :].strip()
    if not ident:
        raise TierankInputError(
            [
                Problem(
                    text,
                    None,
                    "no dataset id: give irds:DATASET_ID (e.g. irds:msmarco-passage/dev/small)",
                )
            ]
        )
    return ident


def read_qrels(obj, source: str | None = None, **_) -> tuple[pa.Table, str]:
    """``(table, source)``: the dataset's qrels as a table ``query_id, doc_id, relevance``, named
    ``irds:DATASET_ID`` in errors."""
    ident = dataset_id(obj)
    source = source or f"{PREFIX}{ident}"
    with _HeldLogs() as logs:
        try:
            irds = require("ir_datasets", extra="irds", what=f"{PREFIX}{ident}")
        except OSError as e:  # its datasets are defined at import, under IR_DATASETS_HOME
            home = os.environ.get("IR_DATASETS_HOME", "~/.ir_datasets")
            raise _error(
                source,
                f"ir_datasets cannot use its cache folder IR_DATASETS_HOME={home} "
                f"({_os_reason(e)}); point IR_DATASETS_HOME at a folder it can write",
            ) from None
        try:
            ds = irds.load(ident)
        except KeyError:
            raise _error(
                source,
                f"ir_datasets has no dataset {ident!r} (see https://ir-datasets.com for the ids)",
            ) from None
        except (
            OSError,
            ValueError,
            RuntimeError,
        ) as e:  # its cache, a file it reads to know the dataset
            reason = _os_reason(e) if isinstance(e, OSError) else str(e) or type(e).__name__
            raise _error(source, f"ir_datasets cannot load the dataset: {reason}") from None
        has = getattr(ds, "has_qrels", None)
        if not (has() if callable(has) else hasattr(ds, "qrels_iter")):
            raise _error(
                source,
                f"dataset {ident!r} has no qrels (pick a split that "
                "has judgments, e.g. .../dev or .../test)",
            )
        qids: list[str] = []
        docids: list[str] = []
        grades: list[int] = []
        try:
            for q in ds.qrels_iter():
                qids.append(str(q.query_id))
                docids.append(str(q.doc_id))
                grades.append(q.relevance)
        except MemoryError:
            raise
        except Exception as e:  # ir_datasets' own errors: one line, never a traceback
            raise _read_failure(
                ds, source, e, len(qids), qids[-1] if qids else None, logs
            ) from None
        if not qids:
            path = _cached_path(ds)
            where = (
                f" (its cached file {path} is empty: delete it to download it again)"
                if path
                else ""
            )
            raise _error(source, f"empty qrels: ir_datasets gives no judgments{where}")
        logs.keep()
    return pa.table(
        {
            "query_id": pa.array(qids, pa.string()),
            "doc_id": pa.array(docids, pa.string()),
            "relevance": pa.array(grades),
        }
    ), source


def _error(source: str, reason: str, line: int | None = None) -> TierankInputError:
    return TierankInputError([Problem(source, line, reason)])


def _os_reason(e: OSError) -> str:
    """``[Errno 2] No such file or directory: '/x'`` as ``No such file or directory: /x``."""
    if isinstance(e, (FileExistsError, NotADirectoryError)) and e.filename:
        return f"{e.filename} is not a folder"
    if e.strerror:
        return f"{e.strerror}: {e.filename}" if e.filename else e.strerror
    return str(e) or type(e).__name__


class _HeldLogs(logging.Filter):
    """Holds the records of ir_datasets' logger while in use; `keep` passes them on afterwards
    to its handlers, otherwise (a failure) they are dropped and `warning` is the last warning."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.logger = logging.getLogger("ir_datasets")
        self._keep = False

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False

    @property
    def warning(self) -> str | None:
        found = [r.getMessage() for r in self.records if r.levelno >= logging.WARNING]
        return found[-1] if found else None

    def keep(self) -> None:
        self._keep = True

    def __enter__(self) -> _HeldLogs:
        self.logger.addFilter(self)
        return self

    def __exit__(self, *exc) -> None:
        self.logger.removeFilter(self)
        if self._keep:
            for record in self.records:
                self.logger.handle(record)


def _cached_path(ds) -> str | None:
    """The file ir_datasets read the qrels from, when it is one file already on disk (no download)."""
    try:
        path = ds.qrels_path()
    except Exception:
        return None
    return (
        os.fspath(path) if isinstance(path, (str, os.PathLike)) and os.path.isfile(path) else None
    )


#: the first bytes of a compressed file: no line of it can be shown
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"PK\x03\x04")


def _locate(path: str, good: int, last_qid: str | None) -> tuple[int, str] | None:
    """``(line number, text)`` of the line after the first ``good`` judgments of the plain text file
    ``path``, read as ir_datasets' TREC reader reads it (UTF-8, a line ``\\n`` alone skipped); None
    when the file is compressed, or the line before is not the judgment of ``last_qid`` (another
    format: the count would not match)."""
    with open(path, "rb") as f:
        if f.read(8).startswith(_COMPRESSED):
            return None
        f.seek(0)
        seen, previous = 0, None
        for number, line in enumerate(codecs.getreader("utf8")(f, "replace"), 1):
            if line == "\n":
                continue
            if seen == good:
                fields: list[str] = previous.split() if previous is not None else []
                if good and (not fields or fields[0] != last_qid):
                    return None
                return number, line.rstrip("\r\n")
            seen, previous = seen + 1, line
    return None


def _first_not_utf8(path: str) -> tuple[int, str] | None:
    """``(line number, text)`` of the first line of ``path`` that is not UTF-8."""
    with open(path, "rb") as f:
        if f.read(8).startswith(_COMPRESSED):
            return None
        f.seek(0)
        for number, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number, raw.decode("utf-8", "replace").rstrip("\r\n")
    return None


def _read_failure(ds, source: str, e: Exception, good: int, last_qid, logs) -> TierankInputError:
    """The one-line error for ``e``, raised by ir_datasets after ``good`` judgments."""
    reason = str(e).strip() or logs.warning or type(e).__name__
    if isinstance(e, OSError) and e.strerror:
        reason = _os_reason(e)
    if isinstance(e, OSError) and (
        type(e).__module__.split(".")[0] in {"requests", "urllib3"}
        or (logs.warning or "").startswith("Download failed")
    ):
        return _error(source, f"ir_datasets cannot download the qrels (no network?): {reason}")
    path = _cached_path(ds)
    again = f"the cached qrels of {source}: delete the file to download it again"
    if path is None:
        after = f", after {good:,} judgments" if good else ""
        return _error(source, f"cannot read the qrels{after}: {reason}")
    try:
        if isinstance(e, UnicodeDecodeError):
            reason = f"not UTF-8 text ({e.reason})"
            found = _first_not_utf8(path)
        else:
            found = _locate(path, good, last_qid)
    except OSError as err:
        return _error(source, f"cannot read its cached qrels {path}: {_os_reason(err)}")
    if found is None:
        return _error(path, f"judgment {good + 1:,}: {reason} ({again})")
    number, text = found
    shown = text if len(text) <= 60 else text[:57] + "..."
    return _error(path, f"{reason} in {shown!r} ({again})", number)


def refuse_run(obj, source: str | None = None, **_):
    """An ``irds:`` id given as a run: ir_datasets holds judgments here, not runs."""
    raise TierankInputError(
        [
            Problem(
                os.fspath(obj),
                None,
                "an ir_datasets dataset gives qrels here, not a run: "
                "give it as QRELS (irds:DATASET_ID), the run as a file",
            )
        ]
    )


__all__ = ["PREFIX", "dataset_id", "read_qrels", "recognise", "refuse_run"]
