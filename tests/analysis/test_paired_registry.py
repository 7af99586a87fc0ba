"""Statistical tests are data: a new paired test is one module and one registration, and
`compare`, the CLI choices and the reports read the registry."""

from __future__ import annotations

import io
import sys
import types

import numpy as np
import pytest
import scipy.stats as st
from rich.console import Console

from helpers import invoke
from tierank.analysis import inference
from tierank.analysis.compare import compare, records
from tierank.analysis.paired import REGISTRY, PairedTest, register
from tierank.analysis.paired.base import Outcome
from tierank.report.terminal import compare_tables


def _sign_test_module() -> types.ModuleType:
    """A sign test, written against the documented contract only (``run(pairs) -> Outcome``)."""
    mod = types.ModuleType("tierank.analysis.paired.signtest")

    def run(pairs):
        P = pairs.D.shape[1]
        pos = (pairs.D > pairs.tol).sum(axis=0)
        neg = (pairs.D < -pairs.tol).sum(axis=0)
        p = np.array(
            [st.binomtest(int(a), int(a + b)).pvalue if a + b else 1.0 for a, b in zip(pos, neg)]
        )
        return Outcome(statistic=(pos - neg).astype(float), p=p, method=["exact"] * P)

    mod.run = run
    return mod


@pytest.fixture
def sign_test(monkeypatch):
    monkeypatch.setitem(sys.modules, "tierank.analysis.paired.signtest", _sign_test_module())
    test = register(PairedTest("sign", "sign tests", "S", False, "signtest", "the sign test"))
    yield test
    del REGISTRY["sign"]


def test_a_new_test_is_one_module_and_one_registration(sign_test):
    X = np.array([[0.9, 0.1], [0.8, 0.3], [0.7, 0.6], [0.6, 0.2], [0.5, 0.55], [0.4, 0.1]])
    (pt,) = inference.paired_tests(X, ["A", "B"], test="sign")
    assert (
        pt.p == pytest.approx(st.binomtest(5, 6).pvalue)
        and pt.statistic == 4.0
        and pt.test_used == "sign"
    )
    runs = {
        "A": {f"q{i}": {"x": 2.0, "y": 1.0} for i in range(6)},
        "B": {f"q{i}": {"y": 2.0, "x": 1.0} if i % 3 else {"x": 2.0, "y": 1.0} for i in range(6)},
    }
    qrels = {f"q{i}": {"x": 1} for i in range(6)}
    cmp = compare(runs, qrels, "RR", test="sign")
    assert (
        cmp.pairs[0].test == "sign" and records(cmp)["inference"]["test"]["display"] == "sign tests"
    )
    console = Console(width=200, record=True, file=io.StringIO())
    for table in compare_tables(cmp):
        console.print(table)
    out = console.export_text()
    assert "paired sign tests" in out and " S " in out


def test_the_command_line_offers_the_registered_tests():
    out = " ".join(invoke("compare", "--help").stdout.split())
    for name, test in REGISTRY.items():
        assert name in out and test.help.split()[0] in out


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="already registered"):
        register(PairedTest("t", "other", None, False, "student", "another t"))
    assert register(REGISTRY["t"]) is REGISTRY["t"]
