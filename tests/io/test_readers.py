"""Readers and adapters: accepted layouts, and every kind of bad input named with file:line."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import polars as pl
import pytest

import tierank
from tierank import TierankInputError, read_qrels, read_run, to_qrels, to_run

RUN = "q1 Q0 d1 1 1.5e-3 t\nq1 Q0 d2 2 1.5E-03 t\nq1 Q0 d3 3 -2 t\nq2 Q0 d1 1 7 t\n"
QRELS = "q1 0 d1 2\nq1 0 d3 0\nq2 0 d9 1\n"


def write(tmp_path, name, text, gz=False):
    p = tmp_path / name
    if gz:
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    else:
        p.write_text(text)
    return p


def test_run_float_notations_and_ties(tmp_path):
    run = read_run(write(tmp_path, "r", RUN))
    assert run.score.tolist() == [1.5e-3, 1.5e-3, -2.0, 7.0]
    assert run.rank.tolist() == [1, 2, 3, 1]
    assert run.qid.to_pylist() == ["q1", "q1", "q1", "q2"]


@pytest.mark.parametrize("gz", [False, True])
def test_gzip_and_tabs_and_padding(tmp_path, gz):
    text = "301\tQ0\tA-1\t1\t  2.5\tSTD\n301\tQ0\tA-2\t2\t  2.5\tSTD\n"
    run = read_run(write(tmp_path, "r.gz" if gz else "r", text, gz))
    assert run.score.tolist() == [2.5, 2.5]
    qrels = read_qrels(write(tmp_path, "q.gz" if gz else "q", "301 0 A-1 1\n", gz))
    assert qrels.grade.tolist() == [1.0]


def test_multiple_spaces_fall_back_to_the_general_parser(tmp_path):
    run = read_run(write(tmp_path, "r", "q  Q0 d1   1 0.5 t\n\nq Q0 d2 2 0.25   t\n"))
    assert run.docid.to_pylist() == ["d1", "d2"]


def test_beir_qrels_with_and_without_header(tmp_path):
    a = read_qrels(write(tmp_path, "a.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n"))
    b = read_qrels(write(tmp_path, "b.tsv", "q1\td1\t2\nq1\td2\t0\n"))
    for q in (a, b):
        assert q.docid.to_pylist() == ["d1", "d2"] and q.grade.tolist() == [2.0, 0.0]


def test_numeric_looking_ids_stay_strings(tmp_path):
    run = read_run(write(tmp_path, "r", "007 Q0 0012 1 1 t\n"))
    assert run.qid.to_pylist() == ["007"] and run.docid.to_pylist() == ["0012"]


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("q Q0 d 1 0.5 t\nq Q0 e 2 0.4\n", 2, "expected 6 whitespace-separated columns"),
        ("q Q0 d 1 abc t\n", 1, "score 'abc' is not a number"),
        ("q Q0 d 1 0.5 t\nq Q0 e 1 nan t\n", 2, "is not finite"),
        ("q Q0 d 1 inf t\n", 1, "is not finite"),
        ("q Q0 d 1 -Infinity t\n", 1, "is not finite"),
        (
            "q Q0 d 1 0.5 t\nq Q0 e 2 0.4 t\nq Q0 d 3 0.1 t\n",
            3,
            "appears twice in query 'q' (first at line 1)",
        ),
    ],
)
def test_bad_run_lines_are_located(tmp_path, text, line, reason):
    p = write(tmp_path, "bad.run", text)
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    assert f"{p}:{line}: " in str(e.value) and reason in str(e.value)


def test_every_bad_line_is_reported_together(tmp_path):
    p = write(tmp_path, "bad.run", "q Q0 d 1 x t\nq Q0 e 1 0.5\nq Q0 f 1 0.5 t\n")
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    assert [pr.line for pr in e.value.problems] == [1, 2]


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_files(tmp_path, text):
    with pytest.raises(TierankInputError, match="empty run"):
        read_run(write(tmp_path, "r", text))
    with pytest.raises(TierankInputError, match="empty qrels"):
        read_qrels(write(tmp_path, "q", text))


def test_bad_qrels(tmp_path):
    p = write(tmp_path, "q", "q 0 d 1\nq 0 e\nq 0 f x\nq 0 d 2\n")
    with pytest.raises(TierankInputError) as e:
        read_qrels(p)
    msgs = [str(x) for x in e.value.problems]
    assert msgs[0] == f"{p}:2: expected 4 columns (qid iter docid grade), found 3"
    assert msgs[1] == f"{p}:3: relevance grade 'x' is not a finite number"
    assert msgs[2] == f"{p}:4: document 'd' judged twice for query 'q' (first at line 1)"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(TierankInputError, match="no such file"):
        read_run(tmp_path / "nope")
    with pytest.raises(TierankInputError, match="is a directory"):
        read_qrels(tmp_path)


def test_dataframes_and_dicts_agree_with_files(tmp_path):
    rp, qp = write(tmp_path, "r", RUN), write(tmp_path, "q", QRELS)
    df = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2"],
            "doc_id": ["d1", "d2", "d3", "d1"],
            "score": [1.5e-3, 1.5e-3, -2.0, 7.0],
        }
    )
    qdf = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d3", "d9"], "relevance": [2, 0, 1]}
    )
    dct = {"q1": {"d1": 1.5e-3, "d2": 1.5e-3, "d3": -2.0}, "q2": {"d1": 7.0}}
    qdct = {"q1": {"d1": 2, "d3": 0}, "q2": {"d9": 1}}
    ms = ["nDCG@2", "P@1", "RR"]
    ref = tierank.evaluate(qp, rp, ms).per_query()
    for run, qrels in [(df, qdf), (pl.from_pandas(df), pl.from_pandas(qdf)), (dct, qdct)]:
        got = tierank.evaluate(qrels, run, ms).per_query()
        pd.testing.assert_frame_equal(got, ref)


def test_in_memory_validation():
    with pytest.raises(TierankInputError, match="row 2: score is NaN or infinite"):
        to_run(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": [1.0, np.nan]}))
    with pytest.raises(TierankInputError, match="appears more than once in query 'q'"):
        to_run(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "a"], "score": [1.0, 2.0]}))
    with pytest.raises(TierankInputError, match="no score column"):
        to_run(pd.DataFrame({"qid": ["q"], "docno": ["a"], "value": [1.0]}))
    with pytest.raises(TierankInputError, match="is not a number"):
        to_qrels({"q": {"a": "high"}})
    with pytest.raises(TierankInputError, match="empty run"):
        to_run({})


def test_inputs_are_not_mutated():
    run = {"q": {"a": 1.0, "b": 1.0}}
    qrels = {"q": {"a": 1}}
    df = pd.DataFrame({"qid": ["q", "q"], "docno": ["b", "a"], "score": [1.0, 2.0]})
    before = df.copy()
    tierank.evaluate(qrels, run, ["P@1"])
    tierank.evaluate(qrels, df, ["P@1"])
    assert run == {"q": {"a": 1.0, "b": 1.0}} and qrels == {"q": {"a": 1}}
    pd.testing.assert_frame_equal(df, before)


def test_no_common_query_is_an_error():
    with pytest.raises(TierankInputError, match="no query of run is judged"):
        tierank.evaluate({"x": {"a": 1}}, {"y": {"a": 1.0}}, ["P@1"])


# ------------------------------------------------ the fast path's query encoding and duplicate filter

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers import examples  # noqa: E402
from tierank.io import readers  # noqa: E402

_IDS = st.sampled_from(["q1", "q2", "q10", "", "é", "q1 "])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(_IDS, st.integers(1, 6)), max_size=12), st.integers(1, 5))
def test_encode_ids_is_arrow_dictionary_encode(runs, chunks):
    """Runs of equal ids (the usual layout) and scattered ones, chunked or not: Arrow's own encoding."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = [q for q, n in runs for _ in range(n)]
    whole = pa.array(ids, pa.string())
    cut = sorted({0, len(ids), *np.linspace(0, len(ids), chunks + 1).astype(int).tolist()})
    chunked = pa.chunked_array([whole.slice(a, b - a) for a, b in zip(cut, cut[1:])], pa.string())
    want = pc.dictionary_encode(whole)
    for got in (readers.encode_ids(whole), readers.encode_ids(chunked)):
        assert got.type == pa.dictionary(pa.int32(), pa.string())
        assert got.equals(want)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["a", "b", "c", "d" * 9, "é"])
        ),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_duplicate_filter_never_misses(pairs, grouped):
    """No false "no": a repeated (qid, docid) pair is always flagged, whatever the order of the lines."""
    import pyarrow as pa

    if grouped:
        pairs = sorted(pairs, key=lambda p: p[0])
    qid = pa.array([q for q, _ in pairs], pa.string())
    docid = pa.array([d for _, d in pairs], pa.string())
    repeated = len(set(pairs)) < len(pairs)
    if repeated:
        assert readers._has_duplicates(qid, docid)
        assert readers._has_duplicates(readers.encode_ids(qid), docid)
    else:  # with these few short ids a false "yes" would be a collision of 64-bit fingerprints
        assert not readers._has_duplicates(qid, docid)


def test_encode_ids_keeps_nulls_as_arrow_does():
    import pyarrow as pa
    import pyarrow.compute as pc

    for ids in (["a"] * 4 + [None] * 4 + ["b"] * 4, [None] * 4 + ["a"] * 4, [None]):
        arr = pa.array(ids, pa.string())
        assert readers.encode_ids(arr).equals(pc.dictionary_encode(arr))
