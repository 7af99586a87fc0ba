"""Line numbers counted only when an error needs them (issue 26): a byte range's first line is counted
from the file's bytes on an error (tierank.io.blocks.LineCounter), a text block's lines by its worker;
every refusal still names the right line, as the in-memory reader does."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.io import readers
from tierank.io.blocks import LineCounter, _line_count, lines_before
from tierank.stream import evaluate_stream

QRELS = {"q0": {"d0": 1}}


def _lines(n_queries: int, docs: int, eol: str = "\n") -> list[str]:
    return [
        f"q{q} Q0 d{d} {d + 1} {1.0 / (d + 1)!r} t{eol}"
        for q in range(n_queries)
        for d in range(docs)
    ]


def _refusal(fn) -> list[str]:
    with pytest.raises(TierankInputError) as e:
        fn()
    return [str(p) for p in e.value.problems]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bad_line_deep_in_a_big_file_is_located(tmp_path, eol, jobs):
    lines = _lines(400, 50, eol)  # 20,000 lines, about 100 byte ranges below
    bad = 17_345
    lines[bad - 1] = f"q346 Q0 dX 1 notanumber t{eol}"
    lines[bad + 9] = lines[bad + 8]  # a duplicate in the same query, further down
    p = tmp_path / "run"
    p.write_bytes(b"# a comment\n" + "".join(lines).encode())
    want = _refusal(lambda: tierank.read_run(str(p)))
    assert want[0] == f"{p}:{bad + 1}: score 'notanumber' is not a number"
    assert (
        f"{p}:{bad + 11}: document 'd3' appears twice in query 'q347' (first at line {bad + 10})"
        in want
    )
    got = _refusal(lambda: evaluate_stream(QRELS, str(p), ["AP"], block_bytes=4096, jobs=jobs))
    assert got == want


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bad_line_deep_in_a_streamed_gzip_is_located(tmp_path, jobs):
    lines = _lines(300, 40)
    lines[9_876] = "q246 Q0 d36\n"
    lines[11_111] = "q277 Q0 d31 32 inf t\n"
    p = tmp_path / "run.gz"
    p.write_bytes(gzip.compress("".join(lines).encode()))
    want = _refusal(lambda: tierank.read_run(str(p)))
    assert want[0].startswith(f"{p}:9877: expected 6 whitespace-separated columns")
    assert want[1].startswith(f"{p}:11112: score 'inf' is not finite")
    assert (
        _refusal(lambda: evaluate_stream(QRELS, str(p), ["AP"], block_bytes=3000, jobs=jobs))
        == want
    )


def test_bad_lines_in_several_ranges_are_located_in_file_order(tmp_path):
    lines = _lines(200, 30, "\r\n")
    for at in (150, 2_222, 4_000, 5_999):
        lines[at] = f"q{at // 30} Q0 z{at} 1 nan t\r\n"
    p = tmp_path / "run"
    p.write_bytes("".join(lines).encode())
    want = _refusal(lambda: tierank.read_run(str(p)))
    assert [w.split(":")[1] for w in want] == ["151", "2223", "4001", "6000"]
    assert _refusal(lambda: evaluate_stream(QRELS, str(p), ["AP"], block_bytes=2048)) == want


def test_line_counter_matches_the_readers_rule_however_the_file_is_read(tmp_path):
    rng = np.random.default_rng(3)
    data = bytes(rng.choice(list(b"ab \r\n"), size=5_000).astype(np.uint8))
    p = tmp_path / "f"
    p.write_bytes(data)
    offsets = sorted(rng.integers(0, len(data) + 1, size=40).tolist())
    for piece in (1, 2, 7, 64, 1 << 20):  # a CRLF cut between two pieces is still one line end
        count = LineCounter(p, piece)
        for off in offsets + offsets[::-1][:5]:  # forward, then back (counted again from the start)
            prefix = data[:off]
            # a CR at the cut may be half of a CRLF: line ends are counted in the bytes before the offset
            assert count.before(off) == _line_count(prefix), (piece, off)
    assert lines_before(p, len(data)) == _line_count(data)


def test_duplicate_check_by_query_pieces_finds_what_one_sort_finds(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "_SORT_PIECE", 64)  # many pieces on a small file
    lines = _lines(300, 20)
    p = tmp_path / "run"
    p.write_text("".join(lines))
    assert len(tierank.read_run(str(p))) == 6_000
    dup = lines[:]
    dup[4_321] = dup[4_335]  # same query (q216), further down
    p.write_text("".join(dup))
    assert _refusal(lambda: tierank.read_run(str(p))) == [
        f"{p}:4336: document 'd15' appears twice in query 'q216' (first at line 4322)"
    ]
    back = lines[:]
    back[5_000] = "q3 Q0 d4 1 0.5 t\n"  # query q3 again, far from its other lines: not grouped
    p.write_text("".join(back))
    assert _refusal(lambda: tierank.read_run(str(p))) == [
        f"{p}:5001: document 'd4' appears twice in query 'q3' (first at line 65)"
    ]
