"""Run-to-run variance across batch sizes (rerank batch_sizes= / --batch-sizes) and the platform record."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from hps.fakes import FakeScorer, run_cli_process, write_set
from tierank.hps import registry
from tierank.hps.base import QueryScores
from tierank.hps.protocol import rerank
from tierank.hps.registry import ModelKind


class BatchFake(FakeScorer):
    """Low-precision scores that move with the batch size (as BF16 kernels do); FP32 ones do not."""

    def __init__(self, group: str, batch_size: int = 16):
        super().__init__(group)
        self.batch_size = batch_size

    @classmethod
    def from_spec(cls, source, group, *, batch_size, device, **options):
        return cls(group, batch_size)

    def score_query(self, query, docs, variants):
        base = np.array([(zlib.crc32(f"{query}|{d}".encode()) % 10_000) / 10_000 for d in docs])
        out = QueryScores(model_s=0.5)
        for v in variants:
            if v.model_dtype == "fp32":
                s = base
            else:  # the rounding grid shifts with the batch size: some scores change, ties move
                s = np.round(base + 0.004 * (self.batch_size % 3), 2)
            out.add(v, s, 0.001)
        return out


@pytest.fixture
def fakebs(monkeypatch):
    monkeypatch.setitem(
        registry._KINDS,
        "fakebs",
        ModelKind("fakebs", "hps.test_variance:BatchFake", frozenset({"precision", "head"})),
    )


def test_variance_separates_invariant_and_batch_sensitive_variants(tmp_path, fakebs):
    data = write_set(tmp_path / "data", n_queries=6, n_docs=10)
    plain = rerank(
        data,
        f"fakebs:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "plain",
        device="cpu",
        batch_size=16,
    )
    res = rerank(
        data,
        f"fakebs:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "var",
        device="cpu",
        batch_size=16,
        batch_sizes=[1, 16, 8],
    )
    var = res.settings["variance"]
    assert var["batch_sizes"] == [16, 1, 8]
    fp32, bf16 = var["variants"]["fp32"], var["variants"]["bf16"]
    assert fp32["changed_share"] == 0.0 and all(
        m["spread"] == 0.0 for m in fp32["measures"].values()
    )
    assert bf16["changed_share"] > 0.1
    assert set(bf16["measures"]["nDCG@10"]["expected"]) == {"16", "1", "8"}
    # Table 1 and the runs are those of --batch-size, with or without the extra settings
    assert (tmp_path / "var" / "table.tsv").read_bytes() == (
        tmp_path / "plain" / "table.tsv"
    ).read_bytes()
    doc = json.loads((tmp_path / "var" / "table.json").read_text())
    assert doc["settings"]["variance"] == json.loads(json.dumps(var))
    assert doc["settings"]["platform"]["cpus"] >= 1 and "numpy" in doc["settings"]["platform"]
    assert plain.rows == res.rows


def test_cli_batch_sizes(tmp_path):
    data = write_set(tmp_path / "data", n_queries=3)
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out",
        "--regimes",
        "fp32",
        "--batch-sizes",
        "1,x",
        fake=True,
    )
    assert (
        r.returncode == 2
        and "--batch-sizes: '1,x' is not a comma-separated list of integers" in r.stderr
    )
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out",
        "--regimes",
        "fp32,bf16",
        "--batch-sizes",
        "1,4",
        fake=True,
    )
    assert r.returncode == 0, r.stderr
    assert "batch sizes 16,1,4: fp32: 0.0% of scores changed" in r.stdout
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out2",
        "--regimes",
        "fp32",
        "--orders",
        "3,x",
        fake=True,
    )
    assert (
        r.returncode == 2
        and "--orders: '3,x' is not a comma-separated list of integers" in r.stderr
    )
    r = run_cli_process(
        "rerank",
        "--data",
        data,
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "-o",
        tmp_path / "out2",
        "--regimes",
        "fp32",
        "--orders",
        "3",
        fake=True,
    )
    assert r.returncode == 0, r.stderr
    # this fake's scores move in their last bits with a document's position (as FP32 kernels may), never its ranks
    assert (
        "batch sizes 16 and candidate orders 3: fp32: 58.3% of scores changed; nDCG@10 E spread 0,"
        in r.stdout
    )


class OrderFake(BatchFake):
    """Low-precision scores that depend on a document's place in its batch (padding, batch composition)."""

    def score_query(self, query, docs, variants):
        base = np.array([(zlib.crc32(f"{query}|{d}".encode()) % 10_000) / 10_000 for d in docs])
        slot = np.arange(len(docs)) % self.batch_size
        out = QueryScores(model_s=0.5)
        for v in variants:
            out.add(
                v,
                base if v.model_dtype == "fp32" else np.round(base + 0.004 * (slot % 3), 2),
                0.001,
            )
        return out


def test_candidate_orders_show_order_sensitive_variants(tmp_path, monkeypatch):
    monkeypatch.setitem(
        registry._KINDS,
        "fakeorder",
        ModelKind("fakeorder", "hps.test_variance:OrderFake", frozenset({"precision", "head"})),
    )
    data = write_set(tmp_path / "data", n_queries=6, n_docs=10)
    plain = rerank(
        data,
        f"fakeorder:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "plain",
        device="cpu",
        batch_size=4,
    )
    res = rerank(
        data,
        f"fakeorder:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "var",
        device="cpu",
        batch_size=4,
        orders=[1, 2],
    )
    var = res.settings["variance"]
    assert var["orders"] == [1, 2] and var["settings"] == ["bs=4", "order=1", "order=2"]
    fp32, bf16 = var["variants"]["fp32"], var["variants"]["bf16"]
    assert fp32["changed_share"] == 0.0 and all(
        m["spread"] == 0.0 for m in fp32["measures"].values()
    )
    assert bf16["changed_share"] > 0.1 and set(bf16["measures"]["nDCG@10"]["expected"]) == {
        "4",
        "order=1",
        "order=2",
    }
    assert plain.rows == res.rows  # Table 1 stays that of the input order
    again = rerank(
        data,
        f"fakeorder:{data}",
        regimes="fp32,bf16",
        out_dir=tmp_path / "var",
        device="cpu",
        batch_size=4,
        orders=[1, 2],
    )  # every setting from the cache
    assert again.settings["variance"] == var
