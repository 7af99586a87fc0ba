"""The shipped example files (`tierank example ...`) and `tierank sweep --write-runs DIR`."""

from __future__ import annotations

import fnmatch
import gzip
import json
import tomllib
from pathlib import Path

import pytest
from helpers import run_cli

from tierank.examples import FILES, FOLDER, NAMES, path

ROOT = Path(__file__).resolve().parents[2]


def test_example_command_prints_every_shipped_file():
    for name in NAMES:
        printed = Path(run_cli("example", name).stdout.strip())
        assert printed == path(name) and printed.exists()
    assert run_cli("example").stdout.strip() == str(FOLDER)


def test_unknown_example_is_a_located_error():
    p = run_cli("example", "nope", check=False)
    assert p.returncode == 2 and "unknown example file 'nope'" in p.stderr and "askubuntu-run" in p.stderr
    assert "Traceback" not in p.stderr


def test_every_example_file_is_package_data():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["tierank"]
    shipped = [f"examples/{n}" for n in (*FILES.values(), "README.md", "trec_eval-NIST-NOTICE.md")]
    assert [f for f in shipped if not any(fnmatch.fnmatch(f, p) for p in patterns)] == []
    assert sum((FOLDER / n).stat().st_size for n in FILES.values()) < 1_100_000  # "at most about 1 MB"


def test_askubuntu_example_is_the_real_run_and_reads():
    run = gzip.decompress(path("askubuntu-run").read_bytes()).decode().splitlines()
    qrels = gzip.decompress(path("askubuntu-qrels").read_bytes()).decode().splitlines()
    assert len(run) == 4000 and len({line.split()[0] for line in run}) == 200
    assert len({line.split()[0] for line in qrels}) == 200
    res = json.loads(run_cli("eval", path("askubuntu-qrels"), path("askubuntu-run"), "-m", "nDCG@10",
                             "-f", "json").stdout)
    (agg,) = [r for r in res["aggregate"] if r["measure"] == "nDCG@10"]
    assert round(agg["expected"], 4) == 0.5698 and round(agg["min"], 4) == 0.5695 and round(agg["max"], 4) == 0.5702


@pytest.mark.parametrize("name, shared", [
    ("askubuntu-run", "askubuntu/test.bm25.run"), ("askubuntu-qrels", "askubuntu/test.qrels"),
    ("trec-run", "trec_eval/results.test"), ("rag24-run", "trec_eval/results.comment.test"),
    ("rag24-qrels", "trec_eval/qrels.comment.test"),
])
def test_shipped_files_are_the_shared_files_gzipped_reproducibly(shared_data, name, shared):
    raw = path(name).read_bytes()
    assert gzip.decompress(raw) == (shared_data / shared).read_bytes()
    assert raw[4:8] == b"\0\0\0\0" and raw[3] & 0x08 == 0  # gzip -n: no time stamp, no file name


# -- sweep --write-runs ---------------------------------------------------------------------------

RUN = "".join(f"q{q} Q0 d{d} {d + 1} {s!r} t\n" for q in range(3)
              for d, s in enumerate([1.2345678, 1.2345677, 0.5, 0.30000001, 0.3, 0.1 * q]))
QRELS = "".join(f"q{q} 0 d{d} {int(d in (1, 3, 5))}\n" for q in range(3) for d in range(6))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "sys.run").write_text(RUN)
    (tmp_path / "q.txt").write_text(QRELS)
    return tmp_path


def test_sweep_write_runs_writes_one_exact_run_per_format(files):
    out = files / "runs"
    p = run_cli("sweep", files / "sys.run", files / "q.txt", "-m", "nDCG@5", "-m", "RR", "--formats",
                "fp32,bf16,int8,sig2,band1.4", "-f", "json", "--write-runs", out)
    rows = json.loads(p.stdout)["rows"]
    assert sorted(x.name for x in out.iterdir()) == sorted(f"sys.{f}.run" for f in
                                                           ("fp32", "bf16", "int8", "sig2", "band1.4"))
    assert p.stderr.count("wrote ") == 5
    for f in ("fp32", "bf16", "int8", "sig2", "band1.4"):
        ev = json.loads(run_cli("eval", files / "q.txt", out / f"sys.{f}.run", "-m", "nDCG@5", "-m", "RR",
                                "-f", "json").stdout)["aggregate"]
        for r in (r for r in rows if r["format"] == f):
            (e,) = [e for e in ev if e["measure"] == r["measure"]]
            assert {k: e[k] for k in ("oblivious", "expected", "min", "max")} == \
                   {k: r[k] for k in ("oblivious", "expected", "min", "max")}, (f, r["measure"])
    bf16 = (out / "sys.bf16.run").read_text().splitlines()
    assert bf16[0].split()[3:] == ["1", "1.234375", "sys.bf16"]  # rank, exact bf16 value, tag
    assert bf16[1].split()[4] == "1.234375"  # the two close fp32 scores tie in bf16


def test_sweep_write_runs_names_a_gz_run_without_suffixes(tmp_path):
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(RUN.encode()))
    (tmp_path / "q.txt").write_text(QRELS)
    run_cli("sweep", tmp_path / "a.run.gz", tmp_path / "q.txt", "--formats", "bf16", "--write-runs", tmp_path / "o")
    assert [x.name for x in (tmp_path / "o").iterdir()] == ["a.bf16.run"]


def test_sweep_write_runs_refuses_before_any_work(files):
    (files / "afile").write_text("x")
    p = run_cli("sweep", files / "sys.run", files / "q.txt", "--formats", "fp32", "--write-runs", files / "afile",
                check=False)
    assert p.returncode == 2 and "afile: is not a directory" in p.stderr and "Traceback" not in p.stderr
    # a target that is one of the inputs: nothing is written, not even the other formats
    (files / "d").mkdir()
    (files / "d" / "sys.bf16.run").write_text(QRELS)
    p = run_cli("sweep", files / "sys.run", files / "d" / "sys.bf16.run", "--formats", "fp32,bf16",
                "--write-runs", files / "d", check=False)
    assert p.returncode == 2 and "refusing to overwrite an input" in p.stderr
    assert sorted(x.name for x in (files / "d").iterdir()) == ["sys.bf16.run"]
    assert (files / "d" / "sys.bf16.run").read_text() == QRELS
