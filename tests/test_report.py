"""Figures and HTML reports (tierank.report): the pictures must show the numbers."""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.analysis.compare import compare  # noqa: E402
from tierank.analysis.precision import requantize_run  # noqa: E402
from tierank.analysis.sweep import sweep  # noqa: E402
from tierank.report import (cutoff_curves, eval_report, compare_report, plot_cutoff, plot_ranges,  # noqa: E402
                            plot_sweep, plot_tie_structure, render_report, save_figure, sweep_report,
                            tie_group_sizes, write_report, Section, Table, FigureBlock)
from tierank.report import plots as plots_mod  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ASKUBUNTU = SHARED_DATA / "askubuntu"
needs_data = pytest.mark.skipif(not (ASKUBUNTU / "test.bm25.run").exists(), reason="shared data absent")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

QRELS = {"q1": {"a": 1, "b": 0, "c": 1, "d": 2}, "q2": {"x": 1, "y": 1}, "q3": {"m": 1}}
TIED = {"q1": {"a": 0.9, "b": 0.8, "c": 0.8, "d": 0.8, "e": 0.5},
        "q2": {"x": 0.3, "y": 0.7, "z": 0.7, "w": 0.7},
        "q3": {"m": 0.1, "n": 0.1, "o": 0.2}}
EXACT = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": 0.5},
         "q2": {"x": 0.3, "y": 0.7, "z": 0.6, "w": 0.5},
         "q3": {"m": 0.1, "n": 0.05, "o": 0.2}}
RUNS = {"exact": EXACT, "tied": TIED}


def by_gid(fig, gid):
    """The one artist of ``fig`` with this gid."""
    found = fig.findobj(lambda a: a.get_gid() == gid)
    assert len(found) == 1, (gid, found)
    return found[0]


def png_payloads(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def f4(x: float) -> str:
    """A number as the report tables write it: 4 decimals, no negative zero."""
    text = f"{x:.4f}"
    return "0.0000" if text == "-0.0000" else text


def assert_self_contained(page: str) -> None:
    assert not re.search(r"https?://", page), "the page names an external URL"
    for tag in ("<script", "<link", "@import", "<iframe"):
        assert tag not in page.lower()


# ---------------------------------------------------------------------------------------------------- imports

def test_import_tierank_does_not_import_matplotlib():
    code = "import sys, tierank, tierank.report; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------------- cutoff

def test_cutoff_curves_equal_evaluate_means_and_one_call_per_run(monkeypatch):
    calls = []
    real = plots_mod.evaluate

    def counting(*a, **kw):
        calls.append(a[2])
        return real(*a, **kw)

    monkeypatch.setattr(plots_mod, "evaluate", counting)
    curves = cutoff_curves(QRELS, RUNS, "nDCG", kmax=5)
    assert len(calls) == 2 and all(len(m) == 5 for m in calls)
    assert curves.ks.tolist() == [1, 2, 3, 4, 5]
    assert list(curves.series) == ["exact", "tied"]
    for name, run in RUNS.items():
        agg = tierank.evaluate(QRELS, run, [f"nDCG@{k}" for k in range(1, 6)]).aggregate()
        s = curves.series[name]
        for col in ("expected", "oblivious", "min", "max"):
            np.testing.assert_allclose(getattr(s, col), agg[col].to_numpy(), rtol=0, atol=1e-12)
    assert curves.series["exact"].ties["groups"] == 0
    assert curves.series["tied"].ties["groups"] == 3
    # the tied run really spreads: otherwise the figure tests below would test nothing
    assert (curves.series["tied"].max - curves.series["tied"].min).max() > 0.1
    recs = curves.records()
    assert len(recs) == 10 and recs[0]["measure"] == "nDCG@1" and recs[0]["run"] == "exact"


def test_plot_cutoff_draws_the_numbers():
    from matplotlib.colors import to_rgb

    curves = cutoff_curves(QRELS, RUNS, "nDCG", kmax=5)
    fig = plot_cutoff(curves)
    ks = curves.ks.astype(float)
    for name, s in curves.series.items():
        line = by_gid(fig, f"expected:{name}")
        np.testing.assert_array_equal(line.get_xdata(), ks)
        np.testing.assert_array_equal(line.get_ydata(), s.expected)
        assert line.get_linestyle() in ("-", "--", "-.", ":")
        obl = by_gid(fig, f"oblivious:{name}")
        assert obl.get_linestyle() == "None" and obl.get_marker() == "x"
        np.testing.assert_array_equal(obl.get_xdata(), ks)
        np.testing.assert_array_equal(obl.get_ydata(), s.oblivious)
        verts = np.vstack([p.vertices for p in by_gid(fig, f"band:{name}").get_paths()])
        for k, lo, hi in zip(ks, s.min, s.max):
            ys = verts[np.isclose(verts[:, 0], k), 1]
            assert ys.min() == pytest.approx(lo, abs=1e-12) and ys.max() == pytest.approx(hi, abs=1e-12)
        # the band colour is the line colour
        assert np.allclose(by_gid(fig, f"band:{name}").get_facecolor()[0][:3], to_rgb(line.get_color()))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "cutoff k" and "nDCG@k" in ax.get_ylabel() and ax.get_title()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    share = curves.series["tied"].ties["share"]
    assert f"tied  ({100 * share:.1f}% of docs tied)" in legend
    assert "exact  (0% of docs tied)" in legend


# ---------------------------------------------------------------------------------------------------- ranges

def _systems():
    runs = {"A": EXACT, "B": TIED, "<b>x</b>": {"q1": {"e": 1.0, "a": 1.0}, "q2": {"x": 2.0, "y": 1.0},
                                                  "q3": {"m": 1.0, "o": 1.0}}}
    return runs, compare(runs, QRELS, "nDCG@3")


def test_plot_ranges_segments_span_min_to_max_sorted_by_expected():
    _, cmp = _systems()
    fig = plot_ranges(cmp)
    ax = fig.axes[0]
    ordered = sorted(cmp.systems, key=lambda s: -s.expected)
    ys = []
    for s in ordered:
        seg = by_gid(fig, f"range:{s.name}")
        assert list(seg.get_xdata()) == [s.min, s.max]
        ys.append(seg.get_ydata()[0])
    assert ys == sorted(ys, reverse=True)  # best expected on top
    obl, exp_ = by_gid(fig, "oblivious"), by_gid(fig, "expected")
    assert obl.get_marker() == "o" and exp_.get_marker() == "^"
    np.testing.assert_array_equal(obl.get_xdata(), [s.oblivious for s in ordered])
    np.testing.assert_array_equal(exp_.get_xdata(), [s.expected for s in ordered])
    np.testing.assert_array_equal(obl.get_ydata(), ys)
    assert [t.get_text() for t in ax.get_yticklabels()] == [s.name for s in ordered]
    assert "nDCG@3" in ax.get_xlabel()


def test_plot_ranges_accepts_records_and_paper_layout():
    rows = [{"name": "s1", "min": 0.2, "max": 0.4, "oblivious": 0.35, "expected": 0.3},
            {"name": "$cost$ 5", "min": 0.5, "max": 0.5, "oblivious": 0.5, "expected": 0.5}]
    fig = plot_ranges(rows, "AP")
    assert list(by_gid(fig, "range:s1").get_xdata()) == [0.2, 0.4]
    fig.canvas.draw()  # a '$' in a name must not be parsed as mathtext
    fig = plot_ranges(rows, "AP", layout="range")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert by_gid(fig, "range:s1").get_ydata()[0] == pytest.approx(0.2)
    assert by_gid(fig, "range:$cost$ 5").get_ydata()[0] == pytest.approx(1e-6)  # floored


# ---------------------------------------------------------------------------------------------------- sweep

def test_plot_sweep_bars_equal_sweep_rows():
    run = {"q1": {"a": 0.30079, "b": 0.30078125, "c": 0.1}, "q2": {"x": 0.50001, "y": 0.5, "z": 0.2}}
    qrels = {"q1": {"a": 1}, "q2": {"x": 1}}
    fmts = ["fp32", "bf16", "fp8_e4m3", "int8"]
    sw = sweep(qrels, run, ["RR", "P@1"], fmts)
    fig = plot_sweep(sw, "RR")
    rows = [r for r in sw.rows if r["measure"] == "RR"]
    assert any(r["range"] > 0 for r in rows) and any(r["bias"] != 0 for r in rows)
    for r in rows:
        f = r["format"]
        assert by_gid(fig, f"range:{f}").get_height() == pytest.approx(r["range"])
        assert by_gid(fig, f"bias:{f}").get_height() == pytest.approx(r["bias"])
        assert by_gid(fig, f"tie_share:{f}").get_height() == pytest.approx(100 * r["tie_share"])
        seg = by_gid(fig, f"minmax:{f}")
        assert list(seg.get_ydata()) == [r["min"], r["max"]]
    np.testing.assert_array_equal(by_gid(fig, "expected").get_ydata(), [r["expected"] for r in rows])
    np.testing.assert_array_equal(by_gid(fig, "oblivious").get_ydata(), [r["oblivious"] for r in rows])
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == fmts
    assert fig.axes[-1].get_ylabel() == "docs in ties (%)"
    assert by_gid(plot_sweep(sw, "P@1"), "range:bf16").get_height() == pytest.approx(
        next(r["range"] for r in sw.rows if r["measure"] == "P@1" and r["format"] == "bf16"))
    with pytest.raises(tierank.TierankInputError, match="not in the sweep"):
        plot_sweep(sw, "AP")


# ---------------------------------------------------------------------------------------------------- ties

def _independent_sizes(run: dict) -> list[int]:
    out = []
    for docs in run.values():
        out += [n for n in Counter(docs.values()).values() if n > 1]
    return sorted(out)


def test_tie_group_sizes_and_structure_plot():
    assert sorted(tie_group_sizes(TIED).tolist()) == _independent_sizes(TIED) == [2, 3, 3]
    assert tie_group_sizes(EXACT).tolist() == []
    # unsorted input and repeated scores across queries
    messy = {"q2": {"a": 1.0, "b": 2.0, "c": 1.0}, "q1": {"a": 1.0, "d": 1.0, "e": 1.0, "f": 0.0}}
    assert sorted(tie_group_sizes(messy).tolist()) == [2, 3]
    fig = plot_tie_structure({"exact": EXACT, "tied": TIED, "messy": messy})
    for name, run in (("tied", TIED), ("messy", messy)):
        sizes = _independent_sizes(run)
        xs = sorted(set(sizes))
        line = by_gid(fig, f"ties:{name}")
        assert line.get_xdata().tolist() == xs
        assert line.get_ydata().tolist() == [sum(s >= x for s in sizes) for x in xs]
    assert len(by_gid(fig, "ties:exact").get_xdata()) == 0
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[0] == "exact: no ties"
    assert legend[1] == "tied: 66.7% of docs tied, 3 groups, largest 3"  # 8 of 12 documents
    assert fig.axes[0].get_yscale() == "log"


# ---------------------------------------------------------------------------------------------------- saving

def test_save_figure_writes_both_files_atomically(tmp_path, monkeypatch):
    fig = plot_ranges([{"name": "s", "min": 0.1, "max": 0.3, "oblivious": 0.2, "expected": 0.25}], "AP")
    replaced = []
    real_replace = os.replace

    def spy(src, dst):
        replaced.append((Path(src), Path(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    stem = tmp_path / "sub" / "fig"
    paths = save_figure(fig, stem)
    assert paths == [tmp_path / "sub" / "fig.png", tmp_path / "sub" / "fig.svg"]
    assert paths[0].read_bytes().startswith(PNG_SIGNATURE)
    svg = paths[1].read_text()
    assert "<svg" in svg and "range:s" in svg  # gids become SVG ids
    assert [d for _, d in replaced] == paths
    assert all(s.parent == d.parent and s != d for s, d in replaced)  # temp file in the same folder
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["fig.png", "fig.svg"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert all(p.stat().st_mode & 0o777 == 0o666 & ~umask for p in paths)  # not the temp file's 0o600

    # a failed write leaves the old file alone and no temporary behind
    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    before = paths[0].read_bytes()
    with pytest.raises(OSError):
        save_figure(fig, stem, formats=("png",))
    assert paths[0].read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["fig.png", "fig.svg"]


# ---------------------------------------------------------------------------------------------------- HTML

def test_render_report_tables_escaping_and_embedding():
    from tierank.report.plots import figure_bytes

    fig = plot_ranges([{"name": "s", "min": 0.1, "max": 0.3, "oblivious": 0.2, "expected": 0.25}], "AP")
    page = render_report("T <&>", [Section(
        "S & <i>", paragraphs=["a < b"],
        tables=[Table([{"n": "<b>x</b>", "v": 1 / 3, "w": None, "z": float("nan")}], columns=["v", "n", "w", "z"]),
                Table([{"i": i} for i in range(10)], max_rows=3)],
        figures=[FigureBlock(fig, caption="cap <1>"), FigureBlock(figure_bytes(fig, "svg").decode(), "svg one")])])
    assert "<title>T &lt;&amp;&gt;</title>" in page and "S &amp; &lt;i&gt;" in page and "a &lt; b" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert re.search(r"<th>v</th><th>n</th><th>w</th><th>z</th>", page)
    assert '<td class="num">0.3333</td><td>&lt;b&gt;x&lt;/b&gt;</td><td class="num">-</td><td class="num">-</td>' \
        in page
    assert "showing 3 of 10 rows" in page and '<td class="num">2</td>' in page and '<td class="num">3</td>' not in page
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
    first_row = page.split("<h2>Most tie-affected queries</h2>")[1].split("<tbody>")[1].split("</tr>")[0]
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
    run = {"q1": {"a": 0.30079, "b": 0.30078125, "c": 0.1}, "q2": {"x": 0.50001, "y": 0.5, "z": 0.2}}
    sw = sweep({"q1": {"a": 1}, "q2": {"y": 1}}, run, ["RR"], ["fp32", "bf16"])
    page = sweep_report(sw)
    for r in sw.rows:
        assert f'<td class="num">{f4(r["range"])}</td>' in page and f'<td class="num">{f4(r["bias"])}</td>' in page
        assert f'<td class="num">{100 * r["tie_share"]:.2f}%</td>' in page
    assert any(r["tie_share"] > 0 for r in sw.rows) and len(png_payloads(page)) == 1
    assert_self_contained(page)

    _, cmp = _systems()
    page = compare_report(cmp)
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    for s in cmp.systems:
        assert f'<td class="num">{f4(s.expected)}</td>' in page
    assert "undecidable" in page and '<tr class="flag">' in page
    (png,) = png_payloads(page)
    assert png.startswith(PNG_SIGNATURE)
    assert_self_contained(page)

    out = write_report(tmp_path / "r.html", page)
    assert out.read_text(encoding="utf-8") == page and [p.name for p in tmp_path.iterdir()] == ["r.html"]
    with pytest.raises(tierank.TierankInputError, match="refusing to overwrite"):
        write_report(out, "<p>x</p>", protect=(out,))
    assert out.read_text(encoding="utf-8") == page


def test_svg_embedding_has_no_urls():
    _, cmp = _systems()
    page = render_report("svg", [Section("ranges", figures=[FigureBlock(plot_ranges(cmp), format="svg")])])
    assert "<svg" in page and "data:image/png" not in page
    assert_self_contained(page)


# ---------------------------------------------------------------------------------------------------- real data

@needs_data
def test_askubuntu_regimes_tie_structure_matches_engine():
    run = tierank.read_run(ASKUBUNTU / "test.bm25.run")
    qrels = ASKUBUNTU / "test.qrels"
    regimes = {f: requantize_run(run, f) for f in ("fp32", "bf16", "fp8_e4m3")}
    curves = cutoff_curves(qrels, regimes, "nDCG", kmax=10)
    shares = []
    for f, r in regimes.items():
        sizes = tie_group_sizes(r)
        t = curves.series[f].ties
        assert (len(sizes), int(sizes.sum()), int(sizes.max(initial=0))) == (t["groups"], t["tied_docs"], t["largest"])
        shares.append(t["share"])
        s = curves.series[f]
        assert np.all(s.min <= s.expected + 1e-12) and np.all(s.expected <= s.max + 1e-12)
    assert shares[0] < shares[1] < shares[2]  # coarser formats, more ties
    width = {f: float(np.mean(s.max - s.min)) for f, s in curves.series.items()}
    assert width["fp32"] < width["bf16"] < width["fp8_e4m3"]


def test_plot_and_report_commands(tmp_path):
    pytest.importorskip("matplotlib")
    import tierank

    ex = Path(tierank.__file__).parent / "examples"
    qrels, run = ex / "figure1.qrels", ex / "figure1.run"
    out = run_cli("plot", "cutoff", qrels, run, "-m", "R", "--kmax", "5", "--regimes", "fp32,band2", "-o",
               tmp_path / "cut").stdout.split()
    assert out == [str(tmp_path / "cut.png"), str(tmp_path / "cut.svg")]
    assert (tmp_path / "cut.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    run_cli("plot", "ties", run, "-o", tmp_path / "ties")
    run_cli("plot", "sweep", run, qrels, "-m", "R@3", "--formats", "fp32,bf16", "-o", tmp_path / "sweep")
    run_cli("plot", "ranges", run, "--regimes", "fp32,band2", "--qrels", qrels, "-m", "R@3", "-o", tmp_path / "rng")
    page = tmp_path / "r.html"
    run_cli("report", "eval", qrels, run, "-m", "R@3", "--kmax", "4", "-o", page)
    text = page.read_text()
    assert "0.7778" in text and "data:image/png;base64," in text and "http://" not in text
    run_cli("report", "sweep", run, qrels, "-m", "R@3", "--formats", "fp32,bf16", "-o", tmp_path / "s.html")
    run_cli("report", "compare", run, "--regimes", "fp32,band2", "--qrels", qrels, "-m", "R@3", "-o", tmp_path / "c.html")
    bad = run_cli("report", "eval", qrels, run, "-o", run, check=False)
    assert bad.returncode == 2 and "refusing to overwrite an input" in bad.stderr
    assert run_cli("plot", "cutoff", qrels, run, "--kmax", "0", "-o", tmp_path / "x", check=False).returncode == 2
