"""Policy: reason codes for each way a model can fail to run, and the memory gate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from harness.probe.installed import AudioRules, Stack, VlmRules
from harness.probe.machine import MemoryBudget
from harness.probe.memory import MemoryEstimate
from harness.probe.policy import Action, decide
from harness.probe.probe import probe_model
from harness.probe.types import Capability, ReasonCode

GIB = 1024**3
PLENTY = MemoryBudget(total_bytes=64 * GIB, available_bytes=48 * GIB)
NONE = frozenset[Capability]()


def _estimate(total_gib: float) -> MemoryEstimate:
    return MemoryEstimate(4096, int(total_gib * GIB), 0, 0, 0, 0)


@pytest.mark.parametrize(
    ("row", "missing", "capability"),
    [
        ("zoo/qwen2_vl", "vlm", Capability.VISION),
        ("zoo/whisper", "audio", Capability.AUDIO_IN),
        ("bert-sentence-transformers", "vlm", Capability.EMBEDDINGS),
    ],
)
def test_backend_not_installed_is_a_missing_dependency(
    row: str, missing: str, capability: Capability, row_paths: Mapping[str, Path], stack: Stack
) -> None:
    """The modality is still recognised from the files; the backend is named as missing."""
    without = (
        replace(stack, vlm=VlmRules()) if missing == "vlm" else replace(stack, audio=AudioRules())
    )
    probe = probe_model(row_paths[row], stack=without)
    decision = decide(probe, scenario_needs=NONE, memory=PLENTY)
    assert decision.action is Action.BLOCK
    assert decision.code is ReasonCode.MISSING_DEPENDENCY
    assert decision.code.http_status == 501
    assert "not installed" in decision.message
    assert capability in probe.capabilities


def test_capability_mismatch(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["zoo/phi3"], stack=stack)
    decision = decide(probe, scenario_needs=frozenset({Capability.TOOLS}), memory=PLENTY)
    assert (decision.action, decision.code) == (Action.BLOCK, ReasonCode.CAPABILITY_MISMATCH)
    assert decision.code.http_status == 400
    assert decision.message.startswith("scenario needs tools; model has chat, text")
    ok = decide(probe, scenario_needs=frozenset({Capability.TEXT}), memory=PLENTY)
    assert ok.action is Action.ALLOW and ok.code is ReasonCode.OK


def test_embeddings_model_refuses_a_generation_scenario(
    row_paths: Mapping[str, Path], stack: Stack
) -> None:
    probe = probe_model(row_paths["bert-sentence-transformers"], stack=stack)
    decision = decide(probe, scenario_needs=frozenset({Capability.TEXT}), memory=PLENTY)
    assert decision.code is ReasonCode.CAPABILITY_MISMATCH


@pytest.mark.parametrize(
    ("row", "need_gib", "action"),
    [
        ("zoo/llama", 50.0, Action.WARN),  # over 70% of 64 GiB: text warns
        ("zoo/qwen2_vl", 50.0, Action.BLOCK),  # ... vision blocks
        ("zoo/llama", 70.0, Action.BLOCK),  # more than the machine has
        ("zoo/llama", 10.0, Action.ALLOW),
    ],
)
def test_memory_gate(
    row: str, need_gib: float, action: Action, row_paths: Mapping[str, Path], stack: Stack
) -> None:
    probe = probe_model(row_paths[row], stack=stack)
    decision = decide(probe, scenario_needs=NONE, memory=PLENTY, estimate=_estimate(need_gib))
    assert decision.action is action
    expected = ReasonCode.OK if action is Action.ALLOW else ReasonCode.INSUFFICIENT_MEMORY
    assert decision.code is expected
    assert expected.http_status in (200, 507)


def test_memory_free_now_and_unknown_machine(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["zoo/llama"], stack=stack)
    busy = MemoryBudget(total_bytes=64 * GIB, available_bytes=2 * GIB)
    decision = decide(probe, scenario_needs=NONE, memory=busy, estimate=_estimate(10))
    assert (decision.action, decision.code) == (Action.WARN, ReasonCode.INSUFFICIENT_MEMORY)
    assert "free now" in decision.message
    unknown = MemoryBudget(total_bytes=0, available_bytes=None, source="unsupported platform")
    decision = decide(probe, scenario_needs=NONE, memory=unknown)
    assert decision.action is Action.WARN and "unknown" in decision.message


def test_default_estimate_uses_model_context(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["quantized-4bit-8bit-overrides"], stack=stack)
    decision = decide(probe, scenario_needs=NONE, memory=PLENTY)
    assert decision.memory is not None and decision.memory.context_tokens == 2048
    decision = decide(probe, scenario_needs=NONE, memory=PLENTY, context_tokens=100)
    assert decision.memory is not None and decision.memory.context_tokens == 100


def test_worst_finding_wins_and_all_are_kept(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["gguf-llama"], stack=stack)
    decision = decide(probe, scenario_needs=frozenset({Capability.VISION}), memory=PLENTY)
    assert decision.code is ReasonCode.CAPABILITY_MISMATCH
    assert [f.code for f in decision.findings] == [
        ReasonCode.NEEDS_CONVERSION,
        ReasonCode.CAPABILITY_MISMATCH,
    ]


# (row, the backend a suite names, needs, action, code, message start)
BACKEND_ROWS = [
    ("zoo/llama", "mlx_lm", NONE, Action.ALLOW, ReasonCode.OK, "ok"),
    (
        "zoo/qwen2_vl",
        "mlx_lm",
        frozenset({Capability.TEXT}),
        Action.WARN,
        ReasonCode.BACKEND_MISMATCH,
        "loaded with mlx-lm (its qwen2_vl module, without vision); the files call for mlx-vlm",
    ),
    (
        "zoo/qwen2_vl",
        "mlx_lm",
        frozenset({Capability.VISION}),
        Action.BLOCK,
        ReasonCode.CAPABILITY_MISMATCH,
        "scenario needs vision; model has chat, text through mlx-lm",
    ),
    (
        "zoo/whisper",
        "mlx_lm",
        NONE,
        Action.BLOCK,
        ReasonCode.BACKEND_MISMATCH,
        "mlx-lm ",  # then the installed version and why (checked in the test)
    ),
    ("zoo/qwen2_vl", "mlx_vlm", frozenset({Capability.VISION}), Action.ALLOW, ReasonCode.OK, "ok"),
    # a runner backend the probe does not know (the fake, plug-ins): backend not judged here
    ("zoo/whisper", "fake", NONE, Action.ALLOW, ReasonCode.OK, "ok"),
]


@pytest.mark.parametrize(
    ("row", "backend", "needs", "action", "code", "message"),
    BACKEND_ROWS,
    ids=[f"{r[0]}-{r[1]}-{r[4].value}" for r in BACKEND_ROWS],
)
def test_a_named_backend_is_judged_never_switched(
    row: str,
    backend: str,
    needs: frozenset[Capability],
    action: Action,
    code: ReasonCode,
    message: str,
    row_paths: Mapping[str, Path],
    stack: Stack,
) -> None:
    probe = probe_model(row_paths[row], stack=stack)
    decision = decide(probe, scenario_needs=needs, memory=PLENTY, backend=backend)
    assert (decision.action, decision.code) == (action, code), decision.message
    assert decision.message.startswith(message)
    if row == "zoo/whisper" and backend == "mlx_lm":
        tail = "cannot load model_type 'whisper'; the files call for mlx-audio"
        assert decision.message.endswith(tail)
        assert decision.code.http_status == 400


def test_mismatch_with_a_missing_backend(row_paths: Mapping[str, Path], stack: Stack) -> None:
    probe = probe_model(row_paths["zoo/llama"], stack=replace(stack, vlm=VlmRules()))
    decision = decide(probe, scenario_needs=NONE, memory=PLENTY, backend="mlx_vlm")
    assert (decision.action, decision.code) == (Action.BLOCK, ReasonCode.MISSING_DEPENDENCY)
    assert (
        decision.message
        == "loaded with mlx-vlm, which is not installed (the files call for mlx-lm)"
    )
