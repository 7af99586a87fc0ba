"""One rule for every ``-o FILE`` of every command that writes text (`tierank.report.formats.file_format`):
the extension picks the format when ``-f`` is not given, a ``-f`` that contradicts it (or an
extension naming a format the command does not write) is one ``tierank: error:`` line and exit 2
with nothing written, and a trailing ``.gz`` compresses what is written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import tierank
from helpers import invoke

EXAMPLE = Path(tierank.__file__).parent / "examples"
QRELS, RUN = EXAMPLE / "figure1.qrels", EXAMPLE / "figure1.run"


@pytest.fixture(scope="module")
def run2(tmp_path_factory):
    p = tmp_path_factory.mktemp("systems") / "other.run"
    p.write_text(RUN.read_text())
    return p


#: every command that writes text with -o, its arguments
COMMANDS = {
    "eval": ("eval", QRELS, RUN, "-m", "RR"),
    "compare": ("compare", QRELS, RUN, "{run2}", "-m", "RR"),
    "ties": ("ties", RUN),
    "sweep": ("sweep", QRELS, RUN, "-m", "RR", "--formats", "fp32,bf16"),
    "similarity": ("similarity", RUN, "{run2}"),
}


def _args(name, run2):
    return [str(run2) if a == "{run2}" else a for a in COMMANDS[name]]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_extension_picks_the_format(name, run2, tmp_path):
    md = tmp_path / "out.md"
    invoke(*_args(name, run2), "-o", md)
    first = md.read_text().splitlines()[0]
    assert first.startswith("| ") and "─" not in md.read_text(), (
        first
    )  # markdown, not the box table
    js = tmp_path / "out.json"
    invoke(*_args(name, run2), "-o", js)
    assert isinstance(json.loads(js.read_text()), dict)
    explicit = tmp_path / "explicit.json"
    invoke(*_args(name, run2), "-o", explicit, "-f", "json")
    assert explicit.read_text() == js.read_text()


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_format_contradicting_the_extension_is_refused(name, run2, tmp_path):
    out = tmp_path / "c.json"
    p = invoke(*_args(name, run2), "-o", out, "-f", "latex", check=False)
    assert p.returncode == 2 and not out.exists() and p.stdout == ""
    assert p.stderr.splitlines() == [
        f"tierank: error: -o {out}: a .json file is written as --format json, but "
        "--format latex is given: drop -f, or name the file otherwise"
    ]


def test_compare_writes_every_records_format_by_its_extension(run2, tmp_path):
    out = tmp_path / "c.tsv"
    invoke(*_args("compare", run2), "-o", out)
    header = out.read_text().splitlines()[0].split("\t")
    assert header[:3] == ["name", "expected", "min"]


def test_an_extension_the_command_does_not_write_is_refused(tmp_path):
    from types import SimpleNamespace

    from tierank.cli.common import choices_enum, output_format
    from tierank.errors import TierankInputError

    only = choices_enum("Only", ("table", "json"))
    ctx = SimpleNamespace(
        get_parameter_source=lambda _: SimpleNamespace(name="DEFAULT"),
        command=SimpleNamespace(name="demo"),
    )
    out = tmp_path / "c.tsv"
    with pytest.raises(TierankInputError) as e:
        output_format(ctx, only("table"), out, only)
    (line,) = str(e.value).splitlines()
    assert line.startswith(f"-o {out}: a .tsv file is written as --format tsv, ")
    assert "tierank demo does not write (its formats: table, json)" in line


@pytest.mark.parametrize(
    ("name", "suffix"),
    [
        (n, s)
        for n in COMMANDS
        for s in (".tsv", ".md", ".txt")
        if (n, s) != ("compare", ".tsv")  # compare writes no tsv (refused above)
    ],
)
def test_gz_compresses_whatever_the_format(name, suffix, run2, tmp_path):
    plain, packed = tmp_path / f"o{suffix}", tmp_path / f"o{suffix}.gz"
    invoke(*_args(name, run2), "-o", plain)
    invoke(*_args(name, run2), "-o", packed)
    data = packed.read_bytes()
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data) == plain.read_bytes()


def test_gz_with_the_format_named_under_it(tmp_path):
    out = tmp_path / "o.tsv.gz"
    invoke("eval", QRELS, RUN, "-m", "RR", "-o", out)
    assert gzip.decompress(out.read_bytes()).decode().startswith("query\tmeasure\t")
    p = invoke(
        "eval", QRELS, RUN, "-m", "RR", "-o", tmp_path / "x.tsv.gz", "-f", "csv", check=False
    )
    assert p.returncode == 2 and "a .tsv.gz file is written as --format tsv" in p.stderr


@pytest.mark.parametrize("name", ["r.json", "r.md", "r.html.gz"])
def test_report_refuses_a_name_of_another_format(name, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / name
    p = invoke("report", "eval", QRELS, RUN, "-o", out, check=False)
    assert p.returncode == 2 and not out.exists()
    (line,) = p.stderr.splitlines()
    assert line.startswith(f"tierank: error: -o {out}: a .") and "name the file .html" in line
