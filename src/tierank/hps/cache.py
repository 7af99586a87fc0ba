"""The on-disk score cache of the rerank protocol: one JSON-lines file per variant.

One file per (model, variant, batch size, scorer options, device class),
named ``MODEL__VARIANT__bsN__DIGEST.jsonl`` where the digest is that of the
key.  Its lines:

* line 1, the header: ``{"key": {...}, "checked": true}``;
* ``{"metadata": {...}}``: what the scorer said about itself (model, dtype,
  batch size, device, ...), written when a scorer is loaded for this cache;
  the last one counts.  It is what ``table.json``'s ``settings.scorers``
  shows, also for a re-run that scores nothing;
* one record per scored query: ``{"query", "docids", "scores", "model_s",
  "scoring_s"[, "reasoning"], "check"}``, where ``check`` is a digest of the
  rest of the record.

Records are appended and fsync'd one query at a time, so an interrupted (even
SIGKILLed) run keeps every query it finished; repairs rewrite the whole file
atomically.  Nothing in a cache is trusted: every record is validated (JSON
object, query id, docids, one finite score per docid, timings, digest) when
the file is read and against the query's candidates before use.  A bad
record is reported as a [`CacheWarning`][tierank.hps.cache.CacheWarning] naming the file and line and
its query is scored again; the valid records around it are kept, and the
file is rewritten without it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tierank.errors import Problem, TierankError

__all__ = ["CACHE_VERSION", "CacheWarning", "ScoreCache", "record_problem"]

CACHE_VERSION = 1
MAX_WARNINGS = 20


class CacheWarning(UserWarning):
    """A cache record that cannot be used (it is scored again)."""


def _slug(text: str) -> str:
    from tierank.hps.registry import slug

    return slug(text)


def _checksum(rec: Mapping[str, Any]) -> str:
    body = {k: v for k, v in rec.items() if k != "check"}
    return hashlib.sha1(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:16]


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def record_problem(rec: Any, checked: bool = True) -> str | None:
    """Why a parsed cache record cannot be used, or None.

    >>> record_problem({"query": "q", "docids": ["a", "b"], "scores": [0.5], "model_s": 0.1, "scoring_s": 0.0},
    ...                checked=False)
    'has 1 scores for 2 documents'
    """
    if not isinstance(rec, dict):
        return "not a JSON object"
    q = rec.get("query")
    if not isinstance(q, str) or not q:
        return "no query id"
    docids, scores = rec.get("docids"), rec.get("scores")
    if not isinstance(docids, list) or not all(isinstance(d, str) and d for d in docids):
        return f"query {q!r}: docids is not a list of document ids"
    if len(set(docids)) != len(docids):
        return f"query {q!r}: a document id appears twice"
    if not isinstance(scores, list):
        return f"query {q!r}: scores is not a list"
    if len(scores) != len(docids):
        return f"has {len(scores)} scores for {len(docids)} documents"
    bad = [i for i, s in enumerate(scores) if not _number(s)]
    if bad:
        return f"query {q!r}: score {scores[bad[0]]!r} of document {docids[bad[0]]!r} is not a finite number"
    for k in ("model_s", "scoring_s"):
        if not _number(rec.get(k)) or rec[k] < 0:
            return f"query {q!r}: {k} {rec.get(k)!r} is not a time in seconds"
    if "reasoning" in rec:
        r = rec["reasoning"]
        if (
            not isinstance(r, list)
            or len(r) != len(docids)
            or not all(isinstance(x, str) for x in r)
        ):
            return f"query {q!r}: reasoning is not one text per document"
    if checked and rec.get("check") != _checksum(rec):
        return f"query {q!r}: the record does not match its check digest (changed after it was written)"
    return None


class ScoreCache:
    """Append-only JSON-lines store of one variant's scores, one line per query.

    ``warn(message)`` receives each problem found (default: `warnings.warn`
    with [`CacheWarning`][tierank.hps.cache.CacheWarning]).  A query scored twice keeps its last record.
    """

    def __init__(
        self, directory: str | os.PathLike, key: dict, warn: Callable[[str], Any] | None = None
    ):
        self.key = dict(key, cache_version=CACHE_VERSION)
        blob = json.dumps(self.key, sort_keys=True)
        digest = hashlib.sha1(blob.encode()).hexdigest()[:10]
        self.path = (
            Path(directory)
            / f"{_slug(key['model'])}__{_slug(key['variant'])}__bs{key['batch_size']}__{digest}.jsonl"
        )
        self.records: dict[str, dict] = {}
        self.lines: dict[str, int] = {}
        self.metadata: dict | None = None
        self.checked = True
        self._warn = warn or (lambda msg: warnings.warn(msg, CacheWarning, stacklevel=3))
        self._load()

    # ------------------------------------------------------------------ reading

    def _report(self, problems: list[Problem]) -> None:
        for p in problems[:MAX_WARNINGS]:
            self._warn(str(p))
        if len(problems) > MAX_WARNINGS:
            self._warn(
                f"{self.path}: {len(problems) - MAX_WARNINGS} more unusable records; their queries are scored again"
            )

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as e:
            raise TierankError(
                f"{self.path}: cannot read the score cache ({e.strerror or e})"
            ) from None
        lines = raw.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        problems: list[Problem] = []
        kept: list[bytes] = []
        parsed: list[tuple[int, bytes, Any]] = []
        for n, line in enumerate(lines, 1):
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                rec = _BAD
            parsed.append((n, line, rec))
        if parsed and isinstance(parsed[0][2], dict) and "key" in parsed[0][2]:
            head = parsed.pop(0)[2]
            if head["key"] != self.key:
                raise TierankError(
                    f"{self.path}: cache key does not match the settings; delete the file"
                )
            self.checked = head.get("checked") is True
        elif parsed:
            problems.append(Problem(str(self.path), 1, "not a cache header; the file is repaired"))
            parsed.pop(0)
        for n, line, rec in parsed:
            why: str | None
            if rec is _BAD:
                why = "not valid JSON"
            elif (
                isinstance(rec, dict)
                and set(rec) == {"metadata"}
                and isinstance(rec["metadata"], dict)
            ):
                self.metadata = rec["metadata"]
                kept.append(line)
                continue
            else:
                why = record_problem(rec, self.checked)
            if why is None:
                self.records[rec["query"]] = rec
                self.lines[rec["query"]] = n
                kept.append(line)
            else:
                problems.append(
                    Problem(
                        str(self.path),
                        n,
                        f"unusable cache record ({why}); its query is scored again",
                    )
                )
        if tail:
            problems.append(
                Problem(
                    str(self.path),
                    len(lines) + 1,
                    "record cut short (an interrupted write); its query is scored again",
                )
            )
        if problems:
            self._report(problems)
            self._rewrite([json.dumps(self._header()).encode()] + kept)

    def _header(self) -> dict:
        return {"key": self.key, "checked": True} if self.checked else {"key": self.key}

    def _rewrite(self, lines: list[bytes]) -> None:
        from tierank.io.writers import write_atomic

        write_atomic(self.path, b"".join(line + b"\n" for line in lines))

    def get(self, qid: str, docids: Sequence[str]) -> dict | None:
        """The record of ``qid`` if it was scored for exactly these candidates, else None."""
        rec = self.records.get(qid)
        if rec is not None and rec["docids"] == list(docids):
            return rec
        return None

    def missing(
        self, candidates: Mapping[str, Sequence[str]], queries: Iterable[str] | None = None
    ) -> list[str]:
        """The queries without a usable record for their candidates; stale records are reported once."""
        out, stale = [], []
        for q in candidates if queries is None else queries:
            if self.get(q, candidates[q]) is None:
                out.append(q)
                if q in self.records:
                    stale.append(q)
        if stale:
            q = stale[0]
            self._warn(
                f"{self.path}:{self.lines[q]}: {len(stale)} cached record(s) were scored for other candidates "
                f"(first: query {q!r}, {len(self.records[q]['docids'])} documents, now "
                f"{len(candidates[q])}); scored again"
            )
        return out

    # ------------------------------------------------------------------ writing

    def _append(self, line: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        with open(self.path, "a", encoding="utf-8") as fh:
            if new:
                self.checked = True
                fh.write(json.dumps(self._header()) + "\n")
            fh.write(json.dumps(line, allow_nan=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, rec: dict) -> None:
        """Store one query's record (validated; fsync'd before returning)."""
        rec = {k: v for k, v in rec.items() if k != "check"}
        why = record_problem(rec, checked=False)
        if why is not None:
            raise TierankError(
                f"refusing to cache a bad record for query {rec.get('query')!r}: {why}"
            )
        rec["check"] = _checksum(rec)
        self._append(rec)
        self.records[rec["query"]] = rec

    def set_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Store the scorer's description with the scores (only when it changed)."""
        meta = json.loads(json.dumps(dict(metadata), default=str))
        if meta != self.metadata:
            self._append({"metadata": meta})
            self.metadata = meta


class _Bad:
    pass


_BAD = _Bad()
