"""The tool checks' own-token reading on a release that drops a call everywhere (mlx-lm
0.31.2-0.31.3 on a call closed by the end of turn): the chat answer is empty, and
``/v1/completions`` returns no text either, but its ``logprobs`` still carry the generated token
ids. Decoded here and read by the harness's own parser for the template's markup, with mlx-lm
not importable (a pinned release whose parser is missing or differs), they hold the call: every
tool check fails. A server that returns no ids is read from its text, as before."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from harness.backends.openai_client import Chunk, Endpoint, Reply, StreamReply, sync_client
from harness.models.zoo import templates as t
from harness.scenarios.api_contracts import run_checks
from harness.scenarios.api_contracts.checks_tools import ToolExchange
from harness.scenarios.api_contracts.own_tokens import token_ids
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Exchange, Limits, Verdict
from tests.servers.scripted_openai import completion, scripted_server

LIMITS = Limits(max_tokens=8, long_max_tokens=32, timeout_s=10.0, concurrency=2, settle_s=0.0)
TOOL_CHECKS = (
    "tool_call_arguments",
    "tool_call_finish_reason",
    "tool_call_markup",
    "tool_call_stream_merge",
)
CALL = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>'
IDS = list(range(100, 112))  # what the toy tokenizer decodes to CALL
# mlx-lm 0.31.2: the server took [TOOL_CALLS] as its tool state's start and returns the rest
BODY = 'get_weather[ARGS]{"city": "Paris"}</s>'
BODY_IDS = list(range(200, 210))
DECODED = {tuple(IDS): CALL, tuple(BODY_IDS): BODY}


class MistralRenderer:
    """Mistral-Small's template known here; its tokenizer decodes IDS to the call."""

    bos_token_id = None

    def chat_template_text(self) -> str | None:
        return t.MISTRAL_SMALL

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return "[INST]What is the weather in Paris right now?[/INST]"

    def decode_tokens(self, ids: Sequence[int]) -> str:
        return DECODED.get(tuple(ids), "?")


@pytest.fixture
def no_mlx_lm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [m for m in sys.modules if m == "mlx_lm" or m.startswith("mlx_lm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mlx_lm", None)
    yield


def _empty_exchange() -> ToolExchange:
    """The chat answer of a release that dropped the call: empty, finish_reason stop."""
    message = {"role": "assistant", "content": ""}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    whole = Reply(200, body, "", 0.1, path="POST /v1/chat/completions")
    delta = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    streamed = StreamReply(200, (Chunk(0.1, delta, ""),), 0.1, True)
    exchange = Exchange("POST /v1/chat/completions {}", "200")
    return ToolExchange(whole, exchange, streamed, exchange)


def _completions(text: str, ids: list[int] | None) -> Any:
    def answer(method: str, path: str, body: Any) -> tuple[int, Any]:
        out = completion(text, 40, len(ids or IDS))
        if ids and body.get("logprobs") is True:
            entries = [{"id": i, "logprob": -0.1} for i in ids]
            out["choices"][0]["logprobs"] = {"content": entries}
        return 200, out

    return answer


@pytest.mark.parametrize(
    ("text", "ids", "verdict", "reason"),
    [
        # 0.31.3: no text, the ids carry the call
        (
            "",
            IDS,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (its 12 token ids "
            "decoded here, read as mistral markup by the harness) and the server returned no tool "
            "call",
        ),
        # 0.31.2: the ids and the text hold the call without its [TOOL_CALLS]
        (
            'get_weather[ARGS]{"city": "Paris"}',
            BODY_IDS,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (its 10 token ids decoded here, read as "
            "mistral markup by the harness; its opening [TOOL_CALLS] missing, taken by the "
            "server) and the server returned no tool call",
        ),
        # ids that decode to other text than the server returned (another vocabulary): the
        # text is read
        (
            "It is sunny.",
            IDS,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens hold none (the text returned, read "
            "as mistral markup by the harness)",
        ),
        # a server without ids whose text holds the call
        (
            CALL,
            None,
            Verdict.FAIL,
            "the model called get_weather(city='Paris') (the text "
            "returned, read as mistral markup by the harness)",
        ),
        # nothing anywhere: not applicable, saying how it was read
        (
            "",
            None,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens "
            "hold none (the text returned, read as mistral markup by the harness)",
        ),
        (
            "It is sunny.",
            None,
            Verdict.NOT_APPLICABLE,
            "no tool call made: the model's own greedy tokens hold none",
        ),
    ],
)
def test_a_call_dropped_everywhere_fails_without_the_installed_parser(
    no_mlx_lm: None, text: str, ids: list[int] | None, verdict: Verdict, reason: str
) -> None:
    with scripted_server(_completions(text, ids)) as url, sync_client(5.0) as client:
        ctx = CheckContext(client, Endpoint(url), Api.CHAT, LIMITS, "x", renderer=MistralRenderer())
        ctx.shared["tools"] = _empty_exchange()
        results = run_checks(ctx, list(TOOL_CHECKS))
    assert sorted(r.name for r in results) == sorted(TOOL_CHECKS)
    for result in results:
        assert result.verdict is verdict and result.reason.startswith(reason), result.reason
    assert "mlx_lm.tool_parsers.mistral" not in sys.modules


@pytest.mark.parametrize(
    ("logprobs", "expected"),
    [
        ({"content": [{"id": 3, "logprob": 0.0}, {"id": 9, "logprob": -1.0}]}, [3, 9]),
        ({"content": [{"token": "a", "logprob": 0.0}]}, None),  # strings only: no ids
        ({"content": [{"id": True}]}, None),
        ({"content": []}, None),
        (None, None),
    ],
)
def test_token_ids_come_only_from_whole_id_lists(logprobs: Any, expected: Any) -> None:
    body = {"choices": [{"index": 0, "text": "", "logprobs": logprobs}]}
    assert token_ids(Reply(200, body, "", 0.1)) == expected
