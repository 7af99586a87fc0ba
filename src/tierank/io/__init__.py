"""Input/output: readers of TREC/BEIR files, in-memory adapters, atomic writers."""

from .convert import to_qrels, to_run
from .model import Qrels, Run
from .readers import read_qrels, read_run

__all__ = ["Run", "Qrels", "read_run", "read_qrels", "to_run", "to_qrels"]
