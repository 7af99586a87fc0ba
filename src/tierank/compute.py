"""Arrow's compute kernels for tierank, called by name (a bottom room).

Every function calls ``pyarrow.compute.call_function`` with Arrow's kernel of the same name and returns
exactly what the `pyarrow.compute` function of that name returns (``tests/test_compute.py``
compares them); the module gathers in one place the few kernels and option objects tierank needs.
They are taken from ``pyarrow._compute``, where `pyarrow.compute` takes them: importing
`pyarrow.compute` itself makes a Python wrapper with a docstring for every Arrow kernel (about 40 ms, a
quarter of ``tierank trec_eval``'s start-up), which tierank does not call.
Helpers with no namesake there: [`distinct`][tierank.compute.distinct] (the distinct values of a column of ids, each once),
[`decoded`][tierank.compute.decoded] (a dictionary array decoded, as ``DictionaryArray.dictionary_decode``), and the
conversions between numpy and Arrow that do not go through pyarrow's pandas layer (which imports
pandas: about a third of a small ``tierank eval``): [`array`][tierank.compute.array] (``pa.array`` of a numpy array, also
without importing ``numpy.ma``), [`numpy`][tierank.compute.numpy] (``to_numpy``) and [`strings`][tierank.compute.strings] (``pa.array`` of
Python strings).

>>> import pyarrow as pa
>>> enc = dictionary_encode(pa.array(["b", "a", "b"]))
>>> enc.dictionary.to_pylist(), enc.indices.to_pylist()
(['b', 'a'], [0, 1, 0])
>>> index_in(pa.array(["a", "c"]), pa.array(["c", "a"])).to_pylist()
[1, 0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from pyarrow._compute import (  # what pyarrow.compute imports (see the module's docstring)
    CastOptions,
    ScalarAggregateOptions,
    SetLookupOptions,
    SortOptions,
    call_function,
)

__all__ = [
    "call",
    "cast",
    "dictionary_encode",
    "equal",
    "filter",
    "index_in",
    "is_in",
    "not_equal",
    "sort_indices",
    "take",
    "unique",
    "any",
    "fill_null",
    "is_valid",
    "decoded",
    "array",
    "distinct",
    "numpy",
    "strings",
]


def call(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow's kernel ``name`` on ``args`` (arrays, chunked arrays, scalars, tables)."""
    return call_function(name, list(args), options)


def dictionary_encode(values: Any) -> Any:
    return call_function("dictionary_encode", [values])


def unique(values: Any) -> Any:
    return call_function("unique", [values])


def equal(a: Any, b: Any) -> Any:
    return call_function("equal", [a, b])


def not_equal(a: Any, b: Any) -> Any:
    return call_function("not_equal", [a, b])


def any(values: Any) -> Any:  # noqa: A001 - Arrow's name
    return call_function("any", [values], ScalarAggregateOptions(skip_nulls=True, min_count=1))


def is_in(values: Any, value_set: Any) -> Any:
    return call_function("is_in", [values], SetLookupOptions(value_set))


def index_in(values: Any, value_set: Any) -> Any:
    return call_function("index_in", [values], SetLookupOptions(value_set))


def take(values: Any, indices: Any) -> Any:
    return call_function("take", [values, indices])


def filter(values: Any, mask: Any) -> Any:  # noqa: A001 - Arrow's name
    return call_function("filter", [values, mask])


def cast(values: Any, target_type: Any, safe: bool = True) -> Any:
    options = CastOptions.safe(target_type) if safe else CastOptions.unsafe(target_type)
    return call_function("cast", [values], options)


def sort_indices(values: Any, sort_keys: Any = ()) -> Any:
    """Indices that sort ``values`` (an array, or a table by ``sort_keys``: ``(column, order)`` pairs)."""
    return call_function("sort_indices", [values], SortOptions(sort_keys=list(sort_keys)))


def fill_null(values: Any, fill_value: Any) -> Any:
    """``values`` with each null replaced by ``fill_value`` (a Python value becomes a scalar of their type)."""
    if not isinstance(fill_value, pa.Scalar):
        fill_value = _scalar(fill_value, values.type)
    elif (
        fill_value.type != values.type
    ):  # as pyarrow.compute.fill_null: the scalar in the values' type
        fill_value = pa.scalar(fill_value.as_py(), type=values.type)
    return call_function("coalesce", [values, fill_value])


def _scalar(value: Any, kind: Any) -> Any:
    """``pa.scalar(value, type=kind)``; a number of a numeric type is read from a one-element array's
    memory (``pa.scalar`` of a Python value asks pyarrow's pandas layer, which imports pandas)."""
    number = type(value) is float or (type(value) is int and -(2**63) <= value < 2**63)
    if _dlpack_ok(kind) and number:
        try:
            one = np.array([value], dtype=np.dtype(kind.to_pandas_dtype()))
        except (OverflowError, ValueError):  # not representable: pa.scalar's own error
            one = None
        if one is not None and one.tolist()[0] == value:  # held exactly: else pa.scalar decides
            return pa.Array.from_buffers(kind, 1, [None, pa.py_buffer(one)])[0]
    return pa.scalar(value, type=kind)


def is_valid(values: Any) -> Any:
    return call_function("is_valid", [values])


def decoded(values: Any) -> Any:
    """A dictionary-encoded array decoded (as ``DictionaryArray.dictionary_decode``); any other array as it is.

    >>> import pyarrow as pa
    >>> decoded(pa.array(["b", None, "b", "a"]).dictionary_encode()).to_pylist()
    ['b', None, 'b', 'a']
    >>> ids = pa.array(["x"])
    >>> decoded(ids) is ids
    True
    """
    if not pa.types.is_dictionary(values.type):
        return values
    return take(values.dictionary, values.indices)


def distinct(ids: Any, ordered: bool = True) -> list:
    """The distinct values of ``ids`` (an array or a chunked array, dictionary-encoded or not), each once,
    as Python objects: the queries of a run or of judgments.  In the order they first appear, or with
    ``ordered=False`` in any order (for callers that sort them or make a set).

    A dictionary-encoded column is not decoded row by row: the codes at the heads of its runs of equal
    codes are found in one pass, and no code is hashed where the codes first appear as ``0, 1, 2, ...``
    (a parsed run, grouped or not) or where the order does not matter; only then are the dictionary's used
    strings hashed, so that a value under two codes counts once.

    >>> import pyarrow as pa
    >>> distinct(pa.array(["q2", "q2", "q1", "q2"]).dictionary_encode())
    ['q2', 'q1']
    >>> twice = pa.DictionaryArray.from_arrays(pa.array([2, 0, 1], pa.int32()), pa.array(["a", "b", "a"]))
    >>> distinct(twice), distinct(pa.chunked_array([["c", "a"], ["c", "b"]]))
    (['a', 'b'], ['c', 'a', 'b'])
    """
    if isinstance(ids, pa.ChunkedArray):
        ids = (
            ids.unify_dictionaries() if pa.types.is_dictionary(ids.type) else ids
        ).combine_chunks()
    if not pa.types.is_dictionary(ids.type):
        return unique(ids).to_pylist()  # Arrow's unique keeps the order of first appearance
    if ids.null_count or not len(ids):
        return unique(decoded(ids)).to_pylist()
    codes = numpy(ids.indices)
    heads = np.concatenate(
        (codes[:1], codes[1:][codes[1:] != codes[:-1]])
    )  # the code of each run of equal codes
    if not ordered:  # the entries used, in dictionary order: no hash of the codes
        used_mask = np.zeros(len(ids.dictionary), dtype=bool)
        used_mask[heads] = True
        used = filter(ids.dictionary, array(used_mask))
    else:
        heads = heads.astype(
            np.int64, copy=False
        )  # ``+ 1`` below must not wrap around a narrow index type
        top = np.maximum.accumulate(heads)
        if heads[0] == 0 and (heads[1:] <= top[:-1] + 1).all():
            # every new code is the next one: codes 0..top[-1] all used, first appearing in dictionary order
            used = ids.dictionary.slice(0, int(top[-1]) + 1)
        else:
            used = take(ids.dictionary, unique(array(heads)))
    return unique(used).to_pylist()  # unique again: a dictionary may hold a value twice (two codes)


#: numpy kinds whose values Arrow holds as they are (little-endian machines: numpy's native order)
_AS_THEY_ARE = {"i", "u", "f"}


def array(values: Any, type: Any = None) -> Any:  # noqa: A002 - pa.array's name
    """``pa.array(values, type)``; a 1-D numpy array of numbers or booleans becomes an Arrow array
    without ``pa.array``'s test for a numpy masked array, which imports `numpy.ma` (about 10 ms,
    a thirtieth of a small ``tierank eval``).  The same array: type, values, no nulls (NaN stays NaN),
    the numbers' memory shared as ``pa.array`` shares it.

    >>> import numpy as np
    >>> array(np.array([3, 1, 2])).equals(pa.array(np.array([3, 1, 2])))
    True
    >>> array(np.array([True, False, True])).to_pylist()
    [True, False, True]
    >>> array(np.array([0.5, np.nan]), pa.float64()).to_pylist()[0], array([1, None]).null_count
    (0.5, 1)
    """
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.isnative:
        kind = values.dtype.kind
        if kind == "b" and type in (None, pa.bool_()):
            bits = np.packbits(values, bitorder="little")
            return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
        if kind in _AS_THEY_ARE and values.dtype.itemsize >= 4 - (kind != "f") * 3:
            arrow = pa.from_numpy_dtype(values.dtype)
            if type is None or type == arrow:
                data = np.ascontiguousarray(values)
                return pa.Array.from_buffers(arrow, len(values), [None, pa.py_buffer(data)])
    return pa.array(values, type=type)


def numpy(values: Any, zero_copy_only: bool = False) -> np.ndarray:
    """``values.to_numpy(zero_copy_only=...)`` of an Arrow array or chunked array; a column of fixed-width
    numbers without nulls comes through DLPack, one of booleans without nulls from its bits (``Array.to_numpy`` first asks pyarrow's pandas layer,
    which imports pandas: about a third of a small ``tierank eval``).  The same values and dtype; a single
    chunk shares its memory, read-only, as ``to_numpy`` shares it.

    >>> numpy(pa.array([3, 1, 2])).tolist(), numpy(pa.chunked_array([[0.5], [1.5, 2.5]])).tolist()
    ([3, 1, 2], [0.5, 1.5, 2.5])
    >>> numpy(pa.array(["a", "b"])).tolist(), numpy(pa.array([1, None])).tolist()
    (['a', 'b'], [1.0, nan])
    >>> numpy(pa.array([True, False, True, True]).slice(1)).tolist()
    [False, True, True]
    """
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return numpy(values.chunk(0), zero_copy_only)
        if values.num_chunks > 1 and _dlpack_ok(values.type) and values.null_count == 0:
            return np.concatenate([np.from_dlpack(c) for c in values.chunks])
        return values.to_numpy()
    if _dlpack_ok(values.type) and values.null_count == 0:
        return np.from_dlpack(values)
    if pa.types.is_boolean(values.type) and values.null_count == 0 and not zero_copy_only:
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        start = values.offset
        return np.unpackbits(bits, count=start + len(values), bitorder="little")[start:].view(bool)
    return values.to_numpy(zero_copy_only=zero_copy_only)


def _dlpack_ok(kind: Any) -> bool:
    """Arrow types whose arrays numpy reads through DLPack (fixed-width numbers, not bit-packed)."""
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def strings(items: list[str]) -> Any:
    """``pa.array(items, pa.string())`` built from its buffers (``pa.array`` of Python objects asks
    pyarrow's pandas layer whether each is a missing value, which imports pandas).

    >>> strings(["all", "", "é"]).equals(pa.array(["all", "", "é"], pa.string()))
    True
    """
    if not all(type(s) is str for s in items):  # None, or other objects: pa.array's own handling
        return pa.array(items, pa.string())
    data = [s.encode() for s in items]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    )
