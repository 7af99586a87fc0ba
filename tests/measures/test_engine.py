"""Engine internals that the property tests reach only indirectly."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank.io.fingerprint import fingerprint, fingerprint_ids


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.text(alphabet="ab\x00é", max_size=20), min_size=1, max_size=60), st.integers(0, 5)
)
def test_fingerprint_equal_strings_equal_fingerprints(strings, offset):
    arr = pa.array(strings).slice(min(offset, len(strings) - 1))
    fp = fingerprint(arr)
    vals = arr.to_pylist()
    for i in range(len(vals)):
        for j in range(len(vals)):
            if vals[i] == vals[j]:
                assert fp[i] == fp[j]
    # over these small alphabets distinct strings never collided; a collision would only
    # cost a slow exact re-check, never a wrong answer
    assert len(set(fp.tolist())) == len(set(vals))


def test_fingerprint_ids_through_dictionary():
    ids = pa.array(["q1", "q2", "q1", "q10"])
    np.testing.assert_array_equal(fingerprint_ids(ids), fingerprint(ids))
    np.testing.assert_array_equal(fingerprint_ids(ids.dictionary_encode()), fingerprint(ids))


def test_duplicates_found_anywhere_in_a_large_run(tmp_path):
    rng = random.Random(1)
    lines = [f"q{q} Q0 d{d} {d} {1000 - d} t" for q in range(50) for d in range(200)]
    lines.insert(7000, "q3 Q0 d150 1 -1 t")  # q3/d150 already at line 751
    p = tmp_path / "dup.run"
    p.write_text("\n".join(lines) + "\n")
    try:
        tierank.read_run(p)
    except tierank.TierankInputError as e:
        assert (
            str(e) == f"{p}:7001: document 'd150' appears twice in query 'q3' (first at line 751)"
        )
    else:  # pragma: no cover
        raise AssertionError("duplicate not found")
    del rng


def test_block_permuted_run_keeps_file_order_inside_ties(tmp_path):
    # grouped by query, queries not in sorted order, ties in file order b, a
    p = tmp_path / "r"
    p.write_text("q2 Q0 b 1 1 t\nq2 Q0 a 2 1 t\nq10 Q0 x 1 5 t\nq10 Q0 y 2 4 t\n")
    qrels = {"q2": {"a": 1}, "q10": {"y": 1}}
    res = tierank.evaluate(qrels, str(p), ["RR"], tie_break="input").per_query().set_index("query")
    assert res.loc["q2", "oblivious"] == 0.5 and res.loc["q10", "oblivious"] == 0.5
    res = tierank.evaluate(qrels, str(p), ["RR"], tie_break="docno").per_query().set_index("query")
    assert res.loc["q2", "oblivious"] == 1.0


def test_random_policy_depends_on_seed_not_on_file_order():
    docs = [f"d{i}" for i in range(30)]
    qrels = {"q": {d: 1 for d in docs[::3]}}
    run = {"q": {d: 1.0 for d in docs}}
    rev = {"q": {d: 1.0 for d in reversed(docs)}}
    vals = {}
    for seed in range(20):
        a = tierank.evaluate(qrels, run, ["AP", "RR"], tie_break=f"random:{seed}").per_query()
        b = tierank.evaluate(qrels, rev, ["AP", "RR"], tie_break=f"random:{seed}").per_query()
        assert a.equals(b)
        vals[seed] = tuple(a["oblivious"])
    assert len(set(vals.values())) > 10  # different seeds, different orders
    huge = tierank.evaluate(qrels, run, ["RR"], tie_break=f"random:{2**70}").per_query()
    assert 0 < huge["oblivious"][0] <= 1


def test_a_query_id_under_two_dictionary_codes_is_one_query():
    """Judgments whose dictionary holds a query id twice (two codes, one query; a Python caller's array) are
    evaluated as the same judgments encoded once: one query, the same values (before, the query counted twice)."""
    from tierank.io.model import Qrels, Run

    twice = pa.DictionaryArray.from_arrays(pa.array([0, 1, 1], pa.int32()), pa.array(["q1", "q1"]))
    once = pa.array(["q1", "q1", "q1"]).dictionary_encode()
    run = Run(
        qid=pa.array(["q1"] * 4).dictionary_encode(),
        docid=pa.array(list("abcd")),
        score=np.array([1.0, 1.0, 0.5, 0.2]),
        rank=None,
        source="run",
    )
    got, want = (
        tierank.evaluate(
            Qrels(qid=q, docid=pa.array(list("abd")), grade=np.array([1, 0, 2])),
            run,
            ["P@2", "AP", "nDCG@3"],
        )
        for q in (twice, once)
    )
    assert got.records() == want.records()
    assert [r["query"] for r in got.records() if r["measure"] == "AP"] == ["q1", "all"]
