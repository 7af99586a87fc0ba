"""Streaming decides by the type of a refusal, never by its text: the typed errors keep their messages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tierank
from tierank.errors import (
    EmptyRun,
    NoJudgedDocuments,
    NothingToEvaluate,
    TierankInputError,
    UnknownMeasure,
)
from tierank.processes import alive
from tierank.stream import evaluate_stream

QRELS = {"q1": {"d1": 1}}


def _run(tmp_path, text: str):
    p = tmp_path / "run.trec"
    p.write_text(text)
    return p


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_each_refusal_has_its_type_and_its_message(tmp_path, engine):
    def ev(text, **kw):
        run = _run(tmp_path, text)
        if engine == "memory":
            return tierank.evaluate(QRELS, str(run), ["AP"], **kw)
        return evaluate_stream(QRELS, run, ["AP"], block_bytes=8, **kw)

    with pytest.raises(NothingToEvaluate, match="nothing to evaluate"):
        ev("qx Q0 d1 1 2.0 t\n")
    with pytest.raises(NoJudgedDocuments, match="^--condensed: no document of"):
        ev("q1 Q0 d9 1 2.0 t\n", unjudged="condensed")
    with pytest.raises(EmptyRun, match="empty run: no result lines"):
        ev("# a comment only\n")
    with pytest.raises(TierankInputError, match="expected 6 whitespace-separated columns") as bad:
        ev("q1 Q0 d1 1 2.0 t\nq1 Q0 d2\n")
    assert not isinstance(bad.value, (EmptyRun, NothingToEvaluate, NoJudgedDocuments))


def test_comment_blocks_between_queries_are_not_refused(tmp_path):
    # small blocks: some hold comment lines only (EmptyRun inside a block is skipped, not raised)
    run = _run(tmp_path, "q1 Q0 d1 1 2.0 t\n" + "# comment\n" * 20 + "q2 Q0 d1 1 1.0 t\n")
    got = evaluate_stream({"q1": {"d1": 1}, "q2": {"d1": 1}}, run, ["AP"], block_bytes=8)
    assert got.qids == ["q1", "q2"]


def test_typed_errors_are_input_errors():
    for cls in (NothingToEvaluate, NoJudgedDocuments, EmptyRun, UnknownMeasure):
        assert issubclass(cls, TierankInputError) and issubclass(cls, ValueError)
    from tierank.measures import parse_measure

    with pytest.raises(UnknownMeasure, match="unknown measure 'NoSuchMeasure'"):
        parse_measure("NoSuchMeasure")
    with pytest.raises(
        TierankInputError, match="unknown measure 'ndcg@10'; did you mean 'nDCG@10'"
    ):
        tierank.evaluate(QRELS, {"q1": {"d1": 1.0}}, ["ndcg@10"])


def test_ranx_scores_a_run_without_a_judged_query_as_zeros():
    pytest.importorskip("ranx")
    ranx = pytest.importorskip("tierank.integrations.ranx")
    out = ranx.scores(QRELS, {"qx": {"d1": 1.0}}, ["mrr"])
    assert out["mrr"].tolist() == [0.0]


def test_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: the pid is free (a reused pid in between is a one-in-millions chance)
    assert not alive(child.pid)
    assert alive(os.getpid())
