import os
import sys

import pytest
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# CI runs derandomized so a run is reproducible; locally hypothesis explores freely.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the repository (skips the test, with the reason, when absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder not found: {SHARED_DATA} (tests on the real data need ../shared)")
    return SHARED_DATA
