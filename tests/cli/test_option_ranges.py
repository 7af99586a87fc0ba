"""Every option that several commands take has one range, declared once (`tierank.cli.common`):
``--seed`` is an integer >= 0 and ``--top`` an integer >= 1 wherever they appear, refused in one
``tierank: error:`` line (exit 2) otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

import tierank
from helpers import invoke
from tierank.errors import TierankInputError
from tierank.settings import EvalSettings

EXAMPLE = Path(tierank.__file__).parent / "examples"
QRELS, RUN = EXAMPLE / "figure1.qrels", EXAMPLE / "figure1.run"
DIVERSITY = Path(__file__).resolve().parents[1] / "data" / "diversity"


def _commands():
    """Every (path, click command) of ``tierank``, subcommands of groups included."""
    from tierank.cli import app

    root = typer.main.get_command(app)
    todo: list[tuple[tuple[str, ...], Any]] = [((), root)]
    while todo:
        path, cmd = todo.pop()
        if hasattr(cmd, "list_commands"):  # a group (typer may bring its own click)
            ctx = root.context_class(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    todo.append((path + (name,), sub))
        else:
            yield " ".join(path), cmd


@pytest.mark.parametrize(("option", "low"), [("--seed", 0), ("--top", 1)])
def test_every_command_gives_the_option_one_range(option, low):
    found = {
        path: p.type
        for path, cmd in _commands()
        for p in cmd.params
        if p.param_type_name == "option" and option in p.opts
    }
    assert found, option
    for path, kind in found.items():
        assert type(kind).__name__ == "IntRange", (path, kind)
        assert (kind.min, kind.min_open) == (low, False), (path, kind.min)


@pytest.mark.parametrize(
    "args",
    [
        ("eval", QRELS, RUN, "--seed", "-1"),
        (
            "diversity",
            DIVERSITY / "qrels.txt",
            DIVERSITY / "run.txt",
            "-m",
            "P_IA@5",
            "--seed",
            "-1",
        ),
        ("compare", QRELS, RUN, "{run2}", "--seed", "-1"),
        ("ties", RUN, "--top", "0"),
        ("ties", RUN, "--top", "-1"),
    ],
    ids=["eval-seed", "diversity-seed", "compare-seed", "ties-top-0", "ties-top-negative"],
)
def test_out_of_range_is_one_line_exit_2(args, tmp_path):
    run2 = tmp_path / "other.run"
    run2.write_text(RUN.read_text())
    p = invoke(*(str(run2) if a == "{run2}" else a for a in args), check=False)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tierank: error: "), p.stderr
    assert args[-2] in lines[0] and "not in the range" in lines[0], lines[0]
    assert p.stdout == ""


def test_the_settings_refuse_a_negative_seed():
    with pytest.raises(TierankInputError, match="seed must be an integer >= 0, got -1"):
        EvalSettings(seed=-1)
    assert EvalSettings(seed=0).seed == 0
