"""64-bit fingerprints of Arrow strings, vectorized (no Python loop per string).

Used only as a fast *filter*: equal strings always get equal fingerprints, so a
check that finds no equal fingerprints is exact; when fingerprints do collide,
callers fall back to an exact comparison.  Strings are hashed by Horner's rule
over little-endian 8-byte words modulo 2^64 (one vectorized step per word, read
through an unaligned view of Arrow's data buffer), seeded with the byte length,
then mixed with the splitmix64 finalizer.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import compute as ac

_MULT = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 1 << 20
_PRIME = np.uint64(0x100000001B3)
_LONG = 256  # bytes
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(9)], dtype=np.uint64)
_STEP = np.array(
    [1, int(_PRIME)], dtype=np.uint64
)  # Horner factor of a word past / within a string


def splitmix64(x: np.ndarray, inplace: bool = False) -> np.ndarray:
    """The splitmix64 finalizer (a bijection of uint64), vectorized."""
    x = x if inplace else x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


_SEED_FIRST = np.uint64(
    (int(_MULT) * int(_PRIME)) % (1 << 64)
)  # the seed's factor times the first step's


def _horner(words: np.ndarray, start: np.ndarray, lens: np.ndarray, end: int) -> np.ndarray:
    longest = int(lens.max()) if len(lens) else 0
    if not longest:
        return lens.astype(np.uint64) * _MULT
    with np.errstate(over="ignore"):
        # the first word, in fewer steps: every string starts at or before ``end`` (so no clamp), and the
        # seed (length x _MULT) times the first step's _PRIME is one product
        word = words[start]
        word &= _MASKS[lens if longest <= 8 else np.minimum(lens, 8)]
        h = lens.astype(np.uint64)
        h *= _SEED_FIRST
        h += word
        for w in range(1, -(-longest // 8)):  # Horner's rule over the other 8-byte words
            rem = lens - 8 * w
            np.clip(rem, 0, 8, out=rem)  # bytes of the string in this word
            at = start + 8 * w
            np.minimum(at, end, out=at)
            word = words[at]
            word &= _MASKS[rem]  # keep the string's own bytes only (none past its end)
            # a string already ended keeps its value: times 1 plus a zero word (in place, no np.where)
            h *= _STEP[np.minimum(rem, 1)]
            h += word
    return h


def _horner_long(words: np.ndarray, start: int, length: int) -> np.uint64:
    """`_horner` of one long string in closed form, vectorized over its words.

    After k steps Horner's rule gives ``seed * P**k + sum(word[i] * P**(k-1-i))``
    (mod 2**64): the same value without one numpy step per word of the longest string.
    """
    k = -(-length // 8)
    w = words[start + 8 * np.arange(k)].copy()
    w[-1] &= _MASKS[length - 8 * (k - 1)]
    with np.errstate(over="ignore"):
        pw = np.full(k + 1, _PRIME, dtype=np.uint64)
        pw[0] = 1
        pw = np.multiply.accumulate(pw)  # P**j
        h = np.uint64(length) * _MULT * pw[k]
        h += (w * pw[k - 1 :: -1]).sum(dtype=np.uint64)
    return h


def fingerprint(arr: pa.Array | pa.ChunkedArray, quick: bool = False) -> np.ndarray:
    """uint64 fingerprint of every string of ``arr`` (nulls hash like the empty string).

    ``quick=True`` finishes with one multiplication by an odd constant instead of the splitmix64
    finalizer (other values, about a fifth cheaper): every bit still reaches the high bits, which is
    enough where only the high bits are compared (the duplicate check of [`tierank.io.readers`][tierank.io.readers]).

    Examples
    --------
    >>> fp = fingerprint(pa.array(["a", "b", "a", "ab"]))
    >>> bool(fp[0] == fp[2]), bool(fp[0] == fp[1]), bool(fp[0] == fp[3])
    (True, False, False)
    >>> q = fingerprint(pa.array(["a", "b", "a"]), quick=True)
    >>> bool(q[0] == q[2]), bool(q[0] == q[1]), bool(q[0] == fp[0])
    (True, False, False)
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_string(arr.type):
        arr = ac.cast(arr, pa.string())
    n = len(arr)
    off = np.frombuffer(
        arr.buffers()[1], dtype=np.int32, count=n + 1, offset=4 * arr.offset
    ).astype(np.int64)
    raw = (
        np.frombuffer(arr.buffers()[2], dtype=np.uint8)
        if arr.buffers()[2] is not None
        else np.zeros(0, np.uint8)
    )
    end = int(off[-1]) if n else 0
    padded = np.zeros(end + 8, dtype=np.uint8)  # 8 spare bytes: every word read stays inside
    padded[:end] = raw[:end]
    # little-endian uint64 word starting at every byte offset (unaligned view, no copy)
    words = np.ndarray(shape=(end + 1,), dtype="<u8", buffer=padded, strides=(1,))
    start, lens = off[:-1], np.diff(off)
    # strings longer than _LONG bytes (rare) in closed form: the vectorized loop runs over the others' words only
    long = np.flatnonzero(lens > _LONG)
    short = lens if not len(long) else np.where(lens > _LONG, 0, lens)
    out = np.empty(n, dtype=np.uint64)
    for c in range(0, n, _CHUNK):  # chunks keep the temporaries small
        out[c : c + _CHUNK] = _horner(words, start[c : c + _CHUNK], short[c : c + _CHUNK], end)
    for i in long:
        out[i] = _horner_long(words, int(start[i]), int(lens[i]))
    if quick:
        with np.errstate(over="ignore"):
            out *= _MULT
        return out
    return splitmix64(out, inplace=True)


def string_array(values) -> pa.StringArray:
    """Arrow strings of a sequence of Python strings, built from their UTF-8 buffers (``pa.array``
    would import pandas, a third of a second, on its first call in a process).

    >>> string_array(["q1", "", "é"]).to_pylist()
    ['q1', '', 'é']
    """
    encoded = [str(v).encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    if offsets[-1] >= 2**31:  # pragma: no cover - 2 GiB of identifiers
        raise ValueError("strings over 2 GiB in all: too long for one arrow string array")
    return pa.StringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))
    )


def fingerprint_ids(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Fingerprints of a column with few distinct values (query ids), through its dictionary."""
    enc = arr if pa.types.is_dictionary(arr.type) else ac.dictionary_encode(arr)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.unify_dictionaries().combine_chunks()
    return fingerprint(enc.dictionary)[enc.indices.to_numpy(zero_copy_only=False)]


def pair_fingerprint(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combine two uint64 fingerprints (order matters)."""
    with np.errstate(over="ignore"):
        a = a * _MULT
        a += b
    return splitmix64(a, inplace=True)
