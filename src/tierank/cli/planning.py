"""`tierank plan`, `discriminative-power` and `forest`, and `tierank compare` over several collections
(folders: `compare_collections_cmd`)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import TierankInputError
from ..io.writers import check_output
from ..settings import EvalSettings
from .app import app
from .common import (
    Output,
    OutStem,
    Regimes,
    check_figure_stem,
    choices_enum,
    emit,
    input_errors,
    measures_option,
    named_runs,
    one_measure,
    one_measure_option,
    print_tables,
    require,
    save,
    status,
)
from .options import EVAL_FIELDS, FROM_OPTIONS, Offer, with_settings

if TYPE_CHECKING:  # built at run time, where typer reads them (see tierank.cli.common.Fmt)
    TableJson = Enum
    DiscMethod = Enum
    ForestScale = Enum
else:
    TableJson = choices_enum("TableJson", ("table", "json"))
    DiscMethod = choices_enum("DiscMethod", ("bootstrap", "tukey"))
    ForestScale = choices_enum("ForestScale", ("diff", "dz"))

#: the measures of `tierank discriminative-power` when no -m is given
DISCRIMINATION_MEASURES = ["AP", "nDCG@10", "RR"]
PLAN_USAGE = "tierank plan [QRELS RUN RUN...] (--effect D | --diff DELTA [--sd SIGMA]) [--topics N]"
DISC_USAGE = "tierank discriminative-power QRELS RUN RUN... (or QRELS RUN --regimes F1,F2,...)"
FOREST_USAGE = "tierank forest DIR DIR... --pair A,B -o STEM"

Alpha = Annotated[float, typer.Option("--alpha", help="Significance level (two-sided).")]
Fmt2 = Annotated[TableJson, typer.Option("--format", "-f", help="table or json.")]


def _stem(stem: Path, protect: tuple) -> None:
    """A figure's output stem: a file name (STEM.png and STEM.svg are written), checked before any work."""
    if not stem.name or stem.name in (".", ".."):
        raise TierankInputError(
            f"{str(stem) or repr('')}: give a file name stem (STEM.png and STEM.svg are written)"
        )
    check_figure_stem(stem, protect)


def _pilot(qrels: Path, runs: list[Path], measure: str, settings, regimes: str | None):
    from ..analysis.multi import per_topic

    with named_runs(qrels, runs, PLAN_USAGE, regimes) as named:
        if len(named) < 2:
            raise TierankInputError(
                f"tierank plan: a pilot needs at least two runs (or one run with --regimes), got "
                f"{len(named)}: the variance of a difference needs two systems"
            )
        return per_topic(named, str(qrels), measure, settings)


@app.command("plan")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def plan_cmd(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[QRELS RUN RUN...]",
            help="Pilot data (optional): the qrels and two or more runs, whose per-topic values give "
            "the variance (tie variance included).",
        ),
    ] = None,
    effect: Annotated[
        float | None,
        typer.Option(
            "--effect",
            help="Standardised effect to detect: d_z for two systems, Cohen's f for more (--systems).",
        ),
    ] = None,
    diff: Annotated[
        float | None,
        typer.Option(
            "--diff",
            help="Raw difference to detect (two systems: a mean difference; more: the range between "
            "the best and the worst system), with --sd or the pilot's variance.",
        ),
    ] = None,
    sd: Annotated[
        float | None,
        typer.Option(
            "--sd",
            help="Standard deviation: of the per-topic differences (two systems), of the per-topic "
            "values (more). Default: estimated from the pilot.",
        ),
    ] = None,
    topics: Annotated[
        list[int] | None,
        typer.Option(
            "--topics",
            help="Topic counts for which to report the minimal detectable difference (repeatable).",
        ),
    ] = None,
    systems: Annotated[
        int,
        typer.Option(
            "--systems", min=2, help="Systems compared (2: paired t-test; more: one-way ANOVA)."
        ),
    ] = 2,
    alpha: Alpha = 0.05,
    power: Annotated[float, typer.Option("--power", help="Power to reach (1 - beta).")] = 0.8,
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    regimes: Regimes = None,
    fmt: Fmt2 = TableJson("table"),
    output: Output = None,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """How many topics? The topic set size to detect a difference at --alpha with --power (paired
    t-test for two systems, one-way ANOVA for more; Sakai's topic set size design), and the minimal
    detectable difference for given topic counts; the variance from --sd or from pilot runs, their tie
    variance included."""
    files = list(files or [])
    protect = tuple(files)
    check_output(output, protect)
    if effect is None and diff is None and not topics:
        raise TierankInputError(
            f"tierank plan: give --effect, --diff or --topics (usage: {PLAN_USAGE})"
        )
    if effect is not None and diff is not None:
        raise TierankInputError("tierank plan: give --effect or --diff, not both")
    design = _Design(systems, alpha, power)
    pilot = _plan_pilot(files, one_measure(measure, "nDCG@10"), settings, regimes)
    sd = _plan_sd(sd, pilot, systems)
    if diff is not None and sd is None:
        raise TierankInputError("tierank plan: --diff needs --sd or pilot runs (QRELS RUN RUN...)")
    rows = _designs(design, effect, diff, sd, topics or [])
    _write_plan(rows, pilot, design, fmt.value, output, protect)


@dataclass(frozen=True)
class _Design:
    """What ``tierank plan`` designs for: the systems compared, the level and the power."""

    systems: int
    alpha: float
    power: float

    @property
    def test(self) -> str:
        return "paired t" if self.systems == 2 else f"one-way ANOVA, {self.systems} systems"

    def row(self, given: str, diff, sd, effect: float, topics: int, achieved: float) -> dict:
        """One design of the table."""
        return {
            "test": self.test,
            "given": given,
            "diff": diff,
            "sd": sd,
            "effect": effect,
            "effect_kind": "d_z" if self.systems == 2 else "f",
            "alpha": self.alpha,
            "power": self.power,
            "topics": topics,
            "achieved_power": achieved,
        }


def _plan_pilot(files: list[Path], measure: str, settings, regimes: str | None):
    """The pilot's variance and its record (None without pilot data)."""
    from ..analysis import planning as pl

    if not files:
        return None
    if len(files) < 2:
        raise TierankInputError(
            f"tierank plan: pilot data is QRELS RUN RUN... (usage: {PLAN_USAGE})"
        )
    with status("evaluating the pilot..."):
        pt = _pilot(files[0], files[1:], measure, settings, regimes)
    pilot = pl.pilot_variance(pt.expected, pt.var)
    return pilot, {"measure": pt.measure, "systems": list(pt.systems), **pilot.to_dict()}


def _plan_sd(sd: float | None, pilot, systems: int) -> float | None:
    """``--sd``, or the pilot's; refused when not positive."""
    if sd is None and pilot is not None:
        sd = math.sqrt(pilot[0].sigma2_diff if systems == 2 else pilot[0].sigma2)
    if sd is not None and not (math.isfinite(sd) and sd > 0):
        raise TierankInputError(
            f"tierank plan: the standard deviation must be > 0, got {sd!r}"
            + (
                " (the pilot's systems score the same on every topic, with no ties)"
                if pilot
                else ""
            )
        )
    return sd


def _designs(design: _Design, effect, diff, sd, topics: list[int]) -> list[dict]:
    """The table's rows: the topics for ``--effect`` or ``--diff``, the minimal detectable
    difference for each of ``--topics``."""
    from ..analysis import planning as pl

    systems, alpha, power = design.systems, design.alpha, design.power
    rows = []
    if effect is not None or diff is not None:
        if diff is not None:
            assert sd is not None
            std = abs(diff) / sd if systems == 2 else pl.range_to_f(abs(diff), sd, systems)
        else:
            std = float(effect)
        n = pl.topic_set_size(std, alpha=alpha, power=power, systems=systems)
        given = "difference" if diff is not None else "effect"
        rows.append(design.row(given, diff, sd, std, n, pl.achieved_power(std, n, alpha, systems)))
    for t in topics:
        mdd_std = pl.minimal_detectable(t, 1.0, alpha, power, systems)
        rows.append(
            design.row(
                "topics",
                None if sd is None else mdd_std * sd,
                sd,
                mdd_std if systems == 2 else mdd_std / math.sqrt(2 * systems),
                t,
                power,
            )
        )
    return rows


def _write_plan(rows: list[dict], pilot, design: _Design, fmt: str, output, protect) -> None:
    """The designs as JSON or as the table, its caption saying where the variance comes from."""
    from ..report.planning import plan_table

    systems = design.systems
    if fmt == "json":
        doc = {"designs": rows, "pilot": pilot[1] if pilot is not None else None}
        emit(json.dumps(doc, indent=2, allow_nan=False) + "\n", output, protect)
        return
    caption = "Topics: the smallest n whose power reaches the target (scipy.stats.nct / ncf). " + (
        "diff: a mean difference; sd: of the per-topic differences. "
        if systems == 2
        else "diff: the range best - worst (least favourable: f = diff / (sd sqrt(2 m))); sd: within systems. "
    )
    if pilot is not None:
        var, rec = pilot
        caption += (
            f"Pilot ({rec['measure']}, {var.systems} systems, {var.topics:,} topics): "
            f"sd^2 = {var.sigma2_diff_sampling if systems == 2 else var.sigma2_sampling:.6f} (topics) + "
            f"{(2 if systems == 2 else 1) * var.tie:.6f} (tie variance)."
        )
    print_tables([plan_table(rows, "topic set size design", caption)], output, protect)


#: the fields of `EvalSettings` that ``tierank discriminative-power`` offers: its ``--samples`` and
#: ``--seed`` are its resamples' and their seed
DISC_FIELDS = tuple(f for f in EVAL_FIELDS if f not in ("samples", "seed"))


@app.command("discriminative-power")
@input_errors
@with_settings(settings=Offer(EvalSettings, DISC_FIELDS))
def discriminative_power_cmd(
    qrels: Annotated[Path, typer.Argument(metavar="QRELS", help="The qrels.")],
    runs: Annotated[
        list[Path], typer.Argument(metavar="RUN", help="Two or more runs (one with --regimes).")
    ],
    measures: measures_option(DISCRIMINATION_MEASURES) = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    method: Annotated[
        DiscMethod,
        typer.Option(
            "--method",
            help="bootstrap: paired studentized bootstrap per pair (Sakai 2006); "
            "tukey: randomized Tukey HSD over all systems.",
        ),
    ] = DiscMethod("bootstrap"),
    alpha: Alpha = 0.05,
    samples: Annotated[
        int,
        typer.Option("--samples", min=1, max=100_000, help="Bootstrap resamples or permutations."),
    ] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the draws.")] = 0,
    oblivious: Annotated[
        bool,
        typer.Option(
            "--oblivious/--expected-only", help="Also on the oblivious (tie-broken) values."
        ),
    ] = True,
    regimes: Regimes = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also write the figure as STEM.png and STEM.svg.")
    ] = None,
    fmt: Fmt2 = TableJson("table"),
    output: Output = None,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Discriminative power (Sakai 2006): per measure, the share of system pairs separated at --alpha
    and the estimated difference required, by the paired bootstrap or randomized Tukey HSD, on the
    per-topic expected values (and on the oblivious ones)."""
    from ..analysis.discrimination import discriminative_power
    from ..analysis.multi import per_topic
    from ..report.planning import discrimination_table

    protect = (qrels, *runs)
    check_output(output, protect)
    if plot is not None:
        require("matplotlib", "tierank discriminative-power --plot")
        _stem(plot, protect)
    results = []
    with named_runs(qrels, runs, DISC_USAGE, regimes) as named:
        if len(named) < 2:
            raise TierankInputError(
                f"tierank discriminative-power: need at least two systems, got {len(named)} "
                f"(usage: {DISC_USAGE})"
            )
        with status("resampling..."):
            for m in list(dict.fromkeys(measures or DISCRIMINATION_MEASURES)):
                pt = per_topic(named, str(qrels), m, settings)
                kinds = [("expected", pt.expected)] + (
                    [("oblivious", pt.oblivious)] if oblivious else []
                )
                for kind, X in kinds:
                    results.append(
                        discriminative_power(
                            X,
                            pt.systems,
                            measure=pt.measure,
                            method=method.value,
                            alpha=alpha,
                            samples=samples,
                            seed=seed,
                            on=kind,
                        )
                    )
    if fmt.value == "json":
        doc = {"results": [r.to_dict(per_pair=True) for r in results]}
        emit(json.dumps(doc, indent=2, allow_nan=False) + "\n", output, protect)
    else:
        print_tables([discrimination_table(results)], output, protect)
    if plot is not None:
        from ..report.plots.meta import plot_discrimination

        save(plot_discrimination(results), plot, protect)


# --- over collections ---------------------------------------------------------------------------

#: names of files in a collection folder that are neither the qrels nor a run
_NOT_RUNS = (".md", ".json", ".jsonl", ".jsonl.gz", ".json.gz", ".py")


def collection_folder(folder: Path) -> tuple[Path, list[Path]]:
    """A collection folder's qrels (the one file whose name holds ``qrels``) and runs (every other
    file, hidden files and ``.md``/``.json``/``.jsonl``/``.py`` files aside)."""
    if not folder.is_dir():
        raise TierankInputError(f"{folder}: not a folder (give one folder per collection)")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    qrels = [p for p in files if "qrels" in p.name.lower()]
    if len(qrels) != 1:
        raise TierankInputError(
            f"{folder}: a collection folder holds exactly one qrels file (a name with 'qrels'), "
            f"found {len(qrels)}" + (f": {', '.join(p.name for p in qrels)}" if qrels else "")
        )
    runs = [p for p in files if p != qrels[0] and not p.name.lower().endswith(_NOT_RUNS)]
    if not runs:
        raise TierankInputError(f"{folder}: no run beside {qrels[0].name}")
    return qrels[0], runs


def _system_name(p: Path) -> str:
    name = p.name
    for suffix in (".gz", ".bz2", ".xz", ".txt", ".run", ".trec", ".tsv"):
        name = name.removesuffix(suffix)
    return name or p.name


def _collections(folders: list[Path], settings, measure: str, level: float):
    from ..analysis.multi import compare_collections
    from ..io.sources import read

    if len(folders) < 2:
        raise TierankInputError(
            f"tierank compare over collections: need at least two collection folders, got {len(folders)} "
            "(with one collection: tierank compare QRELS RUN RUN...)"
        )
    cols = {}
    names: dict[str, Path] = {}
    for f in folders:
        qrels, runs = collection_folder(f)
        key = f.name or str(f)
        if key in names:
            raise TierankInputError(f"{f}: a second collection named {key} (first: {names[key]})")
        names[key] = f
        named: dict[str, object] = {}
        for r in runs:
            s = _system_name(r)
            if s in named:
                raise TierankInputError(f"{r}: a second run of system {s} in {f}")
            named[s] = read(r, "run")
        cols[key] = (str(qrels), named)
    return compare_collections(cols, measure, settings, level=level)


def compare_collections_cmd(
    folders: list[Path],
    measure: str,
    fmt: str,
    output: Path | None,
    settings,
    alpha: float,
    unused: Sequence[str] = (),
) -> None:
    """``tierank compare DIR DIR...``: one folder per collection (its qrels and its runs, systems
    matched by file name across folders); per collection each pair's effect, pooled by
    meta-analysis (tierank.analysis.multi)."""
    from ..report.planning import meta_tables

    protect = tuple(folders)
    check_output(output, protect)
    if unused:
        raise TierankInputError(
            f"tierank compare over collections: {', '.join(unused)} applies to one collection "
            "(tierank compare QRELS RUN RUN...), not to a meta-analysis over collection folders"
        )
    if fmt not in ("table", "json"):
        raise TierankInputError(
            f"tierank compare over collections: --format {fmt} is not available; use table or json"
        )
    with status("comparing over collections..."):
        mc = _collections(folders, settings, measure, 1.0 - alpha)
    if fmt == "json":
        emit(json.dumps(mc.to_dict(), indent=2, allow_nan=False) + "\n", output, protect)
    else:
        print_tables(meta_tables(mc), output, protect)


@app.command("forest")
@input_errors
@with_settings(settings=Offer(EvalSettings, EVAL_FIELDS))
def forest_cmd(
    folders: Annotated[
        list[Path],
        typer.Argument(metavar="DIR", help="Two or more collection folders (qrels and runs each)."),
    ],
    output: OutStem,
    pair: Annotated[
        str, typer.Option("--pair", help="The two systems, A,B (as named by their run files).")
    ],
    measure: one_measure_option("nDCG@10") = None,  # type: ignore[valid-type]  # an Annotated type built by a call
    scale: Annotated[
        ForestScale, typer.Option("--scale", help="diff (mean difference) or dz (Cohen's d_z).")
    ] = ForestScale("diff"),
    alpha: Alpha = 0.05,
    settings: EvalSettings = FROM_OPTIONS,
) -> None:
    """Forest plot of one pair of systems over collections: each collection's effect with its CI (tie
    variance included), the fixed-effect and random-effects (DerSimonian-Laird, Paule-Mandel) estimates."""
    from ..report.plots.meta import plot_meta_forest

    require("matplotlib", "tierank forest")
    protect = tuple(folders)
    _stem(output, protect)
    a, sep, b = pair.partition(",")
    if not sep or not a or not b:
        raise TierankInputError(f"--pair: give two system names as A,B, got {pair!r}")
    m = one_measure(measure, "nDCG@10")
    mc = _collections(folders, settings, m, 1.0 - alpha)
    p = mc.pair(a, b)  # the pair the other way round: an error naming its order
    save(plot_meta_forest(p, scale=scale.value, level=1.0 - alpha), output, protect)


__all__ = ["collection_folder", "compare_collections_cmd"]
