"""Deterministic prompts of an exact token length, built from real text."""

from __future__ import annotations

from harness.backends.base import LoadedModel

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
