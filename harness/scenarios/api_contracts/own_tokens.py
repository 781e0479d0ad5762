"""Did the model call a tool the server did not return? The chat request with tools rendered
with the server's own chat template here, asked raw on ``/v1/completions`` (greedy, the same
``max_tokens``): the same weights' own tokens. A call there (a family's call markup, then a
tool's name) with none in the chat answer is a call the server dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from harness.backends.base import BackendError
from harness.core.tool_request import as_served
from harness.scenarios.api_contracts.asking import ask
from harness.scenarios.api_contracts.verdicts import Api, CheckContext, Exchange
from harness.toolcalls.formats import FORMATS


class Held(str, Enum):
    CALL = "call"  # the own tokens hold a call
    NONE = "none"  # they hold none
    UNKNOWN = "unknown"  # they could not be asked


@dataclass(frozen=True)
class OwnTokens:
    held: Held
    line: str  # one line: the call (marker and tool), none, or why it could not be checked
    evidence: tuple[Exchange, ...] = ()


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
        reply, exchange = ask(ctx, payload, api=Api.COMPLETIONS)
        if not reply.ok:
            line = f"the model's own tokens could not be checked (/v1/completions: {reply.failure})"
            return OwnTokens(Held.UNKNOWN, line, (exchange,))
        names = [str(t["function"]["name"]) for t in tools]
        call = call_in_text(reply.content, names)
        if call is None:
            return OwnTokens(Held.NONE, "the model's own greedy tokens hold none", (exchange,))
        marker, name = call
        line = f"the model called {name} (its own greedy tokens hold {marker}… naming it)"
        return OwnTokens(Held.CALL, line, (exchange,))

    result: OwnTokens = ctx.once("tools_own_tokens", make)
    return result
