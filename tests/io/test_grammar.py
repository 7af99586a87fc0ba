"""One tokenizer and one number grammar on both reader paths (issue 11, sections 1-4 and 6).

Each case is a reproduction from the issue: before the fix it gave a silently
wrong number (or accepted on one path what the other refused).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv  # noqa: F401
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples
from tierank import TierankInputError, read_qrels, read_run, to_qrels, to_run
from tierank.io import lexer, readers

QRELS = b"1 0 a 1\n1 0 b 0\n"


def rr(tmp_path, run: bytes, qrels: bytes = QRELS) -> float:
    (tmp_path / "run").write_bytes(run)
    (tmp_path / "qrels").write_bytes(qrels)
    res = tierank.evaluate(tmp_path / "qrels", tmp_path / "run", ["RR"]).aggregate()
    assert res["expected"].iloc[0] == res["oblivious"].iloc[0]  # no ties in these runs
    return float(res["expected"].iloc[0])


# ---------------------------------------------------------------- 1. whitespace


@pytest.mark.parametrize(
    "run",
    [
        b"1 Q0 b 1 3.0 t\n\t1 Q0 a 2 2.0 t\n",  # a line indented by a tab
        b"1 Q0 b 1 3.0 t\n 1 Q0 a 2 2.0 t\n",  # ... by a space
        b"1\tQ0\tb\t1\t3.0\tt\n1\tQ0\ta \t2\t2.0\tt\n",  # a padded field in a tab-separated run
        b"1\tQ0\tb\t1\t3.0\tt\n1 Q0 a 2 2.0 t\n",  # tabs on one line, spaces on the next
        b"1 Q0 b 1 3.0 t\n1 \t Q0\t\ta  2 2.0 t \t\n",  # mixed runs of both
        b"1 Q0 b 1 3.0 t\r\n1 Q0 a 2 2.0 t\r\n",  # CRLF
        b"1 Q0 b 1 3.0 t\r1 Q0 a 2 2.0 t\r",  # lone CR
    ],
)
def test_any_run_of_spaces_and_tabs_separates(tmp_path, run):
    assert rr(tmp_path, run) == 0.5


@pytest.mark.parametrize(
    "qrels",
    [
        b"1\t0\ta \t1\n1\t0\tb\t0\n",  # padded field in tab-separated qrels
        b" 1 0 a 1\n1 0 b 0\n",  # leading space
        b"1 0 a 1\t\n1\t0 b  0\n",  # trailing tab, mixed
    ],
)
def test_qrels_padding_does_not_change_ids(tmp_path, qrels):
    assert rr(tmp_path, b"1 Q0 b 1 3.0 t\n1 Q0 a 2 2.0 t\n", qrels) == 0.5


def test_fields_after_the_tag_are_ignored_as_trec_eval_does(tmp_path):
    # trec_eval's results.trunc: "STANDARD more junk at" (the tab-delimited reader read it whole)
    run = b"1\tQ0\tb\t1\t  3.0\tSTANDARD more junk at\n1\tQ0\ta\t2\t  2.0\tSTANDARD end of lines.\n"
    assert rr(tmp_path, run) == 0.5
    assert rr(tmp_path, b"1 Q0 b 1 3.0 t x\n1 Q0 a 2 2.0 t\n") == 0.5


# ----------------------------------------------------------------------- 2. BOM


def test_bom_is_dropped_on_the_slow_path_too(tmp_path):
    # the double space sent this file to the line-by-line path, which kept the BOM in the qid
    assert rr(tmp_path, b"\xef\xbb\xbf1 Q0 a 1  3.0 t\n") == 1.0


def test_bom_in_small_beir_qrels(tmp_path):
    qrels = b"\xef\xbb\xbfquery-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\t0\n"
    assert rr(tmp_path, b"1 Q0 a 1 3.0 t\n", qrels) == 1.0
    qrels = b"\xef\xbb\xbf1\ta\t1\n1\tb\t0\n"  # no header: the BOM was part of the first query id
    assert rr(tmp_path, b"1 Q0 a 1 3.0 t\n", qrels) == 1.0


def test_a_second_bom_is_part_of_the_id_on_both_paths(tmp_path):
    data = lexer.canonical(b"\xef\xbb\xbf1 Q0 a 1 3.0 t\n")  # what is left after the file's own BOM
    assert readers._run_fast("r", data) is None  # Arrow would drop it: not its call
    assert readers._run_slow("r", data).qid.dictionary.to_pylist() == ["\ufeff1"]
    p = tmp_path / "r"
    p.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf1 Q0 a 1 3.0 t\n")
    assert read_run(p).qid.to_pylist() == ["\ufeff1"]


# --------------------------------------------------------------- 3. invalid UTF-8


@pytest.mark.parametrize("padded", [False, True])
def test_invalid_utf8_is_refused_with_its_line(tmp_path, padded):
    sep = b"  " if padded else b" "
    (tmp_path / "run").write_bytes(b"1 Q0 b 1 3.0 t\n1 Q0 caf\xe8 2" + sep + b"2.0 t\n")
    (tmp_path / "qrels").write_bytes(b"1 0 caf\xe9 1\n")
    with pytest.raises(TierankInputError) as e:
        read_run(tmp_path / "run")
    assert (
        str(e.value)
        == f"{tmp_path / 'run'}:2: field 3 is not valid UTF-8 (byte 0xe8); text must be UTF-8"
    )
    with pytest.raises(
        TierankInputError, match=r"qrels:1: field 3 is not valid UTF-8 \(byte 0xe9\)"
    ):
        read_qrels(tmp_path / "qrels")


def test_invalid_utf8_in_an_unused_column_is_refused_too(tmp_path):
    p = tmp_path / "run"
    p.write_bytes(b"1 Q0 a 1 3.0 t\xff\n")
    with pytest.raises(TierankInputError, match=r"run:1: field 6 is not valid UTF-8 \(byte 0xff\)"):
        read_run(p)


# ------------------------------------------------------------------- 4. numbers


@pytest.mark.parametrize(
    "score", ["1_000", "\u0661", "\uff11", "1,5", "0x10", "1\u00a0", "\u00a01"]
)
@pytest.mark.parametrize("padded", [False, True])
def test_lenient_numbers_are_refused_on_both_paths(tmp_path, score, padded):
    sep = "  " if padded else " "  # padding used to send the file to the lenient float() path
    p = tmp_path / "run"
    p.write_text(f"1 Q0 b 1 3.0 t\n1 Q0 a 2{sep}{score} t\n", encoding="utf-8")
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    assert str(e.value) == f"{p}:2: score {score!r} is not a number"
    q = tmp_path / "qrels"
    q.write_text(f"1 0 a{sep}{score}\n", encoding="utf-8")
    with pytest.raises(TierankInputError) as e:
        read_qrels(q)
    assert str(e.value) == f"{q}:1: relevance grade {score!r} is not a finite number"


@pytest.mark.parametrize(
    "space", ["\u00a0", "\u2003", "\u3000", "\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c"]
)
def test_unicode_and_control_spaces_do_not_separate(tmp_path, space):
    # as a separator: 5 fields, refused on both paths (the slow path's str.split() found 6)
    p = tmp_path / "run"
    p.write_text(f"1 Q0 b 1 3.0{space}t\n1  Q0 a 2 2.0 t\n", encoding="utf-8")
    with pytest.raises(
        TierankInputError, match=r"run:1: expected 6 whitespace-separated columns .* found 5"
    ):
        read_run(p)
    # inside an id: part of it, on both paths (the slow path split it into two fields)
    for pad in (" ", "  "):
        p.write_text(f"1 Q0 a{space}x 1{pad}3.0 t\n", encoding="utf-8")
        assert read_run(p).docid.to_pylist() == [f"a{space}x"]


@pytest.mark.parametrize(
    "token, value",
    [
        ("12", 12.0),
        ("1.", 1.0),
        (".5", 0.5),
        ("+4", 4.0),
        ("-2e-07", -2e-07),
        ("3E+02", 300.0),
        ("007", 7.0),
        ("1e-999", 0.0),
        ("4.9e-324", 5e-324),
    ],
)
def test_number_grammar_accepts(token, value):
    assert lexer.parse_number(token) == value


@pytest.mark.parametrize("token", ["inf", "-Infinity", "NAN", "+nan", "1e999"])
def test_non_finite_scores_are_refused_as_not_finite(tmp_path, token):
    p = tmp_path / "run"
    p.write_text(f"1 Q0 a 1 {token} t\n")
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    assert (
        str(e.value)
        == f"{p}:1: score {token!r} is not finite (NaN and infinities cannot be ranked)"
    )


_NUMBERISH = st.builds(
    lambda *parts: "".join(parts),
    st.sampled_from(["", "+", "-", "+-"]),
    st.text("0123456789_\u0661\uff11", max_size=3),
    st.sampled_from(["", ".", ","]),
    st.text("0123456789", max_size=3),
    st.sampled_from(["", "e", "E5", "e-7", "e+", "inf", "nan", "Infinity", "infinit", "x", "d"]),
).filter(bool)


@settings(max_examples=examples(300), deadline=None)
@given(_NUMBERISH)
def test_arrow_never_accepts_a_number_the_grammar_refuses(token):
    """The fast path parses numbers with Arrow: whatever it accepts, the grammar reads the same value."""
    data = f"1 Q0 a 1 {token} t\n".encode()
    try:
        arrow = pa.csv.read_csv(
            pa.py_buffer(data),
            read_options=pa.csv.ReadOptions(column_names=list("abcdef")),
            parse_options=pa.csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pa.csv.ConvertOptions(
                column_types={"e": pa.float64()}, null_values=[], strings_can_be_null=False
            ),
        )
        value = arrow.column("e")[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        value = None  # Arrow refused: the file goes to the validator, which uses the grammar alone
    mine = lexer.parse_number(token)
    assert value is None or mine == value or (np.isnan(mine) and np.isnan(value))


# ------------------------------------------------- the same bytes, either path


TRICKY = [
    b"1 Q0 a 1 3.0 t\n1 Q0 b 2 3.0 t\n",
    b"1\tQ0\ta\t1\t  2.5\tSTD\n1\tQ0\tb\t2\t  2.5\tSTD\n",
    b"\n\n 1 Q0 a 1 3 t \n\t\n2 Q0 b x 1e3 t\r\n",
    b"1 Q0 a\xc2\xa0b 1 3 t\n1 Q0 a\x00b 1 3 t\n1 Q0 a\x1cb nan 3 t\n",
    b"1 Q0 \xef\xbb\xbfa 1 3 t\n\xef\xbb\xbf2 Q0 a 1 3 t\n",
    b"q Q0 d -1 -0 t\nq Q0 e inf 0 t\nq Q0 f 1_0 .5 t\n",
    b"q Q0 d 1 1 t extra\n",
    b"q Q0 d 1 1 t\nq Q0 d 2 1 t\n",
    b"all Q0 d 1 1 t\n",
    b"q Q0 d 1 1 t\nq Q0 \xff 2 1 t\n",
]


def _same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        return str(a) == str(b)
    return (
        a.qid.to_pylist() == b.qid.to_pylist()
        and a.docid.to_pylist() == b.docid.to_pylist()
        and np.array_equal(a.score, b.score)
        and np.array_equal(a.rank, b.rank, equal_nan=True)
    )


def _both(data: bytes, duplicates="error"):
    data = lexer.canonical(data)
    fast = readers._run_fast("r", data, duplicates)
    try:
        slow = readers._run_slow("r", data, duplicates)
    except TierankInputError as e:
        slow = e
    return fast, slow


@pytest.mark.parametrize("data", TRICKY)
@pytest.mark.parametrize("duplicates", ["error", "keep"])
def test_fast_and_slow_paths_agree(data, duplicates):
    fast, slow = _both(data, duplicates)
    if fast is not None:
        assert _same(fast, slow)


def test_fast_path_does_read_the_padded_trec_eval_layout():
    fast, slow = _both(TRICKY[1])
    assert fast is not None and _same(fast, slow) and fast.score.tolist() == [2.5, 2.5]


# mostly plain choices (so that a good share of examples takes the fast path), some hostile ones
_SEP = st.sampled_from([" "] * 12 + ["\t", "  ", " \t ", "\u00a0", "\x1f"])
_ID = st.text(
    st.sampled_from(
        list("abcdefgh12") * 3 + ["\u00a0", "\u3000", "\x1f", "\ufeff", "\x00", "\u00e9"]
    ),
    min_size=1,
    max_size=4,
)
_NUM = st.sampled_from(
    ["1", "2.5", "-3e2", ".5", "1.", "+7", "-0"] * 3 + ["nan", "inf", "1_0", "\u0661", "0x1"]
)
_LINE = st.builds(
    lambda lead, q, s1, d, s2, r, s3, sc, trail: f"{lead}{q}{s1}Q0 {d}{s2}{r}{s3}{sc} t{trail}",
    st.sampled_from([""] * 6 + [" ", "\t", "\ufeff"]),
    _ID,
    _SEP,
    _ID,
    _SEP,
    _NUM,
    _SEP,
    _NUM,
    st.sampled_from([""] * 6 + [" ", "\t ", "\r"]),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=4), st.sampled_from(["error", "keep"]))
def test_fast_and_slow_paths_agree_on_random_lines(lines, duplicates):
    fast, slow = _both("\n".join(lines).encode(), duplicates)
    event("fast path" if fast is not None else "validator only")
    assert fast is None or _same(fast, slow)


# ------------------------------------------------------------ 6. query id `all`


def test_query_all_is_reserved_in_files(tmp_path):
    p = tmp_path / "run"
    p.write_text("q Q0 a 1 1 t\nall Q0 a 1 1 t\n")
    with pytest.raises(TierankInputError) as e:
        read_run(p)
    assert (
        str(e.value)
        == f"{p}:2: query id 'all' is reserved for the aggregate over queries in tierank's results; rename the query"
    )
    q = tmp_path / "qrels"
    for text in ("all 0 a 1\n", "query-id\tcorpus-id\tscore\nq\ta\t1\nall\ta\t1\n"):
        q.write_text(text)
        with pytest.raises(TierankInputError, match=r"qrels:\d: query id 'all' is reserved"):
            read_qrels(q)


def test_query_all_is_reserved_in_frames_and_dicts():
    with pytest.raises(TierankInputError, match="row 2: query id 'all' is reserved"):
        to_run(pd.DataFrame({"qid": ["q", "all"], "docno": ["a", "b"], "score": [1.0, 2.0]}))
    with pytest.raises(TierankInputError, match="query id 'all' is reserved"):
        to_qrels({"all": {"a": 1}})
    # before: the query's records and the aggregate shared the key "all"
    with pytest.raises(TierankInputError, match="query id 'all' is reserved"):
        tierank.evaluate(
            {"all": {"a": 1}, "q": {"a": 1}}, {"all": {"a": 1.0}, "q": {"a": 1.0}}, ["P@1"]
        ).to_dict()


def test_numbers_given_as_text_in_frames_and_dicts_follow_the_grammar():
    # before: float() read "1_000" and Arabic-Indic digits in dicts and frames
    with pytest.raises(TierankInputError, match="document 'a': value '1_000' is not a number"):
        to_run({"q": {"a": "1_000"}})
    with pytest.raises(TierankInputError, match="row 2: score is not a number"):
        to_run(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": ["1.5", "\u0661"]}))
    run = to_run(pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": ["1.5", "-2e-07"]}))
    assert run.score.tolist() == [1.5, -2e-07]
    assert to_qrels({"q": {"a": "2", "b": 1}}).grade.tolist() == [2.0, 1.0]
    with pytest.raises(TierankInputError, match="document 'a': value ' 2' is not a number"):
        to_qrels({"q": {"a": " 2"}})


def test_other_spellings_of_all_are_ordinary_ids(tmp_path):
    p = tmp_path / "run"
    p.write_text("All Q0 a 1 1 t\nall_ Q0 a 1 1 t\n")
    assert read_run(p).qid.to_pylist() == ["All", "all_"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.binary(max_size=60).map(lambda b: bytes(c for c in b if c not in b"\r\t") or b"x"),
    st.sampled_from([4, 7, 1 << 18]),
)
def test_needs_squeeze_is_its_definition(data, scan):
    """The vectorized look for work (in pieces of any size) agrees with the plain definition: a space
    next to a space or a line end, or at either end of the data."""
    import re

    want = re.search(rb"  | \n|\n ", data) is not None or data[:1] == b" " or data[-1:] == b" "
    old = lexer._SCAN
    lexer._SCAN = scan
    try:
        assert lexer._needs_squeeze(data) is want
        for k in (1, 2, 3, 5):  # spaces and line ends are the bytes that matter: make them common
            dense = bytes(b" \n"[c % 2] if c % k == 0 else c for c in data)
            want = (
                re.search(rb"  | \n|\n ", dense) is not None
                or dense[:1] == b" "
                or dense[-1:] == b" "
            )
            assert lexer._needs_squeeze(dense) is want
    finally:
        lexer._SCAN = old
