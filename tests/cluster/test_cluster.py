"""Distributed evaluation on a local Ray (2 CPUs): equal to the in-memory engine, bit for bit."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

import tierank
from tierank.errors import TierankInputError
from tierank.examples import path as example_path

MEASURES = ["AP", "nDCG@10", "RR", "P@5", "R@100", "Rprec"]


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray (tierank[ray]) runs the distributed evaluation")
    from tierank.cluster import connect

    connect(num_cpus=2)
    yield ray
    ray.shutdown()


def _split(tmp_path, parts: int):
    """The askubuntu run cut into ``parts`` text files by query (one gzip, the others plain)."""
    lines = (
        gzip.decompress(example_path("askubuntu-run").read_bytes())
        .decode()
        .splitlines(keepends=True)
    )
    qids = list(dict.fromkeys(line.split()[0] for line in lines))
    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(parts):
        mine = set(qids[i::parts])
        text = "".join(x for x in lines if x.split()[0] in mine).encode()
        if i == 0:
            (folder / f"part{i}.trec.gz").write_bytes(gzip.compress(text))
        else:
            (folder / f"part{i}.trec").write_bytes(text)
    (folder / ".hidden.trec").write_text("ignored\n")
    return folder


def test_folder_of_text_files_equals_in_memory(tmp_path, ray_local):
    from tierank.cluster import evaluate_files, list_sources

    folder = _split(tmp_path, 3)
    assert [p.rsplit("/", 1)[1] for p in list_sources(folder)] == [
        "part0.trec.gz",
        "part1.trec",
        "part2.trec",
    ]
    q = example_path("askubuntu-qrels")
    for tb in ("trec_eval", "random:5"):
        ref = tierank.evaluate(q, example_path("askubuntu-run"), MEASURES, tie_break=tb)
        got = evaluate_files(q, folder, MEASURES, tie_break=tb, block_bytes=3000)
        assert got.records() == ref.records() and got.ties == ref.ties
    assert any(r["std"] > 0 for r in ref.records())


def test_uri_and_partitioned_files(tmp_path, ray_local):
    from tierank.cluster import evaluate_files

    pytest.importorskip("duckdb", reason="DuckDB (tierank[scale]) partitions the run")
    from tierank.stream import partition

    run = tmp_path / "run.trec"
    run.write_bytes(gzip.decompress(example_path("askubuntu-run").read_bytes()))
    parts = partition(run, tmp_path / "parts", buckets=4)
    q = example_path("askubuntu-qrels")
    ref = tierank.evaluate(q, str(run), MEASURES, tie_break="input").records()
    assert evaluate_files(q, "file://" + str(parts), MEASURES, tie_break="input").records() == ref


def test_a_query_in_two_files_is_refused(tmp_path, ray_local):
    from tierank.cluster import evaluate_files

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.trec").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 1.0 t\n")
    (folder / "b.trec").write_text("q2 Q0 d2 1 1.0 t\n")
    with pytest.raises(TierankInputError, match=r"query 'q2' is also in .*a\.trec"):
        evaluate_files({"q1": {"d1": 1}, "q2": {"d2": 1}}, folder, ["AP"])


def test_without_ray_nothing_imports_it():
    code = (
        "import sys, tierank, tierank.stream, tierank.cluster, tierank.cli; "
        "tierank.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, ['AP']); print('ray' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


def test_one_large_text_file_is_spread_over_blocks_and_errors_are_located(tmp_path, ray_local):
    from tierank.cluster import evaluate_files

    run = tmp_path / "run.trec"
    text = gzip.decompress(example_path("askubuntu-run").read_bytes())
    run.write_bytes(text)
    q = example_path("askubuntu-qrels")
    got = evaluate_files(q, run, MEASURES, block_bytes=20_000)
    assert got.records() == tierank.evaluate(q, str(run), MEASURES).records()
    assert int(got.settings["distributed"].split(", ")[1].split()[0]) > 5  # blocks
    lines = text.decode().splitlines(keepends=True)
    f = lines[3210].split()
    lines[3210] = " ".join(f[:4] + ["oops"] + f[5:]) + "\n"  # a score that is not a number
    run.write_text("".join(lines))
    with pytest.raises(TierankInputError, match=r"run\.trec:3211: "):
        evaluate_files(q, run, MEASURES, block_bytes=20_000)
    shuffled = tmp_path / "shuffled.trec"
    shuffled.write_text(
        "".join(lines[3000:3010] + lines[:3000] + lines[3010:3210])
    )  # half a query moved up
    with pytest.raises(TierankInputError, match="not grouped by query"):
        evaluate_files(q, shuffled, ["AP"], block_bytes=20_000)
