"""The tool-calling request the harness asks: two tools, two few-shot calls, one question.

``api_contracts``' tool checks send it to servers; the zoo's tool-calling models are trained on
its shape (:mod:`harness.models.zoo.calling`), so what a check asks is what they learned to
answer. Arguments in the few-shot calls are JSON strings, as OpenAI clients send them (servers
``json.loads`` them before the chat template sees them).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

TOOL_SPECS: tuple[tuple[str, str, str, str], ...] = (
    ("get_weather", "Current weather in a city", "city", "the city's name"),
    ("get_time", "Current time in a time zone", "timezone", "an IANA time zone"),
)

TOOLS: tuple[dict[str, Any], ...] = tuple(
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {argument: {"type": "string", "description": about}},
                "required": [argument],
            },
        },
    }
    for name, description, argument, about in TOOL_SPECS
)


def weather_question(city: str) -> str:
    """The question that asks for ``get_weather(city=city)``."""
    return f"What is the weather in {city} right now? Use the get_weather tool."


def time_question(timezone: str) -> str:
    """The question that asks for ``get_time(timezone=timezone)`` (the zone's city named)."""
    return f"What time is it in {timezone.rsplit('/', 1)[-1]}? Use the get_time tool."


def pair_question(first: str, second: str) -> str:
    """The question that asks for two calls in one turn: ``get_weather`` for each city."""
    return f"What is the weather in {first} and in {second} right now? Use the get_weather tool."


TOOL_PROMPT = weather_question("Paris")
PAIR_PROMPT = pair_question("Paris", "Rome")  # mlx-lm #1170: two calls in one turn
EXPECTED_CALL: tuple[str, dict[str, str]] = ("get_weather", {"city": "Paris"})

# How the tools are named: "snake" (get_weather, get_time) or "hyphen" (get-weather, get-time,
# as MCP servers and OpenAPI operation ids name them; mlx-lm #1150: Gemma 4's parser read only
# \w+ names before 0.31.3). The same request, tools, examples and question, renamed.
TOOL_NAMES: tuple[str, ...] = ("snake", "hyphen")


def tool_name(name: str, names: str = "snake") -> str:
    """``name`` (a snake_case tool name) as the ``names`` style spells it."""
    if names not in TOOL_NAMES:
        raise ValueError(f"tool names {names!r}: expected one of {', '.join(TOOL_NAMES)}")
    return name.replace("_", "-") if names == "hyphen" else name


def renamed_text(text: str, names: str = "snake") -> str:
    """``text`` (a question) with each tool's snake_case name spelled in the ``names`` style."""
    for name, *_ in TOOL_SPECS:
        text = text.replace(name, tool_name(name, names))
    return text


def tools_named(names: str = "snake") -> tuple[dict[str, Any], ...]:
    """:data:`TOOLS` with their names spelled in the ``names`` style."""
    return tuple(
        {
            **tool,
            "function": {**tool["function"], "name": tool_name(tool["function"]["name"], names)},
        }
        for tool in TOOLS
    )


def expected_call(names: str = "snake") -> tuple[str, dict[str, str]]:
    """:data:`EXPECTED_CALL` with its name spelled in the ``names`` style."""
    return (tool_name(EXPECTED_CALL[0], names), dict(EXPECTED_CALL[1]))


def example_turns(
    user: str, name: str, arguments: dict[str, str], index: int
) -> list[dict[str, Any]]:
    """A user turn and the assistant's call, its arguments a JSON string as OpenAI sends them
    (mlx-lm 0.30 parses them with ``json.loads`` and its generation thread dies on an object;
    servers hand the template an object). No tool result follows: SmolLM2-135M given example
    results writes a ``<tool_response>`` itself instead of a call; given two bare calls, it
    calls."""
    call = {
        "id": f"call_example_{index}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return [
        {"role": "user", "content": user},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]


FEW_SHOT: tuple[dict[str, Any], ...] = (
    *example_turns(time_question("Asia/Tokyo"), "get_time", {"timezone": "Asia/Tokyo"}, 1),
    *example_turns(weather_question("London"), "get_weather", {"city": "London"}, 2),
)


def tool_messages(question: str = TOOL_PROMPT, names: str = "snake") -> list[dict[str, Any]]:
    """The tool request's messages: the two example exchanges, then the question, each tool
    name (in the questions and the example calls) spelled in the ``names`` style."""
    if names == "snake":
        return [*FEW_SHOT, {"role": "user", "content": question}]
    renamed: list[dict[str, Any]] = []
    for message in FEW_SHOT:
        calls = message.get("tool_calls")
        if calls:
            calls = [
                {
                    **c,
                    "function": {**c["function"], "name": tool_name(c["function"]["name"], names)},
                }
                for c in calls
            ]
            renamed.append({**message, "tool_calls": calls})
        else:
            renamed.append({**message, "content": renamed_text(message["content"], names)})
    return [*renamed, {"role": "user", "content": renamed_text(question, names)}]


def as_served(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as a server hands them to the chat template: each call's JSON-string
    arguments parsed into an object (mlx_lm.server's ``process_message_content``; templates
    write them with ``tojson``); arguments that do not parse are left as they are."""
    served: list[dict[str, Any]] = []
    for message in messages:
        calls = message.get("tool_calls")
        if not calls:
            served.append(dict(message))
            continue
        parsed = []
        for call in calls:
            function = dict(call.get("function") or {})
            if isinstance(function.get("arguments"), str):
                with contextlib.suppress(ValueError):
                    function["arguments"] = json.loads(function["arguments"])
            parsed.append({**call, "function": function})
        served.append({**message, "tool_calls": parsed})
    return served
