"""The scorer's failure classes, on hand-made extractions (no backend involved)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.toolcalls.classify import CallFailure, classify
from harness.toolcalls.model import Extraction, ToolCall

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
MARKUP = ("<tool_call>", "</tool_call>")


def got(*calls: tuple[str, Any], content: str = "", errors: tuple[str, ...] = (), crash: str = ""):
    return Extraction(tuple(ToolCall(n, a) for n, a in calls), content, errors=errors, crash=crash)


W = ("get_weather", {"city": "Paris", "days": 2})
EXPECTED = [ToolCall(*W)]

# (case id, expected calls, what the backend returned, failure class)
TABLE: list[tuple[str, list[ToolCall], Extraction, CallFailure]] = [
    ("ok", EXPECTED, got(W), CallFailure.OK),
    (
        "ok-stripped-string",
        EXPECTED,
        got(("get_weather", {"city": " Paris\n", "days": 2})),
        CallFailure.OK,
    ),
    (
        "wrong-type-float-for-integer",  # Python's type, and BFCL's: 2.0 is no integer
        EXPECTED,
        got(("get_weather", {"city": "Paris", "days": 2.0})),
        CallFailure.WRONG_TYPE,
    ),
    ("ok-no-call", [], got(content="Paris is nice."), CallFailure.OK),
    ("ok-truncated-dropped", [], got(errors=("JSONDecodeError: x",)), CallFailure.OK),
    ("not-detected", EXPECTED, got(content="<function=get_weather>"), CallFailure.NOT_DETECTED),
    ("parse-error", EXPECTED, got(errors=("ValueError: bad",)), CallFailure.PARSE_ERROR),
    ("parse-error-crash", [], got(crash="KeyError: 'arguments'"), CallFailure.PARSE_ERROR),
    ("wrong-name", EXPECTED, got(("get_forecast", W[1])), CallFailure.WRONG_NAME),
    (
        "missing-argument",
        EXPECTED,
        got(("get_weather", {"city": "Paris"})),
        CallFailure.MISSING_ARGUMENT,
    ),
    (
        "extra-argument",
        EXPECTED,
        got(("get_weather", {"city": "Paris", "days": 2, "unit": "c"})),
        CallFailure.EXTRA_ARGUMENT,
    ),
    (
        "wrong-type-schema",
        EXPECTED,
        got(("get_weather", {"city": "Paris", "days": "2"})),
        CallFailure.WRONG_TYPE,
    ),
    (
        "wrong-type-bool-not-number",
        EXPECTED,
        got(("get_weather", {"city": "Paris", "days": True})),
        CallFailure.WRONG_TYPE,
    ),
    (
        "wrong-type-arguments-string",
        EXPECTED,
        got(("get_weather", '{"city": "Paris"}')),
        CallFailure.WRONG_TYPE,
    ),
    (
        "wrong-value",
        EXPECTED,
        got(("get_weather", {"city": "Lyon", "days": 2})),
        CallFailure.WRONG_VALUE,
    ),
    (
        "leaked-markup",
        EXPECTED,
        got(W, content="done</tool_call>"),
        CallFailure.LEAKED_MARKUP,
    ),
    ("dropped-call", [*EXPECTED, *EXPECTED], got(W), CallFailure.DROPPED_CALL),
    ("extra-call", EXPECTED, got(W, W), CallFailure.EXTRA_CALL),
    ("extra-call-none-expected", [], got(W), CallFailure.EXTRA_CALL),
]


@pytest.mark.parametrize(
    ("expected", "extraction", "failure"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE]
)
def test_failure_class(
    expected: list[ToolCall], extraction: Extraction, failure: CallFailure
) -> None:
    verdict = classify(expected, extraction, MARKUP, TOOLS)
    assert verdict.failure is failure, verdict.detail
    assert (verdict.detail == "") == (failure is CallFailure.OK)


NESTED = {"title": "x", "options": {"tags": ["a", "b"], "n": 1}}

# nested values: (returned arguments, failure class)
NESTED_TABLE = [
    ({"title": "x", "options": {"tags": ["a", "b"], "n": 1.0}}, CallFailure.OK),
    ({"title": "x", "options": {"tags": ["a", " b "], "n": 1}}, CallFailure.OK),
    ({"title": "x", "options": {"tags": ["a"], "n": 1}}, CallFailure.WRONG_VALUE),
    ({"title": "x", "options": {"tags": ["a", "b"]}}, CallFailure.WRONG_VALUE),
    ({"title": "x", "options": {"tags": "a,b", "n": 1}}, CallFailure.WRONG_TYPE),
    ({"title": "x", "options": '{"tags": ["a", "b"], "n": 1}'}, CallFailure.WRONG_TYPE),
    ({"title": "x", "options": {"tags": ["a", "b"], "n": "1"}}, CallFailure.WRONG_TYPE),
]


@pytest.mark.parametrize(("arguments", "failure"), NESTED_TABLE)
def test_nested_values_compare_as_structures(
    arguments: dict[str, Any], failure: CallFailure
) -> None:
    verdict = classify([ToolCall("create_event", NESTED)], got(("create_event", arguments)))
    assert verdict.failure is failure, verdict.detail


def test_calls_are_compared_in_order_and_the_detail_names_the_call() -> None:
    paris, berlin = ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Berlin"})
    verdict = classify([ToolCall(*paris), ToolCall(*berlin)], got(berlin, paris))
    assert verdict.failure is CallFailure.WRONG_VALUE
    assert verdict.detail.startswith("call 1: city:")
