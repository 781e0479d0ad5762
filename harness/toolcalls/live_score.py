"""One live prompt's outcome, the counts over a run of prompts, and their JSON artifact form."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.toolcalls.classify import CallFailure, CallVerdict
from harness.toolcalls.live import Category, Prompt
from harness.toolcalls.model import Extraction, ToolCall


@dataclass(frozen=True)
class PromptResult:
    prompt: Prompt
    raw: str  # the generated text, EOS excluded
    finish_reason: str
    prompt_tokens: int
    generated_tokens: int
    whole: Extraction  # the non-streamed response
    streamed: Extraction  # the streamed response, as a client assembles it
    verdict: CallVerdict  # of the non-streamed response
    markup: tuple[str, ...]  # the call markup of the inferred parser
    seconds: float

    @property
    def has_markup(self) -> bool:
        """The reply holds call markup (so a parser was asked to find a call in it)."""
        return any(m in self.raw for m in self.markup)

    @property
    def parses(self) -> bool:
        """The non-streamed response has calls and no call was dropped or crashed."""
        return bool(self.whole.calls) and not self.whole.errors and not self.whole.crash

    @property
    def parity(self) -> bool:
        """Streamed and non-streamed responses carry the same calls (and fail alike)."""
        same_crash = bool(self.whole.crash) == bool(self.streamed.crash)
        return self.whole.calls == self.streamed.calls and same_crash

    @property
    def content_parity(self) -> bool:
        return self.whole.content == self.streamed.content

    @property
    def leaked(self) -> bool:
        texts = (self.whole.content, self.streamed.content)
        return any(m in text for m in self.markup for text in texts)

    @property
    def dropped(self) -> int:
        """Tool texts the server failed to parse and left out of the response, silently."""
        return len(self.whole.errors)

    @property
    def ok(self) -> bool:
        return self.verdict.failure is CallFailure.OK


@dataclass(frozen=True)
class CategoryScore:
    category: Category
    prompts: int
    ok: int

    @property
    def accuracy(self) -> float:
        return self.ok / self.prompts if self.prompts else 0.0


@dataclass(frozen=True)
class LiveSummary:
    prompts: int
    ok: int
    markup_outputs: int
    parsed: int  # of markup_outputs
    parity: int
    content_parity: int
    leaked: int
    dropped: int
    request_errors: int
    categories: tuple[CategoryScore, ...]
    failures: tuple[tuple[CallFailure, int], ...]  # every class that occurred, most frequent first

    @property
    def accuracy(self) -> float:
        return self.ok / self.prompts if self.prompts else 0.0


def summarise(results: Sequence[PromptResult]) -> LiveSummary:
    categories = tuple(
        CategoryScore(c, len(mine), sum(r.ok for r in mine))
        for c in Category
        if (mine := [r for r in results if r.prompt.category is c])
    )
    counted = Counter(r.verdict.failure for r in results if not r.ok)
    markup = [r for r in results if r.has_markup]
    return LiveSummary(
        prompts=len(results),
        ok=sum(r.ok for r in results),
        markup_outputs=len(markup),
        parsed=sum(r.parses for r in markup),
        parity=sum(r.parity for r in results),
        content_parity=sum(r.content_parity for r in results),
        leaked=sum(r.leaked for r in results),
        dropped=sum(r.dropped for r in results),
        request_errors=sum(bool(r.whole.crash) for r in results),
        categories=categories,
        failures=tuple(counted.most_common()),
    )


def _calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [c.as_json() for c in calls]


def record(result: PromptResult) -> dict[str, Any]:
    """The artifact the report reads for one prompt (raw text kept as is; reports escape it)."""
    whole, streamed = result.whole, result.streamed
    return {
        "id": result.prompt.id,
        "category": result.prompt.category.value,
        "source": result.prompt.source,
        "question": next(
            (m.get("content", "") for m in reversed(result.prompt.messages) if m["role"] == "user"),
            "",
        ),
        "failure": result.verdict.failure.value,
        "detail": result.verdict.detail,
        "raw": result.raw,
        "finish_reason": result.finish_reason,
        "prompt_tokens": result.prompt_tokens,
        "generated_tokens": result.generated_tokens,
        "seconds": round(result.seconds, 3),
        "calls": _calls(whole.calls),
        "content": whole.content,
        "errors": list(whole.errors),
        "crash": whole.crash or None,
        "stream_calls": _calls(streamed.calls),
        "stream_content": streamed.content,
        "stream_crash": streamed.crash or None,
        "has_markup": result.has_markup,
        "parses": result.parses,
        "parity": result.parity,
        "content_parity": result.content_parity,
        "leaked": result.leaked,
    }
