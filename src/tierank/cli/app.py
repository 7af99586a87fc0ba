"""The ``tierank`` application object: the root command, ``--version``, the help text.

Every command module registers on :data:`app`; :mod:`tierank.cli` imports them in the order of
``tierank --help``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .common import Group

app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Tie-aware evaluation of retrieval runs: oblivious value, exact expectation, "
    "min, max, range, bias and std over all orderings of tied scores.",
)


def _version(value: bool) -> None:
    if value:
        from ..version import (
            __version__,  # the one source of the version (pyproject.toml reads it too)
        )

        typer.echo(f"tierank {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass
