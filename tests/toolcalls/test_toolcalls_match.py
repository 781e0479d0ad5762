"""Scoring live replies against BFCL-style expectations: structures, normalisation, taxonomy,
parallel calls paired in any order, schema types and required parameters, string modes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.toolcalls import mlx_lm_server
from harness.toolcalls.classify import CallFailure
from harness.toolcalls.formats import get_format
from harness.toolcalls.live import ExpectedCall
from harness.toolcalls.match import pairing, score
from harness.toolcalls.model import Extraction, FinishReason, ToolCall
from harness.toolcalls.values import StringMatch

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
        "missing required",
        (PARIS,),
        reply(("get_weather", {"town": "Paris"})),
        CallFailure.MISSING_REQUIRED,
        "'city' (the schema requires it)",
    ),
    (
        "missing expected, not required",
        (ExpectedCall("get_weather", {"city": ("Paris",), "unit": ("celsius",)}, {}),),
        reply(("get_weather", {"city": "Paris"})),
        CallFailure.MISSING_ARGUMENT,
        "unit",
    ),
    (
        "required, though the answer has it optional",
        (ExpectedCall("get_weather", {}, {"city": ("Paris",)}),),
        reply(("get_weather", {})),
        CallFailure.MISSING_REQUIRED,
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


# --- parallel calls in any order, any number of them (an assignment, not permutations) ---

STOCK = {
    "type": "function",
    "function": {
        "name": "get_stock_price",
        "parameters": {
            "type": "object",
            "properties": {"company": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["company", "year"],
        },
    },
}
COMPANIES = (
    "Apple", "Microsoft", "Google", "Amazon", "Meta", "Nvidia",
    "Tesla", "Intel", "IBM", "Oracle", "Cisco", "Adobe",
)  # fmt: skip


def stocks(n: int) -> tuple[ExpectedCall, ...]:
    return tuple(
        ExpectedCall("get_stock_price", {"company": (c,), "year": (2010 + i,)}, {})
        for i, c in enumerate(COMPANIES[:n])
    )


def shuffled(expected: tuple[ExpectedCall, ...], seed: int) -> list[tuple[str, Any]]:
    """The expected calls as returned ones, in another order."""
    given = [(e.name, {k: v[0] for k, v in e.arguments.items()}) for e in expected]
    calls = list(given)
    random.Random(seed).shuffle(calls)
    return calls if calls != given else calls[::-1]


@pytest.mark.parametrize("n", [2, 6, 7, 8, 12])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parallel_calls_match_in_any_order(n: int, seed: int) -> None:
    expected = stocks(n)
    verdict = score(expected, reply(*shuffled(expected, seed)), MARKUP, (STOCK,))
    assert verdict.failure is CallFailure.OK, verdict.detail


# (name, index of the expected call to spoil, argument, bad value, failure, detail)
SPOILED: list[tuple[str, int, str, Any, CallFailure, str]] = [
    ("value", 1, "company", "Microsft", CallFailure.WRONG_VALUE, "call 2: company: expected"),
    ("year", 5, "year", 1999, CallFailure.WRONG_VALUE, "call 6: year: expected 2015, got 1999"),
    ("type", 7, "year", 2017.0, CallFailure.WRONG_TYPE, "call 8: year: schema says integer"),
]


@pytest.mark.parametrize(
    ("index", "key", "bad", "failure", "detail"),
    [s[1:] for s in SPOILED],
    ids=[s[0] for s in SPOILED],
)
def test_a_miss_among_eight_shuffled_calls_names_its_call_and_argument(
    index: int, key: str, bad: Any, failure: CallFailure, detail: str
) -> None:
    expected = stocks(8)
    calls = shuffled(expected, 3)
    spoilt = next(i for i, c in enumerate(calls) if c[1]["company"] == COMPANIES[index])
    calls[spoilt] = (calls[spoilt][0], {**calls[spoilt][1], key: bad})
    verdict = score(expected, reply(*calls), MARKUP, (STOCK,))
    assert verdict.failure is failure
    assert verdict.detail.startswith(detail), verdict.detail


def test_a_wrong_name_pairs_with_the_call_left_over() -> None:
    expected = stocks(8)
    calls = shuffled(expected, 4)
    at = next(i for i, c in enumerate(calls) if c[1]["company"] == "Tesla")
    calls[at] = ("get_stock", calls[at][1])
    verdict = score(expected, reply(*calls), MARKUP, (STOCK,))
    assert verdict.failure is CallFailure.WRONG_NAME
    assert verdict.detail == "call 7: expected 'get_stock_price', got 'get_stock'"


def test_parallel_multiple_pairs_by_name_in_any_order() -> None:
    expected = (*stocks(4), PARIS, BERLIN, RADIUS)
    calls = [
        *shuffled(stocks(4), 5),
        ("area", {"radius": 5}),
        ("get_weather", {"city": "berlin"}),
        ("get_weather", {"city": "Paris"}),
    ]
    calls.reverse()
    tools = (*TOOLS, STOCK)
    assert score(expected, reply(*calls), MARKUP, tools).failure is CallFailure.OK


# --- types as the schema says: integer takes no float, number takes an int, bool is neither ---

TYPED = {
    "type": "function",
    "function": {
        "name": "typed",
        "parameters": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "label": {"type": "string"},
                "sizes": {"type": "array", "items": {"type": "integer"}},
                "box": {"type": "object", "properties": {"w": {"type": "integer"}}},
            },
        },
    },
}
RIGHT: dict[str, Any] = {
    "count": 5, "ratio": 2.5, "flag": True, "label": "x", "sizes": [1, 2], "box": {"w": 3},
}  # fmt: skip

# (argument, value returned, failure, detail)
TYPES: list[tuple[str, Any, CallFailure, str]] = [
    ("count", 5, CallFailure.OK, ""),
    ("count", 5.0, CallFailure.WRONG_TYPE, "count: schema says integer, got number 5.0"),
    ("count", True, CallFailure.WRONG_TYPE, "count: schema says integer, got boolean True"),
    ("count", "5", CallFailure.WRONG_TYPE, "count: schema says integer, got string '5'"),
    ("ratio", 2.5, CallFailure.OK, ""),
    ("ratio", False, CallFailure.WRONG_TYPE, "ratio: schema says number, got boolean"),
    ("flag", 1, CallFailure.WRONG_TYPE, "flag: schema says boolean, got integer 1"),
    ("flag", "true", CallFailure.WRONG_TYPE, "flag: schema says boolean, got string"),
    ("label", 5, CallFailure.WRONG_TYPE, "label: schema says string, got integer"),
    ("sizes", [1, 2.0], CallFailure.WRONG_TYPE, "sizes[1]: schema says integer, got number 2.0"),
    ("sizes", [1, True], CallFailure.WRONG_TYPE, "sizes[1]: schema says integer, got boolean"),
    ("box", {"w": 3.0}, CallFailure.WRONG_TYPE, "box.w: schema says integer, got number 3.0"),
]


@pytest.mark.parametrize(("key", "value", "failure", "detail"), TYPES)
def test_types_as_the_schema_says(key: str, value: Any, failure: CallFailure, detail: str) -> None:
    expected = ExpectedCall("typed", {k: (v,) for k, v in RIGHT.items()}, {})
    verdict = score((expected,), reply(("typed", {**RIGHT, key: value})), MARKUP, (TYPED,))
    assert verdict.failure is failure, verdict.detail
    assert verdict.detail.startswith(detail), verdict.detail


def test_a_number_takes_an_int_for_a_float_answer() -> None:
    expected = ExpectedCall("area", {"radius": (5.0,)}, {})
    assert score((expected,), reply(("area", {"radius": 5})), MARKUP, TOOLS).failure is (
        CallFailure.OK
    )


# --- strings: strict by default, BFCL's standardisation on request ---

# (expected, returned, strict verdict, BFCL verdict)
STRINGS: list[tuple[str, str, CallFailure, CallFailure]] = [
    ("Nashville, TN", "Nashville TN", CallFailure.WRONG_VALUE, CallFailure.OK),
    ("April 1, 2024", "april 1,2024", CallFailure.WRONG_VALUE, CallFailure.OK),
    ("New York", "new   york", CallFailure.OK, CallFailure.OK),
    ("x**2", "x^^2", CallFailure.WRONG_VALUE, CallFailure.OK),  # BFCL's kindness, and its cost
    ("Paris", "Lyon", CallFailure.WRONG_VALUE, CallFailure.WRONG_VALUE),
]


@pytest.mark.parametrize(("want", "got", "strict", "bfcl"), STRINGS)
def test_string_modes(want: str, got: str, strict: CallFailure, bfcl: CallFailure) -> None:
    expected = (ExpectedCall("get_weather", {"city": (want,)}, {}),)
    returned = reply(("get_weather", {"city": got}))
    assert score(expected, returned, MARKUP, TOOLS).failure is strict
    assert score(expected, returned, MARKUP, TOOLS, StringMatch.STRICT).failure is strict
    assert score(expected, returned, MARKUP, TOOLS, StringMatch.BFCL).failure is bfcl


# --- a tool text that failed to parse is a parse_error in every category ---

CUT = '<tool_call>{"name": "x", "argu'


@pytest.mark.parametrize("finish", ["length", "stop"])
def test_a_cut_call_on_an_irrelevance_prompt_is_no_abstention(finish: FinishReason) -> None:
    dialect = get_format("json_tools").dialect  # type: ignore[union-attr]
    got = mlx_lm_server.extract("json_tools", dialect, CUT, TOOLS, finish)
    assert got.calls == () and got.errors  # the server dropped it, without a word
    verdict = score((), got, MARKUP, TOOLS)
    assert verdict.failure is CallFailure.PARSE_ERROR, verdict.detail
    assert "JSONDecodeError" in verdict.detail


# (name, expected calls, reply)
JSON_ERROR = ("JSONDecodeError: x",)
UNPARSED: list[tuple[str, tuple[ExpectedCall, ...], Extraction]] = [
    ("irrelevance malformed", (), reply(errors=("JSONDecodeError: Expecting value",))),
    ("irrelevance, content beside", (), reply(content="No tool fits.", errors=("ValueError",))),
    ("simple", (PARIS,), reply(errors=JSON_ERROR)),
    (
        "right calls and one more cut",
        (PARIS,),
        reply(("get_weather", {"city": "Paris"}), errors=JSON_ERROR),
    ),
    (
        "parallel all there, one cut",
        (PARIS, BERLIN),
        reply(
            ("get_weather", {"city": "Berlin"}),
            ("get_weather", {"city": "Paris"}),
            errors=JSON_ERROR,
        ),
    ),
]


@pytest.mark.parametrize(
    ("expected", "got"), [u[1:] for u in UNPARSED], ids=[u[0] for u in UNPARSED]
)
def test_a_call_that_failed_to_parse_fails_the_reply(
    expected: tuple[ExpectedCall, ...], got: Extraction
) -> None:
    for strings in StringMatch:
        verdict = score(expected, got, MARKUP, TOOLS, strings)
        assert verdict.failure is CallFailure.PARSE_ERROR, verdict.detail
        assert "failed to parse" in verdict.detail


def test_pairing_keeps_the_order_given_when_nothing_is_gained() -> None:
    both_wrong = [
        ToolCall("get_weather", {"city": "Rome"}),
        ToolCall("get_weather", {"city": "Oslo"}),
    ]
    assert pairing((PARIS, BERLIN), both_wrong, TOOLS) == (0, 1)
    right = [
        ToolCall("get_weather", {"city": "Berlin"}),
        ToolCall("get_weather", {"city": "Paris"}),
    ]
    assert pairing((PARIS, BERLIN), right, TOOLS) == (1, 0)
    with pytest.raises(ValueError, match="2 expected calls, 1 returned"):
        pairing((PARIS, BERLIN), right[:1], TOOLS)
