"""Pair encodings shared by every backend: bounded texts and the token ids of a (query, document) pair.

Tokenizing a whole 50 MB document to keep its first tokens costs gigabytes, so texts are cut to a
character bound first ([`bounded_text`][tierank.hps.encodings.bounded_text]).  A cross-encoder reads the pair as its tokenizer encodes
it ([`pair_ids`][tierank.hps.encodings.pair_ids]: the HF backend pads these rows into a batch, the vLLM backend sends them as
they are).  Nothing here imports torch or a model library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["bounded_text", "token_count", "bounded_pair_text", "pair_ids"]


def bounded_text(
    text: str, n_tokens: int, count: Callable[[str], int], chars_per_token: int = 8
) -> str:
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


def token_count(tokenizer: Any) -> Callable[[str], int]:
    """Counts a text's tokens with a transformers tokenizer (no special tokens)."""
    return lambda t: len(tokenizer(t, add_special_tokens=False)["input_ids"])


def bounded_pair_text(tokenizer: Any, text: str, max_length: int) -> str:
    """``text`` cut to a character bound that keeps every token a pair of ``max_length`` tokens can hold."""
    return bounded_text(text, max_length, token_count(tokenizer))


def pair_ids(tokenizer: Any, query: str, doc: str, max_length: int) -> dict:
    """A cross-encoder's input of one pair as its tokenizer encodes it, less padding: ``prompt_token_ids``
    and, for BERT-style models, ``token_type_ids`` (the segment ids).

    >>> class T:
    ...     def __call__(self, a, b="", truncation=None, max_length=None, add_special_tokens=True):
    ...         return {"input_ids": [len(w) for w in (a + " " + b).split()][:max_length]}
    >>> pair_ids(T(), "a bb", "ccc", 8)
    {'prompt_token_ids': [1, 2, 3]}
    """
    enc = tokenizer(
        query, bounded_pair_text(tokenizer, doc, max_length), truncation=True, max_length=max_length
    )
    out = {"prompt_token_ids": list(enc["input_ids"])}
    if "token_type_ids" in enc:
        out["token_type_ids"] = list(enc["token_type_ids"])
    return out
