"""Fuzzing tier for MTEB's predictions JSON through `tierank mteb` (issue 22).

Seeded mutants of valid predictions files (``{"mteb_model_meta": ..., subset: {split: {qid: {docid:
score}}}}``, as ``json.dump`` writes them, with tied scores) go through the command line in this
process.  Each is judged against :func:`reference`, an independent strict reader written here
(Python's ``json`` with hooks, sharing no code with tierank's reader): where it accepts the file,
the command must exit 0 with exactly the numbers of :func:`tierank.evaluate` on the reference's dict
(per query and aggregate, every statistic); where it refuses, the command must exit 2 with one
``tierank: error: FILE: ...`` line.  Never a traceback, never a silent number.

Mutants: duplicated keys (document, query, split, subset, meta), integers of 400 and 5,001 digits,
1e999, NaN / Infinity literals, ``true`` / ``false`` / ``null`` / text / objects / lists as scores,
deep nesting (in a score, in the meta, at the top), lone surrogate, empty, control-character and
reserved ids, cut files, a byte order mark, wrong top-level types, trailing data, random byte edits,
and benign rewrites that must change nothing (indentation, escaped ids, other spellings of the same
number, large integers within float range).  ``DEFAULT_MUTANTS`` run by default (well under a
minute), ``SLOW_MUTANTS`` more with ``-m slow``; the counts by outcome are printed (``-s``).  Mutant
``seed`` is reproduced by ``mutant(seed)``.  Every mutant is also read with chunks of 1 to 5
characters: the incremental reader must give the same columns or the same error (line and column
included) as when the file fits in one chunk.
"""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from collections import Counter

import pytest

import tierank

MEASURES = ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_5", "precision_at_3"]
DEFAULT_MUTANTS = 250
SLOW_MUTANTS = 3000
FIRST_SLOW = 100_000
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@pytest.fixture(autouse=True)
def no_mteb(monkeypatch):
    monkeypatch.setitem(sys.modules, "mteb", None)


# ------------------------------------------------------------------ valid files, as trees of raw text
# An object is a list of (key JSON text, value) pairs, so that a mutant may repeat a key; a value is
# an object or the raw JSON text of a scalar.

DOCS = [f"d{i}" for i in range(8)]
SCORES = ["0.5", "0.25", "1", "0.75", "-3", "2.0", "0.5", "12", "1e-3", "0.1"]


def clean_tree(rnd: random.Random) -> list:
    meta = [('"model_name"', '"org/model"'), ('"revision"', '"r1"')]
    tree = [('"mteb_model_meta"', meta)]
    for subset in rnd.sample(["default", "en", "fr"], rnd.choice([1, 1, 2])):
        splits = []
        for split in rnd.sample(["test", "dev"], rnd.choice([1, 1, 2])):
            queries = []
            for q in rnd.sample(["q1", "q2", "q3", "q4"], rnd.randint(1, 4)):
                docs = rnd.sample(DOCS, rnd.randint(1, 6))
                queries.append(
                    (
                        json.dumps(q),
                        [(json.dumps(d), rnd.choice(SCORES[: rnd.randint(2, 10)])) for d in docs],
                    )
                )
            splits.append((json.dumps(split), queries))
        tree.append((json.dumps(subset), splits))
    return tree


QRELS = "".join(
    f"{q} 0 {d} {(i * 7 + j) % 3}\n"
    for i, q in enumerate(["q1", "q2", "q3", "q4"])
    for j, d in enumerate(DOCS)
    if (i + j) % 2 == 0
)


def render(v, indent: int | None = None, level: int = 0) -> str:
    if isinstance(v, str):
        return v
    if indent is None:
        return "{" + ", ".join(f"{k}: {render(x)}" for k, x in v) + "}"
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if not v:
        return "{}"
    return (
        "{\n"
        + ",\n".join(f"{inner}{k}: {render(x, indent, level + 1)}" for k, x in v)
        + "\n"
        + pad
        + "}"
    )


# ---------------------------------------------------------------------------------- mutators


def _queries(tree) -> list:
    return [queries for key, splits in tree[1:] for _, queries in splits]


def _any_query(rnd, tree):
    queries = rnd.choice(_queries(tree))
    return queries, rnd.randrange(len(queries))


def _any_doc(rnd, tree):
    """A list of (docid, score) pairs and an index in it (one of a query that still has documents)."""
    lists = [
        docs for queries in _queries(tree) for _, docs in queries if isinstance(docs, list) and docs
    ]
    docs = rnd.choice(lists) if lists else [('"d0"', "0.5")]
    return docs, rnd.randrange(len(docs))


def set_score(text):
    def op(rnd, tree):
        docs, j = _any_doc(rnd, tree)
        docs[j] = (docs[j][0], text(rnd) if callable(text) else text)

    return op


def set_docid(text):
    def op(rnd, tree):
        docs, j = _any_doc(rnd, tree)
        docs[j] = (text, docs[j][1])

    return op


def set_qid(text):
    def op(rnd, tree):
        queries, i = _any_query(rnd, tree)
        queries[i] = (text, queries[i][1])

    return op


def dup_doc(rnd, tree):
    docs, j = _any_doc(rnd, tree)
    docs.insert(rnd.randrange(len(docs) + 1), (docs[j][0], rnd.choice(SCORES)))


def dup_query(rnd, tree):
    queries, i = _any_query(rnd, tree)
    queries.insert(rnd.randrange(len(queries) + 1), (queries[i][0], [('"d0"', "0.5")]))


def dup_split(rnd, tree):
    splits = rnd.choice(tree[1:])[1]
    splits.append((rnd.choice(splits)[0], [('"q1"', [('"d1"', "1")])]))


def dup_subset(rnd, tree):
    tree.append((rnd.choice(tree[1:])[0], [('"test"', [('"q1"', [('"d1"', "1")])])]))


def dup_meta_key(rnd, tree):
    if isinstance(tree[0][1], list):
        tree[0][1].append(('"model_name"', '"other"'))


def deep(where):
    def op(rnd, tree):
        n = rnd.choice([50, 5_000, 100_000])
        nested = "[" * n + "]" * n
        if where == "meta":
            tree[0] = (tree[0][0], nested)
        else:
            set_score(nested)(rnd, tree)

    return op


def escaped_id(rnd, tree):
    """Benign: a document id written with \\u escapes (the same text)."""
    docs, j = _any_doc(rnd, tree)
    d = json.loads(docs[j][0])
    docs[j] = ('"' + "".join(f"\\u{ord(c):04x}" for c in d) + '"', docs[j][1])


def respelled_number(rnd, tree):
    """Benign: the same float written otherwise (exponent, trailing zeros, a 17-digit int)."""
    docs, j = _any_doc(rnd, tree)
    try:
        v = float(docs[j][1])
    except ValueError:  # a score an earlier mutation made no number
        return
    docs[j] = (
        docs[j][0],
        rnd.choice(
            [
                f"{v!r}0",
                f"{v:e}",
                f"{v * 10!r}e-1" if v * 10 / 10 == v else repr(v),
                json.dumps(v),
                "12345678901234567",
                "-0",
                "0.0",
                "1E2",
            ]
        ),
    )


def big_ok(rnd, tree):
    """Benign: an integer of 300 digits (within float range) or 20 digits."""
    set_score(rnd.choice(["9" * 300, "18446744073709551617", "-" + "1" * 25]))(rnd, tree)


TREE_OPS = {
    "dup doc": dup_doc,
    "dup query": dup_query,
    "dup split": dup_split,
    "dup subset": dup_subset,
    "dup meta key": dup_meta_key,
    "400 digits": set_score("1" * 400),
    "5001 digits": set_score("7" * 5001),
    "1e999": set_score("1e999"),
    "NaN": set_score("NaN"),
    "Infinity": set_score("Infinity"),
    "-Infinity": set_score("-Infinity"),
    "true": set_score("true"),
    "false": set_score("false"),
    "null": set_score("null"),
    "text score": set_score(lambda r: r.choice(['"0.5"', '"x"', '""'])),
    "object score": set_score('{"v": 1}'),
    "list score": set_score("[0.5]"),
    "deep score": deep("score"),
    "deep meta": deep("meta"),
    "surrogate doc": set_docid(r'"\ud800"'),
    "surrogate pair doc": set_docid(r'"\ud83d\ude00"'),
    "reversed surrogates": set_docid(r'"\udfff\ud800"'),
    "empty doc": set_docid('""'),
    "control doc": set_docid(r'"a\u0000b"'),
    "tab doc": set_docid(r'"a\tb"'),
    "space doc": set_docid('"a b"'),
    "surrogate query": set_qid(r'"\ud800"'),
    "empty query": set_qid('""'),
    "reserved query": set_qid('"all"'),
    "empty query docs": lambda rnd, tree: _set_docs(rnd, tree, []),
    "query is a list": lambda rnd, tree: _set_docs(rnd, tree, "[1, 2]"),
    "escaped id": escaped_id,
    "respelled number": respelled_number,
    "big ok": big_ok,
}


def _set_docs(rnd, tree, docs):
    queries, i = _any_query(rnd, tree)
    queries[i] = (queries[i][0], docs)


def cut(rnd, data: bytes) -> bytes:
    return data[: rnd.randrange(len(data))]


def byte_edit(rnd, data: bytes) -> bytes:
    i = rnd.randrange(len(data))
    b = rnd.choice(
        [
            b"",
            b" ",
            b"\n",
            b",",
            b"}",
            b"{",
            b'"',
            b":",
            b"0",
            b"-",
            b"e",
            b".",
            b"\\",
            b"\xff",
            b"\x00",
            "é".encode(),
            b"[",
            b"]",
            b"n",
        ]
    )
    return data[:i] + b + data[i + rnd.choice([0, 1]) :]


BYTE_OPS = {
    "cut": cut,
    "byte edit": byte_edit,
    "BOM": lambda rnd, data: b"\xef\xbb\xbf" + data,
    "trailing": lambda rnd, data: data + rnd.choice([b" x", b" {}", b"\n\n", b"]"]),
    "top-level type": lambda rnd, data: rnd.choice(
        [b"[]", b"[" + data + b"]", b"1", b'"x"', b"null", b"{}", b"", b"  ", b"true"]
    ),
    "deep top": lambda rnd, data: b"[" * 100_000 + b"]" * 100_000,
    "utf-16": lambda rnd, data: data.decode().encode("utf-16"),
}


class Mutant:
    def __init__(self, seed: int):
        rnd = random.Random(seed)
        tree = clean_tree(rnd)
        self.ops = []
        for _ in range(rnd.choice([0, 1, 1, 1, 2])):
            name = rnd.choice(list(TREE_OPS))
            TREE_OPS[name](rnd, tree)
            self.ops.append(name)
        data = render(tree, rnd.choice([None, None, 2])).encode()
        if rnd.random() < 0.3:
            name = rnd.choice(list(BYTE_OPS))
            data = BYTE_OPS[name](rnd, data)
            self.ops.append(name)
        self.seed, self.data = seed, data


def mutant(seed: int) -> Mutant:
    return Mutant(seed)


# ---------------------------------------------------------------- the independent strict reader


class Refuse(Exception):
    pass


def _strict_pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Refuse("duplicate key")
    return dict(pairs)


def _constant(name):
    raise Refuse(name)


def _text_id(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(s) and not CONTROL.search(s)


def reference(data: bytes) -> dict:
    """``{(subset, split): {qid: {docid: float}}}`` of a valid predictions file, else :class:`Refuse`."""
    try:
        text = data.decode(json.detect_encoding(data))
    except (UnicodeDecodeError, LookupError):
        raise Refuse("encoding") from None
    text = text.removeprefix("\ufeff")
    try:
        doc = json.loads(text, object_pairs_hook=_strict_pairs, parse_constant=_constant)
    except (ValueError, RecursionError) as e:
        raise Refuse(f"JSON: {e}"[:80]) from None
    if not isinstance(doc, dict):
        raise Refuse("top")
    out = {}
    for subset, splits in doc.items():
        if subset == "mteb_model_meta":
            continue
        if not isinstance(splits, dict) or not _text_id(subset):
            raise Refuse("subset")
        for split, run in splits.items():
            if not isinstance(run, dict) or not _text_id(split) or not run:
                raise Refuse("split")
            clean = {}
            for q, docs in run.items():
                if not isinstance(docs, dict) or not _text_id(q) or q == "all":
                    raise Refuse("query")
                for d, v in docs.items():
                    if not _text_id(d) or isinstance(v, bool) or not isinstance(v, (int, float)):
                        raise Refuse("document")
                    try:
                        x = float(v)
                    except OverflowError:
                        raise Refuse("overflow") from None
                    if not math.isfinite(x):
                        raise Refuse("not finite")
                    clean.setdefault(q, {})[d] = x
            if not clean:
                raise Refuse("no documents")
            out[subset, split] = clean
    if not out:
        raise Refuse("no subset")
    return out


# ------------------------------------------------------------------------------------ judging


def in_process(*args) -> subprocess.CompletedProcess:
    from typer.testing import CliRunner

    from tierank.cli import app

    r = CliRunner().invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return subprocess.CompletedProcess(
            args, -1, r.stdout, f"Traceback: {type(r.exception).__name__}: {r.exception}"[:300]
        )
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


STATS = ("oblivious", "expected", "min", "max", "std")


def expected_records(runs: dict, qrels_path) -> list:
    from tierank.integrations.mteb import tierank_measure

    ms = [tierank_measure(m) for m in MEASURES]
    out = []
    for (subset, split), run in runs.items():
        res = tierank.evaluate(str(qrels_path), run, ms)
        for rec in res.records(per_query=True):
            out.append(
                (
                    (subset, split) if len(runs) > 1 else None,
                    rec["query"],
                    rec["measure"],
                    *(rec[s] for s in STATS),
                )
            )
    return out


def read_in_chunks(preds, chunk: int):
    """What :func:`read_predictions` gives with ``chunk`` characters read at a time: the columns, or
    the error line."""
    import tierank.io.mteb_json as mteb  # the reader of MTEB's JSON (tierank.integrations.mteb re-exports it)

    saved, mteb._CHUNK = mteb._CHUNK, chunk
    try:
        runs = mteb.read_predictions(preds)
        return {
            k: (r.qid.to_pylist(), r.docid.to_pylist(), r.score.tolist()) for k, r in runs.items()
        }
    except tierank.TierankInputError as e:
        return str(e)
    finally:
        mteb._CHUNK = saved


def judge(m: Mutant, tmp_path) -> tuple[str, str]:
    preds = tmp_path / f"m{m.seed}_predictions.json"
    preds.write_bytes(m.data)
    whole, small = read_in_chunks(preds, 1 << 20), read_in_chunks(preds, 1 + m.seed % 5)
    if whole != small:  # the incremental reader: the same columns or error whatever the chunks
        return "CHUNKS DIFFER", f"{str(whole)[:300]} != {str(small)[:300]}"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    try:
        runs, why = reference(m.data), None
    except Refuse as e:
        runs, why = None, str(e)
    args = ["mteb", qrels, preds, "-q", "-f", "jsonl"]
    for x in MEASURES:
        args += ["-m", x]
    p = in_process(*args)
    if p.returncode not in (0, 2) or "Traceback" in p.stderr:
        return "TRACEBACK", p.stderr
    want = None
    if runs is not None:
        try:
            want = expected_records(runs, qrels)
        except (
            tierank.TierankInputError
        ) as e:  # a valid file that evaluate refuses (no judged query)
            why = f"evaluate: {e}"
    if p.returncode == 2:
        lines = p.stderr.splitlines()
        if (
            len(lines) != 1
            or not lines[0].startswith("tierank: error: ")
            or str(preds) not in lines[0]
        ):
            return "BAD MESSAGE", p.stderr
        if want is not None:
            return "REFUSED A VALID FILE", p.stderr
        if runs is not None:
            return "refused, as evaluate refuses the reference's run", ""
        if not lines[0].startswith(f"tierank: error: {preds}: "):
            return "BAD MESSAGE", p.stderr
        return "refused, as the reference", ""
    if want is None:
        return "ACCEPTED AN INVALID FILE", why
    got = [
        (
            (r["subset"], r["split"]) if "subset" in r else None,
            r["query"],
            r["measure"],
            *(r[s] for s in STATS),
        )
        for r in map(json.loads, p.stdout.splitlines())
    ]
    if sorted(got, key=repr) != sorted(want, key=repr):
        return "WRONG NUMBERS", f"{got[:3]} != {want[:3]}"
    return "equal numbers", ""


GOOD = {
    "refused, as the reference",
    "refused, as evaluate refuses the reference's run",
    "equal numbers",
}


def check(first: int, count: int, tmp_path) -> Counter:
    counts: Counter = Counter()
    failures = []
    for seed in range(first, first + count):
        m = mutant(seed)
        outcome, detail = judge(m, tmp_path)
        counts[outcome] += 1
        if outcome not in GOOD:
            failures.append(f"seed {seed} ({', '.join(m.ops) or 'clean'}): {outcome}: {detail}")
    print(
        f"\nMTEB JSON fuzz mutants {first}..{first + count - 1}: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    )
    assert not failures, "\n".join(failures[:20])
    # not vacuous: both outcomes occur often
    assert (
        counts["equal numbers"] > count // 5 and counts["refused, as the reference"] > count // 5
    ), counts
    return counts


def test_mteb_json_mutants(tmp_path):
    check(0, DEFAULT_MUTANTS, tmp_path)


@pytest.mark.slow
def test_mteb_json_mutants_slow(tmp_path):
    check(FIRST_SLOW, SLOW_MUTANTS, tmp_path)


def test_every_mutator_is_exercised():
    seen = Counter(op for seed in range(DEFAULT_MUTANTS) for op in mutant(seed).ops)
    assert set(TREE_OPS) | set(BYTE_OPS) <= set(seen), sorted(
        set(TREE_OPS) | set(BYTE_OPS) - set(seen)
    )
