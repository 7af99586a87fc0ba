"""Issue 23: one door for inputs, proved by ir_datasets (``irds:DATASET_ID`` qrels) added through it alone.

No download: ir_datasets is replaced by a fake module in ``sys.modules`` (in this process, and in the
subprocess of the command line), whose ``load`` gives a local dataset object.  Also the registry itself
(a kind added by a test), and the role check of an Arrow file reading its schema only.
"""

from __future__ import annotations

import gzip
import logging
import os
import subprocess
import sys
import types
from collections import namedtuple

import pyarrow as pa
import pytest

import tierank
from tierank import TierankInputError
from tierank.extras import MissingExtra
from tierank.io import sources
from tierank.io.convert import to_qrels, to_run

TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])

QRELS = [TrecQrel("q1", "d1", 1, "0"), TrecQrel("q1", "d2", 0, "0"), TrecQrel("q2", "d3", 2, "0")]
RUN = {"q1": {"d1": 0.5, "d2": 0.5, "d9": 0.1}, "q2": {"d3": 0.9, "d4": 0.9}}


class FakeDataset:
    def __init__(self, qrels):
        self.qrels = qrels

    def has_qrels(self) -> bool:
        return self.qrels is not None

    def qrels_iter(self):
        yield from self.qrels


def fake_ir_datasets() -> types.ModuleType:
    mod = types.ModuleType("ir_datasets")
    data = {"fake/test": FakeDataset(QRELS), "fake/docs-only": FakeDataset(None)}

    def load(name):
        return data[name]  # an unknown id: KeyError, as ir_datasets raises

    mod.load = load
    return mod


@pytest.fixture
def irds(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", fake_ir_datasets())


def test_irds_qrels_are_read_through_the_door(irds):
    q = to_qrels("irds:fake/test")
    assert q.source == "irds:fake/test"
    assert (q.qid.to_pylist(), q.docid.to_pylist(), q.grade.tolist()) == (
        ["q1", "q1", "q2"],
        ["d1", "d2", "d3"],
        [1.0, 0.0, 2.0],
    )
    assert sources.kind_of("irds:fake/test", "qrels").name == "irds"


def test_irds_qrels_evaluate_as_the_same_qrels_given_as_a_dict(irds):
    as_dict = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    a = tierank.evaluate("irds:fake/test", RUN, ["P@1", "nDCG@10"]).aggregate()
    b = tierank.evaluate(as_dict, RUN, ["P@1", "nDCG@10"]).aggregate()
    assert a.to_dict() == b.to_dict()


def test_irds_refusals_are_one_line(irds):
    for text, reason in [
        ("irds:nope/x", "ir_datasets has no dataset 'nope/x'"),
        ("irds:fake/docs-only", "dataset 'fake/docs-only' has no qrels"),
        ("irds:", "no dataset id"),
    ]:
        with pytest.raises(TierankInputError) as e:
            to_qrels(text)
        assert len(e.value.problems) == 1 and reason in str(e.value), str(e.value)
    with pytest.raises(TierankInputError, match="gives qrels here, not a run"):
        to_run("irds:fake/test")


def test_missing_ir_datasets_is_one_line_naming_the_install(monkeypatch):
    monkeypatch.setitem(
        sys.modules, "ir_datasets", None
    )  # import ir_datasets now fails, as without the extra
    with pytest.raises(MissingExtra) as e:
        to_qrels("irds:fake/test")
    assert (
        str(e.value)
        == "irds:fake/test needs ir_datasets, which is not installed: pip install 'tierank[irds]'"
    )


def _cli(module: str, *args) -> subprocess.CompletedProcess:
    """`tierank ARGS...` in a Python whose `ir_datasets` is ``module`` (code defining it, or None)."""
    code = (
        f"import sys; {module}; sys.argv = ['tierank', *sys.argv[1:]]; "
        "from tierank.cli import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True
    )


FAKE = (
    "import types, collections; T = collections.namedtuple('T', 'query_id doc_id relevance iteration'); "
    "m = types.ModuleType('ir_datasets'); "
    "m.load = lambda name: type('D', (), {'has_qrels': lambda self: True, 'qrels_iter': lambda self: iter("
    "[T('q1', 'd1', 1, '0'), T('q2', 'd3', 2, '0')])})(); sys.modules['ir_datasets'] = m"
)


def test_cli_evaluates_irds_qrels(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d3 1 0.9 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d3 2\n")
    p = _cli(FAKE, "eval", "irds:fake/test", run, "-m", "P@1", "-f", "tsv")
    assert p.returncode == 0, p.stderr
    same = _cli("pass", "eval", qrels, run, "-m", "P@1", "-f", "tsv")
    assert p.stdout == same.stdout


def test_cli_without_ir_datasets_is_one_line_and_exit_2(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 0.5 t\n")
    p = _cli("sys.modules['ir_datasets'] = None", "eval", "irds:msmarco-passage/dev/small", run)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "tierank: error: irds:msmarco-passage/dev/small needs ir_datasets, which is "
        "not installed: pip install 'tierank[irds]'"
    ]


def test_a_kind_registered_alone_is_read_by_every_door(monkeypatch):
    """The door: a new source is one kind (recognise + read), registered once; to_run and evaluate use it."""
    kind = sources.SourceKind(
        "memo",
        lambda obj: isinstance(obj, str) and obj.startswith("memo:"),
        {"run": lambda obj, source, **_: (RUN, source or obj)},
    )
    monkeypatch.setattr(sources, "KINDS", list(sources.KINDS))
    sources.register(kind)
    assert to_run("memo:x").source == "memo:x"
    assert len(to_run("memo:x")) == 5
    with pytest.raises(ValueError, match="registered already"):
        sources.register(kind)


def test_arrow_roles_read_the_schema_only(tmp_path, monkeypatch):
    import pyarrow.feather as feather

    qrels, run = tmp_path / "qrels.arrow", tmp_path / "run.arrow"
    feather.write_feather(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]}), qrels)
    feather.write_feather(
        pa.table({"query_id": ["q1"], "doc_id": ["d1"], "score": [0.5], "rank": [1]}), run
    )

    def whole(path):
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(sources, "read_table", whole)
    assert sources.input_role(qrels) == ("qrels", "its column 'relevance' holds judgments")
    assert sources.input_role(run)[0] == "run"
    sources.check_roles(qrels, run)
    with pytest.raises(TierankInputError, match="did you swap QRELS and RUN"):
        sources.check_roles(run, qrels)


def test_every_stream_source_is_split_by_its_kind(tmp_path):
    import gzip

    text = b"q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq2 Q0 a 1 3 t\n"
    plain, gz = tmp_path / "run", tmp_path / "run.gz"
    plain.write_bytes(text)
    gz.write_bytes(gzip.compress(text, mtime=0))
    assert [t[0] for t in sources.tasks(plain, 5)] == ["range", "range"]
    assert [t[0] for t in sources.tasks(gz, 5)] == ["text", "text"]
    assert [len(r) for r in sources.batches_of(gz, 5)] == [2, 1]
    assert [sources.stream_kind(p).name for p in (plain, gz, tmp_path)] == [
        "text",
        "text-stream",
        "folder",
    ]
    assert sources.kind_of(gz, "run").name == "text-stream"


# ------------------------------------------------ ir_datasets itself: its reader, cache, logs and import


@pytest.fixture(scope="module")
def real_irds(tmp_path_factory):
    """The installed ir_datasets (imported with a temporary IR_DATASETS_HOME: its import makes it)."""
    home = tmp_path_factory.mktemp("irds-home")
    old = sys.modules.get("ir_datasets")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IR_DATASETS_HOME", str(home))
        mod = old or pytest.importorskip("ir_datasets")
    return mod


def cached(real_irds, monkeypatch, path, *, log=()):
    """``irds:cached/test`` read by ir_datasets' own TREC qrels reader from the file ``path`` (as from
    its cache); ``log``: (level name, message) pairs ir_datasets logs while it loads the dataset."""
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    def load(name):
        if name != "cached/test":
            raise KeyError(name)
        for level, message in log:
            real_irds.log.easy().log(level, message)  # as ir_datasets logs
        return real_irds.Dataset(TrecQrels(LocalDownload(str(path)), {}))

    monkeypatch.setattr(real_irds, "load", load)
    monkeypatch.setitem(sys.modules, "ir_datasets", real_irds)
    return "irds:cached/test"


def refusal(source) -> str:
    with pytest.raises(TierankInputError) as e:
        to_qrels(source)
    assert len(e.value.problems) == 1
    return str(e.value)


@pytest.mark.parametrize(
    "lines, where, reason",
    [
        (b"q1 0 d1 1\n\nq1 0 d2\nq2 0 d3 2\n", 3, "expected 4 columns, got 3 in 'q1 0 d2'"),
        (b"q1 0 d1 1 x\n", 1, "expected 4 columns, got 5 in 'q1 0 d1 1 x'"),
        (b"q1 0 d1 1\nq1 0 d2 high\n", 2, "invalid literal for int() with base 10: 'high'"),
        (b"q1 0 d1 1\n\n\nq1 0 d\xff 1\n", 4, "not UTF-8 text (invalid start byte)"),
    ],
)
def test_a_bad_line_of_the_cached_qrels_is_named_by_file_and_line(
    real_irds, monkeypatch, tmp_path, lines, where, reason
):
    path = tmp_path / "qrels"
    path.write_bytes(lines)
    message = refusal(cached(real_irds, monkeypatch, path))
    assert message.startswith(f"{path}:{where}: {reason}"), message
    assert message.endswith(
        "(the cached qrels of irds:cached/test: delete the file to download it again)"
    )


def test_a_gzipped_cached_file_is_named_by_its_judgment(real_irds, monkeypatch, tmp_path):
    """No line of a compressed file can be shown: the failing judgment's number instead."""
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import GzipExtract, LocalDownload

    path = tmp_path / "qrels.gz"
    path.write_bytes(gzip.compress(b"q1 0 d1 1\nq1 0 d2 1\nq1 0\n", mtime=0))
    monkeypatch.setattr(
        real_irds,
        "load",
        lambda name: real_irds.Dataset(TrecQrels(GzipExtract(LocalDownload(str(path))), {})),
    )
    monkeypatch.setitem(sys.modules, "ir_datasets", real_irds)
    assert refusal("irds:gz/test") == (
        f"{path}: judgment 3: expected 4 columns, got 2 (the cached qrels of irds:gz/test: "
        "delete the file to download it again)"
    )


def test_an_empty_cached_qrels_file_is_refused_naming_it(real_irds, monkeypatch, tmp_path):
    path = tmp_path / "qrels"
    path.write_bytes(b"\n\n")
    assert refusal(cached(real_irds, monkeypatch, path)) == (
        f"irds:cached/test: empty qrels: ir_datasets gives no judgments (its cached file {path} "
        "is empty: delete it to download it again)"
    )


def test_a_cached_qrels_that_is_a_folder_is_one_line(real_irds, monkeypatch, tmp_path):
    assert refusal(cached(real_irds, monkeypatch, tmp_path)) == (
        f"irds:cached/test: cannot read the qrels: Is a directory: {tmp_path}"
    )


def test_ir_datasets_logs_are_held_back_on_failure_and_passed_on_after_success(
    real_irds, monkeypatch, tmp_path, capsys
):
    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Catch()
    logger = logging.getLogger("ir_datasets")
    logger.addHandler(handler)
    try:
        bad, good = tmp_path / "bad", tmp_path / "good"
        bad.write_bytes(b"q1 0 d1\n")
        good.write_bytes(b"q1 0 d1 1\n")
        log = [("INFO", "[starting] reading"), ("WARNING", "Download failed: offline")]
        capsys.readouterr()
        refusal(cached(real_irds, monkeypatch, bad, log=log))
        assert seen == [] and capsys.readouterr().err == ""
        assert len(to_qrels(cached(real_irds, monkeypatch, good, log=log))) == 1
        assert seen == ["[starting] reading", "Download failed: offline"]
        assert capsys.readouterr().err.splitlines() == [  # ir_datasets' own handler, on stderr
            "[INFO] [starting] reading",
            "[WARNING] Download failed: offline",
        ]
    finally:
        logger.removeHandler(handler)
    assert logger.filters == []  # nothing of tierank's is left on ir_datasets' logger


def test_a_failed_download_is_one_line_with_ir_datasets_warning(monkeypatch, capfd):
    """ir_datasets logs ``[WARNING] Download failed: ...`` and raises; only tierank's line is left."""
    mod = types.ModuleType("ir_datasets")

    class Offline:
        def has_qrels(self):
            return True

        def qrels_iter(self):
            logging.getLogger("ir_datasets").warning("Download failed: no route to host")
            raise ConnectionError("no route to host")
            yield

        def qrels_path(self):
            raise AssertionError("asked for the path: a second download")

    mod.load = lambda name: Offline()
    monkeypatch.setitem(sys.modules, "ir_datasets", mod)
    assert refusal("irds:far/away") == (
        "irds:far/away: ir_datasets cannot download the qrels (no network?): no route to host"
    )
    assert capfd.readouterr().err == ""


def test_a_dataset_ir_datasets_cannot_load_is_one_line(monkeypatch):
    mod = types.ModuleType("ir_datasets")

    def load(name):
        raise PermissionError(13, "Permission denied", "/cache/x/docs.pklz4")

    mod.load = load
    monkeypatch.setitem(sys.modules, "ir_datasets", mod)
    assert refusal("irds:x") == (
        "irds:x: ir_datasets cannot load the dataset: Permission denied: /cache/x/docs.pklz4"
    )


def test_an_unusable_ir_datasets_home_is_one_line(monkeypatch, tmp_path):
    """ir_datasets makes IR_DATASETS_HOME when it is imported: a file there fails that import."""
    pytest.importorskip("ir_datasets")
    home = tmp_path / "a-file"
    home.write_text("")
    before = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "ir_datasets"}
    for name in before:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    try:
        message = refusal("irds:antique/test")
    finally:
        for name in [k for k in sys.modules if k.split(".")[0] == "ir_datasets"]:
            del sys.modules[name]  # the half-imported package; monkeypatch puts the first back
    assert message == (
        f"irds:antique/test: ir_datasets cannot use its cache folder IR_DATASETS_HOME={home} "
        f"({home} is not a folder); point IR_DATASETS_HOME at a folder it can write"
    )


@pytest.mark.full
@pytest.mark.subprocess
def test_cli_with_a_real_cache_folder(tmp_path):
    """The real thing: ir_datasets' antique/test whose cached qrels file is bad, empty, or not there
    (no network here: the download fails); stderr is tierank's one line, exit 2."""
    pytest.importorskip("ir_datasets")
    home = tmp_path / "home"
    (home / "antique" / "test").mkdir(parents=True)
    cache = home / "antique" / "test" / "qrels"
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 0.5 t\n")
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}

    def cli():
        return subprocess.run(
            [sys.executable, "-m", "tierank.cli", "eval", "irds:antique/test", str(run)],
            capture_output=True,
            text=True,
            env=env,
        )

    cache.write_text("q1 Q0 d1 1\nq1 Q0 d2\n")
    p = cli()
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.splitlines() == [
        f"tierank: error: {cache}:2: expected 4 columns, got 3 in 'q1 Q0 d2' (the cached qrels of "
        "irds:antique/test: delete the file to download it again)"
    ]
    cache.write_text("")
    p = cli()
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "empty qrels" in p.stderr
    cache.unlink()
    p = cli()
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith("tierank: error: irds:antique/test: ir_datasets cannot download")
    env["IR_DATASETS_HOME"] = str(run)
    p = cli()
    assert p.returncode == 2 and p.stderr.splitlines() == [
        f"tierank: error: irds:antique/test: ir_datasets cannot use its cache folder "
        f"IR_DATASETS_HOME={run} ({run} is not a folder); point IR_DATASETS_HOME at a folder it "
        "can write"
    ]
