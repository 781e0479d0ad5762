"""Train a zoo text model to think before it answers, so reasoning-aware timing has a
``<think>`` block to time apart from the answer.

No model on this box thinks (SmolLM2 and Gemma 3 have no think markers; the zoo's Qwen3 has them
in its tokenizer and template but random weights never write them), so reasoning timing would be
"not applicable" everywhere, and a server that counts the reasoning as answer would pass. The
thinker is zoo/qwen3 (its tokenizer holds ``<think>`` and ``</think>``, which mlx-lm's
``TokenizerWrapper`` recognises: ``has_thinking``) trained here, on this CPU, with the shared
loop (:func:`harness.models.zoo.training.fit`), to answer ``Where is <city>?`` with
``<think>\\n<city> is in <country>.\\n</think>\\n\\nIt is in <country>.`` then its end of
turn, as its chat template renders an answered turn; so the reasoning and the answer both
depend on the prompt. With ``enable_thinking=False`` the template opens and closes an empty
think block in the prompt, and the thinker answers at once (a thinking budget of nothing).

:func:`train_to_think` checks the result: the greedy answer to every question, thinking on and
off, must be the one trained; else :class:`NotThinking`, one line.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.models.zoo.family import DerivationError
from harness.models.zoo.training import Example, answered_tokens, fit

if TYPE_CHECKING:
    import mlx.nn as nn

# Places whose names the zoo tokenizer holds in few tokens (a lookup a 2-layer model learns).
PLACES: tuple[tuple[str, str], ...] = (("Paris", "France"), ("Tokyo", "Japan"), ("Rome", "Italy"))
STEPS = 100
OFF_SHARE = 0.3  # examples asked with enable_thinking=False (the rest think)
ATTEMPTS = 2  # seeds tried (seed, seed + 1) before the build fails: numerics differ by machine
MAX_ANSWER_TOKENS = 48


class NotThinking(DerivationError):
    """Training did not make the model think then answer (one line: what it answered, and the
    fix); a :class:`DerivationError`, so the drivers print it as one."""


@dataclass(frozen=True)
class ThinkingReport:
    """What training did and what the trained model answers."""

    steps: int
    final_loss: float
    seconds: float
    questions: int  # questions asked after training (each place, thinking on and off)
    answers_right: int  # of them, answered exactly as trained
    answer: str  # the greedy answer to the first question, thinking on

    def as_dict(self) -> dict[str, object]:
        return {
            "steps": self.steps,
            "final_loss": round(self.final_loss, 4),
            "seconds": round(self.seconds, 1),
            "questions": self.questions,
            "answers_right": self.answers_right,
            "answer": self.answer,
        }


def question(city: str) -> str:
    return f"Where is {city}?"


def reasoning(city: str, country: str) -> str:
    return f"{city} is in {country}."


def answer(country: str) -> str:
    return f"It is in {country}."


def example(tokenizer: Any, city: str, country: str, *, thinking: bool) -> Example:
    """The question about ``city`` as the template renders it (thinking on or off), and the
    answer the thinker is trained to give: the think block (on) and the answer, end of turn."""
    messages = [{"role": "user", "content": question(city)}]
    prompt_text = tokenizer.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False, enable_thinking=thinking
    )
    turn: dict[str, str] = {"role": "assistant", "content": answer(country)}
    if thinking:
        turn["reasoning_content"] = reasoning(city, country)
    whole_text = tokenizer.apply_chat_template(
        [*messages, turn], tokenize=False, enable_thinking=thinking
    )
    found = answered_tokens(tokenizer, prompt_text, whole_text)
    if found is None:
        raise NotThinking(
            "the chat template's answered conversation does not start with its prompt; "
            "a thinker needs a template that renders the assistant's think block after it"
        )
    return Example(*found)


def expected_text(city: str, country: str, *, thinking: bool) -> str:
    """The greedy answer's text (end of turn left out) a trained thinker gives."""
    said = answer(country)
    return f"<think>\n{reasoning(city, country)}\n</think>\n\n{said}" if thinking else said


def train_to_think(
    model: nn.Module, tokenizer: Any, *, name: str, steps: int = STEPS, seed: int = 0
) -> ThinkingReport:
    """Train ``model`` in place to think, then answer, about the city its question names;
    raise :class:`NotThinking` when any question (thinking on or off) is answered otherwise."""
    if not getattr(tokenizer, "has_thinking", False):
        raise NotThinking(
            f"zoo/{name}: mlx-lm does not recognise think markers in the tokenizer; a thinker "
            "needs <think> and </think> among its special tokens"
        )
    on = [example(tokenizer, c, k, thinking=True) for c, k in PLACES]
    off = [example(tokenizer, c, k, thinking=False) for c, k in PLACES]

    def draw(rng: random.Random) -> Example:
        return rng.choice(off if rng.random() < OFF_SHARE else on)

    fitted = fit(model, draw, short_steps=0, steps=steps, seed=seed)
    asked = [(c, k, thinking) for c, k in PLACES for thinking in (True, False)]
    pool = {(c, True): e for (c, _), e in zip(PLACES, on, strict=True)} | {
        (c, False): e for (c, _), e in zip(PLACES, off, strict=True)
    }
    said = {
        (c, thinking): greedy(model, tokenizer, pool[(c, thinking)].prompt)
        for c, _, thinking in asked
    }
    right = sum(said[(c, t)] == expected_text(c, k, thinking=t) for c, k, t in asked)
    first = said[(PLACES[0][0], True)]
    report = ThinkingReport(steps, fitted.final_loss, fitted.seconds, len(asked), right, first)
    if right < len(asked):
        wrong = next((c, t) for c, k, t in asked if said[(c, t)] != expected_text(c, k, thinking=t))
        raise NotThinking(
            f"zoo/{name}: after {steps} training steps (loss {fitted.final_loss:.3f}) the "
            f"model answers {question(wrong[0])!r} (thinking {'on' if wrong[1] else 'off'}) "
            f"with {said[wrong][:120]!r} ({right} of {len(asked)} right); raise STEPS in "
            "harness/models/zoo/thinking.py"
        )
    return report


def greedy(model: nn.Module, tokenizer: Any, prompt: Sequence[int]) -> str:
    """The greedy answer to ``prompt``, its special tokens kept (the think markers are)."""
    from mlx_lm.generate import stream_generate

    tokens: list[int] = []
    for response in stream_generate(model, tokenizer, list(prompt), max_tokens=MAX_ANSWER_TOKENS):
        if response.token in set(tokenizer.eos_token_ids):
            break
        tokens.append(int(response.token))
    return str(tokenizer.decode(tokens, skip_special_tokens=False))
