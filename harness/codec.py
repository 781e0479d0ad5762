"""JSON encoding of the shared values (dataclasses and enums) and decoding back into them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

from harness.types import (
    CaseResult,
    ExpectKind,
    Gate,
    GateResult,
    LedgerEntry,
    Machine,
    Metric,
    ModelIdentity,
    Status,
    SuiteInfo,
    Unit,
)


def to_json(value: Any) -> Any:
    """Turn dataclasses, enums, mappings and tuples into plain JSON values (NaN -> None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def metric_from_json(d: Mapping[str, Any]) -> Metric:
    return Metric(
        name=d["name"],
        unit=Unit(d["unit"]),
        samples=tuple(float(x) for x in d.get("samples", ())),
        warmup_samples=tuple(float(x) for x in d.get("warmup_samples", ())),
        view=d.get("view"),
    )


def gate_from_json(d: Mapping[str, Any]) -> Gate:
    return Gate(
        metric=d["metric"],
        op=d["op"],
        threshold=float(d["threshold"]),
        relative=bool(d.get("relative", False)),
        expression=d.get("expression", ""),
    )


def gate_result_from_json(d: Mapping[str, Any]) -> GateResult:
    return GateResult(
        gate=gate_from_json(d["gate"]),
        measured=d.get("measured"),
        passed=d.get("passed"),
        message=d.get("message", ""),
    )


def case_result_from_json(d: Mapping[str, Any]) -> CaseResult:
    return CaseResult(
        case_id=d["case_id"],
        suite=d["suite"],
        model=d["model"],
        scenario=d["scenario"],
        status=Status(d["status"]),
        params=dict(d.get("params", {})),
        point=dict(d.get("point", {})),
        metrics=tuple(metric_from_json(m) for m in d.get("metrics", ())),
        reason=d.get("reason"),
        gates=tuple(gate_result_from_json(g) for g in d.get("gates", ())),
        artifacts=dict(d.get("artifacts", {})),
        duration_s=float(d.get("duration_s", 0.0)),
        started_at=d.get("started_at", ""),
        scenario_version=int(d.get("scenario_version", 1)),
        link=d.get("link"),
        preflight=dict(d.get("preflight") or {}),
    )


def _known_fields(cls: type, d: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in d.items() if k in names}


def machine_from_json(d: Mapping[str, Any]) -> Machine:
    return Machine(**_known_fields(Machine, d))


def identity_from_json(d: Mapping[str, Any]) -> ModelIdentity:
    return ModelIdentity(**_known_fields(ModelIdentity, d))


def ledger_entry_from_json(d: Mapping[str, Any]) -> LedgerEntry:
    known = _known_fields(LedgerEntry, d)
    known["status"] = ExpectKind(known["status"])
    known["cases"] = tuple(known.get("cases", ()))
    return LedgerEntry(**known)


def suite_info_from_json(d: Mapping[str, Any]) -> SuiteInfo:
    known = _known_fields(SuiteInfo, d)
    known["ledger"] = tuple(ledger_entry_from_json(e) for e in known.get("ledger", ()))
    known["warnings"] = tuple(known.get("warnings", ()))
    return SuiteInfo(**known)
