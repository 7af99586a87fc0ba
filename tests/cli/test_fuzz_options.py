"""Every option of every command, fuzzed: hostile values (negative, zero, huge, non-finite, long strings,
unicode) end in exit 0 or in ``tierank: error:`` lines with exit 2, never a traceback.

The commands run in this process (:func:`helpers.invoke`): an exception other than the command's exit
fails the test with its traceback.  The bulk is in the full tier (``@pytest.mark.full``); the default
tier runs a few examples of every command.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tierank
from helpers import examples, invoke

EXAMPLE = tierank.__file__.rsplit("/", 1)[0] + "/examples/"
QRELS, RUN = EXAMPLE + "figure1.qrels", EXAMPLE + "figure1.run"
DIVERSITY = str(Path(__file__).resolve().parents[1] / "data" / "diversity") + "/"

#: each command with arguments it accepts (``{run2}``: a copy of RUN under another name) and, after them,
#: options that keep a run short; the fuzzed option is added after these (a later value wins)
COMMANDS = {
    ("eval",): [QRELS, RUN],
    ("ties",): [RUN],
    ("sweep",): [QRELS, RUN, "--formats", "fp32,bf16"],
    ("compare",): [QRELS, RUN, "{run2}", "--resamples", "50", "--permutations", "50"],
    ("bands",): ["--depth", "50"],
    ("similarity",): [RUN, "{run2}"],
    ("diversity",): [DIVERSITY + "qrels.txt", DIVERSITY + "run-ties.txt", "-m", "alpha_nDCG@5"],
    ("measures",): [],
    ("example",): ["qrels"],
    ("judges",): [
        EXAMPLE + "llmjudge-mini/human.qrels.gz",
        EXAMPLE + "llmjudge-mini/judges/TREMA-CoT.qrels.gz",
        "--bootstrap",
        "20",
    ],
}

#: values no option should take without a one-line refusal, or should take
HOSTILE = [
    "-1",
    "0",
    "1",
    "-0",
    "2",
    "-99999999999999999999",
    "99999999999999999999",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "NaN",
    "0.5",
    "",
    " ",
    "x",
    "x" * 5000,
    "é",
    "日本語",
    "\u202e",
    "-",
    "--",
    "1,2",
    "0x10",
    "1_000",
    "١٢",
    "True",
    "none",
    "../x",
    "/",
    "a/b/c",
    "P@-1",
    "nDCG@0",
    "AP(rel=inf)",
    "random:-1",
    "random:x",
    "bf16,x",
    "fp64",
]

#: options whose value is read as the name of a file to write: fuzzed in a scratch folder
values = st.one_of(
    st.sampled_from(HOSTILE),
    st.integers(-(10**25), 10**25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(st.characters(exclude_characters="\x00"), max_size=30),
)  # no argv holds NUL


def options(path: tuple[str, ...]) -> list[tuple[str, bool]]:
    """The options of command ``path`` as (name, takes a value), from the command line itself."""
    import typer.main

    from tierank.cli import app

    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    out = []
    for p in cmd.params:
        if getattr(p, "param_type_name", "") != "option" or "--help" in p.opts:
            continue
        out.append((max(p.opts, key=len), not (p.is_flag or p.count)))
    return out


def check(result, args) -> None:
    """Exit 0, or exit 2 with only ``tierank: error:`` (and note) lines: never exit 1, never a box."""
    assert result.returncode in (0, 2), (args, result.returncode, result.stderr[-2000:])
    if result.returncode == 2:
        lines = result.stderr.splitlines()
        assert lines and all(
            ln.startswith(("tierank: error: ", "tierank: note: ")) for ln in lines
        ), (args, result.stderr[-2000:])
        assert any(ln.startswith("tierank: error: ") for ln in lines), (args, result.stderr)


def run_option(path, option, takes, value, tmp_path) -> None:
    run2 = tmp_path / "other.run"
    if not run2.exists():
        shutil.copy(RUN, run2)
    base = [str(a).format(run2=run2) for a in COMMANDS[path]]
    args = [*path, *base, option, value] if takes else [*path, *base, option]
    check(invoke(*args, check=False, cwd=tmp_path), args)


CELLS = [(path, opt, takes) for path in COMMANDS for opt, takes in options(path)]


@pytest.mark.full
@pytest.mark.parametrize(
    ("path", "option", "takes"), CELLS, ids=[f"{' '.join(p)} {o}" for p, o, _ in CELLS]
)
@given(value=values)
@settings(max_examples=examples(15), deadline=None, suppress_health_check=list(HealthCheck))
def test_every_option_refuses_in_one_line_or_runs(path, option, takes, value, tmp_path_factory):
    run_option(path, option, takes, value, tmp_path_factory.mktemp("fuzz"))


@pytest.mark.parametrize(
    ("path", "option", "value"),
    [
        (("eval",), "--jobs", "99999999999999999999"),
        (("eval",), "--max-retrieved", "99999999999999999999"),
        (("eval",), "--samples", "1e308"),
        (("eval",), "--format", "日本語"),
        (("eval",), "--tie-break", "random:x"),
        (("eval",), "--measure", "Utility(p1=inf)"),
        (("bands",), "--depth", "99999999999999999999"),
        (("compare",), "--resamples", "-1"),
        (("compare",), "--alpha", "nan"),
        (("similarity",), "-k", "1e308"),
        (("similarity",), "--p", "-inf"),
        (("diversity",), "--samples", "0"),
    ],
)
def test_hostile_values_are_refused_in_one_line(path, option, value, tmp_path):
    """The default tier's share of the fuzzing: values that once gave a traceback (OverflowError, a
    numpy TypeError), ran for minutes, or a usage box, refused in one line."""
    run2 = tmp_path / "other.run"
    shutil.copy(RUN, run2)
    args = [*path, *(str(a).format(run2=run2) for a in COMMANDS[path]), option, value]
    p = invoke(*args, check=False, cwd=tmp_path)
    check(p, args)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, (args, p.stderr)
