"""Every registered family's tie statistics against brute force over the orderings, derived from the
registry (so a new family's module is checked with no line written here).

For each family's instances (the common suite's `instances`: its defaults or ``example``, then a
cutoff and a parameter moved off its default) and a few fixed queries with heavy ties, graded and
unjudged documents and a relevant document the run does not retrieve, every ordering of every tie
group (``reference.orderings``) is written as an untied query of its own; the family's value on each
is its value on that ranking.  Its expected value, min, max and std on the tied query are then the
mean, min, max and population std over those rankings: exactly (1e-9) for an exact method, within
the sampling error it reports (``se``) for a labelled estimate.  This checks each family's closed
forms for ties against its own definition of a ranking's value; the references written from the
textbook definitions (``tests/measures/test_bruteforce_registry.py``) check that value itself.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np
import pytest

import tierank
from reference import orderings
from tierank.errors import TierankInputError
from tierank.measures import Measure, parse_measure

#: (docid, score, grade or None for unjudged) per query, and judged documents the run does not
#: retrieve; a query whose tie groups hold equal grades only (q3) has std exactly 0
CASES: dict[str, tuple[list[tuple[str, float, Any]], dict[str, int]]] = {
    "q0": (
        [
            ("a", 3.0, 2),
            ("b", 3.0, None),
            ("c", 3.0, 0),
            ("d", 2.0, 1),
            ("e", 2.0, None),
            ("f", 1.0, 3),
            ("g", 1.0, 0),
        ],
        {"x": 1},
    ),
    "q1": ([("a", 2.0, 0), ("b", 2.0, 1), ("c", 2.0, 0), ("d", 2.0, 2), ("e", 1.0, None)], {}),
    "q2": ([("a", 1.0, 0), ("b", 1.0, None), ("c", 0.0, 0)], {}),
    "q3": ([("a", 1.0, 1), ("b", 1.0, 1), ("c", 0.5, 0)], {"y": 2}),
}
TOL = 1e-9


#: the cutoff added to every family that takes a number of ranks: it falls inside the first tie
#: group of every query above, so the cutoff's formulas for a group it cuts are checked
INSIDE_A_GROUP = 2


def family_instances() -> dict[str, list[Measure]]:
    """family -> its instances, as the common suite derives them (imported here: one rule), and the
    first at `INSIDE_A_GROUP` where the family takes a number of ranks as its cutoff."""
    from test_common import families, instances

    out = {}
    for f, cls in sorted(families().items()):
        ms = instances(cls)
        if cls.cutoff_allowed and cls.cutoff_param is None:
            try:
                ms.append(parse_measure(f"{str(ms[0]).partition('@')[0]}@{INSIDE_A_GROUP}"))
            except TierankInputError:  # a cutoff the family's validate refuses with its defaults
                pass
        out[f] = ms
    return out


def _collection(subtopics: bool) -> tuple[dict, dict, dict]:
    """The tied run, the untied run of every ordering (query ``q~i``), and qrels for both."""
    tied: dict[str, dict[str, float]] = {}
    untied: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, Any]] = {}
    origin: dict[str, str] = {}
    for q, (docs, extra) in CASES.items():
        judged = {d: g for d, _, g in docs if g is not None} | extra
        grades = {d: {"1": g, "2": g - 1} for d, g in judged.items()} if subtopics else dict(judged)
        tied[q], qrels[q] = {d: s for d, s, _ in docs}, grades
        for i, ranking in enumerate(orderings(docs)):
            name = f"{q}~{i}"
            untied[name] = {d: float(len(ranking) - r) for r, (d, _, _) in enumerate(ranking)}
            qrels[name], origin[name] = grades, q
    return tied, untied, {"qrels": qrels, "origin": origin}


def _check(measures: list[Measure], subtopics: bool) -> tuple[int, int]:
    """(the (query, measure) pairs checked, those whose value some ordering moves)."""
    tied, untied, info = _collection(subtopics)
    qrels, origin = info["qrels"], info["origin"]
    got = {(r["query"], r["measure"]): r for r in tierank.evaluate(qrels, tied, measures).records()}
    values: dict[tuple[str, str], list[float]] = {}
    for r in tierank.evaluate(qrels, untied, measures).records():
        if r["query"] != "all":
            values.setdefault((origin[r["query"]], r["measure"]), []).append(r["oblivious"])
    checked = moved = 0
    for (q, m), vals in values.items():
        row = got[q, m]
        want = {
            "expected": statistics.fmean(vals),
            "min": min(vals),
            "max": max(vals),
            "std": statistics.pstdev(vals),
        }
        if row.get("method", "exact") == "exact":
            for stat, v in want.items():
                assert math.isclose(row[stat], v, abs_tol=TOL), (q, m, stat, row[stat], v)
            if want["min"] == want["max"]:
                assert row["std"] == 0.0, (q, m)  # a quantity that cannot vary is exactly 0
        else:  # a labelled estimate: within its reported error; the extremes are exact
            assert abs(row["expected"] - want["expected"]) <= 6 * row["se"] + TOL, (q, m, row)
            assert math.isclose(row["min"], want["min"], abs_tol=TOL), (q, m, row, want)
            assert math.isclose(row["max"], want["max"], abs_tol=TOL), (q, m, row, want)
            # the spread of a few hundred draws: a quarter of the true std at the most
            assert abs(row["std"] - want["std"]) <= 0.25 * want["std"] + TOL, (q, m, row, want)
        checked += 1
        moved += want["min"] < want["max"]
    return checked, moved


#: the families with statistics over orderings (a string-valued one, RelString, has none)
INSTANCES = {
    f: ms for f, ms in family_instances().items() if not getattr(ms[0], "string_valued", False)
}


#: the families whose value no ordering of tied documents can move (what they count does not
#: depend on the order): their check is that std is exactly 0
ORDER_FREE = {
    "NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet",
    "SetAP", "SetF", "SetP", "SetR", "SetRelP", "Utility",
}  # fmt: skip


@pytest.mark.parametrize("family", sorted(INSTANCES, key=str.lower))
def test_the_tie_statistics_are_those_of_every_ordering(family):
    """Each family's statistics are those of every ordering, and (but for the order-free families)
    some ordering of the cases moves its value, so that more than std = 0 is checked."""
    measures = INSTANCES[family]
    checked, moved = _check(measures, subtopics=measures[0].needs_subtopics)
    assert checked > 0
    assert (moved > 0) != (family in ORDER_FREE), (family, moved)


def _stats(result) -> dict:
    return {
        (str(m), k): np.asarray(getattr(s, k), dtype=float)
        for m, s in result.stats.items()
        for k in ("oblivious", "expected", "min", "max", "var")
    }


@pytest.mark.parametrize("family", sorted(INSTANCES, key=str.lower))
def test_each_mode_gives_the_full_statistics_it_computes(family):
    """`Evaluator.evaluate`'s modes (``moments``, ``extremes``) compute less, never other numbers: a
    statistic a mode gives (not NaN) is the full mode's, bit for bit, and each mode gives the
    statistics it asks for (the oblivious value always; the expected value and var with
    ``moments``; min and max with ``moments`` or ``extremes``)."""
    measures = INSTANCES[family]
    subtopics = measures[0].needs_subtopics
    tied, _, info = _collection(subtopics)
    ev = tierank.Evaluator(info["qrels"], measures)
    full = _stats(ev.evaluate(tied))
    for moments, extremes in ((True, False), (False, True), (False, False)):
        got = _stats(ev.evaluate(tied, moments=moments, extremes=extremes))
        asked = {"oblivious"} | ({"expected", "var", "min", "max"} if moments else set())
        asked |= {"min", "max"} if extremes else set()
        for (m, k), v in got.items():
            given = ~np.isnan(v)
            assert np.array_equal(v[given], full[m, k][given]), (m, k, moments, extremes)
            if k in asked:
                assert np.array_equal(v, full[m, k], equal_nan=True), (m, k, moments, extremes)
