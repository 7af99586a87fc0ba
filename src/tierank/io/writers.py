"""Output formats and atomic writing.

``tsv``/``csv``/``jsonl``/``json`` serialise the records of an
:class:`~tierank.results.EvalResult`; files are written to a temporary file in
the target's folder and moved into place with :func:`os.replace`, so a reader
never sees a half-written file and a failed run leaves the old file intact.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

from ..errors import Problem, TierankInputError

FORMATS = ("table", "tsv", "json", "jsonl", "csv")


def _num(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else repr(float(x))


def render(result, fmt: str, per_query: bool) -> str:
    """Serialise ``result`` in a machine format.

    ``jsonl`` always carries every (query, measure) record followed by the aggregate
    records (``query == "all"``); the other formats add per-query rows only with
    ``per_query``.
    """
    if fmt == "jsonl":
        return "".join(json.dumps(r, allow_nan=False) + "\n" for r in result.records(per_query=True))
    recs = result.records(per_query=per_query)
    if fmt == "json":
        doc = {
            "settings": result.settings,
            "ties": result.ties,
            "aggregate": [r for r in recs if r["query"] == "all"],
        }
        if per_query:
            doc["per_query"] = [r for r in recs if r["query"] != "all"]
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if fmt in ("tsv", "csv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(("query", "measure", *result.columns))
        for r in recs:
            w.writerow([r["query"], r["measure"], *(_num(r[c]) for c in result.columns)])
        return buf.getvalue()
    raise TierankInputError(f"unknown format {fmt!r}; accepted: {', '.join(FORMATS)}")


def write_atomic(path: str | os.PathLike, text: str, protect: tuple = ()) -> None:
    """Write ``text`` to ``path`` atomically; refuse to overwrite any file in ``protect``."""
    target = Path(path)
    for p in protect:
        try:
            if target.exists() and Path(p).exists() and target.resolve() == Path(p).resolve():
                raise TierankInputError([Problem(str(target), None,
                                                 "refusing to overwrite an input file with the output")])
        except OSError:
            pass
    if target.is_dir():
        raise TierankInputError([Problem(str(target), None, "is a directory, expected an output file path")])
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise TierankInputError([Problem(str(target), None, f"folder {str(folder)!r} does not exist")])
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
