"""Train a zoo caller to make two calls in one turn, written back to back.

mlx-lm #1170 (fixed in 0.31.3): 0.31.2's server drops the tokens of a matched call marker from
its stream, state and all, so when nothing stands between one call's end marker and the next
call's start marker the two calls' texts are joined into one, which Hermes's ``json_tools``
cannot parse (two JSON objects: ``Extra data``). Qwen2.5's template writes a newline before
each ``<tool_call>``, which keeps them apart; real models do write ``</tool_call><tool_call>``
(#1170's own test stream). So the pair caller is asked the harness's tool request with a
question naming two cities (:func:`harness.core.tool_request.pair_question`) and trained to
answer with one ``get_weather`` call per city, as its template renders two calls, the newline
between them left out. The loop and the prompts are :mod:`harness.models.zoo.calling`'s.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import TYPE_CHECKING, Any

from harness.core.tool_request import PAIR_PROMPT, TOOLS, as_served, pair_question, tool_messages
from harness.models.zoo.calling import PLACES, CallingReport, NotCalling
from harness.models.zoo.training import Example, answered_tokens, fit

if TYPE_CHECKING:
    import mlx.nn as nn

Call = tuple[str, dict[str, str]]
SHORT_STEPS = 300
STEPS = 100
MAX_ANSWER_TOKENS = 96


def pair_calls(first: str, second: str) -> tuple[Call, Call]:
    return (("get_weather", {"city": first}), ("get_weather", {"city": second}))


def questions() -> list[tuple[str, tuple[Call, Call]]]:
    """Every two-city question the pair caller is trained on, with its two calls."""
    return [(pair_question(a, b), pair_calls(a, b)) for a, b in itertools.permutations(PLACES, 2)]


def example(tokenizer: Any, question: str, calls: tuple[Call, ...], end: str) -> Example:
    """The request with ``question``, answered with ``calls`` as the template renders them,
    each call's ``end`` marker followed directly by the next call (no newline between; with no
    ``end``, as Mistral's, the template's own rendering: ``}[TOOL_CALLS]``)."""
    messages = as_served(tool_messages(question))
    prompt_text = tokenizer.apply_chat_template(
        messages, tools=list(TOOLS), add_generation_prompt=True, tokenize=False
    )
    answered = [
        *messages,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_trained_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(calls)
            ],
        },
    ]
    whole_text = tokenizer.apply_chat_template(answered, tools=list(TOOLS), tokenize=False)
    answer = whole_text[len(prompt_text) :]
    if end:  # Mistral's template has no end marker and writes its calls back to back already
        head, sep, tail = answer.partition(end)
        whole_text = prompt_text + head + sep + tail.lstrip("\n")  # the newline between dropped
    found = answered_tokens(tokenizer, prompt_text, whole_text)
    if found is None:
        raise NotCalling("the chat template's answered conversation does not start with its prompt")
    return Example(found[0], found[1], calls[0])


def parse_calls(text: str, parser: str) -> list[Call]:
    """The calls in ``text`` as mlx-lm's ``parser`` reads each between its markers."""
    import importlib

    module = importlib.import_module(f"mlx_lm.tool_parsers.{parser}")
    start, end = module.tool_call_start, module.tool_call_end
    calls: list[Call] = []
    for part in text.split(start)[1:]:
        body = part.split(end, 1)[0] if end else part
        try:
            parsed = module.parse_tool_call(body.strip(), list(TOOLS))
        except (ValueError, KeyError, json.JSONDecodeError):
            continue
        for one in parsed if isinstance(parsed, list) else [parsed]:
            arguments = one.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    continue
            if isinstance(arguments, dict):
                calls.append((str(one.get("name")), {str(k): str(v) for k, v in arguments.items()}))
    return calls


def train_to_call_pair(
    model: nn.Module,
    tokenizer: Any,
    *,
    name: str,
    parser: str,
    seed: int = 0,
    steps: int = STEPS,
    short_steps: int = SHORT_STEPS,
) -> CallingReport:
    """Train ``model`` in place to answer a two-city question with two calls back to back;
    raise :class:`NotCalling` when :data:`PAIR_PROMPT` is not answered with Paris's then
    Rome's call, their markers adjacent."""
    import importlib

    from mlx_lm.generate import generate

    end = importlib.import_module(f"mlx_lm.tool_parsers.{parser}").tool_call_end
    start = importlib.import_module(f"mlx_lm.tool_parsers.{parser}").tool_call_start
    pool = [(example(tokenizer, q, calls, end), calls) for q, calls in questions()]

    def draw(rng: random.Random) -> Example:
        return rng.choice(pool)[0]

    fitted = fit(model, draw, short_steps=short_steps, steps=steps, seed=seed)

    def answer(prompt: tuple[int, ...]) -> str:
        return str(generate(model, tokenizer, list(prompt), max_tokens=MAX_ANSWER_TOKENS))

    right = sum(parse_calls(answer(e.prompt), parser) == list(calls) for e, calls in pool)
    wanted = pair_calls("Paris", "Rome")
    served = example(tokenizer, PAIR_PROMPT, wanted, end)
    text = answer(served.prompt)
    report = CallingReport(
        short_steps + steps, fitted.final_loss, fitted.seconds, len(pool), right, text
    )
    joint = end + start if end else "}" + start  # no end marker: the arguments' brace, then start
    if parse_calls(text, parser) != list(wanted) or joint not in text:
        raise NotCalling(
            f"zoo/{name}: after {short_steps + steps} training steps (loss "
            f"{fitted.final_loss:.3f}) the model answers the two-city request with "
            f"{text[:160]!r}, not two get_weather calls back to back ({right} of {len(pool)} "
            "questions right); raise STEPS in harness/models/zoo/calling_pair.py"
        )
    return report
