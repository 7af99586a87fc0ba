"""``tierank eval MACHINE_QRELS RUN... --ppi HUMAN_QRELS``: the evaluation's records with prediction-powered
estimates of each run's mean (`tierank.analysis.ppi`), and of each pairwise difference (table, json);
and the tables of ``tierank compare ... --ppi HUMAN_QRELS`` (`comparison_tables`)."""

from __future__ import annotations

from pathlib import Path

from .added import Written, refuse_trec_eval, with_added, write_added
from .common import note


def _table(records: list[dict], pairs: list[dict], confidence: float):
    from rich.table import Table

    from ..report.terminal import num, text

    ci = f"{confidence:.0%} CI"
    t = Table(
        title=text(
            "machine labels for every query, human labels for some: prediction-powered means "
            "(PPI; PPI++ power-tuned; n: queries with human labels + without)"
        )
    )
    heads = ("run", "measure", "E[M]", "human", "n", f"PPI [{ci}]", f"PPI++ [{ci}]", "lambda")
    for head in heads:
        t.add_column(head, no_wrap=True, justify="left" if head in ("run", "measure") else "right")
    for r in records:
        if r["query"] != "all" or "ppi_mean" not in r:
            continue
        t.add_row(
            text(r["run"]),
            text(r["measure"]),
            num(r["expected"], 3),
            num(r["human_mean"], 3),
            f"{r['ppi_n_labeled']}+{r['ppi_n_unlabeled']}",
            f"{num(r['ppi_mean'], 3)} [{num(r['ppi_ci_low'], 3)}, {num(r['ppi_ci_high'], 3)}]",
            f"{num(r['ppi_pp_mean'], 3)} [{num(r['ppi_pp_ci_low'], 3)}, "
            f"{num(r['ppi_pp_ci_high'], 3)}]",
            num(r["ppi_pp_lambda"], 3),
        )
    tables = [t]
    if pairs:
        p = Table(title=text("pairwise differences (a - b), prediction-powered"))
        for head in ("a", "b", "measure", "PPI", ci, "PPI++", ci):
            p.add_column(head, no_wrap=True, justify="left" if head in "ab measure" else "right")
        for r in pairs:
            p.add_row(
                text(r["a"]),
                text(r["b"]),
                text(r["measure"]),
                num(r["ppi_diff"]),
                f"[{num(r['ppi_ci_low'])}, {num(r['ppi_ci_high'])}]",
                num(r["ppi_pp_diff"]),
                f"[{num(r['ppi_pp_ci_low'])}, {num(r['ppi_pp_ci_high'])}]",
            )
        tables.append(p)
    return tables


def write_ppi(
    human: Path,
    sources: dict,
    measures,
    settings,
    results: dict,
    to: Written,
    confidence: float = 0.95,
) -> None:
    """Evaluate every run of ``sources`` under the ``human`` qrels too, and write ``results``' records
    with the PPI fields added to the aggregate records (`tierank.analysis.ppi.PPI_FIELDS`)."""
    from ..analysis.ppi import PPI_FIELDS, ppi_pairs, ppi_records
    from ..evaluate import Evaluator

    refuse_trec_eval(to.fmt, "--ppi", "estimates")
    ev = Evaluator(str(human), measures, settings)
    human_results = {name: ev.evaluate(str(path)) for name, path in sources.items()}
    found, notes = ppi_records(results, human_results, confidence)
    pairs = ppi_pairs(results, human_results, confidence) if len(results) > 1 else []
    for line in notes:
        note(line)
    records = with_added(
        results,
        to,
        lambda name, rec: found.get((name, rec["measure"]), {}) if rec["query"] == "all" else {},
    )
    about = {
        "method": "PPI (lambda 1) and PPI++ (power-tuned lambda), normal intervals",
        "values": "per-query tie-aware expected values",
        "labeled": "queries with human and machine labels",
        "unlabeled": "queries with machine labels only",
        "confidence": confidence,
    }
    write_added(
        records,
        PPI_FIELDS,
        results,
        to,
        tables=lambda: _table(records, pairs, confidence),
        about={"ppi": about},
        more={"pairs": pairs},
    )


def comparison_tables(cmp) -> list:
    """The PPI tables of a comparison made with ``ppi`` (``tierank compare --ppi``): each system's
    PPI and PPI++ mean, then each pair's mean difference, with their intervals."""
    from rich.table import Table

    from ..report.terminal import num, text

    info = cmp.inference["ppi"]
    ci = f"{info['confidence']:.0%} CI"
    t = Table(
        title=text(
            f"{cmp.measure}: machine labels for every query, human labels for {info['labeled']} of "
            f"{info['labeled'] + info['unlabeled']}: prediction-powered means (PPI; PPI++ power-tuned)"
        )
    )
    for head in ("system", "E[M]", "human", f"PPI [{ci}]", f"PPI++ [{ci}]", "lambda"):
        t.add_column(head, no_wrap=True, justify="left" if head == "system" else "right")
    for s in cmp.systems:
        t.add_row(
            text(s.name),
            num(s.expected, 3),
            num(s.human_mean, 3),
            f"{num(s.ppi_mean, 3)} [{num(s.ppi_ci_low, 3)}, {num(s.ppi_ci_high, 3)}]",
            f"{num(s.ppi_pp_mean, 3)} [{num(s.ppi_pp_ci_low, 3)}, {num(s.ppi_pp_ci_high, 3)}]",
            num(s.ppi_pp_lambda, 3),
        )
    p = Table(title=text("pairwise differences (a - b), prediction-powered"))
    for head in ("a", "b", "human", f"PPI [{ci}]", f"PPI++ [{ci}]", "lambda"):
        p.add_column(head, no_wrap=True, justify="left" if head in ("a", "b") else "right")
    for r in cmp.pairs:
        p.add_row(
            text(r.a),
            text(r.b),
            num(r.human_diff),
            f"{num(r.ppi_diff)} [{num(r.ppi_ci_low)}, {num(r.ppi_ci_high)}]",
            f"{num(r.ppi_pp_diff)} [{num(r.ppi_pp_ci_low)}, {num(r.ppi_pp_ci_high)}]",
            num(r.ppi_pp_lambda, 3),
        )
    return [t, p]
