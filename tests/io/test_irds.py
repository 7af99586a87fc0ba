"""Issue 23: one door for inputs, proved by ir_datasets (``irds:DATASET_ID`` qrels) added through it alone.

No download: ir_datasets is replaced by a fake module in ``sys.modules`` (in this process, and in the
subprocess of the command line), whose ``load`` gives a local dataset object.  Also the registry itself
(a kind added by a test), and the role check of an Arrow file reading its schema only.
"""

from __future__ import annotations

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
