"""tierank.io.blocks: a run file cut into query-aligned blocks (the byte-range cutter of streaming)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from tierank.io.blocks import iter_ranges, read_range


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(1, 6)), min_size=1, max_size=8),
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=3),
    st.booleans(),
    st.booleans(),
    st.integers(1, 90),
    st.randoms(use_true_random=False),
    st.booleans(),
)
def test_byte_ranges_hold_whole_queries(
    tmp_path_factory, groups, eols, bom, blanks, block, rnd, last_eol
):
    """The plain-file cutter (iter_ranges): ranges tile the file and never split a query, whatever
    the line ends (LF, CRLF, lone CR, mixed), blank or comment lines, leading blanks or a BOM."""
    lines, used = [], []
    for i, (q, n) in enumerate(
        groups
    ):  # consecutive groups may share a query id: then they are one query
        if q in used[:-1]:
            continue  # a grouped run: a query never comes back after another one
        used.append(q)
        for j in range(n):
            lead = rnd.choice(["", " ", "\t"])
            lines.append(f"{lead}q{q} Q0 d{i}_{j} {j} 1.0 t")
            if blanks and rnd.random() < 0.2:
                lines.append(rnd.choice(["", "  ", "# comment", " #q9 Q0 x 1 1.0 t"]))
    text = "".join(x + rnd.choice(eols) for x in lines).encode()
    if not last_eol:  # a file whose last line has no line end
        text = text.rstrip(b"\r\n")
    p = tmp_path_factory.mktemp("r") / "run.txt"
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text)
    ranges = list(iter_ranges(p, block))
    assert ranges[0][0] == 0 and ranges[-1][1] == p.stat().st_size
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))
    seen_before: set = set()
    for a, b in ranges:
        chunk = read_range(p, a, b).decode()
        qs = {
            x.split()[0]
            for x in chunk.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if x.strip() and not x.strip().startswith("#")
        }
        # a query in this range ends here unless it continues without interruption (same id next range)
        assert not qs & seen_before
        seen_before |= qs


def test_tiny_files_and_no_final_line_end():
    import os
    import tempfile

    d = tempfile.mkdtemp()
    for content in (b"q1 Q0 a 1 2 t\nq2 Q0 b 1 1 t", b"\xef\xbb\xbf", b"q1 Q0 a 1 2 t", b"\n\n"):
        f = os.path.join(d, "run")
        with open(f, "wb") as fh:
            fh.write(content)
        for block in (1, 3, 20):
            ranges = list(iter_ranges(f, block))
            assert ranges[0][0] == 0 and ranges[-1][1] == len(content)
            assert b"".join(read_range(f, a, b) for a, b in ranges) == content.removeprefix(
                b"\xef\xbb\xbf"
            )


def test_gzip_and_bom_at_any_block_size(tmp_path):
    import gzip

    from tierank.io.blocks import iter_blocks

    text = b"\xef\xbb\xbfq1 Q0 a 1 2 t\nq2 Q0 b 1 1 t\n"
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(text))
    for block in (1, 2, 3, 4, 7, 1000):
        assert b"".join(b for b, _ in iter_blocks(gz, block)) == text[3:]


def test_last_ranges_shrink_for_several_workers(tmp_path, monkeypatch):
    """iter_ranges(tail=N): guided self-scheduling.  Every range but the last is at least the size asked
    for it (rest / 2N, the smallest tail block, at most the block size) and ends where a query begins; the
    ranges tile the file, so the workers get smaller pieces as the file runs out."""
    import tierank.io.blocks as blocks

    monkeypatch.setattr(blocks, "MIN_TAIL_BYTES", 40)
    line = (
        b"q%04d Q0 doc 1 1.0 t\n"  # 21 bytes a line, one line a query: a cut may fall on any line
    )
    p = tmp_path / "run"
    p.write_bytes(b"".join(line % i for i in range(400)))
    size = p.stat().st_size
    for tail in (1, 2, 3):
        ranges = list(iter_ranges(p, 2000, tail=tail))
        assert ranges[0][0] == 0 and ranges[-1][1] == size
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        for a, b in ranges[:-1]:
            want = min(2000, max(40, -(-(size - a) // (2 * tail))))
            assert (
                want <= b - a <= want + 2 * len(line % 0)
            )  # a query start just past the size asked for
        sizes = [b - a for a, b in ranges]
        assert sizes[0] > sizes[-2] >= 40  # they shrink toward the end
        assert len(ranges) > len(list(iter_ranges(p, 2000)))
