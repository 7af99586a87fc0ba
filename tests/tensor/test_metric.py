"""The torchmetrics Metric and the Hugging Face compute_metrics of tierank.tensor."""

from __future__ import annotations

import math
import os
import socket
from types import SimpleNamespace

import numpy as np
import pytest

from tierank import tensor
from tierank.errors import TierankInputError
from tierank.tensor.hf import compute_metrics

NO_METRIC = 'tierank.tensor.metric needs torch and torchmetrics: pip install -e ".[torchmetrics]"'
torch = pytest.importorskip("torch", reason=NO_METRIC)
pytest.importorskip("torchmetrics", reason=NO_METRIC)

from tierank.tensor.metric import TieAwareRetrieval  # noqa: E402

MEASURES = ["nDCG@10", "RR@10", "AP", "R@5"]


def data(seed=0, n=400, ties=True):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, 40, (n,), generator=g)
    preds = (torch.randint(0, 4, (n,), generator=g) / 4.0) if ties else torch.rand(n, generator=g)
    target = torch.randint(0, 3, (n,), generator=g)
    return preds, target, idx


def test_compute_is_the_mean_of_evaluate():
    preds, target, idx = data()
    m = TieAwareRetrieval(MEASURES)
    for part in torch.split(torch.arange(len(preds)), 97):  # several batches
        m.update(preds[part], target[part], idx[part])
    got = m.compute()
    res = tensor.evaluate(preds.double(), target, MEASURES, indexes=idx)
    for name in MEASURES:
        s = res[name].summary()
        assert float(got[name]) == pytest.approx(s["expected"], abs=1e-6)
        for key in ("min", "max", "std", "oblivious"):
            assert float(got[f"{name}/{key}"]) == pytest.approx(s[key], abs=1e-6)
        assert float(got[f"{name}/min"]) <= float(got[name]) <= float(got[f"{name}/max"])
    assert 0 < float(got["tied_share"]) <= 1


def test_drop_in_beside_torchmetrics_without_ties():
    """Without ties nothing is uncertain: expected = min = max = torchmetrics' own value."""
    from torchmetrics.retrieval import (
        RetrievalMAP,
        RetrievalMRR,
        RetrievalNormalizedDCG,
        RetrievalRecall,
    )

    preds, target, idx = data(1, ties=False)
    ours = TieAwareRetrieval(MEASURES)
    ours.update(preds, target, idx)
    got = ours.compute()
    theirs = {
        "nDCG@10": RetrievalNormalizedDCG(top_k=10),
        "RR@10": RetrievalMRR(top_k=10),
        "AP": RetrievalMAP(),
        "R@5": RetrievalRecall(top_k=5),
    }
    for name, metric in theirs.items():
        metric.update(preds, target if name == "nDCG@10" else target > 0, idx)
        assert float(got[name]) == pytest.approx(float(metric.compute()), abs=1e-6), name
        assert float(got[f"{name}/min"]) == float(got[f"{name}/max"]) == float(got[name])
        assert float(got[f"{name}/std"]) == 0.0


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_preds_keep_their_ties(dtype):
    """bf16 / fp16 preds, as a half-precision checkpoint gives them: the Metric's statistics are
    those of the half values written to float64 (the same ties), not of the float32 they came from."""
    g = torch.Generator().manual_seed(3)
    fine = 0.99 + 0.01 * torch.rand(600, generator=g)  # distinct in float32, tied in half
    target = torch.randint(0, 3, (600,), generator=g)
    idx = torch.randint(0, 30, (600,), generator=g)
    half = fine.to(getattr(torch, dtype))
    m = TieAwareRetrieval(MEASURES)
    m.update(half, target, idx)
    got = m.compute()
    ref = tensor.evaluate(half.double(), target, MEASURES, indexes=idx, dtype="float64")
    assert float(got["tied_share"]) == pytest.approx(float(ref.tied_share.mean()), abs=1e-6)
    assert float(got["tied_share"]) > 0.5
    for name in MEASURES:
        s = ref[name].summary()
        for key in ("min", "max", "std", "oblivious"):
            assert float(got[f"{name}/{key}"]) == pytest.approx(s[key], abs=1e-6), (name, key)
        assert float(got[name]) == pytest.approx(s["expected"], abs=1e-6)
    assert float(got["AP/max"]) - float(got["AP/min"]) > 0.02  # the ties matter


@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
def test_empty_target_action(action):
    preds = torch.tensor([0.5, 0.5, 0.1, 0.3])
    target = torch.tensor([1, 0, 0, 0])
    idx = torch.tensor([0, 0, 1, 1])
    m = TieAwareRetrieval(["RR"], empty_target_action=action)
    m.update(preds, target, idx)
    got = float(m.compute()["RR"])
    assert got == {"neg": 0.75 / 2, "pos": (0.75 + 1) / 2, "skip": 0.75}[action]


def test_bad_arguments_are_one_line():
    with pytest.raises(TierankInputError, match="empty_target_action must be one of"):
        TieAwareRetrieval(["RR"], empty_target_action="nope")
    with pytest.raises(TierankInputError, match="no tensor kernel for infAP"):
        TieAwareRetrieval(["infAP"])
    m = TieAwareRetrieval(["RR"])
    with pytest.raises(TierankInputError, match="same shape"):
        m.update(torch.zeros(3), torch.zeros(2), torch.zeros(3))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank, world, port, out):
    import torch.distributed as dist

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        preds, target, idx = data(2)
        m = TieAwareRetrieval(MEASURES)
        half = torch.arange(
            rank, len(preds), world
        )  # every other entry: queries split across processes
        m.update(preds[half], target[half], idx[half])
        got = m.compute()
        # as a DistributedSampler splits them: whole queries per process, in input order
        by_query = TieAwareRetrieval(MEASURES)
        mine = idx % world == rank
        by_query.update(preds[mine], target[mine], idx[mine])
        got2 = by_query.compute()
        if rank == 0:
            torch.save(
                {
                    "entries": {k: float(v) for k, v in got.items()},
                    "queries": {k: float(v) for k, v in got2.items()},
                },
                out,
            )
    finally:
        dist.destroy_process_group()


@pytest.mark.full
def test_two_processes_match_one(tmp_path):
    """DDP as torchmetrics does it (gloo on CPU): the states of both processes are gathered, and the
    expected value, bounds and std are those of one process that saw everything.  (The oblivious
    value may differ when one query's candidates are split across processes: their order after the
    gather is not the input order; with whole queries per process it is the same too.)"""
    import torch.multiprocessing as mp

    out = tmp_path / "rank0.pt"
    mp.spawn(_worker, args=(2, _free_port(), str(out)), nprocs=2, join=True)
    got = torch.load(out)
    preds, target, idx = data(2)
    one = TieAwareRetrieval(MEASURES)
    one.update(preds, target, idx)
    ref = {k: float(v) for k, v in one.compute().items()}
    for k, v in ref.items():
        if not k.endswith("/oblivious"):
            assert math.isclose(got["entries"][k], v, abs_tol=1e-6), (k, got["entries"][k], v)
        assert math.isclose(got["queries"][k], v, abs_tol=1e-6), (k, got["queries"][k], v)


def test_hf_compute_metrics_grouped_candidates():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, (30, 8)) / 2.0
    labels = rng.integers(0, 2, (30, 8))
    labels[3, 5:] = -100  # the Trainer's padding
    ref = tensor.evaluate(
        scores, np.where(labels < 0, 0, labels), MEASURES, mask=labels >= 0
    ).scalars()
    by_size = compute_metrics(MEASURES, group_size=8)(
        SimpleNamespace(predictions=(scores.reshape(-1, 1), None), label_ids=labels.reshape(-1))
    )
    two_logits = np.stack([-scores.reshape(-1), scores.reshape(-1)], axis=1)
    by_groups = compute_metrics(MEASURES, groups=np.repeat(np.arange(30) * 3, 8))(
        SimpleNamespace(predictions=two_logits, label_ids=labels.reshape(-1))
    )
    shaped = compute_metrics(MEASURES)(SimpleNamespace(predictions=scores, label_ids=labels))
    for got in (by_size, by_groups, shaped):
        assert got.keys() == ref.keys()
        for k in ref:
            assert got[k] == pytest.approx(ref[k], abs=1e-12), k
    with pytest.raises(TierankInputError, match="not groups of 7 candidates"):
        compute_metrics(MEASURES, group_size=7)(
            SimpleNamespace(predictions=scores.reshape(-1), label_ids=labels.reshape(-1))
        )


def test_a_collection_never_shares_its_state():
    """In a MetricCollection beside RetrievalNormalizedDCG (the same update signature, the same
    inputs) the compute groups keep the two apart: torchmetrics' nDCG is its value alone, not one
    computed on the predictions TieAwareRetrieval stores (bf16 here, as given)."""
    from torchmetrics import MetricCollection
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    g = torch.Generator().manual_seed(0)
    preds = torch.sigmoid(torch.randn(64, 30, generator=g) + 3).to(torch.bfloat16)
    target = torch.randint(0, 2, (64, 30), generator=g)
    idx = torch.arange(64)[:, None].expand(64, 30)
    alone, ours = RetrievalNormalizedDCG(top_k=10), TieAwareRetrieval(["nDCG@10"])
    alone.update(preds, target, idx)
    ours.update(preds, target, idx)
    col = MetricCollection(
        {"ties": TieAwareRetrieval(["nDCG@10"]), "tm": RetrievalNormalizedDCG(top_k=10)}
    )
    for half in (slice(0, 32), slice(32, 64)):  # two steps: the groups are formed after the first
        col.update(preds[half], target[half], idx[half])
    got = col.compute()
    assert all(len(members) == 1 for members in col.compute_groups.values())
    assert float(got["tm"]) == float(alone.compute())
    assert float(got["nDCG@10"]) == float(ours.compute()["nDCG@10"])


def test_a_forced_compute_group_is_refused():
    """compute_groups named by hand put the metrics in one group whatever their states: the
    Metric, left without its batches, says so instead of computing on nothing."""
    from torchmetrics import MetricCollection
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    col = MetricCollection(
        {"tm": RetrievalNormalizedDCG(top_k=10), "ties": TieAwareRetrieval(["nDCG@10"])},
        compute_groups=[["tm", "ties"]],
    )
    preds, target, idx = data(4, ties=False)
    col.update(preds, target, idx)
    with pytest.raises(TierankInputError, match="compute_groups put it with another metric"):
        col.compute()


def test_skip_with_every_query_skipped_is_zero_as_torchmetrics():
    from torchmetrics.retrieval import RetrievalMRR

    preds, target, idx = (
        torch.tensor([0.3, 0.2, 0.5]),
        torch.tensor([0, 0, 0]),
        torch.tensor([0, 0, 1]),
    )
    ours = TieAwareRetrieval(["RR@10", "nDCG"], empty_target_action="skip")
    theirs = RetrievalMRR(top_k=10, empty_target_action="skip")
    ours.update(preds, target, idx)
    theirs.update(preds, target, idx)
    got = ours.compute()
    assert float(theirs.compute()) == 0.0
    for key, v in got.items():
        assert float(v) == 0.0 and not math.isnan(float(v)), key


@pytest.mark.parametrize("action", ["neg", "pos", "skip"])
def test_fractional_targets_are_graded_gains_as_torchmetrics(action):
    """Targets in (0, 1) are nDCG gains and give the query something to find, whatever the
    empty_target_action, as in torchmetrics; for the binary measures (target >= rel = 1) the query
    has nothing to find."""
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    preds = torch.tensor([0.3, 0.2, 0.1, 0.9, 0.8])
    target = torch.tensor([0.2, 0.9, 0.0, 0.0, 1.0])
    idx = torch.tensor([0, 0, 0, 1, 1])
    ours = TieAwareRetrieval(["nDCG", "RR"], empty_target_action=action)
    theirs = RetrievalNormalizedDCG(empty_target_action=action)
    ours.update(preds, target, idx)
    theirs.update(preds, target, idx)
    got = ours.compute()
    assert float(got["nDCG"]) == pytest.approx(float(theirs.compute()), abs=1e-6)
    assert float(got["nDCG"]) == pytest.approx((0.7482 + 0.6309) / 2, abs=1e-4)
    assert float(got["RR"]) == {"neg": 0.25, "pos": 0.75, "skip": 0.5}[action]


def test_bad_arguments_fail_at_construction_and_update():
    for kwargs, message in [
        ({"rel": 1.5}, "rel must be an integer"),
        ({"rel": True}, "rel must be an integer"),
        ({"tie_break": "random"}, "unknown tie_break"),
        ({"ignore_index": -100.0}, "ignore_index must be an integer or None"),
    ]:
        with pytest.raises(TierankInputError, match=message):
            TieAwareRetrieval(["RR"], **kwargs)
    m = TieAwareRetrieval(["nDCG@10"])
    p, t, i = torch.tensor([0.5, 0.2]), torch.tensor([1, 0]), torch.tensor([0, 0])
    for args, message in [
        ((p.numpy(), t, i), "update\\(\\): preds is a numpy.ndarray, not a torch.Tensor"),
        ((p, t.tolist(), i), "update\\(\\): target is a builtins.list"),
        ((p, t, i.float()), "indexes must be integers"),
        ((p > 0, t, i), "preds must be real scores"),
        ((torch.tensor([0.5, math.nan]), t, i), "preds holds NaN"),
        ((p, torch.tensor([math.inf, 0.0]), i), "target holds NaN or inf"),
        ((p, torch.tensor([math.nan, 0.0]), i), "target holds NaN or inf"),
    ]:
        with pytest.raises(TierankInputError, match=message):
            m.update(*args)
    m.update(p, t, i)  # nothing bad was stored
    assert float(m.compute()["nDCG@10"]) == 1.0


def test_hf_a_group_of_padding_only_is_no_query():
    """-100 labels are padding in every layout: a group with nothing but padding is left out of
    the means with group_size, with groups and with [queries, candidates] predictions alike."""
    scores = np.array([[0.9, 0.1, 0.5], [0.3, 0.2, 0.1], [0.2, 0.8, 0.4]])
    labels = np.array([[1, 0, 0], [-100, -100, -100], [0, 0, 1]])
    pred = SimpleNamespace(predictions=scores.reshape(-1, 1), label_ids=labels.reshape(-1))
    by_size = compute_metrics(["RR@10"], group_size=3)(pred)
    by_groups = compute_metrics(["RR@10"], groups=np.repeat([7, 8, 9], 3))(pred)
    shaped = compute_metrics(["RR@10"])(SimpleNamespace(predictions=scores, label_ids=labels))
    for got in (by_size, by_groups, shaped):
        assert got["RR@10"] == pytest.approx((1 + 0.5) / 2)
        assert got["tied_share"] == 0.0


def test_hf_score_column_out_of_range_is_one_line():
    pred = SimpleNamespace(predictions=np.zeros((6, 2)), label_ids=np.array([1, 0, 0, 1, 0, 0]))
    with pytest.raises(TierankInputError, match="score_column=5: the predictions have 2 columns"):
        compute_metrics(["RR@10"], group_size=3, score_column=5)(pred)
    with pytest.raises(TierankInputError, match="score_column must be an integer"):
        compute_metrics(["RR@10"], group_size=3, score_column=1.0)
    assert compute_metrics(["RR@10"], group_size=3, score_column=-2)(pred)["RR@10"] > 0


def test_hf_non_finite_labels_are_one_line():
    pred = SimpleNamespace(
        predictions=np.array([0.9, 0.1, 0.5]), label_ids=np.array([np.inf, 0.0, 1.0])
    )
    with pytest.raises(TierankInputError, match="labels: inf for a valid candidate"):
        compute_metrics(["nDCG@10"], group_size=3)(pred)
    pred.label_ids = np.array([2000, 0, 1])
    with pytest.raises(TierankInputError, match="grade 2000 under \"nDCG\\(dcg='exp-log2'\\)@10\""):
        compute_metrics(["nDCG(dcg='exp-log2')@10"], group_size=3)(pred)


def test_ap_at_k_divides_by_every_relevant_target():
    """By design (trec_eval's map_cut): AP@k divides by all the query's relevant targets,
    torchmetrics' RetrievalMAP(top_k=k) by those inside the top k; on tie-free input the two are
    one factor apart, N+ / (relevant in the top k), as the Metric's docstring says."""
    from torchmetrics.retrieval import RetrievalMAP

    preds, target, idx = (
        torch.tensor([0.9, 0.8, 0.7, 0.6]),
        torch.tensor([1, 0, 0, 1]),
        torch.zeros(4, dtype=torch.long),
    )
    ours = TieAwareRetrieval(["AP@2", "AP"], ap_normaliser="relevant")
    theirs = RetrievalMAP(top_k=2)
    ours.update(preds, target, idx)
    theirs.update(preds, target, idx)
    got = ours.compute()
    assert float(got["AP@2"]) == 0.5 and float(theirs.compute()) == 1.0
    assert float(got["AP@2"]) * 2 / 1 == float(
        theirs.compute()
    )  # N+ = 2, one relevant in the top 2
    assert (
        TieAwareRetrieval.__doc__ is not None
        and "RetrievalMAP(top_k=k)" in TieAwareRetrieval.__doc__
    )


def _ap_retrieved_brute(scores, labels, k):
    """AP@k over the relevant targets in the top k, over every ordering of tied scores (each
    group's permutations): (values, probability of each) by enumeration."""
    import itertools

    groups = [
        [i for i in range(len(scores)) if scores[i] == v] for v in sorted(set(scores), reverse=True)
    ]
    values = []
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        ranked = [labels[i] for g in perms for i in g][:k]
        hits, total = 0, 0.0
        for j, lab in enumerate(ranked):
            if lab:
                hits += 1
                total += hits / (j + 1)
        values.append(total / hits if hits else 0.0)
    return np.array(values)


def test_ap_retrieved_against_every_ordering():
    """ap_normaliser='retrieved' (torchmetrics' AP@k) is exact over the orderings of tied scores:
    expected value, min, max and std against enumeration, and the oblivious value that of the
    stable sort (input order inside ties)."""
    from tierank.tensor.metric import ap_retrieved

    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(120):
        n = int(rng.integers(1, 7))
        scores = rng.integers(0, 3, n).astype(float)
        labels = rng.integers(0, 2, n)
        k = int(rng.integers(1, n + 2))
        got = ap_retrieved(
            torch.tensor(scores)[None],
            torch.tensor(labels)[None],
            torch.ones(1, n, dtype=torch.bool),
            k,
            1,
        )
        vals = _ap_retrieved_brute(list(scores), list(labels), k)
        assert float(got.expected[0]) == pytest.approx(vals.mean(), abs=1e-12)
        assert float(got.min[0]) == pytest.approx(vals.min(), abs=1e-12)
        assert float(got.max[0]) == pytest.approx(vals.max(), abs=1e-12)
        assert math.sqrt(float(got.var[0])) == pytest.approx(vals.std(), abs=1e-9)
        if vals.min() == vals.max():
            assert float(got.var[0]) == 0.0
        stable = np.argsort(-scores, kind="stable")
        assert float(got.oblivious[0]) == pytest.approx(
            _ap_retrieved_brute(list(range(n, 0, -1)), list(labels[stable]), k)[0], abs=1e-12
        )
        checked += vals.max() > vals.min()
    assert checked > 20  # ties that move the value were among them


def test_ap_normaliser_retrieved_is_torchmetrics_map_and_the_default_warns():
    from torchmetrics.retrieval import RetrievalMAP

    preds, target, idx = data(5, ties=False)
    target = (target > 0).long()
    with pytest.warns(UserWarning, match="RetrievalMAP\\(top_k=4\\) divides by those in the top 4"):
        TieAwareRetrieval(["AP@4"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = TieAwareRetrieval(["AP@4", "AP"], ap_normaliser="retrieved")
        plain = TieAwareRetrieval(["AP@4"], ap_normaliser="relevant")
    theirs = RetrievalMAP(top_k=4)
    for metric in (ours, plain, theirs):
        metric.update(preds, target, idx)
    got = ours.compute()
    assert float(got["AP@4"]) == pytest.approx(float(theirs.compute()), abs=1e-6)
    assert float(plain.compute()["AP@4"]) < float(got["AP@4"]) - 0.01
    with pytest.raises(TierankInputError, match="ap_normaliser must be one of"):
        TieAwareRetrieval(["AP@4"], ap_normaliser="torchmetrics")
    # with ties: the expected value lies in [min, max], the tie-break's values are the bounds
    tied_p, tied_t, tied_i = data(6)
    stats = {}
    for tb in ("worst", "best", "input"):
        m = TieAwareRetrieval(["AP@5"], ap_normaliser="retrieved", tie_break=tb)
        m.update(tied_p, (tied_t > 0).long(), tied_i)
        stats[tb] = {k: float(v) for k, v in m.compute().items()}
    s = stats["input"]
    assert s["AP@5/min"] < s["AP@5"] < s["AP@5/max"] and s["AP@5/std"] > 0
    assert stats["worst"]["AP@5/oblivious"] == pytest.approx(s["AP@5/min"], abs=1e-6)
    assert stats["best"]["AP@5/oblivious"] == pytest.approx(s["AP@5/max"], abs=1e-6)
    assert s["AP@5/min"] <= s["AP@5/oblivious"] <= s["AP@5/max"]


def test_ap_retrieved_in_chunks_is_the_same(monkeypatch):
    import tierank.tensor.metric as metric_mod

    preds, target, idx = data(7)
    scores, labels, mask, _ = tensor.group_flat(preds, (target > 0).long(), idx)
    whole = metric_mod.ap_retrieved(scores, labels, mask, 5, 1)
    monkeypatch.setattr(metric_mod, "DEFAULT_CHUNK_CELLS", 60)  # two queries a chunk
    parts = metric_mod.ap_retrieved(scores, labels, mask, 5, 1)
    for key in ("expected", "min", "max", "var", "oblivious"):
        torch.testing.assert_close(getattr(parts, key), getattr(whole, key), rtol=0, atol=1e-12)
    assert float(whole.var.max()) > 0
