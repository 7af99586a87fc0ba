"""Several judges through the one input door (`tierank.io.judgments`): a judge column, float grades,
the scale checks (located errors, clip / drop with counted notes), conflicting duplicates, missing
pairs."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from tierank.errors import TierankInputError
from tierank.examples import path as example
from tierank.io.judgments import align, non_integer, parse_scale, read_judge_column, read_judges
from tierank.io.sources import read


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_a_judge_column_file_gives_one_qrels_per_judge_in_order_of_appearance(tmp_path):
    f = _write(tmp_path, "j.txt", "q1 b d1 2\nq1 a d1 1\nq1 a d2 0.5\n\nq2 b d3 3\n")
    judges, notes = read_judge_column(f)
    assert list(judges) == ["b", "a"]
    assert judges["a"].grade.tolist() == [1.0, 0.5]
    assert judges["b"].docid.to_pylist() == ["d1", "d3"]
    assert notes == []


def test_the_shipped_judge_column_file_holds_the_same_grades_as_the_files_a_judge():
    d = example("llmjudge-mini")
    column, _ = read_judge_column(d / "judges.qrels.gz")
    files, _ = read_judges(sorted(str(p) for p in (d / "judges").glob("*.qrels.gz")))
    assert sorted(column) == sorted(files)
    for name, q in files.items():
        c = column[name]
        assert c.grade.tolist() == q.grade.tolist()
        assert c.docid.to_pylist() == q.docid.to_pylist()


def test_conflicting_grades_of_one_judge_are_located_and_identical_repeats_counted(tmp_path):
    f = _write(tmp_path, "j.txt", "q1 a d1 2\nq1 a d2 1\n# note\nq1 a d1 3\n")
    with pytest.raises(TierankInputError) as e:
        read_judge_column(f)
    (p,) = e.value.problems
    assert (p.line, "twice, 2 and 3" in p.reason, "first at line 1" in p.reason) == (4, True, True)
    g = _write(tmp_path, "k.txt", "q1 a d1 2\nq1 a d2 1\nq1 a d1 2\n")
    judges, notes = read_judge_column(g)
    assert judges["a"].grade.tolist() == [2.0, 1.0]
    assert notes == [f"{g}: 1 repeated line with the same grade counted once"]


def test_a_bad_judge_column_line_is_located(tmp_path):
    f = _write(tmp_path, "j.txt", "q1 a d1 2\nq1 a d2\nq1 a d3 x\n")
    with pytest.raises(TierankInputError) as e:
        read_judge_column(f)
    assert [(p.line, p.reason.split(" ")[0]) for p in e.value.problems] == [
        (2, "expected"),
        (3, "relevance"),
    ]


def test_float_grades_are_read_as_floats_never_truncated_and_said_so(tmp_path):
    ref = _write(tmp_path, "ref", "q 0 a 1\nq 0 b 0\nq 0 c 2\n")
    j = _write(tmp_path, "j", "q 0 a 0.75\nq 0 b 0.25\nq 0 c 1.5\n")
    judged = align(read(ref, "qrels"), read_judges([j])[0])
    assert judged.grades[0].tolist() == [0.75, 0.25, 1.5]
    assert any("3 grades not a whole number: read as floats" in n for n in judged.notes)
    assert non_integer(np.array([1.0, 2.5, np.nan])) == 1


def test_a_grade_outside_the_scale_is_a_located_error_in_the_real_file():
    d = example("llmjudge-mini")
    ref = read(str(d / "human.qrels.gz"), "qrels")
    src = str(d / "judges" / "RMITIR-llama70B.qrels.gz")
    with pytest.raises(TierankInputError) as e:
        align(ref, {"RMITIR": read(src, "qrels", src)})
    lines = (
        gzip.decompress((d / "judges" / "RMITIR-llama70B.qrels.gz").read_bytes())
        .decode()
        .splitlines()
    )
    fives = [i + 1 for i, ln in enumerate(lines) if ln.split()[3] == "5"]
    assert len(fives) == 2
    assert [(p.source, p.line) for p in e.value.problems] == [(src, n) for n in fives]
    assert all(
        "grade 5 " in p.reason and "outside the scale 0..3" in p.reason for p in e.value.problems
    )


@pytest.mark.parametrize("policy", ["clip", "drop"])
def test_clip_and_drop_touch_only_the_rows_outside_the_scale_and_count_them(policy):
    d = example("llmjudge-mini")
    ref = read(str(d / "human.qrels.gz"), "qrels")
    src = str(d / "judges" / "h2oloo-zeroshot2.qrels.gz")
    q = read(src, "qrels", src)
    judged = align(ref, {"h2o": q}, out_of_scale=policy)
    (said,) = [n for n in judged.notes if "outside the scale" in n]
    assert said == f"{src}: 1 row with a grade outside the scale 0..3 (10) " + (
        "clipped to 0..3" if policy == "clip" else "dropped"
    )
    g = judged.grades[0]
    assert np.nanmax(g) == 3
    assert int(np.isnan(g).sum()) == (1 if policy == "drop" else 0)
    # every other grade as read
    keys = dict(zip(zip(q.qid.to_pylist(), q.docid.to_pylist()), q.grade.tolist()))
    kept = [(a, b, v) for a, b, v in zip(judged.qid, judged.docid, g) if keys[(a, b)] != 10]
    assert all(keys[(a, b)] == v for a, b, v in kept)


def test_a_declared_scale_is_checked_on_the_reference_too(tmp_path):
    ref = _write(tmp_path, "ref", "q 0 a 1\nq 0 b 4\n")
    j = _write(tmp_path, "j", "q 0 a 1\nq 0 b 2\n")
    with pytest.raises(TierankInputError) as e:
        align(read(ref, "qrels", ref), read_judges([j])[0], scale=parse_scale("0..3"))
    assert [(p.source, p.line) for p in e.value.problems] == [(ref, 2)]


def test_missing_pairs_are_an_error_naming_the_judge_or_dropped_and_counted(tmp_path):
    ref = _write(tmp_path, "ref", "q 0 a 1\nq 0 b 0\nq 0 c 2\n")
    j = _write(tmp_path, "judge1.qrels", "q 0 a 1\nq 0 c 2\nq 0 z 1\n")
    judges, _ = read_judges([j])
    assert list(judges) == ["judge1"]
    with pytest.raises(TierankInputError) as e:
        align(read(ref, "qrels"), judges)
    (p,) = e.value.problems
    assert (
        "judge 'judge1': 1 pair of the reference not graded (first: query 'q' document 'b')"
        in p.reason
    )
    assert "1 pair the reference did not grade (first: query 'q' document 'z')" in p.reason
    judged = align(read(ref, "qrels"), judges, missing="drop")
    assert np.isnan(judged.grades[0]).tolist() == [False, True, False]
    assert any("left out of its comparison" in n for n in judged.notes)


def test_parse_scale_refuses_what_is_not_lo_dot_dot_hi():
    assert parse_scale(" 0 .. 3 ") == (0.0, 3.0)
    for bad in ("3..0", "0-3", "a..b", "0..inf"):
        with pytest.raises(TierankInputError, match="LO..HI"):
            parse_scale(bad)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from helpers import examples  # noqa: E402

_field = st.sampled_from(["q1", "q2", "a", "b", "d1", "d2", "1", "2.5", "-1", "x", "nan", "1e400"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.lists(_field, min_size=0, max_size=6), min_size=1, max_size=12))
def test_every_judge_column_file_is_read_whole_or_refused_with_located_lines(
    tmp_path_factory, rows
):
    """Nothing dropped silently: a file is read with one row per distinct (judge, query, document) of
    its lines, or refused with problems that each name a line of the file."""
    path = tmp_path_factory.mktemp("j") / "j.txt"
    path.write_text("".join(" ".join(r) + "\n" for r in rows))
    try:
        judges, notes = read_judge_column(path)
    except TierankInputError as e:
        assert e.problems
        if not any(rows):  # a file of blank lines: one problem, the file's
            assert [p.reason for p in e.problems] == ["empty: no judgment lines"]
            return
        assert all(
            p.line is not None and 1 <= p.line <= len(rows) or p.reason.startswith("...")
            for p in e.problems
        ), [str(p) for p in e.problems]
        return
    lines = [r for r in rows if r]
    assert all(len(r) == 4 for r in lines)
    distinct = {(r[1], r[0], r[2]) for r in lines}
    assert sum(len(q) for q in judges.values()) == len(distinct)
    repeats = len(lines) - len(distinct)
    assert bool(repeats) == bool(notes)
