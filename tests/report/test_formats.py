"""The one door for outputs (tierank.report.formats): the registry, byte-identity of the column-wise
writers with a record-by-record reference, and the Markdown and LaTeX tables."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import tierank
from tierank.cli import app
from tierank.report import formats
from tierank.report.formats import ResultTable, render, render_records
from tierank.report.formats.latex import escape as latex_escape

QRELS = {"q,1": {"a": 1, "b": 2}, 'q"2': {"c": 1}, "q{3}": {"a": 1}, "é4": {"z": 1}}
RUN = {
    "q,1": {"a": 0.5, "b": 0.5, "c": 0.1},
    'q"2': {"c": 1.0, "d": 1.0},
    "q{3}": {"b": 1.0},
    "é4": {"y": 2.0},
}
MEASURES = ["P@1", "nDCG@2", "RR", "AP", "num_rel"]


def cli(*args) -> str:
    r = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.fixture(scope="module")
def results():
    one = tierank.evaluate(QRELS, RUN, MEASURES)
    other = tierank.evaluate(
        QRELS, {q: {d: round(s) for d, s in docs.items()} for q, docs in RUN.items()}, MEASURES
    )
    bounds = tierank.evaluate(QRELS, RUN, ["RBP(p=0.5)", "P@2"], unjudged="bounds")
    return one, other, bounds


# -- the reference: what the record-by-record writers wrote -------------------------------------------


def _num(x):
    return "" if x is None else repr(float(x))


def reference(table: ResultTable, fmt: str, per_query: bool) -> str:
    recs = table.records(per_query=True if fmt == "jsonl" else per_query)
    if fmt == "jsonl":
        return "".join(json.dumps(r, allow_nan=False) + "\n" for r in recs)
    if fmt in ("tsv", "csv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow((*table.fields(), "method", "se"))
        w.writerows(
            [
                *(r[k] for k in table.keys),
                r["query"],
                r["measure"],
                *(_num(r[c]) for c in table.columns),
                r["method"],
                _num(r.get("se")),
            ]
            for r in recs
        )
        return buf.getvalue()
    docs = []
    for g in table.groups:
        rs = g.result.records(per_query=per_query)
        doc = {
            "settings": g.result.settings,
            "ties": dict(g.result.ties),
            "aggregate": [r for r in rs if r["query"] == "all"],
        }
        if per_query:
            doc["per_query"] = [r for r in rs if r["query"] != "all"]
        docs.append((g, doc))
    if not table.keys:
        return json.dumps(docs[0][1], indent=2, allow_nan=False) + "\n"
    nested: dict = {}
    for g, doc in docs:
        *head, last = g.keys.values()
        at = nested
        for v in head:
            at = at.setdefault(v, {})
        at[last] = doc
    return json.dumps({table.nest: nested}, indent=2, allow_nan=False) + "\n"


@pytest.mark.parametrize("fmt", ["jsonl", "json", "tsv", "csv"])
@pytest.mark.parametrize("per_query", [False, True])
def test_column_wise_writers_are_byte_identical_to_records(results, fmt, per_query):
    one, other, bounds = results
    plain = tierank.evaluate(
        {q: QRELS[q] for q in ("q,1", "q{3}")}, RUN, MEASURES
    )  # ids json quotes as they are
    tables = [
        ResultTable.of(one),
        ResultTable.of({"a,b": one, "{x}": other}),
        ResultTable.of(bounds),
        ResultTable.of(plain),
        ResultTable.nested(
            {("en", "test"): one, ("en", "dev"): other, ("fr", "test"): one},
            ("subset", "split"),
            "subsets",
        ),
    ]
    for t in tables:
        assert render(t, fmt, per_query) == reference(t, fmt, per_query)


def test_sampled_measures_are_written_record_by_record(results, monkeypatch):
    from tierank.measures import sampling

    monkeypatch.setattr(sampling, "ENUMERATE", 0)  # sampled, not enumerated: records carry "se"
    res = tierank.evaluate(QRELS, RUN, ["IPrec@0.5", "P@1"], samples=50, seed=1)
    t = ResultTable.of({"A": res, "B": results[0]})
    for fmt in ("jsonl", "json", "tsv", "csv"):
        assert render(t, fmt, True) == reference(t, fmt, True)
    assert '"se": ' in render(t, "jsonl", True)
    assert "\tsampled\t" in render(t, "tsv", True) and ",exact," in render(t, "csv", True)


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_human_tables_mark_the_sampled_rows_and_say_what_the_mark_means(monkeypatch, fmt):
    """A row whose expectation is estimated carries the marker after the measure's name, per query where
    that query was sampled; one footnote after the table says what it means (samples, seed); a table
    of exact values has neither."""
    from tierank.measures import sampling
    from tierank.report.marks import SAMPLED_MARK

    qrels = {"q1": {f"d{i}": 1 for i in range(6)}, "q2": {"a": 1}}
    run = {"q1": {f"d{i}": 0.5 for i in range(12)}, "q2": {"a": 1.0, "b": 0.5}}
    monkeypatch.setattr(sampling, "ENUMERATE", 100)  # q1 (924 orderings) sampled, q2 (none) exact
    res = tierank.evaluate(qrels, run, ["IPrec@0.5", "P@1"], samples=40, seed=3)
    out = render(ResultTable.of(res), fmt, True)
    mark = "\\" + SAMPLED_MARK if fmt == "markdown" else SAMPLED_MARK
    rows = {
        tuple([c.strip() for c in re.split(r"\||&", line) if c.strip()][:2])
        for line in out.splitlines()
        if "IPrec" in line or "P@1" in line
    }
    assert ("q1", f"IPrec@0.5{mark}") in rows and ("q2", "IPrec@0.5") in rows
    assert ("all", f"IPrec@0.5{mark}") in rows and ("q1", "P@1") in rows
    assert out.count("random tie orderings") == 1 and "40 random" in out and "seed 3" in out
    exact = render(ResultTable.of(tierank.evaluate(qrels, run, ["P@1"])), fmt, True)
    assert SAMPLED_MARK not in exact and "random tie orderings" not in exact


def test_trec_eval_layout_says_on_stderr_which_printed_statistic_is_sampled(tmp_path):
    """trec_eval's three columns stay as they are; ``--stat expected`` of a sampled measure is named on
    stderr with the draws, ``--stat oblivious`` (exact) and exact measures are not."""
    from helpers import invoke

    (tmp_path / "qrels").write_text("".join(f"q 0 d{i} 1\n" for i in range(10)))
    (tmp_path / "run").write_text("".join(f"q Q0 d{i} {i + 1} 0.5 r\n" for i in range(20)))
    args = ["eval", "-f", "trec_eval", "-m", "gm_map", "-m", "P.5", "--samples", "30"]
    files = [tmp_path / "qrels", tmp_path / "run"]
    r = invoke(*args, "--stat", "expected", *files)
    assert [ln.split("\t")[0].strip() for ln in r.stdout.splitlines()] == ["gm_map", "P_5"]
    assert "--stat expected of gm_map: estimated from 30 random tie orderings" in r.stderr
    assert "P_5" not in r.stderr
    assert "estimated" not in invoke(*args, *files).stderr


def test_trec_eval_layout_names_infap_only_for_its_sampled_std(tmp_path, monkeypatch):
    """infAP's expectation (and so its bias) is exact even where its std is sampled (a tie group past
    its exact table, here made 0): ``--stat expected`` names no measure on stderr, ``--stat std``
    names it; the human tables' footnote says so."""
    from helpers import invoke
    from tierank.measures import infap
    from tierank.report.marks import sampled_note

    monkeypatch.setattr(infap, "MOMENT_CELLS", 0)
    qrels = "".join(f"q 0 d{i} {i % 3 == 0:d}\n" for i in range(0, 40, 2)) + "q 0 d1 -1\n"
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text("".join(f"q Q0 d{i} {i + 1} 0.5 r\n" for i in range(40)))
    args = ["eval", "-f", "trec_eval", "-m", "infAP", "--samples", "30"]
    files = [tmp_path / "qrels", tmp_path / "run"]
    for stat in ("expected", "bias"):
        assert "estimated" not in invoke(*args, "--stat", stat, *files).stderr
    assert "--stat std of infAP: estimated from 30" in invoke(*args, "--stat", "std", *files).stderr
    res = tierank.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["infAP"], samples=30)
    assert "expected value of infAP and the bias are exact" in (sampled_note([res]) or "")


# -- the registry ---------------------------------------------------------------------------------------


def test_registry_gives_the_choices_and_refuses_unknown_formats():
    assert formats.names() == (
        "table",
        "tsv",
        "json",
        "jsonl",
        "csv",
        "trec_eval",
        "markdown",
        "latex",
    )
    assert "trec_eval" not in formats.names("records")
    from tierank.cli.common import EvalFmt, Fmt

    assert [f.value for f in EvalFmt] == list(formats.names())
    assert [f.value for f in Fmt] == list(formats.names("records"))
    with pytest.raises(tierank.TierankInputError, match="unknown format 'xml'"):
        render(tierank.evaluate(QRELS, RUN, ["P@1"]), "xml")
    with pytest.raises(tierank.TierankInputError, match="unknown format 'trec_eval'"):
        render_records([{"a": 1}], ("a",), "trec_eval")
    with pytest.raises(ValueError, match="registered twice"):
        formats.register(formats.Format("tsv", "again"))


# -- Markdown and LaTeX ------------------------------------------------------------------------------


def test_latex_escapes_every_special_character():
    assert latex_escape(r"a_b%c&d#e$f{g}h~i^j\k") == (
        r"a\_b\%c\&d\#e\$f\{g\}h\textasciitilde{}i"
        r"\textasciicircum{}j\textbackslash{}k"
    )


def test_eval_markdown_and_latex_exact_text(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q_1 0 b 1\nq_1 0 a 0\n")
    run.write_text("q_1 Q0 a 1 0.5 t\nq_1 Q0 b 2 0.5 t\n")
    md = cli("eval", qrels, run, "-m", "P@1", "-f", "markdown", "-q")
    assert md == (
        "| query | measure | oblivious | expected | min | max | range | bias | std |\n"
        "|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n"
        "| q_1 | P@1 | 1.0000 | 0.5000 | 0.0000 | 1.0000 | 1.0000 | 0.5000 | 0.5000 |\n"
        "| all | P@1 | 1.0000 | 0.5000 | 0.0000 | 1.0000 | 1.0000 | 0.5000 | 0.5000 |\n"
    )
    tex = cli("eval", qrels, run, "-m", "P@1", "-m", "RR", "-f", "latex")
    assert tex == (
        "\\begin{tabular}{llrrrrrrr}\n"
        "\\toprule\n"
        "query & measure & oblivious & expected & min & max & range & bias & std \\\\\n"
        "\\midrule\n"
        "all & P@1 & 1.0000 & 0.5000 & 0.0000 & 1.0000 & 1.0000 & 0.5000 & 0.5000 \\\\\n"
        "all & RR & 1.0000 & 0.7500 & 0.5000 & 1.0000 & 0.5000 & 0.2500 & 0.2500 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
    )
    tex_q = cli("eval", qrels, run, "-m", "P@1", "-f", "latex", "-q")
    assert "q\\_1 & P@1 & 1.0000" in tex_q


def test_several_runs_lead_with_the_run_column(tmp_path):
    qrels, a, b = tmp_path / "qrels", tmp_path / "a_run", tmp_path / "b%run"
    qrels.write_text("q 0 b 1\n")
    a.write_text("q Q0 a 1 0.5 t\nq Q0 b 2 0.5 t\n")
    b.write_text("q Q0 b 1 0.9 t\nq Q0 a 2 0.5 t\n")
    tex = cli("eval", qrels, a, b, "-m", "P@1", "-f", "latex").splitlines()
    assert tex[0] == "\\begin{tabular}{lllrrrrrrr}"
    assert tex[4:6] == [
        "a\\_run & all & P@1 & 1.0000 & 0.5000 & 0.0000 & 1.0000 & 1.0000 & 0.5000 & 0.5000 \\\\",
        "b\\%run & all & P@1 & 1.0000 & 1.0000 & 1.0000 & 1.0000 & 0.0000 & 0.0000 & 0.0000 \\\\",
    ]
    md = cli("eval", qrels, a, b, "-m", "P@1", "-f", "markdown").splitlines()
    assert md[0].startswith("| run | query | measure |") and md[2].startswith(
        "| a_run | all | P@1 | 1.0000 |"
    )


def test_records_tables_for_ties_and_the_leaderboard(tmp_path):
    qrels, a, b = tmp_path / "qrels", tmp_path / "a", tmp_path / "b"
    qrels.write_text("".join(f"q{i} 0 x 1\n" for i in range(4)))
    a.write_text("".join(f"q{i} Q0 x 1 0.5 t\nq{i} Q0 y 2 0.5 t\n" for i in range(4)))
    b.write_text("".join(f"q{i} Q0 x 1 0.9 t\nq{i} Q0 y 2 0.5 t\n" for i in range(4)))
    ties = cli("ties", a, b, "-f", "markdown").splitlines()
    assert ties[0].startswith("| name | queries | docs | queries_with_ties |") and ties[
        2
    ].startswith("| a | 4 | 8 | 4 |")
    board = cli(
        "compare",
        qrels,
        a,
        b,
        "-m",
        "P@1",
        "--leaderboard",
        "-f",
        "latex",
        "--resamples",
        "100",
        "--permutations",
        "100",
    ).splitlines()
    assert board[2] == (
        "name & expected & min & max & oblivious & ci\\_low & ci\\_high & rank & rank\\_oblivious & "
        "rank\\_low & rank\\_high & group \\\\"
    )
    assert board[4].startswith("b & 1.0000 & 1.0000 & 1.0000 & 1.0000 &") and board[5].startswith(
        "a & 0.5000 &"
    )
    md = cli("compare", qrels, a, b, "-m", "P@1", "-f", "markdown").splitlines()
    assert (
        md[0]
        == "| name | expected | min | max | oblivious | ci_low | ci_high | rank | rank_oblivious |"
    )
    # jsonl of ties: each run whole, then the summary over the set (unchanged)
    recs = [json.loads(x) for x in cli("ties", a, b, "-f", "jsonl").splitlines()]
    assert [r["name"] for r in recs] == ["a", "b", "all"]


def test_tie_curves_are_computed_in_analysis_and_drawn_in_report():
    from tierank.analysis.tie_curves import tie_ccdf, tie_group_sizes, tie_structure
    from tierank.report import tie_ccdf as reexported

    assert reexported is tie_ccdf
    curves = tie_structure(
        {
            "A": {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}, "r": {"a": 2.0, "b": 2.0}},
            "B": {"q": {"a": 1.0}},
        }
    )
    a, b = curves["A"], curves["B"]
    assert sorted(a.sizes.tolist()) == [2, 3] and a.share == pytest.approx(5 / 6)
    assert a.s.tolist() == [2, 3] and a.count.tolist() == [2, 1]
    assert b.sizes.tolist() == [] and b.share == 0.0 and b.s.tolist() == []
    assert sorted(tie_group_sizes({"q": {"a": 1.0, "b": 1.0}}).tolist()) == [2]


# ---------------------------------------------------------------- floats as text, many at a time


def _floats(seed: int, n: int) -> np.ndarray:
    """Floats of every kind a result holds and more: random bit patterns (every exponent), magnitudes
    log-uniform across the window where Arrow's text is used and past both of its ends, fractions k/d,
    float32 and bfloat16 values widened, whole numbers, signed zeros, NaN, infinities, subnormals."""
    rng = np.random.default_rng(seed)
    parts = [
        rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64),
        10.0 ** rng.uniform(-6, 12, n),
        np.arange(1, n + 1, dtype=np.float64) / rng.choice([3, 7, 10, 1000, 1024], n),
        rng.random(n).astype(np.float32).astype(np.float64),
        rng.random(n).astype(np.float16).astype(np.float64),
        np.floor(10.0 ** rng.uniform(0, 17, n)),
        1e9 - rng.random(n),
        1e-4 + rng.random(n) * 1e-8,
        1e10 * rng.random(n),
        np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, 1e-4, 1e9, 1e10, 0.1 + 0.2]),
    ]
    v = np.concatenate(parts)
    with np.errstate(invalid="ignore"):  # random bit patterns include signalling NaNs
        v[: len(v) // 2] *= -1
    return rng.permutation(v)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_float_reprs_is_repr(seed):
    """Arrow's text where it is used is ``repr``'s, bit for bit, on about half a million floats per seed; NaN as asked."""
    from tierank.report.formats.grouped import float_reprs, repr_column

    v = _floats(seed, 60_000)
    want = [repr(x) for x in v.tolist()]
    assert float_reprs(v) == want
    assert float_reprs(v, nan="null") == ["null" if s == "nan" else s for s in want]
    assert repr_column(v, "null") == ["null" if s == "nan" else s for s in want]
    for cut in (1, 63, 64, 65, 1000):  # short columns take repr throughout
        assert float_reprs(v[:cut]) == want[:cut]


@pytest.mark.parametrize(
    "name",
    [
        "*star*.run",
        "[link](x).run",
        "`tick`.run",
        "<b>bold.run",
        "_em_.run",
        "a|b.run",
        "~~del~~.run",
        "&amp;.run",
        "back\\slash.run",
        "q_1.run",
        "**x**_y_`z`.run",
    ],
)
def test_markdown_shows_run_names_as_written(name, tmp_path):
    """A run named with Markdown syntax (``*star*.run`` rendered in italics, ``[link](x).run`` as a link)
    renders as its name, read back by a Markdown renderer (markdown-it, CommonMark with GFM tables)."""
    from html import unescape

    from markdown_it import MarkdownIt

    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 b 1\n")
    (tmp_path / name).write_text("q Q0 a 1 0.5 t\nq Q0 b 2 0.5 t\n")
    (tmp_path / "other").write_text("q Q0 b 1 0.9 t\n")
    md = cli("eval", qrels, tmp_path / name, tmp_path / "other", "-m", "P@1", "-f", "markdown")
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)
    cells = [unescape(c.rsplit(">", 1)[1]) for c in html.split("</td>")[:-1]]
    assert cells[0] == name and "<em>" not in html and "<a " not in html and "<code>" not in html
