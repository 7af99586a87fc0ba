"""The documentation says what the code does: descriptions of parameters and statistics, install
guidance (every extra named, no install from a package index that has no release, skip messages
naming the extra the guides name), the notes a documented command prints, and the help and plain
output of the command line."""

from __future__ import annotations

import ast
import gzip
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

import tierank
import tierank.examples
from helpers import invoke

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


# --- what nDCG(judged_only=True) and -J drop ------------------------------------------------------

#: one query: ``b`` (grade -1) ranked first, ``d`` (unjudged) second, ``a`` (grade 2) third
QRELS = {"q": {"a": 2, "b": -1, "c": 0}}
RUN = {"q": {"b": 4.0, "d": 3.0, "a": 2.0, "c": 1.0}}


def test_ndcg_judged_only_drops_negative_grades_as_its_description_says():
    """Dropping unjudged documents only would leave ``b`` first and ``a`` second (nDCG 1/log2(3));
    negative grades are dropped too (trec_eval -J, ir_measures), so ``a`` is first: 1.0.  The
    parameter's description (the measure reference) and the concepts page say so."""
    from tierank.measures import parse_measure

    res = tierank.evaluate(QRELS, RUN, ["nDCG(judged_only=True)@10", "nDCG@10"])
    got = dict(zip(res.aggregate()["measure"], res.aggregate()["expected"], strict=True))
    assert got["nDCG(judged_only=True)@10"] == pytest.approx(1.0, abs=1e-12)
    assert got["nDCG@10"] == pytest.approx(2 / math.log2(4) / 2, abs=1e-12)
    assert 1 / math.log2(3) < 0.64  # what dropping the unjudged document alone would give
    param = {p.name: p for p in parse_measure("nDCG@10").schema}["judged_only"]
    assert "negative" in param.description and "unjudged" in param.description, param.description
    concepts = _read("docs/concepts.md")
    unjudged = concepts[concepts.index("## Unjudged documents") :]
    assert "-J" in unjudged and "nDCG(judged_only=True)" in unjudged
    assert re.search(r"negative\s+qrels\s+grade", unjudged), (
        "the concepts page omits negative grades"
    )


def test_ndcg_judged_only_agrees_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel("q", d, g) for d, g in QRELS["q"].items()]
    run = [ir_measures.ScoredDoc("q", d, s) for d, s in RUN["q"].items()]
    m = ir_measures.nDCG(judged_only=True) @ 10
    theirs = ir_measures.calc_aggregate([m], qrels, run)[m]
    res = tierank.evaluate(QRELS, RUN, ["nDCG(judged_only=True)@10"])
    assert float(res.aggregate()["expected"].iloc[0]) == pytest.approx(theirs, abs=1e-12)


def test_summary_names_the_std_of_the_mean():
    """``TensorStats.summary()``: ``std_of_mean`` is the std over tie orderings of the mean over
    queries, ``sqrt(sum var) / n``, not the mean of the per-query std; ``std`` stays, the same number."""
    from tierank import tensor

    scores = np.array([[0.5, 0.5, 0.5, 0.1], [0.9, 0.4, 0.4, 0.4], [0.3, 0.3, 0.2, 0.1]])
    labels = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 1]])
    st = tensor.evaluate(scores, labels, ["RR"])["RR"]
    s = st.summary()
    want = math.sqrt(float(np.sum(st.var))) / 3
    assert s["std_of_mean"] == pytest.approx(want, rel=1e-12)
    assert s["std"] == s["std_of_mean"]  # the older name, kept
    assert abs(s["std_of_mean"] - float(np.mean(st.std))) > 0.05  # not the mean per-query std
    assert "std_of_mean" in type(st).summary.__doc__
    assert math.isnan(
        tensor.evaluate(scores[:0], labels[:0], ["RR"])["RR"].summary()["std_of_mean"]
    )


# --- install guidance ------------------------------------------------------------------------------


def _user_extras() -> list[str]:
    extras = tomllib.loads(_read("pyproject.toml"))["project"]["optional-dependencies"]
    return sorted(set(extras) - {"test", "bench"})


def test_readme_and_getting_started_name_every_extra():
    readme, start = _read("README.md"), _read("docs/getting-started.md")
    extras = _user_extras()
    assert {"torchmetrics", "irds", "polars"} <= set(extras)
    assert not [e for e in extras if f"`{e}`" not in readme], "README omits extras"
    assert not [e for e in extras if f'".[{e}]"' not in start], "Getting started omits extras"


def test_readme_says_how_to_build_the_docs():
    readme = _read("README.md")
    assert 'pip install -e ".[docs]" && mkdocs build\n--strict' in readme or (
        'pip install -e ".[docs]" && mkdocs build --strict' in readme
    )
    assert "build/site" in readme


def test_no_page_sends_users_to_the_package_index():
    """tierank has no release on the package index: install commands are editable installs in a
    clone; ``pip install "tierank[...]"`` appears only where a page quotes what the tool prints
    (``naming ...``) or says what will work once it is released."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if "from the index" in text:
            found.append(f"{page.relative_to(ROOT)}: 'from the index'")
        for m in re.finditer(r'pip install "tierank\[', text):
            before = text[max(0, m.start() - 120) : m.start()]
            if "naming" not in before and "released" not in before:
                found.append(f"{page.relative_to(ROOT)}: {text[m.start() : m.start() + 40]!r}")
    assert not found, found


def test_tensor_tests_skip_naming_the_extra_the_guide_names():
    """The guide installs tierank.tensor's torch stack with ``.[torchmetrics]``; the tests on torch
    skip with that command (the conftest default for torch would name ``[models]``)."""
    assert '".[torchmetrics]"' in _read("docs/guides/training-loop.md")
    calls = []
    for path in sorted((ROOT / "tests" / "tensor").glob("test_*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        consts = {
            t.id: n.value.value
            for n in ast.walk(module)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(module):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "importorskip"
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in ("torch", "torchmetrics")
            ):
                reason = {k.arg: k.value for k in node.keywords}.get("reason")
                text = (
                    reason.value
                    if isinstance(reason, ast.Constant)
                    else consts.get(reason.id)
                    if isinstance(reason, ast.Name)
                    else None
                )
                calls.append((f"{path.name}:{node.lineno}", text))
    assert calls
    wrong = [c for c in calls if not (c[1] and 'pip install -e ".[torchmetrics]"' in c[1])]
    assert not wrong, wrong


# --- what the documented commands print ------------------------------------------------------------


def _coarse_run(tmp_path: Path) -> Path:
    """The trec_eval guide's coarse.run: the rag24 run with its scores printed to one decimal."""
    lines = []
    with gzip.open(tierank.examples.path("rag24-run"), "rt") as f:
        for line in f:
            q, z, d, r, s, t = line.split()
            lines.append(f"{q} {z} {d} {r} {float(s):.1f} {t}\n")
    out = tmp_path / "coarse.run"
    out.write_text("".join(lines))
    return out


def test_the_trec_eval_guides_stderr_example_shows_every_note(tmp_path):
    """The guide's ``2>&1`` example shows every note the command prints, the unevaluated queries'
    included (the path of the shipped qrels written ``.../tierank/examples/NAME``)."""
    guide = _read("docs/guides/trec_eval.md")
    cmd = "tierank eval -m gm_map -m P.5 --format trec_eval --stat expected"
    at = guide.index(cmd)
    assert "tierank example rag24-run" in guide and "rag24-qrels" in guide
    shown = guide[at:].split("```text\n", 1)[1].split("```", 1)[0]
    run = _coarse_run(tmp_path)
    qrels = tierank.examples.path("rag24-qrels")
    done = invoke(
        "eval", "-m", "gm_map", "-m", "P.5", "--format", "trec_eval", "--stat", "expected",
        qrels, run.name, cwd=tmp_path,
    )  # fmt: skip
    notes = [ln for ln in done.stderr.splitlines() if ln.startswith("tierank: note:")]
    assert any("270 of its 301 queries" in n for n in notes), notes
    for note in notes:
        note = note.replace(str(Path(qrels).parent.parent.parent), "...")
        assert note in shown, f"the guide does not show: {note}"


def test_tables_written_to_a_pipe_have_no_trailing_spaces():
    """A table printed where standard output is not a terminal (a pipe, a file; the test runner's
    capture) is plain text without the spaces rich pads its title and caption with."""
    outs = {
        "eval": invoke(
            "eval", tierank.examples.path("qrels"), tierank.examples.path("run"), "-m", "P@3"
        ).stdout,
        "measures": invoke("measures").stdout,
        "bands": invoke("bands").stdout,
    }
    for name, out in outs.items():
        assert "tierank eval" in out or name != "eval"
        padded = [ln for ln in out.splitlines() if ln != ln.rstrip()]
        assert not padded, (name, padded[:3])
        assert "\x1b[" not in out, name  # and no colour codes


def test_format_help_says_trec_eval_once():
    import typer

    from tierank.cli import app

    ev = typer.main.get_command(app).commands["eval"]  # type: ignore[attr-defined]
    fmt = next(p for p in ev.params if "--format" in getattr(p, "opts", ()))
    help_text = getattr(fmt, "help", "") or ""
    assert help_text.count("trec_eval:") == 1, help_text
    assert "(measure, query, value)" in help_text and "--stat" in help_text
