"""tierank.integrations.ir_measures against the installed ir_measures (and PyTerrier, if present)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

ir_measures = pytest.importorskip(
    "ir_measures", reason="ir_measures not installed: pip install 'tierank[irm]'"
)

from ir_measures import AP, RR, P, R, SetP, nDCG  # noqa: E402

import tierank  # noqa: E402
from tierank.integrations.ir_measures import (  # noqa: E402
    TierankProvider,
    provider,
    register,
    tie_aware,
    unregister,
)

# 1 relevant among 5 tied documents: E[RR] = H_5 / 5 = 137/300
TIE_QRELS = {"q1": {"d3": 1}}
TIE_RUN = {"q1": {f"d{i}": 1.0 for i in range(1, 6)}}


def _mixed():
    """Three queries with real ties, graded qrels, one qrels query absent from the run."""
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for i in range(3):
        q = f"q{i}"
        docs = [f"doc{j:02d}" for j in range(12)]
        run[q] = {d: float(rng.integers(0, 4)) for d in docs}  # 4 score levels over 12 docs: ties
        qrels[q] = {d: int(rng.integers(0, 3)) for d in docs[::2]}
    qrels["q_absent"] = {"x": 1}
    return qrels, run


def test_known_tie_case_differs_from_stock_provider():
    assert provider.calc_aggregate([RR], TIE_QRELS, TIE_RUN)[RR] == pytest.approx(
        137 / 300, abs=1e-15
    )
    # pytrec_eval (ir_measures' default for RR) breaks the tie by docno descending: d5, d4, d3
    assert ir_measures.pytrec_eval.calc_aggregate([RR], TIE_QRELS, TIE_RUN)[RR] == pytest.approx(
        1 / 3
    )
    got = {
        s: TierankProvider(s).calc_aggregate([RR], TIE_QRELS, TIE_RUN)[RR]
        for s in ("min", "max", "oblivious")
    }
    assert got == {"min": pytest.approx(0.2), "max": 1.0, "oblivious": pytest.approx(1 / 3)}


def test_per_query_values_equal_tierank_evaluate_for_every_input_type(tmp_path):
    qrels, run = _mixed()
    measures = [nDCG @ 10, RR, AP, P @ 5, R @ 10, AP(rel=2)]
    ref = tierank.evaluate(qrels, run, [str(m) for m in measures])
    run_df = pd.DataFrame(
        [(q, d, s) for q, ds in run.items() for d, s in ds.items()],
        columns=["query_id", "doc_id", "score"],
    )
    qrels_df = pd.DataFrame(
        [(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    run_file = tmp_path / "run.txt"
    run_file.write_text(
        "".join(f"{q} Q0 {d} 0 {s} x\n" for q, ds in run.items() for d, s in ds.items())
    )
    inputs = [
        (qrels, run),
        (qrels_df, run_df),
        (
            list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter()),
            ir_measures.read_trec_run(str(run_file)),
        ),
    ]
    for stat, col in (("expected", "expected"), ("min", "min"), ("max", "max"), ("std", "std")):
        want = ref.per_query().set_index(["query", "measure"])[col]
        for q_in, r_in in inputs:
            if not isinstance(r_in, (dict, pd.DataFrame)):
                r_in = ir_measures.read_trec_run(str(run_file))  # a fresh iterator per call
            got = {
                (m.query_id, str(m.measure)): m.value
                for m in TierankProvider(stat).iter_calc(measures, q_in, r_in)
            }
            for (q, name), v in want.items():
                assert got[(q, name)] == pytest.approx(v, abs=1e-12), (stat, q, name)
            # the qrels query absent from the run gets ir_measures' default, as with pytrec_eval
            assert all(got[("q_absent", str(m))] == 0 for m in measures)
    # at least one query really has a range, so the statistics differ
    assert (ref.per_query()["max"] - ref.per_query()["min"]).max() > 0.1


def test_aggregates_follow_ir_measures_conventions():
    qrels, run = _mixed()
    names = ["nDCG@10", "RR", "AP"]
    # ir_measures averages over every qrels query (absent ones 0): tierank's complete=True
    ref = tierank.evaluate(qrels, run, names, complete=True).aggregate().set_index("measure")
    agg = provider.calc_aggregate([nDCG @ 10, RR, AP], qrels, run)
    assert {str(k): v for k, v in agg.items()} == pytest.approx(
        ref["expected"].to_dict(), abs=1e-12
    )
    std = TierankProvider("std").calc_aggregate([nDCG @ 10, RR, AP], qrels, run)
    # the std of the mean over tie orderings, not the mean of per-query stds
    assert {str(k): v for k, v in std.items()} == pytest.approx(ref["std"].to_dict(), abs=1e-12)
    pq = tierank.evaluate(qrels, run, ["RR"]).per_query()
    assert std[RR] < pq["std"].sum() / 4


def test_equals_pytrec_eval_without_ties():
    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(0, 20, 2)} for i in range(4)}
    run = {q: {f"d{j}": float(v) for j, v in enumerate(rng.permutation(20))} for q in qrels}
    measures = [nDCG @ 10, RR, AP, P @ 5, R @ 10, AP(rel=2), P(rel=2) @ 5]
    ours = provider.calc_aggregate(measures, qrels, run)
    stock = ir_measures.pytrec_eval.calc_aggregate(measures, qrels, run)
    for m in measures:
        assert ours[m] == pytest.approx(stock[m], abs=1e-12), m


def test_registration_is_undone_and_judged_only_is_tie_aware():
    before = list(ir_measures.DefaultPipeline.providers)
    qrels, run = _mixed()
    judged = P(judged_only=True) @ 5  # precision over the judged documents only: tierank's too
    stock = ir_measures.calc_aggregate([RR, judged], qrels, run)
    with tie_aware():
        assert isinstance(ir_measures.DefaultPipeline.providers[0], TierankProvider)
        got = ir_measures.calc_aggregate([RR, judged], qrels, run)
    assert (
        ir_measures.DefaultPipeline.providers == before
        and "tierank" not in ir_measures.providers.registry
    )
    ref = tierank.evaluate(qrels, run, ["RR"], complete=True).aggregate()["expected"][0]
    assert got[RR] == pytest.approx(ref, abs=1e-12) and not math.isclose(got[RR], stock[RR])
    ref_j = tierank.evaluate(qrels, run, ["P@5"], complete=True, judged_only=True).aggregate()
    assert got[judged] == pytest.approx(ref_j["expected"][0], abs=1e-12)
    assert provider.supports(judged) and provider.supports(AP(rel=2))
    p = register(TierankProvider("max"))
    try:
        assert ir_measures.calc_aggregate([RR], TIE_QRELS, TIE_RUN)[RR] == 1.0
        assert ir_measures.providers.registry["tierank"] is p
    finally:
        unregister()
    assert ir_measures.DefaultPipeline.providers == before


def test_bad_input_is_a_tierank_error():
    with pytest.raises(tierank.TierankInputError, match="statistic"):
        TierankProvider("median")
    with pytest.raises(tierank.TierankInputError, match="not a number"):
        provider.calc_aggregate([RR], TIE_QRELS, {"q1": {"d1": "high"}})


def test_empty_run_and_unjudged_run_score_defaults():
    assert provider.calc_aggregate([RR], TIE_QRELS, {})[RR] == 0
    assert provider.calc_aggregate([RR], TIE_QRELS, {"other": {"d1": 1.0}})[RR] == 0


def test_pyterrier_experiment_reports_tie_aware_values():
    pt = pytest.importorskip(
        "pyterrier", reason="python-terrier not installed: pip install 'tierank[pyterrier]'"
    )
    res = pd.DataFrame(
        {
            "qid": ["q1"] * 5 + ["q2"] * 3,
            "docno": [f"d{i}" for i in range(1, 6)] + ["a", "b", "c"],
            "score": [1.0] * 5 + [3.0, 2.0, 2.0],
        }
    )

    class Fixed(pt.Transformer):  # no index, no Java: a fixed result list with ties
        def transform(self, topics):
            return res[res.qid.isin(topics.qid)].copy()

    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["x", "y"]})
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docno": ["d3", "b"], "label": [1, 1]})
    stock = pt.Experiment([Fixed()], topics, qrels, eval_metrics=[RR, nDCG @ 10], names=["fixed"])
    with tie_aware():
        ours = pt.Experiment(
            [Fixed()], topics, qrels, eval_metrics=[RR, nDCG @ 10], names=["fixed"]
        )
    ref = (
        tierank.evaluate(
            {"q1": {"d3": 1}, "q2": {"b": 1}},
            {"q1": {f"d{i}": 1.0 for i in range(1, 6)}, "q2": {"a": 3.0, "b": 2.0, "c": 2.0}},
            ["RR", "nDCG@10"],
        )
        .aggregate()
        .set_index("measure")
    )
    assert ours["RR"][0] == pytest.approx((137 / 300 + 5 / 12) / 2, abs=1e-12)
    assert ours["RR"][0] == pytest.approx(ref["expected"]["RR"], abs=1e-12)
    assert ours["nDCG@10"][0] == pytest.approx(ref["expected"]["nDCG@10"], abs=1e-12)
    assert stock["RR"][0] == pytest.approx(1 / 3)  # pytrec_eval: d5, d4, d3 and a, c, b


def test_ir_measures_cwl_accuracy_and_compat_families_are_answered_tie_aware():
    """The provider answers ir_measures' INST, INSQ, SDCG, NERR8-11, Accuracy and Compat with tierank's values."""
    from ir_measures import INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, Accuracy, Compat

    qrels, run = _mixed()
    measures = [
        INST(max_rel=2),
        INSQ(max_rel=2),
        SDCG(max_rel=2) @ 5,
        NERR8(max_rel=2) @ 5,
        NERR9(max_rel=2) @ 5,
        NERR10(max_rel=2),
        NERR11(max_rel=2),
        Accuracy,
        Compat(p=0.8),
    ]
    assert all(provider.supports(m) for m in measures)
    ref = (
        tierank.evaluate(qrels, run, [str(m) for m in measures])
        .per_query()
        .set_index(["query", "measure"])
    )
    got = {(x.query_id, str(x.measure)): x.value for x in provider.iter_calc(measures, qrels, run)}
    for (q, name), v in ref["expected"].items():
        assert got[(q, name)] == pytest.approx(v, abs=1e-12), (q, name)
    assert (ref["max"] - ref["min"]).max() > 0.05


def test_set_relative_p_is_answered_as_set_rel_p():
    """ir_measures' ``SetP(relative=True)`` (trec_eval's set_relative_P) is tierank's ``SetRelP``: pytrec_eval's
    value on a tie-free run, tierank's expected value over tie orderings on a tied one."""
    names = {SetP(relative=True): "SetRelP", SetP(relative=True, rel=2): "SetRelP(rel=2)"}
    measures = list(names)
    assert all(provider.supports(m) for m in measures) and provider.supports(
        SetP(relative=True, judged_only=False)
    )
    assert provider.supports(
        SetP(relative=True, judged_only=True)
    )  # SetRelP with unjudged documents removed first (tierank's judged_only setting)
    qrels, run = _mixed()
    free = {q: {d: float(i) + 0.5 for i, d in enumerate(docs)} for q, docs in run.items()}
    free["q0"] = dict(
        list(free["q0"].items())[:2]
    )  # fewer retrieved than relevant: min(|ret|, N+) = |ret|
    stock = {
        (x.query_id, x.measure): x.value
        for x in ir_measures.pytrec_eval.iter_calc(measures, qrels, free)
    }
    got = {(x.query_id, x.measure): x.value for x in provider.iter_calc(measures, qrels, free)}
    assert got.keys() == stock.keys() and len(got) == 8  # 4 qrels queries (one not in the run: 0)
    for key, v in stock.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key
    assert len(set(stock.values())) > 2
    ref = (
        tierank.evaluate(qrels, run, ["SetRelP", "SetRelP(rel=2)"], complete=True)
        .per_query()
        .set_index(["query", "measure"])
    )
    tied = {(x.query_id, x.measure): x.value for x in provider.iter_calc(measures, qrels, run)}
    assert len(tied) == 8
    for (q, m), v in tied.items():
        assert v == pytest.approx(ref["expected"][(q, names[m])], abs=1e-12), (q, m)
    with tie_aware():
        agg = ir_measures.calc_aggregate([SetP(relative=True)], qrels, run)[SetP(relative=True)]
    assert agg == pytest.approx(
        tierank.evaluate(qrels, run, ["SetRelP"], complete=True).aggregate()["expected"][0]
    )


def test_fallback_to_a_provider_that_is_not_tie_aware_warns_once(monkeypatch):
    import warnings

    from tierank.integrations import ir_measures as tirm

    monkeypatch.setattr(tirm, "_warned", False)
    qrels, run = _mixed()
    lacks = ir_measures.BPM(T=1000.0, max_rel=1) @ 5  # the one ir_measures measure tierank lacks
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tie_aware():
            ir_measures.calc_aggregate([RR, lacks], qrels, run)
            ir_measures.calc_aggregate([lacks], qrels, run)
        assert provider.supports(lacks)  # answered, through ir_measures' own provider
    ours = [w for w in caught if issubclass(w.category, tirm.UntieAwareFallback)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "BPM(T=1000.0,max_rel=1)@5" in str(ours[0].message) and "#18" in str(ours[0].message)
    with warnings.catch_warnings(record=True) as caught:  # supported measures never warn
        warnings.simplefilter("always")
        monkeypatch.setattr(tirm, "_warned", False)
        assert provider.supports(RR)
    assert not [w for w in caught if issubclass(w.category, tirm.UntieAwareFallback)]


def _marked(value) -> bool:
    from tierank.integrations.ir_measures import TieOblivious

    return isinstance(value, TieOblivious) and not value.tie_aware


def test_a_measure_tierank_lacks_is_marked_tie_oblivious_in_the_results(recwarn, tmp_path):
    """BPM comes from ir_measures' own provider (cwl_eval): its values, per query and aggregated,
    are ``TieOblivious`` floats naming it; tierank's own values stay plain and tie-aware."""
    import pickle

    qrels, run = _mixed()
    bpm = ir_measures.BPM(T=3.0, max_rel=2) @ 5
    stock = ir_measures.cwl_eval.calc(
        [bpm], qrels, run
    )  # the provider ir_measures itself picks for BPM
    ref = tierank.evaluate(qrels, run, ["RR"], complete=True)
    for stat in ("expected", "max", "std"):
        p = TierankProvider(stat)
        agg, per_query = p.calc([RR, bpm], qrels, run)
        theirs = {m.query_id: m.value for m in stock.per_query}
        got = {m.query_id: m.value for m in per_query if m.measure == bpm}
        assert got == pytest.approx(theirs, abs=1e-12) and len(got) == 4, stat
        assert all(_marked(v) and v.provider == "cwl_eval" for v in got.values()), stat
        assert _marked(agg[bpm]) and agg[bpm] == pytest.approx(stock.aggregated[bpm], abs=1e-12)
        assert not any(_marked(m.value) for m in per_query if m.measure == RR)
        col = "std" if stat == "std" else stat
        assert float(agg[RR]) == pytest.approx(ref.aggregate()[col][0], abs=1e-12), stat
        assert not _marked(agg[RR])
    # as ir_measures users see it, also through the pipeline and with iterators read twice
    text = "".join(f"{q} Q0 {d} 0 {s} x\n" for q, ds in run.items() for d, s in ds.items())
    qrels_iter = iter(list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter()))
    run_iter = ir_measures.read_trec_run(text)
    with tie_aware():
        piped = ir_measures.calc_aggregate([RR, bpm], qrels_iter, run_iter)
    assert _marked(piped[bpm]) and piped[bpm] == pytest.approx(stock.aggregated[bpm], abs=1e-12)
    assert "TieOblivious(" in repr(piped) and "provider='cwl_eval'" in f"{piped[bpm]}"
    assert piped[RR] == pytest.approx(ref.aggregate()["expected"][0], abs=1e-12)
    back = pickle.loads(pickle.dumps(piped[bpm]))
    assert _marked(back) and back.provider == "cwl_eval" and back == piped[bpm]
    assert round(piped[bpm], 3) == round(float(piped[bpm]), 3) and not _marked(piped[bpm] + 0)
    # TREC files (read by ir_measures' reader for the other provider); tierank's own objects refused
    (tmp_path / "run").write_text(text)
    (tmp_path / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items())
    )
    files = provider.calc_aggregate([RR, bpm], str(tmp_path / "qrels"), tmp_path / "run")
    assert _marked(files[bpm]) and files[bpm] == pytest.approx(stock.aggregated[bpm], abs=1e-12)
    assert files[RR] == pytest.approx(piped[RR], abs=1e-12)
    with pytest.raises(tierank.TierankInputError, match="run: a tierank Run cannot go"):
        provider.calc_aggregate([bpm], qrels, tierank.read_run(tmp_path / "run"))


def test_a_measure_no_provider_computes_is_refused():
    from ir_measures.measures.base import Measure

    class _Nobody(Measure):
        NAME = "Nobody"
        __name__ = "Nobody"
        SUPPORTED_PARAMS: dict = {}

    m = _Nobody()
    assert not provider.supports(m)
    with pytest.raises(tierank.TierankInputError, match="tierank does not compute Nobody"):
        provider.calc_aggregate([m], TIE_QRELS, TIE_RUN)
