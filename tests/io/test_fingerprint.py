"""64-bit fingerprints of ids: equal strings, equal fingerprints, whatever their length."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=20), st.text(min_size=250, max_size=700),
                          st.integers(250, 3000).map(lambda n: "d" * n)), min_size=1, max_size=12))
def test_long_strings_get_the_horner_value(strings):
    """Strings over 256 bytes take a closed form (one huge docid made reading a run take seconds)."""
    arr = pa.array(strings, pa.string())
    assert fp.fingerprint(arr).tolist() == _horner_everywhere(arr).tolist()


def test_equal_long_strings_collide_and_near_ones_do_not():
    a = "x" * 300_000
    got = fp.fingerprint(pa.array([a, a, a[:-1] + "y", a + "x", a[:-8]]))
    assert got[0] == got[1] and len(set(got.tolist())) == 4
