""":mod:`tierank.compute` returns what :mod:`pyarrow.compute`'s function of the same name returns (issue 26):
same type, same values, same chunks, on plain and chunked arrays, with nulls and dictionary arrays."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank import compute as ac

STRINGS = {
    "plain": pa.array(["q2", "q1", "q2", "q3", "q1"]),
    "nulls": pa.array(["b", None, "a", "b", None]),
    "chunked": pa.chunked_array([["q2", "q1"], [], ["q2", "q3", "q1"]]),
    "chunked nulls": pa.chunked_array([["b", None], ["a", "b", None]]),
    "dictionary": pa.array(["q2", "q1", "q2", None, "q1"]).dictionary_encode(),
    "chunked dictionary": pa.chunked_array(
        [pa.array(["x", "y"]).dictionary_encode(), pa.array(["y", "z", "x"]).dictionary_encode()]
    ),
    "empty": pa.array([], pa.string()),
}
NUMBERS = {
    "int": pa.array([3, 1, 2, 1], pa.int64()),
    "int nulls": pa.array([3, None, 2, None], pa.int32()),
    "float chunked": pa.chunked_array([[0.5, 1.5], [float("nan"), -2.0]]),
    "uint32": pa.array([7, 0, 7], pa.uint32()),
}
ALL = {**STRINGS, **NUMBERS}


def same(ours, theirs) -> None:
    """Equal results: type, Arrow type, chunks and values (or, given callables, the same exception type)."""
    if callable(ours):
        try:
            theirs = theirs()
        except pa.ArrowException as e:
            with pytest.raises(type(e)):
                ours()
            return
        ours = ours()
    assert type(ours) is type(theirs)
    assert (
        ours.schema == theirs.schema if isinstance(theirs, pa.Table) else ours.type == theirs.type
    )
    assert _values(ours) == _values(theirs), (ours, theirs)


def _values(x):
    """The values of an array, chunk by chunk (a dictionary array's dictionary and indices), NaN comparable."""
    if isinstance(x, pa.Table):
        return {name: _values(x.column(name)) for name in x.column_names}
    if isinstance(x, pa.ChunkedArray):
        return [_values(c) for c in x.chunks]
    if pa.types.is_dictionary(x.type):
        return _values(x.dictionary), _values(x.indices)
    return [("NaN" if isinstance(v, float) and v != v else v) for v in x.to_pylist()]


@pytest.mark.parametrize("name", list(ALL))
def test_one_argument_kernels(name):
    values = ALL[name]
    for f in ("unique", "dictionary_encode", "is_valid"):
        if f == "dictionary_encode" and pa.types.is_dictionary(values.type):
            continue  # Arrow returns a dictionary array as it is
        same(getattr(ac, f)(values), getattr(pc, f)(values))
    same(
        lambda: ac.sort_indices(values), lambda: pc.sort_indices(values)
    )  # (not of a chunked dictionary)
    same(ac.call("is_null", values), pc.is_null(values))


@pytest.mark.parametrize("name", [n for n in ALL if not pa.types.is_dictionary(ALL[n].type)])
def test_dictionary_encode_keeps_chunks_and_nulls(name):
    values = ALL[name]
    same(ac.dictionary_encode(values), pc.dictionary_encode(values))


@pytest.mark.parametrize("name", list(STRINGS))
def test_comparisons_and_any(name):
    values = STRINGS[name]
    scalar = pa.scalar("q1", pa.string())
    if pa.types.is_dictionary(values.type):
        values = (
            ac.decoded(values)
            if isinstance(values, pa.Array)
            else values.cast(values.type.value_type)
        )
    for f in ("equal", "not_equal"):
        same(getattr(ac, f)(values, scalar), getattr(pc, f)(values, scalar))
    mask = pc.equal(values, scalar)
    assert ac.any(mask).equals(pc.any(mask))
    assert ac.any(mask).as_py() == pc.any(mask).as_py()
    # all null or empty: null, as pyarrow.compute.any (min_count=1)
    assert (
        ac.any(pa.array([None, None], pa.bool_())).as_py()
        is pc.any(pa.array([None, None], pa.bool_())).as_py()
    )
    assert ac.any(pa.array([], pa.bool_())).as_py() is pc.any(pa.array([], pa.bool_())).as_py()


@pytest.mark.parametrize("name", list(STRINGS))
def test_set_lookups(name):
    values = STRINGS[name]
    for value_set in (
        pa.array(["q3", "q1", "b"]),
        pa.array(["a", None, "q2"]),
        pa.array([], pa.string()),
    ):
        same(ac.is_in(values, value_set), pc.is_in(values, value_set=value_set))
        same(ac.index_in(values, value_set), pc.index_in(values, value_set=value_set))
        found = ac.index_in(values, value_set)
        same(ac.fill_null(found, -1), pc.fill_null(found, -1))
    keys = pa.array([5, 9, 2], pa.int64())
    same(
        ac.index_in(pa.array([2, 7, 5], pa.int64()), keys),
        pc.index_in(pa.array([2, 7, 5], pa.int64()), value_set=keys),
    )


@pytest.mark.parametrize("name", list(ALL))
def test_take_and_filter(name):
    values = ALL[name]
    n = len(values)
    rng = np.random.default_rng(len(name))
    for indices in (
        pa.array(rng.integers(0, max(n, 1), n if n else 0)),
        pa.array(np.arange(n)[::-1].copy()),
        pa.array([], pa.int64()),
    ):
        same(ac.take(values, indices), pc.take(values, indices))
    mask = pa.array(rng.random(n) < 0.5)
    same(ac.filter(values, mask), pc.filter(values, mask))
    if n:
        with_null = pa.array([None, *mask.to_pylist()[1:]], pa.bool_())
        same(ac.filter(values, with_null), pc.filter(values, with_null))  # a null drops the row
    table = pa.table({"v": values, "i": np.arange(n)})
    same(ac.filter(table, mask), pc.filter(table, mask))
    same(
        ac.take(table, pa.array(np.arange(n)[::-1].copy())),
        pc.take(table, pa.array(np.arange(n)[::-1].copy())),
    )


@pytest.mark.parametrize("name", list(ALL))
def test_cast(name):
    values = ALL[name]
    target = pa.string() if not pa.types.is_floating(values.type) else pa.float32()
    same(ac.cast(values, target), pc.cast(values, target))
    if pa.types.is_integer(values.type):
        same(ac.cast(values, pa.int64()), pc.cast(values, pa.int64()))
        same(ac.cast(values, pa.float64()), pc.cast(values, pa.float64()))


def test_cast_safe_and_unsafe():
    big = pa.array([1, 300], pa.int64())
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(big, pa.int8())
    with pytest.raises(pa.ArrowInvalid):
        ac.cast(big, pa.int8())
    same(ac.cast(big, pa.int8(), safe=False), pc.cast(big, pa.int8(), safe=False))
    text = pa.array(["1.5", "2"])
    same(ac.cast(text, pa.float64()), pc.cast(text, pa.float64()))


def test_fill_null():
    for values, fill in (
        (pa.array([1, None, 3], pa.int32()), -1),
        (pa.array([None, True]), False),
        (pa.chunked_array([[1.0, None], [None]]), 0),
        (pa.array(["a", None]), "z"),
        (pa.array([1, None], pa.int64()), pa.scalar(7, pa.int64())),
    ):
        same(ac.fill_null(values, fill), pc.fill_null(values, fill))


def test_sort_indices_of_a_table_by_keys():
    t = pa.table({"g": [1, 0, 1, 0, 1], "d": ["b", "c", "a", "a", None]})
    for keys in (
        [("g", "ascending"), ("d", "descending")],
        [("g", "ascending"), ("d", "ascending")],
        [("d", "descending")],
    ):
        same(ac.sort_indices(t, sort_keys=keys), pc.sort_indices(t, sort_keys=keys))
    same(
        ac.sort_indices(pa.array(["b", "B", "a", "é"])),
        pc.sort_indices(pa.array(["b", "B", "a", "é"])),
    )


def test_call_by_name():
    a, b = pa.array([True, None, False]), pa.array([False, False, None])
    same(ac.call("or", a, b), pc.or_(a, b))
    same(
        ac.call("is_null", pa.array([1.0, None, float("nan")])),
        pc.is_null(pa.array([1.0, None, float("nan")])),
    )
    opts = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)
    assert ac.call("sum", pa.array([1, 2, None]), options=opts).equals(
        pc.sum(pa.array([1, 2, None]))
    )


@pytest.mark.parametrize("name", ["dictionary", "plain", "nulls"])
def test_decoded_is_dictionary_decode(name):
    values = STRINGS[name]
    if pa.types.is_dictionary(values.type):
        same(ac.decoded(values), values.dictionary_decode())
    else:
        assert ac.decoded(values) is values


def test_fill_null_with_a_scalar_of_another_type_keeps_the_values_type():
    import pyarrow as pa
    import pyarrow.compute as pc

    from tierank import compute as ac

    values = pa.array([1, None, 3], pa.int32())
    got = ac.fill_null(values, pa.scalar(5))  # an int64 scalar
    assert got.type == pa.int32() and got.equals(pc.fill_null(values, pa.scalar(5)))


def _new_codes_in_order(draws: list[int]) -> list[int]:
    """Codes whose first appearances are 0, 1, 2, ... (a parsed run, its queries grouped or not): each draw
    is an earlier code, or the next new one where it exceeds them."""
    codes: list[int] = []
    for d in draws:
        codes.append(min(d, max(codes, default=-1) + 1))
    return codes


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.lists(
            st.one_of(st.integers(0, 4), st.none()), max_size=25
        ),  # any codes, nulls among them
        st.lists(st.integers(1, 4), min_size=5, max_size=5).map(  # one run per code, in order
            lambda lens: [c for c, n in enumerate(lens) for _ in range(n)]
        ),
        st.tuples(
            st.permutations(range(5)), st.lists(st.integers(1, 3), min_size=5, max_size=5)
        ).map(lambda pl: [c for c, n in zip(*pl) for _ in range(n)]),  # one run per code, any order
        st.lists(st.integers(0, 4), min_size=1, max_size=25).map(_new_codes_in_order),
    ),
    st.lists(st.sampled_from(["q1", "q2", "q3", "q4", "q5"]), min_size=5, max_size=5),
    st.sampled_from(["dictionary", "chunked dictionary", "plain", "chunked plain"]),
)
def test_distinct_is_the_order_of_first_appearance(codes, dictionary, form):
    """Any column of ids (unused dictionary entries, a string under two codes, codes out of order, nulls, one
    run per code in order as a parsed run has them; plain or chunked): its distinct values in order of first
    appearance, each once."""
    values = [None if c is None else dictionary[c] for c in codes]
    arr = (
        pa.DictionaryArray.from_arrays(
            pa.array(codes, pa.int32()), pa.array(dictionary, pa.string())
        )
        if "dictionary" in form
        else pa.array(values, pa.string())
    )
    col = (
        pa.chunked_array([arr.slice(0, len(codes) // 2), arr.slice(len(codes) // 2)], arr.type)
        if "chunked" in form
        else arr
    )
    assert ac.distinct(col) == list(dict.fromkeys(values))
    unordered = ac.distinct(col, ordered=False)
    assert sorted(unordered, key=str) == sorted(dict.fromkeys(values), key=str) and len(
        set(unordered)
    ) == len(unordered)


def test_distinct_of_a_parsed_run_hashes_no_code(monkeypatch):
    """Codes 0, 1, 2, ... in runs (a parsed run): the dictionary is the answer, no code is hashed."""
    arr = pa.DictionaryArray.from_arrays(
        pa.array([0, 0, 1, 2, 2], pa.int32()), pa.array(["b", "a", "c"])
    )
    hashed = []
    real = ac.unique
    monkeypatch.setattr(ac, "unique", lambda v: hashed.append(v.type) or real(v))
    assert ac.distinct(arr) == ["b", "a", "c"]
    assert hashed == [
        pa.string()
    ]  # only the dictionary's strings (a string under two codes counts once)
    hashed.clear()
    scattered = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 0, 2, 1], pa.int32()), pa.array(["b", "a", "c", "d"])
    )
    assert ac.distinct(scattered) == ["b", "a", "c"] and hashed == [
        pa.string()
    ]  # new codes in order: none hashed
    hashed.clear()
    shuffled = pa.DictionaryArray.from_arrays(
        pa.array([2, 0, 2, 1], pa.int32()), pa.array(["b", "a", "c"])
    )
    assert sorted(ac.distinct(shuffled, ordered=False)) == ["a", "b", "c"] and hashed == [
        pa.string()
    ]


NUMERIC_TYPES = [
    pa.int8(),
    pa.int32(),
    pa.int64(),
    pa.uint16(),
    pa.uint64(),
    pa.float32(),
    pa.float64(),
]


@settings(max_examples=examples(300), deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(0, 100)), max_size=40),
    kind=st.sampled_from([*NUMERIC_TYPES, pa.bool_(), pa.string()]),
    cuts=st.lists(st.integers(0, 40), max_size=3),
    start=st.integers(0, 5),
    nulls=st.booleans(),
)
def test_numpy_is_to_numpy(values, kind, cuts, start, nulls):
    """:func:`tierank.compute.numpy` gives what ``to_numpy(zero_copy_only=False)`` gives (values, dtype),
    for slices, chunked arrays and nulls, of numbers, booleans and strings."""
    values = values if nulls else [v for v in values if v is not None]
    if pa.types.is_boolean(kind):
        values = [None if v is None else v % 3 == 0 for v in values]
    elif pa.types.is_string(kind):
        values = [None if v is None else f"d{v}" for v in values]
    arr = pa.array(values, kind).slice(min(start, len(values)))
    ours, theirs = ac.numpy(arr), arr.to_numpy(zero_copy_only=False)
    assert (
        ours.dtype == theirs.dtype
        and ours.tolist() == theirs.tolist()
        or (np.isnan(theirs.astype(float)).any() and np.array_equal(ours, theirs, equal_nan=True))
    )
    bounds = sorted({0, len(arr), *(min(c, len(arr)) for c in cuts)})
    chunked = pa.chunked_array([arr.slice(a, b - a) for a, b in zip(bounds, bounds[1:])], kind)
    ours, theirs = ac.numpy(chunked), chunked.to_numpy()
    assert ours.dtype == theirs.dtype
    assert (
        np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f")
        if ours.dtype.kind in "fiub"
        else (ours.tolist() == theirs.tolist())
    )


@settings(max_examples=examples(200), deadline=None)
@given(items=st.lists(st.text(max_size=6), max_size=12))
def test_strings_is_pa_array(items):
    assert ac.strings(items).equals(pa.array(items, pa.string()))
    assert ac.strings([*items, None]).equals(pa.array([*items, None], pa.string()))


@pytest.mark.parametrize("kind", NUMERIC_TYPES)
def test_fill_null_with_a_number_is_pyarrow_compute_s(kind):
    """A number fills nulls as ``pyarrow.compute.fill_null`` fills them (one that the type cannot hold:
    the same error)."""
    arr = pa.array([1, None, 3, None], kind)
    fill = 9 if pa.types.is_unsigned_integer(kind) else -1
    same(ac.fill_null(arr, fill), pc.fill_null(arr, fill))
    same(lambda: ac.fill_null(arr, 0.5), lambda: pc.fill_null(arr, 0.5))
    assert _raised(lambda: ac.fill_null(arr, 10**30)) is _raised(lambda: pc.fill_null(arr, 10**30))


def _raised(call) -> type | None:
    try:
        call()
    except Exception as e:
        return type(e)
    return None
