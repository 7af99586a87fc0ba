"""``trec_eval``: trec_eval's own layout (``trec_eval [-q] [-n]``) and its arithmetic, one statistic
per line (``--stat``); several runs print one after the other, as trec_eval run once per run would.

The per-query lines are made column-wise, without a Python step per line: each value's text comes
from a table (``0.0000`` to ``9.9999``, counts ``0`` to ``99999``) or is made digit by digit in
numpy (Python formats only a value within rounding error of a boundary, an infinity or a huge one);
a line is three Arrow string views (its name, its query, its value's text) and the cast of the
string-view array to a string array writes all lines into one buffer, which the command line writes
as it is ([`render_pieces`][tierank.report.formats.trec_eval.render_pieces]).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ... import compute
from ...errors import TierankInputError
from ...measures import Measure
from ...measures.names import plan as measure_plan
from ...results import DERIVED, statistic
from . import TREC_STATS, register
from .grouped import ResultTable


def _trec_value(x: float, count: bool) -> str:
    """trec_eval's number: ``%6.4f``; a count (``%ld`` in trec_eval) as an integer when it is one; NaN
    as trec_eval's C library prints the 0/0 it comes from, ``  -nan``."""
    if count and math.isfinite(x) and float(x).is_integer():
        return f"{int(x)}"
    if x != x:
        return f"{'-nan':>6}"
    return f"{x:6.4f}"


#: powers of ten that an int64 holds
_POW10 = 10 ** np.arange(19, dtype=np.int64)
#: distance from a half-unit of the fourth decimal under which ``%6.4f`` is decided from the exact
#: binary value: the spacing of doubles below 2**17, so the double ``v * 1e4`` of a value below 10
#: (off the exact product by half a spacing at most) rounds as the exact product does
_NEAR_HALF = 2.0**-36

# Arrow's string view: an int32 length, then the text itself when it has at most 12 bytes, else its
# first 4 bytes, the index of the data buffer holding it and its offset there (int32 each)
_INLINE = 12
#: the data buffers of the lines' views: the names, the queries, the longer value texts
_HEADS, _QUERIES, _LONG = 0, 1, 2
#: one string view, copied as one item
_VIEW = np.dtype((np.void, 16))
_TABLE: list[np.ndarray] = []


def _table() -> np.ndarray:
    """The string views of the texts ``"0.0000\\n"`` to ``"9.9999\\n"``, by their value times 10**4,
    then of ``"0\\n"`` to ``"99999\\n"`` (a count's), by 100,000 plus their value."""
    if not _TABLE:
        # the 5 digits of 0 to 99999, leading zeros kept: each place a repeating pattern
        ten = np.arange(48, 58, dtype=np.uint8)
        five = np.empty((100_000, 5), dtype=np.uint8)
        for k in range(5):
            five[:, 4 - k] = np.tile(np.repeat(ten, 10**k), 10 ** (4 - k))
        t = np.zeros((200_000, 16), dtype=np.uint8)
        t.view(np.int32)[:100_000, 0] = 7
        t[:100_000, 4] = five[:, 0]
        t[:100_000, 5] = ord(".")
        t[:100_000, 6:10] = five[:, 1:]
        t[:100_000, 10] = ord("\n")
        for d in range(1, 6):  # the integers of d digits
            first, end = (0 if d == 1 else 10 ** (d - 1)), 10**d
            rows = t[100_000 + first : 100_000 + end]
            rows.view(np.int32)[:, 0] = d + 1
            rows[:, 4 : 4 + d] = five[first:end, 5 - d :]
            rows[:, 4 + d] = ord("\n")
        _TABLE.append(t.view(_VIEW).ravel())
    return _TABLE[0]


def _views(
    text: np.ndarray, length: np.ndarray, buffer: int, base: int = 0
) -> tuple[np.ndarray, bytes]:
    """The string views of the texts ``text[i, :length[i]]`` (a uint8 matrix, zero
    after each text): a text of at most 12 bytes in its view, the others one after the other in the
    returned bytes, data buffer ``buffer`` from offset ``base``."""
    m, width = text.shape
    out = np.zeros((m, 16), dtype=np.uint8)
    out[:, 4 : 4 + min(width, _INLINE)] = text[:, :_INLINE]
    views = out.view(np.int32)
    views[:, 0] = length
    long = np.flatnonzero(length > _INLINE)
    if not long.size:
        return out.view(_VIEW).ravel(), b""
    text, length = text[long], length[long]
    data = text[np.arange(width) < length[:, None]].tobytes()
    out[long, 8:] = 0
    views[long, 2] = buffer
    views[long, 3] = base + np.cumsum(length) - length
    return out.view(_VIEW).ravel(), data


def _texts(values: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_trec_value`` of each value (``count``: its count flag) and a newline, left-aligned in the
    rows of a uint8 matrix (zero after each text), and the length of each text.

    Made digit by digit (a sign, the integer part, four decimals of ``rint(|v| * 1e4)`` where that
    rounds as the exact binary value does: clear of a half by more than the product's rounding error),
    NaN as ``  -nan``; Python's formatting for the rest (a value within that error of a rounding
    boundary, infinities, magnitudes of 2**52 / 10**4 and more: the text of the exact binary value,
    rounded half to even, as C's ``%6.4f``)."""
    v = np.asarray(values, dtype=np.float64)
    count = np.asarray(count, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.abs(v)
        x = a * 1e4
        c = np.rint(x)
        whole = count & (np.floor(a) == a) & (a < 1e18)
        clear = ~whole & (np.abs(x - c) < 0.5 - np.spacing(x)) & (x < 2.0**52)
    nan = np.isnan(v)
    digit = np.flatnonzero(whole | clear)
    python = np.flatnonzero(~whole & ~clear & ~nan)
    # (all rows as a slice where they are all made here: no gathering)
    sel: np.ndarray | slice = digit if digit.size < len(v) else slice(None)
    w = whole[sel]
    integer = np.where(w, a[sel], c[sel] // 10_000).astype(np.int64)
    fraction = np.where(w, 0, c[sel] % 10_000).astype(np.intp)
    minus = np.where(w, v[sel] < 0, np.signbit(v[sel]))
    digits = np.searchsorted(_POW10[1:], integer, side="right") + 1
    d_len = minus + digits + np.where(w, 0, 5) + 1
    said, p_len = _python_texts(v[python], count[python])
    width = max(7, int(d_len.max(initial=0)), int(p_len.max(initial=0)))
    out = np.zeros((len(v), width), dtype=np.uint8)
    length = np.full(len(v), 7, dtype=np.int64)
    out[nan, :7] = np.frombuffer(b"  -nan\n", dtype=np.uint8)
    if digit.size:
        four = _table().view(np.uint8).reshape(-1, 16)[:10_000, 6:10]  # "0000" to "9999"
        # the integer's digits, leading zeros kept, four at a time from the table
        chunks = -(-int(digits.max()) // 4)
        places = np.empty((digit.size, 4 * chunks), dtype=np.uint8)
        rest = integer
        for k in range(chunks - 1, -1, -1):
            places[:, 4 * k : 4 * k + 4] = four[rest % 10_000]
            rest = rest // 10_000
        decimals = four[fraction]
        # the texts of one layout (sign or not, number of digits, integer or not) at once
        kind = (minus * 32 + digits) * 2 + w
        for key in np.flatnonzero(np.bincount(kind)).tolist():
            found = np.flatnonzero(kind == key)
            rows: np.ndarray | slice = found if found.size < digit.size else slice(None)
            at = digit[rows] if isinstance(sel, np.ndarray) else rows
            sign, d, is_whole = key // 64, key // 2 % 32, key % 2
            if sign:
                out[at, 0] = ord("-")
            out[at, sign : sign + d] = places[rows, 4 * chunks - d :]
            if is_whole:
                out[at, sign + d] = ord("\n")
            else:
                out[at, sign + d] = ord(".")
                out[at, sign + d + 1 : sign + d + 5] = decimals[rows]
                out[at, sign + d + 5] = ord("\n")
        length[digit] = d_len
    if python.size:
        out[python, : said.shape[1]] = said
        length[python] = p_len
    return out, length


def _python_texts(values: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_trec_value`` of each value and a newline, by Python's formatting (``"%6.4f"`` of all of
    them at once), left-aligned in the rows of a uint8 matrix (zero after each text), and their
    lengths."""
    values = values.tolist()
    texts = ("%6.4f\n" * len(values)) % tuple(values)
    counted = np.flatnonzero(count)
    if counted.size:  # a count: trec_eval's %ld where it is a whole number (10**18 or more here)
        lines = texts.split("\n")[:-1]
        for i in counted.tolist():
            lines[i] = _trec_value(values[i], True)
        texts = "".join(t + "\n" for t in lines)
    data = np.frombuffer(texts.encode("utf-8"), dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n")) + 1
    lens = np.diff(ends, prepend=0)
    out = np.zeros((len(values), int(lens.max(initial=0))), dtype=np.uint8)
    out[
        np.repeat(np.arange(len(values)), lens), np.arange(len(data)) - np.repeat(ends - lens, lens)
    ] = data
    return out, lens


def _number_views(values: np.ndarray, count: np.ndarray, base: int = 0) -> tuple[np.ndarray, bytes]:
    """The string views of ``_trec_value`` and a newline of each of ``values`` (queries x measures,
    ``count``: each measure's count flag), query after query, the longer texts in the returned
    bytes (data buffer ``_LONG`` from ``base``).  The common value, ``0 <= v < 9.99995`` and not a
    count, is read from a table by ``rint(v * 1e4)`` where that is the exact value's rounding, a
    count's whole value below 10**5 from a table of integers; ``_texts`` makes the others."""
    values = np.asarray(values, dtype=np.float64)
    count = np.asarray(count, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.abs(values)
        x *= 1e4
        c = np.rint(x)
        x -= c
        np.abs(x, out=x)
        done = x < 0.5 - _NEAR_HALF
        done &= c < 100_000
        done &= ~np.signbit(values)
        counts = np.flatnonzero(count)
        if counts.size:
            done[:, counts] = False
            v = values[:, counts]
            small = (v >= 0) & (v < 100_000) & (np.floor(v) == v)
            c[:, counts] = np.where(small, 100_000 + v, 0)
            done[:, counts] = small
    np.copyto(c, 0, where=~done)
    views = _table()[c.astype(np.intp).ravel()]
    if done.all():
        return views, b""
    rest = np.flatnonzero(~done.ravel())
    flat_count = np.broadcast_to(count, values.shape).ravel()
    text, length = _texts(values.ravel()[rest], flat_count[rest])
    views[rest], data = _views(text, length, _LONG, base)
    return views, data


def trec_numbers(values, count=False) -> list[str]:
    """The text ``--format trec_eval`` prints for each of ``values``, made column-wise as the
    per-query lines make it: ``%6.4f`` (the exact binary value rounded half to even, as C's printf
    and Python's ``f"{x:6.4f}"``), a count (``count`` true, per value or for all) that is a whole
    number as an integer (``%ld``), NaN as ``  -nan``.

    >>> trec_numbers([0.5, 1 / 3, -0.0, 12.345678, float("nan"), float("inf")])
    ['0.5000', '0.3333', '-0.0000', '12.3457', '  -nan', '   inf']
    >>> trec_numbers([3.0, 2.5, -4.0, 123456.0, -0.0], count=True)
    ['3', '2.5000', '-4', '123456', '0']
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    count = np.broadcast_to(np.asarray(count, dtype=bool), values.shape)
    views, data = _number_views(values[None, :], count)  # each value a measure of its own
    empty = pa.py_buffer(b"")
    text = bytes(_joined(views, [empty, empty, pa.py_buffer(data)])).decode("utf-8")
    return text.split("\n")[:-1]


def _string_views(items: list, base: int = 0) -> tuple[np.ndarray, bytes]:
    """The string views of ``'%s'`` of each item (trec_eval's string measure) and a newline, the
    longer ones in the returned bytes (data buffer ``_LONG`` from ``base``)."""
    offsets, data = _utf8(items)
    lens = np.diff(offsets)
    n = len(items)
    text = np.zeros((n, int(lens.max(initial=0)) + 3), dtype=np.uint8)
    text[:, 0] = ord("'")
    text[
        np.repeat(np.arange(n), lens), 1 + np.arange(len(data)) - np.repeat(offsets[:-1], lens)
    ] = data
    text[np.arange(n), lens + 1] = ord("'")
    text[np.arange(n), lens + 2] = ord("\n")
    return _views(text, lens + 3, _LONG, base)


def _utf8(items: list) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of strings (other items as f-strings print them), one after the other, and
    their offsets (int64, from 0)."""
    try:
        joined = "".join(items)
    except TypeError:
        items = [f"{s}" for s in items]
        joined = "".join(items)
    if joined.isascii():
        data = joined.encode("ascii")
        lens = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    else:
        encoded = [s.encode("utf-8") for s in items]
        data = b"".join(encoded)
        lens = np.fromiter(map(len, encoded), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return offsets, np.frombuffer(data, dtype=np.uint8)


def _query_views(qids: list[str]) -> tuple[np.ndarray, bytes]:
    """The string views of each query id and a tab, the longer ones in the returned bytes (data
    buffer ``_QUERIES``)."""
    offsets, data = _utf8(list(qids))
    lens = np.diff(offsets)
    n = len(qids)
    text = np.zeros((n, int(lens.max(initial=0)) + 1), dtype=np.uint8)
    text[np.repeat(np.arange(n), lens), np.arange(len(data)) - np.repeat(offsets[:-1], lens)] = data
    text[np.arange(n), lens] = ord("\t")
    return _views(text, lens + 1, _QUERIES)


#: lines made at a time (one Arrow string array each: 32-bit offsets); a few MB of string views,
#: which the next chunk reuses (larger chunks were slower: each asked the system for fresh memory)
_CHUNK_LINES = 1 << 16


class _Lines:
    """The per-query lines ``"%-22s\\t%s\\t%s\\n"`` (name, query, value text) of ``names`` and ``qids``,
    query after query, each query's lines in the order of ``names``.

    ``columns[j]`` holds the values of ``names[j]``: ``(float array, is_count)`` for a number per
    query, or a list of strings (printed ``'%s'``).  A line is three Arrow string views (its name,
    its query and a tab, its value's text and a newline), made for every line at once in numpy; the
    cast of the string-view array to a string array writes the lines one after the other."""

    def __init__(self, names: list[str], qids: list[str], columns: list) -> None:
        self.n, self.k = len(qids), len(names)
        heads = [f"{name:<22}\t".encode() for name in names]  # 23 bytes or more: in a buffer
        text = np.zeros((self.k, max(len(h) for h in heads)), dtype=np.uint8)
        for j, h in enumerate(heads):
            text[j, : len(h)] = np.frombuffer(h, dtype=np.uint8)
        self.heads, heads_data = _views(text, np.array([len(h) for h in heads]), _HEADS)
        self.queries, queries_data = _query_views(qids)
        self.buffers = [pa.py_buffer(heads_data), pa.py_buffer(queries_data)]
        # a string measure's column holds 0 (its views are replaced by the strings')
        self.strings = [(j, c) for j, c in enumerate(columns) if not isinstance(c, tuple)]
        self.values = np.zeros((self.n, self.k))
        self.counts = np.zeros(self.k, dtype=bool)
        for j, c in enumerate(columns):
            if isinstance(c, tuple):
                self.values[:, j] = c[0]
                self.counts[j] = bool(c[1])

    def pieces(self) -> list:
        """The lines' UTF-8 bytes, in consecutive pieces (Arrow buffers, or bytes)."""
        step = max(1, _CHUNK_LINES // max(self.k, 1))
        return [self._chunk(s, min(self.n, s + step)) for s in range(0, self.n, step)]

    def _chunk(self, s: int, e: int):
        nq, k = e - s, self.k
        views = np.empty((nq, k, 3), dtype=_VIEW)
        views[:, :, 0] = self.heads
        views[:, :, 1] = self.queries[s:e, None]
        numbers, data = _number_views(self.values[s:e], self.counts)
        views[:, :, 2] = numbers.reshape(nq, k)
        long = [data]
        for j, items in self.strings:
            views[:, j, 2], data = _string_views(items[s:e], sum(len(d) for d in long))
            long.append(data)
        return _joined(views.ravel(), [*self.buffers, pa.py_buffer(b"".join(long))])


_CAST: list[bool] = []


def _casts_views() -> bool:
    """Whether this pyarrow casts a string-view array to a string array (pyarrow 16 and later)."""
    if not _CAST:
        try:
            one = np.array([1, int.from_bytes(b"x\0\0\0", "little"), 0, 0], dtype=np.int32)
            arr = pa.Array.from_buffers(pa.string_view(), 1, [None, pa.py_buffer(one)])
            _CAST.append(compute.cast(arr, pa.string()).to_pylist() == ["x"])
        except (AttributeError, NotImplementedError, pa.ArrowException):
            _CAST.append(False)
    return _CAST[0]


def _joined(views: np.ndarray, buffers: list):
    """The texts of the string ``views`` over the data ``buffers``, one after the other (UTF-8
    bytes): Arrow's cast to a string array, else numpy gathering each text's bytes."""
    m = len(views)
    if not m:
        return b""
    if _casts_views():
        arr = pa.Array.from_buffers(pa.string_view(), m, [None, pa.py_buffer(views), *buffers])
        out = compute.cast(arr, pa.string())
        return out.buffers()[2].slice(0, int(np.frombuffer(out.buffers()[1], dtype=np.int32)[m]))
    fields = views.view(np.int32).reshape(m, 4)
    length = fields[:, 0].astype(np.int64)
    inline = length <= _INLINE
    sources = [views.view(np.uint8)] + [np.frombuffer(b, dtype=np.uint8) for b in buffers]
    base = np.cumsum([0] + [len(x) for x in sources])
    buffer = np.where(inline, 0, fields[:, 2]).clip(0, len(buffers) - 1)
    start = np.where(inline, np.arange(m) * 16 + 4, base[1 + buffer] + fields[:, 3])
    ends = np.cumsum(length)
    at = np.repeat(start - (ends - length), length) + np.arange(int(ends[-1]))
    return np.concatenate(sources)[at].tobytes()


def _summed(result, e, stat: str) -> float | None:
    """The ``all`` value of entry ``e`` whose plan reads it from another count (``e.summary``:
    trec_eval's ``-c`` ``num_rel``, [`Plan.with_trec_eval_counts`][tierank.measures.plans.Plan.with_trec_eval_counts]):
    that count added over the queries; None where the line is summarised as usual."""
    if e.summary is None or stat not in _COUNTED or e.summary not in result.stats:
        return None
    return float(np.sum(result.stats[e.summary].oblivious))


#: the statistics of a count that no ordering changes: the count itself
_COUNTED = ("oblivious", "expected", "min", "max")


def _stat_column(s, stat: str) -> np.ndarray:
    """Per-query values of one statistic of [`Stats`][tierank.measures.Stats] ``s`` (the result's columns)."""
    return np.asarray(statistic(s, stat), dtype=float)


def render_trec_eval(
    result,
    *,
    plan=None,
    stat: str = "oblivious",
    per_query: bool = False,
    summary: bool = True,
    runid: str | None = None,
) -> str:
    """``result`` in trec_eval's exact layout (``trec_eval [-q] [-n]``), one statistic per line.

    Each line is ``"%-22s\t%s\t%6.4f"`` (measure, query, value), counts as integers; with
    ``per_query`` one block per query (sorted bytewise, as trec_eval's qrels order) holding every
    measure in trec_eval's print order, then (unless ``summary`` is False, trec_eval's ``-n``) the
    ``all`` block: ``runid`` (when ``plan`` asks for it and ``runid`` is known), ``num_q``, then the
    measures.  Measures are named as trec_eval prints them (``P_10``, ``iprec_at_recall_0.10``;
    [`tierank.measures.names`][tierank.measures.names]), the others by their tierank name.  ``stat`` picks the value:
    ``oblivious`` (the default: what trec_eval prints, under the result's tie-break), ``expected``,
    ``min``, ``max``, ``std``, ``range`` or ``bias``: the columns of [`EvalResult.records`][tierank.EvalResult.records], and
    the ``all`` line is that record's aggregate value.  Measures trec_eval prints only in the
    summary (``num_q``, ``gm_map``; ``summary_only``) have no per-query lines.  An ``all`` value
    that is a mean (a sum for counts) is computed as trec_eval computes it, the per-query values
    added in query order and divided once, so that its last printed digit is trec_eval's where the
    exact mean lies on a rounding boundary (e.g. 1177/4000 = 0.29425); it differs from the record's
    aggregate by a few units in the 16th digit at most.  A string measure (``relstring``,
    `tierank.measures.relstring`) prints ``'%s'`` per query only: the tie-oblivious ordering's
    string, with ``min`` / ``max`` the pessimistic / optimistic arrangement's, nothing for the others.

    Examples
    --------
    >>> import tierank
    >>> res = tierank.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.1}}, ["P.1", "map"])
    >>> print(render_trec_eval(res, per_query=True, stat="expected").replace("\\t", "|"), end="")
    map                   |q|0.7500
    P_1                   |q|0.5000
    map                   |all|0.7500
    P_1                   |all|0.5000
    """
    return _decoded(
        trec_eval_pieces(
            result, plan=plan, stat=stat, per_query=per_query, summary=summary, runid=runid
        )
    )


def _decoded(pieces: list) -> str:
    """The text of UTF-8 ``pieces``."""
    return "".join([str(p, "utf-8") for p in pieces])


def trec_eval_pieces(
    result,
    *,
    plan=None,
    stat: str = "oblivious",
    per_query: bool = False,
    summary: bool = True,
    runid: str | None = None,
) -> list:
    """[`render_trec_eval`][tierank.report.formats.trec_eval.render_trec_eval] as UTF-8 bytes, in
    consecutive pieces (bytes-like: `bytes` or Arrow buffers), as a writer takes them without
    making one string of them first."""
    if stat not in TREC_STATS:
        raise TierankInputError(f"unknown statistic {stat!r}; accepted: {', '.join(TREC_STATS)}")
    if plan is None:
        plan = measure_plan(result.measures)
    entries = [e for e in plan.printed if e.measure is None or e.measure in result.stats]
    n = len(result.qids)
    pieces: list = []
    read: dict = {}  # the per-query values of each measure
    if per_query and n:
        names: list[str] = []
        columns: list = []
        for e in entries:
            m = e.measure
            if m is None or getattr(m, "summary_only", False):
                continue
            if getattr(
                m, "string_valued", False
            ):  # relstring: '%s' per query, of the stat's ordering
                which = {"oblivious": "policy", "min": "pessimistic", "max": "optimistic"}.get(stat)
                if which is not None:
                    names.append(e.name)
                    columns.append(result.stats[m].texts[which])
                continue
            names.append(e.name)
            read[m] = _stat_column(result.stats[m], stat)
            columns.append((read[m], getattr(m, "is_count", False)))
        if names:
            pieces.extend(_Lines(names, result.qids, columns).pieces())
    if summary:
        pieces.append(_summary(result, entries, plan, stat, runid, read).encode("utf-8"))
    return pieces


def _summary(result, entries, plan, stat: str, runid: str | None, columns: dict) -> str:
    """The ``all`` lines of [`render_trec_eval`][tierank.report.formats.trec_eval.render_trec_eval]
    (``columns``: the per-query values already read, by measure)."""
    n = len(result.qids)
    lines: list[str] = []
    if plan.runid and runid is not None:
        lines.append(f"{'runid':<22}\tall\t{runid}\n")
    for e in entries:
        if e.measure is None:  # num_q without a NumQ family: the number of queries evaluated
            lines.append(f"{e.name:<22}\tall\t{n if stat in _COUNTED else 0}\n")
            continue
        m = e.measure
        if getattr(m, "string_valued", False):  # relstring: per query only, as trec_eval
            continue
        count = getattr(m, "is_count", False)
        # the summary of a family that keeps the base class's is the mean (sum) of each column
        linear = type(m).aggregate is Measure.aggregate or result.summary(m).linear
        summed = _summed(result, e, stat)
        if summed is not None:
            value = summed
        elif stat != "std" and n and linear:
            # trec_eval's own arithmetic (meas_acc.c, meas_avg.c): the per-query values added in
            # query order, then one division: the same double, so the same last printed digit
            col = columns[m] if m in columns else _stat_column(result.stats[m], stat)
            value = float(np.cumsum(col)[-1]) / (1 if count else n)
        else:
            value = _aggregate(result.summary(m), stat)
        lines.append(f"{e.name:<22}\tall\t{_trec_value(value, count)}\n")
    return "".join(lines)


def _aggregate(agg, stat: str) -> float:
    """The aggregate record's ``stat`` ([`EvalResult.records`][tierank.EvalResult.records]) of the
    summary ``agg``: NaN where the record holds no number (NaN, infinite, or a linear summary's
    ``range`` or ``bias`` over no query)."""
    value = float("nan") if agg.linear and stat in DERIVED else statistic(agg, stat)
    value = float(value)
    return value if math.isfinite(value) else float("nan")


def render(
    table: ResultTable,
    per_query: bool,
    *,
    plan=None,
    stat: str = "oblivious",
    summary: bool = True,
    runid: str | None = None,
) -> str:
    """Every group of ``table`` in trec_eval's layout, one after the other, each with its run's tag
    (``runid``, given here for a single run, or the group's own).  Several groups: each block
    begins with a line per key of the group, in the layout's three columns (``run``, ``all``, the
    run's name), so that a reader of the lines knows which run each block is; one group prints
    exactly as trec_eval does.

    >>> import tierank
    >>> res = tierank.evaluate({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.4}}, ["P.1"])
    >>> print(render(ResultTable.of({"bm25": res, "dense": res}), False).replace("\\t", "|"), end="")
    run                   |all|bm25
    P_1                   |all|1.0000
    run                   |all|dense
    P_1                   |all|1.0000
    """
    return _decoded(
        render_pieces(table, per_query, plan=plan, stat=stat, summary=summary, runid=runid)
    )


def render_pieces(
    table: ResultTable,
    per_query: bool,
    *,
    plan=None,
    stat: str = "oblivious",
    summary: bool = True,
    runid: str | None = None,
) -> list:
    """[`render`][tierank.report.formats.trec_eval.render] as UTF-8 bytes in consecutive pieces
    ([`trec_eval_pieces`][tierank.report.formats.trec_eval.trec_eval_pieces])."""
    pieces: list = []
    for g in table.groups:
        if len(table.groups) > 1:  # which run the block is: its key lines, in the three columns
            pieces.append("".join(f"{k:<22}\tall\t{v}\n" for k, v in g.keys.items()).encode())
        pieces += trec_eval_pieces(
            g.result,
            plan=plan,
            stat=stat,
            per_query=per_query,
            summary=summary,
            runid=runid if runid is not None and len(table.groups) == 1 else g.runid,
        )
    return pieces


FORMAT = register("trec_eval", render)
