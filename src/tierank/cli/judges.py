"""`tierank judges REFERENCE JUDGE...`: agreement of relevance judges with a reference
(`tierank.analysis.agreement`), and with ``--runs`` how the system ordering moves under each judge
(`tierank.analysis.agreement_runs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..analysis.agreement import DEFAULT_SAMPLES, FIELDS
from .app import app
from .common import Fmt, Format, Output, emit, input_errors, note, print_tables

#: the most bootstrap resamples (each keeps every statistic of every judge: 64 bytes a judge)
MAX_BOOTSTRAP = 100_000

#: the table's columns: (field, heading)
TABLE_COLUMNS = (
    ("n_pairs", "pairs"),
    ("cohen_kappa", "kappa"),
    ("cohen_kappa_linear", "k lin"),
    ("cohen_kappa_quadratic", "k quad"),
    ("krippendorff_alpha_nominal", "a nom"),
    ("krippendorff_alpha_ordinal", "a ord"),
    ("krippendorff_alpha_interval", "a int"),
    ("binary_agreement", "agree"),
    ("binary_kappa", "k bin"),
)

#: the fields of a system-ordering record (``--runs``)
RUN_FIELDS = (
    "judge",
    "measure",
    "systems",
    "kendall_tau_b",
    "tau_ap",
    "largest_rank_change",
    "significant_pairs",
    "flipped_pairs",
    "flipped_share",
)


#: the fields of a system's mean under a judge (``--runs``)
MEAN_FIELDS = ("judge", "run", "measure", "mean", "queries")


def means_table(means: list[dict]):
    """Each system's mean under the reference and under each judge (``--runs``): a run a row, a judge a
    column."""
    from rich.table import Table

    from ..report.terminal import num, text

    judges = list(dict.fromkeys(m["judge"] for m in means))
    runs = list(dict.fromkeys(m["run"] for m in means))
    value = {(m["judge"], m["run"]): m["mean"] for m in means}
    t = Table(title=text(f"each system's {means[0]['measure']} under the reference and each judge"))
    t.add_column("run", no_wrap=True)
    for j in judges:
        t.add_column(text(j), justify="right", no_wrap=True)
    for r in runs:
        t.add_row(text(r), *(num(value[(j, r)]) for j in judges))
    return t


def agreement_table(result, per_query: bool):
    """The rich table of an `Agreement`: the pooled records (kappa with its bootstrap CI), then each
    judge's queries with ``per_query``."""
    from rich.table import Table

    from ..report.terminal import num, text

    s = result.settings
    ci = (
        f"{s['confidence']:.0%} CI: {s['ci_method']}, {s['samples']} samples, seed {s['seed']}"
        if s["samples"]
        else "no CI"
    )
    t = Table(
        title=text(
            f"agreement with the reference (k: Cohen's kappa, a: Krippendorff's alpha; "
            f"agree, k bin: binarised at rel={s['rel']:g}; {ci})"
        )
    )
    t.add_column("judge", no_wrap=True, min_width=min(max(len(j) for j in result.judges), 40))
    if per_query:
        t.add_column("query", no_wrap=True)
    for f, head in TABLE_COLUMNS:
        if f == "cohen_kappa" and s["samples"]:
            head = f"kappa [{s['confidence']:.0%} CI]"
        t.add_column(head, justify="right", no_wrap=True)
    rows = []
    for rec in result.pooled:
        rows.append(rec)
        if per_query:
            rows += [r for r in result.per_query if r["judge"] == rec["judge"]]
    for r in rows:
        cells: list = [text(r["judge"])] + ([text(r["query"])] if per_query else [])
        for f, _ in TABLE_COLUMNS:
            cell = str(r[f]) if f == "n_pairs" else num(r[f], 3)
            lo = r.get(f"{f}_ci_low")
            if f == "cohen_kappa" and s["samples"] and lo is not None:
                cell += f" [{num(lo, 3)}, {num(r['cohen_kappa_ci_high'], 3)}]"
            cells.append(cell)
        t.add_row(*cells)
    return t


def runs_table(records: list[dict]):
    """The rich table of the system orderings under each judge (``--runs``)."""
    from rich.table import Table

    from ..report.terminal import num, text

    t = Table(title=text(f"system ordering against the reference's ({records[0]['measure']})"))
    for head in ("judge", "tau-b", "tau-AP", "max rank change", "sig. pairs", "flipped"):
        t.add_column(head, justify="left" if head == "judge" else "right", no_wrap=True)
    for r in records:
        t.add_row(
            text(r["judge"]),
            num(r["kendall_tau_b"]),
            num(r["tau_ap"]),
            str(r["largest_rank_change"]),
            str(r["significant_pairs"]),
            f"{r['flipped_pairs']} ({num(r['flipped_share'])})",
        )
    return t


@app.command("judges")
@input_errors
def judges_cmd(
    reference: Annotated[
        Path,
        typer.Argument(
            metavar="REFERENCE", help="The reference judgments (e.g. the human qrels); .gz ok"
        ),
    ],
    judges: Annotated[
        list[Path],
        typer.Argument(
            metavar="JUDGE",
            help="Each judge's qrels (one file a judge, named by its shortest distinguishing path "
            "suffix), or with --judge-column files of qid judge docid grade lines",
        ),
    ],
    judge_column: Annotated[
        bool,
        typer.Option(
            "--judge-column", help="JUDGE files hold qid judge docid grade (several judges a file)."
        ),
    ] = False,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale",
            metavar="LO..HI",
            help="The grade scale (default: the reference's smallest to largest grade); a grade "
            "outside it is an error unless --out-of-scale says otherwise.",
        ),
    ] = None,
    out_of_scale: Annotated[
        str,
        typer.Option(
            "--out-of-scale",
            help="A grade outside the scale: error (located), clip (to the scale) or drop (the "
            "row); rows changed are counted in a note.",
        ),
    ] = "error",
    missing: Annotated[
        str,
        typer.Option(
            "--missing",
            help="A pair graded by the reference or a judge but not both: error, or drop (compare "
            "the pairs both graded; counted in a note).",
        ),
    ] = "error",
    rel: Annotated[
        float,
        typer.Option(
            "--rel", "-l", help="Grade at which agreement is binarised (relevant: >= rel)."
        ),
    ] = 1,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Also report every query.")
    ] = False,
    samples: Annotated[
        int,
        typer.Option(
            "--bootstrap",
            min=0,
            max=MAX_BOOTSTRAP,
            help="Bootstrap resamples of the queries for the CIs (0: none).",
        ),
    ] = DEFAULT_SAMPLES,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.5, max=0.999, help="Confidence of the CIs.")
    ] = 0.95,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")] = 0,
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
            help="A run (repeatable): each system's measure under each judge, and how the system "
            "ordering moves against the reference's (Kendall's tau-b, tau-AP, the largest rank "
            "change, the significant pairs that flip).",
        ),
    ] = None,
    measure: Annotated[
        str, typer.Option("-m", "--measure", help="The measure of --runs.")
    ] = "nDCG@10",
    fmt: Format = Fmt("table"),
    output: Output = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            metavar="FILE",
            help="Also write a manifest of what made the numbers (the reference's, each judge's "
            "and each run's SHA-256, versions, every setting, the pooled agreement and the "
            "orderings) as YAML; check it with `tierank verify FILE`.",
        ),
    ] = None,
) -> None:
    """Agreement of relevance judges with a reference: Cohen's kappa (unweighted, linear,
    quadratic), Krippendorff's alpha (nominal, ordinal, interval), agreement binarised at --rel and
    the confusion matrix, pooled and per query, with bootstrap CIs over queries; with --runs, how
    the system ordering moves under each judge."""
    protect = (reference, *judges, *(runs or ()))
    if output is not None or manifest is not None:
        from ..io.writers import check_output

        if output is not None:
            check_output(output, protect)
        if manifest is not None:
            check_output(manifest, (*protect, *([output] if output else [])))
    settings = {
        "judge_column": judge_column,
        "scale": scale,
        "out_of_scale": out_of_scale,
        "missing": missing,
        "rel": rel,
        "bootstrap": samples,
        "confidence": confidence,
        "seed": seed,
    }
    result, ordering, means, said = judge_agreement(
        reference, judges, runs or [], measure, settings
    )
    for line in said:
        note(line)
    how = str(getattr(fmt, "value", fmt))
    _write_judges((result, ordering, means), per_query, how, output, protect)
    if manifest is not None:
        _write_judges_manifest(
            manifest,
            (reference, judges, runs or []),
            settings,
            (result, ordering, means),
            [measure] if runs else [],
            protect,
        )


def _write_judges(found: tuple, per_query: bool, how: str, output, protect: tuple) -> None:
    """The agreement, and with runs the orderings and means (``found``), written as ``how``."""
    from ..report.formats import render_records

    result, ordering, means = found
    records = result.pooled + (result.per_query if per_query else [])
    if how == "table":
        tables = [agreement_table(result, per_query)]
        if ordering:
            tables += [means_table(means), runs_table(ordering)]
        print_tables(tables, output, protect)
    elif how == "json":
        doc = result.to_dict(per_query)
        if ordering:
            doc["orderings"] = ordering
            doc["systems"] = means
        emit(render_records(records, FIELDS, "json", document=doc), output, protect)
    elif how == "jsonl":
        emit(
            render_records(records, FIELDS, "jsonl", stream=records + ordering + means),
            output,
            protect,
        )
    else:
        text = render_records(records, FIELDS, how)
        if ordering:
            text += "\n" + render_records(ordering, RUN_FIELDS, how)
            text += "\n" + render_records(means, MEAN_FIELDS, how)
        emit(text, output, protect)


def _write_judges_manifest(
    manifest: Path, inputs: tuple, settings: dict, found: tuple, measures: list, protect: tuple
) -> None:
    """The manifest of ``tierank judges`` (`tierank.provenance`), written atomically: ``inputs``
    the reference, the judges and the runs; ``found`` the agreement, orderings and means."""
    import shlex
    import sys

    from ..provenance.commands import judges_manifest

    reference, judges, runs = inputs
    man = judges_manifest(
        reference,
        judges,
        runs,
        settings,
        judges_results(*found),
        measures,
        command=shlex.join(["tierank", *sys.argv[1:]]),
        base=manifest.parent,
    )
    man.write(manifest, protect=protect)


def judge_agreement(
    reference: Path | str, judges: list, runs: list, measure: str, settings: dict
) -> tuple:
    """The agreement of ``judges`` with ``reference`` under ``settings`` (the options of
    ``tierank judges`` by name: judge_column, scale, out_of_scale, missing, rel, bootstrap,
    confidence, seed), and with two or more ``runs`` the orderings and means under ``measure``:
    (the `tierank.analysis.agreement` result, the orderings, the means, the notes)."""
    from ..analysis.agreement import agreement
    from ..io.judgments import align, parse_scale, read_judges
    from ..io.sources import read

    scale = settings["scale"]
    declared = parse_scale(scale) if scale is not None else None
    ref = read(reference, "qrels", str(reference))
    found, notes = read_judges(judges, judge_column=settings["judge_column"])
    judged = align(
        ref,
        found,
        missing=settings["missing"],
        scale=declared,
        out_of_scale=settings["out_of_scale"],
    )
    said = [*notes, *judged.notes]
    result = agreement(
        judged.reference,
        judged.grades,
        judged.qid,
        judged.judges,
        rel=settings["rel"],
        samples=settings["bootstrap"],
        seed=settings["seed"],
        confidence=settings["confidence"],
    )
    ordering: list[dict] = []
    means: list[dict] = []
    if runs:
        from ..analysis.agreement_runs import orderings

        ordering, means, more = orderings(judged, runs, measure)
        said += more
    return result, ordering, means, said


def judges_results(result, ordering: list[dict], means: list[dict]) -> dict:
    """``results`` of a judges manifest: each judge's pooled agreement, and with runs the
    orderings and each system's mean under each judge."""
    pooled = result.to_dict(False)["judges"]  # as `-f json` writes them: plain values
    out: dict = {"agreement": [{k: v for k, v in r.items() if k != "query"} for r in pooled]}
    if ordering:  # undefined values null, as `-f json` writes them
        out["orderings"] = [{k: _plain(r.get(k)) for k in RUN_FIELDS} for r in ordering]
        out["systems"] = [{k: _plain(r.get(k)) for k in MEAN_FIELDS} for r in means]
    return out


def _plain(value):
    """``value`` as a plain Python value; NaN (undefined) as None."""
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and value != value else value
