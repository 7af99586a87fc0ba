"""A new measure family is one module: written into ``tierank.measures``' search path as a
contributor would write it (a `Linear` family declaring its position weights and normalizer, with
``@register``), it is found by name, evaluated with exact statistics over tie orderings (checked
here against every ordering), listed by the registry and ``tierank measures``, evaluated by
``tierank eval -m``, on tensors (`tierank.tensor`, from its declared ``tensor_kernel``), by the
common suite's generic checks, and described in the generated measure reference; no other file names
it.
"""

from __future__ import annotations

import importlib.util
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

import tierank
import tierank.measures
from helpers import invoke
from realdata import DATA
from reference import orderings
from tierank import tensor
from tierank.measures import REGISTRY, describe, parse_measure, supported

#: the contributor's module, as it would be saved under ``src/tierank/measures/`` (here as
#: ``discp_contrib.py``, with a family name of its own, so that a real ``DiscP`` never collides with it)
MODULE = '''\
"""Discounted precision at k: the relevant documents of the top k, each discounted by its rank as
DCG discounts it, over k."""

from __future__ import annotations

from .base import FamilyNames, register
from .linear import REL, Linear


@register
class DiscPForTest(Linear):
    """Discounted precision at k: sum over the top k of rel_i / log2(i + 1), divided by k."""

    family = "DiscPForTest"
    description = "discounted precision at k: sum_{i<=k} rel_i / log2(i+1) / k, binary relevance"
    pretty = "discounted precision at k"
    names = FamilyNames(ir_measures=None)  # no other tool has it (the default claims ir_measures')
    schema = (REL,)
    cutoff_required = True
    batch_cutoffs = True  # the weights do not depend on k: one pass for several cutoffs
    tensor_kernel = "linear"

    def position_weights(self, xp, pos):
        return 1.0 / xp.log2(pos + 2.0)

    def normalizer(self, xp, nrel, retrieved):
        return float(self.required_cutoff)
'''
NAME = "discp_contrib"
ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-12


@pytest.fixture
def new_family(tmp_path, monkeypatch):
    """``tierank.measures.discp_contrib`` on the package's search path, the registry told that its
    listing is to be made again (as in a fresh process, where every module is on the path); the
    family and the module removed afterwards."""
    (tmp_path / f"{NAME}.py").write_text(MODULE)
    monkeypatch.setattr(tierank.measures, "__path__", [*tierank.measures.__path__, str(tmp_path)])
    REGISTRY.load_all()  # type: ignore[attr-defined]
    monkeypatch.setattr(REGISTRY, "_all", False)
    yield f"tierank.measures.{NAME}"
    for name in [n for n, cls in dict.items(REGISTRY) if cls.__module__.endswith(NAME)]:
        del REGISTRY[name]
    sys.modules.pop(f"tierank.measures.{NAME}", None)


def discp(grades: list, k: int, level: int = 1) -> float:
    """The definition: sum over the top k of [grade >= level] / log2(rank + 1), over k."""
    return (
        sum(
            1.0 / math.log2(i + 2) for i, g in enumerate(grades[:k]) if g is not None and g >= level
        )
        / k
    )


#: (docid, score, grade or None) per query: ties across the cutoffs, unjudged documents
DOCS = {
    "q0": [("a", 3, 1), ("b", 3, 0), ("c", 3, 2), ("d", 2, None), ("e", 2, 1), ("f", 1, 0)],
    "q1": [("a", 1, 0), ("b", 1, None), ("c", 1, 0), ("d", 1, 3)],
    "q2": [("a", 5, 0), ("b", 4, 0)],
}


def test_a_module_is_found_listed_and_parsed(new_family):
    cls = REGISTRY["DiscPForTest"]
    assert cls.__module__ == new_family and cls.tensor_kernel == "linear"
    assert cls.about().ir_measures is None  # not offered to ir_measures' provider
    assert "DiscPForTest" in supported()
    assert [row for row in describe() if row[0] == "DiscPForTest"] == [
        ("DiscPForTest", f"rel=None ({cls.schema[0].description}); @k required", cls.description)
    ]
    modules = list(dict.fromkeys(c.__module__ for c in REGISTRY.values()))
    assert modules[-1] == new_family  # after the modules of the index
    m = parse_measure("DiscPForTest(rel=2)@5")
    assert (str(m), m.param("rel"), m.cutoff, parse_measure(str(m)) == m) == (
        "DiscPForTest(rel=2)@5",
        2,
        5,
        True,
    )
    with pytest.raises(tierank.errors.TierankInputError, match="DiscPForTest needs a cutoff"):
        parse_measure("DiscPForTest")
    assert "DiscPForTest" in tierank.measures.families()
    assert (
        "DiscPForTest" in tensor.families()
    )  # tierank.tensor.FAMILIES, as made when it is imported


@pytest.mark.parametrize(
    "measure, level", [("DiscPForTest@2", 1), ("DiscPForTest@4", 1), ("DiscPForTest(rel=2)@9", 2)]
)
def test_its_statistics_are_those_of_every_ordering(new_family, measure, level):
    run = {q: {d: float(s) for d, s, _ in docs} for q, docs in DOCS.items()}
    qrels = {q: {d: g for d, _, g in docs if g is not None} for q, docs in DOCS.items()}
    got = {r["query"]: r for r in tierank.evaluate(qrels, run, [measure]).records()}
    k = parse_measure(measure).cutoff
    for q, docs in DOCS.items():
        vals = [discp([g for _, _, g in o], k, level) for o in orderings(docs)]
        want = {
            "expected": statistics.fmean(vals),
            "min": min(vals),
            "max": max(vals),
            "std": statistics.pstdev(vals),
        }
        for stat, v in want.items():
            assert math.isclose(got[q][stat], v, abs_tol=1e-9), (q, stat, got[q][stat], v)
        if want["min"] == want["max"]:
            assert got[q]["std"] == 0.0
        assert got[q]["method"] == "exact"
    assert got["q2"]["std"] == 0.0 and got["q1"]["std"] > 0.0


def test_the_generic_checks_take_it(new_family, tmp_path):
    """The common suite's instances (name round trip, streamed == in memory) and the registry-wide
    brute force over orderings."""
    from measures.test_bruteforce_every_family import _check, family_instances
    from test_common import _streamed_cases, instances, synthetic

    ms = instances(REGISTRY["DiscPForTest"])
    assert [str(m) for m in ms] == ["DiscPForTest@5", "DiscPForTest(rel=2)@5"]
    assert all(parse_measure(str(m)) == m for m in ms)
    brute = family_instances()["DiscPForTest"]  # and a cutoff inside a tie group
    assert [str(m) for m in brute] == [*map(str, ms), "DiscPForTest@2"]
    checked, moved = _check(brute, subtopics=False)
    assert checked == 3 * 4 and moved > 0  # three instances, four queries
    data = {"tiny": synthetic(tmp_path / "tiny", seed=48)}
    mem, streamed = _streamed_cases(data, ms, "tiny")
    keys = [k for k in mem if k[1] in {str(m) for m in ms}]
    assert len(keys) > 2 and all(streamed[k] == mem[k] for k in keys)


def test_tensors_give_the_numbers_of_a_run(new_family, tmp_path):
    from test_common import _tensor_layout, synthetic

    qrels, run = synthetic(tmp_path / "labelled", seed=49, judged=1.0, extra=False)
    qids, scores, labels, mask = _tensor_layout(qrels, run)
    ms = ["DiscPForTest@3", "DiscPForTest(rel=2)@10"]
    got = tensor.evaluate(scores, labels, ms, mask=mask, tie_break="reverse")
    want = {(r["query"], r["measure"]): r for r in tierank.evaluate(qrels, run, ms).records()}
    for m in ms:
        for i, q in enumerate(qids):
            for key in ("oblivious", "expected", "min", "max", "std"):
                assert abs(float(getattr(got[m], key)[i]) - want[q, m][key]) <= TOL, (m, q, key)
    assert np.any(np.asarray(got["DiscPForTest@3"].std) > 0)


def test_the_command_line_lists_and_evaluates_it(new_family):
    listed = invoke("measures").stdout
    assert "DiscPForTest" in listed and "discounted precision at k" in listed
    qrels, run = DATA / "askubuntu" / "test.qrels", DATA / "askubuntu" / "test.bm25.run"
    p = invoke("eval", str(qrels), str(run), "-m", "DiscPForTest@5", "--format", "jsonl", "-q")
    got = [json.loads(line) for line in p.stdout.splitlines()]
    want = tierank.evaluate(qrels, run, ["DiscPForTest@5"]).records()
    assert len(got) == len(want) > 1
    for r, w in zip(got, want):
        assert r["measure"] == "DiscPForTest@5"
        assert all(r[k] == w[k] for k in ("query", "oblivious", "expected", "min", "max", "std"))


def test_the_measure_reference_describes_it(new_family):
    spec = importlib.util.spec_from_file_location("gen_ref", ROOT / "docs" / "gen_ref.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    page = gen.measure_reference()
    assert (
        "| [`DiscPForTest`](#discpfortest) | discounted precision at k | `@k` required | exact | exact |"
        in page
    )
    section = page.split("## `DiscPForTest` {#discpfortest}")[1].split("\n## ")[0]
    assert "| `rel` |" in section and "- name in ir_measures: none" in section
