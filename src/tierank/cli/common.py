"""Shared pieces of the command line: option types, error handling, output helpers.

* `input_errors` turns a `TierankInputError` into one
  ``tierank: error: ...`` line per problem on stderr and exit code 2;
  `require` does the same for a missing optional dependency (one line naming
  the ``pip install`` command).
* The option types (``Output``, ``Format``, ``Measures``, ``TieBreakOption``, ...) take
  their choices and help from the registries and constants (the measure registry,
  `tierank.ties.POLICIES`, `tierank.report.formats.CATALOGUE`,
  `tierank.evaluate.UNJUDGED`, the score formats of `tierank.analysis.precision`),
  so that the help cannot drift from what is accepted.
* Every ``-o`` target is checked with `tierank.io.writers.check_output` before any
  work is done (`check_figure_stem` for the two files of a figure); `tierank.io.writers`
  is imported only where there is a file to check or write (not by ``tierank eval`` to stdout).
"""

from __future__ import annotations

import errno
import functools
import io
import sys
from collections.abc import Sequence
from contextlib import contextmanager, nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from ..analysis.precision import DEFAULT_FORMATS, FLOAT_FORMATS
from ..errors import TierankError, TierankInputError
from ..evaluate import UNJUDGED
from ..measures import supported
from ..measures.linear import REL
from ..report.formats import TREC_STATS
from ..report.formats import help_text as format_help
from ..report.formats import names as format_names
from ..ties import POLICIES
from .app import _fail

DEFAULT_MEASURES = ["nDCG@10", "RR@10", "AP", "P@10", "R@100"]

#: the figures' default score formats: the sweep's less sig2 and band2 (fewer curves on one plot)
FIGURE_FORMATS = tuple(f for f in DEFAULT_FORMATS if f not in ("sig2", "band2"))

#: the files one figure is written as (``STEM.png``, ``STEM.svg``)
FIGURE_SUFFIXES = ("png", "svg")


def choices_enum(name: str, values) -> type[Enum]:
    """A str Enum whose members are ``values`` (typer shows and checks them as the choices)."""
    # mypy reads Enum's functional API with a name that is not a literal as a lookup by value
    return cast("type[Enum]", Enum(name, [(v, v) for v in values], type=str))


# The choice types below are built from the registries at run time, and typer reads the
# annotations at run time: there they are those Enums.  mypy cannot see their members, so to it
# they are plain Enums; pick a member by value (``Fmt("table")``), never by attribute.
if TYPE_CHECKING:
    Fmt = Enum
    EvalFmt = Enum
    Stat = Enum
    Unjudged = Enum
else:
    #: output formats of flat records and of MTEB's results (`tierank.report.formats.CATALOGUE`)
    Fmt = choices_enum("Fmt", format_names("records"))
    #: output formats of ``tierank eval`` (`tierank.report.formats.CATALOGUE`: also trec_eval's layout)
    EvalFmt = choices_enum("EvalFmt", format_names("results"))
    #: the statistic ``--format trec_eval`` prints (`tierank.report.formats.TREC_STATS`)
    Stat = choices_enum("Stat", TREC_STATS)
    #: conventions for unjudged documents (`tierank.evaluate.UNJUDGED`)
    Unjudged = choices_enum("Unjudged", UNJUDGED)


# errors


def input_errors(command):
    """Decorate a command: a TierankInputError it raises becomes one ``tierank: error: ...`` line per
    problem on stderr and exit code 2; so does a tierank error for a missing optional dependency
    (an `ImportError` such as `tierank.report.MissingMatplotlib`)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except TierankInputError as e:
            _fail(e)
        except TierankError as e:
            if not isinstance(e, ImportError):
                raise
            _fail(TierankInputError(str(e)))
        except (
            OSError
        ) as e:  # a path the file system cannot even look up, wherever it is first looked at
            if e.errno != errno.ENAMETOOLONG:
                raise
            from ..errors import shorten

            name = str(e.filename) if e.filename is not None else "a path"
            _fail(TierankInputError(f"{shorten(name)}: file name too long for the file system"))

    return wrapper


def output_format(ctx, fmt, output: Path | None, choices):
    """The format a command writes, by the one rule of every ``-o FILE``
    (`tierank.report.formats.file_format`): the ``-f`` given; else the one FILE's extension names
    (``.gz`` read through); else the default.  A ``-f`` that contradicts the extension, or an
    extension naming a format the command does not write, is refused."""
    if output is None or str(output) == "-":
        return fmt
    from ..report.formats import file_format

    want, gz = file_format(output)
    if want is None or want == fmt.value:
        return fmt
    offered = [c.value for c in choices]
    ext = "".join(Path(output).suffixes[-2:]) if gz else Path(output).suffix
    if ctx.get_parameter_source("fmt").name != "DEFAULT":
        raise TierankInputError(
            f"-o {output}: a {ext} file is written as --format {want}, but "
            f"--format {fmt.value} is given: drop -f, or name the file otherwise"
        )
    if want not in offered:
        raise TierankInputError(
            f"-o {output}: a {ext} file is written as --format {want}, which tierank "
            f"{ctx.command.name} does not write (its formats: {', '.join(offered)}): name the file otherwise"
        )
    return choices(want)


def html_output(output: Path) -> None:
    """The same rule for ``tierank report``'s ``-o FILE``, which writes one HTML page: an extension
    naming another format (`tierank.report.formats.file_format`: ``.json``, ``.md``, ...) or ``.gz``
    is refused, as an extension a command does not write is by `output_format`."""
    from ..report.formats import file_format

    want, gz = file_format(output)
    if want is not None or gz:
        ext = "".join(Path(output).suffixes[-2:]) if gz else Path(output).suffix
        named = f"--format {want}" if want is not None else "gzip"
        raise TierankInputError(
            f"-o {output}: a {ext} file is written as {named}, but tierank report writes one "
            "HTML page: name the file .html"
        )


def note(text: str) -> None:
    """One ``tierank: note: ...`` line on stderr (something left out or ignored; not an error)."""
    from rich.console import Console

    Console(emoji=False, markup=False, stderr=True, highlight=False, soft_wrap=True).print(
        f"tierank: note: {text}"
    )


def require(module: str, what: str) -> None:
    """Exit 2 with one line naming the install command when the optional ``module`` is missing
    (`tierank.extras.require`: its extra from `tierank.extras.EXTRAS`).

    Called first thing by the commands that need it, before reading any input."""
    from ..extras import MissingExtra
    from ..extras import require as require_extra

    try:
        require_extra(module, what=what)
    except MissingExtra as e:  # the command line's own quoting of the install command
        _fail(
            TierankInputError(
                f'{what} needs {module}, which is not installed: pip install "tierank[{e.extra}]"'
            )
        )


# option types


def _measure_help(head: str) -> str:
    return f"{head} Families: {', '.join(supported())} (see `tierank measures`)."


SCORE_FORMATS_HELP = (
    f"fp32, {', '.join(FLOAT_FORMATS)}, int8 (per-query affine), sigN (N significant digits), "
    "bandRHO (rank bands, e.g. band1.4)"
)

Output = Annotated[
    Path | None,
    typer.Option(
        "-o", "--output", help="Write to FILE (atomically; checked before any work; - for stdout)."
    ),
]
Format = Annotated[
    Fmt, typer.Option("--format", "-f", help=f"Output format ({format_help('records')}).")
]
EvalFormat = Annotated[
    EvalFmt,
    typer.Option(
        "--format",
        "-f",
        help=f"Output format ({format_help('results')}).",
    ),
]
StatOption = Annotated[
    Stat | None,
    typer.Option(
        "--stat",
        help="The statistic --format trec_eval prints (default oblivious: trec_eval's own value "
        "under --tie-break); the other formats print all of them.",
    ),
]
#: the most worker processes or threads a ``--jobs`` asks for (each costs a process or a thread and its memory)
MAX_JOBS = 256

#: the largest sample counts accepted: what is kept grows with them (8 bytes a resample and system; one
#: range a permutation; an evaluation of every run, per query and system, a tie sample; the drawn tie
#: orderings of a query) and the time with it; the draws are made in chunks of bounded size
MAX_RESAMPLES = 1_000_000
MAX_PERMUTATIONS = 1_000_000
MAX_TIE_SAMPLES = 1_000
MAX_SAMPLES = 1_000_000

MaxDepth = Annotated[
    int | None,
    typer.Option(
        "-M",
        "--max-retrieved",
        min=1,
        max=2**53,
        help="Read at most N documents per query (trec_eval -M); a tie straddling "
        "rank N is a tie straddling a cutoff.",
    ),
]
JudgedOnly = Annotated[
    bool,
    typer.Option(
        "-J",
        "--judged-only",
        help="Drop unjudged documents before ranking, as trec_eval -J does: --condensed, with a "
        "negative grade also unjudged and a query left with no document still counted.",
    ),
]
DocsInCollection = Annotated[
    int | None,
    typer.Option(
        "-N",
        "--docs-in-collection",
        min=1,
        help="Documents in the collection (trec_eval -N): read only by "
        "trec_eval's utility measure (its ndocs).",
    ),
]
NoSummary = Annotated[
    bool,
    typer.Option(
        "-n", "--no-summary", help="No summary (all) lines (trec_eval -n; --format trec_eval only)."
    ),
]
Samples = Annotated[
    int,
    typer.Option(
        "--samples",
        min=2,
        max=MAX_SAMPLES,
        help="Random tie orderings drawn by the measures with no exact "
        f"expectation (their records say method: sampled; at most {MAX_SAMPLES:,}).",
    ),
]
#: every ``--seed`` of every command is this one option (numpy's seeds are integers >= 0), and every
#: ``--top`` is `Top`: each option's range is declared once, here
Seed = Annotated[
    int,
    typer.Option(
        "--seed",
        min=0,
        help="Seed of every random draw (tie orderings, resamples, permutations); an integer >= 0.",
    ),
]
Top = Annotated[int, typer.Option("--top", min=1, help="Largest tie groups listed per run (>= 1).")]


def measures_option(default: list[str], trec: bool = False):
    """The type of a repeatable ``-m/--measure`` option whose default is ``default``; with ``trec``
    the option also takes trec_eval's names (`tierank.measures.names`)."""
    head = (
        "Measure as ir_measures writes it (nDCG@10) or as trec_eval names it (ndcg_cut.10, P.5,10, "
        "map, official, all_trec), repeatable; -mNAME works too. "
        f"Default: {' '.join(default)} (official with --format trec_eval)."
        if trec
        else f"Measure as ir_measures writes it, repeatable. Default: {' '.join(default)}."
    )
    return Annotated[list[str] | None, typer.Option("-m", "--measure", help=_measure_help(head))]


def one_measure_option(default: str, family: bool = False):
    """The type of a ``-m/--measure`` option taking one measure (or, with ``family``, one measure family)
    whose default is ``default``; read it with `one_measure` (given twice: an error)."""
    head = "Measure family" if family else "One measure as ir_measures writes it"
    return Annotated[
        list[str] | None,
        typer.Option(
            "-m", "--measure", metavar="<str>", help=_measure_help(f"{head}. Default: {default}.")
        ),
    ]


TieBreakOption = Annotated[
    str,
    typer.Option(
        "--tie-break",
        help=f"Order for the oblivious value: {', '.join(POLICIES)} "
        "(trec_eval: score, then docno descending).",
    ),
]
Rel = Annotated[
    int,
    typer.Option(
        "--rel",
        "-l",
        help="Minimum grade counted relevant (binary measures), "
        f"in {REL.range_text()} as a measure's rel=.",
    ),
]
CandidatesOnly = Annotated[
    bool,
    typer.Option(
        "--candidates-only",
        help="N+ and ideal DCG from judged documents in the run only (reranking).",
    ),
]
Complete = Annotated[
    bool,
    typer.Option(
        "-c",
        "--complete",
        help="Average over all qrels queries; missing ones score 0 (trec_eval -c).",
    ),
]
ScoreFormats = Annotated[
    str, typer.Option("--formats", help=f"Comma-separated score formats: {SCORE_FORMATS_HELP}.")
]
OutStem = Annotated[
    Path, typer.Option("-o", "--output", help="Output stem: writes STEM.png and STEM.svg.")
]
OutHtml = Annotated[
    Path, typer.Option("-o", "--output", help="The HTML file to write (atomically).")
]
Regimes = Annotated[
    str | None,
    typer.Option(
        "--regimes",
        help=f"Comma-separated score formats to re-express each run in ({SCORE_FORMATS_HELP}), "
        "one curve per run and format.",
    ),
]


def one_measure(values: list[str] | None, default: str) -> str:
    """The single ``-m`` of a command that compares one measure; given twice, an error (not the last one)."""
    if not values:
        return default
    if len(values) > 1:
        raise TierankInputError(
            f"-m/--measure takes one measure here, got {len(values)}: {', '.join(values)}; "
            "run the command once per measure"
        )
    return values[0]


def score_formats(text: str) -> list[str]:
    """``"fp32, bf16,"`` -> ``["fp32", "bf16"]``; none at all (``''``) is an error, not an empty result."""
    out = [f.strip() for f in text.split(",") if f.strip()]
    if not out:
        raise TierankInputError(
            f"no score format in {text!r}: give one or more, comma-separated ({SCORE_FORMATS_HELP})"
        )
    return out


# outputs


def check_figure_stem(stem: Path, protect: tuple) -> None:
    """Check ``STEM.png`` and ``STEM.svg`` as outputs before any work (see `check_output`).

    The figure writer creates a missing folder (`ensure_dir`): then it is
    checked that it can be."""
    from ..io.writers import check_output, ensure_dir

    if ensure_dir(stem.parent, create=False).is_dir():
        for ext in FIGURE_SUFFIXES:
            check_output(stem.with_name(f"{stem.name}.{ext}"), protect)


def status(text: str):
    """A spinner on stderr while the work runs, when stderr is a terminal."""
    if sys.stderr.isatty():
        from rich.console import Console

        return Console(emoji=False, stderr=True).status(text)
    return nullcontext()


def emit(text: str | bytes | Sequence[Any], output: Path | None, protect: tuple) -> None:
    """``text`` to ``output`` (atomically) or to stdout; text, or UTF-8 bytes (one piece or a
    sequence of bytes-like pieces, written one after the other)."""
    if output is not None:
        from ..io.writers import write_atomic
        from ..report.formats import encoded

        write_atomic(output, encoded(text, output), protect=protect)
    elif isinstance(text, str):
        sys.stdout.write(text)
    else:  # the bytes to stdout's binary buffer, after its text (no import of the file writer)
        pieces: Sequence[Any] = [text] if isinstance(text, (bytes, bytearray, memoryview)) else text
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write("".join(str(p, "utf-8") for p in pieces))
            return
        sys.stdout.flush()
        for piece in pieces:
            out.write(piece)
        out.flush()


def _plain(tables, width: int) -> str:
    """rich tables as plain text (no colours), with no trailing spaces: rich pads every line of a
    table's title and caption to the table's width, which a file or a pipe should not keep."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(emoji=False, file=buf, width=width, force_terminal=False, color_system=None)
    for t in tables:
        console.print(t)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def print_tables(tables, output: Path | None, protect: tuple, min_width: int = 120) -> None:
    """rich tables to the terminal (at least ``min_width`` columns wide), or as plain text to
    ``output`` (160 columns; ``-``: stdout) or to a standard output that is not a terminal (a pipe,
    a file), without trailing spaces."""
    from rich.console import Console

    if output is not None:
        from ..io.writers import write_atomic
        from ..report.formats import encoded

        write_atomic(output, encoded(_plain(tables, 160), output), protect=protect)
        return
    console = Console(emoji=False, width=max(Console().width, min_width))
    if not console.is_terminal:
        sys.stdout.write(_plain(tables, console.width))
        sys.stdout.flush()
        return
    for t in tables:
        console.print(t)


#: what a line of each input looks like, for the messages of `swapped`
RUN_LAYOUT = "6 columns: qid Q0 docid rank score tag"
QRELS_LAYOUT = "3-4 columns: qid iter docid grade, or BEIR's query-id corpus-id score; a run has 6"


def layout(path: Path) -> str | None:
    """``"run"`` or ``"qrels"``: what the first line of the text file ``path`` looks like (a TREC run
    line has 6 fields; a qrels line 4, or 3 in a BEIR qrels TSV); None when it cannot be told (not a
    regular file, a Parquet/Arrow file, unreadable, not text, another shape)."""
    kind, _ = _sniff(path)
    return kind


def _sniff(path: Path) -> tuple[str | None, str | None]:
    """``(layout, why it is no TREC text file)``: the second one line where the file's start says
    it cannot be one (compressed twice or otherwise, binary data), else None."""
    from ..io.columnar import is_columnar
    from ..io.lexer import is_text
    from ..io.readers import first_fields

    try:
        if not Path(path).is_file() or is_columnar(str(path)):
            return None, None
        fields = first_fields(path)
    except TierankInputError as e:
        return None, str(e) if "compress" in str(e) else None
    except OSError:
        return None, None
    if not is_text(fields):  # random or binary bytes, whatever their field count
        return None, f"{path}: not a TREC file: its first line is binary data, not text"
    n = len(fields) if fields else 0
    return ("run" if n == 6 else "qrels" if n in (3, 4) else None), None


def swapped(qrels: Path | None, runs: list[Path], usage: str) -> str | None:
    """One line when the inputs look given in the wrong places: a run where the qrels go, or qrels
    where a run goes (``usage``: the command's synopsis, e.g. ``tierank eval QRELS RUN``); or when
    one of them is no TREC text file at all (compressed twice, binary data); else None."""
    bad = [
        why for p in ([qrels] if qrels is not None else []) + list(runs) if (why := _sniff(p)[1])
    ]
    if bad:
        return bad[0]
    q = layout(qrels) if qrels is not None else None
    wrong = [r for r in runs if layout(r) == "qrels"]
    if q == "run" and wrong:
        return (
            f"did you swap QRELS and RUN? {qrels} looks like a run ({RUN_LAYOUT}) and {wrong[0]} like qrels "
            f"({QRELS_LAYOUT}); usage: {usage}"
        )
    if q == "run":
        return f"{qrels} is given as the qrels but looks like a run ({RUN_LAYOUT}); the qrels come first: {usage}"
    if wrong:
        return f"{wrong[0]} is given as a run but looks like qrels ({QRELS_LAYOUT}); usage: {usage}"
    return None


@contextmanager
def swap_check(qrels: Path | None, runs: list[Path], usage: str):
    """Inputs read inside this block: a `TierankInputError` about them becomes the one line of
    `swapped` when the files look given in the wrong places (the reader's errors, e.g. one
    "expected 4 columns" per line of a run read as qrels, say less).  Text files are sniffed only after
    a failure; Parquet/Arrow tables, which a swap can leave readable (BEIR's ``score`` column is both a
    run's score and a grade), are told apart by content first (`tierank.io.sources.check_roles`)."""
    from ..io.sources import check_roles

    if qrels is not None:
        try:
            check_roles(qrels, *runs)
        except TierankInputError as e:
            raise TierankInputError(f"{e}; usage: {usage}") from None
    try:
        yield
    except TierankInputError as e:
        files = {str(p) for p in (qrels, *runs) if p is not None}
        about = any(getattr(p, "source", None) in files for p in e.problems)
        hint = swapped(qrels, list(runs), usage) if about else None
        if hint is None:
            raise
        raise TierankInputError(hint) from None


@contextmanager
def named_runs(qrels: Path, runs: list[Path], usage: str, regimes: str | None = None):
    """The runs ``runs`` read and named (`runs_by_name`, with ``regimes``), each opened once
    (`held`); the block that uses them runs inside their `swap_check`."""
    sources = held(runs)  # each run opened once: its role check and its reading
    with swap_check(qrels, sources, usage):
        yield runs_by_name(sources, regimes)


def qrels_and_runs(paths: list[Path], qrels: Path | None, usage: str) -> tuple[Path, list[Path]]:
    """``QRELS RUN RUN...`` as ``tierank eval`` takes them, or ``RUN RUN... --qrels QRELS``."""
    if qrels is not None:
        return qrels, list(paths)
    if paths and layout(paths[0]) == "run":
        raise TierankInputError(
            f"{paths[0]} is given as the qrels but looks like a run ({RUN_LAYOUT}); the qrels "
            f"come first (or --qrels QRELS): {usage}"
        )
    if len(paths) < 2:
        raise TierankInputError(f"give the qrels first, then the runs (or --qrels QRELS): {usage}")
    return paths[0], list(paths[1:])


def held(paths: list[Path]) -> list[Any]:
    """The run files ``paths``, each opened and read once for what follows (`tierank.io.sources.hold`):
    the role check of `swap_check` reads its first line from those bytes, and its reader
    (`runs_by_name`, `tierank.io.convert.to_run`) takes them; a source that is not a local text file
    (Parquet, a folder, a URI) stays its path.  Every run's bytes are held until its reader takes
    them."""
    from ..io.sources import hold

    return [hold(p) for p in paths]


def runs_by_name(paths: list[Path], regimes: str | None = None, duplicates: str = "error") -> dict:
    """Runs read and named through `tierank.io.sources` (`name_runs`: the
    shortest distinguishing path suffix, never two runs under one name); with regimes, one entry per
    (run, format)."""
    from ..analysis.precision import requantize_run
    from ..io.sources import name_runs, read

    out = {}
    for name, p in name_runs(paths).items():
        run = read(p, "run", duplicates=duplicates)
        if not regimes:
            out[name] = run
            continue
        for fmt in score_formats(regimes):
            out[fmt if len(paths) == 1 else f"{name} [{fmt}]"] = requantize_run(run, fmt)
    return out


def save(fig, stem: Path, protect: tuple) -> None:
    """Write ``fig`` as STEM.png and STEM.svg and print their paths."""
    from ..report.plots import save_figure

    for p in save_figure(fig, stem, FIGURE_SUFFIXES, protect=protect):
        typer.echo(str(p))
