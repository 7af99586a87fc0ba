"""``tierank eval QRELS RUN... --labels DISTRIBUTIONS`` (or ``--panel JUDGE...``): the evaluation's
records with each measure's expectation and variance over label uncertainty jointly with ties
(`tierank.analysis.labels`): grades drawn from per-pair distributions, or one judge drawn from a
panel, every judge equally likely."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import TierankInputError
from .added import Written, refuse_trec_eval, with_added, write_added
from .common import note

#: the keys added to every record (the evaluation's own keys are kept as they are)
LABEL_FIELDS = (
    "label_expected",
    "var_tie",
    "var_label",
    "label_std",
    "plugin",
    "label_se",
    "label_method",
    "label_samples",
    "label_seed",
)


def _added(stats, i: int | None) -> dict:
    """The `LABEL_FIELDS` of query ``i`` (None: the aggregate) of one measure's `LabelStats`."""
    vals: tuple[float, ...]
    if i is None:
        a = stats.aggregate
        vals = (a["expected"], a["var_tie"], a["var_label"], a["std"], a["plugin"], a["se"])
    else:
        vals = tuple(
            float(x[i])
            for x in (
                stats.expected,
                stats.var_tie,
                stats.var_label,
                stats.std,
                stats.plugin,
                stats.se,
            )
        )
    return dict(zip(LABEL_FIELDS, (*vals, stats.method, stats.samples, stats.seed), strict=True))


def _table(records: list[dict], panel: bool):
    from rich.table import Table

    from ..report.terminal import num, text

    drawn = "a judge drawn from the panel" if panel else "grades drawn from the distributions"
    expected = "the judges' mean grades" if panel else "the expected grades"
    t = Table(
        title=text(
            f"over label uncertainty and tie orderings (E[M]: under QRELS; E, std and its tie and "
            f"label parts: over {drawn}; plug-in: M on {expected}; se: of E, where sampled)"
        )
    )
    heads = ("run", "measure", "E[M]", "E", "std", "tie sd", "label sd", "plug-in", "method", "se")
    for head in heads:
        left = head in ("run", "measure", "method")
        t.add_column(head, no_wrap=True, justify="left" if left else "right")
    for r in records:
        if r["query"] != "all":
            continue
        sampled = r["label_method"] != "exact"
        method = f"{r['label_method']} {r['label_samples']}" if sampled else "exact"
        t.add_row(
            text(r["run"]),
            text(r["measure"]),
            num(r["expected"], 3),
            num(r["label_expected"], 3),
            num(r["label_std"], 3),
            num(r["var_tie"] ** 0.5, 3),
            num(r["var_label"] ** 0.5, 3),
            num(r["plugin"], 3),
            text(method),
            num(r["label_se"], 4) if sampled else "",
        )
    return [t]


def read_panel(judges: Sequence[Path], judge_column: bool) -> dict:
    """``{judge: Qrels}`` of the ``--panel`` files (one judge a file, named by its shortest
    distinguishing path suffix; with ``judge_column``, ``qid judge docid grade`` files), notes said;
    refused with fewer than 2 judges."""
    from ..io.judgments import non_integer, read_judges

    found, notes = read_judges(list(judges), judge_column=judge_column)
    for line in notes:
        note(line)
    if len(found) < 2:
        where = f"{judges[0]}: one judge" if judges else "no judge"
        raise TierankInputError(
            f"--panel: {where}; a panel needs at least 2 judges (one file a judge, or with "
            "--judge-column files of qid judge docid grade lines)"
        )
    floats = sum(non_integer(q.grade) for q in found.values())
    if floats:
        note(
            f"--panel: {floats} grade{'s' * (floats != 1)} not a whole number, read as floats (gains "
            "as given)"
        )
    return found


#: per option: what a query lacks without labels, and what it has without a QRELS judgment
_LACKS = {
    "--labels": ("has no label distribution", "has label distributions"),
    "--panel": ("is graded by no judge of the panel", "is graded by the panel"),
}


def _mismatch(flag: str, source: str, name: str, qrels_q: list, found_q: list) -> TierankInputError:
    """The located refusal of a run whose queries under QRELS and under the labels differ."""
    only_q = sorted(set(qrels_q) - set(found_q))
    only_l = sorted(set(found_q) - set(qrels_q))
    lacks, has = _LACKS[flag]
    said = (
        f"query {only_q[0]!r} of {name} is evaluated under QRELS and {lacks}"
        if only_q
        else f"query {only_l[0]!r} of {name} {has} and no QRELS judgment"
    )
    return TierankInputError(
        f"{source}: {said}; {flag} needs the queries QRELS evaluates, no more, no fewer "
        f"({len(only_q) + len(only_l)} differ)"
    )


def write_labels(
    labels: Path | Sequence[Path],
    sources: dict,
    measures,
    settings,
    results: dict,
    to: Written,
    judge_column: bool = False,
) -> None:
    """Evaluate every run of ``sources`` over the label distributions ``labels`` (a path), or over the
    panel of judges ``labels`` (a list of paths: `read_panel`), and write ``results``' records with
    `LABEL_FIELDS` added."""
    from ..analysis.labels import evaluate_labels
    from ..io.distributions import read_distributions

    panel = not isinstance(labels, (str, Path))
    flag = "--panel" if panel else "--labels"
    refuse_trec_eval(to.fmt, flag, "statistics")
    judged: Any
    if panel:
        assert not isinstance(labels, (str, Path))
        judged = read_panel(labels, judge_column)
        source = ", ".join(str(p) for p in labels)
    else:
        judged = read_distributions(labels)
        source = str(labels)
    by_run = {}
    for name, path in sources.items():
        found = evaluate_labels(
            judged,
            str(path),
            measures,
            samples=settings.samples,
            seed=settings.seed,
            settings=settings,
        )
        if found.qids != results[name].qids:  # one query set, or the aggregates differ
            raise _mismatch(flag, source, name, results[name].qids, found.qids)
        at = {q: i for i, q in enumerate(found.qids)}
        by_run[name] = ({str(m): s for m, s in found.stats.items()}, at)

    def added(name: str, rec: dict) -> dict:
        stats, at = by_run[name]
        return _added(stats[rec["measure"]], None if rec["query"] == "all" else at[rec["query"]])

    records = with_added(results, to, added)
    about: dict[str, Any] = {
        "source": source,
        "expected": "over grades drawn from each pair's distribution and tie orderings",
        "var_tie": "E over grades of the variance over tie orderings",
        "var_label": "variance over grades of the tie-expected value",
        "plugin": "the measure on the expected grades",
    }
    if panel:
        about |= {
            "judges": list(judged),
            "expected": "over a judge drawn uniformly from the panel and tie orderings",
            "var_tie": "E over judges of the variance over tie orderings",
            "var_label": "variance over judges of the tie-expected value",
            "plugin": "the measure on each pair's mean grade over the judges that graded it",
        }
    write_added(
        records,
        LABEL_FIELDS,
        results,
        to,
        tables=lambda: _table(records, panel),
        about={"labels": about},
    )
