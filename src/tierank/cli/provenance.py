"""`tierank verify`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import TierankInputError
from .app import app
from .common import input_errors, note

if TYPE_CHECKING:
    from ..provenance.io import Manifest
    from ..provenance.verify import Verdict


@app.command("verify")
@input_errors
def verify_cmd(
    manifest: Annotated[
        Path,
        typer.Argument(
            metavar="MANIFEST",
            help="A manifest written by `tierank eval`, `compare`, `judges` or `rerank` with "
            "--manifest FILE (or `result.manifest.write`)",
        ),
    ],
) -> None:
    """Recompute a manifest's numbers from its inputs: exit 0 when every number is made again, else 1 with what moved and why.

    Each input is re-read and its SHA-256 compared; the settings and results are checked against
    the manifest's seal (edited after writing?); every number is computed again and compared
    (exact statistics to 1e-12, sampled ones within 4 standard errors). A rerank's numbers are made
    again from its written runs, not by running the model again (its files' SHA-256 are compared).
    Versions that differ are noted on stderr; the numbers decide.
    """
    from ..provenance import verify

    verdict = verify(manifest, RECOMPUTE)
    for line in verdict.notes:
        note(line)
    if verdict.ok:
        typer.echo(f"{manifest}: verified, {verdict.checked} numbers made again")
        return
    for line in verdict.causes:
        typer.echo(line)
    typer.echo(f"{manifest}: NOT verified ({len(verdict.causes)} differences)")
    raise typer.Exit(1)


def recompute_compare(v: Verdict, man: Manifest, qrels: str, runs: dict[str, str]) -> None:
    """A comparison made again from its inputs and settings; each system's and pair's numbers compared
    (a sampled p within 4 of its standard errors, every other number to 1e-12)."""
    import os

    from ..analysis.compare import CompareSettings, compare
    from ..provenance.commands import PPI_ROLE, comparison_results
    from ..provenance.verify import SAMPLED_SE, TOLERANCE, compare_numbers, eval_settings, resolve

    base = os.path.dirname(os.path.abspath(v.manifest))
    evaluation = man["method"]["evaluation"]
    settings = eval_settings(v, evaluation["settings"])
    try:
        options = CompareSettings(**(evaluation.get("compare") or {}))
    except TypeError as e:
        raise TierankInputError(f"{v.manifest}: compare settings not understood ({e})") from None
    try:
        human = [r for r in man["data"].get("estimates") or [] if r["role"] == PPI_ROLE]
        ppi = resolve(human[0]["path"], base, PPI_ROLE) if human else None
        cmp = compare(runs, qrels, evaluation["measures"][0], settings, options, ppi=ppi)
    except TierankInputError as e:
        if v.ok:
            raise
        v.fail(f"not compared again ({e.problems[0]})")
        return
    now = comparison_results(cmp)
    was = man["results"]
    for key in ("measure", "queries", "dropped_queries"):
        compare_numbers(v, "comparison:", {key: was.get(key)}, now)
    systems = {s["name"]: s for s in now["systems"]}
    for rec in was.get("systems", []):
        cur = systems.get(rec["name"])
        if cur is None:
            v.fail(f"system {rec['name']}: not compared again")
            continue
        compare_numbers(v, f"system {rec['name']}:", rec, cur)
    pairs = {(p["a"], p["b"]): p for p in now["pairs"]}
    for rec in was.get("pairs", []):
        cur = pairs.get((rec["a"], rec["b"]))
        if cur is None:
            v.fail(f"pair {rec['a']} vs {rec['b']}: not compared again")
            continue
        sampled = rec.get("method") not in (None, "analytic", "exact")
        tol = max(TOLERANCE, SAMPLED_SE * (rec.get("se") or 0.0)) if sampled else TOLERANCE
        p_keys = ("p", "p_test", "p_adjusted")
        where = f"pair {rec['a']} vs {rec['b']}:"
        compare_numbers(v, where, {k: x for k, x in rec.items() if k not in p_keys}, cur)
        compare_numbers(v, where, {k: x for k, x in rec.items() if k in p_keys}, cur, tol)


def recompute_judges(v: Verdict, man: Manifest, qrels: str, runs: dict[str, str]) -> None:
    """The judges' agreement made again from the reference, the judges' files and the runs under
    the recorded options; each judge's pooled statistics, each ordering and each mean compared
    (bootstrap intervals are drawn again from the recorded seed: equal to 1e-12)."""
    import os

    from ..provenance.verify import compare_numbers, resolve
    from .judges import judge_agreement, judges_results

    evaluation = man["method"]["evaluation"]
    base = os.path.dirname(os.path.abspath(v.manifest))
    judges = [resolve(rec.get("path"), base, "judge") for rec in man["data"].get("judges") or []]
    measure = (evaluation.get("measures") or ["nDCG@10"])[0]
    try:
        result, ordering, means, _ = judge_agreement(
            qrels, judges, list(runs.values()), measure, evaluation.get("judges") or {}
        )
    except TierankInputError as e:
        if v.ok:
            raise
        v.fail(f"not computed again ({e.problems[0]})")
        return
    except KeyError as e:
        raise TierankInputError(f"{v.manifest}: judges setting {e} missing") from None
    now = judges_results(result, ordering, means)
    was = man["results"]
    keys = {"agreement": ("judge",), "orderings": ("judge", "measure"), "systems": ("judge", "run")}
    for section, key in keys.items():
        current = {tuple(r[k] for k in key): r for r in now.get(section, [])}
        for rec in was.get(section) or []:
            ident = tuple(rec.get(k) for k in key)
            where = f"{section} {' '.join(str(x) for x in ident)}:"
            cur = current.get(ident)
            if cur is None:
                v.fail(f"{where} not computed again")
                continue
            compare_numbers(v, where, rec, cur)


#: how `tierank verify` makes the numbers of the commands beside ``eval`` again
RECOMPUTE = {"compare": recompute_compare, "judges": recompute_judges}
