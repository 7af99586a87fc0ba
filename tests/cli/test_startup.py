"""Start-up of the command line: what ``import tierank.cli``, ``tierank --help``, ``tierank --version``
and a small ``tierank eval`` import, and the commands' lazy registration.

Asserted on ``sys.modules`` of fresh interpreters, never on time (``benchmarks/bench_startup.py`` times it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

import tierank.cli

#: imported by no command at start-up (only by the commands and formats that use them)
LAZY = (
    "pandas",
    "scipy",
    "matplotlib",
    "pydantic",
    "rich.console",
    "rich.table",
    "tierank.report.terminal",
    "tierank.hps",
    "tierank.stream",
    "tierank.analysis.inference",
)

#: imported by no command at start-up, nor by ``tierank eval`` writing to stdout: the exact rationals of
#: the intent-aware measures, the output writer (and ``secrets``), the output formats' modules (only
#: the one written is imported)
UNUSED_BY_EVAL = (
    "fractions",
    "tierank.io.writers",
    "secrets",
    "csv",
    "tierank.report.formats.grouped",
)
FORMAT_MODULES = tuple(
    f"tierank.report.formats.{m}"
    for m in ("table", "delimited", "jsondoc", "jsonl", "trec_eval", "markdown", "latex")
)


def _modules(code: str, *argv: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """The modules a fresh interpreter has imported after ``code`` (run with ``sys.argv[1:] = argv``)."""
    script = (
        f"import sys, json\nsys.argv[1:] = {list(argv)!r}\n{code}\n"
        "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    head, _, mods = p.stderr.rpartition("\nMODULES ")
    assert mods, p.stderr
    return set(json.loads(mods)), subprocess.CompletedProcess(p.args, p.returncode, p.stdout, head)


MAIN = "from tierank.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code"


@pytest.mark.keep_default  # the default tier's representative of its category
def test_import_of_the_command_line_is_light():
    mods, _ = _modules("import tierank.cli")
    assert not [m for m in LAZY if m in mods]
    assert not [
        m
        for m in mods
        if m.startswith("tierank.cli.") and m not in ("tierank.cli.app", "tierank.cli.common")
    ]


def test_import_of_the_command_line_imports_no_format_writer_or_measure():
    mods, _ = _modules("import tierank.cli")
    assert not [m for m in (*UNUSED_BY_EVAL, *FORMAT_MODULES) if m in mods]
    assert "tierank.measures" not in mods and "tierank.io.subtopics" not in mods


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("small")
    run, qrels = d / "small.run", d / "small.qrels"
    run.write_text(
        "".join(
            f"q{q} Q0 d{i} {i + 1} {round(1 - i / 40, 1)} t\n" for q in range(3) for i in range(20)
        )
    )
    qrels.write_text("".join(f"q{q} 0 d{i} {i % 3}\n" for q in range(3) for i in range(0, 20, 3)))
    return qrels, run


@pytest.mark.parametrize("fmt", ["jsonl", "table", "trec_eval"])
def test_small_eval_imports_no_pandas_and_prints_the_same(small, fmt):
    """Arrow data reaches numpy (and numbers reach Arrow) without pyarrow's pandas layer
    (:func:`tierank.compute.numpy`, :func:`tierank.compute.array`), and trec_eval's summary is read from the
    result's records; the output is the output of a process where pandas was imported first."""
    qrels, run = small
    argv = ("eval", str(qrels), str(run), "-m", "nDCG@10", "-m", "P@5", "-q", "-f", fmt)
    mods, p = _modules(MAIN, *argv)
    _, ref = _modules(f"import pandas\n{MAIN}", *argv)
    assert p.returncode == 0 and ref.returncode == 0, p.stderr + ref.stderr
    assert (p.stdout, p.stderr) == (ref.stdout, ref.stderr)
    assert p.stdout.strip()
    lazy = [m for m in LAZY if m in mods]
    # nor numpy.ma (10 ms): pa.array of a numpy array (tierank.compute.array instead) and np.unique import it
    assert "numpy.ma" not in mods
    expected = {"table": ["rich.console", "rich.table", "tierank.report.terminal"]}
    assert lazy == expected.get(fmt, [])
    assert not [
        m
        for m in mods
        if m.startswith("tierank.cli.")
        and m
        not in (
            "tierank.cli.app",
            "tierank.cli.common",
            "tierank.cli.options",  # the settings' options (`with_settings`)
            "tierank.cli.eval",
            "tierank.cli.progress",
        )
    ]


@pytest.mark.parametrize("how", ["-J", "--condensed", "-c", "docno", "random", "two runs -j 1"])
def test_eval_paths_import_no_pandas(small, tmp_path, how):
    """Nor the tie-break policies that reorder ties, the condensed lists, ``-c`` and several runs in this
    process; the output is the output of a process where pandas was imported first."""
    qrels, run = small
    other = tmp_path / "other.run"
    other.write_text(run.read_text().replace(" t\n", " u\n"))
    extra = {
        "-J": ("-J",),
        "--condensed": ("--condensed",),
        "-c": ("-c",),
        "docno": ("--tie-break", "docno"),
        "random": ("--tie-break", "random:3"),
        "two runs -j 1": (str(other), "-j", "1"),
    }[how]
    argv = ("eval", str(qrels), str(run), *extra, "-m", "nDCG@10", "-m", "AP", "-q", "-f", "jsonl")
    mods, p = _modules(MAIN, *argv)
    _, ref = _modules(f"import pandas\n{MAIN}", *argv)
    assert p.returncode == 0 and ref.returncode == 0, p.stderr + ref.stderr
    assert (p.stdout, p.stderr) == (ref.stdout, ref.stderr) and p.stdout.count("\n") > 6
    assert "pandas" not in mods


@pytest.fixture(scope="module")
def wide_ties(tmp_path_factory) -> tuple[Path, Path]:
    """Two tie groups of 30 documents per query, a quarter of them judged (grades -1 to 1: infAP's
    unsampled ones too), and a query of the qrels that the run lacks: too many orderings to enumerate."""
    d = tmp_path_factory.mktemp("wide")
    run, qrels = d / "wide.run", d / "wide.qrels"
    run.write_text(
        "".join(f"q{q} Q0 d{i} {i + 1} {1 - i // 30 / 4} t\n" for q in range(3) for i in range(60))
    )
    qrels.write_text(
        "".join(
            f"q{q} 0 d{i} {(i // 4) % 3 - (i % 8 == 0)}\n"
            for q in range(4)
            for i in range(0, 60, 4)
        )
    )
    return qrels, run


@pytest.mark.parametrize(
    "how",
    ["all_trec", "sampled -j 1 --block-bytes", "-j 1 --block-bytes -c", "-j 1 --block-bytes -J"],
)
def test_sampled_and_streamed_paths_import_no_pandas(wide_ties, how):
    """Nor the measures whose expectation is sampled (each query's draws are keyed by its id), in memory
    (``-m all_trec``) or streamed, nor the streamed evaluation (``-j 1 --block-bytes``: each batch's
    queries and the queries the run lacks); the output is the output of a process where pandas was
    imported first."""
    pytest.importorskip("pandas")
    qrels, run = wide_ties
    stream = ("-j", "1", "--block-bytes", "2000")
    extra = {
        "all_trec": ("-m", "all_trec"),
        "sampled -j 1 --block-bytes": ("-m", "infAP", "-m", "iprec_at_recall", *stream),
        "-j 1 --block-bytes -c": ("-m", "nDCG@10", "-m", "AP", "-c", *stream),
        "-j 1 --block-bytes -J": ("-m", "nDCG@10", "-m", "AP", "-J", *stream),
    }[how]
    argv = ("eval", str(qrels), str(run), *extra, "-q", "-f", "jsonl")
    mods, p = _modules(MAIN, *argv)
    _, ref = _modules(f"import pandas\n{MAIN}", *argv)
    assert p.returncode == 0 and ref.returncode == 0, p.stderr + ref.stderr
    assert (p.stdout, p.stderr) == (ref.stdout, ref.stderr)
    records = [json.loads(line) for line in p.stdout.splitlines()]
    methods = {r.get("method") for r in records}
    assert ("sampled" in methods) == (how in ("all_trec", "sampled -j 1 --block-bytes"))
    # q3, judged and not retrieved, is evaluated under -c only (with no documents)
    assert ("q3" in {r["query"] for r in records}) == ("-c" in extra)
    assert "pandas" not in mods


@pytest.mark.parametrize("fmt", ["table", "jsonl", "tsv", "json", "trec_eval"])
def test_small_eval_imports_the_module_of_its_format_only(small, fmt):
    """A fresh ``tierank eval`` to stdout imports the module of the format it writes and no other, nor the
    output writer or the exact rationals; its output is the output of a process that imported them all."""
    qrels, run = small
    argv = ("eval", str(qrels), str(run), "-m", "nDCG@10", "-q", "-f", fmt)
    mods, p = _modules(MAIN, *argv)
    everything = "import tierank.io.writers, fractions, tierank.report.formats as f\nf.FORMATS"
    _, ref = _modules(f"{everything}\n{MAIN}", *argv)
    assert p.returncode == 0 and ref.returncode == 0, p.stderr + ref.stderr
    assert (p.stdout, p.stderr) == (ref.stdout, ref.stderr) and p.stdout.strip()
    modules = {"table": [], "tsv": ["delimited"], "json": ["jsondoc", "jsonl"]}.get(
        fmt, [fmt]
    )  # json: jsonl's columns
    assert [m for m in FORMAT_MODULES if m in mods] == [
        f"tierank.report.formats.{m}" for m in modules
    ]
    unused = [m for m in UNUSED_BY_EVAL if m in mods and m.startswith("tierank.")]
    # the terminal table is drawn by rich; the other formats render a ResultTable
    assert unused == ([] if fmt == "table" else ["tierank.report.formats.grouped"])


def test_eval_to_a_file_still_checks_it_before_any_work(small, tmp_path):
    qrels, run = small
    mods, p = _modules(
        MAIN.replace("assert not e.code, e.code", "print('EXIT', e.code)"),
        "eval",
        str(qrels),
        str(run),
        "-m",
        "P@5",
        "-o",
        str(qrels),
    )
    assert "EXIT 2" in p.stdout and "refusing to overwrite an input file" in p.stderr
    assert "tierank.io.writers" in mods and "tierank.evaluate" in mods
    out = tmp_path / "out.tsv"
    mods, p = _modules(MAIN, "eval", str(qrels), str(run), "-m", "P@5", "-f", "tsv", "-o", str(out))
    assert p.returncode == 0 and out.read_text().startswith("query\tmeasure\t")


def test_the_diversity_names_of_the_package_are_imported_on_first_use():
    code = (
        "import tierank\nassert 'tierank.measures.diversity' not in sys.modules\n"
        "assert 'tierank.io.subtopics' not in sys.modules\n"
        "assert {'evaluate_diversity', 'read_subtopic_qrels'} <= set(dir(tierank))\n"
        "from tierank import *\n"
        "from tierank.evaluate import evaluate_diversity as e\n"
        "from tierank.io.subtopics import read_subtopic_qrels as r\n"
        "assert tierank.evaluate_diversity is e and tierank.read_subtopic_qrels is r\n"
        "assert evaluate_diversity is e and read_subtopic_qrels is r"
    )
    mods, p = _modules(code)
    assert p.returncode == 0, p.stderr
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        tierank.nothing  # noqa: B018


def test_the_format_catalogue_is_what_the_modules_register():
    """:data:`CATALOGUE` (help and choices without importing the modules) agrees with the formats the
    modules register: names, order, help, and which write flat records."""
    from tierank.report import formats

    every = formats.FORMATS
    assert list(every) == [name for name, *_ in formats.CATALOGUE] == list(formats.names())
    for order, (name, module, help, records) in enumerate(formats.CATALOGUE):
        f = every[name]
        assert (f.help, f.order, f.records is not None or f.render is None) == (
            help,
            order,
            records,
        )
        written_by = (
            f.render or f.records
        )  # the terminal table has neither: drawn by tierank.report.terminal
        assert (
            getattr(written_by, "func", written_by).__module__ == f"tierank.report.formats.{module}"
            if written_by is not None
            else module == "table"
        )
    assert formats.names("records") == tuple(
        n for n, f in every.items() if f.records is not None or f.render is None
    )
    assert (
        formats.TREC_STATS
        is __import__("tierank.report.formats.trec_eval").report.formats.trec_eval.TREC_STATS
    )
    with pytest.raises(ValueError, match="not in CATALOGUE"):
        formats.register("xml")


def test_every_command_is_found_in_its_module():
    """``COMMANDS`` names the module of every top-level command; the commands (groups come after them)
    are in the order of ``COMMAND_MODULES``, however the modules were imported."""
    group = typer.main.get_command(tierank.cli.app)
    assert set(group.commands) == set(tierank.cli.COMMANDS)
    for name, cmd in group.commands.items():
        callback = (
            cmd.callback
            if not hasattr(cmd, "commands")
            else next(iter(cmd.commands.values())).callback
        )
        assert callback.__module__ == f"tierank.cli.{tierank.cli.COMMANDS[name]}", name
    order = [
        tierank.cli.COMMANDS[n] for n, cmd in group.commands.items() if not hasattr(cmd, "commands")
    ]
    assert order == sorted(order, key=tierank.cli.COMMAND_MODULES.index)


def test_a_command_line_imports_its_command_only():
    mods, _ = _modules("import tierank.cli\ntierank.cli.command_app(sys.argv[1:])", "measures")
    assert {m for m in mods if m.startswith("tierank.cli.")} == {
        "tierank.cli.app",
        "tierank.cli.common",
        "tierank.cli.misc",
    }
    for root in ("--help", "--version", "no-such-command"):
        mods, _ = _modules("import tierank.cli\ntierank.cli.command_app(sys.argv[1:])", root)
        assert {m for m in mods if m.startswith("tierank.cli.")} == {"tierank.cli.app"}, root


#: what the root command does without: the engine (numpy, pyarrow), rich's markdown renderer, pydantic
HEAVY = (
    "numpy",
    "pyarrow",
    "markdown_it",
    "rich.markdown",
    "pydantic",
    "pandas",
    "tierank.measures",
    "tierank.ties",
)


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ()])
def test_the_root_command_imports_no_engine(argv):
    """``tierank --help``, ``tierank --version`` and a bare ``tierank`` import typer, and neither the engine
    (numpy, pyarrow, the measures) nor rich's markdown renderer (what typer's rich help imports)."""
    mods, p = _modules(MAIN.replace("assert not e.code, e.code", "print('EXIT', e.code)"), *argv)
    assert not [m for m in HEAVY if m in mods], p.stderr
    assert "typer" in mods
    if argv == ("--version",):
        assert p.stdout.startswith(f"tierank {tierank.__version__}\n")
    else:
        shown = (
            p.stdout + p.stderr
        )  # a bare `tierank` prints the help on stderr (exit 2), as click does
        assert "Commands:" in shown and all(f"  {name} " in shown for name in tierank.cli.SUMMARIES)


def test_the_root_listing_is_the_commands_own_help():
    """The summaries ``tierank --help`` lists without importing the commands are the commands' own (the
    first paragraph of their help), in the order of the complete command line."""
    group = typer.main.get_command(tierank.cli.app)
    ctx = group.context_class(group, info_name="tierank")
    real = {name: group.get_command(ctx, name).short_help for name in group.list_commands(ctx)}
    assert list(real) == list(tierank.cli.SUMMARIES)
    assert real == tierank.cli.SUMMARIES


@pytest.mark.parametrize("module", ["tierank", "tierank.cli"])
def test_python_dash_m_runs_the_command_line(module):
    p = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"tierank {tierank.__version__}\n", "")
    p = subprocess.run([sys.executable, "-m", module, "measures"], capture_output=True, text=True)
    assert p.returncode == 0 and "nDCG" in p.stdout, p.stderr


def test_trec_eval_imports_the_families_it_evaluates_only(small):
    """``tierank trec_eval`` (trec_eval's official measures) imports the modules of the families it
    evaluates (measures.lazy), no typer, no pandas, no rich, nor pyarrow.compute (the kernels
    are called through pyarrow._compute: tierank.compute), nor the modules of the source kinds
    that a text file is not (MTEB's JSON, subtopics, byte blocks)."""
    qrels, run = small
    mods, p = _modules(MAIN, "trec_eval", str(qrels), str(run))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") > 10
    families = {m.rpartition(".")[2] for m in mods if m.startswith("tierank.measures.")} & set(
        __import__("tierank.measures.lazy").measures.lazy.MODULES
    )
    assert families == {"linear", "ap", "counts", "bpref", "gmap", "iprec", "rank"}
    assert not [m for m in ("typer", "pandas", "rich", "click", "pyarrow.compute") if m in mods]
    kinds = ("mteb_json", "strict_json", "subtopics", "blocks")
    assert not [m for m in kinds if f"tierank.io.{m}" in mods]
