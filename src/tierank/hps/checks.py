"""The checks of the protocol's options and of a scorer's settings: nothing here imports torch at import time.

Every value a user gives (a model dtype, a batch size, a count, a device, the reasoning budget) is
checked here before anything is loaded; [`resolve_device`][tierank.hps.checks.resolve_device] alone imports torch, to see a GPU.
"""

from __future__ import annotations

from typing import Any

from tierank.errors import Problem, TierankInputError
from tierank.hps.regimes import DTYPES

__all__ = [
    "check_dtype",
    "check_positive",
    "check_batch_size",
    "check_budget",
    "check_device",
    "resolve_device",
    "check_options",
]


def check_dtype(model_dtype: str) -> None:
    if model_dtype not in DTYPES:
        raise TierankInputError(
            [
                Problem(
                    "", None, f"unknown model dtype {model_dtype!r}; accepted: {', '.join(DTYPES)}"
                )
            ]
        )


def check_positive(value: Any, what: str) -> int:
    """``value`` as an int >= 1, or a [`TierankInputError`][tierank.hps.checks.TierankInputError] naming ``what``.

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
        raise TierankInputError(
            [Problem("", None, f"unknown device {device!r}; accepted: auto, cpu, cuda, cuda:N")]
        )
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
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        f"device {device!r}: torch sees no CUDA device here; use --device cpu or auto",
                    )
                ]
            )
    return device


def check_budget(budget: Any) -> int:
    """The reasoning budget in tokens, an int >= 0 (Rank1-style scorers).

    >>> check_budget(0), check_budget(64.0)
    (0, 64)
    >>> check_budget(-1)
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: reasoning budget must be >= 0 tokens, got -1
    """
    try:
        b = int(budget)
        ok = not isinstance(budget, bool) and (b == budget if isinstance(budget, float) else True)
    except (TypeError, ValueError):
        b, ok = -1, False
    if not ok or b < 0:
        raise TierankInputError(
            [Problem("", None, f"reasoning budget must be >= 0 tokens, got {budget!r}")]
        )
    return b


def check_options(budget: Any, max_doc_tokens: Any) -> dict:
    """The protocol options of the model kinds, checked (also those the model ignores: a bad value is a
    mistake either way).

    >>> check_options(64, 256)
    {'budget': 64, 'max_doc_tokens': 256}
    """
    return {
        "budget": check_budget(budget),
        "max_doc_tokens": check_positive(max_doc_tokens, "max doc tokens"),
    }
