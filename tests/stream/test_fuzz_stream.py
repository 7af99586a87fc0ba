"""Fuzzing tier for streaming (issue 22): seeded mutants of real runs, streamed and in memory.

Each mutant of a shipped run (the mutators of :mod:`tests.io.test_fuzz`: bytes inserted, flipped and
deleted, lines duplicated and shuffled, separators, hostile numbers and ids, BOMs, huge tokens,
truncation, gzip wrapping and corruption) is evaluated in memory (``tierank.evaluate``) and
streamed (:func:`tierank.stream.evaluate_stream`) in small blocks with 1 or 2 workers.  The two
must give identical numbers or the identical refusal (every problem, in file order), never another
exception; the one allowed difference is a run whose queries are not grouped, which streaming
refuses (checked against an independent look at the lines).  Accepted mutants must also give the
numbers of the independent strict reader (:mod:`tests.io.strict_reader`).  A sample goes through
the command line (``--block-bytes``, ``-j 2``): the same output, or the same error lines and exit 2.

The outcome counts are printed (``-s``); reproduce one mutant with ``mutant(seed, seeds)``.
"""

from __future__ import annotations

import gzip
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import tierank
from tierank import TierankInputError
from tierank.cli import app
from tierank.examples import path as example_path
from tierank.stream import evaluate_stream

from ..io import strict_reader as strict
from ..io import test_fuzz as base

MEASURES = ["RR", "nDCG@10", "AP", "P@5", "R@20"]
MUTANTS = 240
CLI_EVERY = 20  # one mutant in CLI_EVERY also goes through the command line
JOBS_EVERY = 4  # one mutant in JOBS_EVERY is streamed with 2 workers (starting them costs)


def _slice(run_gz: Path, qrels_gz: Path, queries: int, judged_only: bool) -> tuple[bytes, bytes]:
    """The first ``queries`` (judged) queries of a shipped run, with their qrels lines."""
    qrels_lines = gzip.decompress(qrels_gz.read_bytes()).splitlines(keepends=True)
    judged = {x.split()[0] for x in qrels_lines if x.split()}
    keep, out = [], []
    for line in gzip.decompress(run_gz.read_bytes()).splitlines(keepends=True):
        q = line.split()[0]
        if judged_only and q not in judged:
            continue
        if q not in keep:
            if len(keep) == queries:
                break
            keep.append(q)
        out.append(line)
    return b"".join(out), b"".join(
        x for x in qrels_lines if x.split() and x.split()[0] in set(keep)
    )


@pytest.fixture(scope="module")
def seeds() -> list[tuple[str, bytes, bytes]]:
    return [
        (
            "askubuntu",
            *_slice(example_path("askubuntu-run"), example_path("askubuntu-qrels"), 25, False),
        ),
        ("rag24", *_slice(example_path("rag24-run"), example_path("rag24-qrels"), 4, True)),
    ]


@dataclass
class Mutant:
    seed: int
    name: str
    ops: list[str]
    run: bytes
    qrels: bytes
    block: int
    jobs: int


def mutant(seed: int, seeds) -> Mutant:
    """Mutant number ``seed`` of a run (the qrels are not mutated: they are never streamed)."""
    rng = random.Random(seed)
    name, run, qrels = seeds[rng.randrange(len(seeds))]
    ops = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        fn = rng.choice(base.MUTATORS)
        run = fn(rng, run, "run")
        ops.append(fn.__name__)
    if rng.random() < 0.25:
        run, op = base._gzip_wrap(rng, run)
        ops.append(op)
    block = rng.choice([40, 300, 1000, 4000, 20_000])
    return Mutant(seed, name, ops, run, qrels, block, 2 if seed % JOBS_EVERY == 0 else 1)


class Outcome:
    EQUAL = "equal numbers"
    REFUSED = "same refusal"
    UNGROUPED = "refused as not grouped (an ungrouped run)"
    MISMATCH = "different numbers"
    DIFFERENT_REFUSAL = "different refusal"
    ONE_REFUSES = "refused one way only"
    UNGROUPED_WRONGLY = "refused as not grouped, but the run is grouped"
    STRICT = "disagrees with the strict reader"
    OTHER = "other exception"


BAD = {
    Outcome.MISMATCH,
    Outcome.DIFFERENT_REFUSAL,
    Outcome.ONE_REFUSES,
    Outcome.UNGROUPED_WRONGLY,
    Outcome.STRICT,
    Outcome.OTHER,
}


def _lines(raw: bytes) -> list[bytes]:
    """The lines of ``raw`` (decompressed, BOM dropped) with comment lines (``#`` first) emptied, as documented."""
    return [
        b"" if (strict.fields(x) or [b""])[0].startswith(b"#") else x
        for x in strict.split_lines(raw)
    ]


def _without_comments(raw: bytes) -> bytes:
    """``raw`` for the strict reader: comment lines emptied, one BOM in front again (it drops one)."""
    return strict.BOM + b"\n".join(_lines(raw))


def _grouped(raw: bytes) -> bool:
    """Whether every query's lines are together (an independent look at the lines)."""
    seen, last = set(), None
    for line in _lines(raw):
        f = strict.fields(line)
        if not f or f[0] == last:
            continue
        if f[0] in seen:
            return False
        seen.add(f[0])
        last = f[0]
    return True


def _result(fn):
    try:
        res = fn()
        return res.per_query(), res.ties, None
    except TierankInputError as e:
        return None, None, e


def judge(m: Mutant, tmp: Path) -> tuple[str, str]:
    run_path, qrels_path = tmp / f"m{m.seed}.run", tmp / f"m{m.seed}.qrels"
    run_path.write_bytes(m.run)
    qrels_path.write_bytes(m.qrels)
    try:
        mem, mem_ties, mem_err = _result(lambda: tierank.evaluate(qrels_path, run_path, MEASURES))
        got, got_ties, got_err = _result(
            lambda: evaluate_stream(
                qrels_path, run_path, MEASURES, block_bytes=m.block, jobs=m.jobs
            )
        )
    except Exception as e:  # noqa: BLE001 - exactly what the tier looks for
        return Outcome.OTHER, f"{type(e).__name__}: {e}"[:300]
    if got_err is not None and "not grouped by query" in str(got_err):
        # a run not grouped by query cannot be streamed: refused, with the bad lines streaming can see
        # (all but the duplicates whose first line is in another block)
        try:
            grouped = _grouped(m.run)
        except strict.Refused:
            grouped = True
        if grouped:
            return Outcome.UNGROUPED_WRONGLY, str(got_err)[:300]
        seen = [p for p in got_err.problems if "not grouped by query" not in p.reason]
        missing = [p for p in (mem_err.problems if mem_err else []) if p not in seen]
        if [p for p in seen if p not in (mem_err.problems if mem_err else [])] or not all(
            "appears twice" in p.reason or "more problems" in p.reason for p in missing
        ):
            return (
                Outcome.DIFFERENT_REFUSAL,
                f"in memory: {str(mem_err)[:300]!r}; streamed: {str(got_err)[:300]!r}",
            )
        return Outcome.UNGROUPED, ""
    if mem_err is not None and got_err is not None:
        if got_err.problems == mem_err.problems:
            return Outcome.REFUSED, ""
        return (
            Outcome.DIFFERENT_REFUSAL,
            f"in memory: {str(mem_err)[:300]!r}; streamed: {str(got_err)[:300]!r}",
        )
    if (mem_err is None) != (got_err is None):
        return (
            Outcome.ONE_REFUSES,
            f"in memory: {str(mem_err)[:200]!r}; streamed: {str(got_err)[:200]!r}",
        )
    try:
        pd.testing.assert_frame_equal(got, mem)
        assert got_ties == mem_ties
    except AssertionError as e:
        return Outcome.MISMATCH, str(e)[:300]
    try:  # the numbers of the independent reader
        want = tierank.evaluate(
            strict.read_qrels(m.qrels), strict.read_run(_without_comments(m.run)), MEASURES
        ).per_query()
        pd.testing.assert_frame_equal(mem, want)
    except (strict.Refused, TierankInputError, AssertionError) as e:
        return Outcome.STRICT, f"{type(e).__name__}: {e}"[:300]
    return Outcome.EQUAL, ""


def _cli(m: Mutant, tmp: Path) -> str | None:
    """None if the command line streams as it evaluates in memory (the same output and exit code)."""
    run_path, qrels_path = tmp / f"m{m.seed}.run", tmp / f"m{m.seed}.qrels"
    args = ["eval", str(qrels_path), str(run_path), "-m", "RR", "-m", "AP", "-q", "-f", "jsonl"]
    mem = CliRunner().invoke(app, args)
    got = CliRunner().invoke(app, [*args, "--block-bytes", str(m.block), "-j", "2"])
    for res in (mem, got):
        if not isinstance(res.exception, (SystemExit, type(None))):
            return f"{type(res.exception).__name__}: {res.exception}"
    if got.exit_code == 2 and "not grouped by query" in got.output and not _grouped(m.run):
        return None
    if (mem.exit_code, mem.output) != (got.exit_code, got.output) or mem.exit_code not in (0, 2):
        return (
            f"in memory: exit {mem.exit_code} {mem.output[-300:]!r}; streamed: exit {got.exit_code} "
            f"{got.output[-300:]!r}"
        )
    return None


def test_fuzz_streaming(seeds, tmp_path):
    counts: Counter[str] = Counter()
    failures = []
    for seed in range(MUTANTS):
        m = mutant(seed, seeds)
        outcome, detail = judge(m, tmp_path)
        counts[outcome] += 1
        where = f"seed {seed} ({m.name}: {', '.join(m.ops)}; block {m.block}, {m.jobs} jobs)"
        if outcome in BAD:
            failures.append(f"{where}: {outcome}: {detail}")
        if seed % CLI_EVERY == 0:
            counts["command line checked"] += 1
            wrong = _cli(m, tmp_path)
            if wrong:
                failures.append(f"{where}: command line: {wrong}")
        for f in tmp_path.iterdir():
            f.unlink()
    print(
        f"\nstreaming fuzz, {MUTANTS} mutants: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    )
    assert not failures, "\n".join(failures[:20])
    # the tier must exercise both outcomes, not pass vacuously
    assert counts[Outcome.EQUAL] > MUTANTS // 10 and counts[Outcome.REFUSED] > MUTANTS // 10


def test_the_unmutated_runs_stream_as_in_memory(seeds, tmp_path):
    for name, run, qrels in seeds:
        for jobs in (1, 2):
            assert judge(Mutant(0, name, [], run, qrels, 500, jobs), tmp_path) == (
                Outcome.EQUAL,
                "",
            )


def test_mutants_are_reproducible(seeds):
    a, b = mutant(7, seeds), mutant(7, seeds)
    assert (a.run, a.ops, a.block) == (b.run, b.ops, b.block)
