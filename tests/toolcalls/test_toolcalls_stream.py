"""The server replays on a real tokenizer: token-by-token streaming vs the whole text at once,
and a chat template swapped in the way ``mlx_lm.server --chat-template`` does it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.toolcalls import mlx_lm_server, mlx_lm_stream, shipped
from harness.toolcalls.model import ToolCall
from tests.installed import require

require("mlx_lm")

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
BERLIN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Berlin"}}\n</tool_call>'
PARIS = ToolCall("get_weather", {"city": "Paris"})


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.zoo_shared import zoo_family

    return {name: zoo_family(tmp_path_factory, name) for name in ("qwen3", "gemma3_text")}


@pytest.fixture(scope="module")
def tokenizer(zoo: dict[str, Path]) -> Any:
    from mlx_lm.utils import load_tokenizer

    wrapper = load_tokenizer(zoo["qwen3"])
    assert wrapper.tool_parser is not None  # qwen3's template: json_tools
    return wrapper


# (text, finish reason, calls expected from both, dropped, crash prefix)
REPLIES: list[tuple[str, str, tuple[ToolCall, ...], int, str]] = [
    (CALL, "stop", (PARIS,), 0, ""),
    (f"Let me check.\n{CALL}\nDone.", "stop", (PARIS,), 0, ""),
    (f"{CALL}\n{BERLIN}", "stop", (PARIS, ToolCall("get_weather", {"city": "Berlin"})), 0, ""),
    ("<tool_call>\n{oops}\n</tool_call>", "stop", (), 1, ""),
    ('<tool_call>\n{"name": "f", "parameters": {}}\n</tool_call>', "stop", (), 0, "KeyError"),
    ('<tool_call>\n{"name": "get_weather", "argu', "length", (), 1, ""),
    ("No call here, just text.", "stop", (), 0, ""),
]


@pytest.mark.parametrize(("text", "finish", "calls", "dropped", "crash"), REPLIES)
def test_streamed_and_whole_text_agree(
    tokenizer: Any, text: str, finish: str, calls: tuple[ToolCall, ...], dropped: int, crash: str
) -> None:
    tokens = tokenizer.encode(text, add_special_tokens=False)
    decoded = tokenizer.decode(tokens)
    whole = mlx_lm_server.extract_text(tokenizer, decoded, None, finish)  # type: ignore[arg-type]
    streamed = mlx_lm_stream.extract_stream(tokenizer, tokens, None, finish)  # type: ignore[arg-type]
    for got in (whole, streamed):
        assert got.calls == calls
        assert len(got.errors) == dropped
        assert got.crash.startswith(crash) if crash else not got.crash
        assert "<tool_call>" not in got.content
    assert whole.content == streamed.content


@pytest.mark.parametrize("finish", ["stop", "length"])
def test_chunks_add_up_to_the_decoded_text(tokenizer: Any, finish: str) -> None:
    tokens = tokenizer.encode(f"Héllo wörld 🙂 {CALL}", add_special_tokens=False)
    chunks = mlx_lm_stream.stream_chunks(tokenizer, tokens, finish)  # type: ignore[arg-type]
    assert "".join(text for text, _ in chunks) == tokenizer.decode(tokens)
    assert [f for _, f in chunks][-1] == finish and all(f is None for _, f in chunks[:-1])
    # generate.py yields the last token together with the finish reason when cut by length
    assert len(chunks) == len(tokens) + (1 if finish == "stop" else 0)


def test_swapped_template_makes_mlx_lm_infer_the_parser(zoo: dict[str, Path]) -> None:
    from harness.backends.mlx_lm import BACKEND

    model, _ = BACKEND.load(zoo["gemma3_text"])
    tools: Any = model
    assert tools.tool_parser_name() is None  # gemma 3's template has no call markup
    text = shipped.template_path("smollm2_tools").read_text()
    swapped = tools.with_chat_template(text)
    assert swapped.tool_parser_name() == "json_tools"
    assert swapped.tool_markers() == ("<tool_call>", "</tool_call>")
    assert swapped.chat_template_text() == text
    assert swapped.model is tools.model  # same weights, new tokenizer
    prompt = swapped.chat_tokens(
        [{"role": "user", "content": "hi"}], tools=[{"type": "function", "function": {"name": "f"}}]
    )
    assert '"name": "f"' in swapped.decode(prompt)
    whole, streamed = swapped.replay_server(prompt, swapped.encode(CALL), None, "stop")
    assert whole.calls == streamed.calls == (PARIS,)
