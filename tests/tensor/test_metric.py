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
    with pytest.raises(TierankInputError, match="no tensor kernel for Bpref"):
        TieAwareRetrieval(["Bpref"])
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
