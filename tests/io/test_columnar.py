"""Parquet and Arrow IPC runs and qrels: the same Run/Qrels as the TREC text, the same refusals."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.examples import path as example_path
from tierank.io.convert import to_qrels, to_run


def _run_table(run) -> pa.Table:
    return pa.table(
        {
            "query_id": run.qid.dictionary_decode()
            if pa.types.is_dictionary(run.qid.type)
            else run.qid,
            "doc_id": run.docid,
            "score": run.score,
        }
    )


def _write(table: pa.Table, path, kind: str) -> None:
    if kind == "parquet":
        pq.write_table(table, path)
    elif kind == "ipc-file":
        with ipc.new_file(path, table.schema) as w:
            w.write_table(table)
    else:
        with ipc.new_stream(path, table.schema) as w:
            w.write_table(table)


@pytest.mark.parametrize(
    "kind,suffix", [("parquet", ".parquet"), ("ipc-file", ".arrow"), ("ipc-stream", ".arrows")]
)
def test_round_trip_evaluates_like_the_text_files(tmp_path, kind, suffix):
    run_txt, qrels_txt = example_path("askubuntu-run"), example_path("askubuntu-qrels")
    run, qrels = tierank.read_run(run_txt), tierank.read_qrels(qrels_txt)
    rp, qp = tmp_path / f"run{suffix}", tmp_path / f"qrels{suffix}"
    _write(_run_table(run), rp, kind)
    _write(pa.table({"qid": qrels.qid, "docno": qrels.docid, "relevance": qrels.grade}), qp, kind)
    back = to_run(rp)
    assert back.source == str(rp)
    np.testing.assert_array_equal(back.score, run.score)
    measures = ["nDCG@10", "AP", "RR", "P@5"]
    a = tierank.evaluate(str(qp), str(rp), measures).records()
    b = tierank.evaluate(str(qrels_txt), str(run_txt), measures).records()
    assert a == b  # bit for bit: same rows, same order, same engine
    assert any(r["std"] > 0 for r in a)  # the example has ties: the comparison is not vacuous


def test_refusals_name_the_file_and_row(tmp_path):
    p = tmp_path / "run.parquet"
    pq.write_table(
        pa.table({"qid": ["q1", "q1"], "docid": ["a", "b"], "score": [1.0, float("nan")]}), p
    )
    with pytest.raises(TierankInputError, match=r"run\.parquet.*row 2: score is NaN"):
        to_run(p)
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": ["a", "a"], "score": [1.0, 2.0]}), p)
    with pytest.raises(TierankInputError, match="appears more than once"):
        to_run(p)
    pq.write_table(pa.table({"q": ["q1"], "docid": ["a"], "score": [1.0]}), p)
    with pytest.raises(TierankInputError, match="no query id column"):
        to_run(p)
    bad = tmp_path / "qrels.parquet"
    bad.write_text("q1 0 a 1\n")
    with pytest.raises(TierankInputError, match="not a readable Parquet file"):
        to_qrels(bad)
    with pytest.raises(TierankInputError, match="no such file"):
        to_qrels(tmp_path / "missing.arrow")


def test_cli_reads_parquet(tmp_path):
    from helpers import invoke

    run = tierank.read_run(example_path("run"))
    rp = tmp_path / "run.parquet"
    _write(_run_table(run), rp, "parquet")
    res = invoke("eval", example_path("qrels"), rp, "-m", "P@2", "--format", "jsonl")
    ref = invoke(
        "eval", example_path("qrels"), example_path("run"), "-m", "P@2", "--format", "jsonl"
    )
    assert res.stdout == ref.stdout and '"expected": 0.8333333333333333' in res.stdout
