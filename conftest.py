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
``crosscheck``, ``docs`` and ``browser`` are given by the test's folder (:data:`FOLDER_MARKS`).  In
those folders a parametrized test runs its first case in the default tier and every case in the full
tier (one trec_eval comparison, one documentation example, ... by default; all of them in CI).
A test that starts tierank as a process (``run_cli``, ``sys.executable``: :data:`STARTS_A_PROCESS`)
is in the ``subprocess`` category and in the full tier, unless marked ``keep_default`` (one start-up
test, one kill test, ... stay in the default tier); so are the browser tests and the in-process tests
listed in :data:`FULL_TIER_TESTS`.

CI runs the default tier first (with only ``[test]`` installed, ``--record-passed FILE``), then the
full tier with every extra, ``--skip-passed FILE``: what already passed on the same tree is not run
twice; what was skipped there (a missing extra) runs with the extras.

Missing extras:

One rule for test modules and doctests alike, from one table (:mod:`tierank.extras`): a missing
optional dependency (:func:`tierank.extras.missing`: tierank's own ``MissingExtra`` and friends, or a
``ModuleNotFoundError`` for a module an extra installs), raised while a module is imported for its
doctests or while a doctest runs, skips that module or example with the reason and the install
command.  Anything else (a real import error, a wrong result) still fails.
"""

from __future__ import annotations

import doctest
import inspect
import os
import re

import pytest

from tierank.extras import EXTRAS, INSTALL, install_command, missing

#: the category every test of a folder has (relative to the repository root)
FOLDER_MARKS = {"tests/crosscheck": "crosscheck", "tests/docs": "docs", "tests/browser": "browser"}
#: folders whose every test is in the full tier (a browser test builds the site and starts Chromium)
FULL_FOLDERS = ("tests/browser",)
#: what starts tierank (or another Python) as a process, in a test's source or in a module-level
#: function it calls: such a test is in the ``subprocess`` category
STARTS_A_PROCESS = re.compile(r"\brun_cli\(|\bsys\.executable\b|\[\"tierank\"|which\(\"tierank\"\)")
#: tests that need seconds in process (measured on two cores), moved to the full tier: node id
#: prefixes, each of whose files must exist
FULL_TIER_TESTS: tuple[str, ...] = (
    "tests/hps/test_ray.py",
    "tests/cluster/test_cluster.py",
    "tests/benchmarks_/test_ties_in_frameworks.py",
    "tests/integrations/test_fuzz_mteb_json.py::test_mteb_json_mutants",
    "tests/integrations/test_sentence_transformers.py::test_bf16_cross_encoder_on_rag24",
    "tests/integrations/test_sentence_transformers.py::test_inside_the_trainers",
    "tests/integrations/test_sentence_transformers.py::test_bi_encoder_on_rag24_equals_tierank_evaluate",
    "tests/integrations/test_ranx.py::test_per_query_scores_equal_ranx_without_ties",
    "tests/integrations/test_ranx.py::test_ranx_breaks_the_tie_by_input_type_tierank_does_not",
    "tests/integrations/test_mteb.py::test_expected_min_max_equal_mteb_over_every_tie_ordering",
    "tests/analysis/test_inference.py::test_tukey_hsd_agrees_with_ranx_on_tie_free_runs",
    "tests/analysis/test_analysis.py::test_compare_command_flags_a_tie_flip",
    "tests/analysis/test_analysis.py::test_ties_command",
    "tests/analysis/test_analysis.py::test_sweep_command_on_askubuntu_qrels_first",
    "tests/analysis/test_analysis.py::test_bands_command_prints_table2_next_to_ours",
    "tests/hps/test_variance.py::test_cli_batch_sizes",
    "tests/hps/test_models.py",
    "tests/hps/test_checkpoints.py",
    "tests/hps/test_cache.py::test_cli_prints_cache_warnings_and_errors_as_one_line",
    "tests/io/test_fuzz.py::test_fuzz_readers",
    "tests/io/test_fuzz_columnar.py::test_fuzz_columnar",
    "tests/io/test_columnar_inputs.py::test_report_and_plot_read_a_parquet_run",
    "tests/integrations/test_ranx.py::test_per_query_scores_equal_tierank_evaluate_with_ties",
    "tests/integrations/test_ranx.py::test_tierank_evaluate_accepts_ranx_objects",
    "tests/report/test_layout_figures.py::test_a_long_title_wraps_inside_the_canvas",
    "tests/stream/test_fuzz_stream.py::test_fuzz_streaming",
    "tests/report/test_commands.py::test_plot_ties_sweep_and_ranges_write_their_figures",
    "tests/report/test_commands.py::test_plot_cutoff_writes_the_curves",
    "tests/report/test_commands.py::test_report_sweep_and_compare_write_their_pages",
    "tests/report/test_commands.py::test_report_eval_writes_the_evaluation",
    "tests/hps/test_protocol.py::test_rerank_report_html",
)
#: parametrized tests outside the one-case folders that also run their first case only by default
ONE_CASE_TESTS: tuple[str, ...] = (
    "tests/analysis/test_compare_aggregates.py",
    "tests/analysis/test_inference.py::test_wilcoxon_method_labels_what_scipy_computed",
    "tests/report/test_layout_figures.py::test_report_figures_fit_and_tables_keep_full_names",
    "tests/report/test_formats.py::test_float_reprs_is_repr",
)


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="tierank: run the full tier (the tests marked 'full' too, every property "
        "test at its full example count); CI runs it",
    )
    parser.addoption(
        "--record-passed",
        metavar="FILE",
        default=None,
        help="tierank: write the node ids of the tests that passed to FILE (one a line)",
    )
    parser.addoption(
        "--skip-passed",
        metavar="FILE",
        default=None,
        help="tierank: deselect the tests FILE lists (written by --record-passed): CI's full "
        "tier skips what the default tier already passed on the same tree",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    # README's command (no path given, no -n): the tier on every core where pytest-xdist is installed
    # (the [test] extra has it); a path, a -k selection's file or -n 0 runs in one process as usual
    if (
        config.pluginmanager.hasplugin("xdist")
        and not hasattr(config, "workerinput")
        and getattr(config.option, "numprocesses", None) is None
        and getattr(config, "args_source", None) == pytest.Config.ArgsSource.TESTPATHS
        and not config.getoption("collectonly")
    ):
        config.option.numprocesses = "auto"


def pytest_configure(config):
    # read by tests/helpers.examples (hypothesis example counts), here and in xdist's workers
    if config.getoption("--full"):
        os.environ["TIERANK_TEST_TIER"] = "full"
    elif os.environ.get("TIERANK_TEST_TIER") != "full":
        os.environ["TIERANK_TEST_TIER"] = "default"


def _starts_a_process(item) -> bool:
    fn = getattr(item, "function", None)
    if fn is None:
        return False
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    if STARTS_A_PROCESS.search(src):
        return True
    module = inspect.getmodule(fn)
    for name in set(re.findall(r"\b(\w+)\(", src)):
        helper = getattr(module, name, None)
        if inspect.isfunction(helper) and helper.__module__ == getattr(module, "__name__", None):
            try:
                if STARTS_A_PROCESS.search(inspect.getsource(helper)):
                    return True
            except (OSError, TypeError):
                pass
    return False


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    missing = [
        p for p in FULL_TIER_TESTS + ONE_CASE_TESTS if not (root / p.split("::")[0]).is_file()
    ]
    if (
        missing and (root / "tests" / "conftest.py").is_file()
    ):  # (tests' own pytester copy this file)
        raise pytest.UsageError(f"conftest.py names test files that do not exist: {missing}")
    full = os.environ.get("TIERANK_TEST_TIER") == "full"
    kept, deselected = [], []
    first_case: set[tuple[str, str]] = set()
    for item in items:
        try:
            rel = item.path.relative_to(root).as_posix()
        except ValueError:
            rel = ""
        one_case = item.nodeid.startswith(ONE_CASE_TESTS)
        for folder, mark in FOLDER_MARKS.items():
            if rel.startswith(folder + "/"):
                item.add_marker(mark)
                one_case = True
        if one_case and getattr(item, "callspec", None) is not None:
            key = (rel, getattr(item, "originalname", item.name))
            if key in first_case:
                item.add_marker("full")
            first_case.add(key)
        if rel.startswith(FULL_FOLDERS):
            item.add_marker("full")
        if _starts_a_process(item):
            item.add_marker("subprocess")
            if item.get_closest_marker("keep_default") is None:
                item.add_marker("full")
        if item.nodeid.startswith(FULL_TIER_TESTS):
            item.add_marker("full")
        if not full and item.get_closest_marker("full") is not None:
            deselected.append(item)
        else:
            kept.append(item)
    passed = _recorded(config.getoption("--skip-passed"))
    if passed:
        deselected += [item for item in kept if item.nodeid in passed]
        kept = [item for item in kept if item.nodeid not in passed]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def _recorded(path: str | None) -> set[str]:
    if not path:
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            return {line.rstrip("\n") for line in f if line.strip()}
    except OSError as e:
        raise pytest.UsageError(f"--skip-passed {path}: {e.strerror}") from None


def pytest_runtest_logreport(report):
    # in the controller (xdist's workers send their reports there); a test passed when its call did
    # and neither its setup nor its teardown failed
    if report.when == "call" and report.passed and not hasattr(report, "wasxfail"):
        _PASSED.add(report.nodeid)
    elif report.failed:
        _PASSED.discard(report.nodeid)


_PASSED: set[str] = set()


def pytest_sessionfinish(session):
    path = session.config.getoption("--record-passed")
    if path and not hasattr(session.config, "workerinput"):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{nodeid}\n" for nodeid in sorted(_PASSED))


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
