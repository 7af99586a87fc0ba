"""``tierank eval QRELS RUN... --labels DISTRIBUTIONS``: the evaluation's records with each measure's
expectation and variance over label uncertainty jointly with ties (`tierank.analysis.labels`)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import TierankInputError
from .common import emit, print_tables

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


def _table(records: list[dict]):
    from rich.table import Table

    from ..report.terminal import num, text

    t = Table(
        title=text(
            "over label uncertainty and tie orderings (E[M]: under QRELS; E, std and its tie and "
            "label parts: over grades drawn from the distributions; plug-in: M on the expected "
            "grades; se: of E, where sampled)"
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


def write_labels(
    labels: Path,
    sources: dict,
    measures,
    settings,
    results: dict,
    fmt: str,
    per_query: bool,
    output: Path | None,
    protect: tuple,
) -> None:
    """Evaluate every run of ``sources`` over the label distributions ``labels`` and write
    ``results``' records with `LABEL_FIELDS` added."""
    from ..analysis.labels import evaluate_labels
    from ..io.distributions import read_distributions
    from ..report.formats import render_records

    if fmt == "trec_eval":
        raise TierankInputError(
            "--labels writes its statistics in the other formats; trec_eval's layout has no place "
            "for them"
        )
    dist = read_distributions(labels)
    records = []
    for name, path in sources.items():
        found = evaluate_labels(
            dist,
            str(path),
            measures,
            samples=settings.samples,
            seed=settings.seed,
            settings=settings,
        )
        at = {q: i for i, q in enumerate(found.qids)}
        if found.qids != results[name].qids:  # one query set, or the aggregates differ
            only_q = sorted(set(results[name].qids) - set(found.qids))
            only_l = sorted(set(found.qids) - set(results[name].qids))
            said = (
                f"query {only_q[0]!r} of {name} is evaluated under QRELS and has no label "
                "distribution"
                if only_q
                else f"query {only_l[0]!r} of {name} has label distributions and no QRELS judgment"
            )
            raise TierankInputError(
                f"{labels}: {said}; --labels needs the queries QRELS evaluates, no more, no fewer "
                f"({len(only_q) + len(only_l)} differ)"
            )
        by_name = {str(m): s for m, s in found.stats.items()}
        for rec in results[name].records(per_query=per_query):
            stats = by_name[rec["measure"]]
            i = None if rec["query"] == "all" else at[rec["query"]]
            records.append({"run": name, **rec, **_added(stats, i)})
    first = next(iter(results.values()))
    fields = ("run", "query", "measure", *first.columns, *LABEL_FIELDS)
    if fmt == "table":
        print_tables(_table(records), output, protect)
    elif fmt == "json":
        from ..report.formats.grouped import jsonable

        doc = {
            "labels": {
                "source": str(labels),
                "expected": "over grades drawn from each pair's distribution and tie orderings",
                "var_tie": "E over grades of the variance over tie orderings",
                "var_label": "variance over grades of the tie-expected value",
                "plugin": "the measure on the expected grades",
            },
            "records": records,
        }
        emit(json.dumps(jsonable(doc), indent=2, allow_nan=False) + "\n", output, protect)
    elif fmt == "jsonl":
        emit(render_records(records, fields, "jsonl", stream=records), output, protect)
    else:
        emit(render_records(records, fields, fmt), output, protect)
