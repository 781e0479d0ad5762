"""Scoring live replies against BFCL-style expectations: structures, normalisation, taxonomy."""

from __future__ import annotations

from typing import Any

import pytest

from harness.toolcalls.classify import CallFailure
from harness.toolcalls.live import ExpectedCall
from harness.toolcalls.match import acceptable, normalise, score
from harness.toolcalls.model import Extraction, ToolCall

MARKUP = ("<tool_call>", "</tool_call>")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
}
AREA = {
    "type": "function",
    "function": {
        "name": "area",
        "parameters": {
            "type": "object",
            "properties": {"radius": {"type": "number"}, "exact": {"type": "boolean"}},
            "required": ["radius"],
        },
    },
}
TOOLS = (WEATHER, AREA)

PARIS = ExpectedCall("get_weather", {"city": ("Paris", "Paris, France")}, {"unit": ("celsius",)})
BERLIN = ExpectedCall("get_weather", {"city": ("Berlin",)}, {})
RADIUS = ExpectedCall("area", {"radius": (5,)}, {})


def reply(*calls: tuple[str, Any], content: str = "", errors: tuple[str, ...] = ()) -> Extraction:
    return Extraction(tuple(ToolCall(n, a) for n, a in calls), content, errors=errors)


# (name, expected calls, reply, failure, fragment of the detail)
CASES: list[tuple[str, tuple[ExpectedCall, ...], Extraction, CallFailure, str]] = [
    ("exact", (PARIS,), reply(("get_weather", {"city": "Paris"})), CallFailure.OK, ""),
    (
        "alternative",
        (PARIS,),
        reply(("get_weather", {"city": "Paris, France"})),
        CallFailure.OK,
        "",
    ),
    ("case+space", (PARIS,), reply(("get_weather", {"city": "  paris "})), CallFailure.OK, ""),
    (
        "inner space",
        (PARIS,),
        reply(("get_weather", {"city": "paris,   france"})),
        CallFailure.OK,
        "",
    ),
    (
        "optional given",
        (PARIS,),
        reply(("get_weather", {"city": "Paris", "unit": "Celsius"})),
        CallFailure.OK,
        "",
    ),
    (
        "optional wrong",
        (PARIS,),
        reply(("get_weather", {"city": "Paris", "unit": "kelvin"})),
        CallFailure.WRONG_VALUE,
        "unit",
    ),
    (
        "wrong value",
        (PARIS,),
        reply(("get_weather", {"city": "Lyon"})),
        CallFailure.WRONG_VALUE,
        "Lyon",
    ),
    (
        "wrong name",
        (PARIS,),
        reply(("weather", {"city": "Paris"})),
        CallFailure.WRONG_NAME,
        "weather",
    ),
    (
        "missing",
        (PARIS,),
        reply(("get_weather", {"town": "Paris"})),
        CallFailure.MISSING_ARGUMENT,
        "city",
    ),
    (
        "extra",
        (PARIS,),
        reply(("get_weather", {"city": "Paris", "days": 3})),
        CallFailure.EXTRA_ARGUMENT,
        "days",
    ),
    ("int for number", (RADIUS,), reply(("area", {"radius": 5})), CallFailure.OK, ""),
    ("float for int value", (RADIUS,), reply(("area", {"radius": 5.0})), CallFailure.OK, ""),
    (
        "string for number",
        (RADIUS,),
        reply(("area", {"radius": "5"})),
        CallFailure.WRONG_TYPE,
        "number",
    ),
    (
        "bool for number",
        (RADIUS,),
        reply(("area", {"radius": True})),
        CallFailure.WRONG_TYPE,
        "boolean",
    ),
    (
        "arguments not an object",
        (RADIUS,),
        reply(("area", "5")),
        CallFailure.WRONG_TYPE,
        "not an object",
    ),
    (
        "parallel in order",
        (PARIS, BERLIN),
        reply(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Berlin"})),
        CallFailure.OK,
        "",
    ),
    (
        "parallel reversed",
        (PARIS, BERLIN),
        reply(("get_weather", {"city": "berlin"}), ("get_weather", {"city": "Paris"})),
        CallFailure.OK,
        "",
    ),
    (
        "parallel one wrong",
        (PARIS, BERLIN),
        reply(("get_weather", {"city": "Berlin"}), ("get_weather", {"city": "Rome"})),
        CallFailure.WRONG_VALUE,
        "Rome",
    ),
    (
        "parallel one short",
        (PARIS, BERLIN),
        reply(("get_weather", {"city": "Paris"})),
        CallFailure.DROPPED_CALL,
        "1 of 2",
    ),
    (
        "dropped by the server",
        (PARIS, BERLIN),
        reply(("get_weather", {"city": "Paris"}), errors=("JSONDecodeError: x",)),
        CallFailure.PARSE_ERROR,
        "1/2",
    ),
    ("no call", (PARIS,), reply(content="It is sunny."), CallFailure.NOT_DETECTED, ""),
    ("irrelevance kept", (), reply(content="Rome is the capital."), CallFailure.OK, ""),
    (
        "irrelevance called",
        (),
        reply(("get_weather", {"city": "Rome"})),
        CallFailure.EXTRA_CALL,
        "expected 0",
    ),
    (
        "leaked markup",
        (PARIS,),
        reply(("get_weather", {"city": "Paris"}), content="</tool_call>"),
        CallFailure.LEAKED_MARKUP,
        "</tool_call>",
    ),
    (
        "irrelevance leaked",
        (),
        reply(content='<tool_call>{"name": "x"'),
        CallFailure.LEAKED_MARKUP,
        "<tool_call>",
    ),
]


@pytest.mark.parametrize(
    ("expected", "got", "failure", "detail"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_score(
    expected: tuple[ExpectedCall, ...], got: Extraction, failure: CallFailure, detail: str
) -> None:
    verdict = score(expected, got, MARKUP, TOOLS)
    assert verdict.failure is failure, verdict.detail
    assert detail in verdict.detail


def test_a_crash_fails_the_request() -> None:
    got = Extraction((), "", crash="KeyError: 'arguments'")
    verdict = score((PARIS,), got, MARKUP, TOOLS)
    assert verdict.failure is CallFailure.PARSE_ERROR and "KeyError" in verdict.detail


@pytest.mark.parametrize(
    ("value", "choices", "ok"),
    [
        ("New  York", ("new york",), True),
        (1, (1.0,), True),
        (True, (1,), False),
        (1, (True,), False),
        ("1", (1,), False),
        (None, (None,), True),
        (["A", "b"], (["a", "B"],), True),
        (["a"], (["a", "b"],), False),
        ({"k": " V "}, ({"k": "v"},), True),
    ],
)
def test_acceptable(value: Any, choices: tuple[Any, ...], ok: bool) -> None:
    assert acceptable(value, choices) is ok


def test_normalise_keeps_kinds_apart() -> None:
    assert normalise(" A\tB ") == "a b"
    assert normalise(True) is True and normalise(2) == 2.0
