"""The harness's tool request: its messages, and the form servers hand a chat template."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.core.tool_request import (
    EXPECTED_CALL,
    FEW_SHOT,
    TOOL_PROMPT,
    TOOLS,
    as_served,
    time_question,
    tool_messages,
    weather_question,
)


def test_the_request() -> None:
    messages = tool_messages()
    assert messages[-1] == {"role": "user", "content": TOOL_PROMPT}
    assert messages[:-1] == list(FEW_SHOT)
    assert [t["function"]["name"] for t in TOOLS] == ["get_weather", "get_time"]
    assert weather_question("Paris") == TOOL_PROMPT and EXPECTED_CALL[1] == {"city": "Paris"}
    assert time_question("Asia/Tokyo") == "What time is it in Tokyo? Use the get_time tool."
    assert tool_messages("Q?")[-1]["content"] == "Q?"
    for message in FEW_SHOT:  # arguments as OpenAI clients send them: JSON strings
        for call in message.get("tool_calls", []):
            assert isinstance(call["function"]["arguments"], str)


def _call(arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
        ],
    }


@pytest.mark.parametrize(
    ("message", "arguments"),
    [
        (_call('{"city": "Rome"}'), {"city": "Rome"}),  # a JSON string: parsed
        (_call({"city": "Rome"}), {"city": "Rome"}),  # already an object: kept
        (_call("not json"), "not json"),  # does not parse: left as it is
    ],
)
def test_as_served_parses_call_arguments(message: dict[str, Any], arguments: Any) -> None:
    (served,) = as_served([message])
    assert served["tool_calls"][0]["function"]["arguments"] == arguments
    assert json.dumps(served)  # still JSON-able


def test_as_served_copies_and_keeps_plain_messages() -> None:
    plain = {"role": "user", "content": "hi"}
    served = as_served([plain, *FEW_SHOT])
    assert served[0] == plain and served[0] is not plain
    assert FEW_SHOT[1]["tool_calls"][0]["function"]["arguments"] == '{"timezone": "Asia/Tokyo"}'
    assert served[2]["tool_calls"][0]["function"]["arguments"] == {"timezone": "Asia/Tokyo"}


def test_hyphenated_names_rename_the_tools_the_examples_and_the_question() -> None:
    from harness.core.tool_request import expected_call, tool_name, tools_named

    snake = tool_messages()
    hyphen = tool_messages(names="hyphen")
    text = json.dumps(hyphen)
    assert "get_weather" not in text and "get_time" not in text
    assert "get-weather" in text and "get-time" in text
    assert (
        hyphen[-1]["content"] == "What is the weather in Paris right now? Use the get-weather tool."
    )
    assert len(hyphen) == len(snake)  # the same turns, renamed (arguments untouched)
    assert [t["function"]["name"] for t in tools_named("hyphen")] == ["get-weather", "get-time"]
    assert tools_named() == TOOLS and expected_call("hyphen") == ("get-weather", {"city": "Paris"})
    assert TOOLS[0]["function"]["name"] == "get_weather"  # the shared tools are not changed
    with pytest.raises(ValueError, match="expected one of snake, hyphen"):
        tool_name("get_weather", "camel")
