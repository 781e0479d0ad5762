"""Deterministic prompts of an exact token length, built from real text, and the params of a
case whose prompt is either plain text of a length or chat turns (:class:`PromptSource`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Self

from pydantic import Field, model_validator

from harness.backends.base import LoadedModel
from harness.scenarios.base import Params

TEXT_PROMPT_TOKENS = 64

FILLER = (
    "The harness measures how fast a local model reads a prompt and writes an answer. "
    "Each run records the machine, the package versions and every raw sample, so that "
    "a later run can be compared with this one and a regression can be told from noise. "
    "Rivers run to the sea; the sea does not fill. Seven ships sailed at dawn, carrying "
    "grain, copper, 42 crates of books and a letter for the harbour master of Lisbon. "
)


def text_prompt(model: LoadedModel, n_tokens: int) -> list[int]:
    """Exactly ``n_tokens`` token ids of ordinary text (the filler repeated as needed)."""
    if n_tokens < 1:
        raise ValueError("a prompt needs at least one token")
    unit = model.encode(FILLER)
    if not unit:
        raise ValueError("the tokenizer produced no tokens for the filler text")
    repeats = n_tokens // len(unit) + 1
    return (unit * repeats)[:n_tokens]


def text_of_about(n_tokens: int, count_tokens: Callable[[str], int] | None) -> str:
    """Ordinary text of ``n_tokens`` tokens by ``count_tokens`` (the most words that do not go
    over; at least one word), or of about 4 characters a token when there is no tokenizer."""
    words = (FILLER * (n_tokens // 8 + 2)).split()
    if count_tokens is None:
        out: list[str] = []
        for word in words:
            if len(" ".join([*out, word])) > 4 * n_tokens and out:
                break
            out.append(word)
        return " ".join(out)
    lo, hi = 1, len(words)  # the largest prefix of words within n_tokens
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= n_tokens:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def numbered(marker: str, index: int, text: str) -> str:
    """The prompt of a case's ``index``-th request: a distinct start each (``marker`` is new
    every run), so no request reuses a server's prompt cache."""
    return f"{marker}-{index}: {text}"


class PromptSource(Params):
    """A prompt of ``prompt_tokens`` tokens of plain text, or ``prompts``: user turns through
    the chat template, one per run in turn; not both."""

    prompt_tokens: int | None = Field(
        None,
        ge=1,
        description=f"prompt length in tokens of plain text (unset: {TEXT_PROMPT_TOKENS}); not "
        "with prompts",
    )
    prompts: list[str] | None = Field(
        None,
        min_length=1,
        description="user turns through the chat template, one per run in turn; unset: "
        "prompt_tokens tokens of plain text",
    )

    @model_validator(mode="after")
    def _one_prompt_source(self) -> Self:
        if self.prompts is not None and self.prompt_tokens is not None:
            raise ValueError("give prompt_tokens (plain text) or prompts (chat turns), not both")
        return self

    @property
    def text_tokens(self) -> int:
        """The plain-text prompt's length (and the workload's estimate with chat turns)."""
        return self.prompt_tokens or TEXT_PROMPT_TOKENS
