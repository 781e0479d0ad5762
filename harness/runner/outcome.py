"""What a case came to, as values: a worker's reply as an :class:`Outcome`, the one line of a
fault in the harness's own code, and the bare results of cases that errored or were stopped."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.backends.mlx_runtime import MemorySnapshot
from harness.core.check_types import CheckVerdict
from harness.core.exception_line import exception_line
from harness.core.preflight_types import PreflightRecord
from harness.core.types import Case, CaseResult, ExpectKind, Metric, SkipCause, Status, Unit
from harness.runner.messages import ResultReply


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def memory_metrics(memory: MemorySnapshot | None) -> list[Metric]:
    """The memory a case took, as metrics (each view the worker could read)."""
    if memory is None:
        return []
    views = (
        ("memory.mlx_peak_bytes", memory.mlx_peak_bytes, "MLX peak"),
        ("memory.mlx_active_bytes", memory.mlx_active_bytes, "MLX active"),
        (
            "memory.process_peak_rss_bytes",
            memory.process_peak_rss_bytes,
            f"process peak RSS ({memory.rss_view})",
        ),
    )
    return [
        Metric(name, Unit.BYTES, (float(value),), view=view)
        for name, value, view in views
        if value is not None
    ]


@dataclass(frozen=True)
class Outcome:
    """What a worker made of one case, before gates and expectations are applied."""

    status: Status
    reason: str | None = None
    metrics: tuple[Metric, ...] = ()
    artifacts: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    preflight: PreflightRecord | None = None  # Preflight.record(); None: not judged
    checks: tuple[CheckVerdict, ...] = ()  # each named check's verdict (ScenarioOutput.checks)
    input_skip: bool = False  # skipped for the suite's input (a server refused its args)


class HarnessFault(Exception):
    """An exception of the harness's own code while handling a case, with its one line."""

    def __init__(self, stage: str, exc: BaseException, log: Path | None) -> None:
        detail = exception_line(exc)
        where = f" (traceback in {log})" if log is not None else ""
        self.stage = stage
        self.line = f"harness error in {stage}: {detail}{where}"
        super().__init__(self.line)


def outcome_of(reply: ResultReply) -> Outcome:
    """A worker's ``result`` reply as an :class:`Outcome`."""
    status, reason = Status.PASSED, None
    if reply.failures:
        status, reason = Status.FAILED, "; ".join(reply.failures)
    elif reply.timed_out:
        status, reason = Status.TIMED_OUT, reply.timed_out
    elif reply.skip_reason:
        status, reason = Status.SKIPPED, reply.skip_reason
    return Outcome(
        status,
        reason,
        (*reply.metrics, *memory_metrics(reply.memory)),
        dict(reply.artifacts),
        reply.version,
        checks=reply.checks,
    )


def bare(
    case: Case, status: Status, reason: str | None, started: str, duration_s: float
) -> CaseResult:
    """The result of ``case`` with nothing measured: its identity, status and reason."""
    return CaseResult(
        case_id=case.case_id,
        suite=case.suite,
        model=case.model.key,
        scenario=case.scenario,
        status=status,
        params=plain_params(case.params),
        point=plain_params(case.point),
        reason=reason,
        duration_s=duration_s,
        started_at=started,
        link=case.expectation.link if case.expectation else None,
    )


def errored(case: Case, started: str, duration_s: float, reason: str) -> CaseResult:
    return bare(case, Status.ERRORED, reason, started, duration_s)


def interrupted(case: Case, reason: str) -> CaseResult:
    return bare(case, Status.INTERRUPTED, reason, now(), 0.0)


def plain_params(values: Mapping[str, Any]) -> dict[str, Any]:
    """Params as JSON can hold them (a value it cannot is shown as its repr)."""

    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            json.dumps(value)
            out[str(key)] = value
        except (TypeError, ValueError):
            out[str(key)] = repr(value)
    return out


# preflight codes that mean the model's files are not usable as given: the user's input
INPUT_CODES = frozenset({"corrupt_model", "missing_weights"})


def skip_cause(case: Case, outcome: Outcome) -> SkipCause:
    """Why ``case`` was skipped: a model the plan could not resolve (its planned skip, with no
    ``expect:`` entry behind it) or files the preflight found unusable are the user's input;
    an ``expect:`` skip entry is expected; so are a server that refused the suite's arguments
    (``input_skip``: a typo, or a release without that option, which an ``expect:`` skip entry
    for those versions says is known); anything else (a capability n/a) does not apply."""
    expectation = case.expectation
    if expectation is not None and expectation.kind is ExpectKind.SKIP:
        return SkipCause.EXPECTED if expectation.source is not None else SkipCause.INPUT
    preflight = outcome.preflight
    if outcome.input_skip or (preflight is not None and preflight.code in INPUT_CODES):
        return SkipCause.INPUT
    return SkipCause.NOT_APPLICABLE
