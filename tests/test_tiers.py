"""The test tiers of the root conftest.py, on a small project of their own (pytester)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(pytester, monkeypatch):
    # the tier travels in the environment (for xdist's workers): start from none, and restore it
    monkeypatch.delenv("TIERANK_TEST_TIER", raising=False)
    shutil.copy(ROOT / "conftest.py", pytester.path / "conftest.py")
    (pytester.path / "tests" / "crosscheck").mkdir(parents=True)
    (pytester.path / "tests" / "crosscheck" / "test_cross.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('case', [1, 2, 3])\n"
        "def test_against_the_reference(case):\n"
        "    assert case\n"
    )
    (pytester.path / "tests" / "test_plain.py").write_text(
        "import subprocess, sys, pytest\n"
        "@pytest.mark.parametrize('case', [1, 2])\n"
        "def test_every_case_by_default(case):\n"
        "    assert case\n"
        "@pytest.mark.full\n"
        "def test_marked_full():\n"
        "    pass\n"
        "def test_starts_a_process():\n"
        "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
        "@pytest.mark.keep_default\n"
        "def test_starts_a_process_but_kept():\n"
        "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
        "def test_fails():\n"
        "    assert False\n"
    )
    pytester.makeini(
        "[pytest]\nmarkers =\n    full: f\n    keep_default: k\n    crosscheck: c\n"
        "    subprocess: s\n    docs: d\n    browser: b\n"
    )
    return pytester


def _ran(result) -> set[str]:
    return {
        line.split(" ")[0].split("::", 1)[1]
        for line in result.outlines
        if " PASSED" in line or " FAILED" in line
    }


def test_the_default_tier_runs_one_cross_check_case_and_no_full_or_process_test(project):
    res = project.runpytest("-v", "-p", "no:cacheprovider", "-p", "no:xdist", "tests")
    assert _ran(res) == {
        "test_against_the_reference[1]",
        "test_every_case_by_default[1]",
        "test_every_case_by_default[2]",
        "test_starts_a_process_but_kept",
        "test_fails",
    }


def test_the_full_tier_runs_everything(project, monkeypatch):
    res = project.runpytest("-v", "-p", "no:cacheprovider", "-p", "no:xdist", "--full", "tests")
    assert _ran(res) == {
        "test_against_the_reference[1]",
        "test_against_the_reference[2]",
        "test_against_the_reference[3]",
        "test_every_case_by_default[1]",
        "test_every_case_by_default[2]",
        "test_marked_full",
        "test_starts_a_process",
        "test_starts_a_process_but_kept",
        "test_fails",
    }


def test_the_full_tier_skips_what_the_default_tier_passed_and_reruns_failures(project, monkeypatch):
    passed = project.path / "passed.txt"
    project.runpytest(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--record-passed", str(passed), "tests"
    )
    assert set(passed.read_text().split()) == {
        "tests/crosscheck/test_cross.py::test_against_the_reference[1]",
        "tests/test_plain.py::test_every_case_by_default[1]",
        "tests/test_plain.py::test_every_case_by_default[2]",
        "tests/test_plain.py::test_starts_a_process_but_kept",
    }
    monkeypatch.delenv("TIERANK_TEST_TIER", raising=False)
    res = project.runpytest(
        "-v",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--full",
        "--skip-passed",
        str(passed),
        "tests",
    )
    assert _ran(res) == {
        "test_against_the_reference[2]",
        "test_against_the_reference[3]",
        "test_marked_full",
        "test_starts_a_process",
        "test_fails",
    }
    bad = project.runpytest("--skip-passed", str(project.path / "nowhere.txt"), "tests")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--skip-passed" in bad.errlines[-1] or "--skip-passed" in "\n".join(bad.errlines)
