"""One greedy request of a given prompt length, in process or over HTTP, as an
:class:`~harness.scenarios.context_limit.outcome.Answer` (never raising for a refusal).

In process the prompt is exactly ``n`` tokens of ordinary text and ``stream_tokens`` runs it; a
:class:`BackendError` is the refusal, and what the model computed is known exactly (it counts
every token it was given). Over HTTP the prompt is ordinary text of ``n`` tokens by the model's
own tokenizer, sent raw to ``/v1/completions`` (no chat template to add tokens), non-streamed;
the server's ``usage`` says what it counted and generated, an HTTP status >= 400 is the
refusal."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from harness.backends.base import BackendError, LoadedModel, Served
from harness.backends.openai_client import post, sync_client
from harness.scenarios.context_limit.outcome import Answer
from harness.scenarios.prompts import text_of_about, text_prompt

REQUEST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class InProcess:
    model: LoadedModel

    def send(self, n_tokens: int, max_tokens: int) -> Answer:
        prompt = text_prompt(self.model, n_tokens)
        generated = 0
        try:
            for _token in self.model.stream_tokens(prompt, max_tokens=max_tokens, ignore_eos=True):
                generated += 1
        except BackendError as exc:
            return Answer(len(prompt), max_tokens, refused=True, failure=str(exc))
        return Answer(
            len(prompt), max_tokens, prompt_tokens=len(prompt), completion_tokens=generated
        )


@dataclass(frozen=True)
class OverHttp:
    model: Served
    count: Callable[[str], int]
    case_end: float | None = None

    def send(self, n_tokens: int, max_tokens: int) -> Answer:
        marker = secrets.token_hex(3)  # a fresh start: no answer from an earlier request's cache
        text = f"{marker}: " + text_of_about(max(n_tokens - 4, 1), self.count)
        body = {"prompt": text, "max_tokens": max_tokens, "temperature": 0.0, "ignore_eos": True}
        with sync_client(REQUEST_TIMEOUT_S) as client:
            reply = post(
                client, self.model.endpoint, "/v1/completions", body, case_end=self.case_end
            )
        sent = self.count(text)
        if reply.status is not None and reply.status >= 400:
            return Answer(sent, max_tokens, reply.status, refused=True, failure=reply.failure)
        if not reply.ok:
            return Answer(sent, max_tokens, reply.status, failure=reply.failure)
        usage = reply.usage
        return Answer(
            sent,
            max_tokens,
            reply.status,
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
            finish_reason=reply.finish_reason,
        )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
