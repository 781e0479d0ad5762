"""The per-case preflight record: what the probe-and-policy step decided before load, typed.

Written by ``Preflight.record()`` (``harness.runner.preflight``) into ``CaseResult.preflight``
and read by the CLI line, the pytest plugin and the report. Field names are the record's JSON
keys, so ``codec.to_json`` writes the shape earlier versions wrote. Every field has a default:
an older record may lack keys, and a record of ``{}`` (a case that was not judged) reads as
None (``codec.preflight_from_json``). Codes and capabilities stay text (``ReasonCode`` and
``Capability`` values): this module sits beside ``harness.core.types`` and imports no probe code.
Units: bytes and tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

# field metadata: the record leaves the field out while it holds its default, so a record
# without the feature reads the same to older readers (their decoders forbid unknown keys)
OMITTED_WHEN_DEFAULT: Mapping[str, bool] = MappingProxyType({"omitted_when_default": True})


class ContextSource(str, Enum):
    """Where the context of a memory estimate came from."""

    SCENARIO = "scenario"  # the scenario's workload for these params: comparable with the case
    DEFAULT = "default"  # the policy's default context: a budget check only


class PolicyAction(str, Enum):
    """What the policy made of a case (the values of ``harness.probe.policy.Action``)."""

    ALLOW = "allow"
    WARN = "warn"
    BLOCK = "block"


@dataclass(frozen=True)
class WorkloadRecord:
    """Tokens one request of the case holds at its largest, as the scenario declared them."""

    prompt_tokens: int = 0
    generated_tokens: int = 0


@dataclass(frozen=True)
class MemoryRecord:
    """The probe's memory estimate, bytes by component, for ``context_tokens`` tokens.

    ``mlx_peak_bytes`` (comparable to MLX's allocator peak) and ``total_bytes`` (with the
    process overhead) are kept as written; None where a record lacks them.
    """

    context_tokens: int = 0
    prompt_tokens: int | None = None  # prefilled part of the context; None: all of it
    weights_bytes: int = 0
    kv_cache_bytes: int = 0
    state_bytes: int = 0
    activation_bytes: int = 0
    mlx_peak_bytes: int | None = None
    process_overhead_bytes: int = 0
    total_bytes: int | None = None
    approximate: tuple[str, ...] = ()  # what the estimate could not model for this model
    # a reference model loaded beside it (``quality``); last, so positional records still read
    reference_weights_bytes: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def components(self) -> Mapping[str, int]:
        """The parts of the MLX peak, bytes, by field name (a reference model only when the
        case loads one)."""
        reference = (
            {"reference_weights_bytes": self.reference_weights_bytes}
            if self.reference_weights_bytes
            else {}
        )
        return MappingProxyType(
            {
                "weights_bytes": self.weights_bytes,
                **reference,
                "kv_cache_bytes": self.kv_cache_bytes,
                "state_bytes": self.state_bytes,
                "activation_bytes": self.activation_bytes,
            }
        )


@dataclass(frozen=True)
class FindingRecord:
    """One finding of the policy with the action it called for."""

    action: PolicyAction
    code: str
    message: str


@dataclass(frozen=True)
class PreflightRecord:
    """One case's probe-and-policy outcome. ``action`` is None when the backend could not be
    judged (it has no probe, or its probe failed): ``note`` then says why."""

    backend: str = ""
    recommended_backend: str | None = None  # what the files call for; None: not probed
    needs: tuple[str, ...] = ()  # capabilities the scenario declares, sorted
    workload: WorkloadRecord | None = None
    context_source: ContextSource = ContextSource.DEFAULT
    memory: MemoryRecord | None = None
    action: PolicyAction | None = None
    code: str | None = None
    message: str | None = None
    http_status: int | None = None  # what a server would answer with
    findings: tuple[FindingRecord, ...] = ()
    note: str | None = None

    @property
    def comparable(self) -> bool:
        """The memory estimate was sized for this case's own workload."""
        return self.context_source is ContextSource.SCENARIO

    @property
    def policy(self) -> str | None:
        """``"<action> <code>"``, None when not judged."""
        return None if self.action is None else f"{self.action.value} {self.code}"
