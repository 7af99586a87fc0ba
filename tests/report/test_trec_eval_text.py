"""``--format trec_eval`` made column-wise: every number's text equals Python's ``f"{x:6.4f}"`` (and C's
``printf("%6.4f")``, both correctly rounded) whatever the value, counts print as trec_eval's ``%ld``,
and the per-query lines (names, queries and value texts of any length, several chunks, with and
without Arrow's string views) equal the line-by-line ``"%-22s\\t%s\\t%s\\n"`` formatting."""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank.report.formats import ResultTable
from tierank.report.formats import trec_eval as te


def expected_text(x: float, count: bool) -> str:
    """What trec_eval prints: ``%ld`` of a count that is a whole number, ``%6.4f`` otherwise; NaN as
    the ``-nan`` of the 0/0 it comes from (tierank's convention whatever NaN's sign)."""
    if count and math.isfinite(x) and x == int(x):
        return str(int(x))
    if math.isnan(x):
        return "  -nan"
    return f"{x:6.4f}"


def _libc_printf():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None

    def printf(x: float) -> str:
        buf = ctypes.create_string_buffer(512)
        libc.snprintf(buf, 512, b"%6.4f", ctypes.c_double(x))
        return buf.value.decode()

    return printf


LIBC = _libc_printf()

# k/20000 for odd k lies on a rounding boundary of the fourth decimal (as written; the double is
# next to it); the doubles on either side; the same boundaries at larger magnitudes and both signs;
# k/32, whose fifth decimal is an exact 5 in binary (a tie C and Python round to even)
BOUNDARY = st.integers(0, 2_000_000).map(lambda k: k / 20_000)
NEIGHBOURS = BOUNDARY.flatmap(
    lambda x: st.sampled_from([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
).map(float)
HALVES = st.builds(
    lambda k, sign, step: sign * float(np.nextafter((k + 0.5) / 1e4, step * np.inf)),
    st.integers(0, 10**12),
    st.sampled_from([1.0, -1.0]),
    st.sampled_from([0, 1, -1]),
)
TIES = st.integers(-(10**7), 10**7).map(lambda k: k / 32)
ANY = st.floats(allow_nan=True, allow_infinity=True)
SPECIAL = st.sampled_from(
    [0.0, -0.0, 1e-300, -1e-300, 9.99995, 9.99994999, 99999.99995, 2.0**52 / 1e4, 4.5e11, 1e15,
     1e300, -1e300, 2.0**63, 1e18, -(2.0**53), 0.00005, 0.00015, 0.00025, -0.00005]
)  # fmt: skip
VALUE = st.one_of(
    ANY, BOUNDARY, NEIGHBOURS, HALVES, TIES, SPECIAL, st.integers(-(10**6), 10**6).map(float)
)


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(VALUE, st.booleans()), min_size=1, max_size=60))
def test_numbers_are_printf_texts(pairs):
    values = [x for x, _ in pairs]
    counts = [c for _, c in pairs]
    assert te.trec_numbers(values, counts) == [expected_text(x, c) for x, c in pairs]
    assert te.trec_numbers(values) == [expected_text(x, False) for x in values]


@pytest.mark.skipif(LIBC is None, reason="no C library to call printf from")
@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(st.one_of(ANY, BOUNDARY, NEIGHBOURS, HALVES, TIES, SPECIAL), min_size=1, max_size=40)
)
def test_numbers_are_c_printf(values):
    """Python's ``%6.4f`` is C's (glibc: both round the exact binary value half to even); NaN aside,
    whose sign C prints and tierank does not (always ``-nan``, the 0/0 of trec_eval)."""
    values = [x for x in values if not math.isnan(x)]
    assert te.trec_numbers(values) == [LIBC(x) for x in values]


def test_every_text_of_the_tables():
    """The two tables whole: 0.0000 to 9.9999, and a count's 0 to 99999 (and the texts after them)."""
    values = np.arange(100_500) / 10_000
    assert te.trec_numbers(values) == [f"{v:6.4f}" for v in values.tolist()]
    counts = np.arange(100_500, dtype=float)
    assert te.trec_numbers(counts, count=True) == [str(i) for i in range(100_500)]


@pytest.mark.full
def test_every_table_text_and_its_neighbours():
    """The table of the common texts (0.0000 to 9.9999): every boundary k/20000 below 10 and the
    doubles next to it, all at once."""
    k = np.arange(200_000)
    x = k / 20_000
    values = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])
    got = te.trec_numbers(values)
    assert got == [f"{v:6.4f}" for v in values.tolist()]


NAME = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\t"), max_size=30
)
QID = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=20
)  # any length: held in the view (up to 12 bytes with its tab) or in a buffer
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=16)


@st.composite
def layouts(draw):
    k = draw(st.integers(1, 5))
    names = draw(st.lists(NAME, min_size=k, max_size=k))
    qids = draw(st.lists(QID, min_size=1, max_size=8, unique=True))
    columns = []
    for _ in range(k):
        if draw(st.integers(0, 4)) == 0:
            columns.append(draw(st.lists(TEXT, min_size=len(qids), max_size=len(qids))))
        else:
            vals = draw(st.lists(VALUE, min_size=len(qids), max_size=len(qids)))
            columns.append((np.array(vals, dtype=float), draw(st.booleans())))
    return names, qids, columns


def reference_lines(names, qids, columns) -> str:
    out = []
    for i, q in enumerate(qids):
        for name, col in zip(names, columns):
            if isinstance(col, tuple):
                text = expected_text(float(col[0][i]), col[1])
            else:
                text = f"'{col[i]}'"
            out.append(f"{name:<22}\t{q}\t{text}\n")
    return "".join(out)


@pytest.mark.parametrize("views", [True, False], ids=["arrow-views", "numpy"])
@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(layouts(), st.integers(1, 12))
def test_lines_equal_line_by_line_formatting(monkeypatch, views, layout, chunk):
    """Names shorter and longer than 22, non-ASCII queries and texts, long and short value texts,
    string columns, chunks of a few lines: the bytes of the lines are the ``%``-formatted lines'."""
    names, qids, columns = layout
    monkeypatch.setattr(te, "_CAST", [views and te._casts_views()])
    monkeypatch.setattr(te, "_CHUNK_LINES", chunk)
    pieces = te._Lines(names, qids, columns).pieces()
    assert b"".join(bytes(p) for p in pieces).decode("utf-8") == reference_lines(
        names, qids, columns
    )


def test_arrow_string_views_are_used_here():
    """The fast path is the one the other tests run where pyarrow has string views (16 and later)."""
    import pyarrow as pa

    assert te._casts_views() == hasattr(pa, "string_view")


@pytest.mark.parametrize("stat", te.TREC_STATS)
def test_per_query_lines_are_the_records_formatted_one_by_one(stat):
    """Every per-query line of the bytes the command line writes, for several runs, is the record's
    statistic formatted on its own (``%-22s\t%s\t%6.4f``, a count as an integer), in query order;
    the summary lines follow only without ``-n``."""
    from tierank.measures.names import plan

    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}, "a-long-query-id-17": {"a": 1}}
    runs = {
        "r1": {
            "q1": {"a": 0.5, "b": 0.5, "c": 0.1},
            "q2": {"x": 3.0, "y": 3.0},
            "a-long-query-id-17": {"b": 1},
        },
        "r2": {"q1": {"c": 1.0}, "q2": {"y": 1.0}},
    }
    measures = ["num_ret", "P.1", "map", "utility", "ndcg_cut.2"]
    results = {n: tierank.evaluate(qrels, r, measures) for n, r in runs.items()}
    table = ResultTable.of(results)
    for summary in (True, False):
        text = b"".join(
            bytes(p) for p in te.render_pieces(table, True, stat=stat, summary=summary)
        ).decode("utf-8")
        expected = []
        for res in results.values():
            rows = {
                (r["query"], r["measure"]): r
                for r in res.records(per_query=True)
                if r["query"] != "all"
            }
            printed = [e for e in plan(res.measures).printed if e.measure is not None]
            for q in sorted({q for q, _ in rows}, key=lambda q: q.encode()):
                for e in printed:
                    v = float(rows[q, str(e.measure)][stat])
                    count = e.measure.is_count and v.is_integer()
                    expected.append(f"{e.name:<22}\t{q}\t{int(v) if count else format(v, '6.4f')}")
        per_query = [ln for ln in text.splitlines() if ln.split("\t")[1] != "all"]
        assert per_query == expected
        # several runs: each block opens with its run's name, summary or not
        labels = [ln for ln in text.splitlines() if ln.startswith("run ")]
        assert labels == [f"{'run':<22}\tall\t{name}" for name in runs]
        rest = [ln for ln in text.splitlines() if not ln.startswith("run ")]
        assert any(ln.split("\t")[1] == "all" for ln in rest) is summary
