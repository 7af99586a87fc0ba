"""benchmarks/ties_in_frameworks.py: the README's table of one tied example in every framework.

tierank's row is checked against brute force over all 5! orderings (tests/reference.py); every
framework's reported value must be one that some ordering gives (inside [min, max]); and the
specific tie-break each framework uses, which the README states, is pinned down (a framework that
changes how it breaks ties fails here).  A framework that is not installed is skipped.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import pytest

from reference import value

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ties_in_frameworks.py"


def _load():
    spec = importlib.util.spec_from_file_location("ties_in_frameworks", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


tif = _load()
EXAMPLES = {"d2": tif.example("d2"), "d3": tif.example("d3")}


def _brute(ex) -> dict[str, list[float]]:
    """Every measure over every ordering of the tie (all documents share one score)."""
    grades = ex.qrels()[ex.qid]
    out = {m: [] for m in tif.MEASURES}
    for order in itertools.permutations(ex.docs):
        g = [grades[d] for d in order]
        for m in tif.MEASURES:
            out[m].append(value(m, g, nrel=len(ex.relevant), ideal=list(grades.values())))
    return out


@pytest.fixture(scope="module")
def computed():
    """Each example's framework rows (one call of every framework) and tierank's stats."""
    return {
        k: ({(r.tool.split()[0], r.how): r for r in tif.rows(ex)}, tif.tierank_stats(ex))
        for k, ex in EXAMPLES.items()
    }


def _cells(computed, key, tool, how_start):
    rows, _ = computed[key]
    (row,) = [r for (t, how), r in rows.items() if t == tool and how.startswith(how_start)]
    if any(c == "not installed" for c in row.cells.values()):
        extra = {
            "ranx": "ranx",
            "sentence-transformers": "st",
            "MTEB": "mteb",
            "ir_measures": "irm",
            "pyterrier": "pyterrier",
        }.get(tool, tool)
        pytest.skip(f'{tool} is not installed: pip install -e ".[{extra}]"')
    assert not any(isinstance(c, str) for c in row.cells.values()), row.cells
    return row.cells


def _rank(ex, order_key, reverse) -> int:
    """1-based rank of the relevant document when the tie is broken by ``order_key``."""
    ranked = sorted(ex.docs, key=order_key, reverse=reverse)
    return ranked.index(ex.relevant[0]) + 1


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_tierank_row_is_brute_force_over_all_orderings(key, computed):
    ex = EXAMPLES[key]
    assert len(ex.docs) == 5 and len(set(ex.run()[ex.qid].values())) == 1  # one tie of five
    _, stats = computed[key]
    brute = _brute(ex)
    assert all(len(v) == math.factorial(5) for v in brute.values())
    for m in tif.MEASURES:
        v = brute[m]
        assert stats[m]["expected"] == pytest.approx(sum(v) / len(v), abs=1e-12), m
        assert stats[m]["min"] == pytest.approx(min(v), abs=1e-12) and stats[m][
            "max"
        ] == pytest.approx(max(v))
        assert stats[m]["min"] < stats[m]["expected"] < stats[m]["max"]
    # by hand: E[RR] = H_5 / 5 = 0.4567; E[nDCG@10] = mean of 1/log2(i + 1), i = 1..5
    assert stats["RR@10"]["expected"] == pytest.approx(sum(1 / i for i in range(1, 6)) / 5)
    assert stats["nDCG@10"]["expected"] == pytest.approx(
        sum(1 / math.log2(i + 1) for i in range(1, 6)) / 5
    )
    # the oblivious value: trec_eval's tie-break, docno descending
    r = _rank(ex, str, reverse=True)
    assert stats["RR@10"]["oblivious"] == pytest.approx(1 / r)


FRAMEWORK_ROWS = [
    ("pytrec_eval", "`RelevanceEvaluator"),
    ("ranx", "`evaluate(Qrels"),
    ("ranx", "`evaluate(qrels"),
    ("ir_measures", "`calc_aggregate"),
    ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `pos"),
    ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `documents` in"),
    ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `documents`, relevant"),
    ("sentence-transformers", "`InformationRetrievalEvaluator"),
    ("MTEB", "`calculate_retrieval_scores"),
]


@pytest.mark.parametrize("key", sorted(EXAMPLES))
@pytest.mark.parametrize(
    "tool, how", FRAMEWORK_ROWS, ids=lambda x: x if "`" not in x else x.strip("`")[:32]
)
def test_every_framework_reports_a_value_some_ordering_gives(key, tool, how, computed):
    cells = _cells(computed, key, tool, how)
    _, stats = computed[key]
    brute = _brute(EXAMPLES[key])
    for m in tif.MEASURES:
        assert stats[m]["min"] - 1e-5 <= cells[m] <= stats[m]["max"] + 1e-5, (tool, how, m)
        if not (tool == "sentence-transformers" and m != "RR@10" and "Cross" in how):
            # one ordering's value (sklearn's tie-averaged nDCG and one-threshold AP are not)
            assert min(abs(cells[m] - v) for v in brute[m]) < 1e-5, (tool, how, m)


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_each_framework_breaks_the_tie_as_the_readme_says(key, computed):
    ex = EXAMPLES[key]
    _, stats = computed[key]
    desc = 1 / _rank(ex, str, reverse=True)  # docno descending (trec_eval)
    asc = 1 / _rank(ex, str, reverse=False)  # docno ascending
    first, last = 1.0, 1 / len(ex.docs)  # the relevant document is listed first in the input
    rr = lambda tool, how: _cells(computed, key, tool, how)["RR@10"]  # noqa: E731
    checks = {
        ("pytrec_eval", "`RelevanceEvaluator"): desc,
        (
            "MTEB",
            "`calculate_retrieval_scores",
        ): desc,  # (its nDCG and MAP are rounded to 5 decimals, MRR not)
        ("ranx", "`evaluate(Qrels"): first,  # a Run keeps the input order
        ("ranx", "`evaluate(qrels"): last,  # a dict: the input order reversed
        ("ir_measures", "`calc_aggregate"): asc,  # RR@10 from the msmarco provider
        ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `pos"): last,
        ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `documents` in"): last,
        ("sentence-transformers", "`CrossEncoderRerankingEvaluator`, `documents`, relevant"): first,
        ("sentence-transformers", "`InformationRetrievalEvaluator"): asc,
    }
    for (tool, how), want in checks.items():
        try:
            got = rr(tool, how)
        except pytest.skip.Exception:
            continue
        assert got == pytest.approx(want, abs=1e-12), (tool, how)
    try:  # ir_measures: AP from pytrec_eval (descending) in the same call as RR from msmarco (ascending)
        assert _cells(computed, key, "ir_measures", "`calc_aggregate")["AP"] == pytest.approx(desc)
    except pytest.skip.Exception:
        pass
    try:  # the cross-encoder evaluator: sklearn's nDCG averages the tie (= E), its AP is the whole tie's precision
        ce = _cells(
            computed, key, "sentence-transformers", "`CrossEncoderRerankingEvaluator`, `pos"
        )
        assert ce["nDCG@10"] == pytest.approx(stats["nDCG@10"]["expected"], abs=1e-6)
        assert ce["AP"] == pytest.approx(1 / len(ex.docs))
    except pytest.skip.Exception:
        pass


def test_table_has_a_row_per_call_and_tierank_last(computed):
    text = tif.table(EXAMPLES["d2"], framework_rows=list(computed["d2"][0].values()))
    lines = text.strip().splitlines()
    assert lines[0].startswith("| tool | how it is called | tie order | RR@10 | nDCG@10 | AP |")
    assert len(lines) == 2 + len(tif.FRAMEWORKS) + 2
    assert "error" not in text
    assert lines[-1].count("**[") == 3 and "[0.2000, 0.4567, 1.0000]" in lines[-1]
    assert "[0.3869, 0.5897, 1.0000]" in lines[-1]


def test_a_missing_framework_fills_its_cells_and_the_others_go_on(monkeypatch):
    real = tif._need

    def fake_need(module):
        if module == "ranx":
            raise tif._NotInstalled(module)
        return real(module)

    monkeypatch.setattr(tif, "_need", fake_need)
    assert tif._call(tif.ranx_run_values, EXAMPLES["d2"]) == {
        m: "not installed" for m in tif.MEASURES
    }
    got = tif._call(lambda ex: (_ for _ in ()).throw(AttributeError("gone")), EXAMPLES["d2"])
    assert got == {m: "error: AttributeError" for m in tif.MEASURES}
    if importlib.util.find_spec("pytrec_eval"):
        assert tif._call(tif.pytrec_eval_values, EXAMPLES["d2"])["RR@10"] == pytest.approx(0.25)
