"""Contract check on the non-streamed chat message: it always carries ``content``, a string or
null (OpenAI's schema requires the key, nullable), also when the answer has no text: a tool
call, or a reasoning cut by ``max_tokens`` inside its think block.

mlx-lm 0.31.2-0.31.3 (#1738) built the message as ``{"role": "assistant"}`` and added
``content`` only for a non-empty text, so such an answer had no ``content`` key and a client
reading ``message["content"]`` raised KeyError. openai-python reads a missing key as None, so
the check reads the raw JSON. Streamed deltas are not judged: a delta may leave ``content`` out.

It asks nothing of its own where another check asked already: it judges the non-streamed
answer of the tool request (asked once per run; here when no tool check ran) and of the
reasoning request when the reasoning check ran before it. Any judged message without the key
fails; the contract's case is an answer without text, and with none such (every answer had
text, or the server refused tools) the check is not applicable, saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.backends.openai_client import Reply
from harness.scenarios.api_contracts.asking import chat_message, refused, shown_value
from harness.scenarios.api_contracts.checks_reasoning import SHARED_KEY, ReasoningExchange
from harness.scenarios.api_contracts.checks_tools import tool_exchange
from harness.scenarios.api_contracts.verdicts import (
    Api,
    CheckContext,
    CheckResult,
    ContractCheck,
    Exchange,
    failed,
    not_applicable,
    passed,
    unjudged,
)

NAME = "message_content"
# a chat message's keys, shown as they are in a reason; any other is the server's text, quoted
MESSAGE_KEYS = frozenset(
    {
        "role",
        "content",
        "reasoning",
        "reasoning_content",
        "tool_calls",
        "refusal",
        "function_call",
        "annotations",
        "audio",
        "name",
    }
)
JSON_TYPES = {dict: "object", list: "array", bool: "boolean", int: "number", float: "number"}


def judged_answers(ctx: CheckContext) -> list[tuple[str, Reply, Exchange]]:
    """(what was asked, the non-streamed answer, its exchange): the tool request's (asked
    here when no tool check asked it), the reasoning request's when that check asked it."""
    tools = tool_exchange(ctx)
    answers = [("tool request", tools.whole, tools.whole_exchange)]
    reasoning = ctx.shared.get(SHARED_KEY)
    if isinstance(reasoning, ReasoningExchange):
        answers.append(("reasoning request", reasoning.whole, reasoning.whole_exchange))
    return answers


def keys_line(message: Mapping[str, Any]) -> str:
    """The message's keys as sent, in one line (a key not known here quoted, cut)."""
    keys = [str(k) if k in MESSAGE_KEYS else shown_value(k, 24) for k in message]
    return ", ".join(keys) if keys else "none"


def content_problem(message: Mapping[str, Any]) -> str | None:
    """What breaks the contract in ``message`` (one line), else None."""
    if "content" not in message:
        return f"no content key (its keys: {keys_line(message)})"
    content = message["content"]
    if content is None or isinstance(content, str):
        return None
    kind = JSON_TYPES.get(type(content), type(content).__name__)
    return f"content is a JSON {kind}, not a string or null"


def check_message_content(ctx: CheckContext) -> CheckResult:
    if ctx.api is not Api.CHAT:
        return not_applicable(NAME, "the chat message needs the chat API (api: chat)")
    answers = judged_answers(ctx)
    evidence = tuple(exchange for _, _, exchange in answers)
    problems: list[str] = []
    unanswered: list[str] = []
    without_text: list[str] = []
    with_text = 0
    for asked, reply, _ in answers:
        if reply.out_of_case_time:
            reason = (
                f"not judged: the case's time limit (timeout_s) ran out during the {asked}: "
                f"{reply.failure}"
            )
            return unjudged(NAME, reason, evidence)
        if not reply.ok:
            if refused(reply):
                unanswered.append(f"the server refused the {asked} ({reply.failure})")
            else:
                problems.append(f"the non-streamed {asked} failed: {reply.failure}")
            continue
        message = chat_message(reply)
        if isinstance(message, str):
            problems.append(f"the {asked}'s non-streamed answer has {message}")
            continue
        problem = content_problem(message)
        if problem is not None:
            problems.append(f"the {asked}'s non-streamed message has {problem}")
        elif message["content"]:
            with_text += 1
        else:
            shown = "null" if message["content"] is None else '""'
            without_text.append(f"{asked}: content {shown}")
    if problems:
        reason = (
            "; ".join(problems) + " (a chat.completion message carries content: a string, "
            "or null when there is no text)"
        )
        return failed(NAME, reason, evidence)
    if not without_text:
        had = [f"{with_text} answer{'' if with_text == 1 else 's'} with text"] if with_text else []
        reason = "no non-streamed answer without text to judge on: " + "; ".join(
            [*had, *unanswered]
        )
        return not_applicable(NAME, reason, evidence)
    judged = ", ".join(without_text)
    return passed(NAME, f"every non-streamed message carries content (no text: {judged})", evidence)


CHECKS = (
    ContractCheck(
        NAME,
        "a non-streamed chat message always carries content (a string, or null with no text)",
        check_message_content,
    ),
)
