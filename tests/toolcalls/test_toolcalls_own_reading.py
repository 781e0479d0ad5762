"""A model's own text read for calls by the harness's reference parsers, chosen by the markup
its chat template renders: the same reading on every release, mlx-lm or not.

Each reader is checked on its markup (a call, several, one with tricky values, a broken one and
one the token limit cut off), the template -> format choice on the zoo's templates, and each
reader against mlx-lm's parser on the calls the zoo's callers are trained to make.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from harness.models.zoo import templates as t
from harness.toolcalls import ref_gemma4, ref_hermes_json, ref_mistral, ref_pythonic
from harness.toolcalls.model import ToolCall
from harness.toolcalls.own_reading import read_own_calls, shown_call, template_format

W = ToolCall("get_weather", {"city": "Paris"})
T = ToolCall("get_time", {"timezone": "Asia/Tokyo"})

READERS: list[tuple[Any, str, tuple[ToolCall, ...], str, bool]] = [
    # (module, text, calls, content, an error expected)
    (
        ref_hermes_json,
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        (W,),
        "",
        False,
    ),
    (
        ref_hermes_json,
        'Sure.<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": '
        '\\"Paris\\"}"}</tool_call><tool_call>{"name": "get_time", "parameters": {"timezone": '
        '"Asia/Tokyo"}}</tool_call>',
        (W, T),
        "Sure.",
        False,
    ),
    (ref_hermes_json, '<tool_call>{"name": "get_weather", "argu</tool_call>', (), "", True),
    (ref_mistral, '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>', (W,), "", False),
    (
        ref_mistral,
        'ok[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]'
        '{"timezone": "Asia/Tokyo"}',
        (W, T),
        "ok",
        False,
    ),
    (
        ref_mistral,
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        (W,),
        "",
        False,
    ),
    (ref_mistral, "[TOOL_CALLS]get_weather[ARGS]{broken", (), "", True),
    (
        ref_pythonic,
        '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>',
        (W,),
        "",
        False,
    ),
    (
        ref_pythonic,
        '<|tool_call_start|>[get_weather(city="Paris"), get_time(timezone='
        "'Asia/Tokyo')]<|tool_call_end|> done",
        (W, T),
        "done",
        False,
    ),
    (ref_pythonic, "<|tool_call_start|>[get_weather(Paris]<|tool_call_end|>", (), "", True),
    (ref_gemma4, '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>', (W,), "", False),
    (
        ref_gemma4,
        '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}call:get_time{timezone:'
        '<|"|>Asia/Tokyo<|"|>}<tool_call|>',
        (W, T),
        "",
        False,
    ),
    (
        ref_gemma4,
        '<|tool_call>call:f{q:<|"|>a{b},c:d<|"|>,n:{deep:true}}<tool_call|>',
        (ToolCall("f", {"q": "a{b},c:d", "n": {"deep": True}}),),
        "",
        False,
    ),
    (ref_gemma4, '<|tool_call>call:get_weather{city:<|"|>Paris<tool_call|>', (), "", True),
]


@pytest.mark.parametrize(("module", "text", "calls", "content", "error"), READERS)
def test_each_reader_reads_its_markup(
    module: Any, text: str, calls: tuple[ToolCall, ...], content: str, error: bool
) -> None:
    found, rest, _, errors = module.extract_calls(text)
    assert (found, rest, bool(errors)) == (calls, content, error), errors


@pytest.mark.parametrize("module", [ref_hermes_json, ref_pythonic, ref_gemma4, ref_mistral])
def test_a_call_the_token_limit_cut_off_is_none(module: Any) -> None:
    text = {
        ref_hermes_json: '<tool_call>{"name": "get_weather", "arguments": {"ci',
        ref_pythonic: '<|tool_call_start|>[get_weather(city="Pa',
        ref_gemma4: '<|tool_call>call:get_weather{city:<|"|>Pa',
        ref_mistral: '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa',
    }[module]
    calls, _, _, errors = module.extract_calls(text, truncated=True)
    assert calls == () and errors


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (t.QWEN2_5, "json_tools"),
        (t.QWEN3_CODER, "qwen3_coder"),
        (t.MISTRAL_SMALL, "mistral"),
        (t.LFM2_TOOLS, "pythonic"),
        (t.GEMMA4, "gemma4"),
        (t.GEMMA3, None),
    ],
)
def test_the_template_names_the_format(template: str, expected: str | None) -> None:
    fmt = template_format(template)
    assert (fmt.name if fmt else None) == expected
    if fmt is not None:
        assert fmt.own_reader


def test_reading_takes_reasoning_out_and_shows_the_call() -> None:
    text = '<think><tool_call>{"name": "get_time", "arguments": {}}</tool_call></think>'
    reading = read_own_calls(
        t.QWEN3,
        text + '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    )
    assert reading is not None and reading.calls == (W,) and reading.reader == "ref_hermes_json"
    assert shown_call(reading.calls[0]) == "get_weather(city='Paris')"
    assert read_own_calls(t.GEMMA3, "anything") is None


@pytest.mark.parametrize(
    ("template", "text", "opener", "calls"),
    [
        (t.MISTRAL_SMALL, 'get_weather[ARGS]{"city": "Paris"}</s>', "[TOOL_CALLS]", (W,)),
        (t.GEMMA4, 'call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>', "<|tool_call>", (W,)),
        (t.LFM2_TOOLS, '[get_weather(city="Paris")]<|tool_call_end|>', "<|tool_call_start|>", (W,)),
        (t.MISTRAL_SMALL, "It is sunny in Paris.", "", ()),
        # a bare JSON object is no Hermes call: its body has no markup of its own
        (t.QWEN2_5, '{"name": "get_weather", "arguments": {"city": "Paris"}}', "", ()),
    ],
)
def test_a_call_whose_opener_the_server_took_is_read_with_it_put_back(
    template: str, text: str, opener: str, calls: tuple[ToolCall, ...]
) -> None:
    reading = read_own_calls(template, text)
    assert reading is not None
    assert (reading.calls, reading.opener_missing) == (calls, opener)


def test_reading_needs_no_mlx_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pinned release without the parser (or with another one): the reading is the same."""
    for name in [m for m in sys.modules if m == "mlx_lm" or m.startswith("mlx_lm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mlx_lm", None)  # any import of mlx_lm now fails
    reading = read_own_calls(t.MISTRAL_SMALL, '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}')
    assert reading is not None and reading.calls == (W,)


CALLER_ANSWERS = [
    (
        "json_tools",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    ),
    ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'),
    (
        "qwen3_coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
    ),
    ("pythonic", '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>'),
    ("gemma4", '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>'),
]


@pytest.mark.parametrize(("parser", "text"), CALLER_ANSWERS)
def test_the_readers_agree_with_mlx_lm_on_the_callers_answers(parser: str, text: str) -> None:
    pytest.importorskip("mlx_lm")
    from harness.core.tool_request import TOOLS
    from harness.models.zoo.calling import parse_call
    from harness.toolcalls.formats import get_format
    from harness.toolcalls.reference import extract

    fmt = get_format(parser)
    assert fmt is not None and fmt.own_reader is not None
    ours = extract(fmt.own_reader, fmt.dialect, text, TOOLS).calls
    assert [(c.name, c.arguments) for c in ours] == [parse_call(text, parser)]
