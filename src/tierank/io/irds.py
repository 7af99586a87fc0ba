"""ir_datasets as a source of qrels: ``irds:DATASET_ID``, as ranx and PyTerrier name them.

``tierank eval irds:msmarco-passage/dev/small run.trec`` (or ``tierank.evaluate("irds:...", run, ...)``)
reads the judgments of the dataset through ``ir_datasets.load(DATASET_ID).qrels_iter()``: each
``(query_id, doc_id, relevance)`` goes through the same checks as any table (:mod:`tierank.io.tables`).
ir_datasets downloads a dataset's files on first use, into its own cache (``IR_DATASETS_HOME``).
The package is optional (``pip install 'tierank[irds]'``); without it, one line names the install.

Registered as the ``irds`` kind of :mod:`tierank.io.sources`: this module and that entry are all it takes.
"""

from __future__ import annotations

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
    irds = require("ir_datasets", extra="irds", what=f"{PREFIX}{ident}")
    try:
        ds = irds.load(ident)
    except KeyError:
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"ir_datasets has no dataset {ident!r} (see "
                    "https://ir-datasets.com for the ids)",
                )
            ]
        ) from None
    has = getattr(ds, "has_qrels", None)
    if not (has() if callable(has) else hasattr(ds, "qrels_iter")):
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"dataset {ident!r} has no qrels (pick a split that "
                    "has judgments, e.g. .../dev or .../test)",
                )
            ]
        )
    qids: list[str] = []
    docids: list[str] = []
    grades: list[int] = []
    try:
        for q in ds.qrels_iter():
            qids.append(str(q.query_id))
            docids.append(str(q.doc_id))
            grades.append(q.relevance)
    except (OSError, ValueError) as e:  # a download or a file that fails: one line, not a traceback
        raise TierankInputError([Problem(source, None, f"cannot read the qrels ({e})")]) from None
    return pa.table(
        {
            "query_id": pa.array(qids, pa.string()),
            "doc_id": pa.array(docids, pa.string()),
            "relevance": pa.array(grades),
        }
    ), source


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
