"""Streaming evaluation (tierank.stream): equal to the in-memory engine bit for bit, whatever the batches."""

from __future__ import annotations

import gzip
import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from measures.strategies import collection
from tierank.errors import TierankInputError
from tierank.examples import path as example_path
from tierank.stream import evaluate_stream, iter_batches, iter_blocks, iter_evaluate, partition

MEASURES = ["AP", "nDCG@3", "RR", "P@2", "R@4", "Success@1", "RBP(p=0.5)", "Rprec", "F1@3", "AP@3"]


def _write_run(run: dict, path, shuffle_seed: int | None = None) -> None:
    lines = [
        f"{q} Q0 {d} {i + 1} {s!r} tag"
        for q, docs in run.items()
        for i, (d, s) in enumerate(docs.items())
    ]
    if shuffle_seed is not None:
        np.random.default_rng(shuffle_seed).shuffle(lines)
    path.write_text("\n".join(lines) + "\n")


@settings(max_examples=examples(60), deadline=None)
@given(
    collection(max_queries=4),
    st.integers(1, 120),
    st.sampled_from(["trec_eval", "input", "random:7"]),
)
def test_stream_equals_in_memory_for_any_batch_size(tmp_path_factory, case, block, tie_break):
    _, run, qrels = case
    if not qrels:
        return
    p = tmp_path_factory.mktemp("s") / "run.txt"
    _write_run(run, p)
    try:
        ref = tierank.evaluate(qrels, str(p), MEASURES, tie_break=tie_break)
    except TierankInputError:
        with pytest.raises(TierankInputError):
            evaluate_stream(qrels, p, MEASURES, tie_break=tie_break, block_bytes=block)
        return
    got = evaluate_stream(qrels, p, MEASURES, tie_break=tie_break, block_bytes=block)
    assert got.records() == ref.records()
    assert got.ties == ref.ties
    # a query is never split: every batch holds whole queries, and each query is in one batch
    seen = []
    for b in iter_batches(p, block):
        qs = set(b.qid.to_pylist())
        assert not qs & set(seen)
        seen.extend(qs)
    assert sorted(seen) == sorted(run)


def test_complete_adds_the_qrels_queries_the_run_lacks(tmp_path):
    p = tmp_path / "run.txt"
    _write_run({"a": {"x": 1.0, "y": 1.0}, "b": {"z": 2.0}}, p)
    qrels = {"a": {"x": 1}, "b": {"z": 0}, "c": {"w": 1}}
    ref = tierank.evaluate(qrels, str(p), MEASURES, complete=True)
    got = evaluate_stream(qrels, p, MEASURES, complete=True, block_bytes=8)
    assert got.records() == ref.records() and "c" in got.qids


def test_real_run_gzip_and_workers(tmp_path):
    q, r = example_path("askubuntu-qrels"), example_path("askubuntu-run")
    ref = tierank.evaluate(q, r, MEASURES).records()
    assert any(x["std"] > 0 for x in ref)
    assert (
        evaluate_stream(q, r, MEASURES, block_bytes=5000).records() == ref
    )  # a gzip file, streamed
    assert evaluate_stream(q, r, MEASURES, block_bytes=5000, jobs=2).records() == ref
    parts = list(iter_evaluate(q, r, MEASURES, block_bytes=5000))
    assert len(parts) > 3 and sum(len(p.qids) for p in parts) == 200


def test_guided_tail_ranges_with_workers(tmp_path, monkeypatch):
    """With several workers a plain file's last ranges shrink (iter_ranges tail): the same numbers, and the
    per-query order, as in memory; a deep bad line is still located in the file."""
    import tierank.io.blocks as blocks

    monkeypatch.setattr(blocks, "MIN_TAIL_BYTES", 300)
    q = example_path("askubuntu-qrels")
    p = tmp_path / "run.txt"
    p.write_bytes(gzip.decompress(open(example_path("askubuntu-run"), "rb").read()))
    ref = tierank.evaluate(q, str(p), MEASURES)
    assert (
        len(list(blocks.iter_ranges(p, 20000, tail=2)))
        > len(list(blocks.iter_ranges(p, 20000))) + 5
    )
    got = evaluate_stream(q, p, MEASURES, block_bytes=20000, jobs=2)
    assert got.records() == ref.records() and got.qids == ref.qids
    lines = p.read_text().splitlines()
    lines[-7] = lines[-7].rsplit(" ", 2)[0] + " x t"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(TierankInputError, match=rf"run\.txt:{len(lines) - 6}:"):
        evaluate_stream(q, p, MEASURES, block_bytes=20000, jobs=2)


def test_errors_are_located_in_the_file_across_blocks(tmp_path):
    p = tmp_path / "run.txt"
    lines = [f"q{i // 10} Q0 d{i} {i} {1.0 / (i + 1)!r} t" for i in range(100)]
    lines[73] = "q7 Q0 d73 74 notanumber t"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(TierankInputError, match=r"run\.txt:74:"):
        evaluate_stream({"q7": {"d70": 1}}, p, ["AP"], block_bytes=100)


def test_ungrouped_run_is_refused_then_partitioned(tmp_path):
    q, r = example_path("askubuntu-qrels"), example_path("askubuntu-run")
    shuffled = tmp_path / "shuffled.txt"
    run = tierank.read_run(r)
    lines = gzip.decompress(r.read_bytes()).decode().splitlines()
    np.random.default_rng(3).shuffle(lines)
    shuffled.write_text("\n".join(lines) + "\n")
    with pytest.raises(TierankInputError, match="not grouped by query"):
        evaluate_stream(q, shuffled, MEASURES, block_bytes=2000)
    pytest.importorskip("duckdb", reason="DuckDB (tierank[scale]) partitions ungrouped runs")
    out = partition(shuffled, tmp_path / "parts", buckets=8)
    for tb in ("trec_eval", "input"):  # input: file order inside ties survives the partitioning
        ref = tierank.evaluate(q, str(shuffled), MEASURES, tie_break=tb).records()
        assert evaluate_stream(q, out, MEASURES, tie_break=tb).records() == ref
    assert len(run) == 4000
    with pytest.raises(TierankInputError, match="not an empty folder"):
        partition(shuffled, out)


def test_partition_refuses_bad_lines(tmp_path):
    pytest.importorskip("duckdb", reason="DuckDB (tierank[scale]) partitions ungrouped runs")
    p = tmp_path / "run.txt"
    p.write_text("# q0 Q0 z 1 0.5 t\nq1 Q0 a 1 0.5 t\nq1 Q0 b 2 x t\nq1 Q0 c 3\n")
    with pytest.raises(TierankInputError) as e:
        partition(p, tmp_path / "out")
    assert [x.line for x in e.value.problems] == [3, 4]
    p.write_text(
        "# q0 Q0 z 1 0.5 t\nq1 Q0 a 1 0.5 t\n#q1 Q0 b 2 0.7 t\nq1 Q0 c 3 0.5 t\n"
    )  # comments skipped
    got = evaluate_stream(
        {"q1": {"c": 1}}, partition(p, tmp_path / "out2"), ["AP"], tie_break="input"
    )
    assert (
        got.records()
        == tierank.evaluate({"q1": {"c": 1}}, str(p), ["AP"], tie_break="input").records()
    )
    assert got.ties["docs"] == 2


def test_a_query_longer_than_a_block_stays_whole(tmp_path):
    p = tmp_path / "run.txt"
    lines = [f"q1 Q0 d{i} {i} {float(i % 4)!r} t" for i in range(40)]
    lines += [f"q{2 + i // 10} Q0 x{i} 1 1.0 t" for i in range(40)]
    p.write_text("\n".join(lines) + "\n")
    qrels = {"q1": {"d3": 1, "d7": 1}, "q2": {"x1": 1}}
    first = next(iter_batches(p, 64)).qid.to_pylist()
    assert first.count("q1") == 40 and len(first) < len(lines)
    assert (
        evaluate_stream(qrels, p, MEASURES, block_bytes=64).records()
        == tierank.evaluate(qrels, str(p), MEASURES).records()
    )
    # a duplicate anywhere in that query is located by the reader, with both lines
    p.write_text("\n".join(lines[:40] + ["q1 Q0 d0 41 0.0001 t"]) + "\n")
    with pytest.raises(
        TierankInputError,
        match=r"run\.txt:41: document 'd0' appears twice in query 'q1' \(first at line 1\)",
    ):
        evaluate_stream(qrels, p, ["AP"], block_bytes=64)


@pytest.mark.parametrize("eol", ["\r\n", "\r"])
def test_crlf_and_lone_cr_line_ends(tmp_path, eol):
    p = tmp_path / "run.txt"
    lines = [f"q{i // 7} Q0 d{i} {i} {float(i % 3)!r} t" for i in range(70)]
    p.write_bytes((eol.join(lines) + eol).encode())
    qrels = {f"q{i}": {f"d{7 * i + 2}": 1} for i in range(10)}
    ref = tierank.evaluate(qrels, str(p), MEASURES).records()
    assert evaluate_stream(qrels, p, MEASURES, block_bytes=50).records() == ref
    lines[45] = "q6 Q0 d45 46 oops t"
    p.write_bytes((eol.join(lines) + eol).encode())
    with pytest.raises(TierankInputError, match=r"run\.txt:46: "):
        evaluate_stream(qrels, p, MEASURES, block_bytes=50)


def test_gzip_members_and_truncation(tmp_path):
    text = "".join(f"q{i // 5} Q0 d{i} {i} {i % 3}.5 t\n" for i in range(50)).encode()
    multi = tmp_path / "multi.gz"
    multi.write_bytes(gzip.compress(text[:333]) + gzip.compress(text[333:]))
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text)
    qrels = {f"q{i}": {f"d{5 * i + 1}": 1} for i in range(10)}
    ref = tierank.evaluate(qrels, str(plain), MEASURES).records()
    assert evaluate_stream(qrels, multi, MEASURES, block_bytes=40).records() == ref
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(text)[:-12])
    with pytest.raises(TierankInputError, match="truncated gzip"):
        evaluate_stream(qrels, cut, MEASURES, block_bytes=40)


def test_progress_counts_lines_and_queries(tmp_path):
    q, r = example_path("askubuntu-qrels"), example_path("askubuntu-run")
    calls = []
    evaluate_stream(
        q,
        r,
        ["AP"],
        block_bytes=20000,
        progress=lambda lines, queries: calls.append((lines, queries)),
    )
    assert len(calls) > 3 and calls[-1] == (4000, 200)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(calls, calls[1:]))


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_bytes_follow_a_plain_file_to_its_end(tmp_path, jobs):
    """Read in byte ranges, the bytes done grow to the file's size (the live line's bar); a gzip, cut on
    the fly, has none; the numbers are those without it."""
    q, gz = example_path("askubuntu-qrels"), example_path("askubuntu-run")
    plain = tmp_path / "run.txt"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    ref = evaluate_stream(q, plain, ["AP"], block_bytes=20000, jobs=jobs).records()
    calls: list = []
    got = evaluate_stream(
        q, plain, ["AP"], block_bytes=20000, jobs=jobs, progress_bytes=lambda *a: calls.append(a)
    )
    size = plain.stat().st_size
    assert got.records() == ref and len(calls) > 3 and calls[-1] == (size, size)
    assert all(a[0] < b[0] and a[1] == size for a, b in zip(calls, calls[1:]))
    none: list = []
    evaluate_stream(q, gz, ["AP"], block_bytes=20000, progress_bytes=lambda *a: none.append(a))
    assert none == []


def test_bad_line_in_a_later_range_is_located_with_workers(tmp_path):
    p = tmp_path / "run.txt"
    lines = [f"q{i // 10} Q0 d{i} {i} {1.0 / (i + 1)!r} t" for i in range(300)]
    lines[257] = "q25 Q0 d257 258 1.0"
    p.write_text("\n".join(lines) + "\n")
    qrels = {f"q{i}": {f"d{10 * i}": 1} for i in range(30)}
    for jobs in (1, 2):
        with pytest.raises(TierankInputError, match=r"run\.txt:258: "):
            evaluate_stream(qrels, p, ["AP"], block_bytes=300, jobs=jobs)


def test_two_streaming_evaluations_in_one_process_do_not_mix(tmp_path):
    """The qrels and measures go with each batch in this process: interleaved generators and threads."""
    from concurrent.futures import ThreadPoolExecutor

    p = tmp_path / "run.txt"
    p.write_text("".join(f"q{i} Q0 d{j} {j} {3 - j}.0 t\n" for i in range(6) for j in range(3)))
    qa = {f"q{i}": {"d0": 1} for i in range(6)}
    qb = {f"q{i}": {"d2": 1} for i in range(6)}
    ga = iter_evaluate(qa, p, ["AP"], block_bytes=20)
    gb = iter_evaluate(qb, p, ["AP"], block_bytes=20)
    pairs = list(zip(ga, gb))
    assert [float(x) for a, _ in pairs for x in a.stats[a.measures[0]].expected] == [1.0] * 6
    assert [round(float(x), 4) for _, b in pairs for x in b.stats[b.measures[0]].expected] == [
        0.3333
    ] * 6
    with ThreadPoolExecutor(2) as pool:
        fa = pool.submit(evaluate_stream, qa, p, ["AP"], block_bytes=20)
        fb = pool.submit(evaluate_stream, qb, p, ["P@1"], block_bytes=20)
        a, b = fa.result(), fb.result()
    assert a.aggregate()["expected"].tolist() == [1.0] and str(b.measures[0]) == "P@1"
    assert b.aggregate()["expected"].tolist() == [0.0]


def test_condensed_batches_without_judged_documents_are_skipped_as_in_memory(tmp_path):
    p = tmp_path / "run.txt"
    p.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 x 1 2.0 t\nq2 Q0 y 2 1.0 t\n")
    qrels = {"q1": {"a": 1}, "q2": {"z": 1}}
    for kw in ({"judged_only": True}, {"unjudged": "condensed"}):
        ref = tierank.evaluate(qrels, str(p), ["AP"], **kw).records()
        for jobs in (1, 2):
            assert (
                evaluate_stream(qrels, p, ["AP"], block_bytes=16, jobs=jobs, **kw).records() == ref
            )
    none = {"q2": {"z": 1}}
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(none, str(p), ["AP"], unjudged="condensed")
    with pytest.raises(TierankInputError) as got:
        evaluate_stream(none, p, ["AP"], block_bytes=16, unjudged="condensed")
    assert (
        str(mem.value).split(" is judged")[0].split(":")[0]
        == str(got.value).split(" is judged")[0].split(":")[0]
    )


def test_a_duplicate_in_a_later_block_names_both_lines(tmp_path):
    p = tmp_path / "dup.txt"
    lines = [f"q{i // 5} Q0 d{i % 5} {i} {1.0 / (i + 1)!r} t" for i in range(30)]
    lines[27] = "q5 Q0 d0 28 0.5 t"
    p.write_text("\n".join(lines) + "\n")
    qrels = {f"q{i}": {"d1": 1} for i in range(6)}
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(qrels, str(p), ["AP"])
    for kw in ({"jobs": 1}, {"jobs": 2}):
        with pytest.raises(TierankInputError) as got:
            evaluate_stream(qrels, p, ["AP"], block_bytes=40, **kw)
        assert str(got.value) == str(mem.value) and "(first at line 26)" in str(got.value)
    gz = tmp_path / "dup.txt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    with pytest.raises(TierankInputError, match=r"dup\.txt\.gz:28: .*\(first at line 26\)"):
        evaluate_stream(qrels, gz, ["AP"], block_bytes=40)


SETTINGS = [
    {},
    {"judged_only": True},
    {"unjudged": "condensed"},
    {"complete": True},
    {"complete": True, "judged_only": True},
    {"complete": True, "unjudged": "condensed"},
    {"max_depth": 3},
    {"unjudged": "bounds"},
    # every combination of -c and -M (issue 22 item 9), --rel, --candidates-only, tie-breaks
    {"complete": True, "max_depth": 2},
    {"complete": True, "max_depth": 1, "judged_only": True},
    {"judged_only": True, "max_depth": 1},
    {"complete": True, "max_depth": 3, "unjudged": "condensed"},
    {"complete": True, "max_depth": 2, "unjudged": "bounds"},
    {"rel": 2},
    {"rel": 2, "complete": True},
    {"candidates_only": True},
    {"candidates_only": True, "complete": True, "max_depth": 2},
    {"tie_break": "input", "max_depth": 2},
    {"tie_break": "docno", "complete": True},
    {"tie_break": "random:5", "judged_only": True},
]


@settings(max_examples=examples(100), deadline=None)
@given(
    collection(max_queries=4),
    st.integers(1, 90),
    st.sampled_from(SETTINGS),
    st.booleans(),
    st.booleans(),
)
def test_stream_equals_in_memory_under_every_setting(
    tmp_path_factory, case, block, kw, gz, lacking
):
    """-J, --condensed, -c, -M, --rel, --candidates-only, tie-breaks and bounds, streamed in tiny
    batches (plain or gzip), with qrels that may hold queries the run lacks: the in-memory
    records, or the same refusal."""
    _, run, qrels = case
    if not qrels:
        return
    if lacking:  # judged queries the run does not have (what -c scores)
        qrels = dict(qrels, zz1={"a": 1}, zz2={"b": 0})
    measures = ["P@2", "RR", "R@4"] if kw.get("unjudged") == "bounds" else MEASURES
    p = tmp_path_factory.mktemp("s") / ("run.txt.gz" if gz else "run.txt")
    _write_run(run, p.with_suffix(".plain"))
    p.write_bytes(
        gzip.compress(p.with_suffix(".plain").read_bytes())
        if gz
        else p.with_suffix(".plain").read_bytes()
    )
    try:
        ref = tierank.evaluate(qrels, str(p), measures, **kw)
    except TierankInputError as e:
        with pytest.raises(TierankInputError) as got:
            evaluate_stream(qrels, p, measures, block_bytes=block, **kw)
        assert str(got.value).split(" ")[0] == str(e).split(" ")[0]  # the same kind of refusal
        return
    got = evaluate_stream(qrels, p, measures, block_bytes=block, **kw)
    assert got.records() == ref.records()


def _rag24_without(tmp_path, drop: int = 1, gz: bool = False):
    """The shipped RAG 2024 run without its first ``drop`` judged queries, and its qrels (which keep them)."""
    q = tierank.read_qrels(example_path("rag24-qrels"))
    judged = sorted(set(q.qid.to_pylist()))[:drop]
    lines = (
        gzip.decompress(example_path("rag24-run").read_bytes()).decode().splitlines(keepends=True)
    )
    kept = "".join(x for x in lines if x.split()[0] not in judged).encode()
    p = tmp_path / ("run.txt.gz" if gz else "run.txt")
    p.write_bytes(gzip.compress(kept) if gz else kept)
    return example_path("rag24-qrels"), p, judged


@pytest.mark.parametrize("jobs", [1, 2])
def test_complete_with_max_depth_scores_the_queries_the_run_lacks(tmp_path, jobs):
    """Issue 22 item 9: -c -M N streamed crashed (IndexError in ties.prepare on a run with no row)
    when the qrels hold a query the run lacks."""
    qrels, run, missing = _rag24_without(tmp_path, drop=2)
    for kw in (
        {"complete": True, "max_depth": 5},
        {"complete": True, "max_depth": 5, "judged_only": True},
        {"complete": True, "max_depth": 3, "unjudged": "condensed"},
    ):
        ref = tierank.evaluate(qrels, str(run), MEASURES, **kw)
        got = evaluate_stream(qrels, run, MEASURES, block_bytes=20_000, jobs=jobs, **kw)
        assert got.records() == ref.records(), kw
        assert set(missing) <= set(got.qids)
        assert all(x["expected"] == 0 for x in got.records(per_query=True) if x["query"] in missing)


def test_judged_only_with_max_depth_keeps_a_batch_whose_judged_queries_lack_judged_documents(
    tmp_path,
):
    """Issue 22 item 9: -J -M streamed crashed when a batch's judged queries had no judged document."""
    p = tmp_path / "run.txt"
    p.write_text(
        "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 x 1 2.0 t\nq2 Q0 y 2 2.0 t\nq3 Q0 c 1 1.0 t\n"
    )
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"z": 1}, "q3": {"c": 1}}
    for kw in (
        {"judged_only": True, "max_depth": 1},
        {"judged_only": True, "max_depth": 2, "complete": True},
    ):
        ref = tierank.evaluate(qrels, str(p), MEASURES, **kw)
        for jobs in (1, 2):
            got = evaluate_stream(qrels, p, MEASURES, block_bytes=16, jobs=jobs, **kw)
            assert got.records() == ref.records() and "q2" in got.qids, kw


def _two_bad_lines() -> bytes:
    """A run whose first query is long (its block slow to parse: it goes to the line-by-line reader)
    with a bad line near its end, and many short queries after it, one with another bad line in a
    later block: with two workers, the later block may fail first."""
    lines = [f"q0 Q0 d{i} {i + 1} {i % 97} t" for i in range(20_000)]
    lines[19_990] = "q0 Q0 d19990 19991 oops t"
    lines += [f"q{1 + i // 5} Q0 x{i} {i % 5 + 1} {i % 3} t" for i in range(20_000)]
    lines[39_000] = "q3801 Q0 x19000 1"  # 4 fields
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("jobs", [1, 2])
def test_bad_lines_of_a_gzip_are_reported_in_file_order_as_in_memory(tmp_path, jobs):
    """Issue 22 item 13: streaming a gzip (or a pipe) with workers reported a later bad line and
    dropped an earlier one; the in-memory reader reports both."""
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(_two_bad_lines(), compresslevel=1))
    qrels = {"q0": {"d1": 1}, "q3": {"x12": 1}}
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(qrels, str(gz), ["AP"])
    assert [p.line for p in mem.value.problems] == [19_991, 39_001]
    starts = [line for _, line in iter_blocks(gz, 2000)]
    assert sum(19_991 < x <= 39_001 for x in starts) > 20  # many blocks apart
    for _ in range(2):  # whichever worker finishes first
        with pytest.raises(TierankInputError) as got:
            evaluate_stream(qrels, gz, ["AP"], block_bytes=2000, jobs=jobs)
        assert got.value.problems == mem.value.problems


def test_more_bad_lines_than_reported_are_counted_as_in_memory(tmp_path):
    lines = [f"q{i // 10} Q0 d{i} {i} {1.0 / (i + 1)!r} t" for i in range(600)]
    for i in range(
        5, 600, 23
    ):  # 26 bad lines in many blocks: the first 20 reported, 6 more counted
        lines[i] = lines[i].rsplit(" ", 2)[0] + " x t"
    p = tmp_path / "run.txt"
    p.write_text("\n".join(lines) + "\n")
    qrels = {"q1": {"d10": 1}}
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(qrels, str(p), ["AP"])
    assert str(mem.value.problems[-1]).endswith("... and 6 more problems")
    for jobs in (1, 2):
        for src in (p, tmp_path / "run.gz"):
            src.write_bytes(p.read_bytes() if src == p else gzip.compress(p.read_bytes()))
            with pytest.raises(TierankInputError) as got:
                evaluate_stream(qrels, src, ["AP"], block_bytes=150, jobs=jobs)
            assert [str(x).replace(str(src), "RUN") for x in got.value.problems] == [
                str(x).replace(str(p), "RUN") for x in mem.value.problems
            ]


def test_bad_lines_of_an_ungrouped_run_are_reported_with_the_grouping(tmp_path):
    """The bad lines the in-memory reader reports, then why the run cannot be streamed."""
    p = tmp_path / "run.txt"
    p.write_text(
        "q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\nq1 Q0 c 2 1.0 t\nq4 Q0 e 1 2.0 t\nq4 Q0 f 2 1.0 t\n"
        "q5 Q0 g 1 2.0 t\nq5 Q0 h 2 1.0 t\nq3 Q0 d 1 zz t\n"
    )
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate({"q1": {"a": 1}}, str(p), ["AP"])
    for jobs in (1, 2):
        with pytest.raises(TierankInputError) as got:
            evaluate_stream({"q1": {"a": 1}}, p, ["AP"], block_bytes=10, jobs=jobs)
        assert got.value.problems[:-1] == mem.value.problems
        assert "query 'q1' appears again" in got.value.problems[-1].reason
    p.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\nq1 Q0 c 2 1.0 t\n")
    with pytest.raises(TierankInputError, match="not grouped by query") as got:
        evaluate_stream({"q1": {"a": 1}}, p, ["AP"], block_bytes=10)
    assert len(got.value.problems) == 1


def test_bad_lines_of_a_pipe_are_reported_as_in_memory(tmp_path):
    """The command line, a run piped in: streamed with 2 workers, the error lines of the in-memory reader."""
    import subprocess
    import sys

    src = tmp_path / "run.txt"
    src.write_bytes(_two_bad_lines())
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 d1 1\nq3 0 x12 1\n")

    def piped(*extra):
        with open(src, "rb") as fh:
            p = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tierank.cli",
                    "eval",
                    str(qrels),
                    "/dev/stdin",
                    "-m",
                    "AP",
                    *extra,
                ],
                stdin=fh,
                capture_output=True,
                text=True,
            )
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        return p.stderr.splitlines()

    mem = piped()
    assert [x.split(":")[3] for x in mem] == [
        "19991",
        "39001",
    ]  # tierank: error: /dev/stdin:LINE: ...
    assert piped("-j", "2", "--block-bytes", "2000") == mem


@pytest.mark.parametrize("padding", [600, 5])
def test_zero_padding_after_gzip_is_read_as_in_memory_at_any_block_size(tmp_path, padding):
    """Found by the streaming fuzz tier: zero padding longer than a read was refused when streamed."""
    text = "".join(f"q{i // 5} Q0 d{i} {i} {i % 3}.5 t\n" for i in range(50)).encode()
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(text) + bytes(padding))
    qrels = {"q1": {"d6": 1}}
    ref = tierank.evaluate(qrels, str(gz), MEASURES).records()
    for block in (40, 5000):
        assert evaluate_stream(qrels, gz, MEASURES, block_bytes=block).records() == ref
    gz.write_bytes(gzip.compress(text) + bytes(padding) + b"junk")
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(qrels, str(gz), MEASURES)
    with pytest.raises(TierankInputError) as got:
        evaluate_stream(qrels, gz, MEASURES, block_bytes=40)
    assert got.value.problems == mem.value.problems and "(at byte " in str(got.value)


def test_a_form_feed_line_is_a_bad_line_not_a_blank_one(tmp_path):
    """Found by the streaming fuzz tier: a block of a form feed was skipped as blank (bytes.isspace)."""
    p = tmp_path / "run.txt"
    p.write_bytes(b"q1 Q0 a 1 2.0 t\n\x0c\nq2 Q0 b 1 1.0 t\n")
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    for src in (p, gz):
        with pytest.raises(TierankInputError) as mem:
            tierank.evaluate({"q1": {"a": 1}}, str(src), ["AP"])
        for block in (1, 100):
            with pytest.raises(TierankInputError) as got:
                evaluate_stream({"q1": {"a": 1}}, src, ["AP"], block_bytes=block)
            assert got.value.problems == mem.value.problems and mem.value.problems[0].line == 2


def test_a_bad_block_still_tells_that_the_run_is_not_grouped(tmp_path):
    """Found by the streaming fuzz tier: a query seen again in a block that does not parse."""
    p = tmp_path / "run.txt"
    p.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\nq2 Q0 c 2 1.0 t\nq1 Q0 d 1 zz t\n")
    for jobs in (1, 2):
        with pytest.raises(TierankInputError) as got:
            evaluate_stream({"q1": {"a": 1}}, p, ["AP"], block_bytes=10, jobs=jobs)
        assert [x.line for x in got.value.problems] == [4, None]
        assert "query 'q1' appears again" in got.value.problems[1].reason


@pytest.mark.parametrize("complete", [False, True])
def test_judged_only_with_no_judged_document_scores_nothing_retrieved(tmp_path, complete):
    """trec_eval -J where no document of the run is judged: each judged query of the run (with -c, each
    qrels query) retrieved nothing, AP 0; memory and streaming agree (memory once refused)."""
    p = tmp_path / "run.txt"
    p.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 x 1 2.0 t\nq9 Q0 y 1 1.0 t\n")
    qrels = {"q1": {"z": 1}, "q2": {"w": 1, "v": 0}, "q3": {"u": 1}}
    mem = tierank.evaluate(qrels, str(p), ["AP", "NumRet"], judged_only=True, complete=complete)
    assert mem.qids == (["q1", "q2", "q3"] if complete else ["q1", "q2"])
    assert mem.per_query()["expected"].tolist() == [0.0] * (2 * len(mem.qids))
    for jobs in (1, 2):
        got = evaluate_stream(
            qrels,
            p,
            ["AP", "NumRet"],
            block_bytes=16,
            jobs=jobs,
            judged_only=True,
            complete=complete,
        )
        assert got.records() == mem.records()


def _compressed(kind: str, raw: bytes) -> bytes:
    import bz2
    import io
    import lzma
    import zipfile

    if kind == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("run.txt", raw)
        return buf.getvalue()
    return {
        "bzip2": bz2.compress,
        "xz": lzma.compress,
        "zstd": lambda b: b"\x28\xb5\x2f\xfd" + b,  # zstd's magic (no zstd in the standard library)
        "gzip of gzip": lambda b: gzip.compress(gzip.compress(b)),
        "gzip of bzip2": lambda b: gzip.compress(bz2.compress(b)),
        "gzip of xz": lambda b: gzip.compress(lzma.compress(b)),
    }[kind](raw)


@pytest.mark.parametrize(
    "kind", ["bzip2", "xz", "zstd", "zip", "gzip of gzip", "gzip of bzip2", "gzip of xz"]
)
def test_other_compressions_are_refused_streamed_as_in_memory(tmp_path, kind):
    """Streamed, a bzip2/xz/zstd/zip run (or one gzipped twice) was parsed as text: "line 20: field 1 is
    not valid UTF-8 ... and 270 more problems".  It is refused with the in-memory reader's one line,
    from a file (byte ranges, any number of workers, any block size) as from a pipe."""
    raw = "".join(f"q{i // 5} Q0 d{i} {i % 5 + 1} {i % 3}.5 t\n" for i in range(400)).encode()
    run = tmp_path / "run.bin"
    run.write_bytes(_compressed(kind, raw))
    qrels = {"q1": {"d6": 1}}
    with pytest.raises(TierankInputError) as mem:
        tierank.evaluate(qrels, str(run), ["AP"])
    (problem,) = mem.value.problems
    assert problem.reason.startswith(
        "gzip data inside gzip data" if kind == "gzip of gzip" else kind.split()[-1] + "-compressed"
    ), problem
    for jobs, block in [(1, 5), (1, 1 << 20), (2, 64)]:
        with pytest.raises(TierankInputError) as got:
            evaluate_stream(qrels, run, ["AP"], jobs=jobs, block_bytes=block)
        assert got.value.problems == mem.value.problems, (jobs, block)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    feeder = threading.Thread(target=pipe.write_bytes, args=(run.read_bytes(),), daemon=True)
    feeder.start()
    with pytest.raises(TierankInputError) as piped:
        list(iter_batches(pipe, 64))
    assert [str(p) for p in piped.value.problems] == [f"{pipe}: {problem.reason}"]
    feeder.join(5)


def test_a_gzip_shorter_than_the_compression_check_streams_as_in_memory(tmp_path):
    """A few decompressed bytes (fewer than the check looks at) are still read, at any block size."""
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(b"q1 Q0 d1 1 1 t"))
    qrels = {"q1": {"d1": 1}}
    ref = tierank.evaluate(qrels, str(gz), MEASURES).records()
    for block in (1, 3, 5000):
        assert evaluate_stream(qrels, gz, MEASURES, block_bytes=block).records() == ref
