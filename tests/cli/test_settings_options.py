"""The options generated from the settings objects (`tierank.cli.options`): every command offers
the settings it honours, each through one declaration, and a value given on the command line reaches
the settings object the command's body receives, and the numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

import tierank
from helpers import invoke
from tierank.analysis.comparison.settings import CompareSettings
from tierank.cli.options import EVAL, EVAL_FIELDS, compare_declarations, offers_of, settings_from
from tierank.settings import EvalSettings

EXAMPLE = Path(tierank.__file__).parent / "examples"
QRELS, RUN = EXAMPLE / "figure1.qrels", EXAMPLE / "figure1.run"
DIVERSITY = Path(__file__).resolve().parents[1] / "data" / "diversity"

ALL_EVAL = set(EVAL_FIELDS)
ALL_COMPARE = {f for f in compare_declarations()}

#: what each command offers, by settings object: a field dropped from a command, or one offered
#: where it was not, fails here
OFFERED: dict[str, dict[str, set[str]]] = {
    "eval": {"settings": ALL_EVAL},
    "sweep": {"settings": ALL_EVAL},
    "compare": {"settings": ALL_EVAL, "comparison": ALL_COMPARE},
    "mteb": {
        "settings": ALL_EVAL,
        "comparison": ALL_COMPARE - {"band", "correction", "leaderboard"},
    },
    "plan": {"settings": ALL_EVAL},
    "discriminative-power": {"settings": ALL_EVAL - {"samples", "seed"}},
    "forest": {"settings": ALL_EVAL},
    "diversity": {"settings": {"samples", "seed", "exact_limit"}},
    "rerank": {"settings": {"tie_break"}},
    "plot cutoff": {"settings": ALL_EVAL},
    "plot ranges": {"settings": ALL_EVAL},
    "plot sweep": {"settings": ALL_EVAL},
    "report eval": {"settings": ALL_EVAL},
    "report sweep": {"settings": ALL_EVAL},
    "report compare": {
        "settings": ALL_EVAL,
        "comparison": ALL_COMPARE - {"correction", "leaderboard", "jobs", "tie_samples"},
    },
}

#: a value other than the default for each field: (the command-line words, the field's value)
VALUES: dict[str, tuple[list[str], Any]] = {
    "tie_break": (["--tie-break", "docno"], "docno"),
    "candidates_only": (["--candidates-only"], True),
    "complete": (["-c"], True),
    "rel": (["-l", "2"], 2),
    "unjudged": (["--unjudged", "bounds"], "bounds"),
    "max_depth": (["-M", "5"], 5),
    "judged_only": (["-J"], True),
    "samples": (["--samples", "7"], 7),
    "seed": (["--seed", "3"], 3),
    "exact_limit": (["--exact-limit", "9"], 9),
    "alpha": (["--alpha", "0.1"], 0.1),
    "band": (["--band", "1.5"], 1.5),
    "correction": (["--correction", "bh"], "bh"),
    "test": (["--test", "wilcoxon"], "wilcoxon"),
    "ci": (["--ci", "bca"], "bca"),
    "level": (["--level", "0.9"], 0.9),
    "resamples": (["--resamples", "77"], 77),
    "permutations": (["--permutations", "88"], 88),
    "leaderboard": (["--leaderboard"], True),
    "jobs": (["-j", "3"], 3),
    "tie_samples": (["--tie-samples", "4"], 4),
}


def _commands() -> dict[str, Any]:
    """Every (path, click command) of ``tierank``, subcommands of groups included."""
    from tierank.cli import app

    root = typer.main.get_command(app)
    out, todo = {}, [((), root)]
    while todo:
        path, cmd = todo.pop()
        if hasattr(cmd, "list_commands"):
            ctx = root.context_class(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    todo.append(((*path, name), sub))
        else:
            out[" ".join(path)] = cmd
    return out


COMMANDS = _commands()


def _parse(cmd, words: list[str]) -> dict[str, Any]:
    """The settings objects ``cmd``'s body gets for ``words`` (after dummy arguments and required
    options): parsed by click as on the command line, built as the command builds them."""
    base: list[str] = []
    for p in cmd.params:
        if p.param_type_name == "argument":
            base += ["a", "b", "c"] if p.nargs == -1 else ["a"]
        elif p.required:
            base += [p.opts[0], "x"]
    ctx = cmd.make_context(cmd.name, [*words, *base])
    return settings_from(offers_of(cmd.callback), ctx.params)


def test_every_command_that_evaluates_offers_what_it_honours():
    offered = {
        path: {key: set(o.fields) for key, o in offers_of(cmd.callback).items()}
        for path, cmd in COMMANDS.items()
        if offers_of(cmd.callback)
    }
    assert offered == OFFERED


CASES = [
    (path, key, name)
    for path, offers in OFFERED.items()
    for key, names in offers.items()
    for name in sorted(names)
]


@pytest.mark.parametrize(("path", "key", "name"), CASES)
def test_the_option_reaches_the_settings(path, key, name):
    cmd = COMMANDS[path]
    words, want = VALUES[name]
    assert words[0] in {o for p in cmd.params for o in p.opts}, (path, words[0])
    default = _parse(cmd, [])[key]
    got = _parse(cmd, words)[key]
    value = getattr(got, name)
    assert (str(value) if name == "tie_break" else value) == want
    assert getattr(default, name) != getattr(got, name)
    assert isinstance(got, EvalSettings if key == "settings" else CompareSettings)


@pytest.mark.parametrize("path", [p for p, o in OFFERED.items() if "unjudged" in o["settings"]])
def test_condensed_is_unjudged_condensed(path):
    assert _parse(COMMANDS[path], ["--condensed"])["settings"].unjudged == "condensed"


@pytest.mark.parametrize("path", ["compare", "mteb", "report compare"])
def test_one_seed_sets_both_settings(path):
    got = _parse(COMMANDS[path], ["--seed", "11"])
    assert got["settings"].seed == got["comparison"].seed == 11


def test_the_declarations_keep_the_flags_and_help_of_the_options_they_replace():
    from tierank.cli import common

    assert EVAL["max_depth"].flags == ("-M", "--max-retrieved")
    assert EVAL["judged_only"].flags == ("-J", "--judged-only")
    assert EVAL["complete"].flags == ("-c", "--complete")
    assert EVAL["rel"].flags == ("--rel", "-l")
    assert EVAL["seed"].help == common.Seed.__metadata__[0].help
    # the default is the settings' own
    eval_cmd = COMMANDS["eval"]
    defaults = {p.name: p.default for p in eval_cmd.params}
    assert defaults["samples"] == EvalSettings.samples
    assert defaults["exact_limit"] == EvalSettings.exact_limit
    assert defaults["rel"] == EvalSettings.rel


def test_settings_problems_are_one_line_each_exit_2():
    p = invoke("eval", QRELS, RUN, "-J", "--unjudged", "bounds", check=False)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "tierank: error: -J/--judged-only drops unjudged documents: it cannot be combined with "
        "--unjudged bounds (judged_only=True, unjudged='bounds')"
    ]
    p = invoke("compare", QRELS, RUN, RUN, "--level", "1.5", check=False)
    assert p.returncode == 2 and "level" in p.stderr and len(p.stderr.strip().splitlines()) == 1


# the options change the numbers


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """qrels of two queries; run A answers q1 only (a tie at ranks 1-2), run B both."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\n")
    a = tmp_path / "a.run"
    a.write_text("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.5 a\nq1 Q0 d3 3 0.1 a\nq2 Q0 d9 1 0.4 a\n")
    b = tmp_path / "b.run"
    b.write_text("q1 Q0 d3 1 0.9 b\nq1 Q0 d2 2 0.8 b\nq2 Q0 d1 1 0.4 b\nq2 Q0 d2 2 0.3 b\n")
    return qrels, a, b


def test_sweep_complete_averages_over_every_qrels_query(tmp_path):
    qrels, a, _ = _files(tmp_path)
    only = tmp_path / "only.run"
    only.write_text("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.5 a\n")
    args = ("sweep", qrels, only, "-m", "P@1", "--formats", "fp32", "-f", "json")
    rows = json.loads(invoke(*args).stdout)["rows"]
    rows_c = json.loads(invoke(*args, "-c").stdout)["rows"]
    assert rows[0]["expected"] == pytest.approx(0.5)
    assert rows_c[0]["expected"] == pytest.approx(0.25)  # q2 scores 0


def test_compare_max_retrieved_cuts_the_runs(tmp_path):
    qrels, a, b = _files(tmp_path)

    def expected(*extra):
        doc = json.loads(invoke("compare", qrels, a, b, "-m", "R", "-f", "json", *extra).stdout)
        return {s["name"]: s["expected"] for s in doc["systems"]}

    full, cut = expected(), expected("-M", "1")
    # b: R = 1/2 (q1: d3 of d1, d3) and 1 (q2) in full; at depth 1 the same (d3 then d1 first)
    assert full["b.run"] == pytest.approx(0.75) and cut["b.run"] == pytest.approx(0.75)
    # a: q1 reads d1 or d2 first (tied), d3 third: R = 1 in full; at depth 1 E[R] = 1/4
    assert full["a.run"] == pytest.approx(0.5) and cut["a.run"] == pytest.approx(0.125)


def test_compare_level_sets_the_intervals(tmp_path):
    qrels, a, b = _files(tmp_path)
    args = ("compare", qrels, a, b, "-m", "P@3", "-f", "json")
    wide = json.loads(invoke(*args, "--level", "0.99").stdout)
    narrow = json.loads(invoke(*args, "--level", "0.5").stdout)
    assert wide["settings"]["level"] == 0.99 and narrow["settings"]["level"] == 0.5


def test_diversity_exact_limit_samples_past_it():
    args = ("diversity", DIVERSITY / "qrels.txt", DIVERSITY / "run-ties.txt", "-m", "alpha_nDCG@5")
    exact = invoke(*args).stdout.splitlines()[-1].split("\t")
    sampled = invoke(*args, "--exact-limit", "1", "--samples", "50").stdout
    assert exact[-1] == "exact"
    assert sampled.splitlines()[-1].split("\t")[-1] == "sampled"


def test_eval_exact_limit_and_condensed(tmp_path):
    qrels, a, _ = _files(tmp_path)
    plain = invoke("eval", qrels, a, "-m", "P@2", "-f", "json", "--unjudged", "condensed").stdout
    alias = invoke("eval", qrels, a, "-m", "P@2", "-f", "json", "--condensed").stdout
    assert json.loads(plain)["aggregate"] == json.loads(alias)["aggregate"]


# options that exclude each other: one table


def test_eval_exclusive_options_are_one_table(tmp_path):
    from tierank.cli.eval import EXCLUSIVE

    qrels, a, _ = _files(tmp_path)
    p = invoke("eval", qrels, a, "--ppi", qrels, "--labels", qrels, "-j", "2", check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert f"tierank: error: {EXCLUSIVE[0].message()}" in lines
    assert f"tierank: error: {EXCLUSIVE[1].message()}" in lines
    assert EXCLUSIVE[1].message() == (
        "--labels evaluates the runs in memory and writes the formats other than trec_eval "
        "(no --format trec_eval, --jobs, --block-bytes or --ppi with it)"
    )


def test_plan_pilot_reads_the_settings(tmp_path):
    qrels, a, b = _files(tmp_path)
    args = ("plan", qrels, a, b, "-m", "R", "--effect", "0.5", "-f", "json")
    full = json.loads(invoke(*args).stdout)["pilot"]
    cut = json.loads(invoke(*args, "-M", "1").stdout)["pilot"]
    # R per query at depth 1 differs from the whole runs' (see test_compare_max_retrieved...)
    assert full != cut
    assert full["tie"] != cut["tie"] or full["sigma2"] != cut["sigma2"]


def test_compare_over_collections_names_the_one_collection_options(tmp_path):
    qrels, a, b = _files(tmp_path)
    folders = []
    for name in ("c1", "c2"):
        folder = tmp_path / name
        folder.mkdir()
        for f in (qrels, a, b):
            (folder / f.name).write_bytes(f.read_bytes())
        folders.append(folder)
    p = invoke("compare", *folders, "--level", "0.9", "--correction", "none", check=False)
    assert p.returncode == 2
    assert "--correction, --level applies to one collection" in p.stderr
    # the evaluation's settings reach every collection: -M is no one-collection option
    p = invoke("compare", *folders, "-m", "R", "-M", "1", "-f", "json", check=False)
    assert "applies to one collection" not in p.stderr


# the decorator


def test_with_settings_reports_every_object_s_problems_together():
    from tierank.cli.options import Offer, compare_declarations, settings_from
    from tierank.errors import TierankInputError

    offers = {
        "settings": Offer(EvalSettings, ("max_depth", "samples")),
        "comparison": Offer(CompareSettings, ("alpha",), compare_declarations),
    }
    with pytest.raises(TierankInputError) as e:
        settings_from(offers, {"max_depth": 0, "samples": 1, "alpha": 2.0})
    assert [p.reason for p in e.value.problems] == [
        "max_depth must be a positive integer, got 0",
        "samples must be an integer of at least 2, got 1",
        "compare: alpha must be in (0, 1), got 2.0",
    ]


def test_with_settings_refuses_a_command_that_declares_a_setting_s_option_itself():
    from tierank.cli.options import FROM_OPTIONS, Offer, with_settings

    def body(seed: int = 0, settings: EvalSettings = FROM_OPTIONS) -> None:
        pass

    with pytest.raises(TypeError, match="'seed', a setting's option"):
        with_settings(settings=Offer(EvalSettings, ("seed",)))(body)
    with pytest.raises(TypeError, match="takes no parameter 'other'"):
        with_settings(other=Offer(EvalSettings, ("rel",)))(body)
    with pytest.raises(TypeError, match="no declared option 'nope'"):
        with_settings(settings=Offer(EvalSettings, ("nope",)))(body)


def test_exclusive_names_what_it_excludes():
    from tierank.cli.options import Exclusive, excluded

    one = Exclusive("--a", ("--b",), "does x")
    three = Exclusive("--a", ("--b", "--c", "--d"), "does x")
    assert one.message() == "--a does x (no --b with it)"
    assert three.message() == "--a does x (no --b, --c or --d with it)"
    given = {"--a", "--c"}.__contains__
    assert [p.reason for p in excluded((one, three), given)] == [three.message()]
