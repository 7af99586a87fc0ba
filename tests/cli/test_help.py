"""The help texts: every command's, generated from the registries, shown as written."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from helpers import invoke
from tierank.cli import app
from tierank.measures import supported
from tierank.report.formats import names as format_names
from tierank.ties import POLICIES


def _commands(group=None, path=()):
    """(path, command) for every group and command of `tierank`."""
    group = group or typer.main.get_command(app)
    yield path, group
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, (*path, name))
        else:
            yield (*path, name), cmd


COMMANDS = [p for p, _ in _commands()]


def _help(*path: str) -> str:
    """The rendered --help of a command, box borders and line breaks removed."""
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    return " ".join(res.output.replace("│", " ").split())


def test_every_group_and_command_is_walked():
    top = {p[0] for p in COMMANDS if p}
    assert {"eval", "ties", "sweep", "compare", "bands", "rerank", "measures", "example"} <= top
    assert ("plot", "cutoff") in COMMANDS and ("report", "rerank") in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "tierank")
def test_bracketed_text_is_not_eaten_by_markup(path):
    """'[min, max]' in a docstring or option help used to vanish (read as rich markup)."""
    cmd = dict(_commands())[path]
    raw = " ".join([cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params])
    raw = " ".join(raw.replace("\\[", "[").split())
    shown = _help(*path)
    for bracketed in re.findall(r"\[[^\[\]]*\]", raw):
        assert bracketed in shown, f"{bracketed!r} missing from the help of {' '.join(path)}"


def test_min_max_in_top_level_and_compare_help():
    assert "E[M] and [min, max]; paired t-tests" in _help()
    assert "E[M] and [min, max]; paired t-tests" in _help("compare")
    assert "oblivious markers, [min, max] band" in _help("plot", "cutoff")


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "tierank")
def test_flags_show_no_type(path):
    shown = _help(*path)
    assert "<bool>" not in shown
    assert "--help Show this message and exit." in shown


def test_flag_help_reads_without_a_type():
    shown = _help("eval")
    assert "-q, --per-query Also report every query." in shown
    assert "--candidates-only N+ and ideal DCG" in shown


@pytest.mark.parametrize("group", ["plot", "report"])
def test_group_help_lists_every_subcommand(group):
    subs = [p[1] for p in COMMANDS if len(p) == 2 and p[0] == group]
    assert f"tierank {group} {'|'.join(subs)}." in _help()
    if group == "report":
        assert "rerank" in subs


def test_choices_and_help_come_from_the_registries():
    shown = _help("eval")
    assert f"<{'|'.join(format_names('results'))}>" in shown
    assert f"Order for the oblivious value: {', '.join(POLICIES)}" in shown
    assert f"Families: {', '.join(supported())}" in shown
    assert f"<{'|'.join(format_names('records'))}>" in _help("compare")


def test_version():
    """``--version`` prints the one version of the package, the one pyproject.toml gives the distribution
    (an environment's installed metadata may be of an older checkout)."""
    from tierank.version import __version__

    out = invoke("--version").stdout
    assert out == f"tierank {__version__}\n" and re.fullmatch(
        r"\d+\.\d+\.\d+(\.dev\d+)?", __version__
    )
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "tierank.version.__version__"
    }
