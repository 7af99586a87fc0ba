"""Every report kind, built by `tierank report ...` from the shipped examples, checked in Chromium at a
desktop and a phone width (:mod:`tests.browser.checks`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli

pytest.importorskip("matplotlib")

import tierank  # noqa: E402
from tierank.report import FigureBlock, Section, plot_ranges, render_report, write_report  # noqa: E402

from .checks import VIEWPORTS, check_page  # noqa: E402

EXAMPLES = Path(tierank.__file__).parent / "examples"
AU_QRELS, AU_RUN = EXAMPLES / "askubuntu-test.qrels.gz", EXAMPLES / "askubuntu-test.bm25.run.gz"
F_QRELS, F_RUN = EXAMPLES / "figure1.qrels", EXAMPLES / "figure1.run"
#: a name as long as real systems' (80 characters, alike at both ends)
LONG = "askubuntu-test.bm25-rm3-reranked-by-minilm-l6-variant{}-xxxxxxxxxxxxx-bf16.final.run"


def _rerank_table() -> dict:
    rows = []
    for i, variant in enumerate(("fp32", "bf16", "fp8_e4m3", LONG.format("07"))):
        lo = 0.40 + 0.01 * i
        rows.append(
            {
                "variant": variant,
                "measure": "RR@10",
                "fp32": 0.45,
                "oblivious": lo + 0.03,
                "expected": lo + 0.02,
                "min": lo,
                "max": lo + 0.05 * i,
                "range": 0.05 * i,
                "bias": 0.01,
                "tied_share": 0.1 * i,
                "tie_groups": 12 * i,
                "max_group": 3 + i,
                "model_s": 1.5,
                "scoring_ms": 0.25,
                "hps_overhead": 0.01,
            }
        )
    return {
        "settings": {
            "model": "cross-encoder/ms-marco-MiniLM-L6-v2",
            "family": "cross-encoder",
            "queries": 50,
            "candidates": 100,
            "batch_size": 32,
            "device": "cpu",
            "tie_break": "trec_eval",
            "data": "askubuntu-test",
            "candidates_file": "bm25.run",
        },
        "rows": rows,
    }


BUILDS = {
    "eval": lambda d: ("eval", AU_QRELS, AU_RUN),
    "sweep": lambda d: ("sweep", AU_QRELS, AU_RUN),
    "compare": lambda d: (
        "compare",
        AU_RUN,
        "--qrels",
        AU_QRELS,
        "--regimes",
        "fp32,bf16,fp8_e4m3",
    ),
    "compare-long-names": lambda d: ("compare", F_QRELS, *_long_runs(d)),
    "rerank": lambda d: ("rerank", _write(d / "table.json", json.dumps(_rerank_table()))),
    # a run named without a hyphen or a space, in a deep folder: the page's settings line names it
    "eval-long-name": lambda d: (
        "eval",
        F_QRELS,
        _write(_deep(d) / (LONG.format("01").replace("-", "_")), F_RUN.read_text()),
        "--kmax",
        "5",
    ),
}
#: pages of the page kit the commands do not make (yet): a figure embedded as inline SVG
KIT_PAGES = {
    "kit-svg-figure": lambda: render_report(
        "inline SVG",
        [
            Section(
                "Ranges",
                figures=[
                    FigureBlock(
                        plot_ranges(
                            [
                                {
                                    "name": "s",
                                    "min": 0.1,
                                    "max": 0.3,
                                    "oblivious": 0.2,
                                    "expected": 0.25,
                                }
                            ],
                            "AP",
                        ),
                        caption="one system's range",
                        format="svg",
                    )
                ],
            )
        ],
    )
}


def _deep(folder: Path) -> Path:
    deep = folder / "experiments" / "2026_11_askubuntu_precision_study" / "outputs_of_every_regime"
    deep.mkdir(parents=True, exist_ok=True)
    return deep


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _long_runs(folder: Path) -> list[Path]:
    """Three runs with 80-character names (figure1's run, its scores rounded differently)."""
    lines = F_RUN.read_text().splitlines()
    out = []
    for i, digits in enumerate((3, 1, 0)):
        text = "\n".join(
            " ".join([*p[:4], f"{round(float(p[4]), digits)}", *p[5:]])
            for p in (ln.split() for ln in lines if ln.strip())
        )
        out.append(_write(folder / LONG.format(f"{i:02d}"), text + "\n"))
    return out


@pytest.fixture(scope="module")
def reports(served):
    """``{kind: url}``: every report kind written by the command line into the served folder."""
    root, base = served
    folder = root / "reports"
    folder.mkdir()
    urls = {}
    for kind, build in BUILDS.items():
        args = build(folder)
        run_cli("report", *args, "-o", folder / f"{kind}.html")
        urls[kind] = f"{base}/reports/{kind}.html"
    for kind, build in KIT_PAGES.items():
        write_report(folder / f"{kind}.html", build())
        urls[kind] = f"{base}/reports/{kind}.html"
    return urls


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("kind", [*BUILDS, *KIT_PAGES])
def test_report_in_the_browser(browser, served, reports, kind, viewport):
    root, base = served
    # a report's tables have as many columns as the data (rerank's has 14): they scroll in their box
    problems = check_page(browser, reports[kind], root, base, viewport, tables_fit=False)
    assert not problems, f"report {kind} at {viewport} width:\n" + "\n".join(problems)
