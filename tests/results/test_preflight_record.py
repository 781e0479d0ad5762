"""Reading a case's typed preflight record: the policy's warning line, and the predicted
against measured MLX peak."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.metrics import MLX_PEAK
from harness.core.preflight_types import ContextSource, MemoryRecord, PolicyAction, PreflightRecord
from harness.core.types import CaseResult, Metric, Status, Unit
from harness.results.preflight_record import PeakCheck, peak_check, warning_line

WARNED = PreflightRecord(
    backend="mlx_lm", action=PolicyAction.WARN, code="backend_mismatch", message="no vision"
)

# (id, record, warning line)
WARNINGS: list[tuple[str, PreflightRecord | None, str | None]] = [
    ("warn", WARNED, "warn backend_mismatch: no vision"),
    ("allow", dataclasses.replace(WARNED, action=PolicyAction.ALLOW), None),
    ("block", dataclasses.replace(WARNED, action=PolicyAction.BLOCK), None),
    ("not_judged", PreflightRecord(backend="fake", note="no probe"), None),
    ("no_record", None, None),
]


@pytest.mark.parametrize(
    ("record", "line"), [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS]
)
def test_warning_line(record: PreflightRecord | None, line: str | None) -> None:
    assert warning_line(record) == line


MEMORY = MemoryRecord(
    context_tokens=160,
    prompt_tokens=128,
    weights_bytes=600,
    kv_cache_bytes=200,
    state_bytes=0,
    activation_bytes=400,
    mlx_peak_bytes=1200,
    approximate=("sliding window",),
)
SIZED = PreflightRecord(backend="mlx_lm", context_source=ContextSource.SCENARIO, memory=MEMORY)
COMPONENTS = {
    "weights_bytes": 600,
    "kv_cache_bytes": 200,
    "state_bytes": 0,
    "activation_bytes": 400,
}


def _result(record: PreflightRecord | None, *measured: float) -> CaseResult:
    metrics = (Metric(MLX_PEAK.name, Unit.BYTES, measured),) if measured else ()
    return CaseResult(
        "s::m::t", "s", "m", "throughput", Status.PASSED, metrics=metrics, preflight=record
    )


# (id, result, predicted, measured, comparable, error)
CHECKS: list[tuple[str, CaseResult, int, float | None, bool, float | None]] = [
    ("sized_and_measured", _result(SIZED, 1000.0, 1000.0, 900.0), 1200, 1000.0, True, 0.2),
    ("not_measured", _result(SIZED), 1200, None, True, None),
    (
        "default_context",
        _result(dataclasses.replace(SIZED, context_source=ContextSource.DEFAULT), 1000.0),
        1200,
        1000.0,
        False,
        None,
    ),
]


@pytest.mark.parametrize(
    ("result", "predicted", "measured", "comparable", "error"),
    [c[1:] for c in CHECKS],
    ids=[c[0] for c in CHECKS],
)
def test_peak_check(
    result: CaseResult,
    predicted: int,
    measured: float | None,
    comparable: bool,
    error: float | None,
) -> None:
    check = peak_check(result)
    assert check is not None
    assert (check.predicted_bytes, check.measured_bytes) == (predicted, measured)
    assert check.comparable is comparable
    assert check.error == (pytest.approx(error) if error is not None else None)
    assert (check.context_tokens, check.prompt_tokens) == (160, 128)
    assert dict(check.components) == COMPONENTS
    assert check.approximate == ("sliding window",)


@pytest.mark.parametrize(
    "record",
    [
        None,
        PreflightRecord(backend="fake", note="no probe"),
        dataclasses.replace(SIZED, memory=MemoryRecord(context_tokens=160)),  # no peak written
    ],
    ids=["no_record", "no_estimate", "no_peak"],
)
def test_no_estimate_no_check(record: PreflightRecord | None) -> None:
    assert peak_check(_result(record, 1000.0)) is None


def test_error_is_relative_to_the_measurement() -> None:
    check = PeakCheck(900, 1200.0, 160, 128, comparable=True)
    assert check.error == pytest.approx(-0.25)
