"""The terminal tables of ``tierank plan``, ``tierank discriminative-power`` and ``tierank compare``
over several collections (the meta-analysis)."""

from __future__ import annotations

from rich.table import Table

from .terminal import count, num, pvalue, text


def plan_table(rows: list[dict], title: str, caption: str) -> Table:
    """One row per design: the ``rows``' keys are the columns."""
    t = Table(title=title, caption=caption, caption_justify="left")
    cols = list(rows[0]) if rows else []
    for c in cols:
        t.add_column(c, justify="left" if c in ("test", "given") else "right")
    for r in rows:
        t.add_row(*(text(_cell(r[c])) for c in cols))
    return t


def _cell(x) -> str:
    if isinstance(x, float):
        return num(x, 4) if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, int):
        return f"{x:,}"
    return "-" if x is None else str(x)


def discrimination_table(results: list) -> Table:
    """One row per measure (and per-topic values: expected, oblivious): pairs separated, the
    discriminative power, the estimated difference required (largest and median over the pairs)."""
    first = results[0]
    t = Table(
        title=f"discriminative power: {count(len(first.systems), 'system')}, "
        f"{count(first.pairs, 'pair')}, {count(first.topics, 'topic')}",
        caption=f"{first.method}: {_method_line(first)}; alpha {first.alpha:g}, {first.samples:,} "
        f"samples, seed {first.seed} (a Monte Carlo estimate: same seed, same result). 'expected': "
        "per-topic expected values over tie orderings; 'oblivious': one tie-break's values. "
        "diff required: the smallest mean difference the method separates (largest over the pairs; "
        "median in brackets).",
        caption_justify="left",
    )
    for c in ("measure", "values", "separated", "power", "diff required"):
        t.add_column(c, justify="left" if c in ("measure", "values") else "right")
    for r in results:
        t.add_row(
            text(r.measure),
            r.values,
            f"{r.separated}/{r.pairs}",
            f"{100 * r.power:.1f}%",
            text(f"{num(r.diff_required)} ({num(r.diff_required_median)})"),
        )
    return t


def _method_line(d) -> str:
    from ..analysis.discrimination import METHODS

    return METHODS[d.method]


def _effects_table(mc) -> Table:
    """Per pair, the per-collection effects (mean difference, its standard error, d_z)."""
    head = Table(
        title=f"{mc.measure} over {count(len(mc.collections), 'collection')}: per collection, each pair's "
        "mean difference of expected values (a - b) with its standard error",
        caption="se^2 = s_d^2 / n (topic sampling) + sum_q (v_a,q + v_b,q) / n^2 (the tie variance of "
        "the difference: what a tie-broken difference varies by); \\[tie N%]: the tie variance's share of se^2; "
        "d_z = mean / s_d." + ("".join(f"\nnote: {n}" for n in mc.notes)),
        caption_justify="left",
    )
    head.add_column("pair", no_wrap=True)
    for c, n in zip(mc.collections, mc.topics):
        head.add_column(text(f"{c} ({n:,})"), justify="right")
    for p in mc.pairs:
        cells = [
            f"{num(e.diff)} ±{num(e.var_diff**0.5)}"
            + (
                f" [tie {100 * e.var_tie / e.var_diff:.0f}%]"
                if e.var_tie > 0 and e.var_diff > 0
                else ""
            )
            + f" d_z {num(e.dz, 2)}"
            for e in p.effects
        ]
        head.add_row(text(f"{p.a} vs {p.b}"), *(text(c) for c in cells))
    return head


def _pooled_table(mc) -> Table:
    """Per pair, the pooled effects: plain mean, fixed effect, random effects (DL, PM)."""
    lvl = f"{100 * mc.level:g}%"
    pooled = Table(
        title=f"pooled over the collections: fixed effect and random effects (DerSimonian-Laird, "
        f"Paule-Mandel), {lvl} CIs; heterogeneity Q (p), I^2, tau^2",
        caption="Fixed effect: weights 1 / se^2. Random effects: weights 1 / (se^2 + tau^2); tau^2 by "
        "DL or PM. Normal CIs and p. d_z: the same models on Cohen's d_z. plain: the unweighted mean "
        "of the per-collection differences.",
        caption_justify="left",
    )
    for c in ("pair", "model", "effect", "CI", "p", "d_z [CI]", "Q (p)", "I^2", "tau^2"):
        pooled.add_column(c, justify="left" if c in ("pair", "model") else "right")
    for p in mc.pairs:
        _add_pooled_rows(pooled, p)
    return pooled


def _add_pooled_rows(pooled: Table, p) -> None:
    """Pair ``p``'s rows of the pooled table (its reason where it has no meta-analysis)."""
    name = text(f"{p.a} vs {p.b}")
    if not p.meta:
        pooled.add_row(name, "plain", num(p.plain_mean), "-", "-", "-", "-", "-", "-")
        pooled.add_row("", text(p.reason or "-"), *["-"] * 7)
        return
    rows = [
        ("plain", None, None, None),
        ("fixed", p.meta["diff"]["dl"].fixed, p.meta["dz"]["dl"].fixed, None),
        (
            "random DL",
            p.meta["diff"]["dl"].random,
            p.meta["dz"]["dl"].random,
            p.meta["diff"]["dl"],
        ),
        (
            "random PM",
            p.meta["diff"]["pm"].random,
            p.meta["dz"]["pm"].random,
            p.meta["diff"]["pm"],
        ),
    ]
    het = p.meta["diff"]["dl"]
    for model, r, z, m in rows:
        if r is None:
            pooled.add_row(
                name,
                model,
                num(p.plain_mean),
                *["-"] * 3,
                f"{het.q:.2f} ({het.q_p:.2g})",
                f"{100 * het.i2:.0f}%",
                "-",
            )
            continue
        pooled.add_row(
            "",
            model,
            num(r.effect),
            text(f"[{num(r.ci_low)}, {num(r.ci_high)}]"),
            pvalue(r.p),
            text(f"{num(z.effect, 2)} [{num(z.ci_low, 2)}, {num(z.ci_high, 2)}]"),
            "",
            "",
            "-" if m is None else f"{m.tau2:.2g}",
        )


def meta_tables(mc) -> list[Table]:
    """Per pair, the per-collection effects and the pooled effects of ``tierank compare`` over
    collections (a `tierank.analysis.multi.MultiComparison`)."""
    return [_effects_table(mc), _pooled_table(mc)]


def _ci(r) -> str:
    return f"{num(r.effect)} [{num(r.ci_low)}, {num(r.ci_high)}]"


__all__ = ["discrimination_table", "meta_tables", "plan_table"]
