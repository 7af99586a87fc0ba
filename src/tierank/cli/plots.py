"""`tierank plot ...` (figures) and `tierank report ...` (HTML pages).

Both need matplotlib (the ``report`` extra): every command checks for it first and
exits 2 with the install command when it is missing, before reading any input.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..analysis.comparison.settings import CompareSettings
from ..analysis.cutoff import MAX_KMAX, check_kmax
from ..io.writers import check_output
from ..measures import supported
from ..settings import EvalSettings
from .app import MARKUP, Group, app
from .common import (
    DEFAULT_MEASURES,
    FIGURE_FORMATS,
    OutHtml,
    OutStem,
    Regimes,
    ScoreFormats,
    check_figure_stem,
    held,
    html_output,
    input_errors,
    measures_option,
    named_runs,
    one_measure,
    one_measure_option,
    qrels_and_runs,
    require,
    runs_by_name,
    save,
    score_formats,
    swap_check,
)
from .options import (
    EVAL_FIELDS,
    FROM_OPTIONS,
    Offer,
    compare_offer,
    keywords_of,
    with_settings,
)

plot_app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode=MARKUP)
report_app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode=MARKUP)
app.add_typer(plot_app, name="plot")
app.add_typer(report_app, name="report")

#: the measures of `tierank report sweep` when no -m is given
REPORT_SWEEP_MEASURES = ["nDCG@10", "RR@10"]

QrelsThenRuns = Annotated[
    list[Path],
    typer.Argument(
        metavar="FILES", help="the qrels, then two or more runs (with --qrels: only the runs)"
    ),
]
QrelsOption = Annotated[
    Path | None, typer.Option("--qrels", help="qrels (then every argument is a run)")
]


def _html_file(output: Path, protect: tuple) -> None:
    """``-o FILE`` of a command writing one HTML page: its extension, then `check_output`."""
    html_output(output)
    check_output(output, protect)


def _compared(
    files: list[Path],
    qrels: Path | None,
    usage: str,
    check: Callable[[Path, tuple], None],
    output: Path,
    measure: list[str] | None,
    regimes: str | None,
    settings: EvalSettings,
    comparison: CompareSettings | None = None,
) -> tuple[Any, tuple]:
    """The comparison of `tierank plot ranges` and `tierank report compare`: the qrels and the
    runs from FILES (``--qrels``), the output checked by `check` before any work, each run opened
    once; returns the comparison and the input files the output must not overwrite."""
    from ..analysis.compare import compare

    qrels, runs = qrels_and_runs(files, qrels, usage)
    protect = (qrels, *runs)
    check(output, protect)
    chosen = one_measure(measure, "nDCG@10")
    with named_runs(qrels, runs, usage, regimes) as named:
        cmp = compare(named, str(qrels), chosen, settings, comparison)
    return cmp, protect


def _swept(
    qrels: Path, run: Path, measures: list[str], formats: str, settings: EvalSettings, usage: str
):
    """The sweep of `tierank plot sweep` and `tierank report sweep`: the run opened once (its role
    check and its reading), re-expressed in every score format of ``formats``."""
    from ..analysis.sweep import sweep

    (source,) = held([run])
    with swap_check(qrels, [source], usage):
        return sweep(str(qrels), source, measures, score_formats(formats), settings)


Kmax = Annotated[
    int,
    typer.Option(
        "--kmax",
        help=f"Largest cutoff k of the curves, 1 to {MAX_KMAX} (all k are evaluated together).",
    ),
]


@plot_app.command("cutoff")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def plot_cutoff_cmd(
    qrels: Annotated[Path, typer.Argument(metavar="QRELS", help="qrels")],
    runs: Annotated[list[Path], typer.Argument(metavar="RUN", help="one or more runs")],
    output: OutStem,
    family: one_measure_option("nDCG", family=True) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    kmax: Kmax = 20,
    regimes: Regimes = None,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Metric vs cutoff (the first paper's Figure 2): expected line, oblivious markers, [min, max] band."""
    from ..analysis.cutoff import cutoff_curves
    from ..report.plots import plot_cutoff

    require("matplotlib", "tierank plot")
    check_figure_stem(output, (qrels, *runs))
    family = one_measure(family, "nDCG")
    check_kmax(kmax)
    usage = "tierank plot cutoff QRELS RUN [RUN...] -o STEM"
    with named_runs(qrels, runs, usage, regimes) as named:
        curves = cutoff_curves(str(qrels), named, family, kmax, **keywords_of(settings))
    save(plot_cutoff(curves), output, (qrels, *runs))


@plot_app.command("ranges")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def plot_ranges_cmd(
    files: QrelsThenRuns,
    output: OutStem,
    qrels: QrelsOption = None,
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    regimes: Regimes = None,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Every system as a segment from min to max, oblivious and expected marked (second paper's Figure 2)."""
    from ..report.plots import plot_ranges

    require("matplotlib", "tierank plot")
    usage = "tierank plot ranges QRELS RUN RUN... -o STEM"
    cmp, protect = _compared(
        files, qrels, usage, check_figure_stem, output, measure, regimes, settings
    )
    save(plot_ranges(cmp), output, protect)


@plot_app.command("sweep")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def plot_sweep_cmd(
    qrels: Annotated[Path, typer.Argument(metavar="QRELS", help="qrels")],
    run: Annotated[Path, typer.Argument(metavar="RUN", help="run")],
    output: OutStem,
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    formats: ScoreFormats = ",".join(FIGURE_FORMATS),
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Range, bias and tie share of a measure against the score format."""
    from ..report.plots import plot_sweep

    require("matplotlib", "tierank plot")
    check_figure_stem(output, (qrels, run))
    measure = one_measure(measure, "nDCG@10")
    result = _swept(
        qrels, run, [measure], formats, settings, "tierank plot sweep QRELS RUN -o STEM"
    )
    save(plot_sweep(result, measure), output, (qrels, run))


@plot_app.command("ties")
@input_errors
def plot_ties_cmd(
    runs: Annotated[list[Path], typer.Argument(metavar="RUN", help="runs")],
    output: OutStem,
    regimes: Regimes = None,
) -> None:
    """Distribution of tie-group sizes per run or regime."""
    from ..report.plots import plot_tie_structure

    require("matplotlib", "tierank plot")
    check_figure_stem(output, tuple(runs))
    with swap_check(None, runs, "tierank plot ties RUN [RUN...] -o STEM"):
        loaded = runs_by_name(runs, regimes, duplicates="keep")
    save(plot_tie_structure(loaded), output, tuple(runs))


@report_app.command("eval")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def report_eval_cmd(
    qrels: Annotated[Path, typer.Argument(metavar="QRELS", help="qrels")],
    run: Annotated[Path, typer.Argument(metavar="RUN", help="run")],
    output: OutHtml,
    measure: measures_option(DEFAULT_MEASURES) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    family: Annotated[
        str,
        typer.Option(
            "--curve",
            help=f"Measure family of the cutoff figure ({', '.join(supported())}; '' for none).",
        ),
    ] = "nDCG",
    kmax: Kmax = 20,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """An evaluation: aggregate table, ties, the widest per-query ranges, the cutoff figure."""
    from ..analysis.cutoff import evaluate_with_curves
    from ..io.naming import short_name
    from ..report.html import eval_report, write_report

    require("matplotlib", "tierank report")
    _html_file(output, (qrels, run))
    check_kmax(kmax)
    (source,) = held([run])  # opened once: its role check and its reading
    with swap_check(qrels, [source], "tierank report eval QRELS RUN -o FILE"):
        res, curves = evaluate_with_curves(
            str(qrels),
            source,
            measure or DEFAULT_MEASURES,
            family,
            kmax,
            name=short_name(run),
            **keywords_of(settings),
        )  # one evaluation: table, curves
    typer.echo(str(write_report(output, eval_report(res, curves), protect=(qrels, run))))


@report_app.command("sweep")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def report_sweep_cmd(
    qrels: Annotated[Path, typer.Argument(metavar="QRELS", help="qrels")],
    run: Annotated[Path, typer.Argument(metavar="RUN", help="run")],
    output: OutHtml,
    measure: measures_option(REPORT_SWEEP_MEASURES) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    formats: ScoreFormats = ",".join(FIGURE_FORMATS),
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """A precision sweep: ties and every measure's range and bias per score format."""
    from ..report.html import sweep_report, write_report

    require("matplotlib", "tierank report")
    _html_file(output, (qrels, run))
    ms = measure or REPORT_SWEEP_MEASURES
    result = _swept(qrels, run, ms, formats, settings, "tierank report sweep QRELS RUN -o FILE")
    typer.echo(str(write_report(output, sweep_report(result, ms), protect=(qrels, run))))


#: the fields of `CompareSettings` that ``tierank report compare`` offers (its page shows no
#: leaderboard; its p-values are not corrected), with the help of each there
REPORT_COMPARISON = {
    "band": "Also band every run with geometric rank bands RHO > 1 (see tierank compare).",
    "alpha": None,
    "test": None,
    "ci": None,
    "level": None,
    "seed": None,
    "resamples": None,
    "permutations": None,
}


@report_app.command("compare")
@input_errors
@with_settings(
    settings=Offer(EvalSettings, EVAL_FIELDS),
    comparison=compare_offer(REPORT_COMPARISON),
)
def report_compare_cmd(
    files: QrelsThenRuns,
    output: OutHtml,
    qrels: QrelsOption = None,
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    regimes: Regimes = None,
    settings: EvalSettings = FROM_OPTIONS,
    comparison: CompareSettings = FROM_OPTIONS,
) -> None:
    """A system comparison: ranges figure, systems and pairs with flags, band summary."""
    from ..report.html import compare_report, write_report

    require("matplotlib", "tierank report")
    usage = "tierank report compare QRELS RUN RUN... -o FILE"
    cmp, protect = _compared(
        files, qrels, usage, _html_file, output, measure, regimes, settings, comparison
    )
    typer.echo(str(write_report(output, compare_report(cmp), protect=protect)))


@report_app.command("rerank")
@input_errors
def report_rerank_cmd(
    table: Annotated[Path, typer.Argument(help="table.json written by `tierank rerank -o DIR`")],
    output: OutHtml,
) -> None:
    """The rerank protocol's Table 1 with a ranges figure per measure."""
    from ..report.html import load_rerank_table, rerank_report, write_report

    require("matplotlib", "tierank report")
    _html_file(output, (table,))
    doc = load_rerank_table(table)  # strict JSON, rows checked: one line and exit 2 on any fault
    typer.echo(str(write_report(output, rerank_report(doc, source=str(table)), protect=(table,))))


def _commands(group: typer.Typer) -> str:
    return "|".join(str(c.name) for c in group.registered_commands)


# the groups' help lists their commands as registered above
plot_app.info.help = f"Figures (PNG and SVG): tierank plot {_commands(plot_app)}."
report_app.info.help = f"One self-contained HTML page: tierank report {_commands(report_app)}."
