"""The server replays: mlx-lm's state machine and formatter, mlx-vlm's extractor."""

from __future__ import annotations

import pytest

from harness.toolcalls import mlx_lm_server, reference
from harness.toolcalls.formats import get_format, resolve
from harness.toolcalls.model import ParserOwner, ToolCall

JSON_DIALECT = get_format("json_tools").dialect  # type: ignore[union-attr]
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'


def test_mlx_lm_splits_reasoning_content_and_calls() -> None:
    got = mlx_lm_server.extract("json_tools", JSON_DIALECT, f"<think>plan</think>Hi {CALL} bye")
    assert got.calls == (ToolCall("f", {"a": 1}),)
    assert got.reasoning == "plan" and got.content == "Hi  bye"
    assert got.tool_texts == ('{"name": "f", "arguments": {"a": 1}}',)


@pytest.mark.parametrize(("finish", "content"), [("stop", "Hi "), ("length", "Hi <tool_")])
def test_mlx_lm_partial_marker_is_dropped_on_stop_and_flushed_on_length(
    finish: str, content: str
) -> None:
    got = mlx_lm_server.extract("json_tools", JSON_DIALECT, "Hi <tool_", finish_reason=finish)  # type: ignore[arg-type]
    assert got.content == content and got.calls == ()


def test_mlx_lm_prompt_opened_think() -> None:
    got = mlx_lm_server.extract(
        "json_tools", JSON_DIALECT, f"plan</think>{CALL}", starts_in_reasoning=True
    )
    assert got.reasoning == "plan" and got.content == "" and len(got.calls) == 1


def test_mlx_lm_swallowed_error_and_uncaught_crash_are_told_apart() -> None:
    dropped = mlx_lm_server.extract("json_tools", JSON_DIALECT, "<tool_call>{oops</tool_call>")
    assert dropped.calls == () and dropped.errors and not dropped.crash
    crashed = mlx_lm_server.extract(
        "json_tools", JSON_DIALECT, '<tool_call>{"name": "f", "parameters": {}}</tool_call>'
    )
    assert crashed.crash.startswith("KeyError")


def test_mlx_vlm_extractor_keeps_unclosed_calls_as_content() -> None:
    pytest.importorskip("mlx_vlm")
    from harness.toolcalls import mlx_vlm_server

    got = mlx_vlm_server.extract("json_tools", f"<think>plan</think>Hi {CALL}")
    assert got.calls == (ToolCall("f", {"a": 1}),) and got.reasoning == "plan"
    assert got.content == "Hi"
    unclosed = mlx_vlm_server.extract("json_tools", '<tool_call>{"name": "f"')
    assert unclosed.calls == () and unclosed.content.startswith("<tool_call>")
    dropped = mlx_vlm_server.extract("json_tools", "<tool_call>{oops</tool_call>")
    assert dropped.errors


def test_reference_extraction_ignores_markup_in_reasoning() -> None:
    dialect = get_format("function_xml").dialect  # type: ignore[union-attr]
    text = "<think><function=a><parameter=x>1</think><function=b><parameter=y>2"
    got = reference.extract("ref_function_xml", dialect, text)
    assert got.calls == (ToolCall("b", {"y": 2}),)
    assert got.reasoning == "<function=a><parameter=x>1"


def test_resolve_names() -> None:
    assert [i.id for i in resolve("mlx_lm.json_tools")] == ["mlx_lm.json_tools"]
    assert resolve("json_tools")[0].backend is ParserOwner.MLX_LM
    assert [i.id for i in resolve("gemma3_tool_code")] == ["harness.ref_gemma3_tool_code"]
    assert resolve("nope") == () and resolve("mlx_lm.nope") == ()
