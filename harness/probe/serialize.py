"""Probe, estimate and decision as JSON-ready dicts (``--json``, run records), and back.

Every field is encoded by name: the frozen values hold read-only mappings
(``MappingProxyType``), which ``dataclasses.asdict`` cannot copy, so nothing here uses it. The
``*_from_dict`` readers invert the writers (``probe_from_dict(probe_dict(p)) == p``); they raise
:class:`RecordError` (one line) on data that is not such a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from harness.probe.memory import MemoryEstimate
from harness.probe.policy import Decision
from harness.probe.types import (
    BackendSupport,
    Capability,
    Finding,
    LayerQuant,
    Library,
    Probe,
    Quantization,
    ReasonCode,
    TextArch,
    WeightFormat,
)


class RecordError(ValueError):
    """A dict that is not a probe, estimate or decision record; the message is one line."""


def probe_dict(probe: Probe) -> dict[str, Any]:
    support = {
        s.backend.value: {"installed": s.installed, "version": s.version, "module": s.module}
        for s in probe.support
    }
    return {
        "path": probe.path,
        "format": probe.format.value,
        "model_type": probe.model_type,
        "architectures": list(probe.architectures),
        "capabilities": sorted(c.value for c in probe.capabilities),
        "backend": probe.backend.value,
        "support": support,
        "quantization": quantization_dict(probe.quantization) if probe.quantization else None,
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
        "text": text_arch_dict(probe.text) if probe.text else None,
        "generation": dict(probe.generation),
        "problems": [{"code": p.code.value, "message": p.message} for p in probe.problems],
        "notes": list(probe.notes),
    }


def quantization_dict(quant: Quantization) -> dict[str, Any]:
    return {
        "method": quant.method,
        "bits": quant.bits,
        "group_size": quant.group_size,
        "mode": quant.mode,
        "overrides": [
            {"path": o.path, "bits": o.bits, "group_size": o.group_size, "mode": o.mode}
            for o in quant.overrides
        ],
        "tensor_types": dict(quant.tensor_types),
    }


def text_arch_dict(arch: TextArch) -> dict[str, Any]:
    return {
        "hidden_size": arch.hidden_size,
        "num_layers": arch.num_layers,
        "num_heads": arch.num_heads,
        "num_kv_heads": arch.num_kv_heads,
        "head_dim": arch.head_dim,
        "intermediate_size": arch.intermediate_size,
        "vocab_size": arch.vocab_size,
        "layer_kinds": list(arch.layer_kinds),
        "sliding_window": arch.sliding_window,
        "num_experts": arch.num_experts,
        "experts_per_token": arch.experts_per_token,
        "state_elements": dict(arch.state_elements),
    }


def estimate_dict(estimate: MemoryEstimate) -> dict[str, Any]:
    return {
        "context_tokens": estimate.context_tokens,
        "prompt_tokens": estimate.prompt_tokens,
        "weights_bytes": estimate.weights_bytes,
        "reference_weights_bytes": estimate.reference_weights_bytes,
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


def probe_from_dict(data: Any) -> Probe:
    """The :class:`Probe` that :func:`probe_dict` wrote (derived keys are ignored)."""
    try:
        return _probe(_object(data))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"not a probe record ({_why(exc)})") from None


def estimate_from_dict(data: Any) -> MemoryEstimate:
    """The :class:`MemoryEstimate` that :func:`estimate_dict` wrote."""
    try:
        data = _object(data)
        return MemoryEstimate(
            context_tokens=int(data["context_tokens"]),
            weights_bytes=int(data["weights_bytes"]),
            kv_cache_bytes=int(data["kv_cache_bytes"]),
            state_bytes=int(data["state_bytes"]),
            activation_bytes=int(data["activation_bytes"]),
            process_overhead_bytes=int(data["process_overhead_bytes"]),
            approximate=tuple(str(a) for a in data["approximate"]),
            prompt_tokens=_opt_int(data.get("prompt_tokens")),
            reference_weights_bytes=int(data.get("reference_weights_bytes", 0)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordError(f"not a memory estimate record ({_why(exc)})") from None


def _probe(data: Mapping[str, Any]) -> Probe:
    thinking = data.get("thinking")
    return Probe(
        path=str(data["path"]),
        format=WeightFormat(data["format"]),
        model_type=_opt_str(data.get("model_type")),
        architectures=tuple(str(a) for a in data["architectures"]),
        capabilities=frozenset(Capability(c) for c in data["capabilities"]),
        backend=Library(data["backend"]),
        support=_support(data.get("support") or {}),
        quantization=_quantization(data["quantization"]) if data.get("quantization") else None,
        parameters=_opt_int(data.get("parameters")),
        active_parameters=_opt_int(data.get("active_parameters")),
        weights_bytes=_opt_int(data.get("weights_bytes")),
        tower_weights_bytes=int(data.get("tower_weights_bytes") or 0),
        dtype=_opt_str(data.get("dtype")),
        compute_dtype=_opt_str(data.get("compute_dtype")),
        context_length=_opt_int(data.get("context_length")),
        chat_template_sha256=_opt_str(data.get("chat_template_sha256")),
        tool_parser=_opt_str(data.get("tool_parser")),
        tool_parser_source=_opt_str(data.get("tool_parser_source")),
        thinking=(str(thinking[0]), str(thinking[1])) if thinking else None,
        text=_text_arch(data["text"]) if data.get("text") else None,
        generation=MappingProxyType(dict(data.get("generation") or {})),
        problems=tuple(
            Finding(ReasonCode(p["code"]), str(p["message"])) for p in data.get("problems") or ()
        ),
        notes=tuple(str(n) for n in data.get("notes") or ()),
    )


def _support(data: Mapping[str, Any]) -> tuple[BackendSupport, ...]:
    """Entries in :class:`Library` order (the order the probe builds them in)."""
    found = []
    for backend in Library:
        entry = data.get(backend.value)
        if entry is not None:
            found.append(
                BackendSupport(
                    backend,
                    bool(entry["installed"]),
                    _opt_str(entry.get("version")),
                    _opt_str(entry.get("module")),
                )
            )
    return tuple(found)


def _quantization(data: Mapping[str, Any]) -> Quantization:
    bits = data.get("bits")
    return Quantization(
        method=str(data["method"]),
        bits=None if bits is None else _number(bits),
        group_size=_opt_int(data.get("group_size")),
        mode=_opt_str(data.get("mode")),
        overrides=tuple(
            LayerQuant(
                str(o["path"]),
                _opt_int(o.get("bits")),
                _opt_int(o.get("group_size")),
                _opt_str(o.get("mode")),
            )
            for o in data.get("overrides") or ()
        ),
        tensor_types=MappingProxyType(
            {str(k): int(v) for k, v in (data.get("tensor_types") or {}).items()}
        ),
    )


def _text_arch(data: Mapping[str, Any]) -> TextArch:
    return TextArch(
        hidden_size=int(data["hidden_size"]),
        num_layers=int(data["num_layers"]),
        num_heads=int(data["num_heads"]),
        num_kv_heads=int(data["num_kv_heads"]),
        head_dim=int(data["head_dim"]),
        intermediate_size=int(data["intermediate_size"]),
        vocab_size=int(data["vocab_size"]),
        layer_kinds=tuple(str(k) for k in data["layer_kinds"]),
        sliding_window=_opt_int(data.get("sliding_window")),
        num_experts=_opt_int(data.get("num_experts")),
        experts_per_token=_opt_int(data.get("experts_per_token")),
        state_elements=MappingProxyType(
            {str(k): int(v) for k, v in (data.get("state_elements") or {}).items()}
        ),
    )


def _object(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return value


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
