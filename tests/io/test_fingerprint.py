"""64-bit fingerprints of ids: equal strings, equal fingerprints, whatever their length."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.compute import strings
from tierank.io import fingerprint as fp


def _horner_everywhere(arr: pa.Array) -> np.ndarray:
    """The vectorized Horner loop over every string (the definition), long ones included."""
    off = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1).astype(np.int64)
    end = int(off[-1])
    padded = np.zeros(end + 8, dtype=np.uint8)
    if end:
        padded[:end] = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[:end]
    words = np.ndarray(shape=(end + 1,), dtype="<u8", buffer=padded, strides=(1,))
    return fp.splitmix64(fp._horner(words, off[:-1], np.diff(off), end))


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=20),
            st.text(min_size=250, max_size=700),
            st.integers(250, 3000).map(lambda n: "d" * n),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_long_strings_get_the_horner_value(strings):
    """Strings over 256 bytes take a closed form (one huge docid made reading a run take seconds)."""
    arr = pa.array(strings, pa.string())
    assert fp.fingerprint(arr).tolist() == _horner_everywhere(arr).tolist()


def test_equal_long_strings_collide_and_near_ones_do_not():
    a = "x" * 300_000
    got = fp.fingerprint(pa.array([a, a, a[:-1] + "y", a + "x", a[:-8]]))
    assert got[0] == got[1] and len(set(got.tolist())) == 4


def _python_fingerprint(s: str) -> int:
    """The definition in plain Python: seed = byte length x golden ratio; Horner's rule over little-endian
    8-byte words (the last one zero-padded) modulo 2**64; the splitmix64 finalizer."""
    m = (1 << 64) - 1
    b = s.encode()
    h = (len(b) * 0x9E3779B97F4A7C15) & m
    for i in range(0, len(b), 8):
        h = (h * 0x100000001B3 + int.from_bytes(b[i : i + 8], "little")) & m
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & m
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & m
    return h ^ (h >> 31)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.one_of(st.text(max_size=9), st.text(max_size=40), st.text(min_size=250, max_size=400)),
        min_size=0,
        max_size=30,
    )
)
def test_fingerprints_follow_the_definition(strings):
    """Every fast path (all ids of one word, of several words, long ones) gives the defined value: tie-breaking
    by ``random:SEED`` depends on these numbers, so they must never change."""
    arr = pa.array(strings, pa.string())
    assert fp.fingerprint(arr).tolist() == [_python_fingerprint(s) for s in strings]
    if len(arr) > 2:  # a slice (an offset into Arrow's buffers)
        assert fp.fingerprint(arr.slice(1)).tolist() == [
            _python_fingerprint(s) for s in strings[1:]
        ]


def test_known_values():
    """Pinned: the definition itself must not drift (seeded tie-breaks and saved orderings depend on it)."""
    ids = ["", "a", "doc12345", "MARCO_D1234567"]
    want = [0, 706004689665582138, 5994650733577341659, 16372647972980712467]
    assert [_python_fingerprint(s) for s in ids] == want
    assert fp.fingerprint(pa.array(ids)).tolist() == want


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.text(max_size=12), max_size=30))
def test_strings_built_from_buffers_fingerprint_as_pa_array(values):
    """The arrow strings built from UTF-8 buffers (no pandas import) equal ``pa.array``'s, and so
    fingerprint alike (the sampling keys of every query unchanged)."""
    built = strings(np.array(values, dtype=object))
    want = pa.array(values, pa.string())
    assert built.equals(want)
    assert np.array_equal(fp.fingerprint(built), fp.fingerprint(want))
