"""No test of the tiers depends on how fast the machine is: hypothesis has no per-example deadline
and no "too slow" health check (the profiles of ``tests/conftest.py``), and no test sets them back."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def test_the_loaded_profile_is_untimed():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    for name in ("untimed", "ci"):
        profile = settings.get_profile(name)
        assert profile.deadline is None and HealthCheck.too_slow in profile.suppress_health_check


def test_no_test_sets_a_deadline_or_drops_the_too_slow_check():
    """A ``settings(...)`` with ``deadline=`` other than None, or a ``suppress_health_check=`` list
    without ``too_slow`` (it replaces the profile's), times a test again."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if "vendor" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if "deadline" not in text and "suppress_health_check" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                text = ast.unparse(kw.value)
                if kw.arg == "deadline" and text != "None":
                    found.append(f"{path.relative_to(TESTS)}:{node.lineno}: deadline={text}")
                if (
                    kw.arg == "suppress_health_check"
                    and "too_slow" not in text
                    and text != "list(HealthCheck)"
                ):
                    found.append(
                        f"{path.relative_to(TESTS)}:{node.lineno}: suppress_health_check={text}"
                    )
    assert not found, found
