"""The case's preflight record through the codec: written as the previous version wrote it,
read back typed, older records (missing keys, ``{}``) tolerated, bad ones one line."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from harness.core.preflight_types import (
    ContextSource,
    FindingRecord,
    MemoryRecord,
    PolicyAction,
    PreflightRecord,
    WorkloadRecord,
)
from harness.core.types import CaseResult, Status
from harness.results.codec import DecodeError, decode_event, preflight_from_json, to_json

# Written by the previous version (Preflight.record() as a dict), copied from real run records:
# `mlx-harness run suites/smoke.suite.yaml -k tiny-llama` (throughput, prompt_tokens=128) ...
TINY_LLAMA_ALLOW: dict[str, Any] = {
    "action": "allow",
    "backend": "mlx_lm",
    "code": "ok",
    "context_source": "scenario",
    "findings": [],
    "http_status": 200,
    "memory": {
        "activation_bytes": 727040,
        "approximate": [],
        "context_tokens": 160,
        "kv_cache_bytes": 131072,
        "mlx_peak_bytes": 1285376,
        "process_overhead_bytes": 268435456,
        "prompt_tokens": 128,
        "state_bytes": 0,
        "total_bytes": 269720832,
        "weights_bytes": 427264,
    },
    "message": "ok",
    "needs": ["text"],
    "note": None,
    "recommended_backend": "mlx_lm",
    "workload": {"generated_tokens": 32, "prompt_tokens": 128},
}
# ... the zoo's qwen2_vl run through mlx_lm (a warning with a note) ...
QWEN2_VL_WARN: dict[str, Any] = {
    "action": "warn",
    "backend": "mlx_lm",
    "code": "backend_mismatch",
    "context_source": "scenario",
    "findings": [
        {
            "action": "warn",
            "code": "backend_mismatch",
            "message": "loaded with mlx-lm (its qwen2_vl module, without vision); "
            "the files call for mlx-vlm",
        }
    ],
    "http_status": 400,
    "memory": {
        "activation_bytes": 60416,
        "approximate": [],
        "context_tokens": 20,
        "kv_cache_bytes": 131072,
        "mlx_peak_bytes": 619776,
        "process_overhead_bytes": 268435456,
        "prompt_tokens": 16,
        "state_bytes": 0,
        "total_bytes": 269055232,
        "weights_bytes": 428288,
    },
    "message": "loaded with mlx-lm (its qwen2_vl module, without vision); "
    "the files call for mlx-vlm",
    "needs": ["text"],
    "note": "the runner has no mlx_vlm backend yet",
    "recommended_backend": "mlx_vlm",
    "workload": {"generated_tokens": 4, "prompt_tokens": 16},
}
# ... and a backend whose own probe failed: not judged, no decision keys at all.
FAKE_NOT_JUDGED: dict[str, Any] = {
    "action": None,
    "backend": "fake",
    "code": None,
    "context_source": "default",
    "findings": [],
    "memory": None,
    "message": None,
    "needs": ["text"],
    "note": "fake has no probe: /tmp/broken: not a fake model ('list' object has no attribute "
    "'get')",
    "recommended_backend": None,
    "workload": None,
}

TINY_LLAMA = PreflightRecord(
    backend="mlx_lm",
    recommended_backend="mlx_lm",
    needs=("text",),
    workload=WorkloadRecord(prompt_tokens=128, generated_tokens=32),
    context_source=ContextSource.SCENARIO,
    memory=MemoryRecord(
        context_tokens=160,
        prompt_tokens=128,
        weights_bytes=427264,
        kv_cache_bytes=131072,
        state_bytes=0,
        activation_bytes=727040,
        mlx_peak_bytes=1285376,
        process_overhead_bytes=268435456,
        total_bytes=269720832,
    ),
    action=PolicyAction.ALLOW,
    code="ok",
    message="ok",
    http_status=200,
)
MISMATCH = "loaded with mlx-lm (its qwen2_vl module, without vision); the files call for mlx-vlm"

# (id, the case's "preflight" value, what it reads as)
READS: list[tuple[str, Any, PreflightRecord | None]] = [
    ("previous_version_allow", TINY_LLAMA_ALLOW, TINY_LLAMA),
    (
        "previous_version_warn",
        QWEN2_VL_WARN,
        dataclasses.replace(
            TINY_LLAMA,
            recommended_backend="mlx_vlm",
            workload=WorkloadRecord(16, 4),
            memory=MemoryRecord(20, 16, 428288, 131072, 0, 60416, 619776, 268435456, 269055232),
            action=PolicyAction.WARN,
            code="backend_mismatch",
            message=MISMATCH,
            http_status=400,
            findings=(FindingRecord(PolicyAction.WARN, "backend_mismatch", MISMATCH),),
            note="the runner has no mlx_vlm backend yet",
        ),
    ),
    (
        "previous_version_not_judged",
        FAKE_NOT_JUDGED,
        PreflightRecord(backend="fake", needs=("text",), note=FAKE_NOT_JUDGED["note"]),
    ),
    ("not_judged_empty", {}, None),
    ("not_judged_null", None, None),
    (
        "missing_keys_take_defaults",
        {"backend": "mlx_lm", "action": "block", "memory": {"mlx_peak_bytes": 7}},
        PreflightRecord(
            backend="mlx_lm", action=PolicyAction.BLOCK, memory=MemoryRecord(mlx_peak_bytes=7)
        ),
    ),
    (
        "unknown_keys_are_ignored",
        {"backend": "mlx_lm", "from_a_newer_harness": [1, 2]},
        PreflightRecord(backend="mlx_lm"),
    ),
]


@pytest.mark.parametrize(("data", "expected"), [r[1:] for r in READS], ids=[r[0] for r in READS])
def test_preflight_from_json(data: Any, expected: PreflightRecord | None) -> None:
    assert preflight_from_json(data) == expected


@pytest.mark.parametrize(
    "record",
    [r[2] for r in READS if r[2] is not None],
    ids=[r[0] for r in READS if r[2] is not None],
)
def test_round_trip_through_a_run_record_line(record: PreflightRecord) -> None:
    result = CaseResult("s::m::load", "s", "m", "load", Status.PASSED, preflight=record)
    line = json.dumps({"event": "case", "result": to_json(result)})
    assert decode_event("case", line)["result"] == result
    assert preflight_from_json(json.loads(line)["result"]["preflight"]) == record


def test_written_with_the_keys_the_previous_version_wrote() -> None:
    """Same keys, same values; ``http_status`` is now written (null) for a case not judged."""
    assert to_json(TINY_LLAMA) == TINY_LLAMA_ALLOW
    not_judged = to_json(preflight_from_json(FAKE_NOT_JUDGED))
    assert not_judged == {**FAKE_NOT_JUDGED, "http_status": None}


@pytest.mark.parametrize("preflight", [{}, None], ids=["empty", "null"])
def test_a_case_not_judged_is_written_empty_and_read_as_none(preflight: Any) -> None:
    bare = CaseResult("s::m::load", "s", "m", "load", Status.PASSED)
    assert bare.preflight is None and to_json(bare)["preflight"] == {}  # older readers take {}
    line = json.dumps({"event": "case", "result": {**to_json(bare), "preflight": preflight}})
    assert decode_event("case", line)["result"].preflight is None


def test_a_case_of_a_record_before_preflight_existed_reads_as_none() -> None:
    result = to_json(CaseResult("i", "s", "m", "x", Status.PASSED))
    del result["preflight"]
    line = json.dumps({"event": "case", "result": result})
    assert decode_event("case", line)["result"].preflight is None


# (id, a bad "preflight" value, the one line it reads as)
BAD: list[tuple[str, Any, str]] = [
    ("not_an_object", [1], "preflight: Input should be an object"),
    ("unknown_action", {"action": "maybe"}, "preflight.action: Input should be 'allow', 'warn'"),
    ("text_for_a_number", {"http_status": "400"}, "preflight.http_status: Input should be a"),
    (
        "bad_memory",
        {"memory": {"weights_bytes": 1.5}},
        "preflight.memory.weights_bytes: Input should be a valid integer",
    ),
    ("finding_without_code", {"findings": [{"action": "warn", "message": "m"}]}, "findings[0]"),
    ("not_json", {"note": object()}, "preflight: not JSON data"),
]


@pytest.mark.parametrize(("data", "line"), [r[1:] for r in BAD], ids=[r[0] for r in BAD])
def test_bad_preflight_is_one_line(data: Any, line: str) -> None:
    with pytest.raises(DecodeError) as caught:
        preflight_from_json(data)
    assert line in str(caught.value) and "\n" not in str(caught.value)


def test_bad_preflight_in_a_record_line_names_the_field() -> None:
    result = {**to_json(CaseResult("i", "s", "m", "x", Status.PASSED)), "preflight": [1]}
    with pytest.raises(DecodeError, match=r"^case event\.result\.preflight: "):
        decode_event("case", json.dumps({"event": "case", "result": result}))


@pytest.mark.parametrize(("reference", "written"), [(0, False), (8192, True)])
def test_a_field_new_since_is_written_only_when_set(reference: int, written: bool) -> None:
    """``reference_weights_bytes`` (``quality``'s reference model) is left out at its default, so
    records without one keep the keys earlier versions wrote; set, it round-trips."""
    assert TINY_LLAMA.memory is not None
    memory = dataclasses.replace(TINY_LLAMA.memory, reference_weights_bytes=reference)
    record = dataclasses.replace(TINY_LLAMA, memory=memory)
    data = to_json(record)
    assert ("reference_weights_bytes" in data["memory"]) is written
    assert preflight_from_json(json.loads(json.dumps(data))) == record
