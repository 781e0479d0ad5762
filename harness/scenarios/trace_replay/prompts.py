"""The prompt text of each request of a trace: its shared blocks, then text of its own, to its
input length; a session's later turns carry the turns before them.

Every block is ordinary text behind a label naming the block and the run's marker, so requests
that share blocks share their first tokens exactly (a server's prefix cache can serve them) and
no request of this run shares more than its first tokens with one of another run. Texts are made
before the replay starts (tokenizing while requests are due would delay them), each length once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.scenarios.prompts import text_of_about
from harness.scenarios.trace_replay.trace import TraceRequest

LABEL_TOKENS = 6  # about what a block's or request's label takes


@dataclass(frozen=True)
class Turn:
    """What a session's turn leaves to the next: its prompt and the answer it got."""

    prompt: str
    answer: str


class PromptBook:
    """Prompt texts for one replay (a run's marker, the model's tokenizer)."""

    def __init__(self, marker: str, count_tokens: Callable[[str], int] | None) -> None:
        self.marker = marker
        self.count_tokens = count_tokens
        self._fillers: dict[int, str] = {}
        self._blocks: dict[tuple[str, int], str] = {}

    def filler(self, tokens: int) -> str:
        tokens = max(tokens, 1)
        if tokens not in self._fillers:
            self._fillers[tokens] = text_of_about(tokens, self.count_tokens)
        return self._fillers[tokens]

    def block(self, block: tuple[str, int]) -> str:
        if block not in self._blocks:
            name, tokens = block
            body = self.filler(tokens - LABEL_TOKENS)
            self._blocks[block] = f"[{self.marker} {name}] {body}\n"
        return self._blocks[block]

    def own_text(self, index: int, request: TraceRequest) -> str:
        """The request's prompt without a session's earlier turns: the blocks that fit in its
        input length, then text of its own to the rest of it."""
        used, shared = 0, []
        for block in request.blocks:
            if used + block[1] > request.input_tokens:
                break
            shared.append(block)
            used += block[1]
        head = "".join(self.block(b) for b in shared)
        rest = request.input_tokens - used
        return f"{head}{self.marker}-{index}: {self.filler(rest - LABEL_TOKENS)}"


def with_history(history: Sequence[Turn], own: str) -> str:
    """A later turn's prompt on the completions endpoint: the turns before, each with its
    answer, then its own text."""
    return "".join(f"{t.prompt}{t.answer}\n\n" for t in history) + own


def chat_messages(history: Sequence[Turn], own: str) -> list[dict[str, str]]:
    """The same on the chat endpoint: a user and an assistant message per earlier turn."""
    messages: list[dict[str, str]] = []
    for turn in history:
        messages += [
            {"role": "user", "content": turn.prompt},
            {"role": "assistant", "content": turn.answer},
        ]
    return [*messages, {"role": "user", "content": own}]
