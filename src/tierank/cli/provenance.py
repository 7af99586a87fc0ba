"""`tierank verify`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app
from .common import input_errors, note


@app.command("verify")
@input_errors
def verify_cmd(
    manifest: Annotated[
        Path,
        typer.Argument(
            metavar="MANIFEST",
            help="A manifest written by `tierank eval --manifest FILE` (or `result.manifest.write`)",
        ),
    ],
) -> None:
    """Recompute a manifest's numbers from its inputs: exit 0 when every number is made again, else 1 with what moved and why.

    Each input is re-read and its SHA-256 compared; the settings and results are checked against
    the manifest's seal (edited after writing?); every number is computed again and compared
    (exact statistics to 1e-12, sampled ones within 4 standard errors). Versions that differ are
    noted on stderr; the numbers decide.
    """
    from ..provenance import verify

    verdict = verify(manifest)
    for line in verdict.notes:
        note(line)
    if verdict.ok:
        typer.echo(f"{manifest}: verified, {verdict.checked} numbers made again")
        return
    for line in verdict.causes:
        typer.echo(line)
    typer.echo(f"{manifest}: NOT verified ({len(verdict.causes)} differences)")
    raise typer.Exit(1)
