"""ir_measures' own test suite, run with tierank's provider registered first in its pipeline, gives
what it gives without it: registering only adds tie-aware values (ir_measures' tests have no tied
scores), never changes what ir_measures computes or raises.

The suite is not shipped with ir_measures' wheel (nor whole in its sdist): point
``TIERANK_IR_MEASURES_TESTS`` at the ``tests`` folder of an ir_measures checkout of the installed
version (``git clone -b v0.4.3 https://github.com/terrierteam/ir_measures``).  Nothing is
downloaded here; without it the test skips, and ``tests/integrations/test_ir_measures_stock.py``
checks each behaviour in the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip(
    "ir_measures", reason="ir_measures not installed: pip install 'tierank[ir_measures]'"
)

SUITE = os.environ.get("TIERANK_IR_MEASURES_TESTS")

PLUGIN = """
import json, os
from tierank.integrations import ir_measures as tirm

tirm.register()
_made = [0]
_init = tirm.TierankEvaluator.__init__


def _counted(self, *args, **kwargs):
    _made[0] += 1
    _init(self, *args, **kwargs)


tirm.TierankEvaluator.__init__ = _counted


def pytest_sessionfinish(session):
    with open(os.environ["TIERANK_SUITE_REPORT"], "w") as f:
        json.dump({"evaluators": _made[0]}, f)
"""


def _outcomes(tmp: Path, registered: bool) -> tuple[dict, int]:
    """``{test: (outcome, first line of its message)}`` and the tierank evaluators made."""
    xml, report = tmp / f"junit{registered}.xml", tmp / f"made{registered}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp), *sys.path]),
        "TIERANK_SUITE_REPORT": str(report),
    }
    plugin = ["-p", "tierank_first"] if registered else []
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "-c",
        str(tmp / "pytest.ini"),
    ]
    p = subprocess.run(
        [*cmd, *plugin, f"--junitxml={xml}", "tests"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert xml.is_file(), p.stdout[-3000:] + p.stderr[-3000:]
    out = {}
    for case in ET.parse(xml).iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        bad = [c for c in case if c.tag in ("failure", "error", "skipped")]
        message = (bad[0].get("message") or "").splitlines()[:1] if bad else []
        out.setdefault(key, []).append((bad[0].tag if bad else "passed", *message))
    made = json.loads(report.read_text())["evaluators"] if report.is_file() else 0
    return out, made


@pytest.mark.full
@pytest.mark.skipif(
    not SUITE, reason="TIERANK_IR_MEASURES_TESTS (ir_measures' tests folder) is not set"
)
def test_ir_measures_suite_passes_alike_with_tierank_registered(tmp_path):
    shutil.copytree(SUITE, tmp_path / "tests")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "tierank_first.py").write_text(PLUGIN)
    stock, _ = _outcomes(tmp_path, registered=False)
    ours, made = _outcomes(tmp_path, registered=True)
    assert made > 0  # the provider answered some of the suite's measures
    assert sum(o[0] == "passed" for v in stock.values() for o in v) > 0
    assert ours == stock
