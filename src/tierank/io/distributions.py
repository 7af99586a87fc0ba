"""Label distributions: per (query, document) pair the probability of each grade ``0..K``.

Read through the one input door as text (plain or gzip), one pair a line::

    qid 0 docid p0 p1 ... pK

(the TREC qrels layout with the grade replaced by ``K + 1`` probabilities; the second column is
ignored as in qrels), or as JSONL / Parquet with the fields ``qid``, ``docid`` and ``probs`` (a list of
``K + 1`` numbers).  Checked, each problem one located line (``file:line``, or the row of a Parquet
file): a line with too few fields, a probability that is not a finite number or is negative, a row
whose probabilities do not sum to 1 within `SUM_TOLERANCE`, a row with another number of
probabilities than the first (ragged ``K``), a pair given twice.

>>> d = read_distributions({"q": {"a": [0.5, 0.5], "b": [0.0, 1.0]}})
>>> d.probs.tolist(), d.expected_grade().tolist()
([[0.5, 0.5], [0.0, 1.0]], [0.5, 1.0])
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import Problem, ProblemLog, TierankInputError, quote
from . import lexer
from .model import Qrels
from .rows import RowLog, content_lines, fields, space_table

#: how far a row's probabilities may sum from 1
SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class LabelDistributions:
    """Per (query, document) pair the probability of each grade ``0..K``.

    ``qid``, ``docid``: the pairs (object arrays, in input order); ``probs``: ``(pairs, K + 1)``, row
    ``i`` the probabilities of grades ``0..K`` of pair ``i``; ``source``: where they were read."""

    qid: np.ndarray
    docid: np.ndarray
    probs: np.ndarray
    source: str = "distributions"

    @property
    def grades(self) -> np.ndarray:
        """The grades ``0..K``."""
        return np.arange(self.probs.shape[1], dtype=np.float64)

    def expected_grade(self) -> np.ndarray:
        """Per pair the expected grade ``sum_k k * p_k``."""
        return self.probs @ self.grades

    def qrels(self, grade: np.ndarray, source: str | None = None) -> Qrels:
        """The pairs as qrels with the grades ``grade`` (one per pair)."""
        return Qrels(
            pa.array(self.qid.tolist(), pa.string()),
            pa.array(self.docid.tolist(), pa.string()),
            np.asarray(grade, dtype=np.float64),
            self.source if source is None else source,
        )

    def __len__(self) -> int:
        return len(self.qid)


def _check(
    src: str, qid: np.ndarray, docid: np.ndarray, probs: np.ndarray, where: np.ndarray | None
) -> LabelDistributions:
    """The located checks of the module's documentation; ``where``: each row's line (None: rows)."""
    log = RowLog(src, where)

    def pair(r: int) -> str:
        return f"query {quote(str(qid[r]))} document {quote(str(docid[r]))}"

    finite = np.isfinite(probs).all(axis=1)
    negative = (probs < 0).any(axis=1) & finite
    total = probs.sum(axis=1)
    off = finite & ~negative & (np.abs(total - 1.0) > SUM_TOLERANCE)
    bad = np.flatnonzero(~finite | negative | off)
    for r in bad.tolist():
        if not finite[r]:
            why = "a probability is not a finite number"
        elif negative[r]:
            why = f"probability {probs[r][probs[r] < 0][0]:g} is negative"
        else:
            why = f"probabilities sum to {total[r]:.9g}, not 1 (within {SUM_TOLERANCE:g})"
        log.row(r, f"{pair(r)}: {why}")
    key = np.char.add(np.char.add(qid.astype(str), "\x1f"), docid.astype(str))
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    for i in same.tolist():
        first, later = int(order[i]), int(order[i + 1])
        log.repeated_row(later, first, f"{pair(later)} is given twice")
    if log:
        raise log.error()
    return LabelDistributions(qid, docid, probs, src)


def _text(path: str | os.PathLike) -> LabelDistributions:
    src = os.fspath(path)
    data = lexer.load(path)
    lines = content_lines(data)
    if len(lines) == 0:
        raise TierankInputError([Problem(src, None, "empty: no label distribution lines")])
    table = space_table(data, None, {"f0": pa.string(), "f1": pa.string(), "f2": pa.string()})
    if (
        table is None
        or table.num_rows != len(lines)
        or table.num_columns < 4
        or any(
            not pa.types.is_floating(t) and not pa.types.is_integer(t)
            for t in table.schema.types[3:]
        )
    ):
        _line_problems(src, data)  # raises with the located lines
        raise TierankInputError([Problem(src, None, "cannot be read as qid 0 docid p0 ... pK")])
    qid = table.column(0).to_numpy(zero_copy_only=False).astype(object)
    docid = table.column(2).to_numpy(zero_copy_only=False).astype(object)
    probs = np.column_stack(
        [table.column(i).to_numpy().astype(np.float64) for i in range(3, table.num_columns)]
    )
    return _check(src, qid, docid, probs, lines)


def _line_problems(src: str, data: bytes) -> None:
    """Raise with the located lines of ``data`` that are not ``qid 0 docid p0 ... pK`` (the error path)."""
    log = ProblemLog(src)
    width: tuple[int, int] | None = None
    for lineno, parts in fields(data, log, "qid 0 docid p0 ... pK", 4, at_least=True):
        if width is None:
            width = (len(parts), lineno)
        elif len(parts) != width[0]:
            log(
                lineno,
                f"{len(parts) - 3} probabilities, but line {width[1]} has {width[0] - 3} "
                "(every pair needs one per grade 0..K)",
            )
            continue
        for tok in parts[3:]:
            if lexer.parse_number(tok) is None:
                log(lineno, f"probability {quote(tok)} is not a number")
                break
    log.raise_if_any()


def _table(table: pa.Table, src: str, where: np.ndarray | None) -> LabelDistributions:
    missing = [c for c in ("qid", "docid", "probs") if c not in table.column_names]
    if missing:
        raise TierankInputError(
            [Problem(src, None, f"no {', '.join(missing)} field: expected qid, docid, probs")]
        )
    qid = np.asarray(table.column("qid").cast(pa.string()).to_pylist(), dtype=object)
    docid = np.asarray(table.column("docid").cast(pa.string()).to_pylist(), dtype=object)
    col = table.column("probs").combine_chunks()
    if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)):
        raise TierankInputError([Problem(src, None, f"probs is {col.type}, not a list of numbers")])
    sizes = col.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
    log = RowLog(src, where)
    for r in np.flatnonzero(sizes != sizes[0]).tolist():
        log.row(r, f"{sizes[r]} probabilities, but the first row has {sizes[0]} (ragged K)")
    if sizes[0] < 1:
        log.add([Problem(src, None, "probs of the first row is empty: one per grade 0..K")])
    if log:
        raise log.error()
    values = col.flatten().cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
    return _check(src, qid, docid, values.reshape(len(qid), int(sizes[0])), where)


def read_distributions(source) -> LabelDistributions:
    """Label distributions from ``source``: a text file (``qid 0 docid p0 ... pK``, plain or gzip), a
    ``.jsonl`` (``.jsonl.gz``) or ``.parquet`` file with ``qid, docid, probs``, a dict
    ``{qid: {docid: [p0, ..., pK]}}``, or a `LabelDistributions`.

    Raises
    ------
    TierankInputError
        One located line per problem (see the module's documentation).
    """
    if isinstance(source, LabelDistributions):
        return source
    if isinstance(source, Mapping):
        rows = [(q, d, list(p)) for q, docs in source.items() for d, p in docs.items()]
        if not rows:
            raise TierankInputError("no label distribution given")
        q, d, p = zip(*rows, strict=True)
        table = pa.table({"qid": list(map(str, q)), "docid": list(map(str, d)), "probs": list(p)})
        return _table(table, "distributions", None)
    src = os.fspath(source)
    low = src.lower()
    if low.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(src)
        except (OSError, pa.ArrowInvalid) as e:
            raise TierankInputError(
                [Problem(src, None, f"cannot be read as Parquet: {e}")]
            ) from None
        return _table(table, src, None)
    if low.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        import pyarrow.json as pajson

        data = lexer.load(src)
        lines = content_lines(data)
        try:
            table = pajson.read_json(pa.py_buffer(data))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise TierankInputError([Problem(src, None, f"cannot be read as JSONL: {e}")]) from None
        return _table(table, src, lines if len(lines) == table.num_rows else None)
    return _text(src)


def from_panel(judges: Mapping[str, Qrels], top: int) -> LabelDistributions:
    """Per pair the share of ``judges`` that gave each grade ``0..top`` (grades rounded and clipped to
    that scale): a panel's grade frequencies as label distributions, over the pairs every judge graded.

    >>> from tierank.io.convert import to_qrels
    >>> d = from_panel({"a": to_qrels({"q": {"x": 1}}), "b": to_qrels({"q": {"x": 3}})}, 3)
    >>> d.probs.tolist()
    [[0.0, 0.5, 0.0, 0.5]]
    """
    keys = None
    tables = []
    for q in judges.values():
        qid = np.asarray(q.qid.to_numpy(zero_copy_only=False), dtype=str)
        doc = np.asarray(q.docid.to_numpy(zero_copy_only=False), dtype=str)
        key = np.char.add(np.char.add(qid, "\x1f"), doc)
        tables.append((key, np.clip(np.round(q.grade), 0, top).astype(np.int64)))
        keys = set(key.tolist()) if keys is None else keys & set(key.tolist())
    if not keys:
        raise TierankInputError("the judges share no graded pair")
    shared = np.array(sorted(keys))
    counts = np.zeros((len(shared), top + 1))
    for key, g in tables:
        inside = np.isin(key, shared)
        np.add.at(counts, (np.searchsorted(shared, key[inside]), g[inside]), 1.0)
    split = np.char.partition(shared, "\x1f")
    return LabelDistributions(
        split[:, 0].astype(object), split[:, 2].astype(object), counts / len(judges), "panel"
    )


def format_distributions(d: LabelDistributions) -> str:
    """``d`` as ``qid 0 docid p0 ... pK`` lines (each probability in its shortest round-trip form)."""
    if len(d) == 0:
        return ""
    line = np.char.add(np.char.add(d.qid.astype(str), " 0 "), d.docid.astype(str))
    for col in d.probs.T:
        line = np.char.add(np.char.add(line, " "), col.astype(str))
    return "\n".join(line.tolist()) + "\n"


def write_distributions(d: LabelDistributions, path: str | os.PathLike) -> None:
    """``d`` as `format_distributions` text, gzip-compressed (no time stamp) where ``path`` ends in
    ``.gz``."""
    import gzip

    data = format_distributions(d).encode()
    if os.fspath(path).endswith(".gz"):
        data = gzip.compress(data, 9, mtime=0)
    with open(path, "wb") as fh:
        fh.write(data)


__all__ = [
    "SUM_TOLERANCE",
    "LabelDistributions",
    "format_distributions",
    "from_panel",
    "read_distributions",
    "write_distributions",
]
