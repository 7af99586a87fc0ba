"""Naive reference implementations, written from the textbook definitions.

Nothing here shares code with tierank's kernels: one ranked list of grades in,
one number out, and brute-force enumeration of every ordering inside tie groups.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics


def _rel(g, level):
    return g is not None and g >= level


def _gain(g):
    return max(g, 0.0) if g is not None else 0.0


def value(measure: str, grades: list, nrel: int, ideal: list[float], level: int = 1) -> float:
    """Measure of one ranked list. ``grades``: grade per rank (None = unjudged)."""
    m = re.fullmatch(r"([A-Za-z0-9]+)(?:\(p=([0-9.]+)\))?(?:@(\d+))?", measure)
    name, p, k = m.group(1), m.group(2), m.group(3)
    kideal = int(k) if k else None  # no cutoff: the ideal ranks every relevant document
    k = int(k) if k else len(grades)
    rel = [_rel(g, level) for g in grades]
    top = rel[:k]
    hits = sum(top)
    if name == "P":
        return hits / k
    if name == "Judged":
        top_j = [g is not None for g in grades[:k]]
        return sum(top_j) / len(top_j) if top_j else 0.0
    if name == "R":
        return hits / nrel if nrel else 0.0
    if name == "Hits":
        return float(hits)
    if name == "F1":
        prec, rec = hits / k, (hits / nrel if nrel else 0.0)
        return 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    if name == "Success":
        return float(any(top))
    if name == "RR":
        for i, r in enumerate(top):
            if r:
                return 1.0 / (i + 1)
        return 0.0
    if name == "AP":
        if not nrel:
            return 0.0
        total, seen = 0.0, 0
        for i, r in enumerate(top):
            if r:
                seen += 1
                total += seen / (i + 1)
        return total / nrel
    if name == "Rprec":
        return sum(rel[:nrel]) / nrel if nrel else 0.0
    if name == "RBP":
        pp = float(p) if p else 0.8
        return (1 - pp) * sum(pp**i for i, r in enumerate(top) if r)
    if name == "nDCG":
        dcg = sum(_gain(g) / math.log2(i + 2) for i, g in enumerate(grades[:k]))
        ideal_sorted = sorted((x for x in ideal if x > 0), reverse=True)[:kideal]
        idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal_sorted))
        return dcg / idcg if idcg > 0 else 0.0
    raise ValueError(measure)


def orderings(docs: list[tuple[str, float, object]]):
    """Every ranking of ``docs`` (docid, score, grade) consistent with score descending."""
    scores = sorted({s for _, s, _ in docs}, reverse=True)
    groups = [[d for d in docs if d[1] == s] for s in scores]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [d for grp in combo for d in grp]


def brute_stats(measure: str, docs, nrel: int, ideal, level: int = 1) -> dict:
    vals = [value(measure, [g for _, _, g in o], nrel, ideal, level) for o in orderings(docs)]
    return {
        "expected": statistics.fmean(vals),
        "min": min(vals),
        "max": max(vals),
        "std": statistics.pstdev(vals),
    }


def ordered(docs, policy: str):
    """The tie-oblivious order under a named policy (input order = list order)."""
    idx = list(range(len(docs)))
    if policy == "trec_eval":
        key = sorted(idx, key=lambda i: docs[i][0].encode(), reverse=True)
        key = sorted(key, key=lambda i: -docs[i][1])
    elif policy == "docno":
        key = sorted(idx, key=lambda i: docs[i][0].encode())
        key = sorted(key, key=lambda i: -docs[i][1])
    elif policy == "input":
        key = sorted(idx, key=lambda i: -docs[i][1])
    else:
        raise ValueError(policy)
    return [docs[i] for i in key]


def check_per_query(
    res, qs, qrels, measures, reference, depth=None, *, tol: float = 1e-9, sampled=None
) -> None:
    """Every query's statistics in ``res`` (an :class:`tierank.EvalResult`) against every ordering of its tie
    groups: ``reference(measure, grades in rank order, the query's grades, depth)`` is the value of one ordering
    written from the measure's definition; ``qs`` is the ``collection()`` strategy's list of (docs, extra
    judgments) per query ``q0, q1, ...``.  E and std exact, unless ``sampled(measure, row, values)`` is given and
    returns a verdict (True/False) for a sampled measure (None: check it as exact).  A quantity no ordering
    changes is exactly 0 (std) and the same value (E, min, max); the oblivious value is trec_eval's order's."""
    from tierank.measures import parse_measure

    pq = res.per_query().set_index(["query", "measure"])
    for i, (docs, extra) in enumerate(qs):
        q = f"q{i}"
        if q not in qrels:
            continue
        qg = [g for _, _, g in docs if g is not None] + list(extra.values())
        for meas in measures:
            row = pq.loc[(q, str(parse_measure(meas)))]
            vals = [reference(meas, [g for _, _, g in o], qg, depth) for o in orderings(docs)]
            info = (q, meas, dict(row), docs, extra)
            assert math.isclose(row["min"], min(vals), abs_tol=tol), info
            assert math.isclose(row["max"], max(vals), abs_tol=tol), info
            obl = reference(meas, [g for _, _, g in ordered(docs, "trec_eval")], qg, depth)
            assert math.isclose(row["oblivious"], obl, abs_tol=tol), (obl, info)
            if min(vals) == max(vals):  # no ordering changes it: no invented variation
                assert row["std"] == 0.0 and row["expected"] == row["min"] == row["max"], info
                continue
            verdict = sampled(meas, row, vals) if sampled is not None else None
            if verdict is not None:
                assert verdict, ("sampled estimate out of law", info)
            else:
                assert math.isclose(row["expected"], statistics.fmean(vals), abs_tol=tol), info
                assert math.isclose(row["std"], statistics.pstdev(vals), abs_tol=tol), info
