"""The common suite, driven by the measure registry: every registered family, with parameters taken
from its own schema, gives the same numbers on every surface that evaluates it.

For each family of `tierank.measures.REGISTRY` the suite derives one or two instances (`instances`):
the family's own example (``example``, for a family with a required parameter) or its defaults, with
a cutoff where one is required; then one with a cutoff where one is allowed and one parameter moved
off its default (the first whose schema gives another accepted value).  A family that reads subtopic
qrels (``needs_subtopics``) is evaluated on the subtopic qrels of ``tests/data/diversity``, every
other one on a seeded synthetic tied run with graded, partly unjudged qrels (and, in the full tier,
on the AskUbuntu test pair).  A new family is covered by registering it: no list is kept here.

Surfaces, each where the family declares it:

* in memory (`tierank.evaluate`) == streamed (`tierank.stream.evaluate_stream`, two workers, small
  blocks; the command line with ``-j 2 --block-bytes``), bit for bit; a family that cannot stream
  (a string value, a summary that is not additive) is refused in one line;
* == the tensor path (`tierank.tensor.evaluate`) where the family declares a ``tensor_kernel``, on the
  same data as padded arrays;
* == tierank's ir_measures provider where ir_measures names the family (``names.ir_measures``);
* == compare's system value (`tierank.analysis.compare.compare`);
* unchanged by the order of the run's lines and queries, and (expected, min, max, std) by the order
  of the documents inside each tie group;
* ``parse_measure(str(m)) == m``.

The default tier runs the name round trip of every instance and, for each family's first instance,
in memory against streamed; the rest is in the full tier.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tierank
from helpers import invoke
from realdata import DATA
from tierank import tensor
from tierank.errors import TierankInputError
from tierank.measures import REGISTRY, Measure, Param, parse_measure
from tierank.stream import evaluate_stream

#: statistics every record carries and every surface compares
STATS = ("oblivious", "expected", "min", "max", "std")
#: statistics no order of the documents inside a tie group may change
TIE_FREE_STATS = ("expected", "min", "max", "std")
#: a streamed run is cut into about this many blocks (query-aligned batches)
BLOCKS = 6


def block_bytes(run: Path) -> int:
    """Small blocks: ``run`` streams in several batches over the two workers."""
    return max(32, run.stat().st_size // BLOCKS)


# -- the instances, from the registry ---------------------------------------------------------------
def families() -> dict[str, type[Measure]]:
    """Every registered family once (aliases dropped), by name."""
    return {cls.family: cls for cls in REGISTRY.values()}


def _other_value(p: Param) -> Any:
    """A value ``p``'s schema accepts other than its default (None: the schema gives none)."""
    if p.choices is not None:
        return next((c for c in p.choices if c != p.default), None)
    if p.type is bool:
        return True if p.default is None else not p.default
    if p.type is int:
        v = 2 if p.default is None else p.default + 1
        return v if p.check(v) is None else None
    if p.type is float:
        base = 0.5 if p.default is None else p.default
        return next(
            (v for v in (base / 2, base * 2) if v != p.default and p.check(v) is None), None
        )
    if p.type is dict:  # a gain map {grade: gain}
        return {1: 2, 2: 5}
    return None


def _cutoff(cls: type[Measure], k: int) -> str:
    """``@k``, or for a family whose ``@`` is a value of its own Param (a recall level, a multiple
    of N+), a value that Param accepts."""
    p = cls.cutoff_param
    if p is None:
        return f"@{k}"
    low = 0.0 if p.low is None else float(p.low)
    high = 1.0 if p.high is None else float(p.high)
    return f"@{low + min(0.5, (high - low) / 2)}"


def instances(cls: type[Measure]) -> list[Measure]:
    """One or two measures of family ``cls`` from its class attributes and schema (see the module
    docstring)."""
    base = getattr(cls, "example", "") or cls.family + (
        _cutoff(cls, 5) if cls.cutoff_required else ""
    )
    first = parse_measure(base)
    second = first
    if cls.cutoff_allowed and first.cutoff is None:
        second = parse_measure(str(first) + _cutoff(cls, 10))
    for p in cls.schema:
        v = _other_value(p)
        if v is None or v == first.param(p.name):
            continue
        try:
            second = second(**{p.name: v})
        except TierankInputError:  # a combination the family's validate refuses
            continue
        break
    return [first] if second == first else [first, second]


INSTANCES: dict[str, list[Measure]] = {f: instances(c) for f, c in sorted(families().items())}
FIRST = [pytest.param(ms[0], id=str(ms[0])) for ms in INSTANCES.values()]
EVERY = [pytest.param(m, id=str(m)) for ms in INSTANCES.values() for m in ms]
#: every instance on plain qrels (the families that do not read subtopic qrels)
PLAIN = [p for p in EVERY if not p.values[0].needs_subtopics]
#: every instance whose family ir_measures names (``names.ir_measures``)
NAMED_BY_IR_MEASURES = [p for p in EVERY if type(p.values[0]).about().ir_measures is not None]
full = pytest.mark.full


def streams(m: Measure) -> bool:
    """Whether the family declares it can be streamed: a number per query (not ``string_valued``)
    and an additive summary."""
    return m.additive and not getattr(m, "string_valued", False)


# -- the data ---------------------------------------------------------------------------------------
def synthetic(
    folder: Path,
    seed: int,
    queries: int = 12,
    docs: int = 15,
    judged: float = 0.8,
    extra: bool = True,
    subtopics: int = 0,
) -> tuple[Path, Path]:
    """A seeded tied run (five score levels, ``docs // 2`` to ``docs`` documents a query) and graded
    qrels (0-3): a share ``judged`` of the retrieved documents judged, and with ``extra`` up to two
    relevant documents a query that the run does not retrieve.  With ``subtopics``, subtopic qrels
    (``qid subtopic docid grade``): each judged document judged for one to ``subtopics`` of them."""
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for q in range(queries):
        qid = f"q{q:02d}"
        n = int(rng.integers(docs // 2, docs + 1))
        scores = rng.integers(0, 5, n) * 0.25
        grades = rng.integers(0, 4, n)
        judge = [f"d{d:02d}" for d in range(n) if judged >= 1 or rng.random() < judged]
        for d in range(n):
            run.append(f"{qid} Q0 d{d:02d} {d + 1} {scores[d]:.2f} syn\n")
        extras = [f"x{e}" for e in range(int(rng.integers(0, 3)) if extra else 0)]
        for doc in judge + extras:
            grade = int(grades[int(doc[1:])]) if doc[0] == "d" else int(rng.integers(1, 4))
            if not subtopics:
                qrels.append(f"{qid} 0 {doc} {grade}\n")
                continue
            for t in rng.choice(subtopics, int(rng.integers(1, subtopics + 1)), replace=False):
                qrels.append(f"{qid} {t + 1} {doc} {int(rng.integers(0, 3))}\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").write_text("".join(qrels))
    (folder / "run").write_text("".join(run))
    return folder / "qrels", folder / "run"


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """name -> (qrels, run): ``tiny`` (synthetic, partly judged), ``labelled`` (synthetic, every
    retrieved document judged and nothing else: the tensor path's data), ``askubuntu`` (the shipped
    test pair, binary, every candidate judged); the subtopic qrels beside them, ``subtopics``
    (tests/data/diversity: two queries) and ``subtopics-large`` (synthetic, three subtopics)."""
    root = tmp_path_factory.mktemp("common")
    return {
        "tiny": synthetic(root / "tiny", seed=48),
        "labelled": synthetic(root / "labelled", seed=49, judged=1.0, extra=False),
        "askubuntu": (DATA / "askubuntu" / "test.qrels", DATA / "askubuntu" / "test.bm25.run"),
        "subtopics": (DATA / "diversity" / "qrels.txt", DATA / "diversity" / "run-ties.txt"),
        "subtopics-large": synthetic(root / "subtopics", seed=50, queries=8, subtopics=3),
    }


#: the subtopic qrels beside each plain pair (for the families that read them)
SUBTOPICS = {"tiny": "subtopics", "askubuntu": "subtopics-large"}


def pair(data, m: Measure, plain: str = "tiny") -> tuple[Path, Path]:
    """The (qrels, run) ``m`` is evaluated on: what its family declares it reads (``plain``, or the
    subtopic qrels beside it)."""
    return data[SUBTOPICS[plain] if m.needs_subtopics else plain]


def rows(result) -> dict[tuple[str, str], dict[str, Any]]:
    """(query, measure) -> the record of a result (per query and ``all``)."""
    return {(r["query"], r["measure"]): r for r in result.records()}


def in_memory(data, measures: list[Measure], plain: str, **options) -> dict:
    return rows(tierank.evaluate(*pair(data, measures[0], plain), measures, **options))


# -- the name round trip ----------------------------------------------------------------------------
def test_every_registered_family_has_an_instance():
    assert set(INSTANCES) == {cls.family for cls in REGISTRY.values()}
    assert all(isinstance(m, Measure) for ms in INSTANCES.values() for m in ms)
    # a parameter moved off its default wherever the schema gives another value
    moved = [ms for ms in INSTANCES.values() if len(ms) == 2]
    assert len(moved) >= len(INSTANCES) - 5, [f for f, ms in INSTANCES.items() if len(ms) == 1]


@pytest.mark.parametrize("m", EVERY)
def test_the_canonical_name_parses_back(m):
    assert parse_measure(str(m)) == m
    assert str(parse_measure(str(m))) == str(m)
    assert parse_measure(repr(m)[len("Measure('") : -2]) == m


# -- in memory == streamed --------------------------------------------------------------------------
def _streamed_cases(data, measures: list[Measure], plain: str) -> tuple[dict, dict]:
    """In memory and streamed (two workers, small blocks) records of the measures that stream."""
    ms = [m for m in measures if streams(m)]
    qrels, run = pair(data, ms[0], plain)
    mem = rows(tierank.evaluate(qrels, run, ms))
    batches: list[tuple[int, int]] = []
    st = rows(
        evaluate_stream(
            qrels,
            run,
            ms,
            jobs=2,
            block_bytes=block_bytes(run),
            progress=lambda lines, queries: batches.append((lines, queries)),
        )
    )
    assert len(batches) > 1, f"{run} streamed in one batch"
    return mem, st


@pytest.fixture(scope="session")
def streamed_first(data) -> dict[bool, tuple[dict, dict]]:
    """needs_subtopics -> (in memory, streamed) of every family's first instance."""
    firsts = [ms[0] for ms in INSTANCES.values()]
    return {
        sub: _streamed_cases(data, [m for m in firsts if m.needs_subtopics == sub], "tiny")
        for sub in (False, True)
    }


@pytest.fixture(scope="session")
def streamed_rest(data) -> dict[tuple[bool, str], tuple[dict, dict]]:
    every = [m for ms in INSTANCES.values() for m in ms]
    out = {}
    for plain in ("tiny", "askubuntu"):
        for sub in (False, True):
            out[sub, plain] = _streamed_cases(
                data, [m for m in every if m.needs_subtopics == sub], plain
            )
    return out


def _same_records(mem: dict, st: dict, m: Measure) -> int:
    keys = [k for k in mem if k[1] == str(m)]
    assert keys, f"{m}: no record in memory"
    for k in keys:
        assert st.get(k) == mem[k], (k, mem[k], st.get(k))
    assert [k for k in st if k[1] == str(m)] == keys
    return len(keys)


def _refused_streaming(data, m: Measure) -> None:
    qrels, run = pair(data, m)
    with pytest.raises(TierankInputError, match="evaluate it in memory"):
        evaluate_stream(qrels, run, [m], jobs=2, block_bytes=block_bytes(run))


@pytest.mark.parametrize("m", FIRST)
def test_streamed_equals_in_memory(m, data, streamed_first):
    if not streams(m):
        _refused_streaming(data, m)
        return
    mem, st = streamed_first[m.needs_subtopics]
    assert _same_records(mem, st, m) > 1


@full
@pytest.mark.parametrize(
    "m, plain",
    [pytest.param(p.values[0], plain, id=f"{p.id}-{plain}") for plain in SUBTOPICS for p in EVERY],
)
def test_streamed_equals_in_memory_for_every_instance(m, plain, data, streamed_rest):
    if not streams(m):
        _refused_streaming(data, m)
        return
    mem, st = streamed_rest[m.needs_subtopics, plain]
    assert _same_records(mem, st, m) > 1


@full
@pytest.mark.parametrize("sub", [False, True], ids=["plain", "subtopics"])
def test_the_command_line_streams_the_numbers_of_memory(sub, data):
    """``tierank eval -j 2 --block-bytes`` prints, as jsonl, the records of tierank.evaluate."""
    ms = [m for ms in INSTANCES.values() for m in ms if m.needs_subtopics == sub and streams(m)]
    qrels, run = pair(data, ms[0])
    args = ["eval", qrels, run, "--format", "jsonl", "-q", "-j", "2"]
    p = invoke(
        *args, "--block-bytes", str(block_bytes(run)), *[a for m in ms for a in ("-m", str(m))]
    )
    got = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    mem = rows(tierank.evaluate(qrels, run, ms))
    assert len(got) == len(mem)
    for r in got:
        want = mem[r["query"], r["measure"]]
        for key in STATS:
            assert r[key] == want[key] or (r[key] is None and want[key] is None), (r, want)


# -- the tensor path --------------------------------------------------------------------------------
def _tensor_layout(qrels: Path, run: Path):
    """The run as padded [queries, candidates] scores, labels and mask, candidates in docno order
    (``tie_break="reverse"`` is then trec_eval's docno-descending order inside ties)."""
    grades: dict[tuple[str, str], int] = {}
    for line in qrels.read_text().splitlines():
        q, _, d, g = line.split()
        grades[q, d] = int(g)
    docs: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        f = line.split()
        docs.setdefault(f[0], {})[f[2]] = float(f[4])
    qids = sorted(docs)
    width = max(len(v) for v in docs.values())
    scores = np.zeros((len(qids), width))
    labels = np.zeros((len(qids), width), dtype=np.int64)
    mask = np.zeros((len(qids), width), dtype=bool)
    for i, q in enumerate(qids):
        for j, d in enumerate(sorted(docs[q])):
            scores[i, j], labels[i, j], mask[i, j] = docs[q][d], grades[q, d], True
    assert set(grades) == {(q, d) for q in docs for d in docs[q]}  # every label is in the arrays
    return qids, scores, labels, mask


def on_tensors(m: Measure) -> bool:
    return m.family in tensor.FAMILIES and m.tensor_refusal() is None


@full
@pytest.mark.parametrize("plain", ["labelled", "askubuntu"])
@pytest.mark.parametrize("m", PLAIN)
def test_the_tensor_path_equals_in_memory(m, plain, data):
    qrels, run = data[plain]
    qids, scores, labels, mask = _tensor_layout(qrels, run)
    if not on_tensors(m):
        with pytest.raises(TierankInputError):
            tensor.evaluate(scores, labels, [m], mask=mask)
        return
    got = tensor.evaluate(scores, labels, [m], mask=mask, tie_break="reverse")[str(m)]
    want = in_memory(data, [m], plain)
    for i, q in enumerate(qids):
        for key in STATS:
            assert abs(float(getattr(got, key)[i]) - want[q, str(m)][key]) <= 1e-12, (q, key)
    summary = got.summary()
    for key in STATS:
        assert abs(summary[key] - want["all", str(m)][key]) <= 1e-12, key


# -- the ir_measures provider -----------------------------------------------------------------------
def _ir_measures_name(m: Measure) -> str | None:
    """ir_measures' string for ``m`` (its declared name for the family), or None."""
    name = type(m).about().ir_measures
    return None if name is None else name + str(m)[len(m.family) :]


@full
@pytest.mark.parametrize("m", NAMED_BY_IR_MEASURES)
def test_the_ir_measures_provider_gives_the_values_of_memory(m, data):
    irm = pytest.importorskip("ir_measures", reason="pip install 'tierank[irm]'")
    from tierank.integrations.ir_measures import TierankProvider

    name = _ir_measures_name(m)
    assert name is not None
    try:
        measure = irm.parse_measure(name)
        unknown = set(measure.params) - set(measure.SUPPORTED_PARAMS)
    except Exception as e:  # ir_measures does not take this parameter
        pytest.skip(f"ir_measures does not read {name}: {e}")
    if unknown:
        pytest.skip(f"ir_measures' {m.family} has no parameter {', '.join(sorted(unknown))}")
    qrels, run = pair(data, m)
    want = in_memory(data, [m], "tiny")
    for stat in ("expected",):
        p = TierankProvider(stat)
        got = {(r.query_id, str(m)): r.value for r in p.iter_calc([measure], str(qrels), str(run))}
        assert set(got) == {k for k in want if k[0] != "all"}
        for k, v in got.items():
            assert abs(v - want[k][stat]) <= 1e-12, (stat, k, v, want[k][stat])
        agg = p.calc_aggregate([measure], str(qrels), str(run))[measure]
        assert abs(agg - want["all", str(m)][stat]) <= 1e-12, (stat, agg)


# -- compare's system value -------------------------------------------------------------------------
@full
@pytest.mark.parametrize("m", FIRST)
def test_compares_system_values_are_those_of_memory(m, data, tmp_path):
    from tierank.analysis.compare import compare

    qrels, run = pair(data, m)
    other = tmp_path / "other.run"
    other.write_text("".join(_reversed_ties(run.read_text().splitlines(keepends=True))))
    if getattr(m, "string_valued", False):
        with pytest.raises(TierankInputError):
            compare({"a": run, "b": other}, qrels, m)
        return
    want = in_memory(data, [m], "tiny")["all", str(m)]
    cmp = compare({"a": run, "b": other}, qrels, m)
    assert {s.name for s in cmp.systems} == {"a", "b"}
    for s in cmp.systems:
        for key in STATS:  # trec_eval's tie-break (docno) does not see the reversal either
            assert abs(getattr(s, key) - want[key]) <= 1e-12, (s.name, key)


# -- invariance -------------------------------------------------------------------------------------
def _shuffled(lines: list[str], seed: int) -> list[str]:
    out = list(lines)
    random.Random(seed).shuffle(out)
    return out


def _reversed_ties(lines: list[str]) -> Iterator[str]:
    """The lines with the documents of each (query, score) group in reverse order, queries and
    groups where they were."""
    groups: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        f = line.split()
        groups.setdefault((f[0], f[4]), []).append(line)
    for group in groups.values():
        yield from reversed(group)


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-12)


def _same_statistics(a: dict, b: dict, keys: tuple[str, ...]) -> None:
    """Two records agree on ``keys`` to 1e-12; where either is a labelled sampled estimate
    (``method == "sampled"``: random tie orderings drawn from the documents in input order) the
    expected values agree within five standard errors of their difference, and the other
    statistics, estimated or attained in the draws, are not compared."""
    if "sampled" in (a.get("method"), b.get("method")):
        assert a["se"] is not None and b["se"] is not None, (a, b)
        tol = 5 * math.hypot(a["se"], b["se"]) + 1e-12
        assert abs(a["expected"] - b["expected"]) <= tol, (a, b)
        return
    for key in keys:
        assert _close(a[key], b[key]), (key, a, b)


@full
@pytest.mark.parametrize("m", EVERY)
def test_the_order_of_lines_and_queries_changes_nothing(m, data, tmp_path):
    qrels, run = pair(data, m)
    shuffled = tmp_path / "shuffled.run"
    shuffled.write_text("".join(_shuffled(run.read_text().splitlines(keepends=True), seed=48)))
    a = rows(tierank.evaluate(qrels, run, [m]))
    b = rows(tierank.evaluate(qrels, shuffled, [m]))
    assert set(a) == set(b)
    for k in a:
        _same_statistics(a[k], b[k], STATS)


@full
@pytest.mark.parametrize("m", EVERY)
def test_the_order_inside_ties_changes_only_the_oblivious_value(m, data, tmp_path):
    """Under ``tie_break="input"`` the oblivious value may follow the reversed order; the expected
    value, min, max and std over the orderings may not."""
    qrels, run = pair(data, m)
    rev = tmp_path / "reversed.run"
    rev.write_text("".join(_reversed_ties(run.read_text().splitlines(keepends=True))))
    a = rows(tierank.evaluate(qrels, run, [m], tie_break="input"))
    b = rows(tierank.evaluate(qrels, rev, [m], tie_break="input"))
    assert set(a) == set(b)
    for k in a:
        _same_statistics(a[k], b[k], TIE_FREE_STATS)


@full
def test_the_reversal_inside_ties_moves_oblivious_values(data, tmp_path):
    """The transformation of the test above is no no-op: under ``tie_break="input"`` it changes
    oblivious values."""
    ms = [ms[0] for ms in INSTANCES.values() if not ms[0].needs_subtopics]
    qrels, run = data["tiny"]
    rev = tmp_path / "reversed.run"
    rev.write_text("".join(_reversed_ties(run.read_text().splitlines(keepends=True))))
    a = rows(tierank.evaluate(qrels, run, ms, tie_break="input"))
    b = rows(tierank.evaluate(qrels, rev, ms, tie_break="input"))
    moved = {k[1] for k in a if not _close(a[k]["oblivious"], b[k]["oblivious"])}
    assert {"AP", "nDCG", "RR", "P@5"} <= moved, moved
