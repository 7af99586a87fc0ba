"""``trec_eval``: trec_eval's own layout (``trec_eval [-q] [-n]``) and its arithmetic, one statistic
per line (``--stat``); several runs print one after the other, as trec_eval run once per run would.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import TierankInputError
from ...measures.names import plan as measure_plan
from . import TREC_STATS, register
from .grouped import ResultTable


def _trec_value(x: float, count: bool) -> str:
    """trec_eval's number: ``%6.4f``; a count (``%ld`` in trec_eval) as an integer when it is one; NaN
    as trec_eval's C library prints the 0/0 it comes from, ``  -nan``."""
    if count and math.isfinite(x) and float(x).is_integer():
        return f"{int(x)}"
    if x != x:
        return f"{'-nan':>6}"
    return f"{x:6.4f}"


def _num_rel_complete(result, m, stat: str) -> float | None:
    """trec_eval's ``num_rel`` summary under ``-c``: the judgments of grade > 0 of every qrels query,
    whatever ``-l`` says (m_num_rel.c), read from ``NumRel(rel=1)`` when the result holds it; None
    where the summary is the sum of the per-query values (without ``-c``, or ``-l 1``)."""
    if m.family != "NumRel" or not result.settings.get("complete") or stat not in _COUNTED:
        return None
    from ...measures import parse_measure

    one = parse_measure("NumRel(rel=1)")
    if one == m or one not in result.stats:
        return None
    return float(np.sum(result.stats[one].oblivious))


#: the statistics of a count that no ordering changes: the count itself
_COUNTED = ("oblivious", "expected", "min", "max")


def _stat_column(s, stat: str) -> np.ndarray:
    """Per-query values of one statistic of [`Stats`][tierank.measures.Stats] ``s`` (the result's columns)."""
    v = {
        "oblivious": s.oblivious,
        "expected": s.expected,
        "min": s.min,
        "max": s.max,
        "std": np.sqrt(s.var),
        "range": s.max - s.min,
        "bias": s.oblivious - s.expected,
    }[stat]
    return np.asarray(v, dtype=float)


def render_trec_eval(
    result,
    *,
    plan=None,
    stat: str = "oblivious",
    per_query: bool = False,
    summary: bool = True,
    runid: str | None = None,
) -> str:
    """``result`` in trec_eval's exact layout (``trec_eval [-q] [-n]``), one statistic per line.

    Each line is ``"%-22s\t%s\t%6.4f"`` (measure, query, value), counts as integers; with
    ``per_query`` one block per query (sorted bytewise, as trec_eval's qrels order) holding every
    measure in trec_eval's print order, then (unless ``summary`` is False, trec_eval's ``-n``) the
    ``all`` block: ``runid`` (when ``plan`` asks for it and ``runid`` is known), ``num_q``, then the
    measures.  Measures are named as trec_eval prints them (``P_10``, ``iprec_at_recall_0.10``;
    [`tierank.measures.names`][tierank.measures.names]), the others by their tierank name.  ``stat`` picks the value:
    ``oblivious`` (the default: what trec_eval prints, under the result's tie-break), ``expected``,
    ``min``, ``max``, ``std``, ``range`` or ``bias``: the columns of [`EvalResult.records`][tierank.EvalResult.records], and
    the ``all`` line is that record's aggregate value.  Measures trec_eval prints only in the
    summary (``num_q``, ``gm_map``; ``summary_only``) have no per-query lines.  An ``all`` value
    that is a mean (a sum for counts) is computed as trec_eval computes it, the per-query values
    added in query order and divided once, so that its last printed digit is trec_eval's where the
    exact mean lies on a rounding boundary (e.g. 1177/4000 = 0.29425); it differs from the record's
    aggregate by a few units in the 16th digit at most.  A string measure (``relstring``,
    `tierank.measures.relstring`) prints ``'%s'`` per query only: the tie-oblivious ordering's
    string, with ``min`` / ``max`` the pessimistic / optimistic arrangement's, nothing for the others.

    Examples
    --------
    >>> import tierank
    >>> res = tierank.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.1}}, ["P.1", "map"])
    >>> print(render_trec_eval(res, per_query=True, stat="expected").replace("\\t", "|"), end="")
    map                   |q|0.7500
    P_1                   |q|0.5000
    map                   |all|0.7500
    P_1                   |all|0.5000
    """
    if stat not in TREC_STATS:
        raise TierankInputError(f"unknown statistic {stat!r}; accepted: {', '.join(TREC_STATS)}")
    if plan is None:
        plan = measure_plan(result.measures)
    entries = [e for e in plan.printed if e.measure is None or e.measure in result.stats]
    n = len(result.qids)
    # the aggregate records (a missing value None, NaN in the DataFrame of EvalResult.aggregate): no pandas
    agg = {row["measure"]: row for row in result.records(per_query=False)}
    lines: list[str] = []
    if per_query and n:
        # one format template per query (every measure's line), applied to all queries in one % operation
        specs: list[str] = []
        cols = []
        for e in entries:
            m = e.measure
            if m is None or getattr(m, "summary_only", False):
                continue
            if getattr(
                m, "string_valued", False
            ):  # relstring: '%s' per query, of the stat's ordering
                which = {"oblivious": "policy", "min": "pessimistic", "max": "optimistic"}.get(stat)
                if which is not None:
                    specs.append(f"{e.name:<22}".replace("%", "%%") + "\t%s\t'%s'\n")
                    cols.append(result.stats[m].texts[which])
                continue
            column = _stat_column(result.stats[m], stat)
            vals = column.tolist()
            if getattr(m, "is_count", False) or bool(np.isnan(column).any()):
                specs.append(f"{e.name:<22}".replace("%", "%%") + "\t%s\t%s\n")
                cols.append([_trec_value(x, getattr(m, "is_count", False)) for x in vals])
            else:
                specs.append(f"{e.name:<22}".replace("%", "%%") + "\t%s\t%6.4f\n")
                cols.append(vals)
        if cols:
            args = np.empty((n, 2 * len(cols)), dtype=object)
            args[:, 0::2] = np.asarray(result.qids, dtype=object)[:, None]
            for j, c in enumerate(cols):
                args[:, 2 * j + 1] = c
            lines.append(
                ("".join(specs) * n) % tuple(args.ravel().tolist())
            )  # lines, each with its newline
    if summary:
        if plan.runid and runid is not None:
            lines.append(f"{'runid':<22}\tall\t{runid}\n")
        for e in entries:
            if e.measure is None:  # num_q without a NumQ family: the number of queries evaluated
                lines.append(
                    f"{e.name:<22}\tall\t{n if stat in ('oblivious', 'expected', 'min', 'max') else 0}\n"
                )
                continue
            m = e.measure
            if getattr(m, "string_valued", False):  # relstring: per query only, as trec_eval
                continue
            value = agg[str(m)][stat]
            value = float("nan") if value is None else value
            count = getattr(m, "is_count", False)
            complete = _num_rel_complete(result, m, stat)
            if complete is not None:
                value = complete
            elif stat != "std" and n and m.aggregate(result.stats[m]).linear:
                # trec_eval's own arithmetic (meas_acc.c, meas_avg.c): the per-query values added in
                # query order, then one division: the same double, so the same last printed digit
                col = _stat_column(result.stats[m], stat)
                value = float(np.cumsum(col)[-1]) / (1 if count else n)
            lines.append(
                f"{e.name:<22}\tall\t{_trec_value(value, getattr(e.measure, 'is_count', False))}\n"
            )
    return "".join(lines)


def render(
    table: ResultTable,
    per_query: bool,
    *,
    plan=None,
    stat: str = "oblivious",
    summary: bool = True,
    runid: str | None = None,
) -> str:
    """Every group of ``table`` in trec_eval's layout, one after the other, each with its run's tag
    (``runid``, given here for a single run, or the group's own)."""
    return "".join(
        render_trec_eval(
            g.result,
            plan=plan,
            stat=stat,
            per_query=per_query,
            summary=summary,
            runid=runid if runid is not None and len(table.groups) == 1 else g.runid,
        )
        for g in table.groups
    )


FORMAT = register("trec_eval", render)
