"""Precision regimes and pure scoring functions for High-Precision Scoring (HPS).

A *regime* names the dtype the model runs in and the dtype of the final
scoring step (Yang et al., "Reliable Evaluation Protocol for Low-Precision
Retrieval", section 2.2, eq. 1-3).  ``"bf16"`` means model *and* scoring in
BF16 (eq. 1, which creates spurious ties); ``"bf16->fp32"`` means the model
runs in BF16 but the model outputs ``z_i`` are upcast before the scoring
function: ``s_i = phi(upcast(z_i))`` (eq. 3).

The scoring functions take a tensor of model outputs.  The input is first
cast to the regime's *model* dtype (a no-op for real model outputs, and a
faithful simulation of low-precision outputs for FP32/FP64 synthetic
tensors), then to the *scoring* dtype, and ``phi`` is evaluated there.  The
result is returned as a float64 numpy array holding exactly the values
computed in the scoring dtype (float64 represents every FP16/BF16/FP32 value
exactly), so ties created by low precision stay visible.

torch is imported lazily: importing this module does not need it.

>>> Regime.parse("bf16->fp32")
Regime(model_dtype='bf16', scoring_dtype='fp32')
>>> Regime.parse("fp16").name, Regime.parse("fp16").hps
('fp16', False)
>>> str(Regime.parse(" BF16 -> FP32 "))
'bf16->fp32'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tierank.errors import Problem, TierankInputError
from tierank.extras import require

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "Regime",
    "REGIMES",
    "as_regime",
    "torch_dtype",
    "pairwise_scores",
    "sigmoid_scores",
    "softmax2_scores",
    "yes_no_scores",
    "head_fp32_yes_no",
    "grade_probabilities",
    "head_fp32_grades",
]

DTYPES = ("fp32", "fp16", "bf16")
#: The accepted regime strings.
REGIMES = ("fp32", "fp16", "bf16", "fp16->fp32", "bf16->fp32")


def _torch():
    # the models extra pins torch==2.13.0 (the CPU build here; an unpinned torch pulls CUDA packages)
    return require("torch", what="tierank.hps")


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype for ``"fp32"``, ``"fp16"`` or ``"bf16"``."""
    torch = _torch()
    table = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    try:
        return table[name]
    except KeyError:
        raise TierankInputError(
            [Problem("", None, f"unknown dtype {name!r}; accepted: {', '.join(DTYPES)}")]
        ) from None


@dataclass(frozen=True)
class Regime:
    """Model dtype and scoring dtype of one precision regime."""

    model_dtype: str
    scoring_dtype: str

    def __post_init__(self) -> None:
        for d in (self.model_dtype, self.scoring_dtype):
            if d not in DTYPES:
                raise TierankInputError(
                    [Problem("", None, f"unknown dtype {d!r}; accepted: {', '.join(DTYPES)}")]
                )
        if self.name not in REGIMES:
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        f"unsupported regime {self.name!r}; accepted: {', '.join(REGIMES)}",
                    )
                ]
            )

    @classmethod
    def parse(cls, text: str) -> Regime:
        """Parse ``"fp32"``, ``"fp16"``, ``"bf16"``, ``"fp16->fp32"`` or ``"bf16->fp32"``.

        >>> Regime.parse("int8")
        Traceback (most recent call last):
        ...
        tierank.errors.TierankInputError: unknown precision regime 'int8'; accepted: fp32, fp16, bf16, fp16->fp32, bf16->fp32
        """
        if not isinstance(text, str):
            raise TierankInputError(
                [Problem("", None, f"precision regime must be a string, got {text!r}")]
            )
        norm = "".join(text.split()).lower()
        if norm not in REGIMES:
            raise TierankInputError(
                [
                    Problem(
                        "",
                        None,
                        f"unknown precision regime {text!r}; accepted: {', '.join(REGIMES)}",
                    )
                ]
            )
        if "->" in norm:
            model, scoring = norm.split("->")
        else:
            model = scoring = norm
        return cls(model, scoring)

    @property
    def name(self) -> str:
        if self.model_dtype == self.scoring_dtype:
            return self.model_dtype
        return f"{self.model_dtype}->{self.scoring_dtype}"

    @property
    def hps(self) -> bool:
        """True when the scoring step runs in a higher precision than the model."""
        return self.model_dtype != self.scoring_dtype

    def __str__(self) -> str:
        return self.name

    @property
    def torch_model_dtype(self) -> torch.dtype:
        return torch_dtype(self.model_dtype)

    @property
    def torch_scoring_dtype(self) -> torch.dtype:
        return torch_dtype(self.scoring_dtype)


def as_regime(regime: Regime | str) -> Regime:
    """Accept a [`Regime`][tierank.hps.regimes.Regime] or its string form."""
    if isinstance(regime, Regime):
        return regime
    return Regime.parse(regime)


def _as_tensor(x: Any) -> torch.Tensor:
    torch = _torch()
    if isinstance(x, torch.Tensor):
        return x.detach()
    return torch.as_tensor(np.asarray(x))


def _prepare(x: Any, regime: Regime) -> torch.Tensor:
    """Round to the model dtype (eq. 1's z_i), then cast to the scoring dtype."""
    t = _as_tensor(x)
    return t.to(regime.torch_model_dtype).to(regime.torch_scoring_dtype)


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    torch = _torch()
    # float64 holds every fp16/bf16/fp32 value exactly: no new rounding, no new ties
    return t.detach().to(device="cpu", dtype=torch.float64).numpy()


def pairwise_scores(
    q_emb: Any, d_emb: Any, regime: Regime | str, normalize: bool = True
) -> np.ndarray:
    """Cosine (``normalize=True``) or dot-product scores between embeddings.

    ``q_emb`` is one query ``(dim,)`` (result ``(n_docs,)``) or several
    ``(n_q, dim)`` (result ``(n_q, n_docs)``); ``d_emb`` is ``(n_docs, dim)``.
    Under HPS the embeddings are upcast *before* normalisation and the dot
    product, so both run in the scoring dtype.
    """
    regime = as_regime(regime)
    torch = _torch()
    q = _prepare(q_emb, regime)
    d = _prepare(d_emb, regime)
    if d.ndim != 2 or q.ndim not in (1, 2) or q.shape[-1] != d.shape[-1]:
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"embedding shapes do not match: query {tuple(q.shape)}, docs {tuple(d.shape)}",
                )
            ]
        )
    if normalize:
        q = torch.nn.functional.normalize(q, p=2, dim=-1)
        d = torch.nn.functional.normalize(d, p=2, dim=-1)
    return _to_numpy(q @ d.T)


def sigmoid_scores(logits: Any, regime: Regime | str) -> np.ndarray:
    """``sigmoid(z)`` of single-logit cross-encoder outputs (shape ``(n,)`` or ``(n, 1)``)."""
    regime = as_regime(regime)
    z = _prepare(logits, regime)
    if z.ndim == 2 and z.shape[1] == 1:
        z = z[:, 0]
    return _to_numpy(_torch().sigmoid(z))


def softmax2_scores(logits_2col: Any, regime: Regime | str) -> np.ndarray:
    """Probability of class 1 ("yes"/"relevant") of two-column logits ``(n, 2)``."""
    regime = as_regime(regime)
    z = _prepare(logits_2col, regime)
    if z.ndim != 2 or z.shape[1] != 2:
        raise TierankInputError(
            [Problem("", None, f"expected logits of shape (n, 2), got {tuple(z.shape)}")]
        )
    return _to_numpy(_torch().softmax(z, dim=-1)[:, 1])


def yes_no_scores(last_logits: Any, yes_id: int, no_id: int, regime: Regime | str) -> np.ndarray:
    """P(yes) from a two-way softmax over the "no" and "yes" logits of the last position.

    ``last_logits`` is ``(n, vocab)``; only the two columns are used
    (Qwen3-Reranker style).  Under HPS the two logits are upcast before the
    softmax - this cannot undo ties already present in the low-precision
    logits (see [`head_fp32_yes_no`][tierank.hps.regimes.head_fp32_yes_no] for that).
    """
    regime = as_regime(regime)
    t = _as_tensor(last_logits)
    if t.ndim != 2:
        raise TierankInputError(
            [Problem("", None, f"expected logits of shape (n, vocab), got {tuple(t.shape)}")]
        )
    two = t[:, [int(no_id), int(yes_id)]]
    return softmax2_scores(two, regime)


def head_fp32_yes_no(last_hidden: Any, lm_head_weight: Any, yes_id: int, no_id: int) -> np.ndarray:
    """``z_yes - z_no`` computed in FP32 from the last hidden state and two lm_head rows.

    ``last_hidden`` is ``(n, hidden)`` (the input of the LM head at the last
    position), ``lm_head_weight`` is ``(vocab, hidden)``.  Both are upcast to
    FP32; only the rows ``yes_id`` and ``no_id`` are used.  The result is a
    logit difference (monotone in the two-way softmax P(yes) =
    sigmoid(z_yes - z_no)), kept as a difference because a sigmoid would
    saturate confident scores back into ties.  This level can separate
    documents whose BF16 logits are already tied.
    """
    z = _fp32_head(last_hidden, lm_head_weight, "lm_head", [int(yes_id), int(no_id)])
    return _to_numpy(z[:, 0] - z[:, 1])


def _fp32_head(last_hidden: Any, weight: Any, name: str, rows: list[int] | None = None) -> Any:
    """The logits ``(n, len(rows))`` of the LM head's input ``last_hidden`` ``(n, hidden)`` times the rows
    ``rows`` (all: None) of ``weight`` ``(m, hidden)`` (named ``name`` when the shapes do not match),
    both upcast to FP32 and multiplied in FP32."""
    torch = _torch()
    h = _as_tensor(last_hidden).to(torch.float32)
    w = _as_tensor(weight)
    if h.ndim != 2 or w.ndim != 2 or h.shape[1] != w.shape[1]:
        raise TierankInputError(
            [
                Problem(
                    "",
                    None,
                    f"shapes do not match: hidden {tuple(h.shape)}, {name} {tuple(w.shape)}",
                )
            ]
        )
    if rows is not None:
        w = w[rows]
    return h @ w.to(torch.float32).T


def _distribution(p: Any) -> np.ndarray:
    """Probabilities as FP64 rows renormalised to sum to 1 (a no-op to ~1e-7 after an FP32 softmax; after
    a BF16 or FP16 softmax it takes out the rounding of the low-precision sum)."""
    out = _to_numpy(p)
    return out / out.sum(axis=1, keepdims=True)


def grade_probabilities(last_logits: Any, token_ids: Any, regime: Regime | str) -> np.ndarray:
    """Per row the softmax over the logits of the grade tokens ``token_ids`` (grade ``k``'s token at
    ``token_ids[k]``) of the last position: the next-token probabilities renormalised over the grades.

    ``last_logits`` is ``(n, vocab)``; the result ``(n, len(token_ids))`` in FP64, each row summing to 1.
    Under HPS (``bf16->fp32``) the grade logits are upcast before the softmax; at ``bf16`` the softmax
    runs in BF16 (and the row is renormalised in FP64).
    """
    regime = as_regime(regime)
    t = _as_tensor(last_logits)
    if t.ndim != 2:
        raise TierankInputError(
            [Problem("", None, f"expected logits of shape (n, vocab), got {tuple(t.shape)}")]
        )
    z = _prepare(t[:, [int(i) for i in token_ids]], regime)
    return _distribution(_torch().softmax(z, dim=-1))


def head_fp32_grades(last_hidden: Any, rows: Any) -> np.ndarray:
    """Per row the FP32 softmax over the grade logits computed in FP32 from the LM head's input
    ``last_hidden`` ``(n, hidden)`` and the grade tokens' FP32 LM-head rows ``rows`` ``(K + 1, hidden)``
    (taken before any cast to the model dtype): the head in FP32, as HPS's ``:head`` level computes
    yes-minus-no.  The result ``(n, K + 1)`` in FP64, each row summing to 1."""
    return _distribution(_torch().softmax(_fp32_head(last_hidden, rows, "grade rows"), dim=-1))
