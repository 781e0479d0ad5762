"""The server replay of mlx-lm releases before ``TextStateMachine`` (0.31.x): the reply cut at
its markers, the old loop, 0.31.1's formatter (every parser error fails the request) and 0.31.2's
(a ValueError drops the call). The installed mlx-lm is made to look old by removing what the
old releases lack; the real 0.31.1 runs in the pin-set proof (docs/pin-sets.md)."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

from harness.toolcalls import mlx_lm_server
from harness.toolcalls.formats import get_format
from harness.toolcalls.mlx_lm_legacy import Markers, collect, marker_pieces
from harness.toolcalls.model import ToolCall

JSON_DIALECT = get_format("json_tools").dialect  # type: ignore[union-attr]
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
TOOLS = Markers("<tool_call>", "</tool_call>", ("<think>", "</think>"))


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("", []),
        ("plain", ["plain"]),
        (
            f"Hi {CALL}",
            ["Hi ", "<tool_call>", '{"name": "f", "arguments": {"a": 1}}', "</tool_call>"],
        ),
        ("<think>a</think><tool_call>", ["<think>", "a", "</think>", "<tool_call>"]),
    ],
)
def test_marker_pieces(text: str, pieces: list[str]) -> None:
    assert marker_pieces(text, TOOLS.all()) == pieces


@pytest.mark.parametrize(
    ("pieces", "markers", "initial", "keep_last", "expected"),
    [
        (
            ["Hi ", "<tool_call>", "x", "</tool_call>", " bye"],
            TOOLS,
            "normal",
            True,
            ("Hi  bye", "", ["x"]),
        ),
        (["plan", "</think>", "ok"], TOOLS, "reasoning", True, ("ok", "plan", [])),
        # 0.31.2 on: a think start opens reasoning midway; 0.31.1 keeps it as content
        (["<think>", "plan", "</think>"], TOOLS, "normal", True, ("", "plan", [])),
        (
            ["<think>", "p"],
            Markers("<tool_call>", "</tool_call>", ("<think>", "</think>"), False),
            "normal",
            True,
            ("<think>p", "", []),
        ),
        # no end marker: the call runs to the end of the reply
        (["[", "f(a=1)]"], Markers("["), "normal", True, ("", "", ["f(a=1)]"])),
        # a stream that stops on EOS loses its last chunk's content
        (["Hi", " there"], TOOLS, "normal", False, ("Hi", "", [])),
    ],
    ids=["call", "prompt-opened-think", "think-midway", "think-kept-0.31.1", "no-end", "eos"],
)
def test_collect(
    pieces: list[str],
    markers: Markers,
    initial: str,
    keep_last: bool,
    expected: tuple[str, str, list[str]],
) -> None:
    assert collect(pieces, markers, initial, keep_last) == expected


@pytest.fixture
def old_mlx_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed mlx-lm without TextStateMachine: as 0.31.2-0.31.3."""
    importlib.import_module("mlx_lm.server")  # imports it from generate: before it goes
    monkeypatch.delattr(importlib.import_module("mlx_lm.generate"), "TextStateMachine")


def test_corpus_replay_on_an_old_release(old_mlx_lm: None) -> None:
    got = mlx_lm_server.extract("json_tools", JSON_DIALECT, f"<think>plan</think>Hi {CALL} bye")
    assert got.calls == (ToolCall("f", {"a": 1}),)
    assert got.reasoning == "plan" and got.content == "Hi  bye" and not got.crash


def test_a_parser_error_is_dropped_by_0_31_2_and_fails_the_request_on_0_31_1(
    old_mlx_lm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    dropped = mlx_lm_server.extract("json_tools", JSON_DIALECT, "<tool_call>{oops</tool_call>")
    assert dropped.calls == () and dropped.errors and not dropped.crash
    monkeypatch.delattr(importlib.import_module("mlx_lm.server"), "ToolCallFormatter")  # 0.31.1
    crashed = mlx_lm_server.extract("json_tools", JSON_DIALECT, "<tool_call>{oops</tool_call>")
    assert crashed.calls == () and crashed.crash.startswith("JSONDecodeError")
    fine = mlx_lm_server.extract("json_tools", JSON_DIALECT, CALL)
    assert fine.calls == (ToolCall("f", {"a": 1}),)


@pytest.mark.parametrize(
    ("prompt", "state"),
    [([1, 7, 2], "reasoning"), ([7, 8, 2], "normal"), ([1, 2], "normal")],
)
def test_initial_state_from_the_ids_on_0_31_1(prompt: list[int], state: str) -> None:
    tokenizer = SimpleNamespace(has_thinking=True, think_start_id=7, think_end_id=8)
    assert mlx_lm_server.initial_state(tokenizer, prompt) == state
