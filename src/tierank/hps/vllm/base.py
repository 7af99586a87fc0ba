"""What the vLLM scorers share: the protocol's checks with vLLM installed, the build's device, the
tokenizer (no HF model is loaded) and prompts handed to the engine as token ids.

vLLM is reached through [`tierank.hps.vllm.settings`][tierank.hps.vllm.settings] (``settings.require_vllm``), so a test or a Ray
worker can replace it there with a fake.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tierank.errors import TierankError
from tierank.hps.base import ScorerBase
from tierank.hps.checkpoints import model_folder, quiet_loading
from tierank.hps.variants import Variant
from tierank.hps.vllm import settings

__all__ = ["VllmScorerBase"]


class VllmScorerBase(ScorerBase):
    """A scorer whose forward pass is a vLLM engine's: the checks, the device, the tokenizer and the token ids."""

    tokenizer: Any

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """The variants the kind supports, and vLLM installed: refused before anything is loaded."""
        super().check_spec(source, variants)
        if not settings.vllm_installed():
            raise TierankError(
                f"--backend vllm needs vLLM, which is not installed: {settings.INSTALL}"
            )

    @staticmethod
    def resolve_device(device: str | None) -> str:
        """The device (``auto`` is the installed vLLM build's): [`resolve_vllm_device`][tierank.hps.vllm.settings.resolve_vllm_device]."""
        return settings.resolve_vllm_device(device)

    def init_source(
        self,
        model: Any,
        kind: str,
        device: str,
        engine_factory: Callable[..., Any] | None,
        tokenizer: Any,
    ) -> None:
        """The engine factory (``engine_factory``, a test's fake, else `settings.make_engine`), the device
        (the vLLM build's, unless a fake engine is given), the model folder (``model``: a named source's
        folder of ``kind``, or a path; taken as is when a ``tokenizer`` is given) and its tokenizer."""
        self._factory = engine_factory or settings.make_engine
        self.device = device if engine_factory is not None else settings.resolve_vllm_device(device)
        self.model_dir = Path(model) if tokenizer is not None else model_folder(str(model), kind)
        self.model_name = str(self.model_dir)
        if tokenizer is not None:
            self.tokenizer = tokenizer
        else:
            self.init_tokenizer(self.model_dir)

    def engine_options(self, max_len: int, **options: Any) -> dict[str, Any]:
        """The options of an engine for this scorer's model, dtype, batch size and device, with ``max_len``
        tokens per sequence and ``options`` ([`engine_options`][tierank.hps.vllm.settings.engine_options])."""
        return settings.engine_options(
            self.model_dir, self.model_dtype, self.batch_size, max_len, str(self.device), **options
        )

    def init_tokenizer(self, model_dir: Path) -> None:
        from transformers import AutoTokenizer

        quiet_loading()
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)

    def token_ids(self, texts: Sequence[str]) -> list[dict]:
        """Prompts as vLLM takes them pre-tokenized (no second tokenization inside the engine)."""
        return [
            {"prompt_token_ids": self.tokenizer.encode(t, add_special_tokens=False)} for t in texts
        ]
