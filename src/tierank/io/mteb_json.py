"""MTEB's JSON files read into tierank's columns: retrieval predictions and qrels.

Read here, evaluated by [`tierank.integrations.mteb`][tierank.integrations.mteb] (found through [`tierank.io.sources`][tierank.io.sources]):

* ``{task}_predictions.json`` = ``{"mteb_model_meta": {...}, subset: {split: {qid: {docid: score}}}}``
  (``AbsTask._save_task_predictions``), read incrementally into columns ([`read_predictions`][tierank.io.mteb_json.read_predictions]),
  or given as its dict ([`load_predictions`][tierank.io.mteb_json.load_predictions], then [`columns_of`][tierank.io.mteb_json.columns_of]);
* qrels as JSON ``{qid: {docid: grade}}`` or the same nested ``{subset: {split: ...}}``
  ([`json_qrels`][tierank.io.mteb_json.json_qrels], [`nested_qrels`][tierank.io.mteb_json.nested_qrels]), JSON lines of MTEB's qrels rows
  ([`jsonl_qrels`][tierank.io.mteb_json.jsonl_qrels]), or a loaded mteb retrieval task ([`task_qrels`][tierank.io.mteb_json.task_qrels]; mteb is not imported).
"""

from __future__ import annotations

import codecs
import json
import math
import os
import re
from collections.abc import Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]

import numpy as np
import pyarrow as pa

from ..errors import Problem, TierankInputError, quote, shorten
from .model import Run
from .readers import RESERVED_QID, RESERVED_REASON
from .strict_json import lone_surrogate
from .tables import table_qrels

#: top-level keys of a predictions file that are not subsets
META_KEYS = ("mteb_model_meta",)


def read_json(path, what: str):
    """The strict JSON value of the file at ``path`` ([`tierank.io.strict_json.loads`][tierank.io.strict_json.loads])."""
    from .strict_json import loads

    source = os.fspath(path)
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise TierankInputError(
            [Problem(source, None, f"cannot read the {what}: {e.strerror or e}")]
        ) from None
    return loads(data, source)


def _kind(x) -> str:
    return "a mapping" if isinstance(x, Mapping) else type(x).__name__


def load_predictions(predictions, source: str | None = None) -> dict[tuple[str, str], Mapping]:
    """``{(subset, split): {qid: {docid: score}}}`` from MTEB's predictions file (a path) or its dict.

    The ``mteb_model_meta`` entry is skipped.  Anything else that is not ``subset -> split -> qid
    -> docid -> number`` (a classification task's predictions are lists, for one) is refused with
    the file and the place.  A file is read whole, as strict JSON (a duplicated key, NaN or a number
    beyond float range is an error); [`read_predictions`][tierank.io.mteb_json.read_predictions] reads one incrementally, into columns.

    Examples
    --------
    >>> load_predictions({"mteb_model_meta": {}, "en": {"test": {"q": {"d": 1.0}}}})
    {('en', 'test'): {'q': {'d': 1.0}}}
    >>> load_predictions({"en": {"test": [0, 1]}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: predictions: subset 'en', split 'test': expected a mapping qid -> ..., got list
    """
    if isinstance(predictions, (str, os.PathLike)):
        source = source or os.fspath(predictions)
        predictions = read_json(predictions, "retrieval predictions")
    source = source or "predictions"

    def bad(where: str, reason: str) -> TierankInputError:
        return TierankInputError([Problem(source, None, f"{where}{reason}")])

    shape = "{subset: {split: {qid: {docid: score}}}}"
    if not isinstance(predictions, Mapping):
        raise bad("", f"expected MTEB's retrieval predictions {shape}, got {_kind(predictions)}")
    out: dict[tuple[str, str], Mapping] = {}
    for subset, splits in predictions.items():
        if subset in META_KEYS:
            continue
        if not isinstance(splits, Mapping):
            raise bad(
                f"subset {quote(str(subset))}: ",
                f"expected a mapping split -> run {shape}, got {_kind(splits)}",
            )
        for split, run in splits.items():
            where = f"subset {quote(str(subset))}, split {quote(str(split))}: "
            if not isinstance(run, Mapping) or not all(
                isinstance(d, Mapping) for d in run.values()
            ):
                got = (
                    _kind(run)
                    if not isinstance(run, Mapping)
                    else "a mapping whose values are not mappings"
                )
                raise bad(
                    where,
                    f"expected a mapping qid -> {{docid: score}} (MTEB's retrieval predictions), "
                    f"got {got}",
                )
            out[str(subset), str(split)] = run
    if not out:
        raise bad("", f"no subset in the predictions (expected {shape})")
    return out


# reading incrementally: the predictions file into columns

#: characters decoded per read; a query's documents are parsed in one piece (C speed), so memory
#: grows with the largest query and the columns, not with the file's dict of dicts
_CHUNK = 1 << 20
#: rows gathered before they become Arrow arrays
_FLUSH = 1 << 14
_WS = re.compile(r"[ \t\n\r]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHAPE = "{subset: {split: {qid: {docid: score}}}}"


class _Refused(ValueError):
    """Raised by the decoder's hooks (a NaN or Infinity literal)."""


def _no_constant(name: str):
    raise _Refused(f"{name} is not a JSON number")


def _repeated(keys: list):
    """The first key of ``keys`` given a second time."""
    seen: set = set()
    for k in keys:
        if k in seen:
            return k
        seen.add(k)
    return None


def _unique_pairs(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Refused(f"key {quote(_repeated(keys))} appears twice in one object")
    return dict(pairs)


class _Object(list):
    """A JSON object as the decoder gives it: its (key, value) pairs, a key given twice kept twice."""


#: one query's ``{docid: score}`` as a list of pairs (duplicates kept, to be refused)
_DECODER = json.JSONDecoder(object_pairs_hook=_Object, parse_constant=_no_constant)
#: the model's metadata, checked as strict JSON
_META_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constant)


def _kind_at(ch: str) -> str:
    """What a JSON value starting with ``ch`` is, for an error message."""
    if ch == "{":
        return "a mapping"
    if ch and ch in "-0123456789":
        return "a number"
    return {
        "[": "a list",
        '"': "a string",
        "t": "true",
        "f": "false",
        "n": "null",
        "": "the end of the file",
    }.get(ch, f"{ch!r}, which is not JSON")


class _Text:
    """A JSON text read forward in chunks of decoded characters, with line and column of a position."""

    def __init__(self, fh, source: str):
        self.fh, self.source = fh, source
        head = fh.read(4)
        self.decoder = codecs.getincrementaldecoder(
            json.detect_encoding(head) if head else "utf-8"
        )("strict")
        self.buf, self.pos, self.eof = "", 0, False
        self.bytes_read = 0
        self.broken: str | None = (
            None  # bytes that are not text: refused when the parser reaches them
        )
        self.dropped = (
            0  # characters already dropped from buf: a position is absolute, dropped + index
        )
        self.lines = 0  # newlines in them
        self.column = 0  # characters after the last of those
        self._feed(head)

    def _feed(self, data: bytes) -> None:
        pending = self.decoder.getstate()[0]  # bytes of a character cut by the previous read
        try:
            self.buf += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as e:
            # the text before the bad byte is parsed first, so that an earlier problem is the one reported
            bom = (
                3 if self.bytes_read == 0 and data.startswith(codecs.BOM_UTF8) else 0
            )  # utf-8-sig drops it
            start = max(e.start, 0)
            self.buf += (pending + data)[bom:][:start].decode(e.encoding, errors="replace")
            at = self.bytes_read - len(pending) + bom + start + 1
            self.broken = (
                f"not a JSON file: byte {at:,} is not {e.encoding.upper().replace('-SIG', '')}"
            )
        self.bytes_read += len(data)
        if not data and not self.broken:  # a broken end is reported, not read as the end
            self.eof = True

    def more(self) -> None:
        """Drop what was read, add at least as many characters as are left (a value that does not fit
        is read in doubling steps)."""
        if self.broken:
            self.refuse(self.broken, at=None)
        dropped = self.buf[: self.pos]
        n = dropped.count("\n")
        self.column = len(dropped) - dropped.rfind("\n") - 1 if n else self.column + len(dropped)
        self.lines += n
        self.dropped += len(dropped)
        self.buf, self.pos = self.buf[self.pos :], 0
        self._feed(self.fh.read(max(_CHUNK, len(self.buf))))

    @property
    def here(self) -> int:
        """The absolute position (what `refuse` takes)."""
        return self.dropped + self.pos

    def where(self, at: int | None = None) -> str:
        """Line and column of the absolute position ``at`` (default: the position); ``at`` must not
        lie in the text already dropped (a caller keeps positions of the value being read only)."""
        at = self.pos if at is None else at - self.dropped
        nl = self.buf.rfind("\n", 0, at)
        line = self.lines + self.buf.count("\n", 0, at) + 1
        col = at - nl if nl >= 0 else self.column + at + 1
        return f"line {line:,}, column {col:,}"

    def refuse(self, reason: str, at: int | None | bool = True):
        if at is None:
            raise TierankInputError([Problem(self.source, None, reason)])
        raise TierankInputError(
            [Problem(self.source, None, f"{reason} ({self.where(None if at is True else at)})")]
        )

    def peek(self) -> str:
        """The next character after white space ('' at the end of the file)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos] if self.pos < len(self.buf) else ""
            self.more()

    def snippet(self) -> str:
        """The text at the position, quoted and cut short (or 'the end of the file')."""
        if self.peek() == "":
            return "the end of the file"
        while len(self.buf) - self.pos < 20 and not self.eof and not self.broken:
            self.more()
        return quote(self.buf[self.pos : self.pos + 20].split("\n")[0], 20)

    def _syntax(self, e: json.JSONDecodeError) -> str:
        if self.eof and (e.pos >= len(self.buf) - 8 or e.msg.startswith("Unterminated string")):
            return f"not a JSON file: it ends inside a value, cut short ({e.msg})"
        return f"not a JSON file: {e.msg}"

    def _needs_more(self, e: json.JSONDecodeError) -> bool:
        """Whether a decoding error may only be the buffer's end cutting a value (read on, then retry)."""
        return not self.eof and (
            e.pos >= len(self.buf) - 8 or e.msg.startswith("Unterminated string")
        )

    def string(self) -> str:
        while True:
            try:
                s, self.pos = scanstring(self.buf, self.pos + 1, True)
                return s
            except json.JSONDecodeError as e:
                if self._needs_more(e):
                    self.more()
                    continue
                self.refuse(self._syntax(e), at=self.dropped + e.pos)

    def value(self, where: str, decoder: json.JSONDecoder | None = None):
        """The JSON value at the position (objects as lists of pairs, unless ``decoder`` says
        otherwise), the position moved past it."""
        while True:
            try:
                v, self.pos = (decoder or _DECODER).raw_decode(self.buf, self.pos)
                return v
            except json.JSONDecodeError as e:
                if self._needs_more(e):
                    self.more()
                    continue
                self.refuse(self._syntax(e), at=self.dropped + e.pos)
            except _Refused as e:
                self.refuse(f"{where}: {e}")
            except RecursionError:
                self.refuse(f"{where}: nested too deeply")
            except ValueError:  # an integer of more than 4300 digits (int()'s limit)
                self.refuse(f"{where}: a number is beyond the range of a float (about 1.8e308)")

    def members(self, where: str, what: str):
        """The keys of the object at the position, each yielded with the position at its value; a
        key given twice is refused."""
        self.pos += 1  # the "{" the caller saw
        if self.peek() == "}":
            self.pos += 1
            return
        seen = set()
        while True:
            if self.peek() != '"':
                self.refuse(
                    f"not a JSON file: {where}: expected a {what} in double quotes, got {self.snippet()}"
                )
            at = self.here
            key = self.string()
            if key in seen:
                self.refuse(
                    f"{where}: {what} {quote(key)} appears twice (a JSON key is given once)", at=at
                )
            if lone_surrogate(key):
                self.refuse(
                    f"{where}: {what} {quote(key)} holds a lone surrogate escape (\\ud800-\\udfff), "
                    "which is not text",
                    at=at,
                )
            if what in ("subset", "split") and (not key or _CONTROL.search(key)):
                self.refuse(
                    f"{where}: {what} {quote(key)} is not a name (empty, or with a control character)",
                    at=at,
                )
            seen.add(key)
            if self.peek() != ":":
                self.refuse(
                    f"not a JSON file: expected ':' after {what} {quote(key)}, got {self.snippet()}"
                )
            self.pos += 1
            self.peek()
            yield key
            c = self.peek()
            if c == "}":
                self.pos += 1
                return
            if c != ",":
                self.refuse(f"not a JSON file: {where}: expected ',' or '}}', got {self.snippet()}")
            self.pos += 1


class _Columns:
    """One (subset, split)'s run gathered as columns: query id, document id, float64 score."""

    def __init__(
        self, source: str, ignore_identical_ids: bool = False, skip_first_result: bool = False
    ):
        self.source = source
        self.identical, self.skip_first = ignore_identical_ids, skip_first_result
        self.qids: list[str] = []
        self.docids: list[str] = []
        self.scores: list[np.ndarray] = []
        self.chunks: list[tuple[pa.Array, pa.Array]] = []
        self.pending = 0

    def add(self, qid: str, pairs: list, refuse) -> None:
        """One query's ``(docid, score)`` pairs in input order; ``refuse(reason)`` raises."""
        where = f"query {quote(qid)}"
        if not qid or _CONTROL.search(qid):
            refuse(f"{where}: a query id must be non-empty text without control characters")
        if qid == RESERVED_QID:
            refuse(RESERVED_REASON)
        if not pairs:
            return
        docids = [d for d, _ in pairs]
        values = [v for _, v in pairs]
        if len(set(docids)) != len(docids):
            dup = _repeated(docids)
            refuse(
                f"{where}: document {quote(dup)} appears twice (a document has one score per query)"
            )
        joined = "".join(docids)
        if (
            "" in docids
            or _CONTROL.search(joined)
            or (not joined.isascii() and lone_surrogate(joined))
        ):
            bad = next(d for d in docids if not d or _CONTROL.search(d) or lone_surrogate(d))
            refuse(
                f"{where}: document id {quote(bad)} is not an id (empty, a control character or a lone "
                "surrogate escape)"
            )
        if not set(map(type, values)) <= {float, int}:
            for d, v in pairs:
                if not _real(v):
                    refuse(f"{where}, document {quote(d)}: score {_shown(v)} is not a number")
        try:
            scores = np.array(values, dtype=np.float64)
        except (OverflowError, TypeError, ValueError):
            scores = None
        if scores is None or not np.isfinite(scores).all():
            for d, v in pairs:
                try:
                    ok = math.isfinite(float(v))
                except OverflowError:
                    ok = False
                if not ok:
                    refuse(
                        f"{where}, document {quote(d)}: score {_shown(v)} is not a finite number (within "
                        "float range, about 1.8e308)"
                    )
        assert scores is not None  # refuse() raised otherwise
        keep = None
        if self.identical and qid in docids:
            keep = np.array([d != qid for d in docids])
        if self.skip_first:  # MTEB's stable sort by score: the first of the best scores goes
            first = np.zeros(len(docids), dtype=bool)
            live = np.flatnonzero(keep) if keep is not None else np.arange(len(docids))
            if len(live):
                first[live[np.argmax(scores[live])]] = True
            keep = ~first if keep is None else keep & ~first
        if keep is not None:
            docids = [d for d, k in zip(docids, keep) if k]
            scores = scores[keep]
        self.qids.extend([qid] * len(docids))
        self.docids.extend(docids)
        self.scores.append(scores)
        self.pending += len(docids)
        if self.pending >= _FLUSH:
            self.flush()

    def flush(self) -> None:
        if self.qids:
            self.chunks.append(
                (pa.array(self.qids, pa.string()), pa.array(self.docids, pa.string()))
            )
            self.qids, self.docids, self.pending = [], [], 0

    def run(self, refuse=None) -> Run:
        """The [`tierank.io.model.Run`][tierank.io.model.Run] of the columns.  `add` checked every row as
        [`tierank.to_run`][tierank.to_run] checks a table (ids, finite scores, one score per document), query by
        query; its whole-table duplicate check (a hash aggregation over all rows: 400 MB for 1.5
        million rows) is not needed, as a query's documents all come in one object."""
        self.flush()
        if not self.chunks:
            if refuse is not None:
                refuse("no documents: an empty run")
            raise TierankInputError([Problem(self.source, None, "empty run: no rows")])
        q = pa.chunked_array([c[0] for c in self.chunks], pa.string()).combine_chunks()
        d = pa.chunked_array([c[1] for c in self.chunks], pa.string()).combine_chunks()
        s = np.concatenate(self.scores)
        self.chunks, self.scores = [], []
        return Run(qid=q, docid=d, score=s, rank=None, source=self.source)


def _real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def _shown(v) -> str:
    if isinstance(v, list):
        return "an object" if isinstance(v, _Object) else "a list"
    return (
        quote(v) + " (text)"
        if isinstance(v, str)
        else shorten(json.dumps(v) if v is None or isinstance(v, bool) else repr(v), 60)
    )


def read_predictions(
    path,
    source: str | None = None,
    *,
    ignore_identical_ids: bool = False,
    skip_first_result: bool = False,
) -> dict:
    """``{(subset, split): Run}`` from MTEB's predictions file, read incrementally into columns.

    The file (``json.dump`` of ``{"mteb_model_meta": ..., subset: {split: {qid: {docid: score}}}}``,
    one line) is scanned forward in chunks; each query's documents are decoded by the C JSON decoder
    and go straight into Arrow and float64 columns, so memory follows the columns and the largest
    query rather than a dict of dicts of the whole file (a 41 MB file took 1.07 GB that way).  It is
    strict JSON and strict predictions: a key given twice (a document, query, split or subset),
    NaN or Infinity, a score that is not a finite number (``true``, a string, beyond float range),
    an empty id or one with a control character or a lone surrogate escape, deep nesting, a cut
    file: each is one error naming the file, the place (line and column; subset, split, query and
    document) and the reason.  ``ignore_identical_ids`` and ``skip_first_result`` are the task's
    settings (`evaluate_predictions`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t_predictions.json"
    >>> _ = p.write_text('{"mteb_model_meta": {"model_name": "m"}, "en": {"test": {"q": {"a": 0.5, "b": 1}}}}')
    >>> {k: (r.docid.to_pylist(), r.score.tolist()) for k, r in read_predictions(p).items()}
    {('en', 'test'): (['a', 'b'], [0.5, 1.0])}
    >>> _ = p.write_text('{"en": {"test": {"q": {"a": 0.5, "a": 1}}}}')
    >>> read_predictions(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: ...: subset 'en', split 'test', query 'q': document 'a' appears twice ... (line 1, column 23)
    """
    source = source or os.fspath(path)
    try:
        fh = open(os.fspath(path), "rb")
    except OSError as e:
        raise TierankInputError(
            [Problem(source, None, f"cannot read the retrieval predictions: {e.strerror or e}")]
        ) from None
    out: dict[tuple[str, str], object] = {}
    with fh:
        t = _Text(fh, source)
        c = t.peek()
        if c != "{":
            t.refuse(f"expected MTEB's retrieval predictions {_SHAPE}, got {_kind_at(c)}")
        for subset in t.members("the top object", "subset"):
            if subset in META_KEYS:
                t.value(subset, _META_DECODER)  # checked as JSON, not used
                continue
            c = t.peek()
            if c != "{":
                t.refuse(
                    f"subset {quote(subset)}: expected a mapping split -> run {_SHAPE}, got {_kind_at(c)}"
                )
            for split in t.members(f"subset {quote(subset)}", "split"):
                where = f"subset {quote(subset)}, split {quote(split)}"
                c = t.peek()
                if c != "{":
                    t.refuse(
                        f"{where}: expected a mapping qid -> {{docid: score}} (MTEB's retrieval predictions), "
                        f"got {_kind_at(c)}"
                    )
                cols = _Columns(
                    f"{source} [{subset}/{split}]", ignore_identical_ids, skip_first_result
                )
                for qid in t.members(where, "query id"):
                    c = t.peek()
                    at = t.here
                    if c != "{":
                        t.refuse(
                            f"{where}, query {quote(qid)}: expected a mapping docid -> score, got {_kind_at(c)}"
                        )
                    pairs = t.value(f"{where}, query {quote(qid)}")
                    cols.add(
                        qid,
                        pairs,
                        lambda reason, where=where, at=at: t.refuse(f"{where}, {reason}", at=at),
                    )
                out[subset, split] = cols.run(
                    lambda reason, where=where: t.refuse(f"{where}: {reason}")
                )
        c = t.peek()
        if c:
            t.refuse(f"not a JSON file: {t.snippet()} after the end of the predictions")
    if not out:
        raise TierankInputError(
            [Problem(source, None, f"no subset in the predictions (expected {_SHAPE})")]
        )
    return out


def columns_of(
    runs: Mapping, source: str, ignore_identical_ids: bool, skip_first_result: bool
) -> dict:
    """[`read_predictions`][tierank.io.mteb_json.read_predictions]' result for predictions given as a dict ([`load_predictions`][tierank.io.mteb_json.load_predictions])."""
    out = {}
    for (subset, split), run in runs.items():
        where = f"subset {quote(subset)}, split {quote(split)}"
        cols = _Columns(f"{source} [{subset}/{split}]", ignore_identical_ids, skip_first_result)

        def refuse(reason: str, where: str = where):
            raise TierankInputError([Problem(source, None, f"{where}, {reason}")])

        for q, docs in run.items():
            cols.add(str(q), [(str(d), v) for d, v in docs.items()], refuse)
        out[subset, split] = cols.run(refuse)
    return out


def _depth(obj, limit: int = 4) -> int:
    """How many levels of non-empty mappings ``obj`` nests (its first entries followed)."""
    d = 0
    while isinstance(obj, Mapping) and obj and d < limit:
        obj = next(iter(obj.values()))
        d += 1
    return d


def jsonl_qrels(path, source: str | None = None):
    """Qrels from a JSON-lines file of MTEB's qrels rows (``query-id``, ``corpus-id``, ``score``)."""
    path = os.fspath(path)
    from .strict_json import loads

    rows = []
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise TierankInputError(
            [Problem(path, None, f"cannot read the qrels: {e.strerror or e}")]
        ) from None
    with fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = loads(line, path)
            except TierankInputError as e:
                raise TierankInputError(
                    [Problem(path, i, str(e).removeprefix(f"{path}: "))]
                ) from None
            if not isinstance(rec, Mapping):
                raise TierankInputError(
                    [
                        Problem(
                            path,
                            i,
                            f"expected a JSON object with query-id, corpus-id, "
                            f"score; got {_kind(rec)}",
                        )
                    ]
                )
            rows.append(rec)
    if not rows:
        raise TierankInputError([Problem(path, None, "empty qrels: no rows")])
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return table_qrels(
        pa.table({k: [None if r.get(k) is None else str(r.get(k)) for r in rows] for k in keys}),
        path,
    )


def json_qrels(path, source: str | None = None):
    """Qrels from a JSON file: ``{qid: {docid: grade}}`` (one Qrels) or ``{subset: {split: ...}}``
    (``{(subset, split): Qrels}``), read as strict JSON."""
    path = os.fspath(path)
    return nested_qrels(read_json(path, "qrels"), source or path)


def nested_qrels(qrels, source: str | None = None):
    """Qrels from a dict ``{qid: {docid: grade}}`` (one Qrels) or ``{subset: {split: ...}}``
    (``{(subset, split): Qrels}``); MTEB's grades are integers (predictions given as qrels are refused)."""
    source = source or "qrels"
    if not isinstance(qrels, Mapping):
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    "expected qrels {qid: {docid: grade}} or "
                    f"{{subset: {{split: {{qid: {{docid: grade}}}}}}}}, got {_kind(qrels)}",
                )
            ]
        )
    if any(k in qrels for k in META_KEYS):
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"holds {next(k for k in META_KEYS if k in qrels)!r}: "
                    "these are MTEB's predictions, not qrels (QRELS come first)",
                )
            ]
        )
    if _depth(qrels) < 4:
        return _integer_grades(table_qrels(qrels, source), source)
    out = {}
    for subset, splits in qrels.items():
        if not isinstance(splits, Mapping):
            raise TierankInputError(
                [
                    Problem(
                        source,
                        None,
                        f"subset {quote(str(subset))}: expected a mapping "
                        f"split -> qrels, got {_kind(splits)}",
                    )
                ]
            )
        for split, q in splits.items():
            where = f"{source} [{subset}/{split}]"
            out[str(subset), str(split)] = _integer_grades(table_qrels(q, where), where)
    return out


def _integer_grades(q, source: str):
    """MTEB's qrels hold integer grades; a real-valued one means scores (predictions given as qrels)."""
    grades = np.asarray(q.grade, dtype=np.float64)
    bad = np.flatnonzero(grades != np.round(grades))
    if bad.size:
        i = int(bad[0])
        raise TierankInputError(
            [
                Problem(
                    source,
                    None,
                    f"query {quote(str(q.qid[i].as_py()))}, document {quote(str(q.docid[i].as_py()))}: grade "
                    f"{float(grades[i])!r} is not an integer: MTEB's qrels hold integer grades (are these predictions? "
                    "QRELS come first)",
                )
            ]
        )
    return q


def is_task(obj) -> bool:
    """Whether ``obj`` looks like a loaded mteb task (its ``metadata`` and ``dataset``; mteb is not imported)."""
    return hasattr(obj, "metadata") and hasattr(obj, "dataset") and not isinstance(obj, Mapping)


def task_qrels(task, source: str | None = None) -> dict:
    """``{(subset, split): Qrels}`` from a loaded mteb retrieval task's ``relevant_docs``."""
    if not getattr(task, "data_loaded", True):
        task.load_data()
    convert = getattr(task, "convert_v1_dataset_format_to_v2", None)
    if convert is not None:
        convert(num_proc=None)
    name = task.metadata.name
    out = {}
    for subset, splits in (task.dataset or {}).items():
        for split, data in splits.items():
            rel = data.get("relevant_docs") if isinstance(data, Mapping) else None
            if rel:
                out[str(subset), str(split)] = table_qrels(rel, f"{name} [{subset}/{split}]")
    if not out:
        raise TierankInputError(f"task {name!r} has no relevant_docs: not a loaded retrieval task")
    return out
