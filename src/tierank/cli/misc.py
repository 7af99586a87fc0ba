"""`tierank measures` and `tierank example`."""

from __future__ import annotations

from typing import Annotated

import typer

from ..examples import NAMES as EXAMPLES  # names only: imports nothing heavy
from .app import app
from .common import input_errors, print_tables


@app.command("measures")
def measures_cmd() -> None:
    """List the supported measures (generated from the registry)."""
    from ..measures import describe
    from ..report.terminal import measures_table

    print_tables([measures_table(describe())], None, (), min_width=0)


#: the synopsis of `tierank example`, from the examples registry (`tierank.examples.NAMES`)
EXAMPLE_SYNOPSIS = f"tierank example NAME, NAME one of: {', '.join(EXAMPLES)}"


@app.command(
    "example",
    help=f"Print the path of a shipped example file or folder ({EXAMPLE_SYNOPSIS}; sources "
    "and licences: README.md in `tierank example dir`).",
)
@input_errors
def example_cmd(
    which: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help=f"one of: {', '.join(EXAMPLES)} (what each is: README.md in `tierank example dir`)",
        ),
    ] = "dir",
) -> None:
    from ..examples import path

    typer.echo(str(path(which)))
