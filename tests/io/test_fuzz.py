"""Fuzzing tier: seeded mutants of the real runs and qrels of ``tests/realdata.py`` (files in the repository).

For every mutant, the file readers (through ``tierank.evaluate``) must either
give exactly the numbers of :mod:`strict_reader` (an independent reader of the
documented grammar, sharing no code with ``tierank.io``) on the same bytes,
evaluated through the dict adapter, or refuse with a :class:`TierankInputError`
whose every line names the mutated file.  Never another exception.  The two
readers must also agree on *whether* to refuse.  The fast and the line-by-line
paths must give the same result on every mutant, and a sample of mutants goes
through the command line (exit 0, or exit 2 with ``tierank: error:`` lines).

The default run checks 600 mutants; ``-m slow`` checks 4,000 more.  Reproduce
one mutant with ``mutant(seed)``; the outcome counts are printed (``-s``).
"""

from __future__ import annotations

import gzip
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tierank
from tierank import TierankInputError
from tierank.io import lexer, readers

from . import strict_reader as strict

MEASURES = ["RR", "nDCG@10", "AP", "P@5"]
DEFAULT_MUTANTS = 600
SLOW_MUTANTS = 4000
CLI_EVERY = 60  # one mutant in CLI_EVERY also goes through the command line


# ------------------------------------------------------------------ seed files


def _slice(shared: Path, run: str, qrels: str, queries: int) -> tuple[bytes, bytes]:
    """The first ``queries`` queries of a real run, with their qrels lines (real bytes, fewer of them)."""
    run_lines = (shared / run).read_bytes().splitlines(keepends=True)
    keep, out = [], []
    for line in run_lines:
        q = line.split()[0]
        if q not in keep:
            if len(keep) == queries:
                break
            keep.append(q)
        out.append(line)
    wanted = set(keep)
    qrels_lines = [
        x
        for x in (shared / qrels).read_bytes().splitlines(keepends=True)
        if x.split() and x.split()[0] in wanted
    ]
    return b"".join(out), b"".join(qrels_lines)


@pytest.fixture(scope="module")
def seeds(real_data) -> list[tuple[str, bytes, bytes]]:
    return [
        ("askubuntu", *_slice(real_data, "askubuntu/test.bm25.run", "askubuntu/test.qrels", 25)),
        ("askubuntu-dev", *_slice(real_data, "askubuntu/dev.bm25.run", "askubuntu/dev.qrels", 25)),
        ("trec_eval", *_slice(real_data, "trec_eval/results.test", "trec_eval/qrels.test", 2)),
    ]


# -------------------------------------------------------------------- mutators

INTERESTING = [
    b" ",
    b"\t",
    b"  ",
    b" \t",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    lexer.BOM,
    b"\x00",
    b"\x0b",
    b"\x0c",
    b"\x1c",
    b"\x1d",
    b"\x1e",
    b"\x1f",
    b"\xa0",
    b"\xff",
    b"\xe9",
    b"\x85",
    b"\xc3",
    b"\xed\xa0\x80",
    "\u00a0".encode(),
    "\u2003".encode(),
    "\u3000".encode(),
    "\u2028".encode(),
    "\u0085".encode(),
    "é".encode(),
    "\u0661".encode(),
    "\uff11".encode(),
    b"_",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"nan",
    b"inf",
    b"all",
    b",",
    b"0",
    b"9",
    b"#",
    b'"',
    b"'",
]
NUMBERS = [
    b"nan",
    b"NaN",
    b"-nan",
    b"inf",
    b"-inf",
    b"Infinity",
    b"1e999",
    b"-1e999",
    b"1_000",
    b"1,5",
    "\u0661\u0662".encode(),
    "\uff11".encode(),
    "1\u00a0".encode(),
    b"0x10",
    b"+1",
    b".5",
    b"1.",
    b"1e5",
    b"1e",
    b"e5",
    b".",
    b"-",
    b"",
    b"1e-999",
    b"4.9e-324",
    b"007",
    b"-0",
    b"1.0.0",
    b"1e+5",
    b"nan(1)",
    b"infinit",
    b"0.1",
    b"3",
    b"12345678901234567890",
]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick_line(rng: random.Random, lines: list[bytes]) -> int:
    return rng.randrange(len(lines)) if lines else 0


def m_insert(rng, data, _):
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + rng.choice(INTERESTING) + data[pos:]


def m_flip(rng, data, _):
    if not data:
        return data
    pos = rng.randrange(len(data))
    return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]


def m_delete(rng, data, _):
    if not data:
        return data
    pos = rng.randrange(len(data))
    return data[:pos] + data[pos + rng.randint(1, 12) :]


def m_truncate(rng, data, _):
    return data[: rng.randrange(len(data) + 1)]


def m_duplicate_line(rng, data, _):
    lines = _lines(data)
    i = _pick_line(rng, lines)
    lines.insert(rng.randrange(len(lines) + 1), lines[i] if lines else b"")
    return b"\n".join(lines)


def m_shuffle(rng, data, _):
    lines = _lines(data)
    rng.shuffle(lines)
    return b"\n".join(lines)


def m_bom(rng, data, _):
    return lexer.BOM * rng.choice([1, 1, 1, 2]) + data


def m_whitespace(rng, data, _):
    """Separators changed on some lines: tabs, runs, indents, trailing blanks, CRLF, lone CR."""
    kind = rng.choice(["tabs", "runs", "indent", "trailing", "crlf", "cr", "mixed", "blank"])
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "cr":
        return data.replace(b"\n", b"\r")
    lines = _lines(data)
    for _ in range(rng.randint(1, 5)):
        i = _pick_line(rng, lines)
        if not lines:
            break
        line = lines[i]
        if kind == "tabs":
            line = line.replace(b" ", b"\t")
        elif kind == "runs":
            line = line.replace(b" ", b" " * rng.randint(2, 4)).replace(b"\t", b"\t  ")
        elif kind == "indent":
            line = rng.choice([b"\t", b" ", b" \t "]) + line
        elif kind == "trailing":
            line = line + rng.choice([b"\t", b" ", b" \t "])
        elif kind == "mixed":
            line = b"".join(
                c if c not in b" \t" else rng.choice([b" ", b"\t", b"  \t"])
                for c in (line[k : k + 1] for k in range(len(line)))
            )
        else:
            line = line + b"\n" + rng.choice([b"", b" ", b"\t \t"])
        lines[i] = line
    return b"\n".join(lines)


def m_unicode_space(rng, data, _):
    """A Unicode or control 'space' replacing a separator, or inside a token."""
    space = rng.choice(
        ["\u00a0", "\u2003", "\u3000", "\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c"]
    ).encode()
    seps = [k for k in range(len(data)) if data[k : k + 1] in (b" ", b"\t")]
    if seps and rng.random() < 0.5:
        k = rng.choice(seps)
        return data[:k] + space + data[k + 1 :]
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + space + data[pos:]


def _token_edit(rng, data, fn):
    lines = _lines(data)
    if not lines:
        return data
    i = _pick_line(rng, lines)
    toks = lines[i].split()
    if not toks:
        return data
    lines[i] = fn(toks, lines[i])
    return b"\n".join(lines)


def m_number(rng, data, kind):
    """A score (run) or grade (qrels) replaced by a hostile or unusual number."""

    def edit(toks, line):
        k = 4 if kind == "run" and len(toks) > 4 else len(toks) - 1
        toks[k] = rng.choice(NUMBERS)
        return b" ".join(toks)

    return _token_edit(rng, data, edit)


def m_rank(rng, data, kind):
    def edit(toks, line):
        if kind == "run" and len(toks) > 3:
            toks[3] = rng.choice(NUMBERS)
        return b"\t".join(toks)

    return _token_edit(rng, data, edit)


def m_columns(rng, data, _):
    def edit(toks, line):
        if rng.random() < 0.5 and len(toks) > 1:
            del toks[rng.randrange(len(toks))]
        else:
            toks.insert(rng.randrange(len(toks) + 1), rng.choice([b"x", b"0", b"Q0"]))
        return b" ".join(toks)

    return _token_edit(rng, data, edit)


def m_id(rng, data, kind):
    """An id replaced: by another id of the file (duplicates), 'all', invalid UTF-8, look-alikes."""
    ids = [t for line in _lines(data)[:200] for t in line.split()[2:3]]

    def edit(toks, line):
        k = rng.choice([0, 2]) if len(toks) > 2 else 0
        choice = rng.randrange(5)
        if choice == 0 and ids:
            toks[k] = rng.choice(ids)
        elif choice == 1:
            toks[0] = b"all"
        elif choice == 2:
            toks[k] = toks[k] + rng.choice([b"\xe9", b"\xe8", b"\xff", b"\xc3"])
        elif choice == 3:
            toks[k] = toks[k] + rng.choice(["\u00e9", "\ufeff", "\u200b", "\u0301"]).encode()
        else:
            toks[k] = toks[k].upper() if rng.random() < 0.5 else toks[k] + b"_"
        return b" ".join(toks)

    return _token_edit(rng, data, edit)


def m_huge_token(rng, data, _):
    def edit(toks, line):
        k = rng.randrange(len(toks))
        toks[k] = rng.choice([b"d", b"7", b"\xc3\xa9"]) * rng.choice([10_000, 300_000])
        return b" ".join(toks)

    return _token_edit(rng, data, edit)


def m_empty(rng, data, _):
    return rng.choice([b"", b"\n", b" \n\t\n", lexer.BOM, b"\r\n\r\n", lexer.BOM + b"\n"])


def m_replace_all_lines_but(rng, data, _):
    lines = [x for x in _lines(data) if x.strip()]
    return b"\n".join(rng.sample(lines, min(len(lines), rng.randint(1, 3)))) + b"\n"


MUTATORS = [
    m_insert,
    m_insert,
    m_flip,
    m_flip,
    m_delete,
    m_truncate,
    m_duplicate_line,
    m_shuffle,
    m_bom,
    m_whitespace,
    m_whitespace,
    m_whitespace,
    m_unicode_space,
    m_unicode_space,
    m_number,
    m_number,
    m_rank,
    m_columns,
    m_id,
    m_id,
    m_huge_token,
    m_empty,
    m_replace_all_lines_but,
]


def _gzip_wrap(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    z = gzip.compress(data, compresslevel=1, mtime=0)
    kind = rng.choice(
        ["ok", "ok", "truncated", "header", "corrupt", "garbage", "zeros", "members", "crc"]
    )
    if kind == "truncated":
        z = z[: rng.randrange(len(z))]
    elif kind == "header":
        z = z[:10]
    elif kind == "corrupt":
        k = rng.randrange(10, max(11, len(z) - 8))
        z = z[:k] + bytes([z[k] ^ (1 << rng.randrange(8))]) + z[k + 1 :] if k < len(z) else z
    elif kind == "garbage":
        z = z + rng.choice([b"x", b"\x1f", b"\x1f\x8b", b"garbage\n", b"\x00\x00junk"])
    elif kind == "zeros":
        z = z + bytes(rng.randint(1, 600))
    elif kind == "members":
        cut = rng.randrange(len(data) + 1)
        z = gzip.compress(data[:cut], mtime=0) + gzip.compress(data[cut:], mtime=0)
    elif kind == "crc":
        z = z[:-8] + bytes(4) + z[-4:]
    return z, f"gzip:{kind}"


@dataclass
class Mutant:
    seed: int
    name: str
    target: str  # "run" or "qrels"
    ops: list[str]
    run: bytes
    qrels: bytes


def mutant(seed: int, seeds: list[tuple[str, bytes, bytes]]) -> Mutant:
    """Mutant number ``seed``: reproducible from the seed alone."""
    rng = random.Random(seed)
    name, run, qrels = seeds[rng.randrange(len(seeds))]
    target = "run" if rng.random() < 0.6 else "qrels"
    data = run if target == "run" else qrels
    ops = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        fn = rng.choice(MUTATORS)
        data = fn(rng, data, target)
        ops.append(fn.__name__)
    if rng.random() < 0.2:
        data, op = _gzip_wrap(rng, data)
        ops.append(op)
    if target == "run":
        run = data
    else:
        qrels = data
    return Mutant(seed, name, target, ops, run, qrels)


# -------------------------------------------------------------------- oracle


class Outcome:
    EQUAL = "equal numbers"
    REFUSED = "refused by both"
    REFUSED_ONLY_TIERANK = "refused by tierank only"
    ACCEPTED_ONLY_TIERANK = "accepted by tierank only"
    MISMATCH = "different numbers"
    UNLOCATED = "refused without naming the file"
    OTHER = "other exception"
    PATHS_DISAGREE = "fast and slow paths disagree"


BAD = {
    Outcome.REFUSED_ONLY_TIERANK,
    Outcome.ACCEPTED_ONLY_TIERANK,
    Outcome.MISMATCH,
    Outcome.UNLOCATED,
    Outcome.OTHER,
    Outcome.PATHS_DISAGREE,
}


def _paths_agree(path: Path, target: str) -> bool:
    """The fast path, where it answers, gives what the line-by-line validator gives."""
    try:
        data = lexer.load(path)
    except TierankInputError:
        return True  # refused before either path (gzip, unreadable)
    fast_fn, slow_fn = (
        (readers._run_fast, readers._run_slow)
        if target == "run"
        else (readers._qrels_fast, readers._qrels_slow)
    )
    fast = fast_fn(str(path), data)
    if fast is None:
        return True
    slow = slow_fn(str(path), data)  # must not raise when the fast path accepted
    same = (
        fast.qid.to_pylist() == slow.qid.to_pylist()
        and fast.docid.to_pylist() == slow.docid.to_pylist()
    )
    if target == "run":
        return (
            same
            and np.array_equal(fast.score, slow.score)
            and np.array_equal(fast.rank, slow.rank, equal_nan=True)
        )
    return same and np.array_equal(fast.grade, slow.grade)


def judge(m: Mutant, tmp: Path) -> tuple[str, str]:
    run_path, qrels_path = tmp / f"m{m.seed}.run", tmp / f"m{m.seed}.qrels"
    run_path.write_bytes(m.run)
    qrels_path.write_bytes(m.qrels)
    try:
        got = tierank.evaluate(qrels_path, run_path, MEASURES).per_query()
        refused = None
    except TierankInputError as e:
        got, refused = None, e
    except Exception as e:  # noqa: BLE001 - exactly what the tier looks for
        return Outcome.OTHER, f"{type(e).__name__}: {e}"[:300]
    try:
        if not _paths_agree(run_path if m.target == "run" else qrels_path, m.target):
            return Outcome.PATHS_DISAGREE, ""
    except Exception as e:  # noqa: BLE001
        return Outcome.OTHER, f"paths: {type(e).__name__}: {e}"[:300]
    try:
        want = tierank.evaluate(
            strict.read_qrels(m.qrels), strict.read_run(m.run), MEASURES
        ).per_query()
        why = None
    except (strict.Refused, TierankInputError) as e:
        want, why = None, str(e)[:200]
    if refused is not None:
        names = (str(run_path), str(qrels_path))
        if not all(
            p.source in names or any(n in p.reason for n in names) for p in refused.problems
        ):
            return Outcome.UNLOCATED, str(refused)[:300]
        return (
            (Outcome.REFUSED, "")
            if want is None
            else (Outcome.REFUSED_ONLY_TIERANK, str(refused)[:300])
        )
    if want is None:
        return Outcome.ACCEPTED_ONLY_TIERANK, why
    try:
        pd.testing.assert_frame_equal(got, want)
    except AssertionError as e:
        return Outcome.MISMATCH, str(e)[:300]
    return Outcome.EQUAL, ""


def _cli(m: Mutant, tmp: Path) -> str | None:
    """None if the command line behaves (exit 0, or exit 2 with only error lines), else what went wrong."""
    run_path, qrels_path = tmp / f"m{m.seed}.run", tmp / f"m{m.seed}.qrels"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tierank.cli",
            "eval",
            str(qrels_path),
            str(run_path),
            "-m",
            "RR",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        errors="replace",
    )
    if "Traceback" in p.stderr:
        return p.stderr[-500:]
    if p.returncode == 0:
        return None
    lines = p.stderr.splitlines()
    if p.returncode == 2 and lines and all(x.startswith("tierank: error: ") for x in lines):
        return None
    return f"exit {p.returncode}: {p.stderr[-500:]}"


def _fuzz(seeds, tmp: Path, first: int, count: int) -> None:
    counts: Counter[str] = Counter()
    failures = []
    for seed in range(first, first + count):
        m = mutant(seed, seeds)
        outcome, detail = judge(m, tmp)
        counts[outcome] += 1
        if outcome in BAD:
            failures.append(
                f"seed {seed} ({m.name}, {m.target}: {', '.join(m.ops)}): {outcome}: {detail}"
            )
        if seed % CLI_EVERY == 0:
            wrong = _cli(m, tmp)
            counts["command line checked"] += 1
            if wrong:
                failures.append(
                    f"seed {seed} ({m.name}, {m.target}: {', '.join(m.ops)}): command line: {wrong}"
                )
        for f in tmp.iterdir():
            f.unlink()
    print(
        f"\nfuzz mutants {first}..{first + count - 1}: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    )
    assert not failures, "\n".join(failures[:20])
    # the tier must exercise both outcomes, not pass vacuously
    assert counts[Outcome.EQUAL] > count // 10 and counts[Outcome.REFUSED] > count // 10


def test_fuzz_readers(seeds, tmp_path):
    _fuzz(seeds, tmp_path, 0, DEFAULT_MUTANTS)


@pytest.mark.slow
def test_fuzz_readers_more(seeds, tmp_path):
    _fuzz(seeds, tmp_path, 100_000, SLOW_MUTANTS)


def test_mutants_are_reproducible(seeds):
    a, b = mutant(7, seeds), mutant(7, seeds)
    assert (a.run, a.qrels, a.ops) == (b.run, b.qrels, b.ops)
    assert mutant(8, seeds).ops != a.ops or mutant(8, seeds).run != a.run


def test_strict_reader_agrees_on_the_unmutated_files(seeds, tmp_path):
    for name, run, qrels in seeds:
        m = Mutant(0, name, "run", [], run, qrels)
        assert judge(m, tmp_path) == (Outcome.EQUAL, "")
