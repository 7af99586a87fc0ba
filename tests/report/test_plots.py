"""Figures (tierank.report.plots): the pictures must show the numbers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.analysis.compare import compare  # noqa: E402
from tierank.analysis.precision import requantize_run  # noqa: E402
from tierank.analysis.sweep import sweep  # noqa: E402
from tierank.report import (  # noqa: E402
    cutoff_curves,
    plot_cutoff,
    plot_ranges,
    plot_sweep,
    plot_tie_structure,
    save_figure,
    tie_group_sizes,
)

from .common import EXACT, PNG_SIGNATURE, QRELS, RUNS, TIED, by_gid, systems  # noqa: E402

# ---------------------------------------------------------------------------------------------------- imports


def test_import_tierank_does_not_import_matplotlib():
    code = "import sys, tierank, tierank.report; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_matplotlib_is_one_tierank_error_naming_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(tierank.TierankError) as e:
        plot_ranges(
            [{"name": "s", "min": 0.1, "max": 0.3, "oblivious": 0.2, "expected": 0.25}], "AP"
        )
    assert isinstance(e.value, ImportError)
    assert (
        str(e.value)
        == 'tierank figures need matplotlib, which is not installed: pip install "tierank[report]"'
    )


# ---------------------------------------------------------------------------------------------------- cutoff


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
            assert ys.min() == pytest.approx(lo, abs=1e-12) and ys.max() == pytest.approx(
                hi, abs=1e-12
            )
        # the band colour is the line colour
        assert np.allclose(
            by_gid(fig, f"band:{name}").get_facecolor()[0][:3], to_rgb(line.get_color())
        )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "cutoff k" and "nDCG@k" in ax.get_ylabel() and ax.get_title()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    share = curves.series["tied"].ties["share"]
    assert f"tied  ({100 * share:.1f}% of docs tied)" in legend
    assert "exact  (0% of docs tied)" in legend


# ---------------------------------------------------------------------------------------------------- ranges


def test_plot_ranges_segments_span_min_to_max_sorted_by_expected():
    _, cmp = systems()
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
    rows = [
        {"name": "s1", "min": 0.2, "max": 0.4, "oblivious": 0.35, "expected": 0.3},
        {"name": "$cost$ 5", "min": 0.5, "max": 0.5, "oblivious": 0.5, "expected": 0.5},
    ]
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
    run = {
        "q1": {"a": 0.30079, "b": 0.30078125, "c": 0.1},
        "q2": {"x": 0.50001, "y": 0.5, "z": 0.2},
    }
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
    np.testing.assert_array_equal(
        by_gid(fig, "expected").get_ydata(), [r["expected"] for r in rows]
    )
    np.testing.assert_array_equal(
        by_gid(fig, "oblivious").get_ydata(), [r["oblivious"] for r in rows]
    )
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == fmts
    assert fig.axes[-1].get_ylabel() == "docs in ties (%)"
    assert by_gid(plot_sweep(sw, "P@1"), "range:bf16").get_height() == pytest.approx(
        next(r["range"] for r in sw.rows if r["measure"] == "P@1" and r["format"] == "bf16")
    )
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
    (legend,) = fig.legends  # under the axes
    legend = [t.get_text() for t in legend.get_texts()]
    assert "exact: no ties" in legend
    assert "tied: 66.7% of docs tied, 3 groups, largest 3" in legend  # 8 of 12 documents
    assert fig.axes[0].get_yscale() == "log"


# ---------------------------------------------------------------------------------------------------- saving


def test_save_figure_writes_both_files_atomically(tmp_path, monkeypatch):
    fig = plot_ranges(
        [{"name": "s", "min": 0.1, "max": 0.3, "oblivious": 0.2, "expected": 0.25}], "AP"
    )
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
    assert all(
        p.stat().st_mode & 0o777 == 0o666 & ~umask for p in paths
    )  # not the temp file's 0o600

    # a failed write leaves the old file alone and no temporary behind
    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    before = paths[0].read_bytes()
    with pytest.raises(
        tierank.TierankInputError, match="cannot write: disk full; the existing file is unchanged"
    ):
        save_figure(fig, stem, formats=("png",))
    assert paths[0].read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["fig.png", "fig.svg"]


# ---------------------------------------------------------------------------------------------------- real data


def test_askubuntu_regimes_tie_structure_matches_engine(real_data):
    run = tierank.read_run(real_data / "askubuntu" / "test.bm25.run")
    qrels = real_data / "askubuntu" / "test.qrels"
    regimes = {f: requantize_run(run, f) for f in ("fp32", "bf16", "fp8_e4m3")}
    curves = cutoff_curves(qrels, regimes, "nDCG", kmax=10)
    shares = []
    for f, r in regimes.items():
        sizes = tie_group_sizes(r)
        t = curves.series[f].ties
        assert (len(sizes), int(sizes.sum()), int(sizes.max(initial=0))) == (
            t["groups"],
            t["tied_docs"],
            t["largest"],
        )
        shares.append(t["share"])
        s = curves.series[f]
        assert np.all(s.min <= s.expected + 1e-12) and np.all(s.expected <= s.max + 1e-12)
    assert shares[0] < shares[1] < shares[2]  # coarser formats, more ties
    width = {f: float(np.mean(s.max - s.min)) for f, s in curves.series.items()}
    assert width["fp32"] < width["bf16"] < width["fp8_e4m3"]


def test_forest_plot_draws_each_systems_ci_beside_its_tie_range_sorted_by_expected():
    from tierank.report.plots import plot_forest

    runs, _ = systems()
    # 3 queries: intervals exist up to level 0.75 (exact sign flips on 3 values reach p = 0.25)
    cmp = compare(runs, QRELS, "nDCG@3", level=0.5)
    assert all(s.ci_low < s.ci_high for s in cmp.systems)
    fig = plot_forest(cmp)
    ax = fig.axes[0]
    ys = {}
    for s in cmp.systems:
        ci, tie = by_gid(fig, f"ci:{s.name}"), by_gid(fig, f"ties:{s.name}")
        assert list(ci.get_xdata()) == pytest.approx([s.ci_low, s.ci_high])
        assert list(tie.get_xdata()) == pytest.approx([s.min, s.max])
        assert ci.get_ydata()[0] > tie.get_ydata()[0]  # the tie range just under its CI
        ys[s.name] = ci.get_ydata()[0]
    by_e = sorted(cmp.systems, key=lambda s: -s.expected)
    assert [ys[s.name] for s in by_e] == sorted(ys.values(), reverse=True)  # best on top
    assert "50% CI of the mean expected value over queries (t)" in [
        t.get_text() for t in fig.legends[0].get_texts()
    ]
    assert cmp.measure in ax.get_title()
    with pytest.raises(tierank.TierankInputError, match="ci_low"):
        plot_forest([{"name": "s", "expected": 0.5, "min": 0.4, "max": 0.6}])
