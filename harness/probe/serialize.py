"""Probe, estimate and decision as plain JSON-ready dicts (for ``--json`` and run records)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from harness.probe.memory import MemoryEstimate
from harness.probe.policy import Decision
from harness.probe.types import Probe


def probe_dict(probe: Probe) -> dict[str, Any]:
    support = {
        s.backend.value: {"installed": s.installed, "version": s.version, "module": s.module}
        for s in probe.support
    }
    quant = None
    if probe.quantization is not None:
        quant = asdict(probe.quantization)
        quant["tensor_types"] = dict(probe.quantization.tensor_types)
    return {
        "path": probe.path,
        "format": probe.format.value,
        "model_type": probe.model_type,
        "architectures": list(probe.architectures),
        "capabilities": sorted(c.value for c in probe.capabilities),
        "backend": probe.backend.value,
        "support": support,
        "quantization": quant,
        "parameters": probe.parameters,
        "active_parameters": probe.active_parameters,
        "weights_bytes": probe.weights_bytes,
        "tower_weights_bytes": probe.tower_weights_bytes,
        "dtype": probe.dtype,
        "compute_dtype": probe.compute_dtype,
        "context_length": probe.context_length,
        "chat_template": probe.chat_template,
        "chat_template_sha256": probe.chat_template_sha256,
        "tool_parser": probe.tool_parser,
        "tool_parser_source": probe.tool_parser_source,
        "thinking": list(probe.thinking) if probe.thinking else None,
        "generation": dict(probe.generation),
        "problems": [{"code": p.code.value, "message": p.message} for p in probe.problems],
        "notes": list(probe.notes),
    }


def estimate_dict(estimate: MemoryEstimate) -> dict[str, Any]:
    return {
        "context_tokens": estimate.context_tokens,
        "prompt_tokens": estimate.prompt_tokens,
        "weights_bytes": estimate.weights_bytes,
        "kv_cache_bytes": estimate.kv_cache_bytes,
        "state_bytes": estimate.state_bytes,
        "activation_bytes": estimate.activation_bytes,
        "mlx_peak_bytes": estimate.mlx_peak_bytes,
        "process_overhead_bytes": estimate.process_overhead_bytes,
        "total_bytes": estimate.total_bytes,
        "approximate": list(estimate.approximate),
    }


def decision_dict(decision: Decision) -> dict[str, Any]:
    return {
        "action": decision.action.value,
        "code": decision.code.value,
        "http_status": decision.code.http_status,
        "message": decision.message,
        "findings": [
            {"action": f.action.value, "code": f.code.value, "message": f.message}
            for f in decision.findings
        ],
    }
