"""``moments=False`` (``Evaluator.evaluate``, ``prepare``): the oblivious value, min and max alone,
bit for bit those of the full evaluation; the families that skip their expectation and variance
leave them NaN, the others compute them as always."""

from __future__ import annotations

import numpy as np
import pytest

from tierank.evaluate import Evaluator
from tierank.measures.names import resolve
from tierank.settings import EvalSettings


def _tied(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(int(rng.integers(3, 30)))]
        run[f"q{q}"] = {d: float(rng.integers(0, 4)) for d in docs}  # few scores: ties
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.6}
        qrels[f"q{q}"]["unretrieved"] = 1
    return qrels, run


@pytest.mark.parametrize("seed,depth", [(0, None), (1, None), (2, None), (0, 5), (3, 7)])
def test_oblivious_and_extremes_bit_identical(seed, depth):
    """(``depth``: trec_eval's ``-M``, whose limit cuts through tie groups: binG, G and ndcg_rel
    enumerate those queries.)"""
    qrels, run = _tied(seed)
    measures = [*resolve(["all_trec"]), *resolve(["nDCG@3", "P@1", "P@2", "AP@5", "R@4"])]
    ev = Evaluator(qrels, measures, EvalSettings(max_depth=depth))
    full, fast = ev.evaluate(run), ev.evaluate(run, moments=False)
    skipped = set()
    for m in ev.measures:
        a, b = full.stats[m], fast.stats[m]
        for stat in ("oblivious", "min", "max"):
            x, y = np.asarray(getattr(a, stat)), np.asarray(getattr(b, stat))
            if x.dtype.kind == "f":
                assert np.array_equal(x, y, equal_nan=True), (m, stat)
            else:
                assert (x == y).all(), (m, stat)
        for stat in ("expected", "var"):
            x, y = np.asarray(getattr(a, stat)), np.asarray(getattr(b, stat))
            if x.dtype.kind != "f":
                continue
            assert (np.isnan(y) | (x == y) | (np.isnan(x) & np.isnan(y))).all(), (m, stat)
            if np.isnan(y).any() and not np.isnan(x).all():
                skipped.add(m.family)
    assert {"AP", "P", "nDCG", "GMAP", "GMBpref", "IPrec", "infAP", "G", "nDCG_rel"} <= skipped


def test_moments_default_on():
    qrels, run = _tied(0)
    res = Evaluator(qrels, ["AP", "GMAP"]).evaluate(run)
    for s in res.stats.values():
        assert not np.isnan(s.expected).any() and not np.isnan(s.var).any()


@pytest.mark.parametrize("seed", [0, 1])
def test_oblivious_alone_bit_identical(seed):
    """``extremes=False`` too (what compat's ``evaluate`` asks): the oblivious value bit for bit;
    AP and the linear families leave min and max NaN where they skip them, the others compute
    them as always."""
    qrels, run = _tied(seed)
    measures = [*resolve(["official"]), *resolve(["nDCG@3", "P@1", "AP@5", "R@4"])]
    ev = Evaluator(qrels, measures)
    full, alone = ev.evaluate(run), ev.evaluate(run, moments=False, extremes=False)
    skipped = set()
    for m in ev.measures:
        a, b = full.stats[m], alone.stats[m]
        x, y = np.asarray(a.oblivious), np.asarray(b.oblivious)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), m
        for stat in ("min", "max"):
            x, y = np.asarray(getattr(a, stat)), np.asarray(getattr(b, stat))
            if x.dtype.kind != "f":
                continue
            assert (np.isnan(y) | (x == y) | (np.isnan(x) & np.isnan(y))).all(), (m, stat)
            if np.isnan(y).all() and not np.isnan(x).all():
                skipped.add(m.family)
    assert {"AP", "P", "nDCG", "R"} <= skipped
