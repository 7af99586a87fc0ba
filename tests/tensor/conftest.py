"""The ``full`` mark: a test that takes seconds runs in the full tier only (``TIERANK_TEST_TIER=full``, CI)."""

import pytest

from helpers import FULL_TIER


def pytest_configure(config):
    config.addinivalue_line("markers", "full: takes seconds; runs in the full tier (TIERANK_TEST_TIER=full)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("full") is not None and not FULL_TIER:
        pytest.skip("full tier only (TIERANK_TEST_TIER=full)")
