"""tierank: tie-aware evaluation of retrieval and reranking runs.

>>> import tierank
>>> res = tierank.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}, ["RR"])
>>> round(float(res.aggregate()["expected"][0]), 4)
0.8333
"""

# ruff: noqa: E402  (the package's imports follow the start-up lines below, on purpose)
import _signal  # type: ignore[import-not-found]  # built in, loaded by the interpreter: nothing is read before Ctrl-C is held

# first: a Ctrl-C is held until `quiet_interrupt_at_start` knows whether this is the tierank program
# (then exit 130 without a traceback, also in the imports below) or a Python caller (then the
# KeyboardInterrupt Python would have raised)
_held: list | None = None
try:
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _held = []
        _signal.signal(_signal.SIGINT, lambda signum, frame, held=_held: held.append(signum))
except ValueError:  # not the main thread: signals are not ours to set
    _held = None

from .processes import quiet_interrupt_at_start

quiet_interrupt_at_start(_held)
del _held

from typing import TYPE_CHECKING

from .errors import TierankError, TierankInputError
from .evaluate import Evaluator, evaluate  # the engine is imported on their first call
from .version import __version__

if TYPE_CHECKING:
    from .analysis.compare import CompareSettings, compare
    from .analysis.labels import evaluate_labels
    from .analysis.meta import combine_effects
    from .analysis.planning import topic_set_size
    from .evaluate import evaluate_diversity
    from .io import Qrels, Run, read_qrels, read_run, to_qrels, to_run
    from .io.subtopics import read_subtopic_qrels
    from .measures import Measure, parse_measure, supported
    from .results import EvalResult
    from .settings import EvalSettings
    from .ties import TieBreak

__all__ = [
    "evaluate",
    "Evaluator",
    "EvalSettings",
    "compare",
    "CompareSettings",
    "evaluate_diversity",
    "read_subtopic_qrels",
    "EvalResult",
    "Measure",
    "parse_measure",
    "supported",
    "TieBreak",
    "Run",
    "Qrels",
    "read_run",
    "read_qrels",
    "to_run",
    "to_qrels",
    "TierankError",
    "TierankInputError",
    "__version__",
    "combine_effects",
    "topic_set_size",
    "evaluate_labels",
]

#: public names imported on first use, and their modules: ``import tierank`` (and so the command line's
#: ``tierank --help`` and ``--version``) imports neither numpy nor pyarrow
_LAZY = {
    "compare": "analysis.compare",
    "CompareSettings": "analysis.compare",
    "evaluate_diversity": "evaluate",
    "read_subtopic_qrels": "io.subtopics",
    "Qrels": "io",
    "Run": "io",
    "read_qrels": "io",
    "read_run": "io",
    "to_qrels": "io",
    "to_run": "io",
    "Measure": "measures",
    "parse_measure": "measures",
    "supported": "measures",
    "EvalResult": "results",
    "EvalSettings": "settings",
    "TieBreak": "ties",
    "combine_effects": "analysis.meta",
    "topic_set_size": "analysis.planning",
    "evaluate_labels": "analysis.labels",
}


def __getattr__(name: str):
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
