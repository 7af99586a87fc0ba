"""HTML pages: the page kit (tierank.report.page) and the report builders (tierank.report.html)."""

from __future__ import annotations

import io
import math
import re

import pytest

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.analysis.sweep import sweep  # noqa: E402
from tierank.report import (  # noqa: E402
    FigureBlock,
    Section,
    Table,
    compare_report,
    cutoff_curves,
    eval_report,
    plot_ranges,
    render_report,
    sweep_report,
    write_report,
)
from tierank.report.page import format_value, p_value, percent  # noqa: E402

from .common import (  # noqa: E402
    PNG_SIGNATURE,
    QRELS,
    RUNS,
    TIED,
    assert_self_contained,
    f4,
    png_payloads,
    systems,
)

# ---------------------------------------------------------------------------------------------------- the kit


def test_format_helpers():
    assert [
        format_value(v) for v in (1 / 3, -1e-9, None, math.nan, math.inf, -math.inf, 7, False, "x")
    ] == ["0.3333", "0.0000", "-", "-", "inf", "-inf", "7", "no", "x"]
    assert [p_value(v) for v in (0.5, 9e-5, None, math.nan)] == ["0.5000", "<1e-4", "-", "-"]
    assert [percent(v) for v in (0.0, 1 / 3, 1.0, None, math.nan)] == [
        "0.00%",
        "33.33%",
        "100.00%",
        "-",
        "-",
    ]


def test_kit_is_re_exported_where_it_was():
    from tierank.report import html, page

    for name in ("Table", "FigureBlock", "Section", "render_report", "format_value", "CSS"):
        assert getattr(html, name) is getattr(page, name)


def test_table_options_collapsed_labels_formats_row_classes():
    page = render_report(
        "t",
        [
            Section(
                "one",
                tables=[
                    Table(
                        [{"a": 0.5, "b": 2}, {"a": None, "b": 3}],
                        columns=["b", "a"],
                        caption="cap",
                        labels={"a": "Alpha"},
                        formats={"b": lambda v: f"#{v}"},
                        row_classes=["flag", None],
                        collapsed=True,
                    )
                ],
            )
        ],
    )
    assert "<details><summary>cap</summary>" in page and "<caption>" not in page
    assert "<th>b</th><th>Alpha</th>" in page
    assert '<tr class="flag"><td class="num">#2</td><td class="num">0.5000</td></tr>' in page
    assert '<tr><td class="num">#3</td><td class="num">-</td></tr>' in page
    # two sections or fewer: no navigation; three: one link per section, in order
    assert "<nav>" not in page
    three = render_report("t", [Section("A b"), Section("C"), Section("")])
    assert '<nav><a href="#s0-a-b">A b</a><a href="#s1-c">C</a><a href="#s2"></a></nav>' in three


# ---------------------------------------------------------------------------------------------------- pages


def test_render_report_tables_escaping_and_embedding():
    from tierank.report.plots import figure_bytes

    fig = plot_ranges(
        [{"name": "s", "min": 0.1, "max": 0.3, "oblivious": 0.2, "expected": 0.25}], "AP"
    )
    page = render_report(
        "T <&>",
        [
            Section(
                "S & <i>",
                paragraphs=["a < b"],
                tables=[
                    Table(
                        [{"n": "<b>x</b>", "v": 1 / 3, "w": None, "z": float("nan")}],
                        columns=["v", "n", "w", "z"],
                    ),
                    Table([{"i": i} for i in range(10)], max_rows=3),
                ],
                figures=[
                    FigureBlock(fig, caption="cap <1>"),
                    FigureBlock(figure_bytes(fig, "svg").decode(), "svg one"),
                ],
            )
        ],
    )
    assert (
        "<title>T &lt;&amp;&gt;</title>" in page
        and "S &amp; &lt;i&gt;" in page
        and "a &lt; b" in page
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert re.search(r"<th>v</th><th>n</th><th>w</th><th>z</th>", page)
    assert (
        '<td class="num">0.3333</td><td>&lt;b&gt;x&lt;/b&gt;</td><td class="num">-</td><td class="num">-</td>'
        in page
    )
    assert (
        "showing 3 of 10 rows" in page
        and '<td class="num">2</td>' in page
        and '<td class="num">3</td>' not in page
    )
    (png,) = png_payloads(page)
    assert png.startswith(PNG_SIGNATURE)
    assert "<svg" in page and "<?xml" not in page and "DOCTYPE svg" not in page
    assert_self_contained(page)


def test_eval_report_shows_aggregate_ties_curves_and_queries():
    res = tierank.evaluate(QRELS, TIED, ["nDCG@3", "P@2", "RR"])
    curves = cutoff_curves(QRELS, RUNS, "nDCG", kmax=4)
    page = eval_report(res, curves, per_query=4)
    for row in res.records(per_query=False):
        for col in ("oblivious", "expected", "min", "max", "range", "bias", "std"):
            assert f'<td class="num">{f4(row[col])}</td>' in page
    assert "66.67%" in page and "showing 4 of 9 rows" in page
    widest = max((r for r in res.records() if r["query"] != "all"), key=lambda r: r["range"])
    first_row = (
        page.split("<h2>Most tie-affected queries</h2>")[1].split("<tbody>")[1].split("</tr>")[0]
    )
    assert f"<td>{widest['query']}</td><td>{widest['measure']}</td>" in first_row
    rec = curves.records()[-1]
    assert f'<td>tied</td><td class="num">4</td><td class="num">{f4(rec["oblivious"])}</td>' in page
    pngs = png_payloads(page)
    assert len(pngs) == 2 and all(p.startswith(PNG_SIGNATURE) for p in pngs)
    from PIL import Image

    for p in pngs:
        with Image.open(io.BytesIO(p)) as im:
            im.verify()
    assert_self_contained(page)
    assert eval_report(res, per_query=None).count("data:image/png;base64,") == 1


def test_sweep_report_and_compare_report(tmp_path):
    run = {
        "q1": {"a": 0.30079, "b": 0.30078125, "c": 0.1},
        "q2": {"x": 0.50001, "y": 0.5, "z": 0.2},
    }
    sw = sweep({"q1": {"a": 1}, "q2": {"y": 1}}, run, ["RR"], ["fp32", "bf16"])
    page = sweep_report(sw)
    for r in sw.rows:
        assert (
            f'<td class="num">{f4(r["range"])}</td>' in page
            and f'<td class="num">{f4(r["bias"])}</td>' in page
        )
        assert f'<td class="num">{100 * r["tie_share"]:.2f}%</td>' in page
    assert any(r["tie_share"] > 0 for r in sw.rows) and len(png_payloads(page)) == 1
    assert_self_contained(page)

    _, cmp = systems()
    page = compare_report(cmp)
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    for s in cmp.systems:
        assert f'<td class="num">{f4(s.expected)}</td>' in page
    assert "undecidable" in page and '<tr class="flag">' in page
    pngs = png_payloads(page)  # the ranges figure and the forest plot
    assert len(pngs) == 2 and all(png.startswith(PNG_SIGNATURE) for png in pngs)
    assert "Forest plot, systems sorted by expected mean" in page
    assert_self_contained(page)

    assert "<th>t</th>" in page and "Two-sided paired t-tests" in page

    out = write_report(tmp_path / "r.html", page)
    assert out.read_text(encoding="utf-8") == page and [p.name for p in tmp_path.iterdir()] == [
        "r.html"
    ]
    with pytest.raises(tierank.TierankInputError, match="refusing to overwrite"):
        write_report(out, "<p>x</p>", protect=(out,))
    assert out.read_text(encoding="utf-8") == page


def test_svg_embedding_has_no_urls():
    _, cmp = systems()
    page = render_report(
        "svg",
        [Section("ranges", figures=[FigureBlock(plot_ranges(cmp), caption="a <b>", format="svg")])],
    )
    assert "<svg" in page and "data:image/png" not in page
    assert (
        page.count('<svg role="img" aria-label="a &lt;b&gt;"') == 1
    )  # labelled as an <img> is by its alt
    assert_self_contained(page)


def test_every_report_says_which_tierank_made_it_beside_its_settings():
    from tierank.report.html import rerank_report

    res = tierank.evaluate(QRELS, TIED, ["RR"])
    run = {
        "q1": {"a": 0.30079, "b": 0.30078125, "c": 0.1},
        "q2": {"x": 0.50001, "y": 0.5, "z": 0.2},
    }
    rerank = {
        "settings": {"model": "m"},
        "rows": [
            {
                "variant": "fp32",
                "measure": "RR",
                "min": 0.5,
                "max": 0.5,
                "oblivious": 0.5,
                "expected": 0.5,
            }
        ],
    }
    pages = {
        "eval": eval_report(res, per_query=None),
        "sweep": sweep_report(
            sweep({"q1": {"a": 1}, "q2": {"y": 1}}, run, ["RR"], ["fp32", "bf16"])
        ),
        "compare": compare_report(systems()[1]),
        "rerank": rerank_report(rerank),
        "kit": render_report("t", []),
    }
    for what, page in pages.items():
        meta = re.search(r'<p class="meta">(.*?)</p>', page)
        assert meta, what
        assert meta.group(1).endswith(f"made by tierank {tierank.__version__}"), (
            what,
            meta.group(1),
        )
        assert f'<meta name="generator" content="tierank {tierank.__version__}">' in page, what
    assert re.search(
        r'<p class="meta">run \S+ · qrels \S+ · tie-break trec_eval · .*rel=1.* · made by tierank ',
        pages["eval"],
    )


@pytest.mark.parametrize(
    "test, header", [("wilcoxon", "W"), ("randomization", None), ("bootstrap", None)]
)
def test_compare_report_pairs_table_shows_the_chosen_tests_statistic(test, header):
    """The pairs table's statistic column is the chosen test's (W for Wilcoxon), under its own header; the
    sampled tests have none (their statistic is Δ expected), and no test but t shows a ``t`` column."""
    from tierank.analysis.compare import compare

    runs, _ = systems()
    cmp = compare(runs, QRELS, "nDCG@3", test=test, resamples=200, permutations=200)
    page = compare_report(cmp)
    pairs = page[page.index("<h2>Pairs</h2>") :]
    pairs = pairs[: pairs.index("</table>")]
    heads = re.findall(r"<th>([^<]*)</th>", pairs)
    assert "t" not in heads
    name = {
        "wilcoxon": "Wilcoxon signed-rank tests",
        "randomization": "randomization (sign-flip) tests",
        "bootstrap": "bootstrap tests",
    }[test]
    assert f"Two-sided paired {name} over queries" in pairs
    if header is None:
        assert heads[:6] == ["A", "B", "Δ expected", "Δ oblivious", "p", "p obl"]
    else:
        assert heads[:7] == ["A", "B", "Δ expected", "Δ oblivious", header, "p", "p obl"]
        for p in cmp.pairs:
            assert f'<td class="num">{p.statistic:.3f}</td>' in pairs
