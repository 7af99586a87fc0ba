"""Refusals of the command line: one `tierank: error:` line per problem, exit 2, no traceback,
and every refusal that does not depend on the inputs' contents happens before any work."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tierank
from helpers import invoke
from tierank.report.formats import names as format_names

EXAMPLE = tierank.__file__.rsplit("/", 1)[0] + "/examples/"
QRELS, RUN = EXAMPLE + "figure1.qrels", EXAMPLE + "figure1.run"


@pytest.fixture(scope="module")
def run2(tmp_path_factory):
    """A second system: a copy of RUN under another name (the same file twice is refused)."""
    p = tmp_path_factory.mktemp("systems") / "other.run"
    p.write_text(open(RUN).read())
    return p


def _errors(p: subprocess.CompletedProcess) -> list[str]:
    """stderr's lines, after checking that the command failed cleanly with exit 2."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert lines and all(line.startswith("tierank: error: ") for line in lines), p.stderr
    return lines


def run_without_matplotlib(*args) -> subprocess.CompletedProcess:
    """`tierank ARGS...` in a Python where `import matplotlib` fails, as in an install without the extra."""
    code = (
        "import sys; sys.modules['matplotlib'] = None; sys.argv = ['tierank', *sys.argv[1:]]; "
        "from tierank.cli import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "args",
    [
        ("plot", "cutoff", QRELS, RUN),
        ("plot", "ranges", RUN, RUN, "--qrels", QRELS),
        ("plot", "sweep", QRELS, RUN),
        ("plot", "ties", RUN),
        ("report", "eval", QRELS, RUN),
        ("report", "sweep", QRELS, RUN),
        ("report", "compare", RUN, RUN, "--qrels", QRELS),
        ("report", "rerank", RUN),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_missing_matplotlib_is_one_line_with_the_install_command(args, tmp_path):
    out = tmp_path / "fig"
    p = run_without_matplotlib(*args, "-o", out)
    what = f"tierank {args[0]}"
    assert _errors(p) == [
        f"tierank: error: {what} needs matplotlib, which is not installed: "
        'pip install "tierank[report]"'
    ]
    assert list(tmp_path.iterdir()) == []


def test_missing_matplotlib_is_reported_before_the_inputs_are_read(tmp_path):
    p = run_without_matplotlib("plot", "ties", tmp_path / "missing.run", "-o", tmp_path / "fig")
    assert _errors(p) == [
        "tierank: error: tierank plot needs matplotlib, which is not installed: "
        'pip install "tierank[report]"'
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("compare", RUN, RUN, "--qrels", QRELS),
        ("plot", "ranges", RUN, RUN, "--qrels", QRELS, "-o", "{tmp}/fig"),
        ("plot", "sweep", QRELS, RUN, "-o", "{tmp}/fig"),
        ("report", "compare", RUN, RUN, "--qrels", QRELS, "-o", "{tmp}/r.html"),
    ],
    ids=lambda a: " ".join(x for x in a[:2] if "/" not in x),
)
def test_one_measure_commands_refuse_two(args, tmp_path):
    """`-m P@1 -m RR` used to compare RR alone, silently."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    p = invoke(*args, "-m", "P@1", "-m", "RR", check=False)
    assert _errors(p) == [
        "tierank: error: -m/--measure takes one measure here, got 2: P@1, RR; "
        "run the command once per measure"
    ]
    assert list(tmp_path.iterdir()) == []


def test_plot_cutoff_refuses_two_families(tmp_path):
    p = invoke(
        "plot", "cutoff", QRELS, RUN, "-m", "nDCG", "-m", "P", "-o", tmp_path / "fig", check=False
    )
    assert "takes one measure here, got 2: nDCG, P" in _errors(p)[0]


def test_compare_with_one_measure_uses_it(run2):
    doc = json.loads(
        invoke("compare", RUN, run2, "--qrels", QRELS, "-m", "RR", "-f", "json").stdout
    )
    assert doc["measure"] == "RR" and [s["name"] for s in doc["systems"]] == [
        "figure1.run",
        "other.run",
    ]


@pytest.mark.parametrize("fmt", ["trec_eval", "xml"])
def test_compare_format_offers_only_what_it_writes(fmt):
    """`compare --format` lists the records formats of the catalogue; another is refused before any
    comparison, naming the choices."""
    p = invoke("compare", RUN, RUN, "--qrels", QRELS, "-f", fmt, check=False)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    choices = ", ".join(f"'{f}'" for f in format_names("records"))
    assert f"'{fmt}' is not one of {choices}." in " ".join(p.stderr.replace("│", " ").split())


def _bad_run(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 nan x\n")
    return bad


@pytest.mark.parametrize(
    "args",
    [
        ("eval", QRELS, "{bad}"),
        ("eval", QRELS, "{bad}", "-f", "jsonl"),
        ("ties", "{bad}"),
        ("sweep", QRELS, "{bad}"),
        ("compare", "{bad}", RUN, "--qrels", QRELS),
        ("report", "eval", QRELS, "{bad}"),
        ("report", "sweep", QRELS, "{bad}"),
        ("report", "compare", "{bad}", RUN, "--qrels", QRELS),
    ],
    ids=lambda a: " ".join(x for x in a[:2] if "/" not in x and "{" not in x),
)
def test_output_is_checked_before_any_input_is_read(args, tmp_path):
    """A bad -o is refused first: the run's bad line is never reached (it used to be, after the whole
    evaluation)."""
    bad = _bad_run(tmp_path)
    target = tmp_path / "out"
    target.mkdir()
    p = invoke(*[a.replace("{bad}", str(bad)) for a in args], "-o", target, check=False)
    assert _errors(p) == [f"tierank: error: {target}: is a directory, expected an output file path"]


def test_output_that_is_an_input_is_refused_before_reading(tmp_path):
    bad = _bad_run(tmp_path)
    p = invoke("eval", QRELS, bad, "-o", QRELS, check=False)
    assert _errors(p) == [
        f"tierank: error: {QRELS}: refusing to overwrite an input file with the output"
    ]


def test_special_file_output_is_refused(tmp_path):
    p = invoke("eval", QRELS, _bad_run(tmp_path), "-o", "/dev/null", check=False)
    assert _errors(p) == [
        "tierank: error: /dev/null: is a special file (character device), not a regular file; "
        "use -o - to write to stdout"
    ]


@pytest.mark.parametrize(
    "cmd", [("plot", "ties"), ("plot", "cutoff", QRELS)], ids=["plot ties", "plot cutoff"]
)
def test_figure_outputs_are_checked_before_reading(cmd, tmp_path):
    bad = _bad_run(tmp_path)
    (tmp_path / "fig.svg").mkdir()
    p = invoke(*cmd, bad, "-o", tmp_path / "fig", check=False)
    assert _errors(p) == [
        f"tierank: error: {tmp_path / 'fig.svg'}: is a directory, expected an output file path"
    ]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad.run", "fig.svg"]


def test_figure_into_a_new_folder_still_works(tmp_path):
    out = tmp_path / "new" / "deeper" / "fig"
    p = invoke("plot", "ties", RUN, "-o", out)
    assert p.stdout.split() == [f"{out}.png", f"{out}.svg"]
    assert (tmp_path / "new" / "deeper" / "fig.png").read_bytes()[:4] == b"\x89PNG"


def test_names_with_markup_are_shown_as_written(tmp_path):
    """A run named `[red]a.run` lost its `[red]` in the table (read as rich markup)."""
    run = tmp_path / "[red]a.run"
    run.write_text(open(RUN).read())
    out = invoke("ties", run).stdout
    assert "[red]a.run" in out


def test_a_missing_dependency_found_late_is_one_line(capsys):
    """A tierank ImportError raised inside a command (not caught up front by `require`) is one line too."""
    import typer

    from tierank.cli.common import input_errors
    from tierank.report.plots import MissingMatplotlib

    @input_errors
    def command():
        raise MissingMatplotlib("tierank figures need matplotlib: pip install matplotlib")

    with pytest.raises(typer.Exit) as e:
        command()
    assert e.value.exit_code == 2
    assert (
        capsys.readouterr().err
        == "tierank: error: tierank figures need matplotlib: pip install matplotlib\n"
    )


# -- numbers out of range: one located line, never a traceback or an endless run -------------------


@pytest.mark.parametrize("rho", ["1e309", "inf", "nan", "-inf"])
def test_bands_refuses_a_rho_that_is_not_finite(rho):
    """`bands --rho 1e309` ended in a ValueError traceback from Fraction('inf')."""
    p = invoke("bands", "--rho", rho, check=False)
    value = {"1e309": "inf"}.get(rho, rho)
    assert _errors(p) == [
        f"tierank: error: band parameter rho must be a finite number > 1, got {value}"
    ]


def test_bands_refuses_a_rho_too_large_for_ranks():
    """`--rho 1e300` overflowed int64 in band_starts (traceback)."""
    p = invoke("bands", "--rho", "1e300", "--p", "0.5", "--depth", "10", "-f", "tsv")
    assert p.stdout.splitlines()[0].split("\t") == ["rho", "RR", "RBP(p=0.5)"]


@pytest.mark.parametrize(
    "cmd", [("compare",), ("report", "compare")], ids=["compare", "report compare"]
)
def test_compare_refuses_a_band_that_is_not_finite(cmd, tmp_path, run2):
    out = ("-o", tmp_path / "r.html") if cmd[0] == "report" else ()
    p = invoke(*cmd, QRELS, RUN, run2, "--band", "1e309", *out, check=False)
    assert _errors(p) == ["tierank: error: band parameter rho must be a finite number > 1, got inf"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "cmd",
    [
        ("report", "eval", QRELS, RUN, "-o", "{tmp}/r.html"),
        ("plot", "cutoff", QRELS, RUN, "-o", "{tmp}/fig"),
    ],
    ids=["report eval", "plot cutoff"],
)
@pytest.mark.parametrize("kmax", ["1001", "100000000", "99999999999"])
def test_kmax_is_bounded(cmd, kmax, tmp_path):
    """`report eval --kmax 100000000` ended in MemoryError; `plot cutoff --kmax 99999999999` never finished."""
    p = invoke(*[str(a).replace("{tmp}", str(tmp_path)) for a in cmd], "--kmax", kmax, check=False)
    assert _errors(p) == [f"tierank: error: kmax must be between 1 and 1000, got {kmax}"]
    assert list(tmp_path.iterdir()) == []


def _rerank_table(tmp_path, rows) -> str:
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"settings": {"model": "m"}, "rows": rows}))
    return str(table)


ROW = {
    "variant": "fp32",
    "measure": "nDCG@10",
    "fp32": 0.5,
    "oblivious": 0.5,
    "expected": 0.5,
    "range": 0.0,
    "bias": 0.0,
    "min": 0.5,
    "max": 0.5,
}


@pytest.mark.parametrize(
    "rows, reason",
    [
        ([{k: v for k, v in ROW.items() if k != "min"}], "row 1 has no 'min'"),
        (
            [ROW, {k: v for k, v in ROW.items() if k not in ("max", "variant")}],
            "row 2 has no 'variant', 'max'",
        ),
        ([ROW, {**ROW, "expected": "high"}], "row 2: 'expected' is 'high', not a number"),
        ([ROW, {**ROW, "model_s": [1]}], "row 2: 'model_s' is [1], not a number"),
        ([ROW, 3], "row 2 is not an object"),
        ({"a": ROW}, "'rows' is not a list"),
    ],
    ids=["no min", "two keys", "text", "list", "not an object", "rows not a list"],
)
def test_report_rerank_validates_the_table(rows, reason, tmp_path):
    """Rows without `min` ended in a KeyError traceback inside the report builder."""
    table = _rerank_table(tmp_path, rows)
    p = invoke("report", "rerank", table, "-o", tmp_path / "r.html", check=False)
    assert _errors(p) == [
        f"tierank: error: {table}: not a table.json of `tierank rerank`: {reason}"
    ]
    assert not (tmp_path / "r.html").exists()


def test_report_rerank_accepts_rows_without_the_optional_columns(tmp_path):
    table = _rerank_table(tmp_path, [ROW, {**ROW, "variant": "bf16", "min": 0.25, "range": 0.25}])
    out = tmp_path / "r.html"
    invoke("report", "rerank", table, "-o", out)
    assert "bf16" in out.read_text()


@pytest.mark.parametrize("rel", ["99999999999999999999", "-9007199254740993"])
@pytest.mark.parametrize(
    "cmd",
    [("eval", QRELS, RUN), ("sweep", QRELS, RUN), ("compare", QRELS, RUN, "{run2}")],
    ids=["eval", "sweep", "compare"],
)
def test_rel_has_the_measures_bound(cmd, rel, run2):
    """`--rel 99999999999999999999` was accepted while `P(rel=...)` caps rel at +-2**53."""
    p = invoke(*(str(run2) if a == "{run2}" else a for a in cmd), "--rel", rel, check=False)
    assert _errors(p) == [
        f"tierank: error: rel must lie in [-9007199254740992, 9007199254740992], got {rel}"
    ]


def test_rel_at_the_bound_is_accepted():
    assert invoke("eval", QRELS, RUN, "--rel", "9007199254740992", "-m", "P@2", "-f", "tsv").stdout


def test_a_repeated_measure_parameter_is_refused():
    """`RBP(p=0.5,p=0.6)` silently evaluated RBP(p=0.6)."""
    p = invoke("eval", QRELS, RUN, "-m", "RBP(p=0.5,p=0.6)", check=False)
    assert _errors(p) == ["tierank: error: measure 'RBP(p=0.5,p=0.6)': parameter p is given twice"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ("compare", QRELS, RUN, "{run2}", "--seed", "-1"),
            ["'--seed'", "'-1'", "not in the range x>=0"],
        ),
        (
            ("compare", QRELS, RUN, "{run2}", "--seed=-5"),
            ["'--seed'", "'-5'", "not in the range x>=0"],
        ),
        (("eval", QRELS, RUN, "--format", "xml"), ["'--format'", "'xml'", "'table'", "'latex'"]),
        (("eval", QRELS, RUN, "-fxml"), ["'--format'", "'xml'", "'table'"]),
        (("eval", QRELS, RUN, "-j", "abc"), ["'--jobs'", "'abc'", "not a valid int"]),
        (("eval", QRELS, RUN, "--bogus"), ["No such option: --bogus", "tierank eval --help"]),
        (("evl",), ["No such command 'evl'", "'eval'", "tierank --help"]),
        (("eval",), ["Missing argument 'QRELS'", "tierank eval --help"]),
        (("--bogus",), ["No such option: --bogus"]),
        (("plot", "cutoff", QRELS, RUN, "--bogus"), ["--bogus", "tierank plot cutoff --help"]),
        (("similarity", RUN, "{run2}", "-k", "x"), ["'-k'", "'x'", "not a valid int"]),
    ],
)
def test_option_errors_are_one_line(args, says, run2):
    """click's refusals (unknown option or command, a value of the wrong type, out of range or not a
    choice, a missing argument) are one `tierank: error:` line naming the option, the value given and
    what is allowed, exit 2: not click's usage box."""
    lines = _errors(invoke(*(str(a).format(run2=run2) for a in args), check=False))
    assert len(lines) == 1 and "Usage:" not in lines[0] and "╭" not in lines[0]
    for s in says:
        assert s in lines[0], (s, lines[0])


def test_option_errors_are_one_line_in_a_process():
    p = subprocess.run(
        [sys.executable, "-m", "tierank.cli", "eval", QRELS, RUN, "--format", "xml"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(
        "tierank: error: Invalid value for '--format'"
    )


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--resamples", "-1", "not in the range 1<=x<=1000000"),
        ("--resamples", "0", "not in the range 1<=x<=1000000"),
        ("--resamples", "99999999999999999999", "not in the range 1<=x<=1000000"),
        ("--resamples", "1000000000", "not in the range 1<=x<=1000000"),
        ("--permutations", "1000000000", "not in the range 1<=x<=1000000"),
        ("--permutations", "-5", "not in the range 1<=x<=1000000"),
        ("--tie-samples", "1000000000", "not in the range 0<=x<=1000"),
        ("--tie-samples", "-1", "not in the range 0<=x<=1000"),
    ],
)
def test_compare_sample_counts_have_a_stated_range(option, value, allowed, run2):
    """Sample counts out of range (a negative count once raised numpy's 'negative dimensions', a huge one
    a memory error after minutes) are refused at once, in one line; the maximum is in the help."""
    lines = _errors(
        invoke(
            "compare",
            QRELS,
            RUN,
            run2,
            "--test",
            "bootstrap",
            "--ci",
            "bca",
            "--leaderboard",
            option,
            value,
            check=False,
        )
    )
    assert (
        len(lines) == 1
        and f"'{option}'" in lines[0]
        and repr(value) in lines[0]
        and allowed in lines[0]
    )
    assert "at most" in " ".join(invoke("compare", "--help").stdout.split())


LONG = "a" * 300


@pytest.mark.parametrize(
    "args",
    [
        ("eval", QRELS, LONG + ".run"),
        ("eval", LONG + ".qrels", RUN),
        ("eval", QRELS, f"{LONG}/{LONG}.run"),
        ("eval", QRELS, "irds:" + "a" * 5000),
        ("eval", QRELS, RUN, "-j", "1", LONG + ".run"),
        ("ties", LONG + ".run"),
        ("similarity", RUN, LONG + ".run"),
        ("mteb", QRELS, LONG + ".json"),
    ],
)
def test_a_file_name_too_long_is_one_line(args):
    """A name longer than the file system allows once raised OSError [Errno 36] with a traceback."""
    lines = _errors(invoke(*args, check=False))
    assert len(lines) == 1 and len(lines[0]) < 400, lines


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("gzip2", "gzip data inside gzip data (compressed twice)"),
        ("bz2", "bzip2-compressed: tierank reads plain text or gzip"),
        ("xz", "xz-compressed: tierank reads plain text or gzip"),
    ],
)
def test_other_compressions_are_named(kind, says, tmp_path):
    """A doubly gzipped run was called "looks like qrels"; bzip2/xz data is named and refused in memory,
    as a run and as qrels."""
    import bz2
    import gzip
    import lzma

    raw = open(RUN, "rb").read()
    data = {
        "gzip2": lambda b: gzip.compress(gzip.compress(b)),
        "bz2": bz2.compress,
        "xz": lzma.compress,
    }[kind](raw)
    p = tmp_path / f"run.{kind}"
    p.write_bytes(data)
    for args in (("eval", QRELS, p), ("eval", p, RUN)):
        lines = _errors(invoke(*args, check=False))
        assert len(lines) == 1 and says in lines[0], lines
