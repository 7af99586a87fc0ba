"""The note ``tierank trec_eval`` writes on stderr after its output when tied scores make a printed
value uncertain at its fourth decimal: which measures, how many queries, and the ``tierank eval``
command that shows expected, min and max."""

from __future__ import annotations

from .trec_eval_args import Args

#: a printed value whose range over tie orderings reaches this is uncertain at its 4th decimal
UNCERTAIN = 0.00005


def tie_note(results: dict, plan, a: Args) -> str | None:
    """The note on stderr when a printed value's range over tie orderings reaches `UNCERTAIN`:
    the number of queries, the measures, and the command that shows expected, min and max;
    None when no printed value moves (or when ``--stat`` prints another statistic)."""
    import numpy as np

    from ..results import statistic

    if a.stat != "oblivious":
        return None
    moved: dict[str, None] = {}
    queries = 0
    total = 0
    for result in results.values():
        n = len(result.qids)
        total += n
        hit = np.zeros(n, dtype=bool)
        for e in plan.printed:
            m = e.measure
            if m is None or m not in result.stats or getattr(m, "string_valued", False):
                continue
            s = result.stats[m]
            spread = np.asarray(statistic(s, "range"), dtype=float)
            per_query = spread >= UNCERTAIN
            shown = False
            if a.per_query and not getattr(m, "summary_only", False) and per_query.any():
                shown = True
            if a.summary and n:
                agg = result.summary(m)
                whole = statistic(agg, "range")
                if whole == whole and whole >= UNCERTAIN:
                    shown = True
            if shown:
                moved[e.name] = None
                hit |= per_query
        queries += int(hit.sum())
    if not moved:
        return None
    import shlex

    where = (
        "per query and in the summary"
        if a.per_query and a.summary
        else "per query"
        if a.per_query
        else "in the summary"
    )
    return (
        f"tierank trec_eval: tied scores move printed values by 0.00005 or more ({where}): "
        f"{_listed(list(moved))}; {queries} of {total} queries have such ties. Expected, min and max "
        f"over every ordering of the tied documents: {shlex.join(eval_command(a))}"
    )


#: the measures a note names before it counts the rest
NAMED = 6


def _listed(names: list[str]) -> str:
    """``names`` joined, the first `NAMED` of them and the number of the others.

    >>> _listed(["map", "P_5"]), _listed([f"m{i}" for i in range(9)])
    ('map, P_5', 'm0, m1, m2, m3, m4, m5 and 3 more')
    """
    if len(names) <= NAMED:
        return ", ".join(names)
    return f"{', '.join(names[:NAMED])} and {len(names) - NAMED} more"


def eval_command(a: Args) -> list[str]:
    """The ``tierank eval`` command line that reports the same evaluation with every statistic
    (its table: oblivious, expected, min, max, range per measure): trec_eval's flags as
    ``tierank eval`` takes them, then the files.

    >>> from tierank.cli.trec_eval_args import parse
    >>> eval_command(parse(["-q", "-l2", "--Judged", "-m", "P.5", "-o", "q", "r"]))
    ['tierank', 'eval', '-q', '-l', '2', '-J', '-m', 'P.5', 'q', 'r']
    """
    out = ["tierank", "eval"]
    out += ["-q"] * a.per_query + ["-c"] * a.complete
    out += ["-l", str(a.rel)] if a.rel != 1 else []
    out += ["-J"] * a.judged_only
    out += ["-M", str(a.max_depth)] if a.max_depth is not None else []
    out += ["-N", str(a.docs_in_collection)] if a.docs_in_collection else []
    for text in a.measures or ["official"]:
        out += ["-m", text]
    return out + a.files
