"""The prompts of the generative rerankers, shared by every backend (HF and vLLM build the same texts).

[`YesNoPrompts`][tierank.hps.prompts.YesNoPrompts] builds the judge prompt of a yes/no reranker (Qwen3-Reranker style: system
instruction, ``<Query>``, ``<Document>``, "Answer only yes or no") in the tokenizer's chat template,
the document cut to ``max_doc_tokens`` tokens; [`Rank1Prompts`][tierank.hps.prompts.Rank1Prompts] builds Rank1's prompt, lets the
engine reason (``reason``, the backend's greedy generation) and reads the answer after ``</think>``.
Both need only a tokenizer: a scorer mixes one in and provides ``tokenizer`` and its settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tierank.errors import TierankError
from tierank.hps.encodings import bounded_text

__all__ = [
    "DEFAULT_SYSTEM",
    "DEFAULT_INSTRUCTION",
    "RANK1_PROMPT",
    "GRADED_SYSTEM",
    "GRADED_PROMPT",
    "resolve_token",
    "YesNoPrompts",
    "Rank1Prompts",
]

DEFAULT_SYSTEM = (
    "Judge whether the Document meets the requirements based on the Query provided. "
    'Note that the answer can only be "yes" or "no".'
)
DEFAULT_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"

#: Rank1's prompt (Weller et al., 2025): the model reasons inside <think> and answers true/false.
RANK1_PROMPT = (
    "Determine if the following passage is relevant to the query. "
    "Answer only with 'true' or 'false'.\n"
    "Query: {query}\n"
    "Passage: {passage}"
)

#: The graded judge's system line and prompt (UMBRELA-style, Upadhyay et al., 2024: the four grades of the TREC
#: RAG 2024 assessors); the model answers with one grade digit, whose next-token probability is read.
GRADED_SYSTEM = (
    "You are a search quality rater. You judge how well a passage answers a search query."
)
GRADED_PROMPT = (
    "Grade the passage for the query on a scale of 0 to {top}:\n"
    "0 = the passage has nothing to do with the query;\n"
    "1 = the passage is on the topic of the query but does not answer it;\n"
    "2 = the passage partly answers the query, or the answer is unclear or buried in other text;\n"
    "3 = the passage is devoted to the query and holds the exact answer.\n"
    "Query: {query}\n"
    "Passage: {passage}\n"
    "Answer with the grade only, one digit from 0 to {top}."
)


def resolve_token(tokenizer: Any, word: str) -> int:
    """The id of a single token spelling ``word`` (tried as is, then with a leading space)."""
    variants = [word, " " + word.strip(), word.strip()]
    for v in dict.fromkeys(variants):
        ids = tokenizer.encode(v, add_special_tokens=False)
        if len(ids) == 1:
            return int(ids[0])
    raise TierankError(
        f"the tokenizer has no single token for {word!r}; pass yes_token/no_token explicitly"
    )


class YesNoPrompts:
    """The yes/no judge prompt of a (query, document) pair, from ``tokenizer`` and the settings below."""

    tokenizer: Any
    max_doc_tokens: int
    system: str
    instruction: str | None

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def truncate(self, doc: str) -> str:
        """The first ``max_doc_tokens`` tokens of ``doc``; a long document is cut to a character bound
        first, so memory and time are bounded by the budget, not by the document."""
        doc = bounded_text(doc, self.max_doc_tokens, self.count_tokens)
        doc_ids = self.tokenizer.encode(doc, add_special_tokens=False)[: self.max_doc_tokens]
        return self.tokenizer.decode(doc_ids)

    def prompt(self, query: str, doc: str) -> str:
        doc = self.truncate(doc)
        parts = []
        if self.instruction:
            parts.append(f"<Instruct>: {self.instruction}")
        parts += [f"<Query>: {query}", f"<Document>: {doc}", "Answer only yes or no."]
        messages = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": "\n".join(parts)},
        ]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        return f"{self.system}\n\n{messages[1]['content']}\nAnswer:"

    def pair_texts(self, query: str, docs: Sequence[str]) -> tuple[list[str], list[str] | None]:
        """Final prompt texts (whose last position is the answer slot) and reasoning, if any."""
        return [self.prompt(query, d) for d in docs], None

    def graded_prompt(self, query: str, doc: str, top: int = 3) -> str:
        """The graded judge prompt (`GRADED_PROMPT`, grades ``0..top``) in the chat template: the next
        token after it is the answer slot, read over the grade digits."""
        user = GRADED_PROMPT.format(query=query, passage=self.truncate(doc), top=top)
        messages = [
            {"role": "system", "content": GRADED_SYSTEM},
            {"role": "user", "content": user},
        ]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        return f"{GRADED_SYSTEM}\n\n{user}\nGrade:"


class Rank1Prompts(YesNoPrompts):
    """What a Rank1-style scorer adds to a yes/no one, on any backend: Rank1's prompt (``template``) in the
    chat template followed by ``<think>``, the texts the answer is read from (prompt, greedy reasoning
    ([`reason`][tierank.hps.prompts.Rank1Prompts.reason], the backend generating), then ``</think>``) and the metadata."""

    template: str = RANK1_PROMPT
    budget: int

    def prompt(self, query: str, doc: str) -> str:
        user = self.template.format(query=query, passage=self.truncate(doc))
        if getattr(self.tokenizer, "chat_template", None):
            head = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
            )
        else:
            head = user + "\n"
        return head + "<think>\n"

    def reason(self, prompts: Sequence[str]) -> list[str]:
        """Greedy continuations of at most ``budget`` tokens (the backend's
        [`continuations`][tierank.hps.prompts.Rank1Prompts.continuations]), cut at ``</think>``; none at budget 0."""
        if self.budget == 0:
            return ["" for _ in prompts]
        return [text.split("</think>")[0].strip() for text in self.continuations(prompts)]

    def continuations(self, prompts: Sequence[str]) -> list[str]:
        """The backend's greedy generation: the text of at most ``budget`` new tokens after each prompt."""
        raise NotImplementedError

    def pair_texts(self, query: str, docs: Sequence[str]) -> tuple[list[str], list[str] | None]:
        prompts = [self.prompt(query, d) for d in docs]
        reasoning = self.reason(prompts)
        finals = [p + r + ("\n" if r else "") + "</think>\n" for p, r in zip(prompts, reasoning)]
        return finals, reasoning

    def metadata(self) -> dict:
        meta = super().metadata()  # type: ignore[misc]  # the scorer's, next in the method order
        meta.update({"budget": self.budget, "answer_tokens": ["true", "false"]})
        return meta
