"""`verify`: re-read a manifest's inputs, recompute its numbers and say what, if anything, moved.

The account names its causes first, in this order, one line each:

1. an input whose SHA-256 differs from the manifest's (the path, the sizes);
2. a part of the manifest edited after it was written (its ``seal``): which setting, the measures,
   the inputs' or the results' records;
3. each number that moved: run, measure, statistic, the manifest's value, the value now and the
   difference.

Exact statistics must be equal to 1e-12 (relative and absolute: the last bits a different CPU or
BLAS may change); a sampled statistic (``method: sampled``) within 4 standard errors of its record.
Versions and platform that differ are noted, never a failure on their own: the numbers decide.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import TierankInputError
from .build import result_record, seal, sealed_settings, versions
from .inputs import sha256_of
from .io import Manifest

#: the relative and absolute tolerance of an exact statistic
TOLERANCE = 1e-12
#: a sampled statistic's tolerance, in standard errors
SAMPLED_SE = 4.0
#: the statistics compared
STATISTICS = ("oblivious", "expected", "min", "max", "std")


@dataclass
class Verdict:
    """The outcome of `verify`: ``ok`` when every number was made again; ``causes``: the account (one
    line each, causes first); ``notes``: what differs but decides nothing (versions); ``checked``:
    how many numbers were compared."""

    manifest: str
    ok: bool = True
    causes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: int = 0

    def fail(self, line: str) -> None:
        self.ok = False
        self.causes.append(f"{self.manifest}: {line}")


#: how a command's numbers are made again: (the verdict, the manifest, the qrels' path, each run's
#: path by name); each difference a `Verdict.fail` line
Recompute = Callable[[Verdict, Manifest, str, dict[str, str]], None]


def resolve(path: str | None, base: str, what: str) -> str:
    """An input's path: relative to the manifest's folder ``base``, else as written (from here)."""
    if path is None:
        raise TierankInputError(f"{what} was given in memory: the manifest cannot be verified")
    for candidate in (os.path.join(base, path), path):
        if os.path.exists(candidate):
            return candidate
    raise TierankInputError(f"{what} {path}: not found (relative to {base or '.'}, or from here)")


def _check_input(v: Verdict, rec: dict[str, Any], path: str, what: str) -> None:
    if rec.get("files") is not None:  # a folder: its files' records
        from .inputs import file_record

        now = file_record(path)
        if now["sha256"] != rec["sha256"]:
            was = {f["path"]: f["sha256"] for f in rec["files"]}
            new = {f["path"]: f["sha256"] for f in now["files"]}
            changed = sorted(k for k in was.keys() | new.keys() if was.get(k) != new.get(k))
            v.fail(f"{what}: changed since the manifest ({', '.join(changed)})")
        return
    digest, size = sha256_of(path)
    if digest != rec["sha256"]:
        v.fail(
            f"{what}: SHA-256 differs from the manifest's ({rec['size']} bytes then, {size} now)"
        )


def _check_seal(v: Verdict, man: Manifest) -> None:
    sealed = man["seal"]
    now = seal(man.document)
    shown_settings = sealed_settings(man["method"]["evaluation"])
    for key, value in now["settings"].items():
        if sealed.get("settings", {}).get(key) != value:
            shown = shown_settings.get(key)
            v.fail(f"setting {key} edited after the manifest was written (now {shown!r})")
    for key in ("measures", "inputs", "results"):
        if sealed.get(key) != now[key]:
            v.fail(f"the manifest's {key} edited after it was written (its seal differs)")


def _close(was: Any, now: Any, tol: float) -> bool:
    if was is None or now is None:
        return was is None and now is None
    if isinstance(was, float) and isinstance(now, float) and math.isnan(was) and math.isnan(now):
        return True
    return math.isclose(float(was), float(now), rel_tol=TOLERANCE, abs_tol=tol)


def _compare(v: Verdict, run: str, recorded: list[dict], now: list[dict]) -> None:
    by_measure = {r["measure"]: r for r in now}
    for rec in recorded:
        m = rec["measure"]
        cur = by_measure.get(m)
        if cur is None:
            v.fail(f"run {run}: {m} not computed again")
            continue
        sampled = rec.get("method", "exact") != "exact"
        se = rec.get("se") or 0.0
        tol = max(TOLERANCE, SAMPLED_SE * se) if sampled else TOLERANCE
        for stat in STATISTICS:
            if stat not in rec:
                continue
            v.checked += 1
            if not _close(rec[stat], cur.get(stat), tol):
                was, got = rec[stat], cur.get(stat)
                diff = (
                    f" ({got - was:+.6g})"
                    if isinstance(was, (int, float)) and isinstance(got, (int, float))
                    else ""
                )
                v.fail(f"run {run}: {m} {stat} {was!r} in the manifest, {got!r} now{diff}")
        if not sampled and rec.get("per_query_sha256") != cur.get("per_query_sha256"):
            v.checked += 1
            if rec.get("queries") != cur.get("queries"):
                v.fail(
                    f"run {run}: {m} over {cur.get('queries')} queries now, "
                    f"{rec.get('queries')} in the manifest"
                )
            else:
                v.fail(f"run {run}: {m} per-query values differ (their SHA-256)")


def verify(path: str | os.PathLike, recompute: Mapping[str, Recompute] | None = None) -> Verdict:
    """Verify the manifest at ``path``: every input re-read and hashed, every number computed again.

    ``recompute``: how the numbers of the commands beside ``eval`` are made again (the commands'
    own rooms sit above this one; ``tierank verify`` passes those of ``compare`` and ``judges``,
    `tierank.cli.provenance.RECOMPUTE`). A manifest that cannot be read, or whose inputs are
    missing here, raises `TierankInputError`.
    """
    p = os.fspath(path)
    man = Manifest.read(p)
    base = os.path.dirname(os.path.abspath(p))
    v = Verdict(p)
    data = man["data"]
    evaluation = man["method"]["evaluation"]
    command = evaluation.get("command")
    known = {**RECOMPUTE, **(recompute or {})}
    again = known.get(command) if isinstance(command, str) else None
    if again is None:
        raise TierankInputError(
            f"{p}: a manifest of `{command}`: verify recomputes manifests of "
            + ", ".join(f"`{c}`" for c in known)
        )
    qrels = resolve(data["qrels"].get("path"), base, "qrels")
    runs = {r["name"]: (resolve(r.get("path"), base, f"run {r['name']}"), r) for r in data["runs"]}
    _check_input(v, data["qrels"], qrels, f"qrels {data['qrels']['path']}")
    for name, (run_path, rec) in runs.items():
        shown = name if rec["path"] == name else f"{name} ({rec['path']})"
        _check_input(v, rec, run_path, f"run {shown}")
    for rec in data.get("estimates") or []:  # the files an estimate beside the numbers read
        where = f"{rec['role']} {rec['path']}"
        _check_input(v, rec, resolve(rec.get("path"), base, rec["role"]), where)
    for rec in data.get("judges") or []:
        _check_input(v, rec, resolve(rec.get("path"), base, "judge"), f"judge {rec['path']}")
    for key in ("candidates", "collection"):  # rerank's: what the model read
        rec = data.get(key)
        if rec and rec.get("sha256") is not None:
            _check_input(v, rec, resolve(rec["path"], base, key), f"{key} {rec['path']}")
    for rec in data.get("models") or []:
        if rec.get("sha256") is not None:
            _check_input(v, rec, resolve(rec["path"], base, "model"), f"model {rec['path']}")
    _check_seal(v, man)
    recorded_versions = man.get("platform", {}).get("software", {}).get("libraries", {}) or {}
    for lib, now in versions().items():
        was = recorded_versions.get(lib)
        if was is not None and str(was) != now:
            v.notes.append(f"{lib} {now} here, {was} in the manifest")
    again(v, man, qrels, {name: path for name, (path, _) in runs.items()})
    return v


def eval_settings(v: Verdict, settings: dict[str, Any]):
    """The `tierank.EvalSettings` of a manifest's ``settings`` (not understood: an input error)."""
    from ..settings import EvalSettings

    try:
        return EvalSettings(**settings)
    except TypeError as e:
        raise TierankInputError(f"{v.manifest}: settings not understood ({e})") from None


def _recompute_eval(v: Verdict, man: Manifest, qrels: str, runs: dict[str, str]) -> None:
    """An evaluation's numbers computed again and compared with the manifest's."""
    from ..evaluate import Evaluator
    from ..measures import parse_measure

    evaluation = man["method"]["evaluation"]
    settings = eval_settings(v, evaluation["settings"])
    measures = [parse_measure(m) for m in evaluation["measures"]]
    # canonical names carry every parameter (-N's collection size, trec_eval's quirks) back
    try:
        ev = Evaluator(qrels, measures, settings)
    except TierankInputError as e:
        if v.ok:
            raise
        v.fail(f"qrels not read again ({e.problems[0]})")
        return
    recorded = {r["run"]: r["measures"] for r in man["results"]}
    for name, run_path in runs.items():
        try:
            result = ev.evaluate(run_path)
        except (
            TierankInputError
        ) as e:  # a changed input may no longer evaluate: that is the account
            if v.ok:
                raise
            v.fail(f"run {name}: not evaluated again ({e.problems[0]})")
            continue
        _compare(v, name, recorded.get(name, []), result_record(result))


def compare_numbers(v: Verdict, where: str, was: dict, now: dict, tol: float = TOLERANCE) -> None:
    """Every value of the record ``was`` against ``now``'s: numbers within ``tol``, others equal."""
    for key, old in was.items():
        new = now.get(key)
        numeric = isinstance(old, (int, float)) and not isinstance(old, bool)
        v.checked += numeric
        same = (
            _close(old, new, tol)
            if numeric and isinstance(new, (int, float)) and not isinstance(new, bool)
            else old == new
        )
        if not same:
            diff = f" ({new - old:+.6g})" if numeric and isinstance(new, (int, float)) else ""
            v.fail(f"{where} {key} {old!r} in the manifest, {new!r} now{diff}")


def _recompute_rerank(v: Verdict, man: Manifest, qrels: str, runs: dict[str, str]) -> None:
    """A rerank's table made again from its written runs (one per variant, hashed above): each
    variant's aggregate statistics of each measure. The model is not run again: its files' and the
    data's SHA-256 were compared instead (said in the notes)."""
    from ..evaluate import Evaluator

    evaluation = man["method"]["evaluation"]
    settings = eval_settings(v, evaluation["settings"])
    v.notes.append(
        "rerank: the numbers were made again from the written runs (data.runs), not by running the "
        "model again; the model's, the data's and the candidates' files were compared by SHA-256"
    )
    try:
        ev = Evaluator(qrels, list(evaluation["measures"]), settings)
    except TierankInputError as e:
        if v.ok:
            raise
        v.fail(f"qrels not read again ({e.problems[0]})")
        return
    rows: dict[str, list[dict]] = {}
    for row in man["results"].get("rows") or []:
        if row.get("query", "all") == "all":
            rows.setdefault(row["variant"], []).append(row)
    for name, run_path in runs.items():
        try:
            result = ev.evaluate(run_path)
        except TierankInputError as e:
            if v.ok:
                raise
            v.fail(f"run {name}: not evaluated again ({e.problems[0]})")
            continue
        now = {r["measure"]: r for r in result.records(per_query=False)}
        for row in rows.get(name, []):
            cur = now.get(row["measure"])
            if cur is None:
                v.fail(f"variant {name}: {row['measure']} not computed again")
                continue
            was = {k: row[k] for k in STATISTICS if k in row}
            compare_numbers(v, f"variant {name}: {row['measure']}", was, cur)


#: how each command's numbers are made again
RECOMPUTE: dict[str, Recompute] = {"eval": _recompute_eval, "rerank": _recompute_rerank}
