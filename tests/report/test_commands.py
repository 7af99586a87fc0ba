"""`tierank plot ...` and `tierank report ...`: what they write is the library's figure or page of the same data."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from helpers import invoke

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.analysis.compare import compare  # noqa: E402
from tierank.analysis.cutoff import cutoff_curves, evaluate_with_curves  # noqa: E402
from tierank.analysis.precision import requantize_run  # noqa: E402
from tierank.analysis.sweep import sweep  # noqa: E402
from tierank.report.html import compare_report, eval_report, sweep_report  # noqa: E402
from tierank.report.plots import (  # noqa: E402
    figure_bytes,
    plot_cutoff,
    plot_ranges,
    plot_sweep,
    plot_tie_structure,
)

from .common import PNG_SIGNATURE, assert_self_contained, f4, png_payloads  # noqa: E402

EXAMPLES = Path(tierank.__file__).parent / "examples"
QRELS, RUN = EXAMPLES / "figure1.qrels", EXAMPLES / "figure1.run"


def regimes(*fmts):
    run = tierank.read_run(RUN)
    return {f: requantize_run(run, f) for f in fmts}


def assert_figure_files(stem: Path, fig, printed: str) -> None:
    """STEM.png and STEM.svg were written, printed, and are the library's figure (byte for byte)."""
    png, svg = stem.with_name(stem.name + ".png"), stem.with_name(stem.name + ".svg")
    assert printed.split() == [str(png), str(svg)]
    assert png.read_bytes().startswith(PNG_SIGNATURE) and png.stat().st_size > 10_000
    from PIL import Image

    with Image.open(png) as im:
        assert im.size[0] > 500 and im.size[1] > 300
    want_png = figure_bytes(
        fig, "png"
    )  # in the command's order: constrained layout settles on the first draw
    assert png.read_bytes() == want_png
    assert clip_ids_numbered(svg.read_text()) == clip_ids_numbered(
        figure_bytes(fig, "svg").decode()
    )


def clip_ids_numbered(svg: str) -> str:
    """The SVG with its clip-path ids numbered in order of appearance (matplotlib hashes them from
    process state, so one figure drawn after others in this process gets other ids)."""
    ids: dict = {}
    return re.sub(
        r"\bp[0-9a-f]{10}\b", lambda m: f"clip{ids.setdefault(m.group(0), len(ids))}", svg
    )


def test_plot_cutoff_writes_the_curves(tmp_path):
    out = invoke(
        "plot",
        "cutoff",
        QRELS,
        RUN,
        "-m",
        "R",
        "--kmax",
        "5",
        "--regimes",
        "fp32,band2",
        "-o",
        tmp_path / "cut",
    ).stdout
    curves = cutoff_curves(str(QRELS), regimes("fp32", "band2"), "R", 5)
    assert_figure_files(tmp_path / "cut", plot_cutoff(curves), out)
    svg = (tmp_path / "cut.svg").read_text()
    for name in ("fp32", "band2"):
        assert (
            f'id="expected:{name}"' in svg
            and f'id="band:{name}"' in svg
            and f'id="oblivious:{name}"' in svg
        )


def test_plot_ties_sweep_and_ranges_write_their_figures(tmp_path):
    out = invoke("plot", "ties", RUN, "-o", tmp_path / "ties").stdout
    fig = plot_tie_structure({"figure1.run": tierank.read_run(RUN, duplicates="keep")})
    assert_figure_files(tmp_path / "ties", fig, out)
    assert 'id="ties:figure1.run"' in (tmp_path / "ties.svg").read_text()

    out = invoke(
        "plot", "sweep", QRELS, RUN, "-m", "R@3", "--formats", "fp32,bf16", "-o", tmp_path / "sweep"
    ).stdout
    assert_figure_files(
        tmp_path / "sweep",
        plot_sweep(sweep(str(QRELS), str(RUN), ["R@3"], ["fp32", "bf16"]), "R@3"),
        out,
    )

    out = invoke(
        "plot",
        "ranges",
        RUN,
        "--regimes",
        "fp32,band2",
        "--qrels",
        QRELS,
        "-m",
        "R@3",
        "-o",
        tmp_path / "rng",
    ).stdout
    assert_figure_files(
        tmp_path / "rng", plot_ranges(compare(regimes("fp32", "band2"), str(QRELS), "R@3")), out
    )


def test_report_eval_writes_the_evaluation(tmp_path):
    page_path = tmp_path / "r.html"
    out = invoke("report", "eval", QRELS, RUN, "-m", "R@3", "--kmax", "4", "-o", page_path).stdout
    assert out.split() == [str(page_path)]
    page = page_path.read_text(encoding="utf-8")
    res, curves = evaluate_with_curves(str(QRELS), str(RUN), ["R@3"], "nDCG", 4, name="figure1.run")
    assert page == eval_report(res, curves)
    # the paper's Figure 1 numbers: R@3 expected 0.7778 over [0.6667, 1.0], oblivious 1.0
    agg = (
        '<td>R@3</td><td class="num">1.0000</td><td class="num">0.7778</td><td class="num">0.6667</td>'
        '<td class="num">1.0000</td><td class="num">0.3333</td><td class="num">0.2222</td>'
    )
    assert agg in page
    for heading in ("Aggregate", "Ties", "nDCG@k for k = 1..4", "Most tie-affected queries"):
        assert f"<h2>{heading}</h2>" in page
    assert "3 of 5 documents (60.00%) share their score" in page
    for rec in curves.records():
        assert (
            f'<td>figure1.run</td><td class="num">{rec["k"]}</td><td class="num">{f4(rec["oblivious"])}</td>'
            f'<td class="num">{f4(rec["expected"])}</td>' in page
        )
    pngs = png_payloads(page)
    assert len(pngs) == 2 and all(p.startswith(PNG_SIGNATURE) and len(p) > 10_000 for p in pngs)
    from PIL import Image

    for p in pngs:
        with Image.open(io.BytesIO(p)) as im:
            im.verify()
    assert_self_contained(page)


def test_report_sweep_and_compare_write_their_pages(tmp_path):
    invoke(
        "report",
        "sweep",
        QRELS,
        RUN,
        "-m",
        "R@3",
        "--formats",
        "fp32,bf16",
        "-o",
        tmp_path / "s.html",
    )
    page = (tmp_path / "s.html").read_text(encoding="utf-8")
    sw = sweep(str(QRELS), str(RUN), ["R@3"], ["fp32", "bf16"])
    assert page == sweep_report(sw, ["R@3"])
    assert "<h2>Ties per format</h2>" in page and "<h2>R@3</h2>" in page
    for r in sw.rows:
        assert (
            f'<td>{r["format"]}</td><td class="num">{f4(r["oblivious"])}</td><td class="num">'
            f"{f4(r['expected'])}</td>"
        ) in page
    assert len(png_payloads(page)) == 1

    invoke(
        "report",
        "compare",
        RUN,
        "--regimes",
        "fp32,band2",
        "--qrels",
        QRELS,
        "-m",
        "R@3",
        "-o",
        tmp_path / "c.html",
    )
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    cmp = compare(regimes("fp32", "band2"), str(QRELS), "R@3")
    assert page == compare_report(cmp)
    assert "<h2>Systems</h2>" in page and "<h2>Pairs</h2>" in page
    for s in cmp.systems:
        assert (
            f'<td>{s.name}</td><td class="num">{f4(s.oblivious)}</td><td class="num">{f4(s.expected)}</td>'
            in page
        )
    assert (
        len(png_payloads(page)) == 2 and assert_self_contained(page) is None
    )  # ranges figure, forest plot


def test_refusals_write_nothing(tmp_path):
    before = RUN.read_bytes()
    bad = invoke("report", "eval", QRELS, RUN, "-o", RUN, check=False)
    assert (
        bad.returncode == 2
        and "refusing to overwrite an input" in bad.stderr
        and "Traceback" not in bad.stderr
    )
    assert RUN.read_bytes() == before
    bad = invoke("plot", "cutoff", QRELS, RUN, "--kmax", "0", "-o", tmp_path / "x", check=False)
    assert bad.returncode == 2 and "kmax" in bad.stderr and "Traceback" not in bad.stderr
    assert list(tmp_path.iterdir()) == []
