"""Shared fixtures of the cross-check tier.

The tier compares tierank with independent implementations (trec_eval's own
expected outputs, pytrec_eval, ir_measures, the ``trm`` reference library) on the
real data of ``tests/realdata.py`` (files inside the repository, laid out as the team's
``../shared/data``), so the tier runs in any fresh clone.

The run and qrels readers here are deliberately naive (``str.split``) and share
no code with tierank's readers: the other libraries take these dicts as input.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from realdata import DATA as DATA_DIR


@cache
def _run_dict(path: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if f:
                run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


@cache
def _qrels_dict(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if f:
                qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    return qrels


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real-data folder (``tests/realdata.py``)."""
    return DATA_DIR


@pytest.fixture(scope="session")
def read_run_dict(data_dir):
    """``read_run_dict("askubuntu/dev.bm25.run")`` -> ``{qid: {docid: score}}`` (file order, cached).

    Treat the result as read-only: it is shared between tests.
    """
    return lambda rel: _run_dict(str(data_dir / rel))


@pytest.fixture(scope="session")
def read_qrels_dict(data_dir):
    """``read_qrels_dict("askubuntu/dev.qrels")`` -> ``{qid: {docid: grade}}`` (cached, read-only)."""
    return lambda rel: _qrels_dict(str(data_dir / rel))
