"""Regenerate the README figures from the real AskUbuntu example shipped in the package.

    python docs/figures/make_figures.py            # docs/figures/askubuntu-ndcg-cutoff.png
    python docs/figures/make_figures.py --extra DIR  # also ranges, sweep and tie-structure figures in DIR
    python docs/figures/make_figures.py --layout after  # cutoff-one-run-after.png, cutoff-three-runs-after.png

Data: the AskUbuntu BM25 run and qrels (Lei et al., NAACL 2016) shipped as ``tierank example askubuntu-run``
and ``askubuntu-qrels`` (the same bytes as ../shared/data/askubuntu/test.*, gzip-compressed; ``--data DIR``
reads DIR/test.bm25.run and DIR/test.qrels instead),
the run's scores re-expressed in fp32, bf16 and fp8 (e4m3) with tierank's requantize_run.

``--layout SUFFIX`` draws the cutoff figure as users name their runs (issue 27): one run,
``askubuntu-test.bm25.bf16.run``, and three, ``askubuntu-test.bm25.band{1.4,2.0,4.0}.run`` (the run in
rank bands, tierank.analysis.banding.band_run), at 80 dpi, as ``cutoff-one-run-SUFFIX.png`` and
``cutoff-three-runs-SUFFIX.png``.  The ``-before`` images were drawn by this option with the figure code
of tierank before the layout of issue 27 (commit 5c8f4e4); the ``-after`` ones with the code since.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import tierank
from tierank.analysis.precision import requantize_run
from tierank.examples import path as example
from tierank.report import cutoff_curves, plot_cutoff, save_figure

HERE = Path(__file__).resolve().parent
REGIMES = ("fp32", "bf16", "fp8_e4m3")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="folder with test.bm25.run and test.qrels (default: the shipped example)")
    ap.add_argument("--out", type=Path, default=HERE, help="folder of the README figure")
    ap.add_argument("--extra", type=Path, help="also write ranges, sweep and tie-structure figures here")
    ap.add_argument("--layout", metavar="SUFFIX", help="only the one- and three-run cutoff figures, named *-SUFFIX.png")
    args = ap.parse_args(argv)
    if args.data is None:
        run_path, qrels_path = example("askubuntu-run"), example("askubuntu-qrels")
    else:
        run_path, qrels_path = args.data / "test.bm25.run", args.data / "test.qrels"
    if not run_path.exists():
        print(f"missing {run_path}", file=sys.stderr)
        return 1
    run = tierank.read_run(run_path)
    if args.layout:
        for p in layout_examples(run, qrels_path, args.out, args.layout):
            print(p)
        return 0
    regimes = {f: requantize_run(run, f) for f in REGIMES}
    curves = cutoff_curves(qrels_path, regimes, "nDCG", kmax=20)
    nq = curves.series["fp32"].ties["queries"]
    fig = plot_cutoff(curves, title=f"AskUbuntu BM25, {nq} queries: nDCG@k with scores in fp32, bf16, fp8")
    for p in save_figure(fig, args.out / "askubuntu-ndcg-cutoff", formats=("png",)):
        print(p)
    for f, s in curves.series.items():
        i = 9  # k = 10
        print(f"{f:9s} share tied {s.ties['share']:.3f}  nDCG@10 oblivious {s.oblivious[i]:.4f} "
              f"expected {s.expected[i]:.4f} [{s.min[i]:.4f}, {s.max[i]:.4f}]")
    if args.extra:
        from tierank.analysis.compare import compare
        from tierank.analysis.sweep import sweep
        from tierank.report import plot_ranges, plot_sweep, plot_tie_structure

        cmp = compare(regimes, qrels_path, "nDCG@10")
        out = [*save_figure(plot_ranges(cmp, title="AskUbuntu BM25: nDCG@10 per score format"),
                            args.extra / "askubuntu-ranges", formats=("png",)),
               *save_figure(plot_tie_structure(regimes, title="AskUbuntu BM25: tie groups per score format"),
                            args.extra / "askubuntu-ties", formats=("png",)),
               *save_figure(plot_sweep(sweep(qrels_path, run, ["nDCG@10"]), "nDCG@10",
                                       title="AskUbuntu BM25: nDCG@10 across score formats"),
                            args.extra / "askubuntu-sweep", formats=("png",))]
        for p in out:
            print(p)
    return 0


def layout_examples(run, qrels_path, out: Path, suffix: str) -> list[Path]:
    """The cutoff figure with one and with three runs named as users name them, at 80 dpi."""
    from tierank.analysis.banding import band_run

    one = {"askubuntu-test.bm25.bf16.run": requantize_run(run, "bf16")}
    three = {f"askubuntu-test.bm25.band{rho}.run": band_run(run, float(rho)) for rho in ("1.4", "2.0", "4.0")}
    paths = []
    for stem, runs in (("cutoff-one-run", one), ("cutoff-three-runs", three)):
        fig = plot_cutoff(cutoff_curves(qrels_path, runs, "nDCG", kmax=20))
        paths += save_figure(fig, out / f"{stem}-{suffix}", formats=("png",), dpi=80)
    return paths


if __name__ == "__main__":
    sys.exit(main())
