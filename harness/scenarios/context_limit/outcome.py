"""What became of one request near a context window, told from what the request and the answer
say: refused, answered whole, or answered after a silent truncation or shift.

Pure data in, an :class:`Outcome` out (``context_limit`` gathers the data, in process or over
HTTP); the verdict says which outcomes each probe allows under the case's ``require``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from harness.core.visible_text import visible


class Outcome(str, Enum):
    """What one request near the window got."""

    OK = "ok"  # answered whole, within the window
    ERROR = "error"  # refused: HTTP 4xx/5xx with a message, or a BackendError in process
    TRUNCATED = "truncated"  # answered, the server counting fewer prompt tokens than were sent
    SHIFTED = "shifted"  # answered past the server's own window (a context shift)
    ACCEPTED = "accepted"  # processed whole past the model's stated window: nothing enforces it
    STOPPED = "stopped"  # generation ended at the window, fewer tokens than asked, no error
    NO_ANSWER = "no_answer"  # no HTTP answer at all (the server died, a timeout)


class Probe(str, Enum):
    """The three requests of a case."""

    INSIDE = "inside"  # a prompt just inside the window
    PAST = "past_window"  # a prompt past the window by a margin
    GENERATION = "generation_past_window"  # prompt inside, prompt + max_tokens past


class WindowSource(str, Enum):
    """Where the window came from. Only a server's own window (its KV cache) is one it cannot
    go past without shifting; a model's stated length can be computed past (RoPE goes on)."""

    SERVER = "server"  # llama-server's /props or /slots n_ctx
    MODEL_CONFIG = "model_config"  # the model files' max_position_embeddings (or kin)
    PARAM = "param"  # the case's context_tokens


class Require(str, Enum):
    """What a request past the window must get for the case to pass."""

    ERROR = "error"  # a refusal; processing it whole (accepted) fails too
    NO_SILENT_LOSS = "no_silent_loss"  # a refusal or processing it whole; only loss fails


@dataclass(frozen=True)
class Window:
    tokens: int
    source: WindowSource
    detail: str = ""  # where exactly (``/props default_generation_settings.n_ctx``)

    @property
    def label(self) -> str:
        return f"{self.tokens} ({self.source.value}{': ' + self.detail if self.detail else ''})"


@dataclass(frozen=True)
class Answer:
    """One request and what came back. ``refused``: an error answer (HTTP status >= 400, or a
    BackendError in process); ``failure``: its one line (escaped), or why no answer came."""

    sent_tokens: int  # prompt tokens sent, by the model's own tokenizer
    max_tokens: int
    status: int | None = None  # the HTTP status; None in process or when no answer came
    refused: bool = False
    failure: str | None = None
    prompt_tokens: int | None = None  # what the server counted (usage); None: it did not say
    completion_tokens: int | None = None
    finish_reason: str | None = None


def truncation_tolerance(sent: int) -> int:
    """Tokens a server may count fewer than we did without it being a truncation: tokenizers of
    one vocabulary still split the odd word differently (BOS counts only the other way)."""
    return max(2, sent // 50)


def classify(answer: Answer, window: Window) -> Outcome:
    """The outcome of ``answer`` against ``window``."""
    if answer.refused:
        return Outcome.ERROR
    if answer.failure is not None:
        return Outcome.NO_ANSWER
    prompt = answer.prompt_tokens if answer.prompt_tokens is not None else answer.sent_tokens
    if prompt < answer.sent_tokens - truncation_tolerance(answer.sent_tokens):
        return Outcome.TRUNCATED
    completion = answer.completion_tokens or 0
    if prompt + completion > window.tokens:
        return Outcome.SHIFTED if window.source is WindowSource.SERVER else Outcome.ACCEPTED
    if completion < answer.max_tokens and prompt + completion >= window.tokens - 1:
        return Outcome.STOPPED
    return Outcome.OK


ALLOWED: dict[tuple[Probe, Require], frozenset[Outcome]] = {
    (Probe.INSIDE, Require.ERROR): frozenset({Outcome.OK, Outcome.STOPPED}),
    (Probe.INSIDE, Require.NO_SILENT_LOSS): frozenset({Outcome.OK, Outcome.STOPPED}),
    (Probe.PAST, Require.ERROR): frozenset({Outcome.ERROR}),
    (Probe.PAST, Require.NO_SILENT_LOSS): frozenset({Outcome.ERROR, Outcome.ACCEPTED}),
    (Probe.GENERATION, Require.ERROR): frozenset({Outcome.ERROR, Outcome.STOPPED, Outcome.OK}),
    (Probe.GENERATION, Require.NO_SILENT_LOSS): frozenset(
        {Outcome.ERROR, Outcome.STOPPED, Outcome.OK, Outcome.ACCEPTED}
    ),
}
"""The outcomes each probe passes with, per ``require``. A truncation, a shift or no answer
never passes; ``ok`` past the window cannot happen (the prompt alone is past it)."""


def describe(probe: Probe, answer: Answer, window: Window, outcome: Outcome) -> str:
    """One line with the numbers: what was sent, the window, what the server counted and did."""
    head = f"{probe.value}: {outcome.value}: sent {answer.sent_tokens} tokens"
    head += f" (max_tokens {answer.max_tokens}), window {window.label}"
    if outcome in (Outcome.ERROR, Outcome.NO_ANSWER):
        return f"{head}; {visible(answer.failure or 'no message', 240)}"
    counted = "not said" if answer.prompt_tokens is None else str(answer.prompt_tokens)
    generated = "not said" if answer.completion_tokens is None else str(answer.completion_tokens)
    tail = f"; counted {counted} prompt tokens, generated {generated}"
    if answer.finish_reason is not None:
        tail += f" (finish {visible(answer.finish_reason, 40)})"
    if outcome in (Outcome.TRUNCATED, Outcome.SHIFTED, Outcome.ACCEPTED):
        tail += ", answered anyway"
    return head + tail


def failure(
    probe: Probe, answer: Answer, window: Window, outcome: Outcome, require: Require
) -> str | None:
    """The case's failure line for this probe (None: the outcome is allowed)."""
    if outcome in ALLOWED[(probe, require)]:
        return None
    why = {
        Outcome.TRUNCATED: "silently truncated",
        Outcome.SHIFTED: "silently shifted past the window",
        Outcome.ACCEPTED: "past the window without an error (require: error)",
        Outcome.ERROR: "refused inside the window: the window is smaller than stated",
        Outcome.NO_ANSWER: "no answer",
        Outcome.STOPPED: "stopped early inside the window",
        Outcome.OK: "answered past the window",
    }[outcome]
    return f"{why}: {describe(probe, answer, window, outcome)}"
