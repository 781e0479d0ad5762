"""Frozen values of the probe stage: what a model directory declares, read without loading it.

Units are bytes, tokens and parameter counts. Nothing here imports mlx.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class Capability(str, Enum):
    """What a model can be asked to do; scenarios declare the set they need."""

    TEXT = "text"  # generates text from a text prompt
    CHAT = "chat"  # has a chat template
    VISION = "vision"  # takes images
    AUDIO_IN = "audio_in"  # speech-to-text (Whisper and friends)
    TTS = "tts"  # text-to-speech
    EMBEDDINGS = "embeddings"  # sentence/token embeddings, no generation
    TOOLS = "tools"  # mlx-lm infers a tool-call parser for it
    REASONING = "reasoning"  # thinking markers (<think> ...) in its vocabulary


class Library(str, Enum):
    MLX_LM = "mlx_lm"
    MLX_VLM = "mlx_vlm"
    MLX_AUDIO = "mlx_audio"
    NONE = "none"

    @property
    def package(self) -> str | None:
        """The distribution name to install, None for NONE."""
        return None if self is Library.NONE else self.value.replace("_", "-")


class ReasonCode(str, Enum):
    """Why a model is allowed, warned about or blocked (mlx-knife's codes, and a few more)."""

    OK = "ok"
    CAPABILITY_MISMATCH = "capability_mismatch"
    MISSING_DEPENDENCY = "missing_dependency"
    RUNTIME_INCOMPATIBLE = "runtime_incompatible"
    INSUFFICIENT_MEMORY = "insufficient_memory"
    CORRUPT_MODEL = "corrupt_model"
    UNKNOWN_MODEL_TYPE = "unknown_model_type"
    MISSING_WEIGHTS = "missing_weights"
    NEEDS_CONVERSION = "needs_conversion"  # GGUF: load after harness.models.gguf.import_gguf
    BACKEND_MISMATCH = "backend_mismatch"  # loaded by a backend other than the files call for
    CAPABILITY_MISSING = "capability_missing"  # the backend lacks what the scenario requires

    @property
    def http_status(self) -> int:
        """The status a server would answer with (mlx-knife's mapping where it has one)."""
        return _HTTP.get(self.value, 500)


_HTTP = MappingProxyType(
    {
        "ok": 200,
        "needs_conversion": 200,
        "capability_mismatch": 400,
        "backend_mismatch": 400,
        "corrupt_model": 422,
        "missing_weights": 422,
        "missing_dependency": 501,
        "capability_missing": 501,
        "runtime_incompatible": 501,
        "unknown_model_type": 501,
        "insufficient_memory": 507,
    }
)


@dataclass(frozen=True)
class Finding:
    """One reason with its one-line explanation."""

    code: ReasonCode
    message: str


class WeightFormat(str, Enum):
    SAFETENSORS = "safetensors"
    GGUF = "gguf"
    PYTORCH = "pytorch"  # .bin / .pt / .pth only: not loadable by the MLX backends
    NONE = "none"


@dataclass(frozen=True)
class LayerQuant:
    """A per-layer quantization override; ``bits`` None means the layer is not quantized."""

    path: str
    bits: int | None
    group_size: int | None = None
    mode: str | None = None


@dataclass(frozen=True)
class Quantization:
    """How the weights are quantized, from config.json (or a GGUF file's tensor types)."""

    method: str  # "mlx" (config "quantization"), a quant_method ("gptq", "awq", ...) or "gguf"
    bits: float | None  # default bits, or bits per weight for GGUF
    group_size: int | None = None
    mode: str | None = None  # affine, mxfp4, nvfp4, mxfp8 ...
    overrides: tuple[LayerQuant, ...] = ()
    tensor_types: Mapping[str, int] = field(default_factory=_empty)  # GGUF: type -> count


@dataclass(frozen=True)
class TextArch:
    """The decoder dimensions the memory estimate needs (from config or text_config)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int  # per-token MLP width (top-k experts' for MoE)
    vocab_size: int
    layer_kinds: tuple[str, ...]  # per layer: "full", "sliding", or a state kind ("conv", ...)
    sliding_window: int | None = None
    num_experts: int | None = None
    experts_per_token: int | None = None
    state_elements: Mapping[str, int] = field(default_factory=_empty)  # kind -> per layer


@dataclass(frozen=True)
class BackendSupport:
    """Whether one backend is installed and knows this model's type."""

    backend: Library
    installed: bool
    version: str | None
    module: str | None  # the model module it would use (after remapping), None if unknown


@dataclass(frozen=True)
class Probe:
    """Everything learned about a model from its files, without importing mlx."""

    path: str
    format: WeightFormat
    model_type: str | None
    architectures: tuple[str, ...]
    capabilities: frozenset[Capability]
    backend: Library
    support: tuple[BackendSupport, ...] = ()
    quantization: Quantization | None = None
    parameters: int | None = None
    active_parameters: int | None = None  # MoE: parameters used per token
    weights_bytes: int | None = None
    tower_weights_bytes: int = 0  # part of weights_bytes in vision/audio towers and projectors
    dtype: str | None = None  # dominant floating dtype of the stored weights (safetensors names)
    compute_dtype: str | None = None  # dtype of activations and KV cache (MLX type promotion)
    context_length: int | None = None
    chat_template_sha256: str | None = None
    tool_parser: str | None = None
    tool_parser_source: str | None = None  # tokenizer_config | model_defaults | inferred
    thinking: tuple[str, str] | None = None  # (start, end) markers
    text: TextArch | None = None
    generation: Mapping[str, Any] = field(default_factory=_empty)  # generation_config defaults
    problems: tuple[Finding, ...] = ()  # what makes the model unloadable as it is
    notes: tuple[str, ...] = ()  # one-line remarks that do not

    @property
    def chat_template(self) -> bool:
        return self.chat_template_sha256 is not None

    def backend_support(self, backend: Library | None = None) -> BackendSupport | None:
        wanted = self.backend if backend is None else backend
        return next((s for s in self.support if s.backend is wanted), None)
