"""Label distributions read through the one input door: text, JSONL, Parquet, a dict; located errors."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierank.errors import TierankInputError
from tierank.io.convert import to_qrels
from tierank.io.distributions import (
    LabelDistributions,
    from_panel,
    read_distributions,
    write_distributions,
)

TEXT = "q1 0 a 0.25 0.75\nq1 0 b 1 0\n\nq2 0 a 0 1\n"


def _errors(path) -> list[str]:
    with pytest.raises(TierankInputError) as e:
        read_distributions(path)
    return [str(p) for p in e.value.problems]


def test_text_plain_and_gzip(tmp_path):
    plain = tmp_path / "d.txt"
    plain.write_text(TEXT)
    packed = tmp_path / "d.txt.gz"
    packed.write_bytes(gzip.compress(TEXT.encode()))
    for path in (plain, packed):
        d = read_distributions(path)
        assert d.qid.tolist() == ["q1", "q1", "q2"]
        assert d.docid.tolist() == ["a", "b", "a"]
        assert d.probs.tolist() == [[0.25, 0.75], [1.0, 0.0], [0.0, 1.0]]
        assert d.expected_grade().tolist() == [0.75, 0.0, 1.0]


def test_jsonl_and_parquet(tmp_path):
    rows = [
        {"qid": "q1", "docid": "a", "probs": [0.25, 0.75]},
        {"qid": "q1", "docid": "b", "probs": [1, 0]},
    ]
    jl = tmp_path / "d.jsonl"
    jl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pqf = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), pqf)
    for path in (jl, pqf):
        d = read_distributions(path)
        assert d.probs.tolist() == [[0.25, 0.75], [1.0, 0.0]]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "q 0 a 0.5 0.5\nq 0 b -0.5 1.5\n",
            "d.txt:2: query 'q' document 'b': probability -0.5 is negative",
        ),
        (
            "q 0 a 0.5 0.5\nq 0 b 0.5 0.6\n",
            "d.txt:2: query 'q' document 'b': probabilities sum to 1.1, not 1 (within 1e-06)",
        ),
        (
            "q 0 a 0.5 0.5\nq 0 b 0.2 0.3 0.5\n",
            "d.txt:2: 3 probabilities, but line 1 has 2 (every pair needs one per grade 0..K)",
        ),
        (
            "q 0 a 0.5 0.5\n\nq 0 a 1 0\n",
            "d.txt:3: query 'q' document 'a' is given twice (first at line 1)",
        ),
        ("q 0 a\n", "d.txt:1: expected qid 0 docid p0 ... pK (4 or more fields), found 3"),
        ("q 0 a 0.5 x\n", "d.txt:1: probability 'x' is not a number"),
    ],
)
def test_bad_text_lines_are_located(tmp_path, text, want):
    path = tmp_path / "d.txt"
    path.write_text(text)
    errors = _errors(path)
    assert [e.replace(str(tmp_path) + "/", "") for e in errors] == [want]


def test_sum_within_tolerance_is_accepted(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("q 0 a 0.3333333 0.6666667\n")
    assert read_distributions(path).probs.sum() == pytest.approx(1.0)
    path.write_text("q 0 a 0.333333 0.666666\n")
    assert "not 1" in _errors(path)[0]


def test_bad_jsonl_and_parquet_rows_are_located(tmp_path):
    jl = tmp_path / "d.jsonl"
    jl.write_text(
        '{"qid":"q","docid":"a","probs":[0.5,0.5]}\n{"qid":"q","docid":"b","probs":[1,0,0]}\n'
    )
    assert _errors(jl) == [f"{jl}:2: 3 probabilities, but the first row has 2 (ragged K)"]
    pqf = tmp_path / "d.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [
                {"qid": "q", "docid": "a", "probs": [0.5, 0.5]},
                {"qid": "q", "docid": "a", "probs": [0.9, 0.2]},
            ]
        ),
        pqf,
    )
    assert _errors(pqf) == [
        f"{pqf}: row 2: query 'q' document 'a': probabilities sum to 1.1, not 1 (within 1e-06)",
        f"{pqf}: row 2: query 'q' document 'a' is given twice (first at row 1)",
    ]


def test_panel_frequencies_round_trip(tmp_path):
    judges = {
        "a": to_qrels({"q": {"x": 1, "y": 0}}),
        "b": to_qrels({"q": {"x": 3, "y": 0}}),
        "c": to_qrels({"q": {"x": 10, "y": 0, "z": 2}}),
    }
    d = from_panel(judges, 3)
    assert d.docid.tolist() == ["x", "y"]  # z: graded by one judge only
    assert np.allclose(d.probs, [[0, 1 / 3, 0, 2 / 3], [1, 0, 0, 0]])
    path = tmp_path / "p.txt.gz"
    write_distributions(d, path)
    assert np.array_equal(read_distributions(path).probs, d.probs)


@settings(max_examples=30)
@given(
    st.integers(1, 4).flatmap(
        lambda k: st.lists(
            st.lists(st.integers(0, 9), min_size=k + 1, max_size=k + 1).filter(sum),
            min_size=1,
            max_size=6,
        )
    )
)
def test_written_distributions_read_back_exactly(tmp_path_factory, rows):
    probs = np.array([[v / sum(r) for v in r] for r in rows])
    n = len(rows)
    d = LabelDistributions(
        np.array([f"q{i % 2}" for i in range(n)], dtype=object),
        np.array([f"d{i}" for i in range(n)], dtype=object),
        probs,
    )
    path = tmp_path_factory.mktemp("w") / "d.txt"
    write_distributions(d, path)
    back = read_distributions(path)
    assert np.array_equal(back.probs, probs)
    assert back.qid.tolist() == d.qid.tolist() and back.docid.tolist() == d.docid.tolist()
