"""``session``: an agent's multi-turn conversation, turn by turn: does the prompt cache carry
each turn to the next, what does a turn cost, and does the cache keep the answers the same?

A session (:mod:`harness.scenarios.session.script`) is generated, a coding agent's loop of
``turns`` requests with tool calls and tool results growing to ``context_tokens``, optionally
with ``<think>`` blocks, or read from ``sessions_file`` (JSONL of recorded conversations). Each
replay sends every turn in order (in process: :mod:`harness.scenarios.session.local`, one cache
kept across turns; over HTTP: :mod:`harness.scenarios.session.served`, the whole conversation
each turn); ``repeats`` replays are measured after ``warmup``.

Per turn: time to first token, prefill rate of the new tokens only (prompt less what came from
the cache, over TTFT), decode rate, the tokens a cache holding the previous turn could serve
(``reusable``) and what was served (``reused``), and the answer. Findings, each one line naming
the turn:

- a **miss**: the turn reused fewer than ``reusable`` less ``reuse_slack_tokens`` (fails the
  case with ``require_reuse``, the default);
- **answers differ** with the cache and without it (greedy; in process always, over HTTP where
  the engine can skip its cache for a request): fails the case;
- a **rewritten history**: the template rendered earlier turns differently, so the prompt
  leaves the previous one at a token before its end (named; fails with
  ``require_stable_history``);
- a **cache fault** (in process): the cache does not hold the tokens it was trimmed to: fails.

Figures sample the turns after the first (the first is cold by design) of each measured replay.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from harness.backends.base import BackendError, PromptCaching, Served
from harness.backends.openai_client import sync_client
from harness.backends.server_twin import twin_problem, undrafted_twin
from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.core.visible_text import visible
from harness.scenarios.artifacts import ScenarioArtifacts
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, Workload
from harness.scenarios.base import metric as make_metric
from harness.scenarios.session.local import LocalReplay
from harness.scenarios.session.reuse import TurnResult
from harness.scenarios.session.script import (
    Session,
    SessionFileError,
    generated_session,
    sessions_from_file,
)
from harness.scenarios.session.served import (
    OutOfTime,
    Reference,
    ServedReplay,
    TurnFailed,
    no_cache_fields,
    twin_args,
)

PREFIX = "session"
TTFT = MetricSpec(
    f"{PREFIX}.ttft_s", Unit.SECONDS, False, "TTFT of a turn with the cache", noise_floor=0.05
)
COLD_TTFT = MetricSpec(
    f"{PREFIX}.cold_ttft_s",
    Unit.SECONDS,
    False,
    "TTFT of the same prompt without the cache",
    noise_floor=0.05,
)
SPEEDUP = MetricSpec(f"{PREFIX}.cache_speedup", Unit.RATIO, True, "cold TTFT / TTFT, per turn")
PREFILL = MetricSpec(
    f"{PREFIX}.prefill_tps", Unit.TOKENS_PER_SECOND, True, "new prompt tokens / TTFT"
)
DECODE = MetricSpec(f"{PREFIX}.decode_tps", Unit.TOKENS_PER_SECOND, True, "decode tokens/s")
REUSE = MetricSpec(
    f"{PREFIX}.reuse_share",
    Unit.RATIO,
    True,
    "tokens reused / tokens a cache of the previous turn could serve",
    noise_floor=0.01,
)
CACHED = MetricSpec(
    f"{PREFIX}.cached_share", Unit.RATIO, True, "tokens reused / prompt tokens", noise_floor=0.01
)


class SessionParams(Params):
    turns: int | None = Field(
        None,
        ge=1,
        description="requests per session (unset: 6 generated; a recorded session's all)",
    )
    context_tokens: int = Field(
        2048, ge=256, description="tokens the last prompt of a generated session holds, about"
    )
    think: bool = Field(
        False, description="generated sessions: a <think> block opens each assistant message"
    )
    sessions_file: str | None = Field(
        None,
        description='JSONL of recorded conversations, {"messages": [...], "tools": [...]} a '
        "line (a path from the working directory); replaces the generated session",
    )
    max_tokens: int = Field(16, ge=1, le=4096, description="tokens each turn generates at most")
    check_identical: bool = Field(
        True, description="answer each turn without the cache too; the answers must be the same"
    )
    reuse_slack_tokens: int = Field(
        16, ge=0, description="reused may fall this far short of reusable before it is a miss"
    )
    require_reuse: bool = Field(True, description="a turn that misses the cache fails the case")
    require_stable_history: bool = Field(
        False, description="a template that re-renders earlier turns fails the case"
    )

    @property
    def generated_turns(self) -> int:
        return self.turns or 6


Replay = Callable[[int, bool], TurnResult]


class SessionScenario(BaseScenario[SessionParams]):
    name: ClassVar[str] = "session"
    version: ClassVar[int] = 1
    params_model = SessionParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (
        TTFT,
        COLD_TTFT,
        SPEEDUP,
        PREFILL,
        DECODE,
        REUSE,
        CACHED,
    )
    samples_from: ClassVar[str] = "repeats"

    def workload(self, params: SessionParams) -> Workload:
        return Workload(params.context_tokens + 256, params.max_tokens)

    def run(self, ctx: ScenarioContext, params: SessionParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, Served | PromptCaching):
            reason = f"backend {ctx.backend} has neither a prompt cache nor an HTTP server"
            return ScenarioOutput((), skip_reason=f"capability_missing: {reason}")
        counter = model.token_counter if isinstance(model, Served) else _counter(model)
        try:
            sessions = _sessions(params, counter)
        except SessionFileError as exc:
            return ScenarioOutput((), failures=(str(exc),))
        replays: list[list[list[TurnResult]]] = []  # [replay][session][turn]
        timed_out = None
        artifacts: dict[str, Any] = {
            "engine": model.engine if isinstance(model, Served) else ctx.backend,
            "sessions": _sources(sessions),
        }
        try:
            with contextlib.ExitStack() as stack:
                reference = None
                if isinstance(model, Served) and params.check_identical:
                    reference, artifacts["reference"] = _reference(ctx, model, stack)
                for index in range(ctx.warmup + ctx.repeats):
                    nonce = secrets.token_hex(3)
                    done = [
                        list(
                            self._replay(ctx, model, s.with_nonce(nonce), params, index, reference)
                        )
                        for s in sessions
                    ]
                    replays.append(done)
                    ctx.run_done(None)
        except TurnFailed as exc:
            return ScenarioOutput((), artifacts, failures=(str(exc),))
        except OutOfTime as exc:  # what the whole replays measured is kept
            timed_out = (
                f"the case's time limit (timeout_s) ran out in replay {len(replays) + 1} of "
                f"{ctx.warmup + ctx.repeats}: {exc}"
            )
        except BackendError as exc:  # the template cannot render the session
            return ScenarioOutput(
                (), skip_reason=f"capability_mismatch: {exc}; give a model with a chat template"
            )
        measured = replays[ctx.warmup :]
        artifacts["turns"] = [_turn_rows(measured, i, params) for i in range(len(sessions))]
        failures = tuple(_failures(replays, params))
        return ScenarioOutput(_metrics(measured), artifacts, failures, timed_out=timed_out)

    def _replay(
        self,
        ctx: ScenarioContext,
        model: Served | PromptCaching,
        session: Session,
        params: SessionParams,
        index: int,
        reference: Reference | None,
    ) -> Iterator[TurnResult]:
        count = len(session.request_points)
        turns = min(params.turns or count, count)
        with contextlib.ExitStack() as stack:
            replay: Replay
            if isinstance(model, Served):
                client = stack.enter_context(sync_client(600.0))
                replay = ServedReplay(
                    model,
                    session,
                    client,
                    max_tokens=params.max_tokens,
                    reference=reference,
                    case_end=ctx.case_end,
                ).turn
            else:
                replay = _local(model, session, params)
            for turn in range(turns):
                left = ctx.time_left_s()
                if left is not None and left <= 0:
                    raise OutOfTime(f"before turn {turn + 1}")
                yield replay(turn, (turn + index) % 2 == 0)


def _reference(
    ctx: ScenarioContext, model: Served, stack: contextlib.ExitStack
) -> tuple[Reference | None, str]:
    """Where the turns are answered without the cache, and what the record says of it; a twin
    is started on ``stack`` (stopped with the case). :class:`TurnFailed` when it cannot start."""
    fields = no_cache_fields(model.engine)
    if fields is not None:
        shown = ", ".join(f"{k}: {str(v).lower()}" for k, v in fields.items())
        return Reference(model.endpoint, f"the same server, {shown}", fields), shown
    details = ctx.load_info.details
    extra = twin_args(str(details.get("server_engine", "")))
    problem = twin_problem(details)
    if extra is None or problem is not None:
        why = problem or f"{model.engine} has no way to answer without its prompt cache"
        return None, f"not checked: {why}"
    try:
        endpoint = stack.enter_context(undrafted_twin(details, extra_args=extra))
    except BackendError as exc:
        raise TurnFailed(f"the cache-less twin server: {exc}") from None
    label = f"a twin server of the same files{' with ' + ' '.join(extra) if extra else ''}"
    return Reference(endpoint, label), label


def _local(model: PromptCaching, session: Session, params: SessionParams) -> Replay:
    local = LocalReplay(
        model, session, max_tokens=params.max_tokens, check_identical=params.check_identical
    )

    def turn(index: int, cold_first: bool) -> TurnResult:
        try:
            return local.turn(index, cold_first)
        except BackendError:
            raise
        except Exception as exc:  # jinja's TemplateError and the like, from the template
            raise BackendError(
                f"the chat template cannot render turn {index + 1} "
                f"({type(exc).__name__}: {visible(str(exc), 120)})"
            ) from None

    return turn


def _counter(model: PromptCaching) -> Callable[[str], int]:
    return lambda text: len(model.encode(text))


def _sessions(params: SessionParams, counter: Callable[[str], int] | None) -> list[Session]:
    if params.sessions_file is not None:
        return sessions_from_file(Path(params.sessions_file))
    return [generated_session(params.generated_turns, params.context_tokens, params.think, counter)]


def _sources(sessions: list[Session]) -> list[str]:
    return [s.source for s in sessions]


def _metrics(measured: list[list[list[TurnResult]]]) -> tuple[Any, ...]:
    later = [t for replay in measured for session in replay for t in session[1:]]
    values: dict[MetricSpec, list[float]] = {
        TTFT: [t.ttft_s for t in later if t.ttft_s is not None],
        COLD_TTFT: [t.cold_ttft_s for t in later if t.cold_ttft_s is not None],
        SPEEDUP: [
            t.cold_ttft_s / t.ttft_s for t in later if t.cold_ttft_s is not None and t.ttft_s
        ],
        PREFILL: [v for t in later if (v := t.prefill_tps) is not None],
        DECODE: [t.decode_tps for t in later if t.decode_tps is not None],
        REUSE: [v for t in later if (v := t.reuse.reuse_share) is not None],
        CACHED: [v for t in later if (v := t.reuse.cached_share) is not None],
    }
    return tuple(make_metric(spec, samples) for spec, samples in values.items() if samples)


def _prompt_blind(turns: list[tuple[int, TurnResult]]) -> str | None:
    """Why "the same answer with the cache and without" proves nothing here (one line), else
    None: every turn checked, each a different prompt, got the same greedy answer."""
    checked = [t for _, t in turns if t.identical is not None]
    if len({t.turn for t in checked}) < 2 or len({t.answer for t in checked}) != 1:
        return None
    from harness.scenarios.prompt_dependence import independence_line

    return independence_line(
        f"the {len({t.turn for t in checked})} turns checked (each a different prompt) got the "
        f"same greedy answer ({len(checked[0].answer)} characters), so the answer with the cache "
        "matching the one without proves nothing"
    )


def _failures(replays: list[list[list[TurnResult]]], params: SessionParams) -> list[str]:
    """One line per kind of finding, naming its first turn and how many turns had it."""
    turns = [(r, t) for r, replay in enumerate(replays) for session in replay for t in session]
    out: list[str] = []
    missed = [(r, t) for r, t in turns if t.reuse.missed(params.reuse_slack_tokens)]
    if missed and params.require_reuse:
        r, t = missed[0]
        why = "; ".join(w for w in (t.miss_reason, t.parted_at and f"parted at {t.parted_at}") if w)
        why = f" ({why})" if why else ""
        out.append(
            f"cache miss in {len(missed)} of {len(turns)} turns: first turn {t.turn} ({t.kind}, "
            f"replay {r + 1}) could reuse {t.reuse.reusable} of {t.reuse.prompt} prompt tokens "
            f"and reused {t.reuse.reused}{why}"
        )
    differ = [(r, t) for r, t in turns if t.identical is False]
    if differ:
        r, t = differ[0]
        out.append(
            f"the cache changed the answer in {len(differ)} of {len(turns)} turns: first turn "
            f"{t.turn} (replay {r + 1}) at {t.differs_at}"
        )
    elif (blind := _prompt_blind(turns)) is not None:
        out.append(blind)
    faults = [(r, t) for r, t in turns if t.cache_fault]
    if faults:
        r, t = faults[0]
        out.append(f"cache fault at turn {t.turn} (replay {r + 1}): {t.cache_fault}")
    moved = [(r, t) for r, t in turns if t.departure is not None]
    if moved and params.require_stable_history:
        r, t = moved[0]
        out.append(
            f"the template rewrote the history in {len(moved)} of {len(turns)} turns: first "
            f"turn {t.turn} at {t.departure_text}"
        )
    return out


def _turn_rows(
    measured: list[list[list[TurnResult]]], index: int, params: SessionParams
) -> list[dict[str, Any]]:
    """Per turn of session ``index``: the counts and checks of the last measured replay, the
    times of every measured replay."""
    if not measured:
        return []
    last = measured[-1][index]
    rows = []
    for position, turn in enumerate(last):
        seen = [replay[index][position] for replay in measured if position < len(replay[index])]
        rows.append(
            {
                "turn": turn.turn,
                "kind": turn.kind,
                "prompt_tokens": turn.reuse.prompt,
                "reusable_tokens": turn.reuse.reusable,
                "reused_tokens": turn.reuse.reused,
                "new_tokens": turn.reuse.new,
                "ttft_s": [t.ttft_s for t in seen],
                "cold_ttft_s": [t.cold_ttft_s for t in seen],
                "decode_tps": [t.decode_tps for t in seen],
                "prefill_tps": [t.prefill_tps for t in seen],
                "identical": _all_or_none([t.identical for t in seen]),
                "differs_at": next((t.differs_at for t in seen if t.differs_at), None),
                "missed": any(t.reuse.missed(params.reuse_slack_tokens) for t in seen),
                "miss_reason": turn.miss_reason,
                "history_rewritten_at": turn.departure_text,
                "cache_fault": turn.cache_fault,
                "parted_at": turn.parted_at,
                "answer": turn.answer,
            }
        )
    return rows


def _all_or_none(values: list[bool | None]) -> bool | None:
    if any(v is None for v in values):
        return None
    return all(values)


@dataclass(frozen=True)
class TurnRow:
    """One turn of a session as the record holds it (:func:`_turn_rows` writes it): the counts
    of the last measured replay, the times of every one."""

    turn: int | None = None
    kind: str = ""  # what the turn answers: a user message or a tool result
    prompt_tokens: int | None = None
    reusable_tokens: int | None = None  # a cache of the previous turn could serve these
    reused_tokens: int | None = None  # the engine took these from its cache
    new_tokens: int | None = None
    ttft_s: tuple[float | None, ...] = ()  # per measured replay
    cold_ttft_s: tuple[float | None, ...] = ()  # the same prompt, cache-less
    prefill_tps: tuple[float | None, ...] = ()
    identical: bool | None = None  # the greedy answer = without the cache (None: not checked)
    differs_at: str | None = None
    missed: bool = False
    miss_reason: str | None = None
    history_rewritten_at: str | None = None  # the template rendered the history differently
    cache_fault: str | None = None


@dataclass(frozen=True)
class SessionArtifacts(ScenarioArtifacts):
    """What a ``session`` case records beside its metrics that the report reads."""

    engine: str | None = None
    reference: str | None = None  # where the cache-less answers came from
    turns: tuple[tuple[TurnRow, ...], ...] = ()  # per session, per turn


SCENARIO = SessionScenario()
