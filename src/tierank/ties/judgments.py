"""The judgments joined with a run without a join: `Judgments`, one (query, docid) key per judgment,
found by hash and binary search (or a dense table), built once per qrels for any number of runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import compute as ac
from ..io.model import Qrels

__all__ = ["Judgments"]


class Judgments:
    """The judgments of the evaluated queries, looked up by (query code, docid) without a join.

    Docids are coded by their index among the distinct judged docids (a hash lookup,
    ``pyarrow.compute.index_in``) and each (query, docid) pair becomes one int64 key
    ``query * ndocs + code``.  Keys are found in a dense table of every possible key where that
    table is small next to the rows looked up, else by binary search among the judgments' keys,
    sorted once (with the grades in the same order, which `grades` reads).  Where a pair is judged
    more than once (no reader lets that through), the first judgment wins.

    >>> j = Judgments(np.array([0, 0, 1]), pa.array(["a", "b", "a"]), np.array([1.0, 0.0, 2.0]))
    >>> j.lookup(np.array([0, 1, 1, 0]), pa.array(["b", "a", "c", "z"])).tolist()
    [1, 2, -1, -1]
    >>> j.grades(np.array([1, 0]), pa.array(["a", "x"])).tolist()
    [2.0, nan]
    """

    #: a dense table of keys is used while it has at most this many entries per row looked up (+ 2**16)
    DENSE_PER_ROW = 4
    #: the query id of each query code (`of`: the qrels' queries, sorted); None when built from codes
    qids: pa.Array | None = None
    #: the judgments' (query codes, grades) by query, then grade descending (stable), as `ready`
    #: orders them for every run to come: the ideal rankings then need no sort; None before
    by_grade: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, qrels: Qrels) -> Judgments:
        """Every judgment of ``qrels``, its query coded by its index among the qrels' query ids
        sorted (`qids`): built once, it serves any run (`prepare`'s ``judgments``).

        >>> from tierank.io.convert import to_qrels
        >>> j = Judgments.of(to_qrels({"q2": {"a": 1}, "q1": {"a": 0, "b": 2}}))
        >>> j.qids.to_pylist(), j.grades(np.array([0, 0, 1]), pa.array(["b", "z", "a"])).tolist()
        (['q1', 'q2'], [2.0, nan, 1.0])
        """
        ids = _encoded(qrels.qid)
        qids = _distinct(ids)
        qids = ac.take(qids, ac.sort_indices(qids))
        per_id = ac.numpy(ac.fill_null(ac.index_in(ids.dictionary, qids), -1)).astype(np.int64)
        per_id = np.append(per_id, -1)  # (a missing id, if any, reads the last: -1)
        q = per_id[ac.numpy(ac.fill_null(ids.indices, len(per_id) - 1))]
        out = cls(q, qrels.docid, np.asarray(qrels.grade))
        out.qids = qids
        return out

    def ready(self) -> Judgments:
        """This, with the judgments' keys sorted now (what a lookup among many judgments reads)
        rather than at the first lookup, and the judgments ordered by grade once (`by_grade`)."""
        if self._sorted is None and len(self.keys):
            self._sort()
        if self._sorted is not None:
            self._key_grades()
        if self.by_grade is None:
            order = np.lexsort((-self.grade.astype(np.float64), self.q))
            self.by_grade = (self.q[order], self.grade[order])
        return self

    def __init__(self, q: np.ndarray, docid: pa.Array, grade: np.ndarray):
        self.q = np.asarray(q, dtype=np.int64)
        self.grade = np.asarray(grade)
        enc = ac.dictionary_encode(ac.decoded(docid))
        self.docs = enc.dictionary
        codes = ac.numpy(enc.indices).astype(np.int64)
        self.ndocs = max(len(self.docs), 1)
        self.nq = int(self.q.max()) + 1 if len(self.q) else 0
        self.keys = self.q * self.ndocs + codes
        self._table: np.ndarray | None = None
        self._grade_or_nan: np.ndarray | None = None  # float64 grades, then NaN (what -1 reads)
        self._sorted_grades: np.ndarray | None = None  # the grades of the sorted keys' judgments
        # the distinct keys sorted, and the first judgment of each
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def _doc_codes(self, docid: pa.Array) -> np.ndarray:
        """Index of each docid among the judged docids (int32), -1 where none is judged."""
        if pa.types.is_dictionary(docid.type):
            return self._doc_codes(docid.dictionary)[ac.numpy(docid.indices)]
        docs = self.docs if self.docs.type == docid.type else ac.cast(self.docs, docid.type)
        return ac.numpy(ac.fill_null(ac.index_in(docid, docs), -1))  # (int32)

    def _find(self, key: np.ndarray, grades: bool = False) -> np.ndarray:
        """Index of the judgment of each key (``0 <= key < nq * ndocs``, or -1 for a pair that cannot
        be judged), -1 for none; with ``grades``, its float64 grade instead, NaN for none."""
        size = self.nq * self.ndocs
        if self._table is not None or size <= self.DENSE_PER_ROW * len(key) + (1 << 16):
            if self._table is None:
                uk, first = np.unique(
                    self.keys, return_index=True
                )  # the first judgment of each pair
                self._table = np.full(size + 1, -1, dtype=np.int64)  # (key -1 reads the last: -1)
                self._table[uk] = first
            found = self._table[key]
            return self._grades_or_nan()[found] if grades else found
        sk, idx = self._sort() if self._sorted is None else self._sorted
        at = np.searchsorted(sk, key.astype(sk.dtype, copy=False))
        np.minimum(at, len(sk) - 1, out=at)
        out = (self._key_grades() if grades else idx)[at]
        np.copyto(out, np.nan if grades else -1, where=sk[at] != key)  # (a key not found)
        return out

    def _grades_or_nan(self) -> np.ndarray:
        """The float64 grade of each judgment, then NaN (what index -1 reads); built once."""
        if self._grade_or_nan is None:
            self._grade_or_nan = np.append(self.grade.astype(np.float64), np.nan)
        return self._grade_or_nan

    def _key_grades(self) -> np.ndarray:
        """The float64 grade of each sorted key's judgment (a lookup of grades then gathers once);
        built once, after `_sort`."""
        if self._sorted_grades is None:
            assert self._sorted is not None
            self._sorted_grades = self._grades_or_nan()[self._sorted[1]]
        return self._sorted_grades

    def _int32(self) -> bool:
        """Whether every key fits int32, and every query code's first key (the sorted keys' type, and
        a lookup's: no conversion for the search)."""
        return (self.nq + 1) * self.ndocs < 2**31

    def _sort(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct keys sorted, and the first judgment of each (kept for every later lookup)."""
        # stable: the first judgment of a pair comes first
        keys = self.keys.astype(np.int32) if self._int32() else self.keys
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        first = np.ones(len(sk), dtype=bool)
        np.not_equal(sk[1:], sk[:-1], out=first[1:])
        self._sorted = (sk[first], order[first])
        return self._sorted

    def lookup(self, q: np.ndarray, docid: pa.Array, rows: np.ndarray | None = None) -> np.ndarray:
        """Index of the judgment of each (query code, docid) pair, -1 where there is none; with
        ``rows``, the docids are ``docid[rows]`` (``q`` is aligned with ``rows``)."""
        return self._lookup(q, docid, rows, grades=False)

    def grades(self, q: np.ndarray, docid: pa.Array, rows: np.ndarray | None = None) -> np.ndarray:
        """float64 grade of each (query code, docid) pair, NaN where unjudged (``rows``: as [`lookup`][tierank.ties.judgments.Judgments.lookup])."""
        return self._lookup(q, docid, rows, grades=True)

    def _lookup(
        self, q: np.ndarray, docid: pa.Array, rows: np.ndarray | None, grades: bool
    ) -> np.ndarray:
        if not len(self.keys) or not len(q):
            return np.full(
                len(q), np.nan if grades else -1, dtype=np.float64 if grades else np.int64
            )
        if rows is None:
            code = self._doc_codes(docid)
        elif 2 * len(rows) >= len(docid):  # most rows: code every docid once, then read them
            code = self._doc_codes(docid)[rows]
        else:
            code = self._doc_codes(ac.take(docid, ac.array(rows)))
        q = np.asarray(q)
        unknown = (code < 0) | (q >= self.nq)  # a docid or a query nothing judges
        # the query codes past the judged ones as nq (then key -1), in the sorted keys' type
        key: np.ndarray = np.empty(len(q), dtype=np.int32 if self._int32() else np.int64)
        np.minimum(q, self.nq, out=key, casting="unsafe")
        key *= self.ndocs
        key += code
        missing = np.nan if grades else -1
        if 2 * np.count_nonzero(unknown) > len(key):  # mostly (a deep run): look up the others only
            out = np.full(len(key), missing, dtype=np.float64 if grades else np.int64)
            known = np.flatnonzero(~unknown)
            out[known] = self._find(key[known], grades)
            return out
        key[unknown] = -1
        return self._find(key, grades)


def _encoded(ids: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """Query ids dictionary-encoded: as they are when they already are, else by
    [`tierank.io.readers.encode_ids`][tierank.io.readers.encode_ids] (cheap where equal ids come in runs of lines, as in a qrels file)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = (
            ids.unify_dictionaries() if pa.types.is_dictionary(ids.type) else ids
        ).combine_chunks()
    if pa.types.is_dictionary(ids.type):
        return ids
    from ..io.readers import encode_ids  # (a qrels file's reader has imported it already)

    return encode_ids(ac.decoded(ids))


def _distinct(ids: pa.DictionaryArray) -> pa.Array:
    """The distinct values of a dictionary-encoded array, each once (an Arrow array, any order): the
    dictionary's entries that some row uses, deduplicated."""
    used = np.zeros(len(ids.dictionary), dtype=bool)
    indices = ids.indices if not ids.null_count else ac.call("drop_null", ids.indices)
    used[ac.numpy(indices)] = True
    out = ac.unique(ac.filter(ids.dictionary, ac.array(used)))
    return out if out.type == pa.string() else ac.cast(out, pa.string())
