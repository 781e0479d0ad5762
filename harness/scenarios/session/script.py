"""The conversations the ``session`` scenario replays: generated agent sessions, or recorded
ones from a JSONL file, as requests in order.

A session is a list of OpenAI-style chat messages (``system``, ``user``, ``assistant`` with
optional ``tool_calls``, ``tool`` results) and the tools offered. It is replayed as an agent
client does: a request is made at every point where the next message is the assistant's (the
messages before it are the prompt), and the recorded assistant message, not the model's answer,
goes into the history, so every engine sees the same conversation and the turns compare.

Generated sessions (:func:`generated_session`) are a coding agent's loop: a system prompt and
two tools; the user asks, the assistant calls a tool, the tool's result (long text) comes back,
and so on, with an answer and a new user question every third turn. Tool results are sized so
the last request holds about ``context_tokens``. With ``think`` each assistant message opens
with a ``<think>`` block, which templates such as Qwen3's drop from earlier turns: the history
is then rendered differently on the next turn and a prefix cache cannot reuse it.

A recorded session is one JSON object a line: ``{"messages": [...], "tools": [...]}``
(``tools`` optional); a line that is not one gets one error naming the file, the line and the
fix (:class:`SessionFileError`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.scenarios.prompts import text_of_about

ROLES = frozenset({"system", "user", "assistant", "tool"})

SYSTEM = (
    "You are a careful coding agent working in a Python repository. Use the tools to read "
    "files and search the code before you answer; answer briefly."
)
TOOLS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "path to the file"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the repository for a text.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "text to find"}},
                "required": ["query"],
            },
        },
    },
)
QUESTIONS = (
    "The test test_parse_dates fails. Find out why.",
    "Now make the parser accept ISO week dates too.",
    "Add a test for the new case and tell me where it goes.",
    "Is anything else in the module affected by the change?",
)
CALLS = (
    ("read_file", "path", "src/parser.py"),
    ("search", "query", "parse_dates"),
    ("read_file", "path", "tests/test_parser.py"),
    ("search", "query", "week"),
)
THOUGHT = (
    "<think>\nThe user wants the cause first; I should look at the code before answering."
    "\n</think>\n\n"
)
ANSWER = "The date pattern does not allow a two-digit day; the fix is in parse_dates."


class SessionFileError(ValueError):
    """A sessions file that cannot be read: one line naming the file, the line and the fix."""


@dataclass(frozen=True)
class Session:
    """One conversation: its messages (OpenAI chat format: tool-call arguments as JSON text)
    and the tools offered."""

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    source: str = "generated"

    @property
    def request_points(self) -> tuple[int, ...]:
        """Where a request is made: the index of each assistant message (its prompt is the
        messages before it), and the end when the last message is not the assistant's."""
        points = [i for i, m in enumerate(self.messages) if m.get("role") == "assistant" and i]
        if self.messages and self.messages[-1].get("role") != "assistant":
            points.append(len(self.messages))
        return tuple(points)

    def prompt(self, turn: int) -> list[Mapping[str, Any]]:
        """The messages of request ``turn`` (0-based)."""
        return list(self.messages[: self.request_points[turn]])

    def turn_kind(self, turn: int) -> str:
        """What the request answers: ``user`` or ``tool`` (the message just before it)."""
        last = self.messages[self.request_points[turn] - 1]
        return "tool" if last.get("role") == "tool" else str(last.get("role", "user"))

    def with_nonce(self, nonce: str) -> Session:
        """The same conversation with ``nonce`` at the start of its first message, so that a
        server holding an earlier replay in its cache starts cold."""
        first = dict(self.messages[0])
        first["content"] = f"[{nonce}] {first.get('content') or ''}"
        return Session((first, *self.messages[1:]), self.tools, self.source)


def template_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as chat templates take them: tool-call arguments as objects, which is what
    mlx_lm.server does to a request's messages before it applies the template."""
    out: list[dict[str, Any]] = []
    for message in messages:
        copy = dict(message)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            copy["tool_calls"] = [_call_for_template(call) for call in calls]
        out.append(copy)
    return out


def _call_for_template(call: Any) -> Any:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return call
    function = dict(call["function"])
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        with contextlib.suppress(json.JSONDecodeError):  # else as recorded
            function["arguments"] = json.loads(arguments)
    return {**call, "function": function}


def generated_session(
    turns: int, context_tokens: int, think: bool, count_tokens: Callable[[str], int] | None
) -> Session:
    """A coding agent's session of ``turns`` requests whose last prompt holds about
    ``context_tokens`` tokens (the tool results carry the growth)."""
    bare = _session(turns, think, lambda: "")
    count = count_tokens or (lambda text: len(text) // 4)
    base = count(json.dumps(list(bare.messages)) + json.dumps(list(bare.tools)))
    results = max(sum(1 for m in bare.messages if m.get("role") == "tool"), 1)
    body = text_of_about(max((context_tokens - base) // results, 16), count_tokens)
    return _session(turns, think, lambda: body)


def _session(turns: int, think: bool, result: Callable[[], str]) -> Session:
    messages: list[Mapping[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(turns):
        if turn % 3 == 0:
            messages.append({"role": "user", "content": QUESTIONS[(turn // 3) % len(QUESTIONS)]})
        else:
            name = CALLS[(turn - 1) % len(CALLS)][0]
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": f"call_{turn - 1}",
                    "name": name,
                    "content": result(),
                }
            )
        if turn < turns - 1:
            messages.append(_assistant(turn, think))
    return Session(tuple(messages), TOOLS)


def _assistant(turn: int, think: bool) -> Mapping[str, Any]:
    thought = THOUGHT if think else ""
    if turn % 3 == 2:
        return {"role": "assistant", "content": thought + ANSWER}
    name, key, value = CALLS[turn % len(CALLS)]
    call = {
        "id": f"call_{turn}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps({key: value})},
    }
    return {"role": "assistant", "content": thought, "tool_calls": [call]}


def sessions_from_file(path: Path) -> list[Session]:
    """The recorded sessions of a JSONL file, one a line (blank lines skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionFileError(
            f"{path}: cannot read the sessions file ({type(exc).__name__}); give a JSONL file "
            'of {"messages": [...]} lines'
        ) from None
    sessions = [
        _session_line(path, number, line)
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]
    if not sessions:
        raise SessionFileError(f'{path}: no sessions; write one {{"messages": [...]}} a line')
    return sessions


def _session_line(path: Path, number: int, line: str) -> Session:
    where = f"{path}:{number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SessionFileError(
            f"{where}: not JSON ({exc.msg}, column {exc.colno}); write one JSON object a line"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise SessionFileError(f'{where}: no "messages" list; write {{"messages": [...]}}')
    messages = data["messages"]
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise SessionFileError(
                f"{where}: message {index + 1} has role {role!r}; use one of "
                f"{', '.join(sorted(ROLES))}"
            )
    tools = data.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise SessionFileError(
            f'{where}: "tools" is not a list of objects; give a list or leave it out'
        )
    session = Session(tuple(messages), tuple(tools), f"{path.name}:{number}")
    if not session.request_points or session.request_points[0] == 0:
        raise SessionFileError(
            f"{where}: no request to make (a session needs a message before an assistant "
            "message, or one that does not end with the assistant's)"
        )
    return session
