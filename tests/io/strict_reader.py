"""An independent, deliberately plain reader of TREC runs and qrels for the fuzzing tier.

It shares no code with ``tierank.io``: it implements the grammar documented in
README "Inputs" from scratch, one line at a time with ``bytes.split``, and
returns dicts ``{qid: {docid: value}}`` (or raises :class:`Refused`).  Its
parsed dicts go through ``tierank.evaluate`` (the dict adapter), so a mutant's
numbers through the file readers can be compared with the numbers of the same
bytes read by this reader.
"""

from __future__ import annotations

import math
import zlib

BOM = b"\xef\xbb\xbf"
DIGITS = b"0123456789"
SPECIAL = {b"inf", b"infinity", b"nan"}


class Refused(Exception):
    """The strict reader refuses the bytes."""


def _gunzip(raw: bytes) -> bytes:
    out = b""
    while raw:
        d = zlib.decompressobj(16 + 15)
        try:
            out += d.decompress(raw) + d.flush()
        except zlib.error as e:
            raise Refused(f"gzip: {e}") from None
        if not d.eof:
            raise Refused("gzip: truncated")
        raw = d.unused_data
        if raw.count(0) == len(raw):
            break  # zero padding
        if raw[:2] != b"\x1f\x8b":
            raise Refused("gzip: trailing garbage")
    return out


def number(tok: bytes) -> float | None:
    """Hand-written recognizer of the number grammar (no regex, no float() leniency)."""
    i, n = 0, len(tok)
    if i < n and tok[i : i + 1] in (b"+", b"-"):
        i += 1
    word = tok[i:].lower()
    if word in SPECIAL:
        return float(tok.decode("ascii"))
    ndig = 0
    while i < n and tok[i] in DIGITS:
        i, ndig = i + 1, ndig + 1
    if i < n and tok[i : i + 1] == b".":
        i += 1
        while i < n and tok[i] in DIGITS:
            i, ndig = i + 1, ndig + 1
    if ndig == 0:
        return None
    if i < n and tok[i : i + 1] in (b"e", b"E"):
        i += 1
        if i < n and tok[i : i + 1] in (b"+", b"-"):
            i += 1
        nexp = 0
        while i < n and tok[i] in DIGITS:
            i, nexp = i + 1, nexp + 1
        if nexp == 0:
            return None
    if i != n:
        return None
    return float(tok.decode("ascii"))


def split_lines(raw: bytes) -> list[bytes]:
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw)
    if raw[:3] == BOM:
        raw = raw[3:]
    out, cur = [], bytearray()
    i = 0
    while i < len(raw):  # LF, CRLF and lone CR end a line
        c = raw[i]
        if c == 10:
            out.append(bytes(cur))
            cur = bytearray()
        elif c == 13:
            out.append(bytes(cur))
            cur = bytearray()
            if raw[i + 1 : i + 2] == b"\n":
                i += 1
        else:
            cur.append(c)
        i += 1
    out.append(bytes(cur))
    return out


def fields(line: bytes) -> list[bytes]:
    return [f for f in line.replace(b"\t", b" ").split(b" ") if f]


def _text(tok: bytes) -> str:
    try:
        return tok.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("not UTF-8") from None


def read_run(raw: bytes) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in split_lines(raw):
        f = fields(line)
        if not f:
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("not UTF-8") from None
        if len(f) < 6:  # fields after the tag are ignored (trec_eval)
            raise Refused("columns")
        s = number(f[4])
        if s is None or not math.isfinite(s):
            raise Refused("score")
        q, d = _text(f[0]), _text(f[2])
        if q == "all":
            raise Refused("reserved")
        if d in out.setdefault(q, {}):
            raise Refused("duplicate")
        out[q][d] = s
    if not out:
        raise Refused("empty")
    return out


def read_qrels(raw: bytes) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    beir = None
    for line in split_lines(raw):
        f = fields(line)
        if not f:
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("not UTF-8") from None
        if beir is None:
            beir = len(f) == 3
            if beir and number(f[2]) is None:
                continue  # header
        if len(f) != (3 if beir else 4):
            raise Refused("columns")
        q, d, g = (f[0], f[1], f[2]) if beir else (f[0], f[2], f[3])
        v = number(g)
        if v is None or not math.isfinite(v):
            raise Refused("grade")
        q, d = _text(q), _text(d)
        if q == "all":
            raise Refused("reserved")
        if d in out.setdefault(q, {}):
            raise Refused("duplicate")
        out[q][d] = v
    if not out:
        raise Refused("empty")
    return out
