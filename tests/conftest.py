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
def real_data() -> Path:
    """The real data of the default tier, from files in the repository (see ``tests/realdata.py``)."""
    from realdata import DATA

    return DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The team's ``../shared/data`` beside the repository, for ``slow`` tests only (the full rag24
    corpus); skips with the reason where it is absent, as it is in a user's clone."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the team's ../shared/data is not beside this clone ({SHARED_DATA}); only slow tests use it")
    return SHARED_DATA


@pytest.fixture(scope="session")
def trec_eval_bin(tmp_path_factory) -> Path:
    """The real trec_eval 10, built once per session from its C source shipped in ``tests/data``
    (skips, with the reason, only where make or a C compiler is missing)."""
    import shutil
    import subprocess

    from realdata import TREC_EVAL_SOURCE

    cc = shutil.which("cc") or shutil.which("gcc")
    if shutil.which("make") is None or cc is None:
        pytest.skip("building trec_eval 10 (tests/vendor/trec_eval-10.0) needs make and a C compiler (cc or gcc)")
    src = tmp_path_factory.mktemp("trec_eval") / "te"
    shutil.copytree(TREC_EVAL_SOURCE, src)
    for p in [src, *src.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    env = {**os.environ, "CC": os.environ.get("CC") or Path(cc).name}
    done = subprocess.run(["make", "-s", "-C", str(src)], capture_output=True, text=True, env=env)
    if done.returncode != 0 or not (src / "trec_eval").exists():
        pytest.fail(f"building trec_eval failed:\n{done.stdout}\n{done.stderr}")
    return src / "trec_eval"


def pytest_collection_modifyitems(config, items):
    # ../shared serves only the slow tier: a test asking for it without the mark is a mistake.
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()) and item.get_closest_marker("slow") is None:
            raise pytest.UsageError(f"{item.nodeid} reads ../shared (fixture shared_data) but is not marked slow")
