"""`tierank eval`.

No ``from __future__ import annotations`` here: typer reads the command's annotations twice per call, and
string annotations would be evaluated each time (about 3 ms of a small run).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import Problem, TierankInputError
from ..io.sources import AUTO_STREAM_BYTES as STREAM_BYTES
from ..settings import EvalSettings
from .app import app
from .common import (
    DEFAULT_MEASURES,
    MAX_JOBS,
    DocsInCollection,
    EvalFmt,
    EvalFormat,
    NoSummary,
    Output,
    StatOption,
    emit,
    input_errors,
    measures_option,
    note,
    output_format,
    print_tables,
    swap_check,
)
from .options import EVAL_FIELDS, FROM_OPTIONS, Exclusive, Offer, excluded, with_settings

#: what tierank does not take of trec_eval's input options (``-R``, ``-Z``), in one sentence
NOT_SUPPORTED = (
    "tierank reads TREC qrels only (trec_eval's -R qrels, its default); trec_eval's preference and "
    "judgment-group files (-R prefs, -R qrels_prefs, -R qrels_jg) with their measures (all_prefs, "
    "prefs_*, qrels_jg) and its z-score standardisation (-Z) are not supported"
)

#: ``-m`` with ``--format trec_eval`` and no ``-m``: trec_eval's own default
TREC_DEFAULT = ["official"]

USAGE = "tierank eval QRELS RUN [RUN...]"


def _coverage(result, evaluated):
    """Judged@10 kept in the table only when unjudged documents can reach the top 10 (or when
    the plan ``evaluated`` shows it: it was asked for)."""
    from dataclasses import replace

    from ..measures import parse_measure
    from ..measures.plans import COVERAGE

    judged10 = parse_measure(COVERAGE)
    if judged10 not in result.measures:
        return result, None
    stats = result.stats[judged10]
    if float(stats.min.min()) >= 1.0:
        if not evaluated.shows(judged10):
            result = replace(result, measures=[m for m in result.measures if m != judged10])
        return result, None
    return result, float(stats.expected.mean())


@app.command("eval")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def eval_cmd(
    ctx: typer.Context,
    qrels: Annotated[
        Path,
        typer.Argument(
            metavar="QRELS",
            help="TREC qrels (qid iter docid grade) or BEIR qrels TSV; subtopic qrels (qid "
            "subtopic docid grade) for the intent-aware measures (alpha_nDCG, ERR_IA, ...); .gz ok",
        ),
    ],
    runs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN",
            help="TREC run(s) (qid Q0 docid rank score tag; .gz ok), Parquet/Arrow files, or folders "
            "of them; several runs are evaluated against the qrels read once, each output tagged "
            "with the run's name (its shortest distinguishing path suffix)",
        ),
    ],
    measure: measures_option(DEFAULT_MEASURES, trec=True) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also report every query.")
    ] = False,
    fmt: EvalFormat = EvalFmt("table"),
    output: Output = None,
    settings: EvalSettings = FROM_OPTIONS,
    docs_in_collection: DocsInCollection = None,
    no_summary: NoSummary = False,
    stat: StatOption = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            max=MAX_JOBS,
            help="Stream the run in query-aligned blocks with N worker processes (bounded memory; "
            "the same numbers to the last bit; default: every core for a run file over 64 MB, "
            "in memory otherwise); several runs: N runs at once (default: every core)",
        ),
    ] = None,
    rel_format: Annotated[
        str | None,
        typer.Option(
            "-R", hidden=True, help="trec_eval's relevance format: only qrels (its default)"
        ),
    ] = None,
    zscores: Annotated[
        str | None, typer.Option("-Z", hidden=True, help="trec_eval's z-scores: not supported")
    ] = None,
    ppi: Annotated[
        Path | None,
        typer.Option(
            "--ppi",
            metavar="HUMAN_QRELS",
            help="QRELS are a machine judge's labels for every query, HUMAN_QRELS human labels "
            "for some: each run's mean is also estimated by prediction-powered inference (PPI and "
            "power-tuned PPI++, 95% CIs; aggregate records add ppi_mean, ppi_ci_low, ppi_ci_high, "
            "...), and with several runs each pairwise difference (table, json); refused with "
            "fewer than 10 human-labelled queries",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            metavar="DISTRIBUTIONS",
            help="Label distributions (qid 0 docid p0 ... pK per pair, or JSONL/Parquet with qid, "
            "docid, probs): records add each measure's expectation over grades drawn from them and "
            "tie orderings (label_expected), its variance split into var_tie and var_label, and "
            "plugin (the measure on the expected grades); exact for P, Hits, RBP, Judged, sampled "
            "(--samples, --seed) elsewhere",
        ),
    ] = None,
    panel: Annotated[
        list[Path] | None,
        typer.Option(
            "--panel",
            metavar="JUDGE_QRELS",
            help="A judge's qrels (repeatable, 2 or more; with --judge-column, files of qid judge "
            "docid grade lines): as --labels, over a judge drawn uniformly from the panel (every "
            "judge enumerated, exact) and tie orderings; every judge must grade every query QRELS "
            "evaluates",
        ),
    ] = None,
    judge_column: Annotated[
        bool,
        typer.Option(
            "--judge-column",
            help="--panel files hold qid judge docid grade (several judges a file).",
        ),
    ] = False,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Also write a manifest of what made the numbers (the inputs' SHA-256, versions, "
            "every setting that can change a number, tie profiles, the results; ir_metadata-"
            "compatible YAML): `tierank verify FILE` recomputes and checks them",
        ),
    ] = None,
    block_bytes: Annotated[
        int | None,
        typer.Option(
            "--block-bytes",
            min=1,
            help="Stream the run in blocks of up to about N bytes of text (default 64 MB; "
            "with several jobs a file is cut finer, into at least 8 blocks a job; memory "
            "grows with N times jobs + 1); one run only",
        ),
    ] = None,
) -> None:
    """Evaluate RUN (or several runs) against QRELS with tie-aware statistics.

    trec_eval's measure names, flags (-q -c -l -M -J -N -n) and, with --format trec_eval, its
    output layout are accepted as trec_eval accepts them.
    """
    fmt = output_format(ctx, fmt, output, EvalFmt)
    options = EvalOptions(
        fmt=fmt.value,
        measures=tuple(measure or ()),
        per_query=per_query,
        output=output,
        stat=None if stat is None else stat.value,
        summary=not no_summary,
        docs_in_collection=docs_in_collection,
        jobs=jobs,
        block_bytes=block_bytes,
        rel_format=rel_format,
        zscores=zscores,
        ppi=ppi,
        labels=labels,
        manifest=manifest,
        panel=tuple(panel or ()),
        judge_column=judge_column,
    )
    run_eval(qrels, runs, settings, options)


def _shown(value: str) -> str:
    """``value`` as given, or its repr where it holds a character that would break the one-line error."""
    return value if value.isprintable() else repr(value)


#: the options of ``tierank eval`` that exclude others: each evaluates the runs in memory and
#: writes the formats other than trec_eval
EXCLUSIVE = (
    Exclusive(
        "--ppi",
        ("--format trec_eval", "--jobs", "--block-bytes"),
        "evaluates the runs in memory and writes the formats other than trec_eval",
    ),
    Exclusive(
        "--labels",
        ("--format trec_eval", "--jobs", "--block-bytes", "--ppi"),
        "evaluates the runs in memory and writes the formats other than trec_eval",
    ),
    Exclusive(
        "--panel",
        ("--format trec_eval", "--jobs", "--block-bytes", "--ppi", "--labels"),
        "evaluates the runs in memory and writes the formats other than trec_eval",
    ),
)


@dataclass(frozen=True)
class EvalOptions:
    """What ``tierank eval`` evaluates and writes, beyond the evaluation's settings
    (`tierank.EvalSettings`): the ``-m`` texts (none: the default measures), the output
    (``fmt``, ``per_query``, ``output``; trec_eval's ``stat`` and ``summary``), ``-N`` and the
    streaming (``jobs``, ``block_bytes``)."""

    fmt: str = "table"
    measures: tuple[str, ...] = ()
    per_query: bool = False
    output: Path | None = None
    stat: str | None = None
    summary: bool = True
    docs_in_collection: int | None = None
    jobs: int | None = None
    block_bytes: int | None = None
    rel_format: str | None = None
    zscores: str | None = None
    ppi: Path | None = None
    manifest: Path | None = None
    labels: Path | None = None
    panel: tuple[Path, ...] = ()
    judge_column: bool = False

    def __post_init__(self) -> None:
        problems = self._panel_problems()
        if self.rel_format is not None and self.rel_format != "qrels":
            problems.append(Problem("", None, f"-R {_shown(self.rel_format)}: {NOT_SUPPORTED}"))
        if self.zscores is not None:
            problems.append(Problem("", None, f"-Z {_shown(self.zscores)}: {NOT_SUPPORTED}"))
        if self.stat is not None and not self.trec:
            problems.append(
                Problem(
                    "",
                    None,
                    "--stat picks the statistic of --format trec_eval; the other formats "
                    "print every statistic",
                )
            )
        if not self.summary and not self.trec:
            problems.append(
                Problem(
                    "",
                    None,
                    "-n/--no-summary applies to --format trec_eval (the other formats "
                    "always hold the summary)",
                )
            )
        problems += excluded(EXCLUSIVE, self._given)
        if self.ppi is not None and not self.ppi.exists():
            from ..errors import quote

            problems.append(Problem("", None, f"--ppi {quote(str(self.ppi))}: no such file"))
        if self.labels is not None and not self.labels.exists():
            from ..errors import quote

            problems.append(Problem("", None, f"--labels {quote(str(self.labels))}: no such file"))
        if problems:
            raise TierankInputError(problems)
        if self.jobs is not None and self.jobs < 1:
            raise TierankInputError(f"--jobs must be at least 1, got {self.jobs}")

    def _given(self, flag: str) -> bool:
        """Whether the option ``flag`` of `EXCLUSIVE` is given."""
        return {
            "--format trec_eval": self.trec,
            "--jobs": bool(self.jobs),
            "--block-bytes": bool(self.block_bytes),
            "--ppi": self.ppi is not None,
            "--labels": self.labels is not None,
            "--panel": bool(self.panel),
        }[flag]

    def _panel_problems(self) -> list[Problem]:
        """``--judge-column`` without ``--panel``, and ``--panel`` files that do not exist (what
        ``--panel`` cannot go with is in `EXCLUSIVE`)."""
        from ..errors import quote

        if not self.panel:
            said = "--judge-column reads the --panel files; no --panel given"
            return [Problem("", None, said)] if self.judge_column else []
        return [
            Problem("", None, f"--panel {quote(str(p))}: no such file")
            for p in self.panel
            if not p.exists()
        ]

    @property
    def trec(self) -> bool:
        """trec_eval's layout."""
        return self.fmt == "trec_eval"

    @property
    def texts(self) -> list[str]:
        """The ``-m`` texts, or the default: trec_eval's ``official`` in its layout, else tierank's."""
        return list(self.measures or (TREC_DEFAULT if self.trec else DEFAULT_MEASURES))


def run_eval(qrels: Path, runs: list[Path], settings, options: EvalOptions) -> None:
    """``tierank eval QRELS RUN...`` under ``settings`` and ``options``: the runs named (folders
    expanded), the measures resolved once, every run evaluated and written."""
    named = _run_files(runs)
    if options.block_bytes is not None and len(named) > 1:
        raise TierankInputError(
            "--block-bytes streams one run; several runs are each evaluated in memory"
        )
    protect = _checked_outputs(qrels, named, options)
    if settings.judged_only and settings.max_depth is not None:
        note(
            "-J with -M: tierank drops the unjudged documents first, then reads M ranks of the rest; trec_eval "
            "reads M ranks, then drops the unjudged documents among them"
        )
    condensing = settings.unjudged == "condensed"
    in_memory = options.ppi is None and options.labels is None and not options.panel
    plan, evaluated = _plan(
        options.texts,
        options.docs_in_collection,
        settings if options.trec else None,
        options.fmt == "table" and not condensing and in_memory,
    )
    sources = _sources(named, evaluated, options) if in_memory else dict(named)
    with swap_check(qrels, list(sources.values()), USAGE):
        results = _evaluate(
            qrels,
            sources,
            evaluated,
            options.jobs,
            settings,
            options.block_bytes,
            score_format=options.manifest is not None,
        )
    if not settings.complete and not condensing:
        _note_unjudged_queries(results, qrels)
    if options.manifest is not None:
        _write_manifest(qrels, named, results, evaluated, settings, options, protect)
    if not in_memory:  # --ppi, --labels or --panel: estimates beside the tie statistics
        _write_estimates(sources, evaluated, settings, results, options, protect)
        return
    _write_results(results, sources, plan, evaluated if not condensing else None, options, protect)


def _checked_outputs(qrels: Path, named: dict[str, Path], options: EvalOptions) -> tuple:
    """The files no output may overwrite (the inputs), once ``-o`` and ``--manifest`` are checked
    against them (`tierank.io.writers.check_output`)."""
    protect = (qrels, *named.values(), *([options.ppi] if options.ppi is not None else []))
    protect += (options.labels,) if options.labels is not None else ()
    protect += options.panel
    if options.output is not None:  # io.writers is imported where there is a file to write
        from ..io.writers import check_output

        check_output(options.output, protect)
    if options.manifest is not None:
        from ..io.writers import check_output

        check_output(options.manifest, (*protect, *([options.output] if options.output else [])))
    return protect


def _write_estimates(sources, evaluated, settings, results, options: EvalOptions, protect) -> None:
    """``--ppi`` (machine labels in QRELS, human labels for some queries), ``--labels`` (label
    distributions) or ``--panel`` (a judge drawn from a panel): expectation and variance over
    grades, written beside the tie statistics."""
    from .added import Written

    if options.ppi is not None:
        from .ppi import write_ppi

        write_ppi(
            options.ppi,
            sources,
            evaluated,
            settings,
            results,
            Written(options.fmt, options.per_query, options.output, (*protect, options.ppi)),
        )
        return
    from .labels import write_labels

    write_labels(
        options.labels if options.labels is not None else list(options.panel),
        sources,
        evaluated,
        settings,
        results,
        Written(options.fmt, options.per_query, options.output, protect),
        options.judge_column,
    )


def _write_results(results, sources, plan, evaluated, options: EvalOptions, protect) -> None:
    """The results in the format asked for: the terminal tables (with the judgment coverage when
    the plan ``evaluated`` is not None, see `_print_tables`), trec_eval's layout (its notes on
    stderr), or a format of `tierank.report.formats`."""
    if options.fmt == "table":
        _print_tables(results, options.per_query, evaluated, options.output, protect)
        return
    from ..io.readers import run_tag
    from ..report.formats import ResultTable, render

    trec = options.trec
    runids = {name: run_tag(src) for name, src in sources.items()} if trec and plan.runid else {}
    layout = (
        dict(plan=plan, stat=options.stat or "oblivious", summary=options.summary) if trec else {}
    )
    grouped = ResultTable.of(results, runids=runids)
    if trec:  # trec_eval's layout as UTF-8 bytes, written without one string of it all
        from ..report.formats.trec_eval import render_pieces

        emit(render_pieces(grouped, options.per_query, **layout), options.output, protect)
    else:
        emit(render(grouped, options.fmt, options.per_query, **layout), options.output, protect)
    if trec:  # its three columns are its contract: what is an estimate is said on stderr
        from ..report.marks import trec_eval_note

        said = trec_eval_note(results.values(), options.stat or "oblivious", plan.name_of)
        if said is not None:
            note(said)


def _write_manifest(qrels, named, results, evaluated, settings, options, protect) -> None:
    """The manifest of this evaluation (`tierank.provenance`), written atomically to ``--manifest``."""
    import shlex
    import sys

    from ..provenance import eval_manifest

    inputs: list[tuple[str, Path]] = []
    estimates: dict = {}
    if options.ppi is not None:
        inputs, estimates = [("ppi human qrels", options.ppi)], {"kind": "ppi"}
    elif options.labels is not None or options.panel:
        inputs = [("labels", options.labels)] if options.labels is not None else []
        inputs += [("panel judge", judge) for judge in options.panel]
        estimates = {"kind": "labels" if options.labels is not None else "panel"}
        estimates["judge_column"] = options.judge_column
    if estimates:  # the estimates are written beside the manifest's numbers, not in them
        estimates["note"] = (
            "verify checks these inputs' SHA-256 (data.estimates) and makes the tie statistics "
            "of results again; the estimates written beside them are not recorded, nor made again"
        )
    man = eval_manifest(
        qrels,
        {name: (named[name], result) for name, result in results.items()},
        [str(m) for m in evaluated.measures],
        settings,
        command=shlex.join(["tierank", *sys.argv[1:]]),
        base=options.manifest.parent,
        docs_in_collection=options.docs_in_collection,
        reread=False,
        estimates=estimates,
        estimate_inputs=inputs,
    )
    man.write(options.manifest, protect=protect)


def _print_tables(results: dict, per_query: bool, evaluated, output, protect: tuple) -> None:
    """The terminal tables, one per run (titled with its name when there are several); with
    the plan ``evaluated`` not None, the judgment coverage beside the measures where it is
    incomplete."""
    # rich's tables: imported for this format only
    from ..report.terminal import eval_table, text

    tables = []
    for name, result in results.items():
        coverage = None
        if evaluated is not None:
            result, coverage = _coverage(result, evaluated)
        table = eval_table(result, per_query, coverage)
        if len(results) > 1:  # the run's name (io.naming), as written, on one line
            table.title = text(f"run {name}")
            table.min_width = len(table.title) + 4
        tables.append(table)
    print_tables(tables, output, protect)


def _plan(texts: list[str], docs_in_collection: int | None, trec, coverage: bool):
    """The ``-m`` texts resolved once: (the plan, printed as asked; the plan evaluated: string-valued
    measures left out but in trec_eval's layout, ``Judged@10`` computed for the table's coverage
    column when ``coverage`` (shown only where asked for), ``Hits@1`` when nothing else gives the
    query set).  ``trec``: the settings of ``--format trec_eval`` (None: another format), whose
    ``-c`` and ``-l`` the plan's counts follow (`Plan.with_trec_eval_counts`)."""
    from dataclasses import replace

    from ..measures import parse_measure
    from ..measures.names import Entry
    from ..measures.names import plan as measure_plan

    plan = measure_plan(texts).with_docs_in_collection(docs_in_collection)
    if trec is not None:
        plan = plan.with_trec_eval_quirks().with_trec_eval_counts(
            complete=trec.complete, rel=trec.rel
        )
    for line in plan.notes:
        note(line)
    measures = plan.measures
    strings = [m for m in measures if getattr(m, "string_valued", False)]
    if trec is None and len(strings) == len(
        measures
    ):  # runid, relstring ...: nothing this layout writes
        asked = ", ".join(dict.fromkeys(texts))
        raise TierankInputError(
            f"-m {asked}: nothing to write but in --format trec_eval (runid and relstring are "
            "trec_eval's per-run and per-query lines); add a measure or use --format trec_eval"
        )
    if strings and trec is None:  # relstring: a string per query, only trec_eval's layout prints it
        note(
            f"{', '.join(plan.name_of(m) for m in strings)}: a string per query, printed by --format trec_eval "
            "only; left out"
        )
        measures = [m for m in measures if m not in strings]
    evaluated = replace(
        plan, entries=tuple(e for e in plan.entries if e.measure in measures), notes=()
    )
    if coverage:  # judgment coverage beside the measures, where the top 10 is incomplete
        evaluated = evaluated.with_coverage()
    if not evaluated.measures:  # trec_eval's runid / relstring alone: any measure gives the
        # query set; its layout prints only what was asked (the plan)
        evaluated = replace(
            evaluated, entries=(Entry("Hits@1", parse_measure("Hits@1"), shown=False),)
        )
    return plan, evaluated


def _note_unjudged_queries(results: dict, qrels: Path) -> None:
    """One note per run whose queries are not all in the qrels: how many are left out (as trec_eval
    leaves them out, without a word; ``-c`` evaluates the qrels' queries the run lacks instead)."""
    for name, result in results.items():
        left = result.unevaluated
        total = left + len(result.qids)
        if left > 0:
            verb = "is" if left == 1 else "are"
            note(
                f"{name}: {left} of its {total} queries {verb} not in {qrels} and {verb} not evaluated "
                "(as trec_eval does)"
            )


def _run_files(paths: list[Path]) -> dict[str, Path]:
    """``{name: path}``: files as given, folders expanded to their runs (`tierank.io.sources.expand_runs`:
    every file that parses as a run, sorted; what is skipped is listed on stderr, with why), a folder written
    by `tierank.stream.partition` as one run; each named by `tierank.io.sources.name_runs` (its
    shortest distinguishing path suffix); the same file twice is an error."""
    from typing import cast

    from ..io.sources import expand_runs, name_runs

    return cast("dict[str, Path]", name_runs(expand_runs(paths, note)))


#: a single text run larger than this is streamed by default (all cores); smaller ones fit one block
AUTO_STREAM_BYTES = STREAM_BYTES


def _sources(named: dict[str, Path], measures, options: EvalOptions) -> dict[str, Any]:
    """``{name: source}``: the one run of an evaluation that may be in memory (no ``--jobs``, no
    ``--block-bytes``) opened and read once when it is a text file (`tierank.io.sources.hold`: its role
    check, the choice to stream it, its reading and its ``runid`` all come from that read), unless it is
    to be streamed by default (`_auto_jobs`); any other run as its path."""
    if len(named) != 1 or options.jobs is not None or options.block_bytes is not None:
        return dict(named)
    from ..io.sources import hold

    ((name, path),) = named.items()
    additive = all(m.additive for m in measures.measures)
    return {name: hold(path, AUTO_STREAM_BYTES if additive else None)}


def _auto_jobs(path: Any, measures) -> int | None:
    """``--jobs`` left out: stream a large plain or gzip run file with every core (the same numbers
    to the last bit, bounded memory; `tierank.io.sources.stream_by_default`); a small one, a columnar
    file, a pipe, or measures whose summary needs every query at once (GMAP) are evaluated in memory.
    ``path``: a path, or a run file read once (`tierank.io.lexer.Held`), which says whether it streams."""
    import os

    from ..io.lexer import Held
    from ..io.sources import stream_by_default

    if isinstance(path, Held):
        if not path.streams:
            return None
    elif not stream_by_default(path, AUTO_STREAM_BYTES):
        return None
    if any(not m.additive for m in measures.measures):
        return None
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )


def _size(path: Any) -> int | None:
    """The size of the run file ``path`` (a path or a `tierank.io.lexer.Held`), None for a pipe or a folder."""
    from ..io.lexer import Held

    if isinstance(path, Held):
        return path.size if path.regular else None
    return path.stat().st_size if path.is_file() else None


def _note_float_grades(ev, settings) -> None:
    """A note when the qrels hold grades that are not whole numbers: read as floats, never truncated
    (trec_eval truncates them); the binary measures apply ``rel`` to them."""
    from ..io.judgments import non_integer

    n = non_integer(ev.qrels.grade)
    if n:
        note(
            f"{ev.qrels.source}: {n} grade{'s' * (n != 1)} not a whole number, read as floats (trec_eval "
            f"truncates them); binary measures count a grade >= {settings.rel:g} relevant"
        )


def _evaluate(
    qrels: Path,
    named: dict[str, Any],
    measures,
    jobs: int | None,
    settings,
    block_bytes: int | None = None,
    score_format: bool = False,
) -> dict:
    """``{name: EvalResult}``: in memory, or streamed with ``jobs`` workers (one run; a large run file
    streams by default), or ``jobs`` runs at once (default: every core); the qrels are read once.
    ``named``: each run's path, or the one run read once (`_sources`).
    A live line on stderr when it is a terminal: the phase, or lines, queries and rate when
    streaming, or runs done."""
    import os

    from ..evaluate import Evaluator
    from ..io.lexer import Held
    from .progress import Progress, size_text

    with Progress() as prog:
        if len(named) == 1:
            ((name, path),) = named.items()
            if jobs is None:
                jobs = _auto_jobs(path, measures) or (1 if block_bytes else None)
            if jobs is None:
                nbytes = _size(path)
                size = f" ({size_text(nbytes)})" if nbytes is not None else ""
                prog.phase(f"reading {qrels}")
                ev = Evaluator(str(qrels), measures, settings)
                _note_float_grades(ev, settings)
                what = f"{path}{size}"
                return {
                    name: ev.evaluate(
                        path if isinstance(path, Held) else str(path),
                        progress=lambda *step: prog.steps(what, *step),
                        score_format=score_format,
                    )
                }
            # worker processes: imported when streaming
            from ..processes import keep_freed_memory
            from ..stream import BLOCK_BYTES, evaluate_stream

            keep_freed_memory()  # this process is ours: with -j 1 it parses every block itself

            prog.phase(f"streaming {path} with {jobs} worker{'s' * (jobs > 1)}")
            return {
                name: evaluate_stream(
                    str(qrels),
                    str(path),
                    measures,
                    jobs=jobs,
                    progress=prog.stream,
                    progress_bytes=prog.stream_bytes,
                    block_bytes=block_bytes or BLOCK_BYTES,
                    settings=settings,
                )
            }
        from ..processes import keep_freed_memory
        from ..stream import evaluate_many

        keep_freed_memory()  # several runs, one after another in this process with -j 1
        prog.phase(f"reading {qrels}")
        q = Evaluator(str(qrels), measures, settings)
        _note_float_grades(q, settings)
        total = len(named)
        done = [0]

        def one_done(name: str) -> None:
            done[0] += 1
            prog.runs(done[0], total, name)

        if jobs is None:
            jobs = min(
                total,
                len(os.sched_getaffinity(0))
                if hasattr(os, "sched_getaffinity")
                else os.cpu_count() or 1,
            )
        prog.runs(0, total)
        return evaluate_many(
            q, {name: str(p) for name, p in named.items()}, jobs=jobs, progress=one_done
        )
