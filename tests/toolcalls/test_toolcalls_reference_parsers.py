"""The harness's own reference parsers: Gemma 3 ```tool_code``` and lenient <function=...> XML."""

from __future__ import annotations

from typing import Any

import pytest

from harness.toolcalls import ref_function_xml, ref_gemma3_tool_code

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                },
            },
        },
    }
]


def W(**arguments: Any) -> dict[str, Any]:
    return {"name": "get_weather", "arguments": arguments}


TOOL_CODE = [
    ('get_weather(city="Paris", days=2)', W(city="Paris", days=2)),
    ('get_weather("Paris", 2)', W(city="Paris", days=2)),
    ('get_weather("Paris", metric=true)', W(city="Paris", metric=True)),
    ('print(default_api.get_weather(city="Rome"))', W(city="Rome")),
    ("get_weather Berlin 3", W(city="Berlin", days=3)),
    ('get_weather --city "New York" --days=4 --metric', W(city="New York", days=4, metric=True)),
    ("get_weather city=Oslo days=1", W(city="Oslo", days=1)),
    ("get_weather 0042", W(city="0042")),
    ('get_weather(city="Lyon")\nget_weather(city="Nice")', [W(city="Lyon"), W(city="Nice")]),
    ("get_weather(city='it\\'s')", W(city="it's")),
    (
        'get_weather(city={"name": "Paris", "tags": [1, null]})',
        W(city={"name": "Paris", "tags": [1, None]}),
    ),
]


@pytest.mark.parametrize(("body", "expected"), TOOL_CODE)
def test_tool_code_call_forms(body: str, expected: Any) -> None:
    assert ref_gemma3_tool_code.parse_tool_call(f"```tool_code\n{body}\n```", TOOLS) == expected


@pytest.mark.parametrize(
    "body",
    ['get_weather("Paris")', "x = 1", "get_weather(**kw)", "get_weather({1, 2})", "a b c d e"],
)
def test_tool_code_rejects_what_is_not_a_call(body: str) -> None:
    tools = None if body == 'get_weather("Paris")' else TOOLS  # positional needs a schema
    with pytest.raises(ValueError):
        ref_gemma3_tool_code.parse_tool_call(body, tools)


def test_tool_code_extraction_strips_blocks_and_drops_cut_ones() -> None:
    text = 'Checking.\n```tool_code\nget_weather(city="Paris")\n```\nDone.'
    calls, content, bodies, errors = ref_gemma3_tool_code.extract_calls(text, TOOLS)
    assert [c.as_json() for c in calls] == [W(city="Paris")]
    assert content == "Checking.\n\nDone." and len(bodies) == 1 and errors == ()
    calls, content, _, errors = ref_gemma3_tool_code.extract_calls(
        '```tool_code\nget_weather(city="Pa', TOOLS, truncated=True
    )
    assert calls == () and content == "" and errors


FUNCTION_XML = [
    ("<function=get_weather>\n<parameter=city>\nParis\n", W(city="Paris")),
    ("<function=get_weather><parameter=city>Paris<parameter=days>3", W(city="Paris", days=3)),
    (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
        W(city="Paris"),
    ),
    ("<function=get_weather>\n<parameter=city>\n 007 \n</parameter>", W(city=" 007 ")),
    ("<function=get_weather><parameter=metric>true</parameter></function>", W(metric=True)),
    (
        "<function=get_weather><parameter=city>a</function>b</parameter></function>",
        W(city="a</function>b"),
    ),
    (
        "<function=get_weather><parameter=city>a</parameter>b</parameter>\n</function>",
        W(city="a</parameter>b"),
    ),
    (
        "<function=get_weather><parameter=city>A<function=get_weather><parameter=city>B",
        [W(city="A"), W(city="B")],
    ),
    ("<function=get_weather>\n</function>", W()),
]


@pytest.mark.parametrize(("text", "expected"), FUNCTION_XML)
def test_function_xml_forms(text: str, expected: Any) -> None:
    assert ref_function_xml.parse_tool_call(text, TOOLS) == expected


def test_function_xml_untyped_values_decode_json_only() -> None:
    text = '<function=f><parameter=n>12</parameter><parameter=o>{"a": [1]}</parameter>'
    text += "<parameter=s>Paris</parameter><parameter=z>007</parameter>"
    assert ref_function_xml.parse_tool_call(text) == {
        "name": "f",
        "arguments": {"n": 12, "o": {"a": [1]}, "s": "Paris", "z": "007"},
    }


def test_function_xml_content_and_truncation() -> None:
    text = "Let me check.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\nThanks."
    calls, content, _, errors = ref_function_xml.extract_calls(text, TOOLS)
    assert [c.as_json() for c in calls] == [W(city="Paris")]
    assert content == "Let me check.\n\nThanks." and errors == ()
    cut = "<function=get_weather>\n<parameter=city>\nPar"
    calls, content, _, errors = ref_function_xml.extract_calls(cut, TOOLS, truncated=True)
    assert calls == () and content == "" and errors
    calls, _, _, errors = ref_function_xml.extract_calls(cut, TOOLS, truncated=False)
    assert [c.as_json() for c in calls] == [W(city="Par")] and errors == ()


@pytest.mark.parametrize("text", ["no markup here", "<function=>\n<parameter=a>1"])
def test_function_xml_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        ref_function_xml.parse_tool_call(text)
