"""`tierank mteb` reads MTEB's predictions strictly and incrementally (issue 22, items 7 and 10).

A duplicated key kept the last value silently (a document given twice, a query id given twice); a
400-digit score raised OverflowError, a 5,001-digit one ValueError, deep nesting RecursionError, a lone
surrogate id UnicodeEncodeError; and a 41 MB file took 1.07 GB (the whole dict of dicts).  Now each is
one error line naming the file, the place and the reason, exit 2, and the file is read into columns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc

import pytest

META = '"mteb_model_meta": {"model_name": "m", "revision": "r"}'


@pytest.fixture(autouse=True)
def no_mteb(monkeypatch):
    monkeypatch.setitem(sys.modules, "mteb", None)


def in_process(*args) -> subprocess.CompletedProcess:
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception  # a traceback fails the test with it
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


@pytest.fixture
def qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("96821 0 d1 1\n96821 0 d2 0\n7 0 d9 2\n")
    return path


def one_error(tmp_path, qrels, text: str | bytes) -> str:
    """The one error line of `tierank mteb` on predictions ``text``, without the file name."""
    preds = tmp_path / "T_predictions.json"
    if isinstance(text, bytes):
        preds.write_bytes(text)
    else:
        preds.write_text(text, encoding="utf-8")
    p = in_process("mteb", qrels, preds, "-m", "ndcg_at_10", "-f", "json")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tierank: error: {preds}: "), p.stderr
    return lines[0].removeprefix(f"tierank: error: {preds}: ")


def run_of(query: str) -> str:
    return "{" + META + ', "default": {"test": {' + query + "}}}"


WHERE = "subset 'default', split 'test'"


@pytest.mark.parametrize(
    "query, reason",
    [
        (
            '"96821": {"d1": 5.0, "d1": 1.0}',
            f"{WHERE}, query '96821': document 'd1' appears twice (a document has one score per query) (line 1, column 89)",
        ),
        (
            '"96821": {"d1": 5.0, "d2": 1.0}, "7": {"d9": 1}, "96821": {"d2": 1.0}',
            f"{WHERE}: query id '96821' appears twice (a JSON key is given once) (line 1, column 129)",
        ),
    ],
    ids=["document", "query"],
)
def test_a_duplicated_key_is_an_error(tmp_path, qrels, query, reason):
    """Item 7: `{"96821": {"d1": 5.0, "d1": 1.0}}` was evaluated with d1 = 1.0 (the last), exit 0."""
    assert one_error(tmp_path, qrels, run_of(query)) == reason


def test_duplicated_subsets_and_splits_are_errors(tmp_path, qrels):
    text = '{"default": {"test": {"7": {"d9": 1}}, "test": {"7": {"d9": 2}}}}'
    assert one_error(tmp_path, qrels, text) == (
        "subset 'default': split 'test' appears twice (a JSON key is given "
        "once) (line 1, column 40)"
    )
    text = '{"default": {"test": {"7": {"d9": 1}}}, "default": {"dev": {"7": {"d9": 2}}}}'
    assert one_error(tmp_path, qrels, text).startswith(
        "the top object: subset 'default' appears twice"
    )


DOC = f"{WHERE}, query '96821'"


@pytest.mark.parametrize(
    "score, reason",
    [
        (
            "1" + "0" * 399,
            f"{DOC}, document 'd1': score 1{'0' * 59}…(400 chars) is not a finite number (within float "
            "range, about 1.8e308)",
        ),
        ("1" + "0" * 5000, f"{DOC}: a number is beyond the range of a float (about 1.8e308)"),
        (
            "1e999",
            f"{DOC}, document 'd1': score inf is not a finite number (within float range, about 1.8e308)",
        ),
        ("NaN", f"{DOC}: NaN is not a JSON number"),
        ("-Infinity", f"{DOC}: -Infinity is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, f"{DOC}: nested too deeply"),
        ("true", f"{DOC}, document 'd1': score true is not a number"),
        ("null", f"{DOC}, document 'd1': score null is not a number"),
        ('"0.5"', f"{DOC}, document 'd1': score '0.5' (text) is not a number"),
        ('{"x": 1}', f"{DOC}, document 'd1': score an object is not a number"),
        ("[0.5]", f"{DOC}, document 'd1': score a list is not a number"),
    ],
    ids=[
        "400 digits",
        "5001 digits",
        "1e999",
        "NaN",
        "-Infinity",
        "deep",
        "true",
        "null",
        "text",
        "object",
        "list",
    ],
)
def test_a_bad_score_is_one_error_line(tmp_path, qrels, score, reason):
    """Item 10: OverflowError, ValueError (int's 4300-digit limit), RecursionError tracebacks before."""
    assert (
        one_error(tmp_path, qrels, run_of('"96821": {"d1": ' + score + ', "d2": 0.5}'))
        == reason + " (line 1, column 89)"
    )


@pytest.mark.parametrize("docid", ["\\ud800", "", "a\\tb", "\\udfff\\ud800"])
def test_a_document_id_that_is_not_text_is_an_error(tmp_path, qrels, docid):
    """Item 10: a lone surrogate id ended in UnicodeEncodeError when the table was printed."""
    shown = json.loads(f'"{docid}"')
    assert one_error(tmp_path, qrels, run_of('"96821": {"d2": 0.5, "' + docid + '": 1}')) == (
        f"{DOC}: document id {shown!r} is not an id (empty, a control character or a lone surrogate escape) "
        "(line 1, column 89)"
    )


def test_a_subset_or_split_that_is_not_a_name_is_an_error(tmp_path, qrels):
    assert one_error(tmp_path, qrels, '{"a\\tb": {"test": {"7": {"d9": 1}}}}') == (
        "the top object: subset 'a\\tb' is not a name (empty, or with a control character) (line 1, column 2)"
    )
    assert one_error(tmp_path, qrels, '{"en": {"": {"7": {"d9": 1}}}}') == (
        "subset 'en': split '' is not a name (empty, or with a control character) (line 1, column 9)"
    )


def test_a_query_id_that_is_not_text_is_an_error(tmp_path, qrels):
    assert one_error(tmp_path, qrels, run_of('"\\ud800": {"d2": 0.5}')).startswith(
        f"{WHERE}: query id '\\ud800' holds a lone surrogate escape"
    )
    assert one_error(tmp_path, qrels, run_of('"": {"d2": 0.5}')) == (
        f"{WHERE}, query '': a query id must be non-empty text without control characters (line 1, column 84)"
    )


@pytest.mark.parametrize(
    "text, reason",
    [
        (
            run_of('"96821": {"d1": 0.5, "d2": 1}')[:-4],
            "not a JSON file: it ends inside a value, cut short",
        ),
        (
            run_of('"96821": {"d1": 0.5}')[:-2],
            "not a JSON file: subset 'default': expected ',' or '}', got the end",
        ),
        ("", "expected MTEB's retrieval predictions"),
        (
            "[1, 2]",
            "expected MTEB's retrieval predictions {subset: {split: {qid: {docid: score}}}}, got a list",
        ),
        (
            run_of('"96821": {"d1": 0.5}') + " []",
            "not a JSON file: '[]' after the end of the predictions",
        ),
        (b"\xff\xfe{", "not a JSON file: byte"),
        (
            '{"default": {"test": {"7": [0.5]}}}',
            f"{WHERE}, query '7': expected a mapping docid -> score, got a list",
        ),
    ],
    ids=["cut in a query", "cut after", "empty", "list", "trailing", "not UTF-8", "list of scores"],
)
def test_a_broken_file_is_one_error_line(tmp_path, qrels, text, reason):
    assert one_error(tmp_path, qrels, text).startswith(reason)


def test_a_byte_order_mark_changes_nothing(tmp_path, qrels):
    preds = tmp_path / "P_predictions.json"
    text = run_of('"96821": {"d1": 0.5, "d2": 0.5}, "7": {"d9": 0.25, "d3": 0.25}')
    preds.write_text(text)
    plain = in_process("mteb", qrels, preds, "-f", "json")
    preds.write_bytes(b"\xef\xbb\xbf" + text.encode())
    bom = in_process("mteb", qrels, preds, "-f", "json")
    assert plain.returncode == bom.returncode == 0 and plain.stdout == bom.stdout
    assert json.loads(plain.stdout)["aggregate"]


def test_numbers_are_those_of_the_dict_path(tmp_path):
    """The incremental reader and a dict (the API) give the same run, row for row, and the same values:
    ints, floats of every length, ties, ignore_identical_ids and skip_first_result."""
    from tierank.integrations.mteb import evaluate_predictions, read_predictions

    run = {
        "q1": {"d1": 0.1 + 0.2, "d2": 0.30000000000000004, "q1": 7, "d3": 12345678901234567890},
        "q2": {"a": -0.0, "b": 1e-300, "c": 1e300, "d": 3},
    }
    qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"b": 1, "c": 0}}
    preds = tmp_path / "x_predictions.json"
    preds.write_text(json.dumps({"en": {"test": run}}))
    (r,) = read_predictions(preds).values()
    assert r.qid.to_pylist() == ["q1"] * 4 + ["q2"] * 4
    assert r.docid.to_pylist() == ["d1", "d2", "q1", "d3", "a", "b", "c", "d"]
    assert r.score.tolist() == [
        0.30000000000000004,
        0.30000000000000004,
        7.0,
        1.2345678901234567e19,
        -0.0,
        1e-300,
        1e300,
        3.0,
    ]
    for flags in (
        {},
        {"ignore_identical_ids": True},
        {"skip_first_result": True},
        {"ignore_identical_ids": True, "skip_first_result": True},
    ):
        ms = ["ndcg_at_10", "mrr_at_10", "AP"]
        a = evaluate_predictions(preds, qrels, ms, **flags)["en", "test"].aggregate()
        b = evaluate_predictions({"en": {"test": run}}, qrels, ms, **flags)[
            "en", "test"
        ].aggregate()
        assert a.equals(b), flags
    skip = evaluate_predictions(preds, qrels, ["AP"], skip_first_result=True)["en", "test"]
    full = evaluate_predictions(preds, qrels, ["AP"])["en", "test"]
    assert skip.aggregate()["oblivious"].tolist() != full.aggregate()["oblivious"].tolist()


def test_predictions_are_read_into_columns_not_a_dict_of_dicts(tmp_path):
    """Item 10, memory: Python's peak while reading a 3.4 MB file was 6.5 times the file (the whole
    dict of dicts, then lists for the run); now about 2 times (one chunk of text, the columns)."""
    import random

    import tierank.integrations.mteb as mteb

    rnd = random.Random(2)
    run = {
        f"q{q}": {f"doc{rnd.randrange(10**7):07d}": rnd.random() for _ in range(500)}
        for q in range(200)
    }
    preds = tmp_path / "big_predictions.json"
    preds.write_text(json.dumps({"mteb_model_meta": {"model_name": "m"}, "default": {"test": run}}))
    qrels = {q: {next(iter(docs)): 1} for q, docs in run.items()}
    mteb.evaluate_predictions(
        run_file(tmp_path), {"q0": {"a": 1}}, ["ndcg_at_10"]
    )  # imports done here
    peaks = []

    def evaluate(q, r, measures, **kw):  # the peak of the reading, then nothing evaluated
        peaks.append(tracemalloc.get_traced_memory()[1])
        return len(r)

    real, mteb.evaluate = mteb.evaluate, evaluate
    tracemalloc.start()
    try:
        rows = mteb.evaluate_predictions(preds, qrels, ["ndcg_at_10"])
    finally:
        tracemalloc.stop()
        mteb.evaluate = real
    assert rows == {("default", "test"): sum(map(len, run.values()))}
    assert peaks[0] < 4 * os.path.getsize(preds), (peaks[0], os.path.getsize(preds))


def run_file(tmp_path):
    path = tmp_path / "tiny_predictions.json"
    path.write_text('{"default": {"test": {"q0": {"a": 1.0}}}}')
    return path


@pytest.mark.parametrize(
    "name, text, reason",
    [
        ("q.json", '{"7": {"d9": NaN}}', "not valid JSON: NaN is not a JSON number"),
        ("q.json", '{"7": {"d9": 1' + "0" * 400 + "}}", "not valid JSON: number 1"),
        (
            "q.json",
            '{"7": {"d9": 1, "d9": 0}}',
            "not valid JSON: key 'd9' appears twice in one object",
        ),
        ("q.json", "[" * 100_000 + "]" * 100_000, "not valid JSON: nested too deeply"),
        (
            "q.jsonl",
            '{"query-id": "7", "corpus-id": "d9", "score": 1}\n' + "[" * 100_000,
            "not valid JSON: nested too deeply",
        ),
        (
            "q.jsonl",
            b'{"query-id": "7", "corpus-id": "d9", "score": 1}\n\xff\n',
            "not valid JSON: byte 1 is not UTF-8",
        ),
        ("missing.jsonl", None, "cannot read the qrels: No such file or directory"),
    ],
    ids=["NaN", "400 digits", "duplicate", "deep", "jsonl deep", "jsonl not UTF-8", "missing"],
)
def test_json_qrels_are_read_strictly(tmp_path, name, text, reason):
    """The qrels JSON of `tierank mteb` ended in the same tracebacks (RecursionError, OverflowError,
    UnicodeDecodeError) or kept the last duplicate."""
    preds = tmp_path / "T_predictions.json"
    preds.write_text(run_of('"7": {"d9": 0.5, "d2": 0.5}'))
    qrels = tmp_path / name
    if isinstance(text, bytes):
        qrels.write_bytes(text)
    elif text is not None:
        qrels.write_text(text)
    p = in_process("mteb", qrels, preds)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = p.stderr.splitlines()
    assert line.startswith(f"tierank: error: {qrels}") and reason in line, line
