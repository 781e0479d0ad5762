"""Did the model call a tool the server did not return? The chat request with tools rendered
with the server's own chat template here, asked raw on ``/v1/completions`` (greedy, the same
``max_tokens``, ``logprobs`` on): the same weights' own tokens. A call there with none in the
chat answer is a call the server dropped.

The own tokens are read the same on every release: the token ids the answer's ``logprobs``
carry are decoded here with the model's tokenizer (a server that drops a call drops its text
from ``/v1/completions`` too, mlx-lm 0.31.2-0.31.3, but still returns its tokens), else the
returned text is taken; the calls in it are read by the harness's own reference parser for the
markup the template renders (:mod:`harness.toolcalls.own_reading`), never by the installed
release's. A template whose markup the harness has no reader for falls back to a family's
opening marker followed by a tool's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from harness.backends.base import BackendError
from harness.backends.chat_templating import DecodesTokens
from harness.backends.openai_client import Reply
from harness.core.tool_request import as_served
from harness.scenarios.api_contracts.asking import ask
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Exchange
from harness.toolcalls.formats import FORMATS
from harness.toolcalls.model import ToolCall
from harness.toolcalls.own_reading import read_own_calls, shown_call, template_format


class Held(str, Enum):
    CALL = "call"  # the own tokens hold a call
    NONE = "none"  # they hold none
    UNKNOWN = "unknown"  # they could not be asked


@dataclass(frozen=True)
class OwnTokens:
    held: Held
    line: str  # one line: the call (marker and tool), none, or why it could not be checked
    evidence: tuple[Exchange, ...] = ()
    # every call the harness's reader found, when it read the whole text cleanly (a reader for
    # the template's markup, and no markup that failed to parse); None: how many is not known
    calls: tuple[ToolCall, ...] | None = None
    read: str = ""  # how the text was read ("its 40 token ids decoded here, read as ...")


def openers() -> tuple[str, ...]:
    """The text that opens a call in some model family's markup."""
    return tuple(sorted({f.markup[0] for f in FORMATS}))


def call_in_text(text: str, tool_names: Sequence[str]) -> tuple[str, str] | None:
    """(the call's opening marker, the tool it names) of the first call in ``text``: a
    family's opening marker followed by a tool's name; None when there is none."""
    found = sorted((at, m) for m in openers() if (at := text.find(m)) >= 0)
    for at, marker in found:
        after = text[at + len(marker) :]
        named = sorted((i, n) for n in tool_names if (i := after.find(n)) >= 0)
        if named:
            return marker, named[0][1]
    return None


def token_ids(reply: Reply) -> list[int] | None:
    """The generated token ids a completion's ``logprobs`` carry (mlx_lm.server: ``content``
    entries with an ``id``); None when it carries none."""
    choices = reply.body.get("choices") if isinstance(reply.body, Mapping) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    logprobs = choice.get("logprobs") if isinstance(choice, Mapping) else None
    entries = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(entries, list) or not entries:
        return None
    ids = [e.get("id") if isinstance(e, Mapping) else None for e in entries]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return None
    return [int(i) for i in ids if isinstance(i, int)]


def own_text(ctx: CheckContext, reply: Reply) -> tuple[str, str]:
    """(the model's own text, where it came from): the answer's token ids decoded here, else
    the text the server returned."""
    ids = token_ids(reply)
    if ids is not None and isinstance(ctx.renderer, DecodesTokens):
        try:
            decoded = ctx.renderer.decode_tokens(ids)
        except BackendError:
            decoded = None
        # ids of another vocabulary (a GGUF's) would decode to other text: the returned text
        # must be in the decoded one
        if decoded is not None and reply.content.strip() in decoded:
            return decoded, f"its {len(ids)} token ids decoded here"
    return reply.content, "the text returned"


@dataclass(frozen=True)
class Judged:
    """What a text holds: the verdict, its line, the calls counted (None: not known), and how
    the text was read."""

    held: Held
    line: str
    calls: tuple[ToolCall, ...] | None = None
    read: str = ""


def judged(ctx: CheckContext, text: str, source: str, tools: Sequence[Mapping[str, Any]]) -> Judged:
    """What ``text`` holds, read by the harness's reader for the template's markup (else by a
    family's opening marker and a tool's name, which cannot count the calls)."""
    template = ctx.renderer.chat_template_text() if ctx.renderer is not None else None
    reading = read_own_calls(template, text, tools) if template else None
    if reading is not None:
        read = f"{source}, read as {reading.format} markup by the harness"
        if reading.opener_missing:
            read += f"; its opening {reading.opener_missing} missing, taken by the server"
        counted = None if reading.errors else reading.calls
        if reading.calls:
            line = f"the model called {shown_call(reading.calls[0])} ({read})"
            return Judged(Held.CALL, line, counted, read)
        if reading.errors:
            return Judged(
                Held.NONE,
                f"the model's own greedy tokens hold no call that parses ({read}: "
                f"{reading.errors[0]})",
                None,
                read,
            )
        return Judged(Held.NONE, f"the model's own greedy tokens hold none ({read})", counted, read)
    names = [str(t["function"]["name"]) for t in tools]
    call = call_in_text(text, names)
    if call is None:
        return Judged(Held.NONE, "the model's own greedy tokens hold none", read=source)
    marker, name = call
    return Judged(
        Held.CALL,
        f"the model called {name} (its own greedy tokens hold {marker}… naming it)",
        read=source,
    )


def counts_calls(ctx: CheckContext) -> bool:
    """Whether the harness can count the calls in the model's own tokens: a chat template known
    here whose markup the harness has a reader for."""
    template = ctx.renderer.chat_template_text() if ctx.renderer is not None else None
    fmt = template_format(template) if template else None
    return fmt is not None and fmt.own_reader is not None


def own_tokens(
    ctx: CheckContext, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
) -> OwnTokens:
    """What the model's own greedy tokens hold for the chat request (asked once per run)."""

    def make() -> OwnTokens:
        if ctx.renderer is None:
            return OwnTokens(
                Held.UNKNOWN,
                "the model's own tokens could not be checked (no chat template known here: "
                "name the model folder with path:)",
            )
        try:
            text = ctx.renderer.render_chat(as_served(messages), tools=list(tools))
        except BackendError as exc:
            return OwnTokens(Held.UNKNOWN, f"the model's own tokens could not be checked: {exc}")
        payload = {"prompt": text, "max_tokens": ctx.limits.long_max_tokens, "temperature": 0.0}
        reply, exchange = ask(ctx, {**payload, "logprobs": True}, api=Api.COMPLETIONS)
        evidence = [exchange]
        if not reply.ok and reply.status is not None and 400 <= reply.status < 500:
            reply, exchange = ask(ctx, payload, api=Api.COMPLETIONS)  # a server without logprobs
            evidence.append(exchange)
        if not reply.ok:
            line = f"the model's own tokens could not be checked (/v1/completions: {reply.failure})"
            return OwnTokens(Held.UNKNOWN, line, tuple(evidence))
        found = judged(ctx, *own_text(ctx, reply), tools)
        return OwnTokens(found.held, found.line, tuple(evidence), found.calls, found.read)

    result: OwnTokens = ctx.once("tools_own_tokens", make)
    return result
