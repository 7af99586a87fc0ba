"""Root conftest: the test tiers, and what needs an optional extra that is not installed is skipped.

The tiers (README, "Run the tests"), decided here and nowhere else:

* **default** (``python -m pytest``): every module's fast checks, with hypothesis at a share of each
  test's example count (:func:`tests.helpers.examples`) and one case of each cross-check;
* **full** (``python -m pytest --full``, CI): everything of the default tier plus the tests marked
  ``full``, with every property test at its full example count;
* **slow** (``python -m pytest -m slow``): what reads the maintainers' ``../shared`` or runs for
  minutes; in neither of the above.

The categories ``crosscheck``, ``subprocess``, ``docs`` and ``browser`` (registered in
``pyproject.toml``) say what a test does, so that ``-m`` can pick them (``pytest --full -m docs``);
``crosscheck``, ``docs`` and ``browser`` are given by the test's folder (:data:`FOLDER_MARKS`).

Missing extras:

One rule for test modules and doctests alike, from one table (:mod:`tierank.extras`): a missing
optional dependency (:func:`tierank.extras.missing`: tierank's own ``MissingExtra`` and friends, or a
``ModuleNotFoundError`` for a module an extra installs), raised while a module is imported for its
doctests or while a doctest runs, skips that module or example with the reason and the install
command.  Anything else (a real import error, a wrong result) still fails.
"""

from __future__ import annotations

import doctest
import os
import re

import pytest

from tierank.extras import EXTRAS, INSTALL, install_command, missing

#: the category every test of a folder has (relative to the repository root)
FOLDER_MARKS = {"tests/crosscheck": "crosscheck", "tests/docs": "docs", "tests/browser": "browser"}


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="tierank: run the full tier (the tests marked 'full' too, every property "
                          "test at its full example count); CI runs it")


def pytest_configure(config):
    # read by tests/helpers.examples (hypothesis example counts), here and in xdist's workers
    if config.getoption("--full"):
        os.environ["TIERANK_TEST_TIER"] = "full"
    elif os.environ.get("TIERANK_TEST_TIER") != "full":
        os.environ["TIERANK_TEST_TIER"] = "default"


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    full = os.environ.get("TIERANK_TEST_TIER") == "full"
    kept, deselected = [], []
    for item in items:
        try:
            rel = item.path.relative_to(root).as_posix()
        except ValueError:
            rel = ""
        for folder, mark in FOLDER_MARKS.items():
            if rel.startswith(folder + "/"):
                item.add_marker(mark)
        if not full and item.get_closest_marker("full") is not None:
            deselected.append(item)
        else:
            kept.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept

_NOT_IMPORTED = re.compile(r"could not import '([\w.]+)'")


def _skip_reason(exc: BaseException | None) -> str | None:
    """The skip reason when ``exc`` (or what caused it: pytest wraps import errors) is a missing extra."""
    while exc is not None:
        if isinstance(exc, doctest.UnexpectedException):
            exc = exc.exc_info[1]
            continue
        m = missing(exc)
        if m is not None:
            return f"needs an optional extra ({m})"
        exc = exc.__cause__ or exc.__context__
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    # A module collected for its doctests imports the module; one that needs a missing extra at
    # import time (a framework adapter subclassing the framework's classes) is skipped, not an error.
    if type(collector).__name__ == "DoctestModule":
        collect = collector.collect

        def guarded():
            try:
                yield from collect()
            except Exception as exc:  # pytest's CollectError, caused by the module's ImportError
                reason = _skip_reason(exc)
                if reason is None:
                    raise
                pytest.skip(f"{collector.path.name} {reason}")

        collector.collect = guarded
    report = yield
    _name_the_install_command(report)
    return report


def _name_the_install_command(report) -> None:
    """``pytest.importorskip("torch")`` says "could not import 'torch'"; add how to install it."""
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, reason = report.longrepr
        m = _NOT_IMPORTED.search(reason)
        if m and m.group(1).split(".")[0] in {*EXTRAS, *INSTALL} and "pip install" not in reason:
            report.longrepr = (path, line, f"{reason} ({install_command(m.group(1))})")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.excinfo is not None and call.when == "call" and type(item).__name__ == "DoctestItem":
        reason = _skip_reason(call.excinfo.value)
        if reason is not None:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.reportinfo()[1] or 0, f"Skipped: {reason}")
    _name_the_install_command(report)
    return report
