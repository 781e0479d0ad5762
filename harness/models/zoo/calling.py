"""Train a zoo text model to call the tools it is offered, so tool-call checks have calls to judge.

A random-weight model never writes ``<tool_call>`` (and a content-bearing one is kept from it),
so every check of how a server parses, streams and finishes a call is "no tool call made" (not
applicable), whatever the server does: a server that drops a call, or names the wrong
``finish_reason``, passes. A caller is a zoo family's tiny model trained here, on this CPU, for
a few hundred steps, to answer the harness's own tool request
(:mod:`harness.core.tool_request`: two tools, two few-shot calls, one question) with the call the
question asks for, in the family's own markup (its chat template renders the target), then its
end-of-turn token. The question names a place, and the call's argument is that place, so the
answer depends on the prompt.

Training has two phases. First the questions alone (:data:`SHORT_STEPS`): the part of the
request after its long common prefix (tools and few-shot turns, ~650 tokens), where the model
learns which call and which argument each question asks for; a step costs a tenth of a whole
one. Then the whole request (:data:`STEPS`): the prefix is run every few steps without
gradients, and the batch's questions attend to its keys and values, so the model learns to
answer the last question behind the examples (the loop:
:func:`harness.models.zoo.training.fit`, shared with the thinker).

:func:`train_to_call` checks the result: the greedy answer to the request the checks send must
parse, with the family's mlx-lm tool parser, to ``get_weather(city="Paris")``; else
:class:`NotCalling`, one line.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.core.tool_request import (
    TOOL_PROMPT,
    as_served,
    expected_call,
    renamed_text,
    time_question,
    tool_messages,
    tool_name,
    tools_named,
    weather_question,
)
from harness.models.zoo.family import DerivationError
from harness.models.zoo.training import Example, answered_tokens, fit

if TYPE_CHECKING:
    import mlx.nn as nn

# Places whose names the zoo tokenizer holds in few tokens: the model learns which question
# token maps to which argument (a lookup), not a general copy a 2-layer model learns slowly.
PLACES: tuple[str, ...] = ("Paris", "Tokyo", "Rome", "France", "Japan", "Italy")
ZONES: tuple[str, ...] = ("Asia/Tokyo", "Europe/Paris", "Europe/Rome")
SHORT_STEPS = 300  # first the questions alone (cheap: no prefix), where the lookup is learnt
STEPS = 100  # then with the whole request in front (its prefix's keys and values)
ATTEMPTS = 2  # seeds tried (seed, seed + 1) before the build fails: numerics differ by machine
WEATHER_SHARE = 0.7  # the rest ask for the time
MAX_ANSWER_TOKENS = 64
# What a caller that calls inside its open think block (``call_in_thought``) thinks first.
THOUGHT = "I will call the function."


class NotCalling(DerivationError):
    """Training did not make the model call (one line: what it answered, and the fix); a
    :class:`DerivationError`, so the drivers print it as one."""


@dataclass(frozen=True)
class CallingReport:
    """What training did and what the trained model answers."""

    steps: int
    final_loss: float
    seconds: float
    questions: int  # questions asked after training (every place and zone)
    calls_right: int  # of them, answered with exactly the call asked for
    answer: str  # the greedy answer to the checks' own request

    def as_dict(self) -> dict[str, object]:
        return {
            "steps": self.steps,
            "final_loss": round(self.final_loss, 4),
            "seconds": round(self.seconds, 1),
            "questions": self.questions,
            "calls_right": self.calls_right,
            "answer": self.answer,
        }


def questions(names: str = "snake") -> list[tuple[str, tuple[str, dict[str, str]]]]:
    """Every question the caller is trained on, with the call it asks for (the tools named in
    the ``names`` style of :mod:`harness.core.tool_request`)."""
    weather = [
        (renamed_text(weather_question(p), names), (tool_name("get_weather", names), {"city": p}))
        for p in PLACES
    ]
    times = [
        (renamed_text(time_question(z), names), (tool_name("get_time", names), {"timezone": z}))
        for z in ZONES
    ]
    return [*weather, *times]


def example(
    tokenizer: Any,
    question: str,
    call: tuple[str, dict[str, str]],
    names: str = "snake",
    thought: str | None = None,
    marker: str = "<tool_call>",
) -> Example:
    """The request with ``question`` as the family's template renders it, and its answer.

    With ``thought`` the answer is that of a model whose prompt opens its think block (the
    template's generation prompt ends in ``<think>``) and which calls before closing it, as
    Kimi K2.5 does (mlx-lm #1160): the thought, a newline, then the call's markup (from its
    ``marker`` on) as the template renders it."""
    messages = as_served(tool_messages(question, names))
    tools = list(tools_named(names))
    prompt_text = tokenizer.apply_chat_template(
        messages, tools=tools, add_generation_prompt=True, tokenize=False
    )
    answered = [
        *messages,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_trained",
                    "type": "function",
                    "function": {"name": call[0], "arguments": call[1]},
                }
            ],
        },
    ]
    whole_text = tokenizer.apply_chat_template(answered, tools=tools, tokenize=False)
    if thought is not None:
        whole_text = f"{prompt_text}{thought}\n{whole_text[whole_text.rindex(marker) :]}"
    found = answered_tokens(tokenizer, prompt_text, whole_text)
    if found is None:
        raise NotCalling(
            "the chat template's answered conversation does not start with its prompt; "
            "a caller needs a template that renders the assistant's call after the prompt"
        )
    return Example(*found, call)


def train_to_call(
    model: nn.Module,
    tokenizer: Any,
    *,
    name: str,
    parser: str,
    steps: int = STEPS,
    short_steps: int = SHORT_STEPS,
    seed: int = 0,
    names: str = "snake",
    thought: str | None = None,
) -> CallingReport:
    """Train ``model`` in place to answer the tool request (its tools named in the ``names``
    style) with the call its question asks for (after ``thought``, inside the think block its
    prompt opens, when given: :func:`example`); raise :class:`NotCalling` when the checks' own
    request is not answered with ``get_weather(city="Paris")`` (so named) parsed by mlx-lm's
    ``parser`` module."""
    import importlib

    marker = importlib.import_module(f"mlx_lm.tool_parsers.{parser}").tool_call_start
    pool = [example(tokenizer, q, call, names, thought, marker) for q, call in questions(names)]
    weather_name = tool_name("get_weather", names)
    weather = [e for e in pool if e.call[0] == weather_name]
    times = [e for e in pool if e.call[0] != weather_name]

    def draw(rng: random.Random) -> Example:
        return rng.choice(weather if rng.random() < WEATHER_SHARE else times)

    fitted = fit(model, draw, short_steps=short_steps, steps=steps, seed=seed)
    loss_value, seconds = fitted.final_loss, fitted.seconds

    right = sum(_greedy_call(model, tokenizer, e.prompt, parser, names)[1] == e.call for e in pool)
    wanted = expected_call(names)
    served = example(tokenizer, renamed_text(TOOL_PROMPT, names), wanted, names, thought, marker)
    answer, call = _greedy_call(model, tokenizer, served.prompt, parser, names)
    report = CallingReport(short_steps + steps, loss_value, seconds, len(pool), right, answer)
    if call != wanted:
        raise NotCalling(
            f"zoo/{name}: after {short_steps + steps} training steps (loss {loss_value:.3f}) "
            f"the model answers the tool request with {answer[:120]!r}, not "
            f"{wanted[0]}(city='Paris') ({right} of {len(pool)} questions right); raise STEPS in "
            "harness/models/zoo/calling.py or check the family's template"
        )
    return report


def _greedy_call(
    model: nn.Module, tokenizer: Any, prompt: Sequence[int], parser: str, names: str = "snake"
) -> tuple[str, tuple[str, dict[str, str]] | None]:
    """The greedy answer to ``prompt`` and the call mlx-lm's ``parser`` reads from it (None
    when it reads none)."""
    from mlx_lm.generate import generate

    text = generate(model, tokenizer, list(prompt), max_tokens=MAX_ANSWER_TOKENS, verbose=False)
    return text, parse_call(text, parser, names)


def parse_call(text: str, parser: str, names: str = "snake") -> tuple[str, dict[str, str]] | None:
    """The one call in ``text`` as mlx-lm's tool parser module ``parser`` reads it, between its
    start and end markers; None when there is none or it does not parse."""
    import importlib

    module = importlib.import_module(f"mlx_lm.tool_parsers.{parser}")
    start, end = module.tool_call_start, module.tool_call_end
    if start not in text:
        return None
    body = text.split(start, 1)[1]
    if end:
        body = body.split(end, 1)[0]
    try:
        parsed = module.parse_tool_call(body.strip(), list(tools_named(names)))
    except (ValueError, KeyError, json.JSONDecodeError):
        return None
    if isinstance(parsed, list):
        if len(parsed) != 1:
            return None
        parsed = parsed[0]
    arguments = parsed.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return str(parsed.get("name")), {str(k): str(v) for k, v in arguments.items()}
