"""The shipped example files (`tierank example ...`) and `tierank sweep --write-runs DIR`."""

from __future__ import annotations

import fnmatch
import gzip
import json
import tomllib
from pathlib import Path

import pytest

from helpers import invoke
from tierank.errors import TierankInputError
from tierank.examples import FILES, FOLDER, NAMES, path
from tierank.io.beir import load_beir

ROOT = Path(__file__).resolve().parents[2]


def test_example_command_prints_every_shipped_file():
    for name in NAMES:
        printed = Path(invoke("example", name).stdout.strip())
        assert printed == path(name) and printed.exists()
    assert invoke("example").stdout.strip() == str(FOLDER)


def test_unknown_example_is_a_located_error():
    p = invoke("example", "nope", check=False)
    assert (
        p.returncode == 2
        and "unknown example file 'nope'" in p.stderr
        and "askubuntu-run" in p.stderr
    )
    assert "Traceback" not in p.stderr


def _files(name: str) -> list[Path]:
    """The files of the shipped example ``name`` (a folder's files, recursively)."""
    p = path(name)
    return sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]


def test_every_example_file_is_package_data():
    """setuptools globs package-data patterns (``*`` stops at ``/``): each shipped file must be matched so."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["tierank"]
    package = FOLDER.parent
    globbed = {x for pat in patterns for x in package.glob(pat) if x.is_file()}
    shipped = [x for n in FILES for x in _files(n)] + [
        FOLDER / "README.md",
        FOLDER / "trec_eval-NIST-NOTICE.md",
    ]
    assert len(shipped) > len(FILES)  # the rag24-mini folder's files are among them
    assert [str(x.relative_to(package)) for x in shipped if x not in globbed] == []
    assert fnmatch.fnmatch(
        "examples/rag24-mini/corpus.jsonl.gz", "examples/*"
    )  # why fnmatch cannot check this
    assert sum(x.stat().st_size for x in shipped) < 1_100_000  # "at most about 1 MB"


def test_askubuntu_example_is_the_real_run_and_reads():
    run = gzip.decompress(path("askubuntu-run").read_bytes()).decode().splitlines()
    qrels = gzip.decompress(path("askubuntu-qrels").read_bytes()).decode().splitlines()
    assert len(run) == 4000 and len({line.split()[0] for line in run}) == 200
    assert len({line.split()[0] for line in qrels}) == 200
    res = json.loads(
        invoke(
            "eval", path("askubuntu-qrels"), path("askubuntu-run"), "-m", "nDCG@10", "-f", "json"
        ).stdout
    )
    (agg,) = [r for r in res["aggregate"] if r["measure"] == "nDCG@10"]
    assert (
        round(agg["expected"], 4) == 0.5698
        and round(agg["min"], 4) == 0.5695
        and round(agg["max"], 4) == 0.5702
    )


@pytest.mark.parametrize(
    "name, shared",
    [
        ("askubuntu-run", "askubuntu/test.bm25.run"),
        ("askubuntu-qrels", "askubuntu/test.qrels"),
        ("trec-run", "trec_eval/results.test"),
        ("rag24-run", "trec_eval/results.comment.test"),
        ("rag24-qrels", "trec_eval/qrels.comment.test"),
    ],
)
@pytest.mark.slow
def test_shipped_files_are_the_shared_files_gzipped_reproducibly(shared_data, name, shared):
    raw = path(name).read_bytes()
    assert gzip.decompress(raw) == (shared_data / shared).read_bytes()
    assert raw[4:8] == b"\0\0\0\0" and raw[3] & 0x08 == 0  # gzip -n: no time stamp, no file name


# -- rag24-mini: a BEIR-layout reranking set (tierank rerank --data "$(tierank example rag24-mini)") -------------

MINI_NAMES = ("queries.jsonl", "corpus.jsonl", "candidates.run", "qrels.txt")


def _mini(name: str) -> list[bytes]:
    """The (decompressed) lines of the shipped rag24-mini file ``name`` (``.gz`` added)."""
    raw = (path("rag24-mini") / f"{name}.gz").read_bytes()
    assert (
        raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0" and raw[3] & 0x08 == 0
    )  # gzip, no time, no name
    return gzip.decompress(raw).splitlines(keepends=True)


def test_rag24_mini_is_the_folder_the_example_command_prints():
    printed = Path(invoke("example", "rag24-mini").stdout.strip())
    assert printed.is_dir() and sorted(x.name for x in printed.iterdir()) == sorted(
        f"{n}.gz" for n in MINI_NAMES
    )


def test_rag24_mini_reads_as_a_beir_set_and_every_candidate_has_its_passage():
    s = load_beir(path("rag24-mini"))
    assert [p.name for p in s.inputs] == [
        "qrels.txt.gz",
        "candidates.run.gz",
        "queries.jsonl.gz",
        "corpus.jsonl.gz",
    ]
    assert len(s.queries) == 5 and all(len(c) == 20 for c in s.candidates.values())
    assert sorted(s.candidates) == sorted(s.queries) == sorted(set(s.qrels.qid.to_pylist()))
    cands = [d for c in s.candidates.values() for d in c]
    corpus_ids = [json.loads(line)["_id"] for line in _mini("corpus.jsonl")]
    assert len(set(cands)) == len(cands) == 100
    assert sorted(corpus_ids) == sorted(cands)  # every candidate's passage, and nothing else
    assert all(len(t) > 100 for t in s.docs.values()) and all(s.queries.values())
    # all of the topics' judgments ship (not only the candidates'): 1,022 lines, graded 0-3
    judged = set(zip(s.qrels.qid.to_pylist(), s.qrels.docid.to_pylist()))
    assert len(judged) == len(_mini("qrels.txt")) == 1022 and set(s.qrels.grade.tolist()) == {
        0,
        1,
        2,
        3,
    }
    assert sum((q, d) in judged for q, c in s.candidates.items() for d in c) == 100
    assert (
        load_beir(path("rag24-mini"), queries="all").candidates == s.candidates
    )  # every topic is judged


def test_rag24_mini_fits_the_size_bound():
    size = sum(x.stat().st_size for x in _files("rag24-mini"))
    assert 40_000 < size < 150_000, size


def test_rag24_mini_is_a_true_subset_of_the_shared_rag24(real_data):
    """Independently of the builder: the first 5 judged topics (ids sorted as strings), every line as in
    rag24 (the tests' copy: tests/data/rag24), in its order, all of those topics' candidates and judgments, exactly their passages."""
    full = {n: (real_data / "rag24" / n).read_bytes().splitlines(keepends=True) for n in MINI_NAMES}
    topics = sorted({line.split()[0] for line in full["qrels.txt"]})[:5]
    assert topics == [
        t.encode()
        for t in ("2024-127266", "2024-12875", "2024-137182", "2024-152259", "2024-158677")
    ]
    assert _mini("qrels.txt") == [line for line in full["qrels.txt"] if line.split()[0] in topics]
    assert _mini("candidates.run") == [
        line for line in full["candidates.run"] if line.split()[0] in topics
    ]
    docs = {line.split()[2] for line in _mini("candidates.run")}
    assert _mini("corpus.jsonl") == [
        line for line in full["corpus.jsonl"] if json.loads(line)["_id"].encode() in docs
    ]
    assert _mini("queries.jsonl") == [
        line for line in full["queries.jsonl"] if json.loads(line)["_id"].encode() in topics
    ]
    assert len(_mini("queries.jsonl")) == 5 and len(docs) == 100


def test_rag24_mini_rebuilds_from_the_shared_set(real_data, tmp_path):
    from tierank.examples import build_rag24_mini

    build_rag24_mini.main([str(real_data / "rag24"), "--out", str(tmp_path)])
    for n in MINI_NAMES:
        assert gzip.decompress((tmp_path / f"{n}.gz").read_bytes()) == b"".join(_mini(n)), n


# -- BEIR sets with gzip-compressed files -----------------------------------------------------------------------

BEIR = {
    "queries.jsonl": '{"_id": "q1", "text": "what ties?"}\n{"_id": "q2", "text": "unjudged"}\n',
    "corpus.jsonl": '{"_id": "d1", "title": "T", "text": "one"}\n{"_id": "d2", "text": "two"}\n'
    '{"_id": "d3", "text": "three"}\n',
    "candidates.run": "q1 Q0 d2 1 5 r\nq1 Q0 d1 2 7 r\nq2 Q0 d3 1 1 r\n",
    "qrels.txt": "q1 0 d1 1\nq1 0 d3 0\n",
}


def _beir(folder: Path, gz: set[str]) -> Path:
    folder.mkdir()
    for name, text in BEIR.items():
        target = folder / (f"{name}.gz" if name in gz else name)
        target.write_bytes(gzip.compress(text.encode()) if name in gz else text.encode())
    return folder


def test_load_beir_reads_gzip_files(tmp_path):
    s = load_beir(_beir(tmp_path / "gz", set(BEIR)))
    assert s.queries == {"q1": "what ties?"} and s.candidates == {"q1": ["d1", "d2"]}
    assert s.docs == {"d1": "T one", "d2": "two"}
    assert [p.name for p in s.inputs] == [
        "qrels.txt.gz",
        "candidates.run.gz",
        "queries.jsonl.gz",
        "corpus.jsonl.gz",
    ]
    a = load_beir(tmp_path / "gz", queries="all")
    assert a.candidates == {"q1": ["d1", "d2"], "q2": ["d3"]} and a.docs["d3"] == "three"


def test_load_beir_prefers_the_plain_file_to_its_gz(tmp_path):
    folder = _beir(tmp_path / "mixed", {"corpus.jsonl"})
    (folder / "queries.jsonl.gz").write_bytes(
        gzip.compress(b'{"_id": "q1", "text": "from the gz"}\n')
    )
    s = load_beir(folder)
    assert (
        s.queries == {"q1": "what ties?"}
        and s.corpus_path.name == "corpus.jsonl.gz"
        and s.docs["d1"] == "T one"
    )


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda raw: raw[:-6], "corrupt or truncated gzip data"),
        (
            lambda raw: raw[:12] + bytes(b ^ 0xFF for b in raw[12:20]) + raw[20:],
            "corrupt or truncated gzip data",
        ),
        (
            lambda raw: gzip.compress(b'{"_id": "d1", "text": "one"}\nnot json\n'),
            "corpus.jsonl.gz:2: not valid JSON",
        ),
    ],
)
def test_load_beir_reports_a_bad_gzip_file_by_name(tmp_path, damage, message):
    folder = _beir(tmp_path / "bad", {"corpus.jsonl"})
    target = folder / "corpus.jsonl.gz"
    target.write_bytes(damage(target.read_bytes()))
    with pytest.raises(TierankInputError, match=message) as exc:
        load_beir(folder)
    assert "corpus.jsonl.gz" in str(exc.value)


def test_rerank_reports_a_truncated_gzip_corpus_in_one_line(tmp_path):
    pytest.importorskip("torch", reason="tierank rerank needs the models extra")
    folder = _beir(tmp_path / "bad", {"corpus.jsonl"})
    target = folder / "corpus.jsonl.gz"
    target.write_bytes(target.read_bytes()[:-6])
    (
        tmp_path / "model"
    ).mkdir()  # a local model folder: the data are read before any model is loaded
    p = invoke(
        "rerank",
        "--data",
        folder,
        "--model",
        f"cross:{tmp_path / 'model'}",
        "-o",
        tmp_path / "out",
        check=False,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{target}: corrupt or truncated gzip data" in p.stderr


def test_load_beir_names_the_gz_alternative_when_a_file_is_missing(tmp_path):
    folder = _beir(tmp_path / "nocorpus", set())
    (folder / "corpus.jsonl").unlink()
    with pytest.raises(
        TierankInputError, match=r"no corpus file \(looked for corpus.jsonl, each also with .gz\)"
    ):
        load_beir(folder)


# -- sweep --write-runs ---------------------------------------------------------------------------

RUN = "".join(
    f"q{q} Q0 d{d} {d + 1} {s!r} t\n"
    for q in range(3)
    for d, s in enumerate([1.2345678, 1.2345677, 0.5, 0.30000001, 0.3, 0.1 * q])
)
QRELS = "".join(f"q{q} 0 d{d} {int(d in (1, 3, 5))}\n" for q in range(3) for d in range(6))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "sys.run").write_text(RUN)
    (tmp_path / "q.txt").write_text(QRELS)
    return tmp_path


def test_sweep_write_runs_writes_one_exact_run_per_format(files):
    out = files / "runs"
    p = invoke(
        "sweep",
        files / "q.txt",
        files / "sys.run",
        "-m",
        "nDCG@5",
        "-m",
        "RR",
        "--formats",
        "fp32,bf16,int8,sig2,band1.4",
        "-f",
        "json",
        "--write-runs",
        out,
    )
    rows = json.loads(p.stdout)["rows"]
    assert sorted(x.name for x in out.iterdir()) == sorted(
        f"sys.{f}.run" for f in ("fp32", "bf16", "int8", "sig2", "band1.4")
    )
    assert p.stderr.count("wrote ") == 5
    for f in ("fp32", "bf16", "int8", "sig2", "band1.4"):
        ev = json.loads(
            invoke(
                "eval",
                files / "q.txt",
                out / f"sys.{f}.run",
                "-m",
                "nDCG@5",
                "-m",
                "RR",
                "-f",
                "json",
            ).stdout
        )["aggregate"]
        for r in (r for r in rows if r["format"] == f):
            (e,) = [e for e in ev if e["measure"] == r["measure"]]
            assert {k: e[k] for k in ("oblivious", "expected", "min", "max")} == {
                k: r[k] for k in ("oblivious", "expected", "min", "max")
            }, (f, r["measure"])
    bf16 = (out / "sys.bf16.run").read_text().splitlines()
    assert bf16[0].split()[3:] == ["1", "1.234375", "sys.bf16"]  # rank, exact bf16 value, tag
    assert bf16[1].split()[4] == "1.234375"  # the two close fp32 scores tie in bf16


def test_sweep_write_runs_names_a_gz_run_without_suffixes(tmp_path):
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(RUN.encode()))
    (tmp_path / "q.txt").write_text(QRELS)
    invoke(
        "sweep",
        tmp_path / "q.txt",
        tmp_path / "a.run.gz",
        "--formats",
        "bf16",
        "--write-runs",
        tmp_path / "o",
    )
    assert [x.name for x in (tmp_path / "o").iterdir()] == ["a.bf16.run"]


def test_sweep_write_runs_refuses_before_any_work(files):
    (files / "afile").write_text("x")
    p = invoke(
        "sweep",
        files / "q.txt",
        files / "sys.run",
        "--formats",
        "fp32",
        "--write-runs",
        files / "afile",
        check=False,
    )
    assert (
        p.returncode == 2
        and "afile: is not a directory" in p.stderr
        and "Traceback" not in p.stderr
    )
    # a target that is one of the inputs: nothing is written, not even the other formats
    (files / "d").mkdir()
    (files / "d" / "sys.bf16.run").write_text(QRELS)
    p = invoke(
        "sweep",
        files / "d" / "sys.bf16.run",
        files / "sys.run",
        "--formats",
        "fp32,bf16",
        "--write-runs",
        files / "d",
        check=False,
    )
    assert p.returncode == 2 and "refusing to overwrite an input" in p.stderr
    assert sorted(x.name for x in (files / "d").iterdir()) == ["sys.bf16.run"]
    assert (files / "d" / "sys.bf16.run").read_text() == QRELS


@pytest.mark.slow
def test_the_tests_data_files_are_the_shared_files(shared_data):
    """tests/data (and so the default tier's real data) is byte for byte the team's ../shared/data;
    rag24's corpus and queries are its subset, in order."""
    from realdata import DATA, SOURCE, TREC_EVAL_SOURCE

    subset = {"rag24/corpus.jsonl", "rag24/queries.jsonl"}
    HAND_MADE = (
        "diversity/"  # tests/data/diversity: hand-made, not from ../shared (tests/data/README.md)
    )
    for p in DATA.rglob("*"):
        rel = p.relative_to(DATA).as_posix()
        if (
            p.is_file()
            and rel != ".complete"
            and rel not in subset
            and not rel.startswith(HAND_MADE)
        ):
            assert p.read_bytes() == (shared_data / rel).read_bytes(), rel
    for rel in subset:
        full = (shared_data / rel).read_bytes().splitlines(keepends=True)
        part = (DATA / rel).read_bytes().splitlines(keepends=True)
        it = iter(full)
        assert len(part) > 30 and all(line in it for line in part), rel  # an ordered subsequence
    vendor = shared_data.parent / "vendor" / "trec_eval-10.0"
    for p in vendor.rglob("*"):
        if p.is_file():
            assert p.read_bytes() == (TREC_EVAL_SOURCE / p.relative_to(vendor)).read_bytes(), p
    assert sorted(x.name for x in SOURCE.iterdir()) == [
        "README.md",
        "askubuntu",
        "diversity",
        "rag24",
        "trec_eval",
    ]
