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


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike, data: str | bytes, protect: tuple = ()) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; refuse to overwrite any file in ``protect``.

    A temporary file in the target's folder is filled, synced, given ordinary permissions
    (0o666 less the umask, not mkstemp's private 0o600) and moved into place with
    :func:`os.replace`; on any failure it is removed and an existing ``path`` stays as it was.
    """
    target = Path(path)
    for p in protect:
        try:
            same = target.exists() and Path(p).exists() and target.resolve() == Path(p).resolve()
        except OSError:
            same = False
        if same:
            raise TierankInputError([Problem(str(target), None, "refusing to overwrite an input file with the output")])
    if target.is_dir():
        raise TierankInputError([Problem(str(target), None, "is a directory, expected an output file path")])
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise TierankInputError([Problem(str(target), None, f"folder {str(folder)!r} does not exist")])
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def render_records(records: list[dict], fields: tuple[str, ...], fmt: str, document: dict | None = None) -> str:
    """Serialise flat records in a machine format (``json`` writes ``document`` when given)."""
    if fmt == "jsonl":
        return "".join(json.dumps({k: jsonable(r.get(k)) for k in fields}, allow_nan=False) + "\n" for r in records)
    if fmt == "json":
        return json.dumps(jsonable(document if document is not None else records), indent=2, allow_nan=False) + "\n"
    if fmt in ("tsv", "csv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(fields)
        for r in records:
            w.writerow(["" if r.get(k) is None else (_num(r[k]) if isinstance(r[k], float) else r[k]) for k in fields])
        return buf.getvalue()
    raise TierankInputError(f"unknown format {fmt!r}; accepted: {', '.join(FORMATS)}")


def jsonable(x):
    """NaN and infinities -> None, numpy scalars -> Python, recursively (for JSON)."""
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
