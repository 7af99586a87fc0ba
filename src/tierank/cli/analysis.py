"""`tierank ties`, `sweep`, `compare` and `bands`."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ..analysis.comparison.settings import CompareSettings
from ..analysis.precision import DEFAULT_FORMATS
from ..errors import TierankInputError
from ..io.writers import check_output
from ..report.formats import names as format_names
from ..settings import EvalSettings
from .app import app
from .common import (
    Fmt,
    Format,
    Output,
    ScoreFormats,
    Top,
    choices_enum,
    emit,
    held,
    input_errors,
    measures_option,
    one_measure,
    one_measure_option,
    output_format,
    print_tables,
    qrels_and_runs,
    runs_by_name,
    score_formats,
    status,
    swap_check,
)
from .options import (
    EVAL_FIELDS,
    FROM_OPTIONS,
    Offer,
    compare_declarations,
    compare_offer,
    with_settings,
)

#: the measures of `tierank sweep` when no -m is given
SWEEP_MEASURES = ["nDCG@10", "RR@10", "AP@100"]

#: what `tierank compare --format` writes: its tables, the whole comparison as one JSON document, or
#: the systems (the leaderboard with --leaderboard) as a Markdown or LaTeX table
if TYPE_CHECKING:  # built at run time, where typer reads them (see tierank.cli.common.Fmt)
    from ..io.model import Run

    CompareFmt = Enum
else:
    CompareFmt = choices_enum("CompareFmt", format_names("records"))
COMPARE_USAGE = "tierank compare QRELS RUN RUN... (or RUN RUN... --qrels QRELS)"


@app.command("ties")
@input_errors
def ties_cmd(
    ctx: typer.Context,
    runs: Annotated[list[Path], typer.Argument(metavar="RUN", help="TREC run files (.gz ok)")],
    fmt: Format = Fmt("table"),
    output: Output = None,
    top: Top = 3,
) -> None:
    """Tie prevalence and ordering defects per run and for the set (Yang, Moffat & Turpin, Table 1)."""
    from rich.progress import track

    from ..analysis.prevalence import analyze
    from ..io.convert import to_run
    from ..io.naming import run_names
    from ..report.formats import render_records
    from ..report.terminal import ties_tables

    fmt = output_format(ctx, fmt, output, Fmt)
    check_output(output, tuple(runs))
    loaded = {}
    names = dict(zip(runs, run_names(runs)))
    with swap_check(None, runs, "tierank ties RUN [RUN...]"):
        for p in track(
            runs,
            description="reading runs",
            disable=not sys.stderr.isatty(),
            console=Console(emoji=False, stderr=True),
        ):
            loaded[names[p]] = to_run(p, duplicates="keep")
    report = analyze(loaded, top=top)
    fields = (
        "name",
        "queries",
        "docs",
        "queries_with_ties",
        "tie_groups",
        "docs_in_ties",
        "docs_tied_with_predecessor",
        "contradictions",
        "queries_with_contradictions",
        "score_order_violations",
        "rank_order_violations",
        "duplicates",
    )
    if fmt is Fmt("table"):
        print_tables(ties_tables(report), output, tuple(runs))
    else:
        recs = [r.to_dict() for r in report.runs]
        # a format that lists every record (jsonl) writes each run whole, then the summary over the set
        emit(
            render_records(
                recs,
                fields,
                fmt.value,
                document=report.to_dict(),
                stream=recs + [{"name": "all", **report.summary}],
            ),
            output,
            tuple(runs),
        )


def _sweep_run_paths(folder: Path, run: Path, fmts: list[str], protect: tuple) -> dict[str, Path]:
    """``FOLDER/NAME.FORMAT.run`` per format (NAME: the run's file name less ``.gz`` and ``.run``),
    created and checked with `tierank.io.writers.check_output` before any work."""
    import re

    from ..io.writers import ensure_dir

    for f in fmts:
        if not re.fullmatch(r"[A-Za-z0-9_.+-]+", f) or f.startswith("."):
            raise TierankInputError(f"score format {f!r}: not a valid format name (see --formats)")
    ensure_dir(folder, why="; --write-runs takes a folder")
    name = run.name.removesuffix(".gz").removesuffix(".run")
    paths = {f: folder / f"{name}.{f}.run" for f in fmts}
    for p in paths.values():
        check_output(p, protect)
    return paths


def _write_sweep_runs(source: Run, paths: dict[str, Path], protect: tuple) -> None:
    """Write the run ``source`` re-expressed in every format of ``paths`` (exact scores, `write_run`)."""
    import re

    from ..analysis.precision import requantize_run
    from ..io.writers import write_run

    for f, path in paths.items():
        q = requantize_run(source, f)
        write_run(
            path, q.qid, q.docid, q.score, re.sub(r"\s", "_", f"{path.stem}"), protect=protect
        )
        typer.echo(f"wrote {path}", err=True)


@app.command("sweep")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def sweep_cmd(
    ctx: typer.Context,
    qrels: Annotated[
        Path, typer.Argument(metavar="QRELS", help="qrels (as tierank eval: QRELS first)")
    ],
    run: Annotated[Path, typer.Argument(metavar="RUN", help="TREC run (.gz ok)")],
    measure: measures_option(SWEEP_MEASURES) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    formats: ScoreFormats = ",".join(DEFAULT_FORMATS),
    fmt: Format = Fmt("table"),
    output: Output = None,
    settings: EvalSettings = FROM_OPTIONS,
    write_runs: Annotated[
        Path | None,
        typer.Option(
            "--write-runs",
            metavar="DIR",
            help="Also write each re-expressed run to DIR/NAME.FORMAT.run (e.g. DIR/test.bm25.bf16.run; "
            "scores exact, so the files evaluate to the numbers shown).",
        ),
    ] = None,
) -> None:
    """What would lower precision do to my evaluation? Re-express RUN's scores in each format and
    report ties, oblivious, expected, range and bias."""
    from rich.progress import Progress

    from ..analysis.sweep import FIELDS, sweep
    from ..io.convert import to_run
    from ..io.naming import short_name
    from ..report.formats import render_records
    from ..report.terminal import sweep_table

    fmt = output_format(ctx, fmt, output, Fmt)
    protect = (qrels, run)
    check_output(output, protect)
    fmts = score_formats(formats)
    run_paths = _sweep_run_paths(write_runs, run, fmts, protect) if write_runs is not None else None
    (source,) = held([run])  # opened once: its role check, its reading (and --write-runs)
    with (
        swap_check(qrels, [source], "tierank sweep QRELS RUN"),
        Progress(
            console=Console(emoji=False, stderr=True),
            disable=not sys.stderr.isatty(),
            transient=True,
        ) as prog,
    ):
        task = prog.add_task("sweeping formats", total=len(fmts))
        loaded = to_run(source)
        result = sweep(
            str(qrels),
            loaded,
            measure or SWEEP_MEASURES,
            fmts,
            settings,
            progress=lambda f: prog.advance(task),
        )
    if run_paths is not None:
        _write_sweep_runs(loaded, run_paths, protect)
    if fmt is Fmt("table"):
        print_tables(
            [sweep_table(result, short_name(run), str(settings.tie_break))], output, protect
        )
    else:
        emit(
            render_records(
                result.rows,
                FIELDS,
                fmt.value,
                document={"settings": result.settings, "rows": result.rows},
            ),
            output,
            protect,
        )


#: the options of ``tierank compare`` that apply to one collection only, not to a meta-analysis
#: over collection folders (`CompareSettings` fields; ``--correction`` is told by its source)
ONE_COLLECTION = ("band", "correction", "test", "ci", "level", "leaderboard", "tie_samples")


@app.command("compare")
@input_errors
@with_settings(
    settings=Offer(EvalSettings, EVAL_FIELDS),
    comparison=compare_offer(),
)
def compare_cmd(
    ctx: typer.Context,
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILES",
            help="The qrels, then two or more TREC runs (one per system); with --qrels "
            "only the runs; or two or more collection folders (each its qrels and runs, systems "
            "matched by file name): a meta-analysis over the collections",
        ),
    ],
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="The qrels (then every argument is a run).")
    ] = None,
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    fmt: Annotated[
        CompareFmt,
        typer.Option(
            "--format",
            "-f",
            help="table, json (the whole comparison as one document), or "
            + ", ".join(f for f in format_names("records") if f not in ("table", "json"))
            + " (the systems, or the leaderboard with --leaderboard, as a table).",
        ),
    ] = CompareFmt("table"),
    output: Output = None,
    settings: EvalSettings = FROM_OPTIONS,
    comparison: CompareSettings = FROM_OPTIONS,
    ppi: Annotated[
        Path | None,
        typer.Option(
            "--ppi",
            metavar="HUMAN_QRELS",
            help="QRELS are a machine judge's; HUMAN_QRELS judge some of the queries: also each "
            "system's mean and each pair's mean difference by prediction-powered inference (PPI, and "
            "power-tuned PPI++, with CIs at the comparison's level; json adds ppi_* fields to systems[] "
            "and pairs[]). Needs at least 10 human-judged queries and one without.",
        ),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Also write a manifest of what made the numbers (the inputs' SHA-256, versions, "
            "every setting, each system's and each pair's numbers) as YAML; check it with "
            "`tierank verify FILE`.",
        ),
    ] = None,
) -> None:
    """Systems side by side with E[M] and [min, max]; paired t-tests on per-query expected values; every
    pair whose order flips between oblivious and expected values, and every pair the ties leave undecidable;
    P(A>B): the probability that A's mean beats B's when both runs' ties are broken at random.
    One measure per call (-m given twice is an error)."""
    if qrels is None and files and all(f.is_dir() for f in files):  # one folder per collection
        from .planning import compare_collections_cmd

        unused = _one_collection_only(ctx, comparison)
        unused += ["--manifest"] * (manifest is not None) + ["--ppi"] * (ppi is not None)
        return compare_collections_cmd(
            files,
            one_measure(measure, "nDCG@10"),
            fmt.value,
            output,
            settings,
            comparison.alpha,
            unused,
        )
    qrels, runs = qrels_and_runs(files, qrels, COMPARE_USAGE)
    comparison = with_default_correction(ctx, comparison, len(runs))
    fmt = output_format(ctx, fmt, output, CompareFmt)
    compare_runs(
        qrels,
        runs,
        one_measure(measure, "nDCG@10"),
        (settings, comparison),
        fmt.value,
        (output, manifest),
        ppi,
    )


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option of the parameter ``name`` is given (not left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _one_collection_only(ctx: typer.Context, comparison: CompareSettings) -> list[str]:
    """The options of `ONE_COLLECTION` given a value other than their default."""
    declared = compare_declarations()
    default = CompareSettings()
    return [
        declared[f].flags[0]
        for f in ONE_COLLECTION
        if (_given(ctx, f) if f == "correction" else getattr(comparison, f) != getattr(default, f))
    ]


def with_default_correction(ctx: typer.Context, comparison, systems: int):
    """``comparison`` with the correction of `tierank.analysis.compare.default_correction` for
    ``systems`` systems where ``--correction`` is not given (holm with more than one pair)."""
    from dataclasses import replace

    from ..analysis.compare import default_correction

    if _given(ctx, "correction"):
        return comparison
    return replace(comparison, correction=default_correction(None, systems))


def compare_runs(
    qrels: Path, runs: list[Path], measure: str, both, fmt: str, outputs, ppi: Path | None = None
) -> None:
    """``tierank compare QRELS RUN RUN...`` under ``both`` (the `EvalSettings` and the
    `CompareSettings`), written as ``fmt`` to ``outputs`` (the output, the manifest; each None or a
    path); with ``ppi`` (human qrels for some queries) also the prediction-powered estimates."""
    from ..analysis.compare import compare

    settings, comparison = both
    output, manifest = outputs
    protect = (*runs, qrels, *([ppi] if ppi is not None else []))
    check_output(output, protect)
    if ppi is not None and not ppi.exists():
        from ..errors import quote

        raise TierankInputError(f"--ppi {quote(str(ppi))}: no such file")
    if manifest is not None:
        check_output(manifest, (*protect, *([output] if output else [])))
    sources = held(runs)  # each run opened once: its role check and its reading
    with swap_check(qrels, sources, COMPARE_USAGE):  # one role check for the runs and the qrels
        read = runs_by_name(sources)  # kept for the manifest's tie profiles
        with status("comparing..."):
            cmp = compare(
                read,
                str(qrels),
                measure,
                settings,
                comparison,
                ppi=None if ppi is None else str(ppi),
            )
    show_comparison(cmp, fmt, output, protect)
    if manifest is not None:
        _write_compare_manifest(
            manifest, qrels, runs, cmp, (settings, comparison), protect, (read, ppi)
        )


def _write_compare_manifest(manifest, qrels, runs, cmp, both, protect, read_ppi) -> None:
    """The manifest of this comparison (`tierank.provenance`), written atomically to ``--manifest``:
    ``both`` the settings it was made with, ``read_ppi`` the runs as read (their tie profiles) and
    the human qrels of ``--ppi`` (or None)."""
    import shlex

    from ..io.sources import name_runs
    from ..provenance.commands import compare_manifest

    man = compare_manifest(
        qrels,
        name_runs(runs),
        cmp,
        *both,
        command=shlex.join(["tierank", *sys.argv[1:]]),
        base=manifest.parent,
        read=read_ppi[0],
        ppi=read_ppi[1],
    )
    man.write(manifest, protect=protect)


def show_comparison(cmp, fmt: str, output, protect) -> None:
    """Write a comparison as ``tierank compare`` does (also ``tierank mteb`` over a folder of models):
    the terminal tables (the leaderboard's for a comparison made with ``leaderboard``), or the text of
    `tierank.report.comparison.ComparisonReport.render` (json: the whole comparison; the other
    records formats: the systems ranked by E[M])."""
    from ..report.comparison import ComparisonReport
    from ..report.terminal import compare_tables, leaderboard_tables

    report = ComparisonReport.of(cmp)
    if fmt == "table":
        c = report.comparison
        tables = leaderboard_tables(c) if report.leaderboard else compare_tables(c)
        if "ppi" in c.inference:
            from .ppi import comparison_tables

            tables = [*tables, *comparison_tables(c)]
        print_tables(tables, output, protect)
    else:
        emit(report.render(fmt), output, protect)


#: the deepest ranking ``tierank bands`` takes (its arrays have one cell a rank: 10^7 ranks, a few seconds)
MAX_BAND_DEPTH = 10_000_000


@app.command("bands")
@input_errors
def bands_cmd(
    rho: Annotated[
        str, typer.Option("--rho", help="Comma-separated band parameters > 1.")
    ] = "1.1,1.2,1.4,1.7,2.0",
    p: Annotated[
        str, typer.Option("--p", help="Comma-separated RBP persistence values.")
    ] = "0.5,0.85",
    depth: Annotated[
        int,
        typer.Option(
            "--depth",
            min=1,
            max=MAX_BAND_DEPTH,
            help=(
                f"Ranking depth (at most {MAX_BAND_DEPTH:,}: the worst cases are found over arrays of that length)."
            ),
        ),
    ] = 1000,
    fmt: Format = Fmt("table"),
) -> None:
    """Worst-case change of RR and RBP that geometric rank banding can cause under permutation averaging
    (Yang, Moffat & Turpin, Table 2)."""
    from ..analysis.banding import PAPER_TABLE2, worst_case_table
    from ..report.formats import render_records
    from ..report.terminal import bands_table

    try:
        rhos = tuple(float(x) for x in rho.split(","))
        ps = tuple(float(x) for x in p.split(","))
    except ValueError:
        raise TierankInputError(
            f"--rho and --p take comma-separated numbers, got {rho!r} and {p!r}"
        ) from None
    rows = worst_case_table(rhos, ps, depth=depth)
    if fmt is not Fmt("table"):
        emit(render_records(rows, tuple(rows[0]), fmt.value), None, ())
        return
    print_tables([bands_table(rows, PAPER_TABLE2)], None, (), min_width=0)
