import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# No test depends on the machine's speed: no per-example deadline and no "too slow" health check
# (a loaded machine, load average 7-9 on two cores, made examples and their generation slow).
# CI runs derandomized so a run is reproducible; locally hypothesis explores freely.
UNTIMED = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("untimed", **UNTIMED)
settings.register_profile("ci", derandomize=True, print_blob=True, **UNTIMED)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "untimed"))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The real data of the default tier, from files in the repository (see ``tests/realdata.py``)."""
    from realdata import DATA

    return DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The team's ``../shared/data`` beside the repository, for ``slow`` tests only (the full rag24
    corpus); skips with the reason where it is absent, as it is in a user's clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"the team's ../shared/data is not beside this clone ({SHARED_DATA}); only slow tests use it"
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def trec_eval_bin() -> Path:
    """The real trec_eval 10, built from its C source in ``tests/vendor`` once per source hash and
    cached in the temporary folder (skips, with the reason, only where make or a C compiler is missing)."""
    from trec_eval_build import NoCompiler, build_trec_eval

    try:
        return build_trec_eval()
    except NoCompiler as e:
        pytest.skip(str(e))
    except RuntimeError as e:
        pytest.fail(str(e))


def pytest_collection_modifyitems(config, items):
    # ../shared serves only the slow tier: a test asking for it without the mark is a mistake.
    for item in items:
        if (
            "shared_data" in getattr(item, "fixturenames", ())
            and item.get_closest_marker("slow") is None
        ):
            raise pytest.UsageError(
                f"{item.nodeid} reads ../shared (fixture shared_data) but is not marked slow"
            )
