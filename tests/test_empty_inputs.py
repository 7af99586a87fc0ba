"""Empty inputs, surface by surface: ``tierank.evaluate`` / ``Evaluator`` refuse with one line naming
the input (a mean over no query would say nothing); the ir_measures provider, a stand-in, returns what
ir_measures returns (``tests/integrations/test_ir_measures_stock.py``); the command line refuses with
one line and exit 2."""

from __future__ import annotations

import pandas as pd
import pytest

import tierank
from helpers import invoke

QRELS = {"q": {"a": 1, "b": 0}}
RUN = {"q": {"a": 1.0, "b": 0.5}}


@pytest.mark.parametrize(
    "qrels, run, measures, says",
    [
        (QRELS, {}, ["P@5"], "run: empty run: no rows"),
        (QRELS, {"q": {}}, ["P@5"], "run: empty run: no rows"),
        (QRELS, pd.DataFrame(columns=["query_id", "doc_id", "score"]), ["P@5"], "empty run"),
        ({}, RUN, ["P@5"], "qrels: empty qrels: no rows"),
        ({"q": {}}, RUN, ["P@5"], "qrels: empty qrels: no rows"),
        (QRELS, RUN, [], "no measure given: name one or more"),
        (QRELS, {"x": {"a": 1.0}}, ["P@5"], "no query of run is judged in qrels"),
    ],
    ids=["run", "run-query", "run-frame", "qrels", "qrels-query", "measures", "unjudged"],
)
def test_evaluate_refuses_empty_inputs_in_one_line(qrels, run, measures, says):
    with pytest.raises(tierank.TierankInputError) as caught:
        tierank.evaluate(qrels, run, measures)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)  # what a caller catches for bad arguments


def test_an_evaluator_refuses_an_empty_run_and_still_evaluates_the_next():
    ev = tierank.Evaluator(QRELS, ["P@1"])
    with pytest.raises(tierank.TierankInputError, match="empty run"):
        ev.evaluate({})
    assert ev.evaluate(RUN).aggregate()["expected"][0] == 1.0


@pytest.mark.parametrize(
    "qrels, run, says",
    [
        ("q 0 a 1\n", "", "empty run: no result lines"),
        ("", "q Q0 a 1 1.0 t\n", "empty qrels: no judgment lines"),
    ],
)
def test_the_command_line_refuses_empty_files_in_one_line(tmp_path, qrels, run, says):
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    r = invoke("eval", tmp_path / "qrels", tmp_path / "run", "-m", "P@5", check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and says in r.stderr
