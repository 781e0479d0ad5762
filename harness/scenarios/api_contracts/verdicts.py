"""What an API contract check returns: its verdict, one line of reason, and the evidence
(requests and excerpts of what came back), plus the context every check runs with.

Evidence holds the server's output as text (untrusted: the report escapes it); reasons are
written by the checks and name counts and positions, never the model's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from harness.scenarios.prompt_dependence import PROMPT_INDEPENDENT

__all__ = ["PROMPT_INDEPENDENT"]

if TYPE_CHECKING:
    import httpx

    from harness.backends.chat_templating import ChatTemplating
    from harness.backends.openai_client import Endpoint


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not_applicable"
    UNJUDGED = "unjudged"  # the case's time ran out before (or while) the check ran

    @property
    def label(self) -> str:
        labels = {
            "pass": "pass",
            "fail": "FAIL",
            "not_applicable": "n.a.",
            "unjudged": "not judged",
        }
        return labels[self.value]


class Api(str, Enum):
    CHAT = "chat"
    COMPLETIONS = "completions"

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self is Api.CHAT else "/v1/completions"


@dataclass(frozen=True)
class Exchange:
    """One request as sent (method, path, JSON body) and an excerpt of its answer."""

    request: str
    response: str

    def record(self) -> dict[str, str]:
        return {"request": self.request, "response": self.response}


@dataclass(frozen=True)
class CheckResult:
    name: str
    verdict: Verdict
    reason: str  # one line: what held, what did not, or why the check cannot apply
    evidence: tuple[Exchange, ...] = ()
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict.value,
            "reason": self.reason,
            "seconds": round(self.seconds, 4),
            "evidence": [e.record() for e in self.evidence],
        }


def passed(name: str, reason: str, evidence: tuple[Exchange, ...] = ()) -> CheckResult:
    return CheckResult(name, Verdict.PASS, reason, evidence)


def failed(name: str, reason: str, evidence: tuple[Exchange, ...] = ()) -> CheckResult:
    return CheckResult(name, Verdict.FAIL, reason, evidence)


def not_applicable(name: str, reason: str, evidence: tuple[Exchange, ...] = ()) -> CheckResult:
    return CheckResult(name, Verdict.NOT_APPLICABLE, reason, evidence)


def unjudged(name: str, reason: str, evidence: tuple[Exchange, ...] = ()) -> CheckResult:
    return CheckResult(name, Verdict.UNJUDGED, reason, evidence)


@dataclass(frozen=True)
class Limits:
    """The scenario's parameters as the checks use them."""

    max_tokens: int  # generation length of the text checks
    long_max_tokens: int  # room for a tool call or a reasoning block
    timeout_s: float  # per request, for its whole answer
    concurrency: int
    settle_s: float  # pause after a client hangs up, before the next request
    require_reuse: bool = False  # cached_tokens 0 on a repeated prompt fails (else: "no reuse")
    tool_names: str = "snake"  # the tool request's names: get_weather, or "hyphen": get-weather
    tool_call_count: int = 1  # 2: the tool request asks for two calls in one turn


@dataclass(frozen=True)
class CheckContext:
    """What a check runs with: one HTTP client, the server, the API it speaks, a nonce that
    makes this run's prompts new to the server's prompt cache, the chat template's renderer
    when it is known here, and answers shared between
    checks (``shared``: the greedy references, the tool-call exchange) so each is asked once."""

    client: httpx.Client
    endpoint: Endpoint
    api: Api
    limits: Limits
    nonce: str
    shared: dict[str, Any] = field(default_factory=dict, compare=False)
    case_end: float | None = None  # time.monotonic() when the case's time runs out
    # every answer the running check got (run_checks empties it before each check): a check
    # cannot pass on an answer that failed
    answers: list[Any] = field(default_factory=list, compare=False)
    # the server's chat template rendered here (the model's own tokens, asked raw on
    # /v1/completions); None: not known (a bare url:)
    renderer: ChatTemplating | None = field(default=None, compare=False)

    def once(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]


@dataclass(frozen=True)
class ContractCheck:
    """A named check of one contract. ``compares_texts``: it passes when two answers are the same
    text, which proves nothing on a model that answers every prompt alike; such a pass is not
    judged there (:data:`PROMPT_INDEPENDENT`)."""

    name: str
    contract: str  # the contract in words, for the report
    run: Callable[[CheckContext], CheckResult]
    compares_texts: bool = False
    # runs only when a suite names it: a server may not survive it (so it goes in a suite
    # entry of its own, after the model's other cases), or it asks another API's surface
    named_only: bool = False


def records(results: tuple[CheckResult, ...]) -> list[Mapping[str, Any]]:
    return [r.record() for r in results]
