"""Policy: allow, warn or block a model for a scenario, with a reason code and one line.

No silent fallbacks: every way a model can fail to run is a finding with its own code, and the
decision is the most severe finding (first in this order among equals): problems found in the
files, unknown model type, backend not installed, backend too old for the model type, a
backend other than the one the files call for, capabilities the scenario needs but the model
lacks (through that backend), memory. Memory follows the field: over the budget's limit (70% of
RAM by default) blocks vision models and warns for the others; more than the machine has blocks
everything; more than is free right now warns.

A backend other than the recommended one (a suite loading a vision model with mlx-lm) is never
switched silently: it is judged from the probe's support for it, and the mismatch is a finding
(a warning when that backend has a module for the model type, which then runs with only what
that backend serves, e.g. text without vision; a block when it has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from harness.probe.machine import MemoryBudget
from harness.probe.memory import MemoryEstimate, estimate_memory
from harness.probe.types import Capability, Finding, Library, Probe, ReasonCode

DEFAULT_CONTEXT = 4096

# What each library backend can serve, for a model loaded by a backend other than its own.
SERVES = {
    Library.MLX_LM: frozenset(
        {Capability.TEXT, Capability.CHAT, Capability.TOOLS, Capability.REASONING}
    ),
    Library.MLX_VLM: frozenset(
        {
            Capability.TEXT,
            Capability.CHAT,
            Capability.TOOLS,
            Capability.REASONING,
            Capability.VISION,
            Capability.AUDIO_IN,
            Capability.EMBEDDINGS,
        }
    ),
    Library.MLX_AUDIO: frozenset({Capability.AUDIO_IN, Capability.TTS}),
}


class Action(str, Enum):
    ALLOW = "allow"
    WARN = "warn"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        return {"allow": 0, "warn": 1, "block": 2}[self.value]


@dataclass(frozen=True)
class Judged:
    """A finding with the action it calls for."""

    action: Action
    code: ReasonCode
    message: str


@dataclass(frozen=True)
class Decision:
    action: Action
    code: ReasonCode
    message: str  # one line for a person
    findings: tuple[Judged, ...] = ()
    memory: MemoryEstimate | None = None

    @property
    def allowed(self) -> bool:
        return self.action is not Action.BLOCK


def decide(
    probe: Probe,
    *,
    scenario_needs: frozenset[Capability],
    memory: MemoryBudget,
    context_tokens: int | None = None,
    estimate: MemoryEstimate | None = None,
    backend: str | None = None,
) -> Decision:
    """Judge ``probe`` for a scenario needing ``scenario_needs`` on a machine with ``memory``.

    ``context_tokens`` (default: the model's context, at most 4096) sizes the memory estimate
    when ``estimate`` is not given. ``backend`` names the backend that will load the model
    (default: the probe's recommendation): a library backend (``mlx_lm``, ``mlx_vlm``,
    ``mlx_audio``) is judged from the probe's support for it; any other name (a runner's fake
    or plug-in backend) is the caller's to vouch for, and only files, capabilities and memory
    are judged.
    """
    findings = [_judge_problem(p) for p in probe.problems]
    chosen = _chosen(probe, backend)
    capabilities = probe.capabilities
    if chosen is not None:
        findings.extend(_backend(probe) if chosen is probe.backend else _other(probe, chosen))
        if chosen is not probe.backend:
            capabilities = capabilities & SERVES.get(chosen, frozenset())
    missing = scenario_needs - capabilities
    if missing:
        has = ", ".join(sorted(c.value for c in capabilities)) or "nothing"
        through = f" through {chosen.package}" if chosen is not probe.backend and chosen else ""
        findings.append(
            Judged(
                Action.BLOCK,
                ReasonCode.CAPABILITY_MISMATCH,
                f"scenario needs {', '.join(sorted(c.value for c in missing))}; "
                f"model has {has}{through}",
            )
        )
    if estimate is None and probe.weights_bytes is not None:
        tokens = context_tokens or min(probe.context_length or DEFAULT_CONTEXT, DEFAULT_CONTEXT)
        estimate = estimate_memory(probe, tokens)
    if estimate is not None:
        findings.extend(_memory(probe, estimate, memory))
    if not findings:
        return Decision(Action.ALLOW, ReasonCode.OK, "ok", (), estimate)
    worst = max(findings, key=lambda f: f.action.severity)  # first of the most severe
    return Decision(worst.action, worst.code, worst.message, tuple(findings), estimate)


def _judge_problem(problem: Finding) -> Judged:
    action = Action.WARN if problem.code is ReasonCode.NEEDS_CONVERSION else Action.BLOCK
    return Judged(action, problem.code, problem.message)


def _chosen(probe: Probe, backend: str | None) -> Library | None:
    """The library backend to judge: the named one, the recommended one, or None (other)."""
    if backend is None:
        return probe.backend
    try:
        named = Library(backend)
    except ValueError:
        return None
    return None if named is Library.NONE else named


def _other(probe: Probe, chosen: Library) -> list[Judged]:
    """A library backend other than the one the files call for."""
    support = probe.backend_support(chosen)
    wants = (
        f"the files call for {probe.backend.package}"
        if probe.backend is not Library.NONE
        else "no installed backend knows it"
    )
    kind = f"model_type {probe.model_type!r}" if probe.model_type else "this model"
    if support is None or not support.installed:
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.MISSING_DEPENDENCY,
                f"loaded with {chosen.package}, which is not installed ({wants})",
            )
        ]
    if support.module is None:
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.BACKEND_MISMATCH,
                f"{chosen.package} {support.version} cannot load {kind}; {wants}",
            )
        ]
    lost = sorted(c.value for c in probe.capabilities - SERVES.get(chosen, frozenset()))
    without = f", without {', '.join(lost)}" if lost else ""
    return [
        Judged(
            Action.WARN,
            ReasonCode.BACKEND_MISMATCH,
            f"loaded with {chosen.package} (its {support.module} module{without}); {wants}",
        )
    ]


def _backend(probe: Probe) -> list[Judged]:
    if probe.backend is Library.NONE:
        if probe.model_type is None and probe.problems:
            return []  # unreadable config: already reported as corrupt
        what = f"model_type {probe.model_type!r}" if probe.model_type else "no model_type"
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.UNKNOWN_MODEL_TYPE,
                f"{what}: no installed backend knows it and the files show no modality",
            )
        ]
    support = probe.backend_support()
    if support is None or not support.installed:
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.MISSING_DEPENDENCY,
                f"needs {probe.backend.package}, which is not installed",
            )
        ]
    if support.module is None:
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.RUNTIME_INCOMPATIBLE,
                f"{probe.backend.package} {support.version} has no model module for "
                f"{probe.model_type!r}; a newer version may",
            )
        ]
    return []


def _memory(probe: Probe, estimate: MemoryEstimate, budget: MemoryBudget) -> list[Judged]:
    need = estimate.total_bytes
    gib = 1024**3
    at = f"{need / gib:.2f} GiB at {estimate.context_tokens} tokens"
    if budget.total_bytes <= 0:
        return [
            Judged(
                Action.WARN,
                ReasonCode.INSUFFICIENT_MEMORY,
                f"machine memory unknown ({budget.source}); model needs {at}",
            )
        ]
    if need > budget.total_bytes:
        return [
            Judged(
                Action.BLOCK,
                ReasonCode.INSUFFICIENT_MEMORY,
                f"needs {at}; the machine has {budget.total_bytes / gib:.2f} GiB",
            )
        ]
    if need > budget.limit_bytes:
        action = Action.BLOCK if Capability.VISION in probe.capabilities else Action.WARN
        return [
            Judged(
                action,
                ReasonCode.INSUFFICIENT_MEMORY,
                f"needs {at}, over {budget.threshold:.0%} of "
                f"{budget.total_bytes / gib:.2f} GiB ({budget.limit_bytes / gib:.2f} GiB)",
            )
        ]
    if budget.available_bytes is not None and need > budget.available_bytes:
        return [
            Judged(
                Action.WARN,
                ReasonCode.INSUFFICIENT_MEMORY,
                f"needs {at}; only {budget.available_bytes / gib:.2f} GiB free now",
            )
        ]
    return []
