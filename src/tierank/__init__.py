"""tierank: tie-aware evaluation of retrieval and reranking runs.

>>> import tierank
>>> res = tierank.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}, ["RR"])
>>> round(float(res.aggregate()["expected"][0]), 4)
0.8333
"""

from .errors import TierankError, TierankInputError
from .evaluate import evaluate
from .io import Qrels, Run, read_qrels, read_run, to_qrels, to_run
from .io.subtopics import read_subtopic_qrels
from .measures import Measure, parse_measure, supported
from .measures.diversity import evaluate_diversity
from .results import EvalResult
from .ties import TieBreak
from .version import __version__

__all__ = [
    "evaluate", "evaluate_diversity", "read_subtopic_qrels", "EvalResult", "Measure", "parse_measure", "supported", "TieBreak",
    "Run", "Qrels", "read_run", "read_qrels", "to_run", "to_qrels",
    "TierankError", "TierankInputError", "__version__",
]
