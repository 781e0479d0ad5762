"""``continuation``: a prompt that continues an earlier completion is answered, and with the
continuation of that completion.

A client that sends back a prompt followed by the answer it got (a "continue" button, an agent
appending the model's text) asks for exactly the tokens a server's prompt cache stored when the
first request finished: an exact cache hit with nothing left to process. mlx_lm.server's
generation thread dies on it (mlx-lm#1215: ``IndexError`` in ``insert_segments`` on 0.31.2 and
0.31.3, ``Sequence 1 has an empty prompt`` on 0.32.x, ``[gather] Got indices with invalid
dtype`` before), and every later request waits for ever. Runs last: the server may not survive.

Asked on ``/v1/completions`` (a chat template would add its own tokens): the prompt alone, then
the prompt followed by the answer, the join chosen so the server counts exactly the first
request's prompt and answer tokens (else the text does not tokenize back to the answer's
tokens, no exact hit can be asked for, and the check is not applicable), then the prompt alone
with twice the tokens, whose text must be the answer followed by the continuation's.
"""

from __future__ import annotations

from typing import Any

from harness.backends.openai_client import Reply
from harness.scenarios.api_contracts.asking import ask, prompt
from harness.scenarios.api_contracts.checks_server import cached_tokens, usage_int
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
from harness.scenarios.parting import differ_at

NAME = "continuation"
NO_ROUTE = frozenset({404, 405, 501})


def _body(text: str, max_tokens: int) -> dict[str, Any]:
    return {"prompt": text, "max_tokens": max_tokens, "temperature": 0.0}


def _count(reply: Reply, key: str) -> int | None:
    return usage_int(reply.usage.get(key))


def _joins(answer: str) -> tuple[str, ...]:
    """How a client may send the answer back: as it came, or after a space (a detokenizer
    that drops the first token's leading space)."""
    return ("", " ") if not answer.startswith((" ", "\n")) else ("",)


def continuation(ctx: CheckContext) -> CheckResult:
    text = prompt(ctx, "a letter that arrives forty years late")
    n = ctx.limits.max_tokens
    first, exchange = ask(ctx, _body(text, n), api=Api.COMPLETIONS)
    evidence: list[Exchange] = [exchange]
    if first.status in NO_ROUTE:
        return not_applicable(NAME, f"the server has no /v1/completions (HTTP {first.status})")
    if not first.ok:
        return failed(NAME, f"the first request failed: {first.failure}", tuple(evidence))
    prompt_tokens, completion_tokens = (
        _count(first, "prompt_tokens"),
        _count(first, "completion_tokens"),
    )
    if prompt_tokens is None or completion_tokens is None:
        return not_applicable(
            NAME,
            "the server reports no token usage: a continuation cannot be matched to the "
            "answer's tokens",
            tuple(evidence),
        )
    if first.finish_reason != "length" or not first.content:
        return not_applicable(
            NAME,
            f"the answer ended before max_tokens (finish_reason {first.finish_reason!r}, "
            f"{completion_tokens} tokens): there is nothing to continue",
            tuple(evidence),
        )
    wanted = prompt_tokens + completion_tokens
    counted: list[str] = []
    for join in _joins(first.content):
        again, exchange = ask(ctx, _body(text + join + first.content, n), api=Api.COMPLETIONS)
        evidence.append(exchange)
        if not again.ok:
            return failed(
                NAME,
                f"the prompt followed by its own answer ({wanted} tokens, the cache entry the "
                f"first request left) got no answer: {again.failure}",
                tuple(evidence),
            )
        got = _count(again, "prompt_tokens")
        counted.append(str(got))
        if got == wanted:
            return _compare(ctx, text, first, join, again, tuple(evidence))
    return not_applicable(
        NAME,
        f"the answer's text does not tokenize back to its tokens (the server counted "
        f"{' and '.join(counted)} prompt tokens, not {wanted}): no exact cache hit can be asked",
        tuple(evidence),
    )


def _compare(
    ctx: CheckContext,
    text: str,
    first: Reply,
    join: str,
    again: Reply,
    evidence: tuple[Exchange, ...],
) -> CheckResult:
    """The continuation's answer against the prompt's own longer answer."""
    n = ctx.limits.max_tokens
    if not again.content:
        return failed(
            NAME,
            f"the prompt followed by its own answer got an empty answer (finish_reason "
            f"{again.finish_reason!r})",
            evidence,
        )
    if again.content == first.content:
        from harness.scenarios.prompt_dependence import independence_line

        return unjudged(
            NAME,
            independence_line(
                f"the prompt and the prompt followed by its answer got the same greedy text "
                f"({len(first.content)} characters)"
            ),
            evidence,
        )
    longer, exchange = ask(ctx, _body(text, 2 * n), api=Api.COMPLETIONS)
    evidence = (*evidence, exchange)
    if not longer.ok:
        return failed(NAME, f"the longer request failed: {longer.failure}", evidence)
    joined = [first.content + gap + again.content for gap in dict.fromkeys(("", " ", join))]
    if longer.content in joined:
        return passed(
            NAME,
            f"the continuation ({_count(again, 'prompt_tokens')} prompt tokens) was answered "
            f"with the tail of the prompt's {2 * n}-token answer",
            evidence,
        )
    where = differ_at(joined[0], longer.content)
    cached = cached_tokens(again.usage)
    wanted = _count(again, "prompt_tokens") or 0
    if cached is None or cached < wanted - 1:
        # the server did not take the continuation for the cached entry: its tokens are not
        # the answer's (the same count, split otherwise), so another continuation is no fault
        reused = "no cached_tokens" if cached is None else f"reused {cached} of {wanted}"
        return not_applicable(
            NAME,
            f"the continuation's tokens are not the answer's (the server {reused} prompt "
            f"tokens), so its answer may differ ({where})",
            evidence,
        )
    return failed(
        NAME,
        f"the continuation was served from the cache ({cached} of {wanted} prompt tokens) "
        "but its answer is not the tail of the prompt's longer answer: the answer and its "
        f"continuation vs the longer answer {where}",
        evidence,
    )


CHECKS = (
    ContractCheck(
        NAME,
        "a prompt followed by its own answer (an exact prompt-cache hit) is answered with the "
        "answer's continuation",
        continuation,
        named_only=True,  # its own proof that answers depend on the prompt: P and P+A differ
    ),
)
